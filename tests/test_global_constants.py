"""What read-only globals hold, by byte offset (inline IR), and sizes read through a pointer
parameter from a global the caller passes (inline records; inline C through clang)."""
from __future__ import annotations

import shutil

import pytest

from ccls.model import CallSite
from ccls.readers.call_sites import ModuleCalls, read_call_sites
from ccls.readers.global_constants import read_only_constants, value_at, with_contents
from ccls.sizes import field_sizes, infer_sizes

IR = """
%struct.Shape = type { i8, i16, i32, i64 }
%struct.Config = type { %struct.Shape, [3 x i32] }
%struct.Packed = type <{ i8, i32, i16 }>
@CONFIG = internal global %struct.Config { %struct.Shape { i8 1, i16 40, i32 25, i64 7 }, [3 x i32] [i32 2, i32 3, i32 4] }, align 8
@ZEROED = internal global %struct.Config { %struct.Shape zeroinitializer, [3 x i32] [i32 5, i32 6, i32 -7] }, align 8
@PACKED = private constant %struct.Packed <{ i8 9, i32 1000, i16 12 }>, align 1
@NAME = internal constant [4 x i8] c"ab\\22\\00", align 1
@MIXED = internal constant { double, i32, ptr } { double 1.500000e+00, i32 3, ptr @NAME }, align 8
@SHARED = dso_local global i32 5, align 4
@STORED = internal global i32 5, align 4
@ESCAPES = internal global i32 5, align 4
@READ = internal global [2 x i64] [i64 11, i64 12], align 8
@PASSED = internal global i32 1, align 4

define dso_local i64 @reader(ptr nocapture noundef readonly %c, ptr noundef %w) {
entry:
  %v = load i64, ptr getelementptr inbounds (i8, ptr @READ, i64 8), align 8, !tbaa !3
  %u = load i32, ptr @STORED, align 4
  call void @writer(ptr noundef @ESCAPES, ptr noundef @CONFIG)
  %r = call i64 @reader(ptr noundef @CONFIG, ptr noundef @PASSED)
  store i32 1, ptr @STORED, align 4
  ret i64 %v
}
define dso_local void @writer(ptr noundef %p, ptr noundef readonly %q) {
entry:
  ret void
}
"""


def test_offsets_follow_llvm_layout_and_zero_fill():
    globals_ = read_only_constants(IR)
    config = globals_["CONFIG"]
    assert [value_at(config, offset, bits) for offset, bits in [(0, 8), (2, 16), (4, 32), (8, 64)]] == [1, 40, 25, 7]
    assert [value_at(config, 16 + 4 * k, 32) for k in range(3)] == [2, 3, 4]
    assert value_at(config, 2, 32) is None  # a read of another width is not this field
    zeroed = globals_["ZEROED"]
    assert [value_at(zeroed, 2, 16), value_at(zeroed, 8, 64), value_at(zeroed, 24, 32)] == [0, 0, -7]
    assert [value_at(globals_["PACKED"], offset, bits) for offset, bits in [(0, 8), (1, 32), (5, 16)]] == [9, 1000, 12]
    assert [value_at(globals_["NAME"], k, 8) for k in range(4)] == [97, 98, 34, 0]
    assert value_at(globals_["MIXED"], 8, 32) == 3  # after a double; the pointer is not an integer
    assert value_at(globals_["READ"], 8, 64) == 12


def test_only_globals_nothing_may_write_are_read_only():
    globals_ = read_only_constants(IR)
    assert "SHARED" not in globals_  # another file may write it
    assert "STORED" not in globals_  # a store
    assert "ESCAPES" not in globals_  # passed where the callee may write it
    assert {"CONFIG", "READ", "PACKED", "NAME"} <= set(globals_)  # read, or passed to readonly parameters
    assert "PASSED" not in globals_  # passed to @reader's second parameter, which may write


def test_pointer_arguments_carry_the_global_contents():
    module = with_contents(read_call_sites(IR, "/src/c.c"), read_only_constants(IR))
    (to_writer,) = [site for site in module.sites if site.callee == "writer"]
    assert to_writer.args[0] == ("addr", "ESCAPES", 0, ())  # may be written: no contents
    assert to_writer.args[1][:3] == ("addr", "CONFIG", 0) and to_writer.args[1][3]


def test_a_size_read_through_a_pointer_takes_the_largest_known_value():
    small, large = ((0, 32, 8),), ((0, 32, 40), (4, 32, 3))
    sites = (CallSite("main", "kernel", 10, (("addr", "SMALL", 0, small),)),
             CallSite("main", "kernel", 11, (("addr", "LARGE", 0, large),)),
             CallSite("main", "kernel", 12, (("addr", "WRITTEN", 0, ()),)),
             CallSite("main", "outer", 13, (("addr", "LARGE", 4, large),)),
             CallSite("outer", "kernel", 20, (("param", "q"),)))
    module = ModuleCalls("/src/m.c", {"main": (), "kernel": ("p",), "outer": ("q",)}, sites)
    inferred = infer_sizes([module])
    sizes = field_sizes({"p->n": ("p", 0, 32), "p->m": ("p", 4, 32), "p->x": ("p", 8, 32)},
                        inferred[("/src/m.c", "kernel")])
    assert sizes["p->n"].value == 40  # through `outer` too: &LARGE + 4 holds 3 at p->n
    assert sorted(v for v, _ in sizes["p->n"].others) == [3, 8]
    assert sizes["p->n"].unknown_at == ("the call at m.c:12",)
    assert "p->m" not in sizes  # &SMALL holds nothing at byte 4: not known for every call
    assert "p->x" not in sizes
    assert sizes["p->n"].describe("p->n").startswith("p->n = 40 from read-only &LARGE, passed by the call at m.c:11")


C_CODE = """
typedef struct { char kind; short rows; int cols; } Shape;
static Shape BIG = { 1, 40, 25 };
static Shape SCRATCH = { 1, 40, 25 };
static const Shape SMALL = { 0, 8, 9 };

long sum(const Shape *s, const double *a) {
    long t = 0;
    for (int i = 0; i < s->rows; i++)
        for (int j = 0; j < s->cols; j++)
            t += a[i * s->cols + j];
    return t;
}

void grow(Shape *s) { s->rows++; }

long run(const double *a) {
    grow(&SCRATCH);
    return sum(&BIG, a) + sum(&SMALL, a);
}

long scratch(const double *a) { return sum(&SCRATCH, a); }
"""


@pytest.mark.skipif(shutil.which("clang-19") is None or shutil.which("opt-19") is None,
                    reason="clang-19/opt-19 not installed")
def test_sizes_from_a_read_only_struct_the_caller_passes(tmp_path):
    from ccls.engine import count_sources
    from ccls.frontends import SourceFile
    from ccls.options import AnalysisOptions

    path = tmp_path / "shape.c"
    path.write_text(C_CODE)
    (counted,) = count_sources([SourceFile(str(path), C_CODE)], AnalysisOptions())
    fn = {f.name: f for f in counted.functions}["sum"]
    assert fn.inferred_sizes == {"s->rows": 40.0, "s->cols": 25.0}
    assert fn.size_notes[0].startswith("s->rows = 40 from read-only &BIG, passed by the call at shape.c:19; "
                                       "also called with 8 (read-only &SMALL")
    assert "a value known only at run time (the call at shape.c:22)" in fn.size_notes[0]  # &SCRATCH is written
    assert "numbers evaluated at s->cols=25, s->rows=40" in fn.assumptions
