/* memcpy-like element copy. Without `restrict` the compiler cannot prove the arrays are disjoint,
   so it keeps the loop (vectorized behind a run-time overlap check) instead of calling memcpy. */
__attribute__((noinline)) void k_copy(long *dst, const long *src, long n) {
  for (long i = 0; i < n; i++)
    dst[i] = src[i];
}
