"""The Language registry (ccls.frontends): one record per input kind, suffixes read as clang reads
them, `.h` decided by the build, and files compiled as the language clang would pick."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from ccls import compile_db
from ccls.engine import read_source
from ccls.frontends import (LANGUAGES, SourceFile, frontend_for, handles, included_suffixes, language_for,
                            language_named, suffix_language)
from ccls.options import AnalysisOptions

CLANG = shutil.which("clang-19") or shutil.which("clang")
needs_clang = pytest.mark.skipif(CLANG is None, reason="clang-19 is not installed (apt-get install clang-19)")

# Every suffix clang's driver gives a C-family language (clang/lib/Driver/Types.cpp), in its case.
CLANG_SUFFIXES = (".c", ".C", ".cc", ".CC", ".cp", ".cpp", ".CPP", ".cxx", ".CXX", ".c++", ".C++",
                  ".h", ".H", ".hh", ".hpp", ".hxx", ".cu")


def _language(path) -> str | None:
    found = language_for(str(path))
    return found.name if found else None


# -- the records ---------------------------------------------------------------------------------

def test_every_suffix_belongs_to_one_record_and_every_record_is_complete():
    claimed = [suffix for language in LANGUAGES for suffix in language.suffixes]
    assert len(claimed) == len(set(claimed))
    assert len({language.name for language in LANGUAGES}) == len(LANGUAGES)
    for language in LANGUAGES:
        assert callable(language.entry_point()), language.name
        assert all(suffix.startswith(".") for suffix in language.suffixes + language.includes)
        if language.reducible:  # a reduced unit is cut along the functions tree-sitter finds
            assert language.grammar is not None and language.clang_x is not None
        if language.grammar is None:  # whole-file mode: functions are placed by the listing rules
            assert language.definition is not None
    assert frontend_for("/src/k.cu")[0] == "cuda" and language_named("ptx").tools == ("llvm-cxxfilt",)
    with pytest.raises(ValueError, match="fortran"):
        language_named("fortran")


@pytest.mark.parametrize("name, language", [
    ("a.c", "c"), ("a.C", "cpp"), ("a.cc", "cpp"), ("a.CC", "cpp"), ("a.cp", "cpp"), ("a.cpp", "cpp"),
    ("a.CPP", "cpp"), ("a.c++", "cpp"), ("a.H", "cpp"), ("a.hh", "cpp"), ("a.hpp", "cpp"), ("a.hxx", "cpp"),
    ("a.HPP", "cpp"),  # no exact spelling: read in lower case
    ("k.cu", "cuda"), ("k.cuh", "cuda"), ("k.CUH", "cuda"), ("m.py", "python"), ("f.ll", "llvm-ir"),
    ("f.bc", "llvm-ir"), ("k.ptx", "ptx"), ("notes.txt", None), ("Makefile", None), ("a.inc", None),
])
def test_suffixes_as_clang_spells_them(tmp_path, name, language):
    assert _language(tmp_path / name) == language
    assert handles(name) == (language is not None)


def test_a_lone_header_is_c_as_clang_compiles_it(tmp_path):
    assert suffix_language("a.h").name == "c"
    assert _language(tmp_path / "a.h") == "c"


def test_headers_that_invalidate_their_includers():
    assert {".h", ".H", ".hh", ".hpp", ".hxx", ".cuh", ".inc", ".inl"} == set(included_suffixes())


@needs_clang
@pytest.mark.parametrize("suffix", CLANG_SUFFIXES)
def test_the_registry_picks_the_language_clangs_driver_picks(tmp_path, suffix):
    """`clang -###` prints the -x its driver chose for a file: it must be the record's."""
    path = tmp_path / f"f{suffix}"
    path.write_text("")
    shown = subprocess.run([CLANG, "-###", "-fsyntax-only", str(path)], capture_output=True, text=True).stderr
    chosen = re.search(r'"-x" "([^"]+)"', shown)
    assert chosen is not None, shown
    record = suffix_language(path.name)
    assert chosen[1] in (record.clang_x, record.preamble_x), (suffix, chosen[1], record.name)


# -- `.h`: the build decides --------------------------------------------------------------------

def _db(directory: Path, entries: list[dict]) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "compile_commands.json").write_text(json.dumps(entries))


def _touch(path: Path, text: str = "") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_a_header_is_cpp_when_its_database_entry_says_so(tmp_path):
    header = _touch(tmp_path / "include" / "api.h")
    _db(tmp_path, [{"directory": str(tmp_path), "file": "include/api.h", "arguments": ["clang", "-x", "c++-header",
                                                                                       "include/api.h"]}])
    assert _language(header) == "cpp"


def test_a_header_takes_the_language_of_the_entry_its_flags_are_borrowed_from(tmp_path):
    cpp_header = _touch(tmp_path / "lib" / "api.h")
    c_header = _touch(tmp_path / "tools" / "cli.h")
    _db(tmp_path, [
        {"directory": str(tmp_path), "file": "lib/api.cc", "arguments": ["c++", "-c", "lib/api.cc"]},
        {"directory": str(tmp_path), "file": "tools/cli.c", "arguments": ["cc", "-std=c11", "-c", "tools/cli.c"]},
    ])
    assert _language(cpp_header) == "cpp" and _language(c_header) == "c"


def test_a_database_of_cpp_sources_compiled_by_a_c_driver_still_says_cpp(tmp_path):
    header = _touch(tmp_path / "a.h")
    _db(tmp_path, [{"directory": str(tmp_path), "file": "main.cpp", "arguments": ["clang", "-O2", "main.cpp"]}])
    assert _language(header) == "cpp"


def test_compile_flags_txt_names_the_language(tmp_path):
    header = _touch(tmp_path / "src" / "a.h")
    _touch(tmp_path / "compile_flags.txt", "-Iinclude\n-std=c++20\n")
    assert _language(header) == "cpp"
    _touch(tmp_path / "compile_flags.txt", "-Iinclude\n")
    assert _language(header) == "c"  # says nothing: clang's choice


def test_siblings_decide_when_the_build_says_nothing(tmp_path):
    assert _language(_touch(tmp_path / "same" / "widget.h")) == "c"
    _touch(tmp_path / "same" / "widget.cpp")
    _touch(tmp_path / "same" / "main.c")  # the same stem outranks the directory
    assert _language(tmp_path / "same" / "widget.h") == "cpp"
    _touch(tmp_path / "dir" / "util.h")
    _touch(tmp_path / "dir" / "main.cc")
    _touch(tmp_path / "dir" / "README.md")
    _touch(tmp_path / "dir" / "gen.py")  # not C-family: no say
    assert _language(tmp_path / "dir" / "util.h") == "cpp"
    _touch(tmp_path / "dir" / "legacy.c")  # mixed directory: clang's choice
    assert _language(tmp_path / "dir" / "util.h") == "c"
    _touch(tmp_path / "gpu" / "kernels.h")
    _touch(tmp_path / "gpu" / "kernels.cu")
    assert _language(tmp_path / "gpu" / "kernels.h") == "cpp"  # CUDA host code is C++


def test_declared_language_reads_x_std_and_the_driver():
    assert compile_db.declared_language(["-x", "c", "-std=c++17"]) == "c"  # -x wins
    assert compile_db.declared_language(["-xc++-header"]) == "cpp"
    assert compile_db.declared_language(["-std=gnu11"]) == "c"
    assert compile_db.declared_language(["-std=gnu++17"]) == "cpp"
    assert compile_db.declared_language(["-O2"], "/usr/bin/clang++-19") == "cpp"
    assert compile_db.declared_language(["-O2"], "/usr/bin/gcc") is None


def test_nvcc_dialect_flag_keeps_a_cuda_donor_cuda(tmp_path):
    """A .cu entry's `-std=c++17` names the dialect: a .cu file borrowing it keeps the flag."""
    kernel = _touch(tmp_path / "b.cu")
    _db(tmp_path, [{"directory": str(tmp_path), "file": "a.cu", "arguments": ["nvcc", "-std=c++17", "-c", "a.cu"]}])
    assert "-std=c++17" in compile_db.flags_for(str(kernel), language="cuda").flags


# -- compiled as clang would pick (real clang) ----------------------------------------------------

# Valid C, not C++: `new` is a name, and void * converts implicitly.
C_ONLY = "#include <stdlib.h>\nlong sum(long n) {\n  long *new = malloc(8 * n), s = 0;\n" \
         "  for (long i = 0; i < n; i++) s += new[i] = i;\n  free(new);\n  return s;\n}\n"
# Valid C++, not C.
CPP_ONLY = "namespace k {\ntemplate <typename T> T twice(T x) { return x + x; }\n" \
           "long sum(long n) { long s = 0; for (long i = 0; i < n; i++) s += twice(i); return s; }\n}\n"


def _read(path: Path, text: str):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return read_source(SourceFile(str(path), text), AnalysisOptions())


@needs_clang
def test_upper_case_c_is_compiled_as_cpp(tmp_path):
    read = _read(tmp_path / "kernel.C", CPP_ONLY)
    assert read.language == "cpp" and read.result.errors == []
    assert "k::sum" in {f.display_name for f in read.result.functions}


@needs_clang
def test_a_lone_header_is_compiled_as_c(tmp_path):
    read = _read(tmp_path / "alloc.h", C_ONLY)
    assert read.language == "c" and read.result.errors == []
    assert {f.display_name for f in read.result.functions} == {"sum"}


@needs_clang
def test_a_header_beside_a_cpp_source_is_compiled_as_cpp(tmp_path):
    _touch(tmp_path / "twice.cpp", '#include "twice.h"\n')
    read = _read(tmp_path / "twice.h", CPP_ONLY)
    assert read.language == "cpp" and read.result.errors == []
    assert "k::sum" in {f.display_name for f in read.result.functions}


# -- listing rules --------------------------------------------------------------------------------

IR_LISTING = ["; ModuleID = 'a.c'", "define i64 @sum(i64 %n) {", "entry:", "  ret i64 %n", "}",
              'define i64 @"odd.name"(i64 %n) {', "  ret i64 %n", "}"]
PTX_LISTING = [".version 8.0", ".visible .entry _Z5saxpyifPKfPf(", "  .param .u32 n", ")", "{", "  ret;", "}"]


def test_listings_place_functions_by_their_definition_lines():
    ir = language_named("llvm-ir")
    assert ir.definition_rows(IR_LISTING, "sum", 1) == (1, 4)  # line 1 is the C source's, not the listing's
    assert ir.definition_rows(IR_LISTING, "odd.name", None) == (5, 7)
    assert ir.definition_rows(IR_LISTING, "missing", None) is None
    ptx = language_named("ptx")
    assert ptx.definition_rows(PTX_LISTING, "_Z5saxpyifPKfPf", None) == (1, 6)
    assert ptx.definition_rows(PTX_LISTING, "_Z5saxpyifPKfPf", 2) == (1, 6)  # its own line, when it names it


def test_the_borrowed_entry_is_the_first_best_by_clangds_order(tmp_path):
    """compile_db groups entries by directory to answer in milliseconds on large databases; the
    entry chosen must be the one a plain scan picks: nearest directory, same directory, same
    stem, same language, the first in database order among equals."""
    import os
    import random

    def plain_scan(entries, path, language):
        directory, stem = os.path.dirname(path), os.path.splitext(os.path.basename(path))[0]
        best, best_score = None, None
        for entry in entries:
            score = (len(os.path.commonpath([directory, os.path.dirname(entry["file"])]).split(os.sep)),
                     os.path.dirname(entry["file"]) == directory,
                     os.path.splitext(os.path.basename(entry["file"]))[0] == stem,
                     language is not None and compile_db._language_of(entry["file"]) == language)
            if best_score is None or score > best_score:
                best, best_score = entry, score
        return best["file"]

    rng = random.Random(16)
    folders = ["a", "a/b", "a/b/c", "a/d", "e", "e/f/g"]
    stems = ["util", "main", "widget", "io"]
    for round_ in range(40):
        root = tmp_path / f"r{round_}"
        entries = [{"directory": str(root), "file": str(root / rng.choice(folders) / (rng.choice(stems) + suffix)),
                    "arguments": ["cc", "-c", "x"]}
                   for suffix in rng.choices([".c", ".cpp", ".cu", ".h"], k=rng.randint(1, 12))]
        _db(root, entries)
        for _ in range(5):
            path = str(root / rng.choice(folders + ["z/y"]) / (rng.choice(stems) + ".h"))
            language = rng.choice([None, "c", "cpp", "cuda"])
            db = compile_db._load_database(str(root / "compile_commands.json"))
            assert compile_db._borrow(db, path, language).file == plain_scan(entries, path, language)
