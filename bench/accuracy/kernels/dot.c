/* Dot product; without -ffast-math the FP reduction stays sequential (not vectorized). */
__attribute__((noinline)) double k_dot(const double *x, const double *y, long n) {
  double s = 0.0;
  for (long i = 0; i < n; i++)
    s += x[i] * y[i];
  return s;
}
