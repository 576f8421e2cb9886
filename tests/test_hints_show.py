"""ccls.hints.show: which functions get an inlay hint (ccls.render.hint_filter), on reports made
by the engine from C written here, and the setting's one definition (server, VS Code manifest)."""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from ccls.engine import ReportSettings, count_sources, report
from ccls.frontends import SourceFile
from ccls.lsp.settings import Settings, parse_settings
from ccls.model import Finding, Metrics
from ccls.options import AnalysisOptions
from ccls.render import COSTLY_GRADE, COSTLY_SHARE, DEFAULT_HINT_SHOW, HINT_SHOW_MODES, hint_filter
from ccls.tables import load_tables

MANIFEST = Path(__file__).resolve().parents[1] / "vscode-client" / "package.json"

# One costly function (a triangular nest with a division), a loop with a modest share, and
# small helpers whose share of the file is tiny.
SOURCE = """
double heavy(double *a, int n) {
    double s = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++)
            s += a[j] / (a[i] + 1.0);
    return s;
}
int add(int a, int b) { return a + b; }
int twice(int a) { return 2 * a; }
int clamp(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }
int sign(int v) { return (v > 0) - (v < 0); }
"""


@pytest.fixture(scope="module")
def analysed(tmp_path_factory):
    path = tmp_path_factory.mktemp("hints") / "mixed.c"
    path.write_text(SOURCE)
    tables = load_tables(None)
    options = AnalysisOptions()
    functions = [fn for counted in count_sources([SourceFile(str(path), SOURCE)], options, tables)
                 for fn in counted.functions]
    reports = report(functions, tables, ReportSettings(), options)
    grades = tuple(grade for _, grade, _ in tables.grades.bands)
    return {r.counted.name: r for r in reports}, grades


def _shown(reports, mode, grades):
    keep = hint_filter(list(reports.values()), mode, grades)
    return sorted(name for name, r in reports.items() if keep(r))


def test_modes_on_engine_reports(analysed):
    reports, grades = analysed
    assert set(reports) == {"heavy", "add", "twice", "clamp", "sign"}
    assert _shown(reports, "all", grades) == sorted(reports)
    assert _shown(reports, "none", grades) == []
    # The nest is nearly all of the file's CU; the helpers are a few instructions each.
    assert _shown(reports, "costly", grades) == ["heavy"]
    with_findings = sorted(name for name, r in reports.items() if r.findings)
    assert "heavy" in with_findings
    assert _shown(reports, "findings", grades) == with_findings


def test_costly_is_a_share_of_the_file_or_a_low_grade(analysed):
    reports, grades = analysed
    helper = reports["add"]

    def at(cu, grade):
        return dataclasses.replace(helper, metrics=Metrics(cu, 1e-9, 1e-12, 1e-12), grade=grade, findings=[])
    best = grades[0]
    file = [at(100.0 - COSTLY_SHARE * 100 + 1, best), at(COSTLY_SHARE * 100 - 1, best)]  # 91 %, 9 %
    keep = hint_filter(file, "costly", grades)
    assert [keep(r) for r in file] == [True, False]
    # Exactly the share counts; so does the grade at the level, and any grade below it.
    exact = [at(100 * (1 - COSTLY_SHARE), best), at(100 * COSTLY_SHARE, best)]
    assert hint_filter(exact, "costly", grades)(exact[1])
    cheap_but_graded_low = [at(1000.0, best), at(1.0, COSTLY_GRADE), at(1.0, grades[-1]),
                            at(1.0, grades[grades.index(COSTLY_GRADE) - 1])]
    keep = hint_filter(cheap_but_graded_low, "costly", grades)
    assert [keep(r) for r in cheap_but_graded_low] == [True, True, True, False]
    # A grade the scale does not name (another table) is never costly by grade; a file of
    # zero CU has no shares.
    keep = hint_filter([at(0.0, "Z")], "costly", grades)
    assert keep(at(0.0, "Z")) is False


def test_findings_mode_follows_the_reports_findings(analysed):
    reports, grades = analysed
    helper = reports["add"]
    flagged = dataclasses.replace(helper, findings=[Finding("division-in-loop", 3, "a division", "hoist it")])
    keep = hint_filter([helper, flagged], "findings", grades)
    assert (keep(helper), keep(flagged)) == (False, True)


def test_the_setting_is_read_checked_and_declared_for_vs_code():
    assert Settings().hints_show == DEFAULT_HINT_SHOW == "costly"
    assert parse_settings({"hints": {"show": "Findings"}})[0].hints_show == "findings"
    assert parse_settings({"hints.show": "none"})[0].hints_show == "none"
    settings, messages = parse_settings({"hints": {"show": "loud"}})
    assert settings.hints_show == DEFAULT_HINT_SHOW
    assert any(m.startswith("ccls.hints.show: expected one of all, costly, findings, none") for m in messages)
    declared = json.loads(MANIFEST.read_text())["contributes"]["configuration"]["properties"]["ccls.hints.show"]
    assert declared["enum"] == list(HINT_SHOW_MODES) and declared["default"] == DEFAULT_HINT_SHOW
