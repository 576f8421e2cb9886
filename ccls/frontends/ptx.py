"""PTX files (.ptx): read as they are; instruction lines are the PTX file's own lines."""
from __future__ import annotations

import re

from ccls.frontends import FrontendResult, SourceFile
from ccls.demangle import demangled_names  # noqa: F401 - the CUDA frontend imports it from here
from ccls.model import AnalysisError
from ccls.options import AnalysisOptions
from ccls.readers.ptx import read_ptx


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


def internal_error(path: str, problem: Exception) -> AnalysisError:
    """A reader bug, reported against the file instead of as a traceback."""
    return AnalysisError(path, None, f"ccls could not read the PTX ({type(problem).__name__}: {problem}); "
                                     "please report this with the file")
