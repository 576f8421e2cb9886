"""The analysis service: the engine digest covers what counting imports; the batch counts a
program as `engine.count_sources` does, for any number of processes, and from the cache on an
unchanged re-run; `ccls analyze` uses that cache."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ccls import serialize
from ccls.cache import CountCache
from ccls.engine import count_sources
from ccls.frontends import SourceFile
from ccls.options import AnalysisOptions
from ccls.service import digest
from ccls.service.batch import Progress, count_program
from ccls.tables import load_tables

CLANG = shutil.which("clang-19")
needs_clang = pytest.mark.skipif(CLANG is None, reason="clang-19 is not installed")

LIB = """\
double scale(const double *a, int n) {
    double s = 0;
    for (int i = 0; i < n; i++) s += a[i] / 3.0;
    return s;
}
int count_over(const int *v, int n, int limit) {
    int c = 0;
    for (int i = 0; i < n; i++) if (v[i] > limit) c += v[i] % 7;
    return c;
}
"""
MAIN = """\
double scale(const double *a, int n);
double run(const double *a) {
    return scale(a, 4096) + scale(a, 64);
}
"""


# -- engine digest ----------------------------------------------------------------------------

def test_the_digest_covers_every_module_counting_imports():
    modules = digest.counting_modules()
    # Once left out of a hand-kept list although each changes counts.
    for name in ("ccls.early_exit", "ccls.targets", "ccls.options", "ccls.counting", "ccls.sizes",
                 "ccls.readers.llvm_ir", "ccls.readers.scev", "ccls.service.units", "ccls.serialize"):
        assert name in modules
    # Every front end, although the registry imports them by walking its package.
    assert {f"ccls.frontends.{m}" for m in ("c_family", "python", "ptx")} <= set(modules)
    # Views and the editor layer do not change counts.
    assert not [m for m in modules if m.startswith(("ccls.lsp", "ccls.cli", "ccls.render"))]


def test_the_digest_follows_imports_at_any_depth(tmp_path, monkeypatch):
    package = tmp_path / "ccls"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "engine.py").write_text("from ccls.sub import helper\n\ndef f():\n    from . import late\n")
    (package / "sub" / "__init__.py").write_text("")
    (package / "sub" / "helper.py").write_text("import ccls.deep as deep\n")
    (package / "deep.py").write_text("x = 1\n")
    (package / "late.py").write_text("from .sub.helper import deep\n")
    (package / "unused.py").write_text("")
    monkeypatch.setattr(digest, "COUNTING_ENTRY_POINTS", ("ccls.engine",))
    monkeypatch.setattr(digest.ccls, "__file__", str(package / "__init__.py"))
    digest.forget()
    try:
        assert digest.counting_modules() == ("ccls", "ccls.deep", "ccls.engine", "ccls.late", "ccls.sub",
                                             "ccls.sub.helper")
    finally:
        digest.forget()


def test_import_statements_are_those_a_search_from_every_line_start_finds():
    source = (b"import os, ccls.model as model\n"
              b"from ccls.readers import (call_sites,\n    scev)  # import of two\n"
              b"x = 'not an import'\n"
              b"def f():\n    from .sub import late\n\timport ccls.deep\n"
              b"text = '''\nimport ccls.quoted\n'''\n")
    search = re.compile(rb"^[ \t]*(?:from[ \t]+([.\w]+)[ \t]+import[ \t]+(\([^)]*\)|[^\n]*)|import[ \t]+([^\n]*))",
                        re.MULTILINE)
    assert digest._import_statements(source) == search.findall(source) == [
        (b"", b"", b"os, ccls.model as model"), (b"ccls.readers", b"(call_sites,\n    scev)", b""),
        (b".sub", b"late", b""), (b"", b"", b"ccls.deep"), (b"", b"", b"ccls.quoted")]


def test_the_digest_changes_with_a_counting_module(tmp_path, monkeypatch):
    digest.forget()  # not one computed earlier in the session, before a source changed
    before = digest.engine_digest()
    real_open = open
    target = os.path.join(os.path.dirname(digest.ccls.__file__), "early_exit.py")

    def edited(path, *args, **kwargs):
        handle = real_open(path, *args, **kwargs)
        if os.path.abspath(path) == target:
            data = handle.read() + b"\n# edited\n"
            handle.close()
            copy = tmp_path / "early_exit.py"
            copy.write_bytes(data)
            return real_open(copy, *args, **kwargs)
        return handle
    digest.forget()
    monkeypatch.setattr("builtins.open", edited)
    try:
        assert digest.engine_digest() != before
    finally:
        monkeypatch.undo()
        digest.forget()
    assert digest.engine_digest() == before and serialize.SCHEMA


# -- batch ------------------------------------------------------------------------------------

def _sources(tmp_path: Path) -> list[SourceFile]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "lib.c").write_text(LIB)
    (tmp_path / "main.c").write_text(MAIN)
    return [SourceFile(str(tmp_path / name), (tmp_path / name).read_text()) for name in ("lib.c", "main.c")]


def _plain(files) -> list:
    return [(f.path, f.language, [serialize.counted_to_json(cf) for cf in f.functions],
             [(e.file, e.line, e.message) for e in f.errors]) for f in files]


class _Counting(Progress):
    def __init__(self):
        self.files, self.compiles = 0, []

    def file_done(self):
        self.files += 1

    def compiled(self, done, total):
        self.compiles.append((done, total))


@needs_clang
def test_a_batch_counts_as_one_program_for_any_number_of_processes(tmp_path):
    sources, options, tables = _sources(tmp_path), AnalysisOptions(), load_tables()
    reference = _plain(count_sources(sources, options, tables))
    scale = next(cf for cf in count_sources(sources, options, tables)[0].functions if cf.name == "scale")
    assert scale.inferred_sizes == {"n": 4096.0}  # from main.c's call: sizes flow between files
    for jobs in (1, 2):
        assert _plain(count_program(sources, options, tables, None, jobs)) == reference


@needs_clang
def test_an_unchanged_rerun_is_served_by_the_cache(tmp_path):
    sources, options, tables = _sources(tmp_path / "src"), AnalysisOptions(), load_tables()
    reference = _plain(count_sources(sources, options, tables))
    cache = CountCache(str(tmp_path / "cache"))
    cold = _Counting()
    assert _plain(count_program(sources, options, tables, cache, 2, cold)) == reference
    assert cold.files == 2 and cold.compiles[-1] == (2, 2)
    cache.close()
    cache = CountCache(str(tmp_path / "cache"))
    warm = _Counting()
    assert _plain(count_program(sources, options, tables, cache, 2, warm)) == reference
    assert warm.files == 2 and warm.compiles == [] and cache.misses == 0 and cache.writes == 0
    cache.close()


@needs_clang
def test_a_caller_edited_in_another_file_recounts_the_callee_at_its_new_size(tmp_path):
    sources, options, tables = _sources(tmp_path / "src"), AnalysisOptions(), load_tables()
    cache = CountCache(str(tmp_path / "cache"))
    count_program(sources, options, tables, cache, 1)
    edited = [sources[0], SourceFile(sources[1].path, MAIN.replace("4096", "100000"))]
    progress = _Counting()
    got = count_program(edited, options, tables, cache, 1, progress)
    assert _plain(got) == _plain(count_sources(edited, options, tables))
    scale = next(cf for cf in got[0].functions if cf.name == "scale")
    assert scale.inferred_sizes == {"n": 100000.0}
    assert progress.compiles == [(1, 1)]  # main.c's text changed; lib.c's call sites came from the cache
    cache.close()


@needs_clang
def test_analyze_uses_the_cache_and_gives_the_same_report(tmp_path):
    sources = _sources(tmp_path / "src")
    del sources
    env = dict(os.environ, CCLS_CACHE_DIR=str(tmp_path / "unused"))

    def analyze(*extra):
        done = subprocess.run([sys.executable, "-m", "ccls", "analyze", str(tmp_path / "src"), "--format", "json",
                               *extra], capture_output=True, text=True, timeout=300, env=env)
        assert done.returncode == 0, done.stderr
        assert done.stderr == ""  # no progress bar when stderr is not a terminal
        return json.loads(done.stdout)

    cache_dir = tmp_path / "cache"
    uncached = analyze("--no-cache", "--jobs", "1")
    assert analyze("--cache-dir", str(cache_dir), "--jobs", "2") == uncached
    assert (cache_dir / "counts.sqlite3").exists()
    assert analyze("--cache-dir", str(cache_dir)) == uncached
    assert not (tmp_path / "unused").exists()  # --cache-dir wins over $CCLS_CACHE_DIR


def _stderr_on_a_terminal(*args: str) -> tuple[str, str]:
    """(stdout, stderr) of `ccls` with stderr on a pseudo-terminal, as in a shell."""
    import fcntl
    import pty
    import struct
    import termios

    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))  # 24 x 100 characters
    proc = subprocess.Popen([sys.executable, "-m", "ccls", *args], stdout=subprocess.PIPE, stderr=follower)
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # the terminal closed with the process
            break
        if not chunk:
            break
        chunks.append(chunk)
    stdout = proc.communicate(timeout=300)[0]
    os.close(leader)
    return stdout.decode(), b"".join(chunks).decode("utf-8", "replace")


@needs_clang
def test_a_progress_bar_on_a_terminal_for_the_table_only(tmp_path):
    _sources(tmp_path / "src")
    cache = str(tmp_path / "cache")
    table, bar = _stderr_on_a_terminal("analyze", str(tmp_path / "src"), "--cache-dir", cache)
    assert "scale" in table and "ccls:" in bar and "/2" in bar and "file" in bar
    as_json, quiet = _stderr_on_a_terminal("analyze", str(tmp_path / "src"), "--cache-dir", cache, "--format", "json")
    assert json.loads(as_json)["functions"] and quiet == ""


# -- tool versions ----------------------------------------------------------------------------

def test_tool_versions_are_remembered_in_the_cache_dir_by_the_binary(tmp_path, monkeypatch):
    from ccls import toolchain
    from ccls.service.counts import Analyzer
    from ccls.service.tables import TableStore

    fake, log = tmp_path / "bin" / "my-clang", tmp_path / "runs"
    fake.parent.mkdir()

    def install(version: str) -> None:
        fake.write_text(f"#!/bin/sh\necho run >> {log}\necho '{version}'\n")
        fake.chmod(0o755)

    def runs() -> int:
        return log.read_text().count("run")

    def a_new_process() -> Analyzer:  # only the cache directory remembers
        toolchain.forget_tool_versions()
        return Analyzer(CountCache(str(tmp_path / "cache")), TableStore())

    install("my clang version 1.0")
    monkeypatch.setenv("CCLS_CLANG", str(fake))
    toolchain.find_tool.cache_clear()
    try:
        assert a_new_process().tool_versions(["clang"]) == ["my clang version 1.0"]
        analyzer = a_new_process()
        assert analyzer.tool_versions(["clang"]) == ["my clang version 1.0"] and runs() == 1
        assert toolchain.tool_version("clang") == "my clang version 1.0" and runs() == 1  # the front end's
        install("my clang version 1.0.2")  # replaced in place: another size, another mtime
        os.utime(fake, ns=(os.stat(fake).st_atime_ns, os.stat(fake).st_mtime_ns + 10**9))
        assert analyzer.tool_versions(["clang"]) == ["my clang version 1.0.2"] and runs() == 2
        assert a_new_process().tool_version("clang") == "my clang version 1.0.2" and runs() == 2
    finally:
        monkeypatch.undo()
        toolchain.find_tool.cache_clear()
        toolchain.forget_tool_versions()


def test_tools_other_than_the_compiler_are_keyed_by_their_binary_without_running_it(tmp_path, monkeypatch):
    from ccls import toolchain
    from ccls.service.versions import tool_versions

    fake, log = tmp_path / "bin" / "my-opt", tmp_path / "runs"
    fake.parent.mkdir()
    fake.write_text(f"#!/bin/sh\necho run >> {log}\necho 'my opt 1.0'\n")
    fake.chmod(0o755)
    monkeypatch.setenv("CCLS_OPT", str(fake))
    toolchain.find_tool.cache_clear()
    try:
        cache = CountCache(str(tmp_path / "cache"))
        [first] = tool_versions(cache, ["opt"])
        assert first.startswith(str(fake)) and not log.exists()  # no --version run for a first key
        fake.write_text(fake.read_text() + "# replaced: another size\n")
        [second] = tool_versions(cache, ["opt"])
        assert second != first and second.startswith(str(fake)) and not log.exists()
    finally:
        monkeypatch.undo()
        toolchain.find_tool.cache_clear()
        toolchain.forget_tool_versions()
