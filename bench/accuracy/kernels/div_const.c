/* Division and remainder by constants: the compiler turns them into multiply and shift. */
__attribute__((noinline)) unsigned long k_div_const(const unsigned *a, long n) {
  unsigned long s = 0;
  for (long i = 0; i < n; i++)
    s += a[i] / 7u + a[i] % 10u;
  return s;
}
