/* Triangular nest: the inner bound is the outer index (n*(n-1)/2 inner iterations). */
__attribute__((noinline)) double k_triangular(const double *x, const double *y, long n) {
  double s = 0.0;
  for (long i = 0; i < n; i++)
    for (long j = 0; j < i; j++)
      s += x[j] * y[i];
  return s;
}
