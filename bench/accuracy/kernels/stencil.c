/* Five-point 2-D stencil over the interior of an n x n grid. */
__attribute__((noinline)) void k_stencil(const double *in, double *out, long n) {
  for (long i = 1; i < n - 1; i++)
    for (long j = 1; j < n - 1; j++)
      out[i * n + j] = 0.5 * in[i * n + j]
                     + 0.125 * (in[(i - 1) * n + j] + in[(i + 1) * n + j] + in[i * n + j - 1] + in[i * n + j + 1]);
}
