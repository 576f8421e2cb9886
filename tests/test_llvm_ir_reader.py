"""The LLVM IR reader on IR written here, no C compiler: trip counts (constant, symbolic, a
linked list's length, the mean of a search's early exit, an unknown count's default) and the
memory pattern of each load and store, then counting on what it read. The reader runs LLVM's
`opt` for its loop and ScalarEvolution analyses, as for any `.ll` file."""
from __future__ import annotations

from fractions import Fraction

import pytest

from ccls.counting import count_function
from ccls.frontends import SourceFile
from ccls.frontends.llvm_ir import analyze_llvm_ir
from ccls.model import FunctionIR, Instruction
from ccls.options import AnalysisOptions
from ccls.polynomial import Polynomial
from ccls.toolchain import find_tool

pytestmark = pytest.mark.skipif(find_tool("opt") is None,
                                reason="opt-19 (LLVM's loop and ScalarEvolution analyses, which the reader reads) "
                                       "is not installed")

KERNELS = r"""
%struct.node = type { ptr, i64 }

; for (i = 0; i < 100; i++) a[i] = 1.0;
define void @fill(ptr %a) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %loop ]
  %p = getelementptr inbounds double, ptr %a, i64 %i
  store double 1.0, ptr %p
  %i.next = add nuw nsw i64 %i, 1
  %done = icmp eq i64 %i.next, 100
  br i1 %done, label %exit, label %loop
exit:
  ret void
}

; for (i = 0; i < n; i++) s += a[i] * *scale;
define double @scaled_sum(ptr %a, ptr %scale, i64 %n) {
entry:
  %empty = icmp slt i64 %n, 1
  br i1 %empty, label %exit, label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %loop ]
  %s = phi double [ 0.0, %entry ], [ %s.next, %loop ]
  %p = getelementptr inbounds double, ptr %a, i64 %i
  %x = load double, ptr %p
  %k = load double, ptr %scale
  %y = fmul double %x, %k
  %s.next = fadd double %s, %y
  %i.next = add nuw nsw i64 %i, 1
  %done = icmp eq i64 %i.next, %n
  br i1 %done, label %exit, label %loop
exit:
  %r = phi double [ 0.0, %entry ], [ %s.next, %loop ]
  ret double %r
}

; for (i = 0; i < n; i++) s += a[512 * i];   (a column of a 512-wide matrix of doubles)
define double @column(ptr %a, i64 %n) {
entry:
  %empty = icmp slt i64 %n, 1
  br i1 %empty, label %exit, label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %loop ]
  %s = phi double [ 0.0, %entry ], [ %s.next, %loop ]
  %j = mul nuw nsw i64 %i, 512
  %p = getelementptr inbounds double, ptr %a, i64 %j
  %x = load double, ptr %p
  %s.next = fadd double %s, %x
  %i.next = add nuw nsw i64 %i, 1
  %done = icmp eq i64 %i.next, %n
  br i1 %done, label %exit, label %loop
exit:
  %r = phi double [ 0.0, %entry ], [ %s.next, %loop ]
  ret double %r
}

; for (p = head; p; p = p->next) s += p->value;
define i64 @walk(ptr %head) {
entry:
  %empty = icmp eq ptr %head, null
  br i1 %empty, label %exit, label %loop
loop:
  %node = phi ptr [ %head, %entry ], [ %next, %loop ]
  %s = phi i64 [ 0, %entry ], [ %s.next, %loop ]
  %vp = getelementptr inbounds %struct.node, ptr %node, i64 0, i32 1
  %v = load i64, ptr %vp
  %s.next = add i64 %s, %v
  %next = load ptr, ptr %node
  %end = icmp eq ptr %next, null
  br i1 %end, label %exit, label %loop
exit:
  %r = phi i64 [ 0, %entry ], [ %s.next, %loop ]
  ret i64 %r
}

; for (i = 0; i < n; i++) if (a[i] == key) return i;  return -1;
define i64 @find(ptr %a, i64 %n, i64 %key) {
entry:
  %empty = icmp slt i64 %n, 1
  br i1 %empty, label %exit, label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %latch ]
  %p = getelementptr inbounds i64, ptr %a, i64 %i
  %x = load i64, ptr %p
  %hit = icmp eq i64 %x, %key
  br i1 %hit, label %exit, label %latch
latch:
  %i.next = add nuw nsw i64 %i, 1
  %done = icmp eq i64 %i.next, %n
  br i1 %done, label %exit, label %loop
exit:
  %r = phi i64 [ -1, %entry ], [ %i, %loop ], [ -1, %latch ]
  ret i64 %r
}

; do { x = x & 1 ? 3 * x + 1 : x / 2; steps++; } while (x > 1);
define i64 @collatz(i64 %x0) {
entry:
  br label %loop
loop:
  %x = phi i64 [ %x0, %entry ], [ %x.next, %loop ]
  %steps = phi i64 [ 0, %entry ], [ %steps.next, %loop ]
  %odd = and i64 %x, 1
  %isodd = icmp ne i64 %odd, 0
  %up = mul i64 %x, 3
  %up1 = add i64 %up, 1
  %down = lshr i64 %x, 1
  %x.next = select i1 %isodd, i64 %up1, i64 %down
  %steps.next = add i64 %steps, 1
  %more = icmp ugt i64 %x.next, 1
  br i1 %more, label %loop, label %exit
exit:
  ret i64 %steps.next
}

; for (i = 0; i < n; i++) s += a[i] / d + a[i] / 8u;
define i64 @divide(ptr %a, i64 %n, i64 %d) {
entry:
  %empty = icmp slt i64 %n, 1
  br i1 %empty, label %exit, label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %loop ]
  %s = phi i64 [ 0, %entry ], [ %s.next, %loop ]
  %p = getelementptr inbounds i64, ptr %a, i64 %i
  %x = load i64, ptr %p
  %q = sdiv i64 %x, %d
  %h = udiv i64 %x, 8
  %s.1 = add i64 %s, %q
  %s.next = add i64 %s.1, %h
  %i.next = add nuw nsw i64 %i, 1
  %done = icmp eq i64 %i.next, %n
  br i1 %done, label %exit, label %loop
exit:
  %r = phi i64 [ 0, %entry ], [ %s.next, %loop ]
  ret i64 %r
}
"""
N = Polynomial.symbol("n")


@pytest.fixture(scope="module")
def read() -> dict[str, FunctionIR]:
    result = analyze_llvm_ir(SourceFile("/tmp/ccls-test/kernels.ll", KERNELS), AnalysisOptions(machine_code=False))
    assert result.errors == []
    return {fn.name: fn for fn in result.functions}


def _only_loop(fn: FunctionIR):
    (loop,) = fn.loops.values()
    return loop


def _memory(fn: FunctionIR) -> list[Instruction]:
    return [i for block in fn.blocks for i in block.instructions if i.access is not None]


def test_every_function_is_read_with_its_parameters(read):
    assert set(read) == {"fill", "scaled_sum", "column", "walk", "find", "collatz", "divide"}
    assert read["scaled_sum"].parameters == ["a", "scale", "n"] and read["walk"].language == "llvm-ir"


def test_a_constant_trip_count_and_a_unit_stride_store(read):
    loop = _only_loop(read["fill"])
    assert (loop.trip_count.kind, loop.trip_count.iterations) == ("constant", Polynomial.constant(100))
    (store,) = _memory(read["fill"])
    assert store.cls == "store" and store.access.pattern == "unit" and store.access.element_bytes == 8
    assert store.access.stride_bytes == Polynomial.constant(8)


def test_a_symbolic_trip_count_is_the_parameter_and_a_loop_invariant_load_is_told_apart(read):
    loop = _only_loop(read["scaled_sum"])
    assert (loop.trip_count.kind, loop.trip_count.iterations) == ("symbolic", N)
    stream, scale = _memory(read["scaled_sum"])
    assert stream.access.pattern == "unit" and scale.access.pattern == "invariant"
    assert stream.access.loop_strides == ((loop.id, Polynomial.constant(8)),)


def test_a_stride_of_512_doubles_is_4096_bytes_per_iteration(read):
    (load,) = _memory(read["column"])
    assert load.access.pattern == "strided" and load.access.stride_bytes == Polynomial.constant(4096)


def test_a_linked_list_walk_chases_pointers_and_runs_its_lists_length(read):
    loop = _only_loop(read["walk"])
    assert (loop.trip_count.kind, loop.trip_count.iterations) == ("data", Polynomial.symbol("len(head)"))
    assert [i.access.pattern for i in _memory(read["walk"])] == ["pointer-chase", "pointer-chase"]


def test_a_search_that_returns_early_runs_half_its_range_on_average(read):
    loop = _only_loop(read["find"])
    assert loop.trip_count.kind == "expected" and loop.trip_count.is_assumed
    assert loop.trip_count.iterations == N * Fraction(1, 2) + Fraction(1, 2)
    assert any("worst case n" in note for note in read["find"].assumptions)


def test_a_count_nothing_predicts_takes_the_default_and_says_so(read):
    loop = _only_loop(read["collatz"])
    default = AnalysisOptions().default_trip_count
    assert (loop.trip_count.kind, loop.trip_count.iterations) == ("unknown", Polynomial.constant(default))
    assert any("trip count unknown" in note and f"assuming {default}" in note for note in read["collatz"].assumptions)


def test_divisions_are_classified_by_their_divisor(read):
    divisions = {i.opcode: (i.cls, i.divisor) for block in read["divide"].blocks for i in block.instructions
                 if i.divisor is not None}
    assert divisions == {"sdiv": ("int_div", "loop-invariant"), "udiv": ("int_shift", "power-of-two")}


def test_what_the_reader_gives_counts_into_the_memory_tiers(read):
    at = {"n": 1e7}.__getitem__  # 80 MB of doubles: beyond the last cache
    summed = count_function(read["scaled_sum"], None, at).counts
    assert summed["load.stream"] == N * Fraction(8, 64)
    assert summed["load.L1"] == N + N * Fraction(56, 64)  # *scale every time, a[i] seven times a line
    assert count_function(read["column"], None, at).counts["load.DRAM.strided"] == N
    chased = count_function(read["walk"], None, {"len(head)": 1e6}.__getitem__).counts
    assert chased["load.DRAM.chase"] == 2 * Polynomial.symbol("len(head)")


def test_ir_that_does_not_parse_is_an_error_with_the_line_and_llvms_words():
    result = analyze_llvm_ir(SourceFile("/tmp/ccls-test/bad.ll", "define void @f( {\n"), AnalysisOptions())
    assert result.functions == []
    (error,) = result.errors
    assert error.file == "/tmp/ccls-test/bad.ll" and error.line == 2 and "expected type" in error.message


SWITCH_THEN_LOOP = r"""
declare void @log_kind(i32)

define void @f(i32 %k, ptr %a, i64 %n) !dbg !4 {
entry:
  switch i32 %k, label %loop [
    i32 0, label %zero
    i32 7, label %seven
  ], !dbg !10
zero:
  call void @log_kind(i32 3), !dbg !11
  br label %loop, !dbg !11
seven:
  call void @log_kind(i32 9), !dbg !12
  br label %loop, !dbg !12
loop:
  %i = phi i64 [ 0, %entry ], [ 0, %zero ], [ 0, %seven ], [ %i.next, %loop ]
  %p = getelementptr inbounds double, ptr %a, i64 %i, !dbg !13
  store double 1.0, ptr %p, !dbg !13
  %i.next = add nuw nsw i64 %i, 1, !dbg !14
  %done = icmp eq i64 %i.next, %n, !dbg !14
  br i1 %done, label %exit, label %loop, !dbg !14
exit:
  ret void, !dbg !15
}

!llvm.dbg.cu = !{!0}
!llvm.module.flags = !{!3}
!0 = distinct !DICompileUnit(language: DW_LANG_C11, file: !1, emissionKind: LineTablesOnly)
!1 = !DIFile(filename: "sw.c", directory: "/tmp")
!3 = !{i32 2, !"Debug Info Version", i32 3}
!4 = distinct !DISubprogram(name: "f", scope: !1, file: !1, line: 2, type: !5, unit: !0)
!5 = !DISubroutineType(types: !{})
!10 = !DILocation(line: 3, scope: !4)
!11 = !DILocation(line: 4, scope: !4)
!12 = !DILocation(line: 5, scope: !4)
!13 = !DILocation(line: 8, scope: !4)
!14 = !DILocation(line: 7, scope: !4)
!15 = !DILocation(line: 9, scope: !4)
"""


def test_lines_after_a_switch_are_the_instructions_own():
    """A switch's case lines are one instruction with it: the loop after it is at its own line
    (8, its first instruction with one), not shifted by the switch's cases."""
    result = analyze_llvm_ir(SourceFile("/tmp/ccls-test/sw.ll", SWITCH_THEN_LOOP), AnalysisOptions(machine_code=False))
    (fn,) = result.functions
    (loop,) = fn.loops.values()
    assert loop.line == 8
    assert [i.line for block in fn.blocks if block.name == "exit" for i in block.instructions] == [9]
