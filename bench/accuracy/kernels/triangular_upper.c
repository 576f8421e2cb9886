/* Upper-triangular nest: the inner loop runs from the outer index to n (n*(n+1)/2 inner
   iterations); ScalarEvolution bounds it by smax(n, i + 1). */
__attribute__((noinline)) long k_triangular_upper(const long *a, long n) {
  long s = 0;
  for (long i = 0; i < n; i++)
    for (long j = i; j < n; j++)
      s += a[j] ^ i;
  return s;
}
