/* Multiplicative string hash: a serial integer multiply-add chain over n bytes. */
__attribute__((noinline)) unsigned long k_string_hash(const unsigned char *s, long n) {
  unsigned long h = 5381;
  for (long i = 0; i < n; i++)
    h = h * 33 + s[i];
  return h;
}
