/* Early exit: linear search that stops at the first match. The trip count depends on the data;
   the benchmark places the key at a known position (n/2). */
__attribute__((noinline)) long k_find_first(const long *a, long n, long key) {
  for (long i = 0; i < n; i++)
    if (a[i] == key)
      return i;
  return -1;
}
