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
