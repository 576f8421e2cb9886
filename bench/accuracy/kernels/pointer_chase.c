/* Pointer chasing: next[] holds one random cycle, each load depends on the previous one. */
__attribute__((noinline)) long k_pointer_chase(const long *next, long steps) {
  long p = 0;
  for (long i = 0; i < steps; i++)
    p = next[p];
  return p;
}
