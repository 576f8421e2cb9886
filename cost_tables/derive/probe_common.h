/* What the probes in this folder share (our own code): a clock, the median of repeated timings,
   and the core's clock rate. Define PROBE_CLOCK before including it to time with another clock
   (host_probe.c: wall time; beyond_mca_probe.c: the thread's CPU time). */
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#ifndef PROBE_CLOCK
#define PROBE_CLOCK CLOCK_MONOTONIC
#endif
#define PROBE_MAX_REPEATS 7

static double now(void) {
  struct timespec t;
  clock_gettime(PROBE_CLOCK, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  qsort(v, n, sizeof *v, by_value);
  return v[n / 2];
}

static volatile uint64_t probe_sink;

/* Core clock in GHz: a chain of dependent 1-cycle adds retires one add per cycle (the median
   of `repeats` timings of 8 x `n` adds). */
static double measure_clock_ghz(int repeats, uint64_t n) {
  double ghz[PROBE_MAX_REPEATS];
  for (int r = 0; r < repeats; r++) {
    uint64_t x = 1;
    double t0 = now();
    for (uint64_t i = 0; i < n; i++)
      __asm__ volatile("add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\t"
                       "add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0" : "+r"(x));
    ghz[r] = 8.0 * n / (now() - t0) / 1e9;
    probe_sink = x;
  }
  return median(ghz, repeats);
}
