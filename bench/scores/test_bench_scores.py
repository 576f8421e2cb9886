"""Checks of the scores benchmark's own machinery (not of the suites): skipping absent suites,
recognising their layout, and its three figures on a cohort built inline.
Run: python3 -m pytest bench/scores/test_bench_scores.py -q
"""
from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path

import pytest

from ccls.engine import ReportSettings, report
from ccls.model import CountedFunction, Metrics
from ccls.options import AnalysisOptions
from ccls.polynomial import Polynomial
from ccls.render import analysis_json
from ccls.tables import load_tables

_SPEC = importlib.util.spec_from_file_location("bench_scores_run", Path(__file__).resolve().parent / "run.py")
run = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(run)


def test_absent_suites_are_skipped_with_a_message(tmp_path, capsys):
    assert run.main([str(tmp_path / "nowhere"), str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert f"skip {tmp_path / 'nowhere'}: not found" in out
    assert f"skip {tmp_path}: neither TSVC 2" in out and "no suite analysed" in out


def test_suite_layouts_are_recognised(tmp_path):
    (tmp_path / "t" / "src").mkdir(parents=True)
    (tmp_path / "t" / "src" / "tsvc.c").write_text("")
    assert run.analyze_command(tmp_path / "t") == ("TSVC 2", [str(tmp_path / "t" / "src" / "tsvc.c")])
    for folder in ("e/src/crc32", "e/src/md5sum", "e/support"):
        (tmp_path / folder).mkdir(parents=True)
    name, args = run.analyze_command(tmp_path / "e")
    assert name == "Embench-IoT" and args[:2] == [str(tmp_path / "e/src/crc32"), str(tmp_path / "e/src/md5sum")]
    assert "-DGLOBAL_SCALE_FACTOR=1" in args[-1] and args[-2] == "--flags"


def test_plain_log_metrics_floor_zero_at_the_smallest_positive():
    logs = run._log_metrics([Metrics(0.0, 1e-9, 1e-15, 1e-16), Metrics(100.0, 1e-7, 1e-13, 1e-14)])
    assert logs[0] == Metrics(2.0, -9.0, -15.0, -16.0) and logs[1] == Metrics(2.0, -7.0, -13.0, -14.0)


def _counted(name: str, counts: dict[str, float]) -> CountedFunction:
    return CountedFunction(
        name=name, display_name=name, file="/src/a.c", line=1, end_line=5, language="c", arch="x86_64",
        parameters=[], static_counts={}, counts={k: Polynomial.constant(v) for k, v in counts.items()},
        machine_instructions=None, loops=[], line_counts={}, calls={}, sites=[], assumptions=[])


def test_the_three_figures_on_an_inline_cohort(capsys):
    # 30 integer-add functions log-spread over six decades, plus the FMA / add pair that flips
    # between HPC and MOBILE (tests/test_scoring.py's Fig. 9 case)
    fns = [_counted(f"adds_{k}", {"int_add": round(10 ** (1 + 6 * k / 29))}) for k in range(30)]
    fns += [_counted("fmas", {"fp_fma": 923}), _counted("adds", {"int_add": 3000})]
    tables, settings = load_tables(), ReportSettings(scoring="cohort")
    doc = json.loads(analysis_json(report(fns, tables, settings, AnalysisOptions()), [], settings, "x86_64",
                                   tables.version))
    figures = run.report_suite("inline", doc)
    out = capsys.readouterr().out
    assert figures["functions"] == 32 and figures["largest_grade_share"] <= run.TARGET_SHARE
    assert figures["outlier_max_steps"] <= 1 and "ok" in out.split("2. one function")[1].splitlines()[0]
    assert figures["pairs"] == 32 * 31 // 2 and figures["hpc_mobile_flips"] >= 1
    assert "HPC prefers adds, MOBILE prefers fmas" in out and "why: adds takes" in out
    assert not math.isnan(figures["outlier_max_shift"])
