/* Byte histogram: a load-increment-store to a data-dependent bucket. */
__attribute__((noinline)) void k_histogram(const unsigned char *a, long *hist, long n) {
  for (long i = 0; i < n; i++)
    hist[a[i]]++;
}
