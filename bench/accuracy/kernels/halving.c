/* A while loop with a halving counter (about log2(n) iterations), repeated reps times. */
__attribute__((noinline)) long k_halving(long n, long reps) {
  long s = 0;
  for (long r = 0; r < reps; r++) {
    long x = n + r;
    while (x > 1) {
      x >>= 1;
      s += x & 3;
    }
  }
  return s;
}
