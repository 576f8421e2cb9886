"""Row and column walks: where a strided walk's lines stay for the next outer iteration (cache
sets, TLB reach), on inline C through clang and on the pure capacity rule."""
from __future__ import annotations

import shutil

import pytest

from ccls.counting import _set_capacity
from ccls.engine import count_sources
from ccls.frontends import SourceFile
from ccls.options import AnalysisOptions
from ccls.table_types import CacheModel
from ccls.tables import load_tables

needs_clang = pytest.mark.skipif(shutil.which("clang-19") is None, reason="clang-19 not installed")

ZEN4 = CacheModel(l1_bytes=32768, l2_bytes=1 << 20, l1_ways=8, l2_ways=8, tlb_entries=3072)


def test_a_stride_of_a_multiple_of_the_page_uses_few_sets():
    assert _set_capacity(ZEN4.l1_bytes, 8, 64, ZEN4) == 32768  # unit lines: every set
    assert _set_capacity(ZEN4.l1_bytes, 8, 8000, ZEN4) == 32768  # 125 lines apart: sets drift
    assert _set_capacity(ZEN4.l1_bytes, 8, 1024, ZEN4) == 2048  # 16 lines apart: 4 of 64 sets
    assert _set_capacity(ZEN4.l2_bytes, 8, 32768, ZEN4) == 16384  # 1/64 of L2's sets
    assert _set_capacity(ZEN4.l2_bytes, None, 32768, ZEN4) == 1 << 20  # associativity unknown: the size


WALKS = """
double M[4096][4096];
double col_walk(void) { double s = 0;
  for (int j = 0; j < 4096; j++) for (int i = 0; i < 4096; i++) s += M[i][j];
  return s; }
double row_walk(void) { double s = 0;
  for (int i = 0; i < 4096; i++) for (int j = 0; j < 4096; j++) s += M[i][j];
  return s; }
double Q[4096][4100];
double col_walk_wide(void) { double s = 0;
  for (int j = 0; j < 4096; j++) for (int i = 0; i < 4096; i++) s += Q[i][j];
  return s; }
double P[1000][1000];
double col_walk_small(void) { double s = 0;
  for (int j = 0; j < 1000; j++) for (int i = 0; i < 1000; i++) s += P[i][j];
  return s; }
"""


@needs_clang
def test_a_column_walk_over_a_global_matrix_is_not_a_row_walk(tmp_path):
    path = tmp_path / "walks.c"
    path.write_text(WALKS)
    tables = load_tables(None)
    [counted] = count_sources([SourceFile(str(path), WALKS)], AnalysisOptions(arch="x86_64-zen4"), tables)
    fns = {fn.name: fn for fn in counted.functions}
    col, row = fns["col_walk"], fns["row_walk"]
    loads = lambda fn: {cls: poly.evaluate({}) for cls, poly in fn.counts.items() if cls.startswith("load")}  # noqa: E731
    # Rows 32 KiB apart: every line in one L1 set and 1/64 of L2; 4096 pages a sweep: no reuse.
    assert loads(col) == {"load.DRAM.strided": 4096 * 4096}
    assert "load.stream" in loads(row) and loads(row).get("load.L1", 0) > 0.8 * 4096 * 4096
    assert [s.kind for s in col.sites] == ["miss-heavy-loop"] and row.sites == []
    assert any("uses few cache sets" in a for a in col.assumptions)
    # Rows 32,800 bytes apart use every set, but 4096 pages a sweep overflow a 3072-entry TLB.
    assert loads(fns["col_walk_wide"]) == {"load.DRAM.strided": 4096 * 4096}
    assert any("exceeds the TLB's 3072 entries" in a for a in fns["col_walk_wide"].assumptions)
    # 8000-byte rows, 1000 of them: 1000 lines in L2's sets and 2000 pages: the next column
    # finds seven of every eight lines again.
    small = loads(fns["col_walk_small"])
    assert small.get("load.L2", 0) == pytest.approx(7 / 8 * 1000 * 1000, rel=0.01)


TRIANGULAR = """
void tri(int m, int n, double A[400][400], double B[400][400]) {
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {
      for (int k = i + 1; k < m; k++)
        B[i][j] += A[k][i] * B[k][j];
      B[i][j] = 1.5 * B[i][j];
    }
}
"""


@needs_clang
def test_a_column_reread_by_every_iteration_fits_the_lines_it_touches_not_its_span(tmp_path):
    # One iteration of j walks ~200 rows of A's column i and of B's column j, rows 3,200 bytes
    # apart: ~400 lines (25 KiB), not the 1.3 MB of addresses between the first and last row.
    path = tmp_path / "tri.c"
    path.write_text(TRIANGULAR)
    options = AnalysisOptions(arch="x86_64-zen4", parameter_values=(("m", 400.0), ("n", 400.0)))
    [counted] = count_sources([SourceFile(str(path), TRIANGULAR)], options, load_tables(None))
    [tri] = counted.functions
    assert any(a.startswith("memory: data reread by every iteration of loop") and a.endswith("found in L1")
               for a in tri.assumptions), tri.assumptions
    at = {"m": 400, "n": 400}
    loads = sum(p.evaluate(at) for cls, p in tri.counts.items() if cls.startswith("load"))
    # Only the strided walk's new lines (one in eight: the next j moves by 8 bytes) come from
    # farther out; with the span as footprint, more than half of all loads were L3's.
    assert tri.counts["load.L3"].evaluate(at) < 0.15 * loads


BULK = """float a[32000], b[32000];
void copy_all(void) { for (int i = 0; i < 32000; i++) a[i] = b[i]; }
void clear(int n, double *x) { for (int i = 0; i < n; i++) x[i] = 0; }
"""


@needs_clang
def test_a_loop_clang_turns_into_memcpy_or_memset_costs_the_bytes_it_moves(tmp_path):
    path = tmp_path / "bulk.c"
    path.write_text(BULK)
    options = AnalysisOptions(arch="x86_64-zen4", parameter_values=(("n", 100000.0),))
    [counted] = count_sources([SourceFile(str(path), BULK)], options, load_tables(None))
    fns = {fn.name: fn for fn in counted.functions}
    copy_counts = {cls: p.evaluate({}) for cls, p in fns["copy_all"].counts.items()}
    # 128,000 bytes: 4,000 32-byte loads and stores, 2,000 new lines each from L2 (two 125 KiB arrays).
    assert copy_counts["load.L1@v256"] + copy_counts["load.L2"] == 4000 and copy_counts["load.L2"] == 2000
    assert copy_counts["store.L1@v256"] + copy_counts["store.L2"] == 4000
    assert fns["copy_all"].machine_cycles.evaluate({}) >= 4000  # one 32-byte store a cycle
    clear = {cls: p.evaluate({"n": 100000}) for cls, p in fns["clear"].counts.items()}
    assert not any(cls.startswith("load") for cls in clear)  # memset only stores
    assert clear["store.L1@v256"] + clear["store.L2"] == 100000 * 8 / 32
    assert any(a.startswith("memset of 781 KiB per call") for a in fns["clear"].assumptions)
