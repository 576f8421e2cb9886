/* Three-deep nest: naive i-k-j matrix multiply, n^3 multiply-adds. C must be zeroed by the caller. */
__attribute__((noinline)) void k_matmul(const double *A, const double *B, double *C, long n) {
  for (long i = 0; i < n; i++)
    for (long k = 0; k < n; k++) {
      double aik = A[i * n + k];
      for (long j = 0; j < n; j++)
        C[i * n + j] += aik * B[k * n + j];
    }
}
