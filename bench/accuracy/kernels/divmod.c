/* Integer division and remainder by a divisor only known at run time. */
__attribute__((noinline)) long k_divmod(const long *a, const long *d, long n) {
  long s = 0;
  for (long i = 0; i < n; i++)
    s += a[i] / d[i] + a[i] % d[i];
  return s;
}
