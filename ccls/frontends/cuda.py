"""CUDA (.cu, .cuh). Device code → PTX with nvcc when installed, else clang's CUDA device-only
mode (never both), read by the PTX reader; host code → the C-family front end with clang's
--cuda-host-only. The buffer is compiled from a private temp dir; nothing is written next to it.
Kernel launches in the file (`kernel<<<grid, block>>>`) give the reader launch sizes: GPU costs
are per thread, and a launch multiplies them by its thread count.
"""
from __future__ import annotations

import os
import re
import tempfile
from dataclasses import dataclass
from typing import Iterator

from ccls import compile_db, toolchain
from ccls.frontends import FrontendResult, SourceFile
from ccls.frontends.compiler_errors import first_error
from ccls.frontends.ptx import demangled_names, internal_error
from ccls.model import AnalysisError, FunctionIR
from ccls.options import AnalysisOptions
from ccls.readers.ptx import Launch, demangle_simple, read_ptx
from ccls.targets import GPU_TARGETS

_SM_FOR_ARCH = GPU_TARGETS
_INSTALL_HINT = ("no CUDA compiler found: install the CUDA toolkit (nvcc, "
                 "https://developer.nvidia.com/cuda-downloads) or clang (`apt-get install clang-19`)")

# Headers that clang's CUDA wrapper still includes but CUDA 13 no longer ships (texture fetch
# functions were removed in CUDA 12) or that belong to an optional library (cuRAND). Empty
# stand-ins, searched last (-idirafter), so a real header always wins.
_STUB_HEADERS = ("texture_fetch_functions.h", "curand_mtgp32_kernel.h")

# Without any CUDA installation clang can still compile self-contained kernels: declare the
# execution-space attributes, the built-in variables and a few device math functions (as the
# NVPTX builtins they lower to) ourselves. Used only when clang reports no CUDA installation.
_PRELUDE = """\
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __host__ __attribute__((host))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
#define __managed__ __attribute__((managed))
#define __launch_bounds__(...) __attribute__((launch_bounds(__VA_ARGS__)))
#define __forceinline__ __inline__ __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#include <__clang_cuda_builtin_vars.h>
#define CCLS_DEV static __device__ __forceinline__
CCLS_DEV float sqrtf(float x) { return __builtin_sqrtf(x); }
CCLS_DEV double sqrt(double x) { return __builtin_sqrt(x); }
CCLS_DEV float fabsf(float x) { return __builtin_fabsf(x); }
CCLS_DEV float fminf(float x, float y) { return __builtin_fminf(x, y); }
CCLS_DEV float fmaxf(float x, float y) { return __builtin_fmaxf(x, y); }
CCLS_DEV float fmaf(float x, float y, float z) { return __builtin_fmaf(x, y, z); }
CCLS_DEV float rsqrtf(float x) { return __nvvm_rsqrt_approx_f(x); }
CCLS_DEV float __fdividef(float x, float y) { return __nvvm_div_approx_f(x, y); }
CCLS_DEV float __expf(float x) { return __nvvm_ex2_approx_f(x * 1.4426950408889634f); }
CCLS_DEV float atomicAdd(float *p, float v) { return __nvvm_atom_add_gen_f(p, v); }
CCLS_DEV int atomicAdd(int *p, int v) { return __nvvm_atom_add_gen_i(p, v); }
CCLS_DEV unsigned atomicAdd(unsigned *p, unsigned v) { return (unsigned)__nvvm_atom_add_gen_i((int *)p, (int)v); }
#undef CCLS_DEV
"""
_PRELUDE_NAME = "ccls_cuda_prelude.h"

# CUDA 12+ ships libcu++/CUB/Thrust under `include/cccl`, which nvcc adds by itself
# (`SYSTEM_INCLUDES += -isystem $(TOP)/$(_TARGET_DIR_)/include/cccl` in bin/nvcc.profile) and clang-19
# does not know of: `cooperative_groups.h` includes `<cuda/std/type_traits>` from there.
_CCCL_DIRS = ("targets/x86_64-linux/include/cccl", "targets/sbsa-linux/include/cccl", "include/cccl")


def _cccl_includes() -> list[str]:
    """`-isystem` for the CUDA installation's CCCL headers, as nvcc passes them (none if absent).
    The installation is looked for where clang looks (CUDA_HOME/CUDA_PATH, /usr/local/cuda) and
    beside the nvcc on PATH."""
    nvcc = toolchain.find_tool("nvcc")
    roots = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda",
             os.path.dirname(os.path.dirname(os.path.realpath(nvcc))) if nvcc else None]
    for root in filter(None, roots):
        for relative in _CCCL_DIRS:
            if os.path.isdir(os.path.join(root, relative)):
                return ["-isystem", os.path.join(root, relative)]
    return []


# Flags from a compile database that mean the same to nvcc and clang (preprocessor, language).
_PORTABLE_PREFIXES = ("-I", "-D", "-U", "-isystem", "-iquote", "-std=")


def analyze_cuda(source: SourceFile, options: AnalysisOptions) -> FrontendResult:
    return analyze_cuda_with(source, options)


def analyze_cuda_with(source: SourceFile, options: AnalysisOptions, compiler: str = "auto") -> FrontendResult:
    """`compiler`: "auto" (nvcc if installed, else clang), "nvcc" or "clang" (tests pick one)."""
    result = FrontendResult()
    kernels = cuda_functions(source.text)
    if kernels is None:
        result.errors.append(AnalysisError(source.path, None, "tree-sitter-cuda is not installed: parameter names "
                                           "are param_<i> and host code is not analysed (pip install tree-sitter-cuda)"))
    with tempfile.TemporaryDirectory(prefix="ccls-cuda-") as work:
        compiled = _compile_device(source, options, compiler, work)
        if isinstance(compiled, AnalysisError):
            result.errors.append(compiled)
        else:
            try:
                functions, errors = _read_device(compiled, source, options, kernels or [])
            except Exception as problem:  # noqa: BLE001 - a reader bug must not take the server down
                functions, errors = [], [internal_error(source.path, problem)]
            result.functions.extend(functions)
            result.errors.extend(errors)
        if kernels and any(k.runs_on_host for k in kernels):
            host = _analyze_host(source, options, work, compiled)
            result.functions.extend(host.functions)
            result.errors.extend(host.errors)
    return result


# --- device code ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Compiled:
    ptx: str
    buffer_path: str
    note: str  # how it was compiled, for every function's assumptions
    mode: str  # "nvcc" | "clang" | "clang-prelude"


def _buffer(source: SourceFile, work: str) -> str:
    path = os.path.join(work, os.path.basename(source.path) or "buffer.cu")
    with open(path, "w", encoding="utf-8", errors="surrogateescape") as handle:
        handle.write(source.text)
    return path


def _portable_flags(source: SourceFile, options: AnalysisOptions) -> list[str]:
    flags = compile_db.flags_for(source.path, language="cuda", override=options.flags_override,
                                 extra=options.extra_flags, query_driver=options.query_driver).flags
    kept: list[str] = []
    i = 0
    while i < len(flags):
        flag = flags[i]
        if flag in ("-I", "-D", "-U", "-isystem", "-iquote") and i + 1 < len(flags):
            kept += [flag, flags[i + 1]]
            i += 2
            continue
        if flag.startswith(_PORTABLE_PREFIXES):
            kept.append(flag)
        i += 1
    return kept


def _compile_device(source: SourceFile, options: AnalysisOptions, compiler: str, work: str) -> _Compiled | AnalysisError:
    sm = _SM_FOR_ARCH.get(options.gpu_arch, "sm_80")
    buffer_path = _buffer(source, work)
    out_path = os.path.join(work, "device.ptx")
    source_dir = os.path.dirname(os.path.abspath(source.path))
    flags = _portable_flags(source, options) + [f"-I{source_dir}"]
    nvcc = toolchain.find_tool("nvcc") if compiler in ("auto", "nvcc") else None
    clang = toolchain.find_tool("clang") if compiler in ("auto", "clang") and nvcc is None else None
    if compiler == "nvcc" and nvcc is None:
        return AnalysisError(source.path, None, f"nvcc not found: {toolchain.install_hint('nvcc')}")
    if nvcc is None and clang is None:
        return AnalysisError(source.path, None, _INSTALL_HINT)
    try:
        if nvcc is not None:
            argv = [nvcc, "-x", "cu", "-ptx", f"-arch={sm}", "-lineinfo", "-O3", *flags, "-o", out_path, buffer_path]
            run = toolchain.run_tool(argv, timeout_s=options.compile_timeout_s, memory_mb=options.compile_memory_mb,
                                     cwd=work)
            if run.returncode != 0:
                return _compile_error(run.stderr, source, buffer_path, "nvcc")
            version = toolchain.tool_version("nvcc")
            note = f"device code compiled by nvcc ({version or nvcc}) for {sm} at -O3"
            mode = "nvcc"
        else:
            assert clang is not None
            mode, run = _clang_device(clang, sm, flags, source, options, work, buffer_path, out_path)
            if run.returncode != 0:
                return _compile_error(run.stderr, source, buffer_path, "clang")
            version = toolchain.tool_version("clang")
            note = f"device code compiled by {version or clang} (CUDA device-only) for {sm} at {options.optimization}"
            if mode == "clang-prelude":
                note += "; no CUDA installation found, so CUDA headers were replaced by a minimal prelude"
    except toolchain.ToolLimit as problem:
        return AnalysisError(source.path, None, str(problem))
    except toolchain.ToolMissing as problem:
        return AnalysisError(source.path, None, str(problem))
    if options.gpu_arch not in _SM_FOR_ARCH:
        note += f"; gpu_arch {options.gpu_arch!r} unknown, compiled for {sm}"
    with open(out_path, encoding="utf-8", errors="replace") as handle:
        return _Compiled(handle.read(), buffer_path, note, mode)


def _clang_device(clang: str, sm: str, flags: list[str], source: SourceFile, options: AnalysisOptions,
                  work: str, buffer_path: str, out_path: str) -> tuple[str, toolchain.ToolResult]:
    stub_dir = _stub_headers(work)
    base = [clang, "-x", "cuda", "--cuda-device-only", f"--cuda-gpu-arch={sm}", "-S", options.optimization,
            "-gline-tables-only", "-Wno-unknown-cuda-version", "-idirafter", stub_dir, *flags, *_cccl_includes()]
    attempts = [("clang", []), ("clang", ["-nocudalib"]),
                ("clang-prelude", ["-nocudainc", "-nocudalib", "-include", _prelude(work)])]
    run: toolchain.ToolResult | None = None
    for mode, extra in attempts:
        run = toolchain.run_tool(base + extra + ["-o", out_path, buffer_path], timeout_s=options.compile_timeout_s,
                                 memory_mb=options.compile_memory_mb, cwd=work)
        if run.returncode == 0:
            return mode, run
        # Retry only for a missing CUDA installation or libdevice, not for errors in the code.
        if "cannot find libdevice" in run.stderr and extra == []:
            continue
        if "cannot find CUDA installation" in run.stderr:
            continue
        return mode, run
    assert run is not None
    return "clang-prelude", run


_STUBS_AS_FLAG = "<ccls stub headers>"  # the folder `_stub_headers` writes, as compile flags name it


def _stub_headers(work: str) -> str:
    stub_dir = os.path.join(work, "stub-include")
    os.makedirs(stub_dir, exist_ok=True)
    for name in _STUB_HEADERS:
        with open(os.path.join(stub_dir, name), "w", encoding="utf-8") as handle:
            handle.write("/* ccls: empty stand-in for a header this CUDA installation lacks */\n")
    return stub_dir


def _prelude(work: str) -> str:
    path = os.path.join(work, _PRELUDE_NAME)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(_PRELUDE)
    return path


def _compile_error(stderr: str, source: SourceFile, buffer_path: str, tool: str) -> AnalysisError:
    first = first_error(stderr.replace(os.path.join(os.path.dirname(buffer_path), ""), ""), buffer_path, tool)
    message = first.message if first.message.startswith(f"{tool} failed") else f"{tool}: {first.message}"
    return AnalysisError(source.path, first.line, message)


def _read_device(compiled: _Compiled, source: SourceFile, options: AnalysisOptions,
                 kernels: list["CudaFunction"]) -> tuple[list[FunctionIR], list[AnalysisError]]:
    loc_files = {compiled.buffer_path, os.path.realpath(compiled.buffer_path)}
    ptx_names = re.findall(r"\.(?:entry|func)\s+(?:\([^)]*\)\s*)?([A-Za-z_$][\w$]*)\s*\(", compiled.ptx)
    display = demangled_names(ptx_names)
    functions, errors = read_ptx(compiled.ptx, source.path, "cuda", options.default_trip_count,
                                 loc_files=loc_files, display_names=display, early_exit=options.early_exit)
    matches = {fn.name: k for fn in functions if (k := _match(fn, kernels)) is not None}
    params = {name: list(k.params) for name, k in matches.items()}
    if params:  # read again: trip counts symbolic in the source's parameter names, launch sizes known
        by_kernel = kernel_launches(source.text)
        launches = {name: by_kernel[k.name] for name, k in matches.items() if k.name in by_kernel}
        functions, errors = read_ptx(compiled.ptx, source.path, "cuda", options.default_trip_count,
                                     loc_files=loc_files, parameter_names=params, display_names=display,
                                     launches=launches, early_exit=options.early_exit)
    for fn in functions:
        fn.assumptions.insert(0, compiled.note)
        kernel = matches.get(fn.name)
        if kernel is not None:
            fn.line, fn.end_line = kernel.start_line, kernel.end_line
    return functions, errors


def _match(fn: FunctionIR, kernels: list["CudaFunction"]) -> "CudaFunction | None":
    """The source definition of a PTX function: same name and parameter count; among overloads,
    the one whose lines contain the function's code."""
    short = _short_name(fn.display_name if fn.display_name != fn.name else demangle_simple(fn.name))
    found = [k for k in kernels if k.name == short and len(k.params) == len(fn.parameters) and k.runs_on_device]
    if len(found) > 1 and fn.line is not None:
        found = [k for k in found if k.start_line <= fn.line <= k.end_line]
    return found[0] if len(found) == 1 else None


def _short_name(name: str) -> str:
    """`ns::kernel<float>` → `kernel`."""
    depth, cut = 0, len(name)
    for index, char in enumerate(name):  # drop template arguments
        if char == "<":
            if depth == 0:
                cut = min(cut, index)
            depth += 1
        elif char == ">":
            depth -= 1
    return name[:cut].split("::")[-1].strip()


# --- source map: kernel signatures from tree-sitter ---------------------------------------------

@dataclass(frozen=True)
class CudaFunction:
    name: str  # unqualified, as written
    params: tuple[str, ...]  # parameter names in order (unnamed ones as param_<i>)
    start_line: int  # 1-based
    end_line: int
    qualifiers: frozenset[str]  # "__global__", "__device__", "__host__"

    @property
    def runs_on_device(self) -> bool:
        return bool(self.qualifiers & {"__global__", "__device__"})

    @property
    def runs_on_host(self) -> bool:
        return "__host__" in self.qualifiers or not self.qualifiers & {"__global__", "__device__"}


def cuda_functions(text: str) -> list[CudaFunction] | None:
    """Every function definition in CUDA source, with its parameter names and CUDA qualifiers;
    None when the tree-sitter CUDA grammar is not installed."""
    root = _syntax_tree(text)
    if root is None:
        return None
    return [fn for node in _nodes(root, "function_definition") if (fn := _function(node)) is not None]


def _syntax_tree(text: str):  # -> tree_sitter.Node | None
    try:
        from ccls import source_map
    except ImportError:
        return None
    return source_map.parse(text.encode("utf-8", errors="surrogateescape"), "cuda").root_node


def _nodes(root, node_type: str) -> Iterator:  # tree_sitter.Node
    """Nodes of one type, in source order."""
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == node_type:
            yield node
        stack.extend(reversed(node.children))


def _function(node) -> CudaFunction | None:  # node: tree_sitter.Node
    declarator = node.child_by_field_name("declarator")
    while declarator is not None and declarator.type != "function_declarator":
        declarator = declarator.child_by_field_name("declarator")  # through `T *f(...)`, `T &f(...)`
    if declarator is None:
        return None
    name_node = declarator.child_by_field_name("declarator")
    if name_node is None:
        return None
    name = re.split(r"::", _text(name_node))[-1]
    name = re.sub(r"<.*$", "", name).strip()
    params: list[str] = []
    plist = declarator.child_by_field_name("parameters")
    for index, param in enumerate(c for c in (plist.named_children if plist else [])
                                  if c.type in ("parameter_declaration", "optional_parameter_declaration")):
        params.append(_parameter_name(param) or f"param_{index}")
    if len(params) == 1 and plist is not None and _text(plist).replace(" ", "") == "(void)":
        params = []
    qualifiers = frozenset(c.type for c in node.children if c.type in ("__global__", "__device__", "__host__"))
    return CudaFunction(name, tuple(params), node.start_point[0] + 1, node.end_point[0] + 1, qualifiers)


def _parameter_name(param) -> str | None:
    stack = [param.child_by_field_name("declarator")]
    while stack:
        node = stack.pop()
        if node is None:
            continue
        if node.type == "identifier":
            return _text(node)
        if node.type in ("parameter_list", "template_argument_list"):
            continue  # a function pointer's own parameters
        stack.extend(reversed([c for c in node.named_children if c != node.child_by_field_name("size")]))
    return None


def _text(node) -> str:
    return node.text.decode("utf-8", errors="replace") if node.text is not None else ""


# --- kernel launches: `kernel<<<grid, block>>>(…)` ----------------------------------------------

def kernel_launches(text: str) -> dict[str, list[Launch]]:
    """Launches in CUDA source by kernel name (unqualified, without template arguments), with
    their sizes where they are integer constants: literals, constant arithmetic, `dim3(…)`,
    and names bound to those by `#define`, `const`/`constexpr` or a `dim3` declaration."""
    root = _syntax_tree(text)
    if root is None:
        return {}
    constants = _named_constants(root)
    found: dict[str, list[Launch]] = {}
    for call in _nodes(root, "call_expression"):
        config = next((c for c in call.children if c.type == "kernel_call_syntax"), None)
        callee = call.child_by_field_name("function")
        if config is None or callee is None:
            continue
        args = [c for c in config.named_children if c.type != "comment"]
        if len(args) < 2:
            continue
        grid, block = (_dim3(a, constants) for a in args[:2])
        found.setdefault(_short_name(_text(callee)), []).append(
            Launch(call.start_point[0] + 1, _text(args[0]), _text(args[1]), grid, block))
    return found


_Dims = tuple[int | None, int | None, int | None]
_UNKNOWN_DIMS: _Dims = (None, None, None)


def _named_constants(root) -> dict[str, _Dims]:
    """Names whose value is a constant size: `#define B 256`, `const int t = 256;`,
    `dim3 block(16, 16);` (a name bound twice is dropped: its value depends on where it is used)."""
    values: dict[str, _Dims] = {}
    seen: set[str] = set()

    def bind(name: str, dims: _Dims) -> None:
        values[name] = dims if name not in seen and dims[0] is not None else _UNKNOWN_DIMS
        seen.add(name)

    for node in _nodes(root, "preproc_def"):
        name, value = node.child_by_field_name("name"), node.child_by_field_name("value")
        if name is not None and value is not None:
            bind(_text(name), _literal_dims(_text(value).strip()))
    for node in _nodes(root, "declaration"):
        words = {_text(c) for c in node.children if c.type in ("type_qualifier", "type_identifier")}
        if not words & {"const", "constexpr", "dim3"}:
            continue
        for decl in node.children_by_field_name("declarator"):
            if decl.type != "init_declarator":
                continue
            name, value = decl.child_by_field_name("declarator"), decl.child_by_field_name("value")
            if name is None or value is None:
                continue
            if value.type in ("argument_list", "initializer_list"):  # dim3 b(16, 16); dim3 b{16, 16};
                bind(_text(name), _dims([_integer(a, values) for a in value.named_children]))
            else:
                bind(_text(name), _dim3(value, values))
    return values


def _literal_dims(text: str) -> _Dims:
    value = int(text.rstrip("uUlL"), 0) if re.fullmatch(r"(0[xX][0-9a-fA-F]+|[1-9]\d*|0)[uUlL]*", text) else None
    return (value, 1, 1) if value is not None else _UNKNOWN_DIMS


def _dim3(node, constants: dict[str, _Dims]) -> _Dims:
    """A launch size: an integer (x only) or `dim3(x, y, z)`; None where not constant."""
    if node.type == "call_expression" and _text(node.child_by_field_name("function")) == "dim3":
        arguments = node.child_by_field_name("arguments")
        return _dims([_integer(a, constants) for a in (arguments.named_children if arguments else [])])
    if node.type == "identifier" and _text(node) in constants:
        return constants[_text(node)]
    return _dims([_integer(node, constants)])


def _dims(values: list[int | None]) -> _Dims:
    if not 1 <= len(values) <= 3 or any(v is None or v <= 0 for v in values):
        return _UNKNOWN_DIMS
    padded = values + [1] * (3 - len(values))
    return padded[0], padded[1], padded[2]


_INTEGER_OPS = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
                "/": lambda a, b: int(a / b) if b else None, "%": lambda a, b: a % b if b else None,
                "<<": lambda a, b: a << b if 0 <= b < 63 else None, ">>": lambda a, b: a >> b if 0 <= b < 63 else None}


def _integer(node, constants: dict[str, _Dims]) -> int | None:
    """Value of a constant integer expression (C semantics for / and %), else None."""
    if node.type == "number_literal":
        return _literal_dims(_text(node))[0]
    if node.type == "parenthesized_expression" and node.named_child_count == 1:
        return _integer(node.named_children[0], constants)
    if node.type == "identifier":
        dims = constants.get(_text(node), _UNKNOWN_DIMS)
        return dims[0] if dims[1:] == (1, 1) else None
    if node.type == "binary_expression":
        op = node.child_by_field_name("operator")
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        if op is None or left is None or right is None or _text(op) not in _INTEGER_OPS:
            return None
        a, b = _integer(left, constants), _integer(right, constants)
        return _INTEGER_OPS[_text(op)](a, b) if a is not None and b is not None else None
    return None


# --- host code -----------------------------------------------------------------------------------

_HOST_ONLY_NAMES = re.compile(r"__device_stub__|^__cuda_|^__nv_|^_GLOBAL__")


def _analyze_host(source: SourceFile, options: AnalysisOptions, work: str,
                  device: _Compiled | AnalysisError) -> FrontendResult:
    """Host functions through the C-family front end (clang --cuda-host-only)."""
    try:
        from ccls.frontends.c_family import analyze_with_clang
    except ImportError:
        return FrontendResult()  # the C-family front end is not installed in this build
    if isinstance(device, _Compiled) and device.mode == "clang-prelude":
        return FrontendResult(errors=[AnalysisError(
            source.path, None, "host code not analysed: clang found no CUDA installation "
                               "(install the CUDA toolkit to analyse host code in .cu files)")])
    stub_dir = _stub_headers(work)
    flags = ["--cuda-host-only", "-nocudalib", "-Wno-unknown-cuda-version", "-idirafter", stub_dir, *_cccl_includes()]
    host = analyze_with_clang(source, options, "cuda", flags)
    host.functions = [fn for fn in host.functions if not _HOST_ONLY_NAMES.search(fn.name)]
    for fn in host.functions:  # the stubs' folder is temporary: reported by what it is, so outputs repeat
        fn.compile_flags = tuple(_STUBS_AS_FLAG if flag == stub_dir else flag for flag in fn.compile_flags)
    return host
