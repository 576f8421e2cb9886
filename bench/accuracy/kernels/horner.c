/* Polynomial evaluation by Horner's rule at n points, degree deg (inner loop over coefficients). */
__attribute__((noinline)) void k_horner(const double *coef, long deg, const double *x, double *y, long n) {
  for (long i = 0; i < n; i++) {
    double p = coef[0];
    for (long k = 1; k <= deg; k++)
      p = p * x[i] + coef[k];
    y[i] = p;
  }
}
