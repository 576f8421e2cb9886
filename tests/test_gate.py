"""The CI cost gate: the pure comparison (ccls/gate.py) on inline reports, then `ccls check` and
`ccls diff` end to end on real C."""
import json
import shutil

import pytest

from ccls import gate
from ccls.cli import main

GRADES = ["A+", "A", "B+", "B", "C", "D", "F"]


def function(name, file="a.c", cu=1000.0, grade="B", line=1, symbol=None, **extra):
    """One function as `analyze --format json` reports it (the fields the gate reads)."""
    return {"name": name, "symbol": symbol or name, "file": file, "line": line,
            "metrics": {"CU": cu, "EU": cu * 1e-9, "CO2": cu * 1e-16, "USD": cu * 1e-15},
            "score": extra.pop("score", 60.0), "grade": grade, "big_o": extra.pop("big_o", "O(n)"),
            "cost_expression": extra.pop("cost_expression", f"{cu / 1000:g}·n"),
            "instructions": extra.pop("instructions", cu * 1.5), "counts": extra.pop("counts", {"int_add": cu}),
            "loops": extra.pop("loops", [{"line": line + 1, "depth": 1, "trip_count": "n", "kind": "symbolic"}]),
            "findings": extra.pop("findings", []), **extra}


def analysis(*functions, **settings):
    return {"schema": "ccls.analysis/1", "profile": "DEFAULT", "region": "WORLD", "arch": "x86_64",
            "scoring": "absolute", "normalization": "log-minmax", "table_version": "tables-1",
            **settings, "functions": list(functions), "errors": []}


def test_an_unchanged_analysis_passes():
    doc = analysis(function("f"), function("g", line=10))
    result = gate.compare(doc, doc, grade_order=GRADES)
    assert not result.failed
    assert [c.status for c in result.changes] == ["unchanged", "unchanged"]
    assert "0 regressed, 0 improved, 2 unchanged" in gate.comparison_table(result)


def test_growth_beyond_the_tolerance_fails_and_names_a_new_division_in_a_loop():
    old = analysis(function("f", cu=1000.0, counts={"int_add": 1000.0, "load.L1": 500.0}))
    new = analysis(function("f", cu=1300.0, counts={"int_add": 1000.0, "load.L1": 500.0, "int_div.i32": 100.0},
                            findings=[{"kind": "division-in-loop", "line": 5, "message": "…"}]))
    result = gate.compare(old, new, grade_order=GRADES)
    [change] = result.regressions
    assert (change.old, change.new) == (1000.0, 1300.0)
    assert change.causes[0] == "a new division in a loop (line 5)"
    assert "integer divisions per call 0 → 100" in change.causes
    text = gate.comparison_table(result)
    assert "REGRESSED f (a.c:1): CU 1k → 1.3k (+30.0%)" in text and "- a new division in a loop (line 5)" in text


@pytest.mark.parametrize("new_cu, tolerance, status", [
    (1040.0, 0.05, "unchanged"), (1060.0, 0.05, "regressed"), (1060.0, 0.10, "unchanged"),
    (900.0, 0.05, "improved"), (1000.0, 0.0, "unchanged"), (1000.5, 0.0, "regressed")])
def test_the_tolerance_is_relative_to_the_baseline(new_cu, tolerance, status):
    result = gate.compare(analysis(function("f", cu=1000.0)), analysis(function("f", cu=new_cu)),
                          max_increase=tolerance, grade_order=GRADES)
    assert [c.status for c in result.changes] == [status]


def test_causes_follow_the_direction_of_the_change():
    divides = function("f", cu=6000.0, counts={"int_div": 1000.0}, findings=[{"kind": "division-in-loop", "line": 3}],
                       loops=[{"line": 2, "depth": 1, "trip_count": "n", "kind": "symbolic"}])
    vectorised = function("f", cu=1000.0, counts={"int_add": 1000.0}, loops=[
        {"line": 2, "depth": 1, "trip_count": "0.25·n", "kind": "symbolic"},
        {"line": 2, "depth": 1, "trip_count": "3", "kind": "constant"}])
    [worse] = gate.compare(analysis(vectorised), analysis(divides)).regressions
    assert worse.causes == ("a new division in a loop (line 3)", "integer divisions per call 0 → 1k",
                            "instructions per call 1.5k → 9k (+500%)")  # one loop fewer is no cause of a rise
    [better] = gate.compare(analysis(divides), analysis(vectorised)).by_status("improved")
    assert better.causes == ("no division in a loop any more", "integer divisions per call 1k → 0",
                             "instructions per call 9k → 1.5k (-83%)")


def test_a_loop_that_became_quadratic_is_named():
    old = analysis(function("f", big_o="O(n)"))
    new = analysis(function("f", cu=500_000.0, big_o="O(n²)", loops=[
        {"line": 2, "depth": 1, "trip_count": "n", "kind": "symbolic"},
        {"line": 3, "depth": 2, "trip_count": "n", "kind": "symbolic"}]))
    [change] = gate.compare(old, new, grade_order=GRADES).regressions
    assert "complexity O(n) → O(n²)" in change.causes
    assert "loops nested 1 deep → 2 deep (line 3)" in change.causes
    assert gate.change_text(change) == "×500"


def test_a_grade_drop_within_the_tolerance_still_fails():
    result = gate.compare(analysis(function("f", cu=1000.0, grade="B")), analysis(function("f", cu=1010.0, grade="C")),
                          grade_order=GRADES)
    [change] = result.regressions
    assert change.causes[0].startswith("grade B → C")
    # without a grade scale, only the metric counts
    assert not gate.compare(analysis(function("f", cu=1000.0, grade="B")),
                            analysis(function("f", cu=1010.0, grade="C"))).failed


def test_the_score_metric_fails_on_a_fall():
    old = analysis(function("f", score=80.0))
    assert gate.compare(old, analysis(function("f", score=70.0)), metric="score").failed
    assert not gate.compare(old, analysis(function("f", score=90.0)), metric="score").failed
    with pytest.raises(gate.GateError, match="unknown metric"):
        gate.compare(old, old, metric="joules")


def test_a_new_miss_heavy_loop_and_more_misses_are_named():
    old = analysis(function("walk", counts={"load.L1": 1000.0}))
    new = analysis(function("walk", cu=9000.0, counts={"load.L1": 10.0, "load.DRAM.strided": 990.0},
                            findings=[{"kind": "miss-heavy-loop", "line": 4}]))
    [change] = gate.compare(old, new).regressions
    assert change.causes[:1] == ("a new miss-heavy loop (line 4)",)
    assert "loads missing the L1 per call 0 → 990" in change.causes


def test_a_function_moved_to_another_file_is_matched_by_its_symbol():
    old = analysis(function("helper", file="a.c", line=3), function("main", file="a.c", line=20))
    new = analysis(function("helper", file="b.c", line=7), function("main", file="a.c", line=12))
    result = gate.compare(old, new, grade_order=GRADES)
    assert not result.failed
    moved = [c for c in result.changes if c.moved_from]
    assert [(c.name, c.moved_from, c.file) for c in moved] == [("helper", "a.c", "b.c")]
    assert "moved from a.c to b.c" in gate.comparison_table(result)
    assert "moved from a.c to b.c" in gate.comparison_markdown(result)


def test_a_symbol_that_is_not_unique_is_not_guessed():
    # two static helpers of the same name vanish from a.c and b.c; one appears in c.c: which one moved?
    old = analysis(function("helper", file="a.c"), function("helper", file="b.c"))
    new = analysis(function("helper", file="c.c", cu=99_000.0))
    result = gate.compare(old, new)
    assert sorted(c.status for c in result.changes) == ["new", "removed", "removed"]
    assert not result.failed  # new and removed functions are listed, not failures


def test_overloads_in_one_file_are_told_apart_by_symbol():
    old = analysis(function("scale", symbol="_Z5scalePdl", cu=100.0), function("scale", symbol="_Z5scalePfl", cu=50.0))
    new = analysis(function("scale", symbol="_Z5scalePfl", cu=50.0), function("scale", symbol="_Z5scalePdl", cu=400.0))
    [change] = gate.compare(old, new).regressions
    assert change.symbol == "_Z5scalePdl"


def test_new_and_removed_functions_are_listed_not_failures():
    result = gate.compare(analysis(function("gone")), analysis(function("fresh", file="b.c")))
    assert not result.failed
    text = gate.comparison_table(result)
    assert "new fresh (b.c:1)" in text and "removed gone (a.c:1)" in text
    markdown = gate.comparison_markdown(result)
    assert "**new:** `fresh` (b.c:1)" in markdown and "**removed:** `gone` (a.c:1)" in markdown


def test_settings_that_differ_are_noted():
    result = gate.compare(analysis(function("f")), analysis(function("f"), arch="aarch64", table_version="tables-2"))
    assert any(n.startswith("arch differs: baseline x86_64, now aarch64") for n in result.notes)
    assert any(n.startswith("table_version differs") for n in result.notes)


def test_the_baseline_is_lean_relative_and_stable(tmp_path):
    doc = analysis(function("g", file=str(tmp_path / "src" / "k.c"), line=9, hottest_lines=[{"line": 9, "CU": 1.0}],
                            assumptions=["n = 1000"]),
                   function("f", file=str(tmp_path / "src" / "k.c"), line=2))
    baseline = gate.baseline_from_analysis(doc, str(tmp_path))
    assert baseline["schema"] == "ccls.baseline/1"
    assert [(f["name"], f["file"]) for f in baseline["functions"]] == [("f", "src/k.c"), ("g", "src/k.c")]
    assert "assumptions" not in baseline["functions"][1] and "hottest_lines" not in baseline["functions"][1]
    assert baseline["settings"]["table_version"] == "tables-1"
    # a baseline compares with the analysis it came from, and re-projecting it changes nothing
    assert not gate.compare(baseline, doc, root=str(tmp_path)).failed
    assert gate.baseline_json(gate.baseline_from_analysis(baseline)) == gate.baseline_json(baseline)


@pytest.mark.parametrize("document, message", [
    ({"schema": "something/1"}, "not a ccls analysis or baseline"),
    ([], "not a ccls analysis or baseline"),
    ({"schema": "ccls.baseline/1", "functions": [{"name": 3}]}, "must be a list of objects"),
])
def test_documents_that_are_not_analyses_are_refused(document, message):
    with pytest.raises(gate.GateError, match=message):
        gate.baseline_from_analysis(document)


def test_the_json_report():
    result = gate.compare(analysis(function("f", cu=0.0)), analysis(function("f", cu=10.0)))
    doc = json.loads(gate.comparison_json(result))
    assert doc["schema"] == "ccls.diff/1" and doc["failed"] is True
    assert doc["summary"]["regressed"] == 1
    [entry] = doc["functions"]
    assert entry["status"] == "regressed" and entry["relative_change"] == "inf" and entry["causes"]


@pytest.mark.parametrize("text, fraction", [("5%", 0.05), ("5", 0.05), ("12.5 %", 0.125), ("0", 0.0)])
def test_tolerances(text, fraction):
    assert gate.parse_tolerance(text) == pytest.approx(fraction)


@pytest.mark.parametrize("text", ["-1%", "five", "nan%", ""])
def test_bad_tolerances(text):
    with pytest.raises(ValueError):
        gate.parse_tolerance(text)


# -- end to end: real clang ------------------------------------------------------------------------

needs_clang = pytest.mark.skipif(shutil.which("clang-19") is None, reason="clang-19 is not installed")

KERNEL = """\
long total(const long *a, long n, long m) {
  long s = 0;
  for (long i = 0; i < n; i++)
    s += a[i] * m;
  return s;
}

long pairs(const long *a, long n) {
  long s = 0;
  for (long i = 0; i < n; i++)
    s += a[i];
  return s;
}
"""


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CCLS_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "k.c").write_text(KERNEL)
    return tmp_path


@needs_clang
def test_check_passes_on_an_unchanged_tree_and_fails_on_a_regression(project, capsys):
    assert main(["check", "src", "--baseline", "cost-baseline.json", "--update"]) == 0
    baseline = json.loads((project / "cost-baseline.json").read_text())
    assert baseline["schema"] == "ccls.baseline/1"
    assert sorted((f["name"], f["file"]) for f in baseline["functions"]) == [("pairs", "src/k.c"), ("total", "src/k.c")]
    capsys.readouterr()

    assert main(["check", "src", "--baseline", "cost-baseline.json"]) == 0
    assert "0 regressed, 0 improved, 2 unchanged" in capsys.readouterr().out

    # a division in total's loop
    (project / "src" / "k.c").write_text(KERNEL.replace("s += a[i] * m;", "s += a[i] / m;"))
    assert main(["check", "src", "--baseline", "cost-baseline.json"]) == 1
    out = capsys.readouterr().out
    assert "REGRESSED total (src/k.c:1): CU " in out
    assert "a new division in a loop (line 4)" in out and "integer divisions per call" in out

    # pairs' loop made nested: O(n) → O(n²)
    (project / "src" / "k.c").write_text(KERNEL.replace(
        "    s += a[i];\n", "    for (long j = 0; j < n; j++)\n      s += a[i] ^ a[j];\n"))
    assert main(["check", "src", "--baseline", "cost-baseline.json", "--format", "markdown"]) == 1
    out = capsys.readouterr().out
    assert "### ❌ ccls cost gate" in out and "`pairs`" in out and "complexity O(n) → O(n²)" in out


@needs_clang
def test_check_follows_a_function_moved_to_another_file(project, capsys):
    assert main(["check", "src", "--baseline", "base.json", "--update"]) == 0
    total, pairs = KERNEL.split("\n\n")
    (project / "src" / "k.c").write_text(total + "\n")
    (project / "src" / "pairs.c").write_text(pairs)
    capsys.readouterr()
    assert main(["check", "src", "--baseline", "base.json"]) == 0
    assert "moved from src/k.c to src/pairs.c" in capsys.readouterr().out


@needs_clang
def test_check_without_a_baseline_says_how_to_make_one(project, capsys):
    assert main(["check", "src", "--baseline", "nowhere.json"]) == 2
    err = capsys.readouterr().err
    assert "no such file: nowhere.json" in err and "--update" in err
    (project / "bad.json").write_text("{not json")
    assert main(["check", "src", "--baseline", "bad.json"]) == 2
    assert "bad.json is not JSON" in capsys.readouterr().err


@needs_clang
def test_diff_reports_two_analyses(project, capsys):
    assert main(["analyze", "src", "--format", "json", "--scoring", "absolute"]) == 0
    (project / "old.json").write_text(capsys.readouterr().out)
    (project / "src" / "k.c").write_text(KERNEL.replace("s += a[i] * m;", "s += a[i] % m;"))
    assert main(["analyze", "src", "--format", "json", "--scoring", "absolute"]) == 0
    (project / "new.json").write_text(capsys.readouterr().out)

    assert main(["diff", "old.json", "new.json", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["failed"] is True and doc["summary"]["unchanged"] == 1
    [total] = [f for f in doc["functions"] if f["status"] == "regressed"]
    assert total["name"] == "total" and total["file"] == "src/k.c" and total["new"] > total["old"]
    assert any("division in a loop" in cause for cause in total["causes"])

    assert main(["diff", "old.json", "new.json"]) == 0
    assert "REGRESSED total (src/k.c:1)" in capsys.readouterr().out
    assert main(["diff", "old.json", "missing.json"]) == 2
    assert "no such file: missing.json" in capsys.readouterr().err
