/* Inclusive prefix sum into a separate output array (loop-carried dependence). */
__attribute__((noinline)) void k_prefix_sum(const long *a, long *out, long n) {
  long s = 0;
  for (long i = 0; i < n; i++) {
    s += a[i];
    out[i] = s;
  }
}
