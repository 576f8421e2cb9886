"""Loops the vectoriser versions: only one copy runs."""
from __future__ import annotations

import shutil

import pytest

from ccls.engine import count_sources
from ccls.frontends import SourceFile
from ccls.options import AnalysisOptions

needs_clang = pytest.mark.skipif(shutil.which("clang-19") is None, reason="clang-19 not installed")

CODE = """void add(float *a, float *b) { for (int i = 0; i < 16000; i++) a[i] += b[i]; }
void add_n(float *a, float *b, int n) { for (int i = 0; i < n; i++) a[i] += b[i]; }
"""


@needs_clang
def test_the_fallback_for_overlapping_arrays_is_not_counted_as_well(tmp_path):
    path = tmp_path / "v.c"
    path.write_text(CODE)
    [counted] = count_sources([SourceFile(str(path), CODE)], AnalysisOptions(parameter_values=(("n", 16000.0),)))
    fns = {fn.name: fn for fn in counted.functions}
    add = fns["add"]
    # clang -O2: a runtime alias check picks the vector loop (1000 x 16 floats) or a scalar
    # copy; callgrind counts 19,011 instructions with disjoint arrays. Both copies: 83,009.
    assert sorted(str(l.trip_count.iterations) for l in add.loops) == ["0", "1000"]
    assert 18_000 < add.machine_instructions.evaluate({}) < 20_000
    assert any("run-time alias check" in a for a in add.assumptions)
    # With a remainder the scalar copy also runs the last few elements: it stays.
    assert all(str(l.trip_count.iterations) != "0" for l in fns["add_n"].loops)


SHORTEST = """void shortest(int n, int d[400][400]) {
  for (int k = 0; k < n; k++)
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++)
        d[i][j] = d[i][j] < d[i][k] + d[k][j] ? d[i][j] : d[i][k] + d[k][j];
}
void apart(int n, int *a, const int *b) { for (int i = 0; i < n; i++) a[i] = a[i] < b[i] ? a[i] : b[i]; }
"""


@needs_clang
def test_a_check_that_always_finds_an_overlap_runs_the_scalar_copy(tmp_path):
    # d[i][k] lies inside the row d[i][...] the inner loop writes, for every k: the vectorizer's
    # run-time check always sends the row to the scalar copy (callgrind at n = 400: 483.7M
    # instructions; counting the vector loop and the remainder instead gave 174M, 0.36x).
    path = tmp_path / "s.c"
    path.write_text(SHORTEST)
    options = AnalysisOptions(parameter_values=(("n", 400.0),))
    [counted] = count_sources([SourceFile(str(path), SHORTEST)], options)
    fns = {fn.name: fn for fn in counted.functions}
    shortest = fns["shortest"]
    trips = sorted(str(l.trip_count.iterations) for l in shortest.loops)
    assert "0" in trips and all("0.125" not in t for t in trips)  # the 8-wide loop does not run
    assert 0.9 < shortest.machine_instructions.evaluate({"n": 400}) / 483_691_243 < 1.2
    assert any("always overlap" in a for a in shortest.assumptions)
    # Two arrays passed apart: nothing is known of the check, the vector loop stays.
    assert all("always overlap" not in a for a in fns["apart"].assumptions)
    assert any("0.125·n" in str(l.trip_count.iterations) or "0.0625·n" in str(l.trip_count.iterations)
               for l in fns["apart"].loops)


def test_an_overlap_is_decided_over_the_loop_ranges_and_every_size():
    from ccls.polynomial import Polynomial
    from ccls.readers.alias_checks import _always_positive

    n, k = Polynomial.symbol("n"), Polynomial.symbol("@k")
    last = {"k": n - 1}.get
    assert _always_positive(4 * n - 4 * k, True, last) is True  # the row's end is past d[i][k] for every k < n
    assert _always_positive(4 * k - 4 * n, True, last) is None  # negative somewhere: not always
    assert _always_positive(k - 5, True, last) is None  # depends on k (at the start it is negative)
    assert _always_positive(Polynomial.symbol("a") - Polynomial.symbol("b"), True, last) is None  # two arrays
    assert _always_positive(4 * n * k + 4 * n, True, last) is True  # a row of n elements per k: 4·n > 0 for every n
    assert _always_positive(4 * n * k - n * n, True, last) is None  # its rate is one sign, its value is not


STRIDED = """void shortest_vla(int n, int d[n][n]) {
  for (int k = 0; k < n; k++)
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++)
        d[i][j] = d[i][j] < d[i][k] + d[k][j] ? d[i][j] : d[i][k] + d[k][j];
}
void rank_update(int n, int m, double c[n][n], double a[n][m]) {
  for (int i = 0; i < n; i++)
    for (int k = 0; k < m; k++)
      for (int j = 0; j <= i; j++)
        c[i][j] += a[i][k] * a[j][k];
}
"""


@needs_clang
def test_rows_of_a_run_time_length_and_a_stride_versioned_vector_copy(tmp_path):
    # PolyBench's C99 arrays: rows n long (the overlap is decided for every n), and a(j, k)
    # walked down a column of stride m, which the vectorizer copies for m = 1 only (syrk).
    path = tmp_path / "v.c"
    path.write_text(STRIDED)
    [counted] = count_sources([SourceFile(str(path), STRIDED)], AnalysisOptions())
    fns = {fn.name: fn for fn in counted.functions}
    assert any("always overlap" in a for a in fns["shortest_vla"].assumptions)
    assert any("made for a symbolic stride of 1 (a matrix row of one element), taken as not run" in a
               for a in fns["rank_update"].assumptions)
    inner = [l for l in fns["rank_update"].loops if l.depth == 3]
    assert sorted(str(l.trip_count.iterations) for l in inner)[0] == "0"  # the vector copy


INCREMENT = """void axpy_inc(float *a, const float *b, int inc) {
  for (int i = 0; i < 32000; i++)
    a[i * inc] += b[i];
}
"""


@needs_clang
def test_a_stride_that_bounds_no_loop_is_an_increment_taken_as_1(tmp_path):
    # `inc` only scales the index (BLAS's incx, TSVC's s171): 1 in the usual call, which the
    # vectorizer versions for; the scalar copy for other increments is the one taken as not run
    # (callgrind on TSVC's s171 with inc = 1: 1.07x of ccls's count, 5.9x when the scalar copy ran).
    path = tmp_path / "v.c"
    path.write_text(INCREMENT)
    [counted] = count_sources([SourceFile(str(path), INCREMENT)], AnalysisOptions())
    [fn] = [fn for fn in counted.functions if fn.name == "axpy_inc"]
    assert any("the scalar copy for an increment other than 1" in a for a in fn.assumptions)
    trips = sorted(l.trip_count.iterations.constant_value() for l in fn.loops)
    assert trips[0] == 0 and 0 < trips[-1] <= 32000 / 4  # the scalar copy; the vector copy, 4+ floats a step


RELOADED = """float a[32000], b[32000];
float *xx;
void sink(void);
void half(void) {
  xx = &b[16000];
  for (int nl = 0; nl < 100; nl++) {
    for (int i = 0; i < 16000; i++)
      b[i] = xx[i] + a[i];
    sink();
  }
}
"""


@needs_clang
def test_an_alias_check_on_a_reloaded_pointer_is_not_a_branch_on_data(tmp_path):
    # The check compares `xx`, loaded again after each call, with `b`: which copy runs is
    # decided from the addresses (the scalar fallback taken as not run), not split 50/50 as a
    # branch on loaded data (TSVC's s1421: 0.53x callgrind's instructions when split).
    from ccls.frontends.c_family import analyze_with_clang
    path = tmp_path / "v.c"
    path.write_text(RELOADED)
    result = analyze_with_clang(SourceFile(str(path), RELOADED), AnalysisOptions(), "c", [])
    [fn] = [fn for fn in result.functions if fn.name == "half"]
    inner = {key: loop for key, loop in fn.loops.items() if loop.parent is not None}
    vector = [loop for loop in inner.values() if loop.trip_count.iterations.constant_value()]
    assert vector and all(loop.entry_frequency == 1 for loop in vector)
    assert all(not i.data_dependent for b in fn.blocks for i in b.instructions)
