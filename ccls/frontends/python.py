"""Python front end: ``compile()`` the buffer (never run it) and read each function's bytecode."""
from __future__ import annotations

from dataclasses import replace

from ccls.frontends import FrontendResult, SourceFile
from ccls.model import AnalysisError, FunctionIR
from ccls.options import AnalysisOptions
from ccls.readers.python_bytecode import read_module_and_calls
from ccls.readers.python_calls import module_calls_and_targets


def analyse_python(source: SourceFile, options: AnalysisOptions) -> FrontendResult:
    """Functions of a Python file as `FunctionIR`s, and what its calls to its own functions pass
    (sizes for `ccls.sizes`); syntax errors come back as `AnalysisError`s."""
    read = read_module_and_calls(source.text, source.path, options.default_trip_count, options.early_exit)
    calls, errors, functions = None, list(read.errors), read.functions
    if read.functions:
        try:
            calls, targets, guessed = module_calls_and_targets(read, source.path, source.text)
            functions = [_renamed_calls(fn, targets.get(fn.name, {})) for fn in functions]
            for fn in functions:
                fn.assumptions.extend(_size_notes(fn, guessed.get(fn.name, ()), options))
        except Exception as e:  # noqa: BLE001 — a reader bug must not cost the file its counts
            errors.append(AnalysisError(source.path, None, f"internal error reading the call sites: "
                                                           f"{type(e).__name__}: {e}"))
    return FrontendResult(functions=functions, errors=errors, calls=calls)


def _renamed_calls(fn: FunctionIR, targets: dict[str, str]) -> FunctionIR:
    """``fn`` with each call named by the module function it reaches (``self.step`` →
    ``Walker.step``), so that inclusive costs and cold returns find the callee."""
    if not targets:
        return fn
    for block in fn.blocks:
        block.instructions = [replace(i, callee=targets[i.callee]) if i.callee in targets else i
                              for i in block.instructions]
    return fn


def _size_notes(fn: FunctionIR, notes: list[str], options: AnalysisOptions) -> list[str]:
    """The notes on sizes its calls pass as values made at run time (each starts with the size's
    name), for the sizes its loops run over that the user does not set."""
    used = {symbol for loop in fn.loops.values() for symbol in loop.trip_count.iterations.symbols}
    return [note for note in notes if (name := note.split(" ", 1)[0]) in used and not options.given(name)]
