"""Python front end: ``compile()`` the buffer (never run it) and read each function's bytecode."""
from __future__ import annotations

from ccls.frontends import FrontendResult, SourceFile
from ccls.model import AnalysisError
from ccls.options import AnalysisOptions
from ccls.readers.python_bytecode import read_module_and_calls
from ccls.readers.python_calls import module_calls


def analyse_python(source: SourceFile, options: AnalysisOptions) -> FrontendResult:
    """Functions of a Python file as `FunctionIR`s, and what its calls to its own functions pass
    (sizes for `ccls.sizes`); syntax errors come back as `AnalysisError`s."""
    read = read_module_and_calls(source.text, source.path, options.default_trip_count, options.early_exit)
    calls, errors = None, list(read.errors)
    if read.functions:
        try:
            calls = module_calls(read, source.path, source.text)
        except Exception as e:  # noqa: BLE001 — a reader bug must not cost the file its counts
            errors.append(AnalysisError(source.path, None, f"internal error reading the call sites: "
                                                           f"{type(e).__name__}: {e}"))
    return FrontendResult(functions=read.functions, errors=errors, calls=calls)
