"""`ccls analyze` keeps its printed report in the count cache: an unchanged re-run prints it
without costing anything, and whatever the report depends on (a file's text, the settings, the
options, the format, the tables, the code that prints it, the working directory) is a new key,
so the report is always the one an uncached run prints."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ccls import cli, engine
from ccls.cache import CountCache
from ccls.frontends import SourceFile
from ccls.options import AnalysisOptions
from ccls.service import batch, digest
from ccls.tables import default_table_dir, load_tables
from tests.test_service import LIB, MAIN

CLANG = shutil.which("clang-19")
pytestmark = pytest.mark.skipif(CLANG is None, reason="clang-19 is not installed")



@pytest.fixture()
def tree(tmp_path, monkeypatch):
    """Two files of one program, the working directory beside them, and a count of report() calls."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "lib.c").write_text(LIB)
    (src / "main.c").write_text(MAIN)
    monkeypatch.chdir(tmp_path)
    costed = []
    real = engine.report

    def counting_report(*args, **kwargs):
        costed.append(1)
        return real(*args, **kwargs)
    monkeypatch.setattr(engine, "report", counting_report)
    return tmp_path, costed


def _analyze(capsys, *args: str) -> tuple[int, str]:
    status = cli.main(["analyze", *args])
    return status, capsys.readouterr().out


def test_an_unchanged_rerun_prints_the_kept_report_without_costing(tree, capsys):
    root, costed = tree
    cache = ["--cache-dir", str(root / "cache"), "--jobs", "1"]
    for kind in ("table", "json"):
        uncached = _analyze(capsys, "src", "--format", kind, "--no-cache")
        costed.clear()
        assert _analyze(capsys, "src", "--format", kind, *cache) == uncached
        assert len(costed) == 1
        assert _analyze(capsys, "src", "--format", kind, *cache) == uncached
        assert len(costed) == 1  # printed from the cache: nothing costed


def _modified_tables(root: Path) -> str:
    tables = root / "tables"
    shutil.copytree(default_table_dir(), tables)
    regions = json.loads((tables / "regions.json").read_text())
    regions["data"]["regions"]["WORLD"]["carbon_kg_per_kwh"] *= 2
    (tables / "regions.json").write_text(json.dumps(regions))
    return str(tables)


@pytest.mark.parametrize("change", ["text", "profile", "param", "format", "tables", "code", "directory"])
def test_a_change_to_what_the_report_depends_on_costs_it_again(tree, capsys, monkeypatch, change):
    root, costed = tree
    cache = ["--cache-dir", str(root / "cache"), "--jobs", "1"]
    base = ["src", "--format", "json"]
    _analyze(capsys, *base, *cache)
    costed.clear()
    args = list(base)
    if change == "text":
        (root / "src" / "main.c").write_text(MAIN.replace("4096", "100000"))
    elif change == "profile":
        args += ["--profile", "MOBILE"]
    elif change == "param":
        args += ["--param", "n=5"]
    elif change == "format":
        args[2] = "markdown"
    elif change == "tables":
        args += ["--tables", _modified_tables(root)]
    elif change == "code":  # an edit to a module that costs, scores or prints (digest.report_digest)
        monkeypatch.setattr(digest, "report_digest", lambda: "another version of the report code")
    elif change == "directory":
        (root / "elsewhere").mkdir()
        monkeypatch.chdir(root / "elsewhere")
        args[0] = str(root / "src")
    got = _analyze(capsys, *args, *cache)
    assert len(costed) == 1
    assert got == _analyze(capsys, *args, "--no-cache")
    costed.clear()
    assert _analyze(capsys, *args, *cache) == got and not costed  # and that one is kept in turn


def test_no_report_is_kept_when_a_file_fails(tree, capsys):
    root, costed = tree
    (root / "src" / "broken.c").write_text("int broken(int n) { return n +; }\n")
    cache = ["--cache-dir", str(root / "cache"), "--jobs", "1"]
    first = _analyze(capsys, "src", "--format", "json", *cache)
    assert first[0] == cli.EXIT_ANALYSIS_ERRORS
    assert _analyze(capsys, "src", "--format", "json", *cache) == first
    assert len(costed) == 2  # costed both times: a run with errors is never printed from the cache


def test_file_keys_and_counts_keys(tmp_path):
    (tmp_path / "lib.c").write_text(LIB)
    (tmp_path / "main.c").write_text(MAIN)
    sources = [SourceFile(str(tmp_path / name), (tmp_path / name).read_text()) for name in ("lib.c", "main.c")]
    options, tables = AnalysisOptions(), load_tables()
    cache = CountCache(str(tmp_path / "cache"))
    try:
        assert batch.file_keys(batch.prepare_program(sources, options, tables, None)) is None  # no cache, no keys
        program = batch.prepare_program(sources, options, tables, cache)
        contexts = batch.file_keys(program)
        assert contexts is not None and batch.counts_keys(program) is None  # call sites not read yet
        batch.count_program(sources, options, tables, cache, 1, program=program)
        keys = batch.counts_keys(program)  # every file's call sites known once counted
        assert keys is not None and all(cache.contains(key) for key in keys)
        # an edit to main.c: its own context changes; lib.c's does not, but its counts key does,
        # as main.c's call now passes scale() another size
        edited = [sources[0], SourceFile(sources[1].path, MAIN.replace("4096", "100000"))]
        program = batch.prepare_program(edited, options, tables, cache)
        again = batch.file_keys(program)
        assert again[0] == contexts[0] and again[1] != contexts[1]
        batch.count_program(edited, options, tables, cache, 1, program=program)
        counted_again = batch.counts_keys(program)
        assert counted_again[0] != keys[0] and counted_again[1] != keys[1]
    finally:
        cache.close()


def test_the_report_digest_covers_the_modules_that_cost_score_and_print():
    modules = digest.imported_modules(digest.REPORT_ENTRY_POINTS)
    for name in ("ccls.cli", "ccls.engine", "ccls.costing", "ccls.scoring", "ccls.render", "ccls.reports.sarif",
                 "ccls.reports.html", "ccls.reports.markdown", "ccls.serialize"):
        assert name in modules
    assert set(digest.counting_modules()) <= set(modules)
    assert digest.report_digest() != digest.engine_digest()
