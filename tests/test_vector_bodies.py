"""A vector body whose count ccls cannot read runs the whole passes of the range its scalar
copy names, and that scalar copy only what the vector body leaves (fewer than VF × IC
iterations), not the whole range (real clang, inline C: inflate's window copies)."""
import shutil

import pytest

from ccls.engine import count_source
from ccls.frontends import SourceFile
from ccls.options import AnalysisOptions

pytestmark = pytest.mark.skipif(shutil.which("clang-19") is None and shutil.which("clang") is None,
                                reason="clang-19 is not installed (apt-get install clang-19)")

# `do { *out++ = *from++; } while (--op)`: vectorised 32 bytes a pass, its scalar copy unrolled
# by 8 after a prologue of op % 8; op comes from decoded data (`hold & mask`), so the vector
# body's count, and where it leaves off, are in values ccls cannot name.
COPIES = """\
unsigned char *expand(unsigned char *out, unsigned char *beg, const unsigned char *bits,
                      const unsigned char *last, unsigned long hold) {
  do {
    unsigned op = *bits++;
    unsigned dist = (unsigned)hold & ((1U << op) - 1);
    hold >>= op;
    op = (unsigned)(out - beg);
    if (dist > op) {
      op = dist - op;
      unsigned char *from = out - dist;
      do { *out++ = *from++; } while (--op);
    }
    *out++ = 0;
  } while (bits < last);
  return out;
}
"""


def _counted(code: str):
    counted = count_source(SourceFile("/tmp/ccls-test/vector_bodies.c", code), AnalysisOptions())
    assert counted.errors == []
    return {f.name: f for f in counted.functions}


def _copy_loops(fn) -> dict[str, tuple[str, str]]:
    """The copy's three loops by role: the vector body, the unroller's prologue, the unrolled body."""
    line = next(loop.line for loop in fn.loops if loop.id.startswith("vector.body"))
    roles = {}
    for loop in fn.loops:
        if loop.line == line:
            role = "vector" if loop.id.startswith("vector.body") else "prologue" if loop.id.endswith(".prol") \
                else "unrolled"
            roles[role] = (loop.trip_count.kind, str(loop.trip_count.iterations))
    return roles


def test_a_vector_body_of_unreadable_count_runs_the_whole_passes_of_its_scalar_copys_range():
    fn = _counted(COPIES)["expand"]
    loops = _copy_loops(fn)
    # the scalar copy named the range `op` (8 a pass: 0.125·op); the vector body runs
    # floor(op / 32), its mean (op - 15.5) / 32 (was unknown: 100), the scalar copy the rest
    assert loops["vector"] == ("data", "0.0312·op - 0.484")
    assert loops["prologue"] == ("constant", "3.5")
    assert loops["unrolled"] == ("constant", "1.5")
    notes = " ".join(fn.assumptions)
    assert "reads the whole range as op iterations, so the vector body, 32 of them a pass" in notes
    assert "assuming 100" not in notes


def test_a_scalar_copy_not_unrolled_runs_the_mean_left_over_of_a_pass():
    not_unrolled = COPIES.replace("      do { *out++", '      _Pragma("clang loop unroll(disable)") do { *out++')
    fn = _counted(not_unrolled)["expand"]
    counts = {("vector" if loop.id.startswith("vector.body") else "scalar"):
              (loop.trip_count.kind, str(loop.trip_count.iterations)) for loop in fn.loops if loop.line == 11}
    # 16 bytes a pass (no interleaving once unrolling is off): floor(op / 16), mean (op - 7.5) / 16;
    # the scalar copy the left-over, mean 7.5 (was the whole range, op)
    assert counts == {"vector": ("data", "0.0625·op - 0.469"), "scalar": ("constant", "7.5")}
