"""Python front end: ``compile()`` the buffer (never run it) and read each function's bytecode."""
from __future__ import annotations

from ccls.frontends import FrontendResult, SourceFile
from ccls.options import AnalysisOptions
from ccls.readers.python_bytecode import read_module_and_calls
from ccls.readers.python_calls import module_calls


def analyse_python(source: SourceFile, options: AnalysisOptions) -> FrontendResult:
    """Functions of a Python file as `FunctionIR`s, and what its calls to its own functions pass
    (sizes for `ccls.sizes`); syntax errors come back as `AnalysisError`s."""
    read = read_module_and_calls(source.text, source.path, options.default_trip_count, options.early_exit)
    calls = module_calls(read, source.path, source.text) if read.functions else None
    return FrontendResult(functions=read.functions, errors=read.errors, calls=calls)
