"""The text reader of LLVM modules (`ccls.readers.llvm.text`) on IR written here: names LLVM
quotes and escapes, phis, calls whose arguments nest brackets, metadata attachments and debug
records, multi-line switches; and, instruction by instruction, the same names, opcodes, types
and operands as llvmlite's own accessors give for the same module."""
from __future__ import annotations

import llvmlite.binding as llvm
import pytest

from ccls.readers.llvm.text import read_module

FUNCTION = r"""
@g = global [10 x i32] zeroinitializer, align 16
@0 = private unnamed_addr constant [4 x i8] c"a,b\00", align 1

; Function Attrs: nounwind
define i32 @"weird fn"(ptr noundef nonnull align 8 dereferenceable(16) %"a b", i32 %0) #0 !dbg !4 {
entry:
  %"x y" = load i32, ptr %"a b", align 4, !dbg !7, !tbaa !9
    #dbg_value(i32 %"x y", !11, !DIExpression(), !7)
  %"q\22uote" = add nsw i32 %"x y", %0, !dbg !7
  %pr = tail call i32 (ptr, ...) @printf(ptr @0, i32 range(i32 0, 10) %"q\22uote", ptr getelementptr inbounds (i8, ptr @g, i64 8)), !dbg !8
  call void @llvm.dbg.label(metadata !12)
  %c = icmp slt i32 %pr, 10
  br i1 %c, label %"then block", label %sw, !dbg !8

"then block":                                     ; preds = %entry
  br label %sw

sw:                                               ; preds = %"then block", %entry, %sw
  %p = phi i32 [ %pr, %entry ], [ 0, %"then block" ], [ %p, %sw ]
  switch i32 %p, label %done [
    i32 1, label %sw
    i32 2, label %done
  ], !dbg !13

done:                                             ; preds = %sw, %sw
  ret i32 %p
}
"""


@pytest.fixture(scope="module")
def weird():
    (fn,) = [f for f in read_module(FUNCTION).functions if not f.is_declaration]
    return fn, {i.name or i.opcode: i for _, instrs in fn.blocks for i in instrs}


def test_quoted_and_escaped_names_are_unquoted_as_llvm_keeps_them(weird):
    fn, by_name = weird
    assert fn.name == "weird fn" and fn.arguments == [("a b", "ptr"), ("", "i32")]  # %0 has no name
    assert [name for name, _ in fn.blocks] == ["entry", "then block", "sw", "done"]
    added = by_name['q"uote']
    assert added.opcode == "add" and added.type_text == "i32"
    assert [(op.name, op.type_text) for op in added.operands] == [("x y", "i32"), ("", "i32")]
    assert fn.predecessors["sw"] == ["then block", "entry", "sw"]


def test_debug_records_are_no_instructions_and_attachments_are_not_operands(weird):
    fn, by_name = weird
    load = by_name["x y"]
    assert load.dbg == "7" and [(op.name, op.type_text) for op in load.operands] == [("a b", "ptr")]
    assert [i.opcode for i in fn.blocks[0][1]] == ["load", "add", "call", "call", "icmp", "br"]
    assert fn.text.startswith("; Function Attrs: nounwind\ndefine i32 @\"weird fn\"(") and fn.text.endswith("}\n")


def test_a_call_with_nested_brackets_has_its_arguments_then_its_callee(weird):
    _, by_name = weird
    call = by_name["pr"]
    assert call.opcode == "call" and call.type_text == "i32" and call.dbg == "8"
    first, second, third, callee = call.operands
    assert (first.name, first.is_global_variable) == ("", True)  # @0: a global without a name
    assert second.name == 'q"uote'  # the range(…) attribute, commas and all, is skipped
    assert (third.name, third.text) == ("", "ptr getelementptr inbounds (i8, ptr @g, i64 8)")
    assert (callee.name, callee.is_global_variable) == ("printf", False)
    label, intrinsic = by_name["call"].operands
    assert (label.name, label.type_text, label.text) == ("", "metadata", "metadata !12")
    assert intrinsic.name == "llvm.dbg.label"


def test_a_branch_lists_its_false_target_before_its_true_one(weird):
    fn, _ = weird
    (branch,) = [i for i in fn.blocks[0][1] if i.opcode == "br"]
    assert [(op.name, op.type_text) for op in branch.operands] == [("c", "i1"), ("sw", "label"), ("then block", "label")]


def test_phis_and_switches_have_llvms_operands(weird):
    _, by_name = weird
    assert [(op.name, op.text) for op in by_name["p"].operands] == [
        ("pr", by_name["pr"].text), ("", "i32 0"), ("p", by_name["p"].text)]
    switch = by_name["switch"]
    assert "\n    i32 2, label %done\n  ]" in switch.text and switch.dbg == "13"
    assert [op.name for op in switch.operands] == ["p", "done", "sw", "done"]  # case values are no operands


EXOTIC = r"""
%struct.S = type { i32, [4 x i16], { double, ptr } }
@g = global [10 x i32] zeroinitializer, align 16
@tl = thread_local global i32 0
@al = alias i32, ptr @g

declare i32 @__gxx_personality_v0(...)
declare void @may_throw(i32)
declare void @llvm.memcpy.p0.p0.i64(ptr noalias nocapture writeonly, ptr noalias nocapture readonly, i64, i1 immarg)
declare <4 x double> @llvm.masked.gather.v4f64.v4p0(<4 x ptr>, i32 immarg, <4 x i1>, <4 x double>)
declare void @llvm.assume(i1)

define i32 @f(ptr %a, <4 x i64> %idx, i32 %k) personality ptr @__gxx_personality_v0 {
entry:
  %v = getelementptr inbounds double, ptr %a, <4 x i64> %idx
  %gv = call <4 x double> @llvm.masked.gather.v4f64.v4p0(<4 x ptr> %v, i32 8, <4 x i1> <i1 true, i1 true, i1 false, i1 true>, <4 x double> poison)
  %e = extractelement <4 x double> %gv, i64 2
  %sh = shufflevector <4 x double> %gv, <4 x double> poison, <8 x i32> zeroinitializer
  %vc = fcmp fast olt <4 x double> %gv, %sh2
  %sh2 = shufflevector <4 x double> %gv, <4 x double> %gv, <4 x i32> <i32 0, i32 5, i32 2, i32 7>
  %sel = select <4 x i1> %vc, <4 x double> %gv, <4 x double> %sh2
  %s = alloca %struct.S, align 8
  %n = alloca i32, i64 4, align 16
  %sv = load %struct.S, ptr %s, align 8
  %inner = extractvalue %struct.S %sv, 2, 1
  %sv2 = insertvalue %struct.S %sv, i32 4, 0
  call void @llvm.memcpy.p0.p0.i64(ptr align 4 %n, ptr getelementptr inbounds (i8, ptr @g, i64 8), i64 16, i1 false)
  %rmw = atomicrmw add ptr @al, i32 1 syncscope("singlethread") seq_cst, align 4
  %cx = cmpxchg weak volatile ptr %n, i32 %rmw, i32 2 acq_rel monotonic, align 4
  %cxv = extractvalue { i32, i1 } %cx, 0
  %la = load atomic i32, ptr @tl acquire, align 4
  %pi = ptrtoint ptr getelementptr inbounds (i8, ptr @g, i64 4) to i64
  %tr = trunc nuw i64 %pi to i32
  %d = udiv i32 %tr, 8
  call void @llvm.assume(i1 true) [ "align"(ptr %a, i64 8), "nonnull"(ptr %s) ]
  %asm = call i32 asm "mov $1, $0", "=r,r"(i32 %d)
  invoke void @may_throw(i32 %asm)
          to label %ok unwind label %lpad
ok:
  switch i32 %k, label %done [
    i32 1, label %done
  ]
lpad:
  %lp = landingpad { ptr, i32 }
          cleanup
          catch ptr @g
  resume { ptr, i32 } %lp
done:
  %r = phi i32 [ %d, %ok ], [ %la, %ok ]
  ret i32 %r
}
"""


def test_every_instruction_reads_as_llvmlite_reads_it():
    """The reader's contract: what llvmlite's accessors would give, without asking them."""
    parsed = llvm.parse_assembly(EXOTIC)
    ours = read_module(str(parsed))
    theirs = [f for f in parsed.functions]
    assert [(f.name, f.is_declaration) for f in ours.functions] == [(f.name, f.is_declaration) for f in theirs]
    (fn,) = [f for f in ours.functions if not f.is_declaration]
    (ref,) = [f for f in theirs if not f.is_declaration]
    assert fn.arguments == [(a.name, str(a.type)) for a in ref.arguments]
    assert [name for name, _ in fn.blocks] == [b.name for b in ref.blocks]
    compared = 0
    for (_, instrs), block in zip(fn.blocks, ref.blocks):
        expected = list(block.instructions)
        assert len(instrs) == len(expected)
        for mine, llvms in zip(instrs, expected):
            assert (mine.name, mine.opcode, mine.type_text, mine.text) == \
                (llvms.name, llvms.opcode, str(llvms.type), str(llvms).strip())
            operands = list(llvms.operands)
            assert [(op.name, op.type_text) for op in mine.operands] == [(o.name, str(o.type)) for o in operands]
            assert [op.is_global_variable for op in mine.operands] == \
                [o.value_kind == llvm.ValueKind.global_variable for o in operands]
            assert [str(op) for op in mine.operands if not op.name and op.type_text not in ("label",)] == \
                [str(o).strip() for o in operands if not o.name and str(o.type) != "label"]
            compared += 1
    assert compared == 28
