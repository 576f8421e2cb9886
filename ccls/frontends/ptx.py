"""PTX files (.ptx): read as they are; instruction lines are the PTX file's own lines."""
from __future__ import annotations

import re

from ccls import toolchain
from ccls.frontends import FrontendResult, SourceFile
from ccls.frontends.c_family import without_parameters
from ccls.model import AnalysisError
from ccls.options import AnalysisOptions
from ccls.readers.ptx import read_ptx

_DEMANGLE_TIMEOUT_S = 10.0
_DEMANGLE_MEMORY_MB = 512


def analyze_ptx(source: SourceFile, options: AnalysisOptions) -> FrontendResult:
    names = _ptx_function_names(source.text)
    try:
        functions, errors = read_ptx(source.text, source.path, "ptx", options.default_trip_count,
                                     display_names=demangled_names(names), early_exit=options.early_exit)
    except Exception as problem:  # noqa: BLE001 - a reader bug must not take the server down
        return FrontendResult(errors=[internal_error(source.path, problem)])
    return FrontendResult(functions=functions, errors=errors)


def _ptx_function_names(text: str) -> list[str]:
    return re.findall(r"\.(?:entry|func)\s+(?:\([^)]*\)\s*)?([A-Za-z_$][\w$]*)", text)


def demangled_names(mangled: list[str]) -> dict[str, str]:
    """`_Z5saxpyifPKfPf` → `saxpy` (qualified, without the parameter list) with llvm-cxxfilt.
    Empty when the tool is missing or fails: callers fall back to the reader's own demangling."""
    wanted = sorted({name for name in mangled if name.startswith("_Z")})
    tool = toolchain.find_tool("llvm-cxxfilt")
    if not wanted or tool is None:
        return {}
    try:
        result = toolchain.run_tool([tool], input="\n".join(wanted) + "\n", timeout_s=_DEMANGLE_TIMEOUT_S,
                                    memory_mb=_DEMANGLE_MEMORY_MB)
    except (toolchain.ToolTimeout, toolchain.ToolMissing, OSError):
        return {}
    lines = result.stdout.splitlines()
    if result.returncode != 0 or len(lines) != len(wanted):
        return {}
    return {name: without_parameters(full) for name, full in zip(wanted, lines) if full != name}


def internal_error(path: str, problem: Exception) -> AnalysisError:
    """A reader bug, reported against the file instead of as a traceback."""
    return AnalysisError(path, None, f"ccls could not read the PTX ({type(problem).__name__}: {problem}); "
                                     "please report this with the file")
