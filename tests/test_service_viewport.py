"""Viewport first (issue 15), below the editor: the plan of which functions to count first
(ccls.service.viewport) and the analyser counting a batch of them, leaving the rest pending."""
from __future__ import annotations

import shutil
from dataclasses import dataclass

import pytest

from ccls.options import AnalysisOptions
from ccls.service import units, viewport
from ccls.service.analysis import AnalysisService
from ccls.service.counts import Snapshot, all_counted, parse_functions
from ccls.service.tables import TableStore

CLANG = shutil.which("clang-19") or shutil.which("clang")


@dataclass
class Span:
    start_line: int
    end_line: int


SPANS = [Span(1 + 10 * i, 8 + 10 * i) for i in range(20)]  # rows 0-7, 10-17, ..., 190-197


def test_the_screen_first_then_by_distance_below_before_above():
    order = viewport.nearest_first(SPANS, 95, 125)
    assert order[:4] == [9, 10, 11, 12]  # rows 90-97 ... 120-127 touch the screen
    assert order[4:8] == [13, 8, 14, 7]  # 5 rows below, 5 rows above: below first
    assert sorted(order) == list(range(20))


def test_a_plan_counts_the_screen_and_its_neighbours_then_batches():
    order, batch = viewport.plan(SPANS, (0, 60), first=True)
    near = [i for i, s in enumerate(SPANS) if s.start_line - 1 <= 60 + viewport.NEAR_ROWS]
    assert order[:len(near)] == near and batch == len(near)
    assert viewport.plan(SPANS, (0, 60), first=False)[1] == viewport.REST_BATCH
    # Later batches choose among what the pass has not tried, never more than that.
    order, batch = viewport.plan(SPANS, (0, 60), first=False, pending=[19, 3, 12])
    assert order == [3, 12, 19] and batch == 3
    assert viewport.plan(None, (0, 60), first=True) == (None, None)  # whole-file languages


def generated(functions: int) -> str:
    return "\n".join(f"double k{i}(const double *a, long n) {{\n    double s = {i}.0;\n"
                     f"    for (long j = 0; j < n; j++)\n        s += a[j] * {i % 5 + 1}.5;\n    return s;\n}}\n"
                     for i in range(functions))


@pytest.mark.skipif(CLANG is None, reason="clang not installed")
def test_a_batch_counts_the_first_functions_in_order_and_leaves_the_rest_pending(tmp_path):
    text = generated(12)
    path = tmp_path / "many.c"
    path.write_text(text)
    data = text.encode()
    _, functions = parse_functions(data, "c")
    snapshot = Snapshot(path.as_uri(), str(path), "c", 1, text, data, functions, units.callees(data, functions))
    service = AnalysisService(TableStore(), str(tmp_path / "cache"))
    options = AnalysisOptions()
    rows = (functions[8].start_line - 1, functions[9].end_line - 1)  # a screen showing k8 and k9

    order, _ = viewport.plan(functions, rows, first=True)
    first = service.counts(snapshot, options, order=order, batch=2)
    assert sorted(cf.name for cf in all_counted(first)) == ["k8", "k9"]
    assert first.reduced and sorted(first.pending) == [i for i in range(12) if i not in (8, 9)]

    order, batch = viewport.plan(functions, rows, first=False, pending=first.pending)
    second = service.counts(snapshot, options, previous=first, order=order, batch=4)
    assert sorted(cf.name for cf in all_counted(second)) == ["k10", "k11", "k6", "k7", "k8", "k9"]

    # Few enough uncounted functions are counted together, screen or not (an edit's few).
    together = AnalysisService(TableStore(), str(tmp_path / "cache3")).counts(
        snapshot, options, order=order, batch=2, whole_up_to=12)
    assert not together.pending and len(together.units) == 12 and together.compiles == 1

    # What the batches counted is what one whole-file analysis counts.
    rest = service.counts(snapshot, options, previous=second)
    assert not rest.pending and len(rest.units) == 12
    whole = AnalysisService(TableStore(), str(tmp_path / "cache2")).counts(snapshot, options)
    assert not whole.reduced
    by_name = {cf.name: cf.counts for cf in all_counted(whole)}
    assert {cf.name: cf.counts for cf in all_counted(rest)} == by_name
