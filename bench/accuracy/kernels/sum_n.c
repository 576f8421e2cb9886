/* One loop with a symbolic trip count n. */
__attribute__((noinline)) long k_sum_n(const long *a, long n) {
  long s = 0;
  for (long i = 0; i < n; i++)
    s += a[i];
  return s;
}
