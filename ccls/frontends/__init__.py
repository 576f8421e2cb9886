"""Front ends: one module per input kind, each registering the suffixes it handles.

A front end turns a file into `FunctionIR`s (compiling or parsing it, never running it).
Front ends are the only place where compilers run (through `ccls.toolchain`).
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Callable

from ccls.model import AnalysisError, FunctionIR
from ccls.options import AnalysisOptions
from ccls.readers.call_sites import ModuleCalls


@dataclass(frozen=True)
class SourceFile:
    path: str  # absolute path; the file need not exist on disk when `text` is given
    text: str  # current contents (an editor buffer may differ from disk)


@dataclass
class FrontendResult:
    functions: list[FunctionIR] = field(default_factory=list)
    errors: list[AnalysisError] = field(default_factory=list)
    calls: ModuleCalls | None = None  # what its call sites pass (C-family); sizes for `ccls.sizes`


Frontend = Callable[[SourceFile, AnalysisOptions], FrontendResult]

_REGISTRY: dict[str, tuple[str, Frontend]] = {}


def register(language: str, suffixes: tuple[str, ...]) -> Callable[[Frontend], Frontend]:
    def deco(fn: Frontend) -> Frontend:
        for suffix in suffixes:
            _REGISTRY[suffix] = (language, fn)
        return fn
    return deco


def _load_all() -> None:
    # Every module in this package is a front end; importing it runs its @register.
    import importlib
    import pkgutil

    for module in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{module.name}")


def frontend_for(path: str) -> tuple[str, Frontend] | None:
    """(language, front end) for a path by its suffix, or None for files ccls ignores."""
    if not _REGISTRY:
        _load_all()
    return _REGISTRY.get(os.path.splitext(path)[1].lower())


def supported_suffixes() -> tuple[str, ...]:
    if not _REGISTRY:
        _load_all()
    return tuple(sorted(_REGISTRY))
