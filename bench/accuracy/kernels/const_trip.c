/* Constant trip count: the bound is a literal, so LLVM knows it exactly. */
__attribute__((noinline)) long k_const_trip(const int *a) {
  long s = 0;
  for (long i = 0; i < 3000000; i++)
    s += a[i] ^ (i * 7);
  return s;
}
