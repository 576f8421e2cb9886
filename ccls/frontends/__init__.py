"""Front ends: one `Language` record per input kind, and the registry that picks one for a path.

A front end turns a file into `FunctionIR`s (compiling or parsing it, never running it).
Front ends are the only place where compilers run (through `ccls.toolchain`). Everything ccls
knows about a kind of file — its suffixes, its tree-sitter grammar, the tools that compile it,
whether a function compiles alone, how a listing names its functions — is in its record here;
adding a language is a front end, a reader and one record.

Suffixes are spelled as clang spells them, and case matters where it does for clang: `.C` and
`.H` are C++, `.c` C. A suffix no record spells exactly is looked up in lower case (`.CU`, `.Py`).

`.h` is C, as clang compiles a header given alone (`-x c-header`), unless the build says C++:
the compile database's entry for it (or the entry clangd would borrow flags from), a
`compile_flags.txt` with `-x c++` or `-std=c++…`, a same-stem C++ or CUDA source beside it
(`widget.cpp` for `widget.h`), or a directory whose sources are C++ or CUDA and none C
(`ccls.frontends.c_family.header_language`).
"""
from __future__ import annotations

import importlib
import os
import re
from dataclasses import dataclass, field
from typing import Callable, Sequence

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


@dataclass(frozen=True)
class Language:
    """Everything ccls knows about one kind of input file."""

    name: str  # FunctionIR.language, the count cache's key, compile_db's `language`
    suffixes: tuple[str, ...]  # files it analyses, as clang spells them
    frontend: str  # "module:function" in this package, imported on first use
    grammar: str | None = None  # tree-sitter grammar module (ccls.source_map); None: whole-file mode
    tools: tuple[str, ...] = ()  # programs its front end runs; their versions key the count cache
    reducible: bool = False  # a function compiles alone from a reduced translation unit
    emits_every_function: bool = False  # its compile keeps every function (no caller needed to emit one)
    clang_x: str | None = None  # clang's `-x` for a buffer of this language
    preamble_x: str | None = None  # clang's `-x` for its precompiled preamble; None: no preamble
    includes: tuple[str, ...] = ()  # suffixes of files its sources include: an edit there affects them
    build_decides: tuple[str, ...] = ()  # suffixes clang gives another language, taken when the build says so
    build_language: str | None = None  # "module:function" asking the build which language such a file is
    # Listings (IR, PTX): how a function's definition line reads, `{symbol}` its escaped name; and
    # whether a function's line is a line of this file (IR's debug lines are its C source's).
    definition: str | None = None
    lines_in_file: bool = True

    def entry_point(self) -> Frontend:
        return _named(self.frontend)

    def definition_rows(self, lines: Sequence[str], symbol: str, line: int | None) -> tuple[int, int] | None:
        """0-based (first, last) rows of a function in a listing of this language, or None."""
        if self.lines_in_file and line and 0 < line <= len(lines) and symbol in lines[line - 1]:
            first = line - 1
        elif self.definition is None:
            return None
        else:
            pattern = re.compile(self.definition.format(symbol=re.escape(symbol)))
            first = next((i for i, text in enumerate(lines) if pattern.search(text)), None)
            if first is None:
                return None
        last = next((i for i in range(first + 1, len(lines)) if lines[i].startswith("}")), first)
        return first, last


def _named(entry: str) -> Callable:
    """A function named "module:function" in this package, imported on first use: the registry
    is data, and front ends (which run tools) load only when a file needs them."""
    module, _, function = entry.partition(":")
    return getattr(importlib.import_module(f"{__name__}.{module}"), function)


_C_INCLUDES = (".h", ".H", ".hh", ".hpp", ".hxx", ".inc", ".inl")
_LLVM_TOOLS = ("opt", "llvm-mca")  # the analyses, and machine cycles (frontends.machine_cycles)

LANGUAGES: tuple[Language, ...] = (
    Language("c", (".c", ".h"), "c_family:analyze_c", grammar="tree_sitter_c",
             tools=("clang", *_LLVM_TOOLS, "llvm-cxxfilt"), reducible=True, emits_every_function=True,
             clang_x="c", preamble_x="c-header", includes=(".h", ".inc")),
    Language("cpp", (".C", ".cc", ".CC", ".cp", ".cpp", ".CPP", ".cxx", ".CXX", ".c++", ".C++",
                     ".H", ".hh", ".hpp", ".hxx"),
             "c_family:analyze_cpp", grammar="tree_sitter_cpp", tools=("clang", *_LLVM_TOOLS, "llvm-cxxfilt"),
             reducible=True, emits_every_function=True, clang_x="c++", preamble_x="c++-header",
             includes=_C_INCLUDES, build_decides=(".h",), build_language="c_family:header_language"),
    # Device code with nvcc when installed, else clang; host code with clang.
    Language("cuda", (".cu", ".cuh"), "cuda:analyze_cuda", grammar="tree_sitter_cuda",
             tools=("nvcc", "clang", *_LLVM_TOOLS, "llvm-cxxfilt"), reducible=True, clang_x="cuda",
             includes=(*_C_INCLUDES, ".cuh")),
    Language("python", (".py",), "python:analyse_python", grammar="tree_sitter_python"),  # compile(): no tools
    Language("llvm-ir", (".ll", ".bc"), "llvm_ir:analyze_llvm_ir", tools=_LLVM_TOOLS,
             definition=r'^define\b.*@(?:{symbol}|"{symbol}")\(', lines_in_file=False),
    Language("ptx", (".ptx",), "ptx:analyze_ptx", tools=("llvm-cxxfilt",),
             definition=r"^\s*(?:\.\w+\s+)*\.(?:entry|func)\b.*\b{symbol}\b"),
)

_BY_NAME = {language.name: language for language in LANGUAGES}
_BY_SUFFIX = {suffix: language for language in LANGUAGES for suffix in language.suffixes}
_DECIDED_BY_BUILD = {suffix: language for language in LANGUAGES for suffix in language.build_decides}
_FRONTENDS: dict[str, Frontend] = {}


def language_named(name: str) -> Language:
    """The record of a language by its name ("c", "cpp", "cuda", "python", "llvm-ir", "ptx")."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise ValueError(f"no such language {name!r}; known: {', '.join(_BY_NAME)}") from None


def suffix_language(path: str) -> Language | None:
    """The language a path's suffix names, as clang reads it (`.h` is C), without looking at
    the build; None for files ccls ignores."""
    suffix = os.path.splitext(str(path))[1]
    return _BY_SUFFIX.get(suffix) or _BY_SUFFIX.get(suffix.lower())


def handles(path: str) -> bool:
    """Whether ccls analyses a file of this name (directory walks list these)."""
    return suffix_language(path) is not None


def language_for(path: str) -> Language | None:
    """The language ccls analyses a path as: its suffix's, or for `.h` the one the build picks."""
    language = suffix_language(path)
    suffix = os.path.splitext(str(path))[1]
    taker = _DECIDED_BY_BUILD.get(suffix) if language is not None else None
    if taker is not None and taker.build_language is not None:
        decided = _named(taker.build_language)(path)
        if decided is not None:
            return _BY_NAME[decided]
    return language


def frontend_for(path: str) -> tuple[str, Frontend] | None:
    """(language, front end) for a path, or None for files ccls ignores."""
    language = language_for(path)
    if language is None:
        return None
    frontend = _FRONTENDS.get(language.name)
    if frontend is None:
        frontend = _FRONTENDS[language.name] = language.entry_point()
    return language.name, frontend


def supported_suffixes() -> tuple[str, ...]:
    return tuple(sorted(_BY_SUFFIX))


def included_suffixes() -> tuple[str, ...]:
    """Suffixes of files that sources include (headers): an edit there invalidates includers."""
    return tuple(sorted({suffix for language in LANGUAGES for suffix in language.includes}))
