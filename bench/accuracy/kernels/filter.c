/* Branchy loop: a data-dependent if with a conditional store (stream compaction).
   With random input the branch is taken half the time and is unpredictable. */
__attribute__((noinline)) long k_filter(const int *a, int *out, long n, int threshold) {
  long c = 0;
  for (long i = 0; i < n; i++)
    if (a[i] > threshold)
      out[c++] = a[i];
  return c;
}
