/* Strided access: every 16th double (128 bytes apart, two cache lines), n elements in all. */
__attribute__((noinline)) double k_stride16(const double *a, long n) {
  double s = 0.0;
  for (long i = 0; i < n; i += 16)
    s += a[i];
  return s;
}
