"""Static functions twinned before optimisation (`ccls.frontends.as_built`): the callers get the
copy the build inlines, the original is reported by itself (inline IR, and real clang)."""
import re
import shutil

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ccls.counting import count_function
from ccls.frontends import SourceFile
from ccls.frontends.as_built import with_twins
from ccls.frontends.c_family import analyze_with_clang
from ccls.options import AnalysisOptions
from ccls.readers.llvm.lines import _Speech, _inlined_from, _subprogram_info
from ccls.readers.llvm.text import original_name

IR = """\
@table = internal constant [1 x ptr] [ptr @leaf], align 8

define internal i32 @leaf(i32 %x) #0 !dbg !10 {
entry:
  %r = call i32 @leaf(i32 %x), !dbg !11
  br label %loop, !dbg !11, !llvm.loop !12
loop:
  ret i32 %r, !dbg !11
}

define internal void @unused() #0 !dbg !10 {
entry:
  ret void
}

define linkonce_odr i32 @inline_fn(i32 %x) #0 comdat {
entry:
  ret i32 %x
}

define i32 @api(i32 %x) #0 !dbg !14 {
entry:
  %a = call i32 @leaf(i32 %x), !dbg !15
  %b = call i32 @inline_fn(i32 %a)
  ret i32 %b
}

attributes #0 = { nounwind }

!10 = distinct !DISubprogram(name: "leaf", line: 1, unit: !0)
!11 = !DILocation(line: 2, column: 1, scope: !10)
!12 = distinct !{!12, !11, !13}
!13 = !{!"llvm.loop.mustprogress"}
!14 = distinct !DISubprogram(name: "api", line: 9, unit: !0)
!15 = !DILocation(line: 10, column: 1, scope: !14)
"""


def test_a_referenced_static_function_gets_a_twin_that_takes_every_reference():
    out = with_twins(IR)
    defines = re.findall(r"^define ((?:internal|linkonce_odr) )?[^@]*@([-\w.]+)\(", out, re.M)
    assert ("", "leaf") in defines  # the original: external, reported by itself
    assert ("internal ", "leaf.ccls.as.built") in defines  # the build's copy keeps its linkage
    assert ("", "unused") in defines and not any("unused." in name for _, name in defines)
    assert ("", "inline_fn") in defines  # inline functions are only made external
    assert "call i32 @leaf.ccls.as.built(i32 %x), !dbg !15" in out  # the caller calls the twin
    assert "[ptr @leaf.ccls.as.built]" in out  # and so does an address taken
    original = out[out.index("define i32 @leaf("):]
    assert original[:original.index("}")].count("call i32 @leaf(i32 %x)") == 1  # its recursion stays its own


def test_a_twin_has_debug_info_of_its_own():
    out = with_twins(IR)
    twin = out[out.index("define internal i32 @leaf.ccls.as.built"):]
    twin = twin[:twin.index("\n}\n")]
    subprogram = re.search(r"!dbg !(\d+) \{", twin).group(1)
    assert subprogram != "10"
    assert re.search(rf"^!{subprogram} = distinct !DISubprogram\(name: \"leaf\"", out, re.M)
    location = re.search(r"ret i32 %r, !dbg !(\d+)", twin).group(1)
    assert re.search(rf"^!{location} = !DILocation\(line: 2, column: 1, scope: !{subprogram}\)", out, re.M)
    loop = re.search(r"!llvm.loop !(\d+)", twin).group(1)
    assert re.search(rf"^!{loop} = distinct !{{!{loop}, !{location}, !13}}", out, re.M)


def test_twins_map_back_to_their_original_names():
    assert original_name("leaf.ccls.as.built") == "leaf"
    assert original_name("leaf.ccls.as.built.constprop.0") == "leaf"
    assert original_name("WikiSort.specialized.1") == "WikiSort"  # LLVM's copy for a constant argument
    assert original_name("leaf") == "leaf"


def test_a_module_without_static_functions_is_only_made_external():
    assert with_twins("define linkonce_odr void @f() {\nentry:\n  ret void\n}\n") == \
        "define void @f() {\nentry:\n  ret void\n}\n"


needs_clang = pytest.mark.skipif(shutil.which("clang-19") is None and shutil.which("clang") is None,
                                 reason="clang-19 is not installed (apt-get install clang-19)")

# Too large for clang to inline an external function (its threshold is 225), so only the
# build's rule for a static function with one caller inlines it.
SOURCE = """\
static long work(const long *a, long n, long m) {
  long s = 0;
  for (long i = 0; i < n; i++) {
    s += a[i] % m;
    if (a[i] > s) s ^= a[i] * 3 + (s >> 2) - a[(i * 7) % n];
    if (a[i] < m) s -= a[(i * 5) % n] * 2 + (s << 1) - a[(i * 3) % n];
    if (a[i] == s) s += a[(i * 11) % n] + (s >> 3) - a[(i * 13) % n];
    if (a[i] != m) s -= a[(i * 17) % n] + (s >> 5) - a[(i * 19) % n];
  }
  return s;
}
long api(const long *a, long n, long m) {
  return work(a, n, m) + 1;
}
"""


@needs_clang
def test_a_caller_counts_the_static_function_the_build_inlines_into_it():
    result = analyze_with_clang(SourceFile("/tmp/ccls-test/as_built.c", SOURCE), AnalysisOptions(), "c", [])
    assert result.errors == []
    assert sorted(f.display_name for f in result.functions) == ["api", "work"]  # the twin is not reported
    counted = {f.display_name: count_function(f, None, lambda s: 1000.0) for f in result.functions}
    divisions = {name: sum(poly.evaluate({"n": 1000}) for cls, poly in c.counts.items() if cls.startswith("int_div"))
                 for name, c in counted.items()}
    # One caller: clang -O2 inlines `work` into `api` whatever its size, so api runs its loop.
    assert divisions["work"] > 1000 and divisions["api"] == pytest.approx(divisions["work"], rel=0.05)
    assert counted["api"].counts["int_div"].symbols == {"n"}


def test_a_loop_inlined_from_another_function_says_which():
    ir = ('!5 = distinct !DISubprogram(name: "work", line: 1)\n!6 = distinct !DISubprogram(name: "api", line: 9)\n'
          '!7 = !DILocation(line: 10, column: 3, scope: !6)\n'
          '!8 = !DILocation(line: 3, column: 5, scope: !5, inlinedAt: !7)\n')
    assert _inlined_from(ir, _subprogram_info(ir)) == {"8": "work"}
    speech = _Speech({"for.body.i": 10, "for.body": 11}, {}, set(), set(), {"for.body.i": "work"})
    assert speech.text("loop %for.body.i: trip count unknown; loop %for.body: 8") == \
        "loop at line 10 (in work, inlined): trip count unknown; loop at line 11: 8"


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(IR.splitlines(keepends=True)), max_size=60))
def test_twinning_never_raises_on_shuffled_module_lines(lines):
    with_twins("".join(lines))  # whatever it returns, the optimiser's verifier judges


# A static function the build keeps out of line (`noinline`), called once with a read-only
# table and a constant: IPSCCP specialises its copy to them, so the run never executes the
# general code, which tests `k < lim` on every element.
SPECIALISED = """\
struct shape { int rows, cols; };
static const struct shape SHAPE = {4, 8};
int data[32];
static long __attribute__((noinline)) total(const struct shape *s, const int *d, int lim) {
  long t = 0;
  for (int r = 0; r < s->rows; r++)
    for (int c = 0; c < s->cols; c++)
      if (c < lim) t += d[r * s->cols + c];
  return t;
}
long api(void) { return total(&SHAPE, data, 100); }
"""


@needs_clang
def test_a_static_function_run_only_as_a_specialised_copy_is_read_as_that_copy():
    result = analyze_with_clang(SourceFile("/tmp/ccls-test/specialised.c", SPECIALISED), AnalysisOptions(), "c", [])
    assert result.errors == []
    total = next(f for f in result.functions if f.display_name == "total")
    assert total.name == "total" and total.parameters == []  # its name, the copy's (no) parameters
    assert any("the build runs only a copy specialised to what its callers pass (s, d, lim fixed or unused at "
               "every call): that copy is read" in note for note in total.assumptions)
    counted = count_function(total, None, lambda s: 1000.0)
    # the 4 × 8 loads of the run, not a general nest at default sizes
    assert sum(poly.evaluate({}) for cls, poly in counted.counts.items() if cls.startswith("load")) <= 40
