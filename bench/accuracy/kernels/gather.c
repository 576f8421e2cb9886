/* Indirect access a[idx[i]] with a random index array. */
__attribute__((noinline)) double k_gather(const double *a, const int *idx, long n) {
  double s = 0.0;
  for (long i = 0; i < n; i++)
    s += a[idx[i]];
  return s;
}
