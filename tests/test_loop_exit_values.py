"""A value that flows out of a loop that ran before (an unrolled loop's prologue, a blocked loop
before its remainder) is what ScalarEvolution computes it holds when that loop exits (its
`Exits:`), and the loop's own start, flowing in where its guard skipped it, is no other value
(real clang, inline C)."""
import shutil

import pytest

from ccls.engine import count_source
from ccls.frontends import SourceFile
from ccls.options import AnalysisOptions
from ccls.readers.scev import parse_opt_output

pytestmark = pytest.mark.skipif(shutil.which("clang-19") is None and shutil.which("clang") is None,
                                reason="clang-19 is not installed (apt-get install clang-19)")

# adler32's tails: `while (len--)` unrolled by 4 after a prologue of len % 4 iterations, and
# after blocks of 5552 and of 16 bytes, the bytes left (fewer than 16).
SUMS = """\
unsigned long sum_short(unsigned long a, const unsigned char *buf, unsigned long len) {
  while (len--) a += *buf++;
  return a;
}
unsigned long sum_blocks(unsigned long a, const unsigned char *buf, unsigned long len) {
  while (len >= 5552) { len -= 5552; for (int n = 0; n < 5552; n++) a += buf[n]; buf += 5552; }
  while (len >= 16) { len -= 16; for (int n = 0; n < 16; n++) a += buf[n]; buf += 16; }
  while (len--) a += *buf++;
  return a;
}
"""


def _counted(code: str):
    counted = count_source(SourceFile("/tmp/ccls-test/exit_values.c", code), AnalysisOptions())
    assert counted.errors == []
    return {f.name: f for f in counted.functions}


def _loops(code: str):
    return {name: sorted((loop.trip_count.kind, str(loop.trip_count.iterations)) for loop in f.loops)
            for name, f in _counted(code).items()}


def test_an_unrolled_loop_after_its_prologue_runs_the_rest_of_the_length_in_steps_of_its_factor():
    fn = _counted(SUMS)["sum_short"]
    [prologue] = [loop.trip_count for loop in fn.loops if loop.trip_count.kind == "constant"]
    [body] = [loop.trip_count for loop in fn.loops if loop.trip_count.kind == "symbolic"]
    # the prologue runs len % k (its mean, (k - 1) / 2), the body unrolled k times the rest
    k = round(1 / float(dict(body.iterations.terms)[(("len", 1),)]))
    assert k in (2, 4, 8, 16) and float(prologue.iterations.constant_value()) == (k - 1) / 2
    assert float(prologue.iterations.constant_value()) + k * body.iterations.evaluate({"len": 1000}) \
        == pytest.approx(1000)


def test_a_tail_after_blocked_loops_runs_on_fewer_bytes_than_a_block():
    loops = _loops(SUMS)["sum_blocks"]
    assert not any(kind == "unknown" for kind, _ in loops)
    # the byte tail starts from what the 16-byte loop leaves (its exit value, below 16), not
    # from the mean of that and what the 5552-byte loop left when the 16-byte loop was skipped
    counts = sorted(float(count) for kind, count in loops if kind == "constant")
    # 16-byte blocks of what the 5552-byte blocks leave (its mean, 2775.5: 173); the 5552-byte
    # block vectorised by 8 (694); the byte tail's prologue, len % 8 (3.5), and its body unrolled
    # by 8 over the mean 7.5 bytes the 16-byte loop leaves: (7.5 - 3.5) / 8 = 0.5 (was unknown)
    assert counts == [0.5, 3.5, 173.0, 694.0]


def test_exit_values_are_read_where_scalar_evolution_prints_them():
    printed = """Classifying expressions for: @f
  %dec.prol = add i64 %len.addr.prol, -1
  -->  {(-1 + %len),+,-1}<nw><%while.body.prol> U: full-set S: full-set\t\tExits: (4 * (%len /u 4))<nuw>\t\tLoopDispositions: { %while.body.prol: Computable }
  %x = load i8, ptr %p
  -->  %x U: full-set S: full-set\t\tExits: <<Unknown>>\t\tLoopDispositions: { %while.body.prol: Variant }
"""
    analyses = parse_opt_output(printed)["f"]
    assert analyses.exit_values == {"dec.prol": "(4 * (%len /u 4))<nuw>"}
