/* What llvm-mca's simulation of a block cannot see, measured on the machine this runs on, for
   cost_tables/derive/measure_beyond_mca.py. Our own code (no user input). Prints one JSON
   object: the core clock (GHz); per C library math function, the median of several timed
   repeats in nanoseconds per call (calls are independent: arguments from a table, results
   summed into four accumulators, so the figure is what a loop of calls costs, not one call's
   latency); and the nanoseconds per iteration of two chains through memory, `t[0] = t[0] + a[i]`
   on doubles and on 64-bit integers, whose `t` the compiler must keep in memory (a store to
   another pointer in the loop may alias it): each iteration waits for the previous one's store
   to be forwarded to its load; and the nanoseconds per access of a column walk (one float per
   row, rows 1 KiB apart) that stores or loads a new line every time, in the few L1 sets such a
   stride can use: over 256 rows (lines from L2; 64 rows would leave a 12- or 16-way L1 holding
   most of them) and over 4096 rows (too many for the L2 sets the
   stride can use: lines from L3). The simulated block takes every access as an L1 hit. And the
   nanoseconds per row of the same walk when it loads and stores each element (`a[j][i] *= c`):
   its load of row j+4 sits at the same address modulo the 4 KiB page as its store to row j,
   still in flight, and waits for it (store-to-load aliasing on the page offset).
   `--only column` prints the column figures alone (measure_beyond_mca.py --only).

     clang-19 -O2 -fno-builtin beyond_mca_probe.c -o probe -lm && ./probe
   (-fno-builtin: the compiler must call the library, not fold or inline it.) */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PROBE_CLOCK CLOCK_THREAD_CPUTIME_ID  /* shared machines: the probe's own CPU time */
#include "probe_common.h"

#define REPEATS PROBE_MAX_REPEATS
#define CALLS 1000000
#define TABLE 1024

static volatile double sink;

/* Arguments spread over the domain where programs usually call each function. */
static double args_double[TABLE], args_unit[TABLE];
static float args_float[TABLE], args_unit_float[TABLE];

static void fill_arguments(void) {
  for (int i = 0; i < TABLE; i++) {
    args_double[i] = 0.01 + 4.0 * i / TABLE;        /* (0, 4]: exp, log, sin, pow … */
    args_unit[i] = -0.99 + 1.98 * i / TABLE;        /* (-1, 1): asin, acos */
    args_float[i] = (float)args_double[i];
    args_unit_float[i] = (float)args_unit[i];
  }
}

#define TIME_CALLS(TYPE, EXPR, ARGS)                                        \
  {                                                                         \
    double ns[REPEATS];                                                     \
    for (int r = 0; r < REPEATS; r++) {                                     \
      TYPE a0 = 0, a1 = 0, a2 = 0, a3 = 0;                                  \
      double t0 = now();                                                    \
      for (int i = 0; i < CALLS; i += 4) {                                  \
        TYPE x;                                                             \
        x = ARGS[i % TABLE]; a0 += EXPR;                                    \
        x = ARGS[(i + 1) % TABLE]; a1 += EXPR;                              \
        x = ARGS[(i + 2) % TABLE]; a2 += EXPR;                              \
        x = ARGS[(i + 3) % TABLE]; a3 += EXPR;                              \
      }                                                                     \
      ns[r] = (now() - t0) / CALLS * 1e9;                                   \
      sink = a0 + a1 + a2 + a3;                                             \
    }                                                                       \
    printf("%s\n  \"%s\": %.3f", first ? "" : ",", name, median(ns, REPEATS)); \
    first = 0;                                                              \
  }

#define BOTH(NAME, EXPR_D, EXPR_F, ARGS_D, ARGS_F)                          \
  { const char *name = NAME; TIME_CALLS(double, EXPR_D, ARGS_D) }           \
  { const char *name = NAME "f"; TIME_CALLS(float, EXPR_F, ARGS_F) }

/* Called through volatile pointers, so the compiler cannot see which arrays they get: t[0]
   stays in memory because o may alias it. */
__attribute__((noinline)) static void chain_double(double *t, const double *a, double *o, long n) {
  for (long i = 0; i < n; i++) { t[0] = t[0] + a[i]; o[i] = a[i]; }
}

__attribute__((noinline)) static void chain_int(int64_t *t, const int64_t *a, int64_t *o, long n) {
  for (long i = 0; i < n; i++) { t[0] = t[0] + a[i]; o[i] = a[i]; }
}

static double chain_ns(int floating) {
  static double td[2], ad[TABLE], od[TABLE];
  static int64_t ti[2], ai[TABLE], oi[TABLE];
  double ns[REPEATS];
  static void (*volatile run_double)(double *, const double *, double *, long) = chain_double;
  static void (*volatile run_int)(int64_t *, const int64_t *, int64_t *, long) = chain_int;
  for (int i = 0; i < TABLE; i++) { ad[i] = 1.0 / (i + 1); ai[i] = i; }
  for (int r = 0; r < REPEATS; r++) {
    double t0 = now();
    for (int k = 0; k < CALLS / TABLE; k++) {
      if (floating) run_double(td, ad, od, TABLE);
      else run_int(ti, ai, oi, TABLE);
    }
    ns[r] = (now() - t0) / (CALLS / TABLE * TABLE) * 1e9;
  }
  sink = td[0] + (double)ti[0];
  return median(ns, REPEATS);
}

#define ROW_FLOATS 256   /* 1 KiB rows: a column's lines fall in 1/16 of the sets */
#define COLUMNS 16
/* Rows of the L2 walk: more lines than the 1/16 of L1's sets a column uses hold on current
   cores (4 of 64 sets x 12 ways = 48 lines on a 48 KiB 12-way L1), well within L2. */
#define L2_ROWS 256

__attribute__((noinline)) static void column_store(float *a, long rows) {
  for (long i = 0; i < COLUMNS; i++)
    for (long j = 0; j < rows; j++) a[j * ROW_FLOATS + i] = 0.0f;
}

__attribute__((noinline)) static float column_load(const float *a, long rows) {
  float s0 = 0, s1 = 0, s2 = 0, s3 = 0;  /* four sums: the loads, not an add chain, set the pace */
  for (long i = 0; i < COLUMNS; i++)
    for (long j = 0; j < rows; j += 4) {
      s0 += a[j * ROW_FLOATS + i]; s1 += a[(j + 1) * ROW_FLOATS + i];
      s2 += a[(j + 2) * ROW_FLOATS + i]; s3 += a[(j + 3) * ROW_FLOATS + i];
    }
  return s0 + s1 + s2 + s3;
}

__attribute__((noinline)) static void column_update(float *a, long rows) {
  for (long i = 0; i < COLUMNS; i++)
    for (long j = 0; j < rows; j++) a[j * ROW_FLOATS + i] = a[j * ROW_FLOATS + i] * 0.5f;
}

enum walk { WALK_LOAD, WALK_STORE, WALK_UPDATE };

static double column_ns(long rows, enum walk kind) {
  float *a = calloc(rows * ROW_FLOATS + 64, sizeof *a);
  double ns[REPEATS];
  for (int r = 0; r < REPEATS; r++) {
    double best = 1e9;
    for (int k = 0; k < 20; k++) {  /* the best of 20 walks: lines in place from the walk before */
      double t0 = now();
      if (kind == WALK_STORE) column_store(a, rows);
      else if (kind == WALK_UPDATE) column_update(a, rows);
      else sink = column_load(a, rows);
      double t = now() - t0;
      if (t < best) best = t;
    }
    ns[r] = best / (rows * COLUMNS) * 1e9;
  }
  free(a);
  return median(ns, REPEATS);
}

static void print_column_walks(void) {
  printf(" \"column_walk_ns_per_access\": {\"load.L2\": %.3f, \"store.L2\": %.3f, \"load.L3\": %.3f, "
         "\"store.L3\": %.3f},\n", column_ns(L2_ROWS, WALK_LOAD), column_ns(L2_ROWS, WALK_STORE), column_ns(4096, WALK_LOAD),
         column_ns(4096, WALK_STORE));
  printf(" \"column_update_ns_per_row\": {\"L2\": %.3f, \"L3\": %.3f}\n}\n", column_ns(L2_ROWS, WALK_UPDATE),
         column_ns(4096, WALK_UPDATE));
}

int main(int argc, char **argv) {
  int first = 1;
  int column_only = argc > 2 && !strcmp(argv[1], "--only") && !strcmp(argv[2], "column");
  fill_arguments();
  printf("{\n \"clock_ghz\": %.4f,\n", measure_clock_ghz(REPEATS, 50000000));
  if (column_only) {
    print_column_walks();
    return 0;
  }
  printf(" \"ns_per_call\": {");
  BOTH("exp", exp(x), expf(x), args_double, args_float)
  BOTH("exp2", exp2(x), exp2f(x), args_double, args_float)
  BOTH("exp10", exp10(x), exp10f(x), args_double, args_float)
  BOTH("expm1", expm1(x), expm1f(x), args_double, args_float)
  BOTH("log", log(x), logf(x), args_double, args_float)
  BOTH("log2", log2(x), log2f(x), args_double, args_float)
  BOTH("log10", log10(x), log10f(x), args_double, args_float)
  BOTH("log1p", log1p(x), log1pf(x), args_double, args_float)
  BOTH("sin", sin(x), sinf(x), args_double, args_float)
  BOTH("cos", cos(x), cosf(x), args_double, args_float)
  BOTH("tan", tan(x), tanf(x), args_double, args_float)
  BOTH("asin", asin(x), asinf(x), args_unit, args_unit_float)
  BOTH("acos", acos(x), acosf(x), args_unit, args_unit_float)
  BOTH("atan", atan(x), atanf(x), args_double, args_float)
  BOTH("atan2", atan2(x, 0.3), atan2f(x, 0.3f), args_double, args_float)
  BOTH("sinh", sinh(x), sinhf(x), args_double, args_float)
  BOTH("cosh", cosh(x), coshf(x), args_double, args_float)
  BOTH("tanh", tanh(x), tanhf(x), args_double, args_float)
  BOTH("pow", pow(x, 1.7), powf(x, 1.7f), args_double, args_float)
  BOTH("cbrt", cbrt(x), cbrtf(x), args_double, args_float)
  BOTH("erf", erf(x), erff(x), args_double, args_float)
  printf("\n },\n \"chain_ns_per_iteration\": {\"double\": %.3f, \"int64\": %.3f},\n",
         chain_ns(1), chain_ns(0));
  print_column_walks();
  return 0;
}
