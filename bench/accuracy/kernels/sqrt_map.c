#include <math.h>
/* Square root of each element (inputs are non-negative, so libm's errno path is never taken). */
__attribute__((noinline)) void k_sqrt_map(const double *a, double *out, long n) {
  for (long i = 0; i < n; i++)
    out[i] = sqrt(a[i]);
}
