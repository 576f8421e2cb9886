/* Three-deep nest with three different parameters (n x m x p box of ints). */
__attribute__((noinline)) long k_box3(const int *a, long n, long m, long p) {
  long s = 0;
  for (long i = 0; i < n; i++)
    for (long j = 0; j < m; j++)
      for (long k = 0; k < p; k++)
        s += a[(i * m + j) * p + k] * (k + 1);
  return s;
}
