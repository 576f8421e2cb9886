/* Element-wise floating-point division. */
__attribute__((noinline)) void k_fp_div(const double *a, const double *b, double *c, long n) {
  for (long i = 0; i < n; i++)
    c[i] = a[i] / b[i];
}
