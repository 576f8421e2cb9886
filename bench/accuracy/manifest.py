"""The benchmark kernels: where each lives, its loop shape, its sizes, and how the driver feeds it.

`params` are the kernel's own symbolic parameters (the C parameter names). The same values go to
the driver (timing and callgrind) and to `ccls analyze --param NAME=VALUE`, so prediction and
measurement describe the same run. `inputs` are driver-only sizes that are not kernel parameters
(e.g. the length of the linked list a pointer chase walks); ccls never sees them.

`setup` is C run before the timed region; it may use every name in `params` and `inputs` as a
`long`, and the allocation helpers of the generated driver (see gen_driver.py). `call` is the
kernel call. `sink` (optional) is an expression read after the last call so outputs stay live.
`actual_trip` documents, for data-dependent loops, what the measured run really does, and
`actual_params` (if any) are the parameter values that describe it (a search that stops halfway:
n/2). The headline numbers never use them; run.py prints one extra line that does, to show how
much the data-dependent trip counts alone cost.
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Kernel:
    name: str
    file: str  # under kernels/
    shape: str
    params: dict[str, int]
    setup: str
    call: str
    sink: str = ""
    inputs: dict[str, int] = field(default_factory=dict)
    actual_trip: str = ""
    actual_params: dict[str, int] = field(default_factory=dict)


KERNELS: tuple[Kernel, ...] = (
    Kernel("k_const_trip", "const_trip.c", "1-deep, constant trip 3e6",
           params={}, inputs={"len": 3_000_000},
           setup="int *a = i32_random(len, -1000, 1000);",
           call="k_const_trip(a)"),
    Kernel("k_sum_n", "sum_n.c", "1-deep, symbolic n",
           params={"n": 4_000_000},
           setup="long *a = i64_random(n, 1000);",
           call="k_sum_n(a, n)"),
    Kernel("k_triangular", "triangular.c", "2-deep triangular (j < i)",
           params={"n": 3000},
           setup="double *x = f64_random(n, 0.0, 1.0); double *y = f64_random(n, 0.0, 1.0);",
           call="k_triangular(x, y, n)"),
    Kernel("k_triangular_upper", "triangular_upper.c", "2-deep triangular (i <= j < n)",
           params={"n": 4000},
           setup="long *a = i64_random(n, 1000);",
           call="k_triangular_upper(a, n)"),
    Kernel("k_nest_nm", "nest_nm.c", "2-deep, n x m",
           params={"n": 2000, "m": 1500},
           setup="float *a = f32_random(n * m, 0.0f, 1.0f);",
           call="k_nest_nm(a, n, m)"),
    Kernel("k_matmul", "matmul.c", "3-deep, n^3 (i-k-j matmul)",
           params={"n": 200},
           setup=("double *A = f64_random(n * n, 0.0, 1.0); double *B = f64_random(n * n, 0.0, 1.0);"
                  " double *C = f64_zeros(n * n);"),
           call="k_matmul(A, B, C, n)", sink="C[n + 1]"),
    Kernel("k_box3", "box3.c", "3-deep, n x m x p",
           params={"n": 128, "m": 100, "p": 300},
           setup="int *a = i32_random(n * m * p, -100, 100);",
           call="k_box3(a, n, m, p)"),
    Kernel("k_find_first", "find_first.c", "early exit (key at n/2)",
           params={"n": 8_000_000},
           setup="long *a = i64_sequence(n); long key = a[n / 2];",
           call="k_find_first(a, n, key)",
           actual_trip="the loop exits at i = n/2 (the key's position)", actual_params={"n": 4_000_000}),
    Kernel("k_stride16", "stride16.c", "1-deep, stride 16 doubles",
           params={"n": 16_000_000},
           setup="double *a = f64_random(n, 0.0, 1.0);",
           call="k_stride16(a, n)"),
    Kernel("k_column_major", "column_major.c", "2-deep, column-major walk",
           params={"n": 1500, "m": 1500},
           setup="double *a = f64_random(n * m, 0.0, 1.0);",
           call="k_column_major(a, n, m)"),
    Kernel("k_gather", "gather.c", "1-deep, indirect a[idx[i]]",
           params={"n": 2_000_000}, inputs={"len": 4_000_000},
           setup="double *a = f64_random(len, 0.0, 1.0); int *idx = i32_random(n, 0, len - 1);",
           call="k_gather(a, idx, n)"),
    Kernel("k_pointer_chase", "pointer_chase.c", "1-deep, pointer chasing",
           params={"steps": 300_000}, inputs={"nodes": 4_000_000},
           setup="long *next = random_cycle(nodes);",
           call="k_pointer_chase(next, steps)"),
    Kernel("k_divmod", "divmod.c", "1-deep, int div/mod by variable",
           params={"n": 1_000_000},
           setup="long *a = i64_random(n, 1000000000); long *d = i64_random_range(n, 1, 1000);",
           call="k_divmod(a, d, n)"),
    Kernel("k_div_const", "div_const.c", "1-deep, div/mod by constants",
           params={"n": 4_000_000},
           setup="unsigned *a = u32_random(n);",
           call="k_div_const(a, n)"),
    Kernel("k_fp_div", "fp_div.c", "1-deep, FP division",
           params={"n": 2_000_000},
           setup=("double *a = f64_random(n, 1.0, 2.0); double *b = f64_random(n, 1.0, 2.0);"
                  " double *c = f64_zeros(n);"),
           call="k_fp_div(a, b, c, n)", sink="c[n / 3]"),
    Kernel("k_sqrt_map", "sqrt_map.c", "1-deep, sqrt",
           params={"n": 2_000_000},
           setup="double *a = f64_random(n, 0.0, 100.0); double *o = f64_zeros(n);",
           call="k_sqrt_map(a, o, n)", sink="o[n / 3]"),
    Kernel("k_dot", "dot.c", "1-deep, dot product (FP reduction)",
           params={"n": 4_000_000},
           setup="double *x = f64_random(n, 0.0, 1.0); double *y = f64_random(n, 0.0, 1.0);",
           call="k_dot(x, y, n)"),
    Kernel("k_prefix_sum", "prefix_sum.c", "1-deep, prefix sum",
           params={"n": 4_000_000},
           setup="long *a = i64_random(n, 1000); long *o = i64_zeros(n);",
           call="k_prefix_sum(a, o, n)", sink="o[n - 1]"),
    Kernel("k_histogram", "histogram.c", "1-deep, histogram (data-dependent store)",
           params={"n": 8_000_000},
           setup="unsigned char *a = u8_random(n); long *hist = i64_zeros(256);",
           call="k_histogram(a, hist, n)", sink="hist[7]"),
    Kernel("k_filter", "filter.c", "1-deep, branchy (data-dependent if, ~50% taken)",
           params={"n": 4_000_000},
           setup="int *a = i32_random(n, -1000000, 1000000); int *o = (int *)xmalloc(n * sizeof(int)); int threshold = 0;",
           call="k_filter(a, o, n, threshold)",
           actual_trip="the store branch is taken for ~50% of the random inputs"),
    Kernel("k_halving", "halving.c", "2-deep: reps x while(x > 1) x >>= 1 (log n)",
           params={"n": 1_000_000, "reps": 200_000},
           setup="",
           call="k_halving(n, reps)",
           actual_trip="the inner while runs floor(log2(n + r)) = 19 times (n = 1e6)"),
    Kernel("k_copy", "copy.c", "1-deep, memcpy-like copy",
           params={"n": 4_000_000},
           setup="long *src = i64_random(n, 1000); long *dst = i64_zeros(n);",
           call="k_copy(dst, src, n)", sink="dst[n / 2]"),
    Kernel("k_horner", "horner.c", "2-deep, Horner n points x degree deg",
           params={"deg": 16, "n": 1_000_000},
           setup=("double *coef = f64_random(deg + 1, -1.0, 1.0); double *x = f64_random(n, -1.0, 1.0);"
                  " double *y = f64_zeros(n);"),
           call="k_horner(coef, deg, x, y, n)", sink="y[n / 2]"),
    Kernel("k_stencil", "stencil.c", "2-deep, 5-point stencil",
           params={"n": 1500},
           setup="double *in = f64_random(n * n, 0.0, 1.0); double *out = f64_zeros(n * n);",
           call="k_stencil(in, out, n)", sink="out[n + 1]"),
    Kernel("k_string_hash", "string_hash.c", "1-deep, serial multiply-add chain",
           params={"n": 8_000_000},
           setup="unsigned char *s = u8_random(n);",
           call="k_string_hash(s, n)"),
)


def by_name(name: str) -> Kernel:
    for kernel in KERNELS:
        if kernel.name == name:
            return kernel
    raise KeyError(f"no kernel named {name!r} in bench/accuracy/manifest.py")
