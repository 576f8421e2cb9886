/* Microbenchmarks of the machine this runs on, for cost_tables/derive/measure_host.py.
   Our own code (no user input). Prints one JSON object: each figure is the median of several
   timed repeats, in nanoseconds per operation (and GB/s for the streams). On stderr, "steps N"
   and then one "step NAME" line as each measurement starts (for a progress bar: ccls calibrate).

     clang-19 -O2 host_probe.c -o host_probe && ./host_probe
     ./host_probe --quick   # seconds, not a minute: 3 repeats, 1/10 of the work, 64 MiB buffers
                            # instead of 512 MiB (for tests; its DRAM figures are rougher) */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "probe_common.h"

#define MAX_REPEATS PROBE_MAX_REPEATS
#define STEPS 25

static int REPEATS = MAX_REPEATS;
static size_t WORK = 1;     /* divides loop counts: 10 in --quick mode */
static size_t BIG = 512u << 20;  /* the largest buffers: 64 MiB in --quick mode */

static void step(const char *name) { fprintf(stderr, "step %s\n", name); }

static uint64_t rng = 88172645463325252ull;
static uint64_t next_random(void) {  /* xorshift64 */
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

static volatile uint64_t sink;

/* Core clock: see probe_common.h. */
static double clock_ghz(void) { return measure_clock_ghz(REPEATS, 100000000 / WORK); }

/* Independent 32-bit and 64-bit divides (quotients of 20-30 bits, as in typical code). */
static double divide_ns(int wide) {
  double ns[MAX_REPEATS];
  uint64_t numerators[8] = {1000000007u, 999999937u, 987654321u, 123456789u,
                            876543211u, 555555555u, 444444443u, 333333331u};
  for (int r = 0; r < REPEATS; r++) {
    uint64_t n = 20000000 / WORK, s = 0;
    double t0 = now();
    for (uint64_t i = 0; i < n; i++) {
      uint64_t d = (i & 511) + 3;
      if (wide) {
        uint64_t q, rem;
        __asm__ volatile("divq %4" : "=a"(q), "=d"(rem) : "a"(numerators[i & 7] << 20), "d"(0ull), "r"(d));
        s += q + rem;
      } else {
        uint32_t q, rem;
        __asm__ volatile("divl %4" : "=a"(q), "=d"(rem) : "a"((uint32_t)numerators[i & 7]), "d"(0u),
                         "r"((uint32_t)d));
        s += q + rem;
      }
    }
    ns[r] = (now() - t0) / n * 1e9;
    sink = s;
  }
  return median(ns, REPEATS);
}

/* Load-to-use latency: a pointer chase through one random cycle over `bytes`, one node per
   64-byte line, so every step waits for the previous one. */
static double chase_ns(size_t bytes) {
  size_t lines = bytes / 64, stride = 64 / sizeof(uint64_t);
  uint64_t *buf = aligned_alloc(64, lines * 64);
  size_t *order = malloc(lines * sizeof *order);
  for (size_t i = 0; i < lines; i++) order[i] = i;
  for (size_t i = lines - 1; i > 0; i--) {
    size_t j = next_random() % (i + 1), t = order[i];
    order[i] = order[j];
    order[j] = t;
  }
  for (size_t i = 0; i < lines; i++) buf[order[i] * stride] = order[(i + 1) % lines] * stride;
  size_t steps = 2000000 / WORK;
  double ns[MAX_REPEATS];
  uint64_t p = 0;
  if (bytes <= (64u << 20))
    for (size_t i = 0; i < lines; i++) p = buf[p];  /* warm up: one lap (a DRAM-sized buffer stays cold) */
  for (int r = 0; r < REPEATS; r++) {
    double t0 = now();
    for (size_t i = 0; i < steps; i++) p = buf[p];
    ns[r] = (now() - t0) / steps * 1e9;
  }
  sink = p;
  free(order);
  free(buf);
  return median(ns, REPEATS);
}

/* Independent random loads (s += a[idx[i]]) over `bytes`: the misses overlap, so latency /
   this time is the memory-level parallelism the core achieves. */
static double gather_ns(size_t bytes) {
  size_t count = bytes / sizeof(double), n = 20000000 / WORK;
  double *a = aligned_alloc(64, count * sizeof(double));
  uint32_t *idx = malloc(n * sizeof *idx);
  for (size_t i = 0; i < count; i++) a[i] = (double)(i & 1023);
  for (size_t i = 0; i < n; i++) idx[i] = (uint32_t)(next_random() % count);
  double ns[MAX_REPEATS], s = 0;
  for (int r = 0; r < REPEATS; r++) {
    double t0 = now();
    for (size_t i = 0; i < n; i++) s += a[idx[i]];
    ns[r] = (now() - t0) / n * 1e9;
  }
  sink = (uint64_t)s;
  free(idx);
  free(a);
  return median(ns, REPEATS);
}

/* Loads at a fixed byte `stride` of two lines or more over `bytes` (s += a[i * stride]): each
   takes a line of its own from DRAM, at an address the prefetchers can predict; ns per load. */
static double strided_ns(size_t bytes, size_t stride) {
  char *a = aligned_alloc(4096, bytes);
  memset(a, 1, bytes);
  size_t n = bytes / stride;
  double ns[MAX_REPEATS];
  uint64_t s = 0;
  for (int r = 0; r < REPEATS; r++) {
    double t0 = now();
    for (size_t i = 0; i < n; i++) s += *(const uint64_t *)(a + i * stride);
    ns[r] = (now() - t0) / n * 1e9;
  }
  sink = s;
  free(a);
  return median(ns, REPEATS);
}

/* Sequential bandwidth over `bytes`: a read-only sum and a copy (read + write), in GB/s of
   bytes the program asked for. Repeated passes: a buffer that fits a cache is served by it. */
static void stream_gb_s(size_t bytes, double *read_gb_s, double *copy_gb_s) {
  size_t n = bytes / sizeof(uint64_t);
  uint64_t *a = aligned_alloc(64, bytes), *b = aligned_alloc(64, bytes);
  memset(a, 1, bytes);
  memset(b, 2, bytes);
  size_t passes = (BIG / 2) / bytes < 1 ? 1 : (BIG / 2) / bytes;
  double read[MAX_REPEATS], copy[MAX_REPEATS];
  uint64_t s = 0;
  for (int r = 0; r < REPEATS; r++) {
    double t0 = now();
    for (size_t k = 0; k < passes; k++)
      for (size_t i = 0; i < n; i++) s += a[i];
    read[r] = (double)bytes * passes / (now() - t0) / 1e9;
    t0 = now();
    for (size_t k = 0; k < passes; k++) {
      for (size_t i = 0; i < n; i++) b[i] = a[i] + k;
      __asm__ volatile("" ::: "memory");
    }
    copy[r] = 2.0 * bytes * passes / (now() - t0) / 1e9;
  }
  sink = s + b[n / 2];
  free(a);
  free(b);
  *read_gb_s = median(read, REPEATS);
  *copy_gb_s = median(copy, REPEATS);
}

/* A stream re-read `lag` elements behind its leading access (s += a[j] + a[j - lag]), next to one
   stream (s += a[j]) and two (s += a[j] + b[j]), over arrays far beyond any cache: ns per
   element. A re-read that finds the leader's lines costs about one stream; one that does not,
   two (on the Zen 4 guest this was written on, re-reads 24-256 KiB behind cost two). */
static double reread_ns(const uint64_t *a, const uint64_t *b, size_t n, size_t lag) {
  double ns[MAX_REPEATS];
  uint64_t s = 0;
  for (int r = 0; r < REPEATS; r++) {
    double t0 = now();
    if (b)
      for (size_t j = 0; j < n; j++) s += a[j] + b[j];
    else if (lag)
      for (size_t j = lag; j < n; j++) s += a[j] + a[j - lag];
    else
      for (size_t j = 0; j < n; j++) s += a[j];
    ns[r] = (now() - t0) / (n - lag) * 1e9;
  }
  sink = s;
  return median(ns, REPEATS);
}

static void print_reread(void) {
  size_t n = (BIG / 2) / sizeof(uint64_t);
  uint64_t *a = aligned_alloc(64, n * sizeof *a), *b = aligned_alloc(64, n * sizeof *b);
  memset(a, 1, n * sizeof *a);
  memset(b, 2, n * sizeof *b);
  printf(" \"reread_ns\": {\"one\": %.4f, \"two\": %.4f", reread_ns(a, NULL, n, 0), reread_ns(a, b, n, 0));
  size_t lags[] = {1 << 10, 128 << 10};  /* bytes behind: within L1's reach; well within L2's */
  for (int i = 0; i < 2; i++) printf(", \"%zu\": %.4f", lags[i], reread_ns(a, NULL, n, lags[i] / sizeof(uint64_t)));
  printf("}\n");
  free(a);
  free(b);
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "--quick") == 0) {
    REPEATS = 3;
    WORK = 10;
    BIG = 64u << 20;
  }
  fprintf(stderr, "steps %d\n", STEPS);
  step("clock");
  printf("{\n \"clock_ghz\": %.4f,\n", clock_ghz());
  step("divide");
  double divl = divide_ns(0), divq = divide_ns(1);
  printf(" \"divl_ns\": %.4f,\n \"divq_ns\": %.4f,\n", divl, divq);
  printf(" \"chase_ns\": {");
  /* L1, L2, a sweep through the L3 (where its latency gives way to DRAM's), DRAM (64 MiB: beyond any
     L3, small enough that page walks mostly hit the caches, as in typical code) */
  size_t chase_sizes[] = {16 << 10, 256 << 10, 1 << 20, 2 << 20, 4 << 20, 6 << 20, 8 << 20, 12 << 20,
                          16 << 20, 24 << 20, 64 << 20};
  for (int i = 0; i < 11; i++) {
    step("latency");
    printf("%s\"%zu\": %.3f", i ? ", " : "", chase_sizes[i], chase_ns(chase_sizes[i]));
  }
  step("gather");
  printf("},\n \"gather_ns\": {\"%d\": %.3f},\n", 64 << 20, gather_ns(64u << 20));
  /* strides from two lines to four pages and a line: within a page, and a page each */
  size_t strides[] = {128, 256, 512, 1024, 4096 + 64, 16384 + 64};
  printf(" \"strided_ns\": {");
  for (int i = 0; i < 6; i++) {
    step("strided");
    printf("%s\"%zu\": %.3f", i ? ", " : "", strides[i], strided_ns(BIG, strides[i]));
  }
  printf("},\n");
  printf(" \"stream\": {");
  size_t stream_sizes[] = {2 << 20, 8 << 20, 32 << 20, BIG};
  for (int i = 0; i < 4; i++) {
    double read, copy;
    step("stream");
    stream_gb_s(stream_sizes[i], &read, &copy);
    printf("%s\"%zu\": {\"read_gb_s\": %.2f, \"copy_gb_s\": %.2f}", i ? ", " : "", stream_sizes[i], read, copy);
  }
  printf("},\n");
  step("reread");
  print_reread();
  printf("}\n");
  return 0;
}
