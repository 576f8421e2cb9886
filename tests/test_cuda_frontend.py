"""CUDA front end: real nvcc and clang compiles of examples/*.cu, read through the PTX reader."""
from __future__ import annotations

import os
import shutil
from fractions import Fraction

import pytest

from ccls import toolchain
from ccls.frontends import SourceFile, frontend_for
from ccls.frontends.cuda import _cccl_includes, analyze_cuda, analyze_cuda_with, cuda_functions, kernel_launches
from ccls.options import AnalysisOptions
from ccls.polynomial import Polynomial

EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples")
n = Polynomial.symbol("n")

HAVE_NVCC = toolchain.find_tool("nvcc") is not None
HAVE_CLANG = toolchain.find_tool("clang") is not None
COMPILERS = [
    pytest.param("nvcc", marks=pytest.mark.skipif(not HAVE_NVCC, reason="nvcc (CUDA toolkit) not installed")),
    pytest.param("clang", marks=pytest.mark.skipif(not HAVE_CLANG, reason="clang not installed")),
]


def example(name: str) -> SourceFile:
    path = os.path.join(EXAMPLES, name)
    with open(path, encoding="utf-8") as handle:
        return SourceFile(path, handle.read())


def analyze(name: str, compiler: str, **options):
    result = analyze_cuda_with(example(name), AnalysisOptions(**options), compiler)
    assert result.errors == []
    return {fn.display_name: fn for fn in result.functions}


def loop_classes(fn) -> set[str]:
    return {i.cls for b in fn.blocks if b.loop is not None for i in b.instructions}


@pytest.mark.parametrize("compiler", COMPILERS)
def test_saxpy_kernel_names_parameters_and_trip_count(compiler):
    fns = analyze("saxpy.cu", compiler)
    saxpy = fns["saxpy"]
    assert (saxpy.name, saxpy.language, saxpy.arch) == ("_Z5saxpyifPKfPf", "cuda", "nvptx-sm80")
    assert saxpy.parameters == ["n", "a", "x", "y"]
    assert (saxpy.line, saxpy.end_line) == (2, 7)
    (loop,) = saxpy.loops.values()
    # Per thread, and no launch in the file: the grid-stride loop's share is assumed, and said.
    assert (loop.trip_count.kind, loop.trip_count.iterations, loop.line) == ("unknown", Polynomial.constant(1), 4)
    assert "fp_fma.f32" in loop_classes(saxpy)
    assert saxpy.assumptions[0].startswith("device code compiled by " + ("nvcc" if compiler == "nvcc" else ""))
    assert saxpy.assumptions[1].startswith("costs are per thread")
    assert saxpy.assumptions[1].endswith("launch configuration unknown")
    assert "n/(gridDim.x·blockDim.x)" in saxpy.assumptions[2]


@pytest.mark.parametrize("compiler", COMPILERS)
def test_division_in_a_loop_over_n(compiler):
    fns = analyze("row_normalize.cu", compiler)
    rows, buckets = fns["row_normalize"], fns["bucketize"]
    assert rows.parameters == ["in", "out", "m", "n"]
    assert "fp_div.f32" in loop_classes(rows)
    assert "int_div" in loop_classes(buckets)
    div_loops = {b.loop for b in rows.blocks for i in b.instructions if i.cls == "fp_div.f32" and b.loop}
    for loop_id in div_loops:
        trip = rows.loops[loop_id].trip_count
        assert trip.iterations.symbols <= {"n"}
        assert rows.loops[loop_id].line == 13
    # The division loop is unrolled u times (nvcc: 4, clang: 2): the main loop runs
    # E[floor(n / u)] = (n - (u - 1)/2) / u times, taking n & (u - 1) at its mean like the LLVM reader.
    main = {rows.loops[i].trip_count.iterations for i in div_loops if rows.loops[i].trip_count.kind == "symbolic"}
    unroll = 4 if compiler == "nvcc" else 2
    assert main == {(n - Fraction(unroll - 1, 2)) * Fraction(1, unroll)}
    assert any(f"(n & {unroll - 1}) taken as its mean {(unroll - 1) / 2:g}" in a for a in rows.assumptions)
    div_lines = {i.line for b in rows.blocks for i in b.instructions if i.cls == "fp_div.f32"}
    assert div_lines == {14}


@pytest.mark.parametrize("compiler", COMPILERS)
def test_shared_memory_reduction_and_half_precision(compiler):
    fns = analyze("block_reduce.cu", compiler)
    reduce, haxpy = fns["block_reduce"], fns["haxpy2"]
    (loop,) = reduce.loops.values()
    assert (loop.trip_count.kind, loop.trip_count.iterations) == ("constant", Polynomial.constant(8))
    inside = loop_classes(reduce)
    assert {"barrier", "load.shared", "store.shared", "fp_add.f32"} <= inside
    assert "atomic.global" in {i.cls for b in reduce.blocks for i in b.instructions}
    assert "fp_fma.f16@v32" in {i.cls for b in haxpy.blocks for i in b.instructions}
    shared = [i.access for b in reduce.blocks for i in b.instructions if i.cls == "store.shared"]
    assert shared and shared[0].pattern == "unit"  # buf[threadIdx.x]


@pytest.mark.skipif(not HAVE_NVCC, reason="nvcc (CUDA toolkit) not installed")
def test_sm90_option_compiles_for_hopper():
    fns = analyze("saxpy.cu", "nvcc", gpu_arch="nvptx-sm90")
    assert fns["saxpy"].arch == "nvptx-sm90"
    assert "sm_90" in fns["saxpy"].assumptions[0]


BROKEN = """__global__ void broken(float *a, int n)
{
    for (int i = 0; i < n; ++i)
        a[i] = undefined_thing + 1;
}
"""


@pytest.mark.parametrize("compiler", COMPILERS)
def test_compile_error_has_the_line_and_the_compilers_words(compiler, tmp_path):
    path = tmp_path / "broken.cu"
    result = analyze_cuda_with(SourceFile(str(path), BROKEN), AnalysisOptions(), compiler)
    assert result.functions == []
    (error,) = result.errors
    assert (error.file, error.line) == (str(path), 4)
    assert "undefined_thing" in error.message and error.message.startswith(compiler)
    assert os.listdir(tmp_path) == []  # compiled from a private temp dir, nothing written here


@pytest.mark.skipif(not HAVE_CLANG, reason="clang not installed")
def test_clang_without_a_cuda_installation_uses_the_prelude(monkeypatch):
    real_run = toolchain.run_tool

    def no_cuda(argv, **kwargs):  # as on a machine where clang finds no CUDA toolkit
        if "--cuda-device-only" in argv:
            argv = [argv[0], "--cuda-path=/nonexistent-cuda", *argv[1:]]
        return real_run(argv, **kwargs)

    monkeypatch.setattr(toolchain, "run_tool", no_cuda)
    fns = analyze("row_normalize.cu", "clang")
    rows = fns["row_normalize"]
    assert "minimal prelude" in rows.assumptions[0]
    assert "fp_div.f32" in loop_classes(rows)
    assert "fp_sqrt.f32" in {i.cls for b in rows.blocks for i in b.instructions}  # sqrtf → sqrt.rn.f32


def test_no_compiler_at_all_is_one_error_saying_what_to_install(monkeypatch):
    monkeypatch.setattr(toolchain, "find_tool", lambda name: None)
    result = analyze_cuda(example("saxpy.cu"), AnalysisOptions())
    assert result.functions == []
    (error,) = result.errors
    assert "install the CUDA toolkit" in error.message and "clang" in error.message


def test_kernel_signatures_from_tree_sitter():
    text = """namespace ns {
template <typename T>
__global__ void __launch_bounds__(256) tk(T *a, int n) { a[0] = n; }
}
extern "C" __global__ void ck(float *restrict_a, int) {}
__host__ __device__ inline float hd(float x, float (*f)(float)) { return f(x); }
int host_main(int argc, char **argv) { return 0; }
static __device__ float *dev_ptr(float v[4]) { return v; }
"""
    found = {f.name: f for f in cuda_functions(text)}
    assert found["tk"].params == ("a", "n") and found["tk"].runs_on_device and not found["tk"].runs_on_host
    assert found["ck"].params == ("restrict_a", "param_1")
    assert found["hd"].params == ("x", "f") and found["hd"].runs_on_host and found["hd"].runs_on_device
    assert found["host_main"].runs_on_host and not found["host_main"].runs_on_device
    assert found["dev_ptr"].params == ("v",) and (found["dev_ptr"].start_line, found["dev_ptr"].end_line) == (8, 8)


MIXED = """#include <cstdio>
#include <cuda_runtime.h>

__global__ void scale(float *v, float s, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) v[i] *= s;
}

float host_mean(const float *v, int n)
{
    float total = 0.0f;
    for (int i = 0; i < n; ++i) total += v[i] / n;
    return total;
}
"""


@pytest.mark.skipif(not HAVE_CLANG or not hasattr(__import__("ccls.frontends.c_family", fromlist=["x"]),
                                                  "analyze_with_clang"),
                    reason="clang or the C-family front end's analyze_with_clang is not available")
def test_host_code_goes_through_the_c_family_front_end(tmp_path):
    path = tmp_path / "mixed.cu"
    result = analyze_cuda(SourceFile(str(path), MIXED), AnalysisOptions())
    assert result.errors == []
    by_name = {fn.display_name: fn for fn in result.functions}
    assert by_name["scale"].arch == "nvptx-sm80"
    host = by_name["host_mean"]
    assert host.arch == "x86_64" and host.language == "cuda"
    assert "fp_div" in {i.cls.split(".")[0] for b in host.blocks for i in b.instructions}
    assert not any("__device_stub__" in fn.name for fn in result.functions)
    # The stub headers' temporary folder is named by what it is: the same source, the same flags.
    again = {fn.display_name: fn for fn in analyze_cuda(SourceFile(str(path), MIXED), AnalysisOptions()).functions}
    assert "<ccls stub headers>" in host.compile_flags and again["host_mean"].compile_flags == host.compile_flags


def test_registered_for_cu_and_cuh():
    assert frontend_for("/src/kernels.cu") == ("cuda", analyze_cuda)
    assert frontend_for("/src/kernels.CUH") == ("cuda", analyze_cuda)


@pytest.mark.skipif(not HAVE_NVCC, reason="nvcc (CUDA toolkit) not installed")
def test_buffer_text_is_compiled_not_the_file_on_disk(tmp_path):
    path = tmp_path / "saxpy.cu"
    shutil.copy(os.path.join(EXAMPLES, "saxpy.cu"), path)
    edited = path.read_text().replace("a * x[i] + y[i]", "a * x[i] / y[i]")
    result = analyze_cuda_with(SourceFile(str(path), edited), AnalysisOptions(), "nvcc")
    (fn,) = result.functions
    assert "fp_div.f32" in loop_classes(fn)
    assert sorted(os.listdir(tmp_path)) == ["saxpy.cu"]


def test_unknown_gpu_arch_falls_back_to_sm80_with_a_note():
    if not (HAVE_NVCC or HAVE_CLANG):
        pytest.skip("no CUDA compiler installed")
    result = analyze_cuda(example("saxpy.cu"), AnalysisOptions(gpu_arch="nvptx-sm75"))
    (fn,) = result.functions
    assert fn.arch == "nvptx-sm80" and "nvptx-sm75" in fn.assumptions[0]


# --- launches: `kernel<<<grid, block>>>` in the same file ------------------------------------------

LAUNCHES = """#define BLOCK 256
constexpr int kGrid = 2 * 32;
__global__ void saxpy(int n, float a, const float *x, float *y)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        y[i] = a * x[i] + y[i];
}
namespace ns { template <typename T> __global__ void fill(T *p, int n) { p[threadIdx.x] = n; } }

void run(int n, float *x, float *y, int *p, cudaStream_t stream)
{
    dim3 tile(16, 16);
    saxpy<<<kGrid, BLOCK>>>(n, 2.0f, x, y);
    saxpy<<<(n + BLOCK - 1) / BLOCK, BLOCK, 0, stream>>>(n, 2.0f, x, y);
    ns::fill<int><<<dim3(4, 2), tile>>>(p, n);
    ns::fill<int><<<1, 1 << 10>>>(p, n);
}
"""


def test_launch_sizes_are_read_where_they_are_integer_constants():
    launches = kernel_launches(LAUNCHES)
    assert [(l.line, l.config, l.grid, l.block, l.threads) for l in launches["saxpy"]] == [
        (13, "<<<kGrid, BLOCK>>>", (64, 1, 1), (256, 1, 1), 16384),
        (14, "<<<(n + BLOCK - 1) / BLOCK, BLOCK>>>", (None, None, None), (256, 1, 1), None)]
    assert [(l.grid, l.block, l.threads) for l in launches["fill"]] == [
        ((4, 2, 1), (16, 16, 1), 2048), ((1, 1, 1), (1024, 1, 1), 1024)]
    assert launches["saxpy"][0].special_values() == {"%nctaid.x": 64, "%nctaid.y": 1, "%nctaid.z": 1,
                                                     "%ntid.x": 256, "%ntid.y": 1, "%ntid.z": 1}
    assert kernel_launches("__global__ void k() {}") == {}


@pytest.mark.parametrize("compiler", COMPILERS)
def test_a_visible_launch_gives_the_per_thread_share_and_the_launch_size(compiler, tmp_path):
    text = LAUNCHES.replace("    saxpy<<<(n + BLOCK - 1) / BLOCK, BLOCK, 0, stream>>>(n, 2.0f, x, y);\n", "")
    result = analyze_cuda_with(SourceFile(str(tmp_path / "launch.cu"), text), AnalysisOptions(), compiler)
    saxpy = next(fn for fn in result.functions if fn.display_name == "saxpy")
    (loop,) = saxpy.loops.values()
    assert (loop.trip_count.kind, loop.trip_count.iterations) == ("symbolic", n * Fraction(1, 16384))
    assert saxpy.assumptions[1].endswith("launched as <<<kGrid, BLOCK>>> at line 13: 16384 threads, so one "
                                         "launch costs 16384 × these figures")


# Issue 17, defect 11 (../shared/repro/real-code/cg_host.cu): a host pass that fails inside an
# included header showed only "In file included from cg_host.cu:2:". clang-19's own words:
CG_HOST_STDERR = """In file included from cg_host.cu:2:
In file included from /usr/local/cuda/include/cooperative_groups.h:55:
/usr/local/cuda/include/cooperative_groups/details/info.h:167:12: fatal error: 'cuda/std/type_traits' file not found
  167 | #  include <cuda/std/type_traits>
      |            ^~~~~~~~~~~~~~~~~~~~~~
1 error generated when compiling for host.
"""


def test_the_first_error_leads_the_message_with_its_file_line_excerpt_and_include_chain():
    from ccls.frontends.compiler_errors import first_error
    line, message = first_error(CG_HOST_STDERR, "cg_host.cu")
    lines = message.splitlines()
    assert lines[0] == ("/usr/local/cuda/include/cooperative_groups/details/info.h:167:12: fatal error: "
                        "'cuda/std/type_traits' file not found")
    assert "#  include <cuda/std/type_traits>" in lines[1]
    assert lines[-2:] == ["  included from /usr/local/cuda/include/cooperative_groups.h:55",
                          "  included from cg_host.cu:2"]
    assert line == 2  # the user's #include that leads to it
    assert "1 error generated" not in message


def test_nvcc_errors_and_output_without_an_error_line():
    from ccls.frontends.compiler_errors import first_error
    nvcc = ('k.cu(4): error: identifier "undefined_thing" is undefined\n'
            "        a[i] = undefined_thing + 1;\n               ^\n\n1 error detected in the compilation of \"k.cu\".\n")
    line, message = first_error(nvcc, "/tmp/w/k.cu", "nvcc")
    assert line == 4 and message.splitlines()[0] == 'k.cu(4): error: identifier "undefined_thing" is undefined'
    assert "detected in the compilation" not in message
    assert first_error("Segmentation fault\n", "k.cu", "nvcc") == (None, "nvcc failed: Segmentation fault")
    assert first_error("", "k.cu", "nvcc") == (None, "nvcc failed without a message")


HOST_ONLY_HEADER = """#ifndef __CUDA_ARCH__
#include "ccls_missing_host_header.h"
#endif
"""
INCLUDES_IT = """#include <cstdio>
#include "host_side.h"
__global__ void scale(float *x, int n) { int i = threadIdx.x; if (i < n) x[i] *= 2.0f; }
void launch(float *x, int n) { scale<<<1, 256>>>(x, n); }
"""


@pytest.mark.parametrize("compiler", COMPILERS)
def test_a_host_pass_failing_in_a_header_shows_the_error_line_first(compiler, tmp_path):
    (tmp_path / "host_side.h").write_text(HOST_ONLY_HEADER)
    path = tmp_path / "uses.cu"
    result = analyze_cuda_with(SourceFile(str(path), INCLUDES_IT), AnalysisOptions(extra_flags=(f"-I{tmp_path}",)),
                               compiler)
    [error] = [e for e in result.errors if "ccls_missing_host_header" in e.message]
    first = error.message.splitlines()[0]
    assert "host_side.h:2:" in first and "error:" in first and "In file included" not in first
    assert (error.file, error.line) == (str(path), 2)


def test_cccl_headers_are_found_where_nvcc_finds_them(monkeypatch, tmp_path):
    cccl = tmp_path / "targets" / "x86_64-linux" / "include" / "cccl"
    cccl.mkdir(parents=True)
    monkeypatch.setenv("CUDA_HOME", str(tmp_path))
    assert _cccl_includes() == ["-isystem", str(cccl)]

