/* Two-deep nest with different parameters: n rows of m floats, row-major. */
__attribute__((noinline)) float k_nest_nm(const float *a, long n, long m) {
  float total = 0.0f;
  for (long i = 0; i < n; i++) {
    float row = 0.0f;
    for (long j = 0; j < m; j++)
      row += a[i * m + j] * 0.5f;
    total += row;
  }
  return total;
}
