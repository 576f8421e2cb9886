/* Column-major traversal of a row-major n x m array: consecutive loads are m*8 bytes apart. */
__attribute__((noinline)) double k_column_major(const double *a, long n, long m) {
  double s = 0.0;
  for (long j = 0; j < m; j++)
    for (long i = 0; i < n; i++)
      s += a[i * m + j];
  return s;
}
