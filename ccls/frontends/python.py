"""Python front end: ``compile()`` the buffer (never run it) and read each function's bytecode."""
from __future__ import annotations

from ccls.frontends import FrontendResult, SourceFile
from ccls.options import AnalysisOptions
from ccls.readers.python_bytecode import read_module


def analyse_python(source: SourceFile, options: AnalysisOptions) -> FrontendResult:
    """Functions of a Python file as `FunctionIR`; syntax errors come back as `AnalysisError`s."""
    functions, errors = read_module(source.text, source.path, options.default_trip_count, options.early_exit)
    return FrontendResult(functions=functions, errors=errors)
