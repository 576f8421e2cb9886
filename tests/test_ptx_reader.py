"""PTX reader: classification, memory patterns, loops and trip counts, source lines, robustness.

Inputs are inline PTX: hand-written snippets and nvcc 13.0 output for the kernels in examples/.
"""
from __future__ import annotations

import random
from fractions import Fraction
from typing import get_args

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ccls.frontends import SourceFile
from ccls.frontends.ptx import analyze_ptx
from ccls.model import TripKind
from ccls.options import AnalysisOptions
from ccls.polynomial import Polynomial
from ccls.readers.ptx import Launch, arch_for_target, demangle_simple, read_ptx

n = Polynomial.symbol("n")
PER_THREAD = ("costs are per thread: counts are one thread's executed instructions and each warp instruction's "
              "cost is shared by its 32 lanes (cost / 32); launch configuration unknown")


def one(text: str, **kwargs):
    functions, errors = read_ptx(text, "k.ptx", **kwargs)
    assert errors == []
    assert len(functions) == 1
    return functions[0]


def classes(fn) -> list[str]:
    return [i.cls for b in fn.blocks for i in b.instructions]


def by_opcode(fn) -> dict[str, object]:
    return {i.opcode: i for b in fn.blocks for i in b.instructions}


def kernel(body: str, params: str = ".param .u64 k_param_0, .param .u32 k_param_1", target: str = "sm_80") -> str:
    return f""".version 8.0
.target {target}
.address_size 64

.visible .entry k({params})
{{
	.reg .pred %p<9>;
	.reg .b16 %rs<9>;
	.reg .b32 %r<99>;
	.reg .f32 %f<99>;
	.reg .f64 %fd<9>;
	.reg .b64 %rd<99>;
{body}
}}
"""


# --- classification -------------------------------------------------------------------------------

CLASSIFIED = [
    ("add.f32 %f1, %f2, %f3;", "fp_add.f32"),
    ("sub.rn.f64 %fd1, %fd2, %fd3;", "fp_add.f64"),
    ("mul.rn.f32 %f1, %f2, %f3;", "fp_mul.f32"),
    ("fma.rn.f64 %fd1, %fd2, %fd3, %fd4;", "fp_fma.f64"),
    ("add.f16 %rs1, %rs2, %rs3;", "fp_add.f16"),
    ("add.f16x2 %r1, %r2, %r3;", "fp_add.f16@v32"),
    ("fma.rn.f16x2 %r1, %r2, %r3, %r4;", "fp_fma.f16@v32"),
    ("fma.rn.bf16 %rs1, %rs2, %rs3, %rs4;", "fp_fma.bf16"),
    ("mul.lo.s32 %r1, %r2, %r3;", "int_mul"),
    ("mad.lo.s32 %r1, %r2, %r3, %r4;", "int_mul"),
    ("mul.wide.s32 %rd1, %r2, 4;", "int_mul"),
    ("add.s32 %r1, %r2, 1;", "int_add"),
    ("add.u64 %rd1, %rd2, %rd3;", "int_add"),
    ("and.b32 %r1, %r2, 3;", "int_logic"),
    ("xor.b32 %r1, %r2, %r3;", "int_logic"),
    ("shl.b32 %r1, %r2, 2;", "int_shift"),
    ("shr.u32 %r1, %r2, 1;", "int_shift"),
    ("setp.lt.s32 %p1, %r1, %r2;", "int_cmp"),
    ("setp.geu.f32 %p1, %f1, %f2;", "fp_add.f32"),
    ("div.s32 %r1, %r2, %r3;", "int_div"),
    ("rem.u64 %rd1, %rd2, %rd3;", "int_div"),
    ("div.rn.f32 %f1, %f2, %f3;", "fp_div.f32"),
    ("div.approx.f32 %f1, %f2, %f3;", "fp_div.f32"),
    ("div.rn.f64 %fd1, %fd2, %fd3;", "fp_div.f64"),
    ("sqrt.rn.f32 %f1, %f2;", "fp_sqrt.f32"),
    ("sqrt.approx.f32 %f1, %f2;", "sfu"),
    ("rcp.rn.f64 %fd1, %fd2;", "fp_div.f64"),
    ("rcp.approx.ftz.f32 %f1, %f2;", "sfu"),
    ("rsqrt.approx.f32 %f1, %f2;", "sfu"),
    ("ex2.approx.f32 %f1, %f2;", "sfu"),
    ("sin.approx.f32 %f1, %f2;", "sfu"),
    ("tanh.approx.f32 %f1, %f2;", "sfu"),
    ("cvt.rn.f32.s32 %f1, %r1;", "convert"),
    ("cvta.to.global.u64 %rd1, %rd2;", "address"),
    ("selp.b32 %r1, %r2, %r3, %p1;", "select"),
    ("mov.u32 %r1, %tid.x;", "other"),
    ("ld.param.u64 %rd1, [k_param_0];", "load.param"),
    ("ld.global.f32 %f1, [%rd1];", "load.global"),
    ("ld.global.nc.v4.f32 {%f1, %f2, %f3, %f4}, [%rd1];", "load.global@v128"),
    ("ld.shared.f32 %f1, [%r1];", "load.shared"),
    ("ld.local.u32 %r1, [%rd1];", "load.local"),
    ("ld.const.f32 %f1, [%rd1];", "load.const"),
    ("ld.f32 %f1, [%rd1];", "load.generic"),
    ("st.global.f32 [%rd1], %f1;", "store.global"),
    ("st.shared.v2.f64 [%r1], {%fd1, %fd2};", "store.shared@v128"),
    ("atom.global.add.f32 %f1, [%rd1], %f2;", "atomic.global"),
    ("atom.shared.add.u32 %r1, [%r2], 1;", "atomic.shared"),
    ("red.global.add.f32 [%rd1], %f2;", "atomic.global"),
    ("bar.sync 0;", "barrier"),
    ("barrier.sync 0;", "barrier"),
    ("bar.warp.sync -1;", "barrier"),
    ("membar.gl;", "fence"),
    ("fence.acq_rel.gpu;", "fence"),
    ("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f1, %f2, %f3, %f4}, {%r1, %r2, %r3, %r4}, "
     "{%r5, %r6}, {%f5, %f6, %f7, %f8};", "mma.f16"),
    ("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%f1, %f2, %f3, %f4}, {%r1, %r2, %r3, %r4}, "
     "{%r5, %r6}, {%f5, %f6, %f7, %f8};", "mma.bf16"),
    ("wmma.mma.sync.aligned.row.col.m16n16k16.f32.f32 {%f1, %f2, %f3, %f4, %f5, %f6, %f7, %f8}, "
     "{%r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8}, {%r9, %r10, %r11, %r12, %r13, %r14, %r15, %r16}, "
     "{%f9, %f10, %f11, %f12, %f13, %f14, %f15, %f16};", "mma.f16"),
    ("wmma.load.a.sync.aligned.row.m16n16k16.global.f16 {%r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8}, [%rd1], %r9;",
     "load.global@v256"),
    ("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r1, %r2, %r3, %r4}, [%r5];", "load.shared@v128"),
    ("call.uni (retval0), helper, (param0);", "call"),
    ("vote.sync.any.pred %p1, %p2, -1;", "other"),
    ("ret;", "return"),
]


def test_classification_by_precision_state_space_and_family():
    body = "\n".join("\t" + instr for instr, _ in CLASSIFIED)
    fn = one(kernel(body))
    assert classes(fn) == [cls for _, cls in CLASSIFIED]
    call = next(i for b in fn.blocks for i in b.instructions if i.cls == "call")
    assert call.callee == "helper"
    assert call.opcode == "call.uni"


def test_vector_and_atomic_accesses_carry_space_and_bytes():
    fn = one(kernel("""
	ld.global.nc.v4.f32 {%f1, %f2, %f3, %f4}, [%rd1];
	atom.shared.add.u32 %r1, [%r2], 1;
	ld.global.u16 %rs1, [%rd2];
	ret;"""))
    ops = by_opcode(fn)
    assert (ops["ld.global.nc.v4.f32"].access.space, ops["ld.global.nc.v4.f32"].access.element_bytes) == ("global", 16)
    assert (ops["atom.shared.add.u32"].access.space, ops["atom.shared.add.u32"].access.element_bytes) == ("shared", 4)
    assert ops["ld.global.u16"].access.element_bytes == 2


# --- nvcc 13.0 output for examples/saxpy.cu (grid-stride loop) ----------------------------------

SAXPY = """//
// Generated by NVIDIA NVVM Compiler
//
.version 9.0
.target sm_80
.address_size 64

	// .globl	_Z5saxpyifPKfPf

.visible .entry _Z5saxpyifPKfPf(
	.param .u32 _Z5saxpyifPKfPf_param_0,
	.param .f32 _Z5saxpyifPKfPf_param_1,
	.param .u64 _Z5saxpyifPKfPf_param_2,
	.param .u64 _Z5saxpyifPKfPf_param_3
)
{
	.reg .pred 	%p<3>;
	.reg .f32 	%f<5>;
	.reg .b32 	%r<11>;
	.reg .b64 	%rd<8>;
	.loc	1 2 0


	ld.param.u32 	%r6, [_Z5saxpyifPKfPf_param_0];
	ld.param.f32 	%f1, [_Z5saxpyifPKfPf_param_1];
	ld.param.u64 	%rd3, [_Z5saxpyifPKfPf_param_2];
	ld.param.u64 	%rd4, [_Z5saxpyifPKfPf_param_3];
	.loc	1 4 5
	mov.u32 	%r1, %ntid.x;
	mov.u32 	%r7, %ctaid.x;
	mov.u32 	%r8, %tid.x;
	mad.lo.s32 	%r10, %r7, %r1, %r8;
	setp.ge.s32 	%p1, %r10, %r6;
	@%p1 bra 	$L__BB0_3;

	.loc	1 4 64
	mov.u32 	%r9, %nctaid.x;
	mul.lo.s32 	%r3, %r1, %r9;
	.loc	1 4 5
	cvta.to.global.u64 	%rd1, %rd3;
	cvta.to.global.u64 	%rd2, %rd4;

$L__BB0_2:
	.loc	1 5 9
	mul.wide.s32 	%rd5, %r10, 4;
	add.s64 	%rd6, %rd1, %rd5;
	ld.global.f32 	%f2, [%rd6];
	add.s64 	%rd7, %rd2, %rd5;
	ld.global.f32 	%f3, [%rd7];
	fma.rn.f32 	%f4, %f2, %f1, %f3;
	st.global.f32 	[%rd7], %f4;
	.loc	1 4 64
	add.s32 	%r10, %r10, %r3;
	.loc	1 4 5
	setp.lt.s32 	%p2, %r10, %r6;
	@%p2 bra 	$L__BB0_2;

$L__BB0_3:
	.loc	1 7 1
	ret;

}

	.file	1 "/src/saxpy.cu"
"""

SAXPY_PARAMS = {"_Z5saxpyifPKfPf": ["n", "a", "x", "y"]}
# saxpy<<<64, 256>>> and saxpy<<<(n + 255) / 256, 256>>>, as ccls.frontends.cuda finds them
LITERAL_LAUNCH = Launch(12, "64", "256", (64, 1, 1), (256, 1, 1))
SYMBOLIC_LAUNCH = Launch(13, "(n + 255) / 256", "256", (None, None, None), (256, 1, 1))


def test_saxpy_blocks_loop_and_grid_stride_trip_count_per_thread():
    fn = one(SAXPY, loc_files=["/src/saxpy.cu"], parameter_names=SAXPY_PARAMS)
    assert (fn.name, fn.display_name, fn.arch, fn.parameters) == ("_Z5saxpyifPKfPf", "saxpy", "nvptx-sm80",
                                                                   ["n", "a", "x", "y"])
    assert [b.name for b in fn.blocks] == ["%bb.0", "%bb.1", "$L__BB0_2", "$L__BB0_3"]
    assert [b.loop for b in fn.blocks] == [None, None, "$L__BB0_2", None]
    (loop,) = fn.loops.values()
    assert (loop.id, loop.parent, loop.depth, loop.line) == ("$L__BB0_2", None, 1, 4)
    # Step gridDim·blockDim: each thread runs n/(gridDim.x·blockDim.x) iterations; with no launch
    # in sight, one per thread is assumed, and said.
    assert (loop.trip_count.kind, loop.trip_count.iterations) == ("unknown", Polynomial.constant(1))
    assert "setp.lt.s32 %p2, %r10, %r6" in loop.trip_count.source_text
    unit, stride = fn.assumptions
    assert unit.startswith("costs are per thread") and unit.endswith("launch configuration unknown")
    assert stride == ("loop at line 4 ($L__BB0_2): stride loop (step gridDim.x·blockDim.x): each thread runs about "
                      "n/(gridDim.x·blockDim.x) iterations; launch configuration unknown, so 1 per thread is "
                      "assumed (at least n threads along the stride, as a `<<<(n + B - 1) / B, B>>>` launch has)")
    assert "ld.global.f32" in fn.ir_text and fn.ir_text.startswith(".visible .entry _Z5saxpyifPKfPf(")


def test_grid_stride_loop_with_a_literal_launch_is_the_per_thread_share():
    fn = one(SAXPY, loc_files=["/src/saxpy.cu"], parameter_names=SAXPY_PARAMS,
             launches={"_Z5saxpyifPKfPf": [LITERAL_LAUNCH, LITERAL_LAUNCH]})
    (loop,) = fn.loops.values()
    # 64 blocks x 256 threads share n iterations: n/16384 each, on average.
    assert (loop.trip_count.kind, loop.trip_count.iterations) == ("symbolic", n * Fraction(1, 16384))
    unit, stride = fn.assumptions
    assert unit.endswith("launched as <<<64, 256>>> at line 12 and 1 more line(s): 16384 threads, so one launch "
                         "costs 16384 × these figures")
    assert "step gridDim.x·blockDim.x = 16384 from the launch" in stride


def test_symbolic_or_conflicting_launches_leave_the_stride_assumed_and_say_so():
    fn = one(SAXPY, parameter_names=SAXPY_PARAMS, launches={"_Z5saxpyifPKfPf": [SYMBOLIC_LAUNCH]})
    assert fn.loops["$L__BB0_2"].trip_count.kind == "unknown"
    assert fn.assumptions[0].endswith("launched as <<<(n + 255) / 256, 256>>> at line 13: one launch costs "
                                      "(gridDim·blockDim threads = ((n + 255) / 256)·(256)) × these figures")
    fn = one(SAXPY, parameter_names=SAXPY_PARAMS, launches={"_Z5saxpyifPKfPf": [LITERAL_LAUNCH, SYMBOLIC_LAUNCH]})
    assert fn.loops["$L__BB0_2"].trip_count.iterations == Polynomial.constant(1)
    assert fn.assumptions[0].endswith("launched with different configurations (<<<64, 256>>> at line 12, "
                                      "<<<(n + 255) / 256, 256>>> at line 13), so the launch size is unknown")


def test_saxpy_memory_accesses_are_coalesced_and_params_invariant():
    fn = one(SAXPY, loc_files=["/src/saxpy.cu"])
    accesses = [(i.opcode, i.access.pattern, i.access.space) for b in fn.blocks for i in b.instructions if i.access]
    assert accesses == [("ld.param.u32", "invariant", "param"), ("ld.param.f32", "invariant", "param"),
                        ("ld.param.u64", "invariant", "param"), ("ld.param.u64", "invariant", "param"),
                        ("ld.global.f32", "unit", "global"), ("ld.global.f32", "unit", "global"),
                        ("st.global.f32", "unit", "global")]


def test_parameters_without_source_names_and_loc_lines():
    fn = one(SAXPY, loc_files=["/src/saxpy.cu"])
    assert fn.parameters == ["param_0", "param_1", "param_2", "param_3"]
    fn = one(SAXPY, loc_files=["/src/saxpy.cu"], launches={"_Z5saxpyifPKfPf": [LITERAL_LAUNCH]})
    assert fn.loops["$L__BB0_2"].trip_count.iterations == Polynomial.symbol("param_0") * Fraction(1, 16384)
    assert (fn.line, fn.end_line) == (2, 7)
    assert by_opcode(fn)["fma.rn.f32"].line == 5
    assert by_opcode(fn)["ret"].line == 7


def test_without_loc_files_lines_are_ptx_lines():
    fn = one(SAXPY)
    lines = SAXPY.splitlines()
    fma = by_opcode(fn)["fma.rn.f32"]
    assert "fma.rn.f32" in lines[fma.line - 1]
    assert lines[fn.line - 1].startswith(".visible .entry") and lines[fn.end_line - 1] == "}"


def test_loc_lines_follow_inlined_at_and_skip_other_files():
    fn = one(kernel("""
	.loc 1 10 3
	add.s32 %r1, %r2, 1;
	.loc 2 50 1, function_name $L__info_string0, inlined_at 1 12 5
	mul.lo.s32 %r3, %r1, %r1;
	.loc 2 60 1
	shl.b32 %r4, %r3, 1;
	.loc 1 0 0
	xor.b32 %r5, %r4, 1;
	.loc 1 14 1
	ret;
""") + '\t.file 1 "/src/k.cu"\n\t.file 2 "/usr/include/helper.h"\n', loc_files=["/src/./k.cu"])
    assert [i.line for b in fn.blocks for i in b.instructions] == [10, 12, 12, None, 14]
    assert (fn.line, fn.end_line) == (10, 14)


# --- loops ----------------------------------------------------------------------------------------

DIV_LOOP = kernel("""
	ld.param.u64 %rd1, [k_param_0];
	ld.param.u32 %r1, [k_param_1];
	ld.param.f32 %f1, [k_param_2];
	cvta.to.global.u64 %rd2, %rd1;
	mov.u32 %r2, 0;
$L_head:
	setp.ge.s32 %p1, %r2, %r1;
	@%p1 bra $L_done;
	mul.wide.s32 %rd3, %r2, 4;
	add.s64 %rd4, %rd2, %rd3;
	ld.global.f32 %f2, [%rd4];
	div.rn.f32 %f3, %f2, %f1;
	st.global.f32 [%rd4], %f3;
	add.s32 %r2, %r2, 1;
	bra.uni $L_head;
$L_done:
	ret;
""", params=".param .u64 k_param_0, .param .u32 k_param_1, .param .f32 k_param_2")


def test_while_shaped_loop_with_division_is_symbolic_in_the_parameter():
    fn = one(DIV_LOOP, parameter_names={"k": ["a", "n", "d"]})
    loop = fn.loops["$L_head"]
    # The header test runs n + 1 times: n iterations of the body and the failing test.
    assert loop.trip_count.kind == "symbolic"
    assert loop.trip_count.iterations == n + 1
    body = next(b for b in fn.blocks if b.loop == "$L_head" and any(i.cls == "fp_div.f32" for i in b.instructions))
    assert body.name != "$L_head"
    load = by_opcode(fn)["ld.global.f32"]
    assert (load.access.pattern, load.access.stride_bytes) == ("unit", Polynomial.constant(4))
    assert fn.assumptions == [PER_THREAD]


def test_triangular_nest_uses_the_outer_index():
    fn = one(kernel("""
	ld.param.u32 %r10, [k_param_1];
	mov.u32 %r1, 0;
$L_outer:
	mov.u32 %r2, 0;
$L_inner:
	setp.ge.s32 %p1, %r2, %r1;
	@%p1 bra $L_inner_done;
	add.f32 %f1, %f1, 0f3F800000;
	add.s32 %r2, %r2, 1;
	bra.uni $L_inner;
$L_inner_done:
	add.s32 %r1, %r1, 1;
	setp.lt.s32 %p2, %r1, %r10;
	@%p2 bra $L_outer;
	ret;
"""), parameter_names={"k": ["a", "n"]})
    outer, inner = fn.loops["$L_outer"], fn.loops["$L_inner"]
    assert (outer.depth, outer.parent, inner.depth, inner.parent) == (1, None, 2, "$L_outer")
    assert outer.trip_count.iterations == n and outer.trip_count.kind == "symbolic"
    assert inner.trip_count.iterations == Polynomial.symbol("@$L_outer") + 1
    assert inner.trip_count.kind == "symbolic"
    assert [b.loop for b in fn.blocks] == [None, "$L_outer", "$L_inner", "$L_inner", "$L_outer", None]


def test_unknown_trip_count_uses_the_default_and_says_so():
    fn = one(kernel("""
	ld.param.u64 %rd1, [k_param_0];
	ld.global.u32 %r1, [%rd1];
	mov.u32 %r2, 0;
$L_loop:
	add.s32 %r2, %r2, 1;
	setp.lt.s32 %p1, %r2, %r1;
	@%p1 bra $L_loop;
	ret;
"""), default_trip_count=77)
    loop = fn.loops["$L_loop"]
    assert loop.trip_count.kind == "unknown"
    assert loop.trip_count.iterations == Polynomial.constant(77)
    assert loop.trip_count.source_text.startswith("setp.lt.s32 %p1, %r2, %r1")
    unit, note = fn.assumptions
    assert unit.startswith("costs are per thread")
    assert "$L_loop" in note and "unknown" in note and "77" in note


def test_constant_loop_and_indirect_access():
    fn = one(kernel("""
	ld.param.u64 %rd1, [k_param_0];
	mov.u32 %r1, 5;
$L_loop:
	ld.global.u32 %r2, [%rd1];
	mul.wide.u32 %rd2, %r2, 4;
	add.s64 %rd3, %rd1, %rd2;
	ld.global.f32 %f1, [%rd3];
	add.s32 %r1, %r1, 3;
	setp.lt.u32 %p1, %r1, 20;
	@%p1 bra $L_loop;
	ret;
"""))
    loop = fn.loops["$L_loop"]
    # r1 = 5, 8, 11, 14, 17 when the body runs; the test after the add fails at 20.
    assert (loop.trip_count.kind, loop.trip_count.iterations) == ("constant", Polynomial.constant(5))
    patterns = [i.access.pattern for b in fn.blocks for i in b.instructions if i.access and i.access.space == "global"]
    assert patterns == ["invariant", "indirect"]


def test_shift_loop_of_a_tree_reduction_is_simulated():
    fn = one(kernel("""
	mov.u32 %r1, %tid.x;
	mov.u32 %r14, 128;
$L__BB0_3:
	setp.ge.u32 %p2, %r1, %r14;
	@%p2 bra $L__BB0_5;
	add.f32 %f1, %f1, %f2;
$L__BB0_5:
	bar.sync 0;
	shr.u32 %r14, %r14, 1;
	setp.ne.s32 %p3, %r14, 0;
	@%p3 bra $L__BB0_3;
	ret;
"""))
    loop = fn.loops["$L__BB0_3"]
    assert (loop.trip_count.kind, loop.trip_count.iterations) == ("constant", Polynomial.constant(8))
    assert "barrier" in [i.cls for b in fn.blocks if b.loop == "$L__BB0_3" for i in b.instructions]


# nvcc -O3 for `for (s = blockDim.x / 2; s > 0; s >>= 1)` (a tree reduction over the block).
BLOCK_TREE = kernel("""
	mov.u32 %r1, %ntid.x;
	mov.u32 %r3, %tid.x;
	shr.u32 %r20, %r1, 1;
	setp.eq.s32 %p4, %r20, 0;
	@%p4 bra $L__BB0_9;
$L__BB0_6:
	setp.ge.u32 %p5, %r3, %r20;
	@%p5 bra $L__BB0_8;
	add.f32 %f1, %f1, %f2;
$L__BB0_8:
	bar.sync 0;
	shr.u32 %r20, %r20, 1;
	setp.ne.s32 %p6, %r20, 0;
	@%p6 bra $L__BB0_6;
$L__BB0_9:
	ret;
""")


def test_a_tree_reduction_from_the_block_size_runs_log2_of_it():
    loop = one(BLOCK_TREE).loops["$L__BB0_6"]
    # blockDim/2, blockDim/4, …, 1: log2(blockDim.x) iterations, named after the block size.
    assert (loop.trip_count.kind, loop.trip_count.iterations) == ("symbolic", Polynomial.symbol("log2(blockDim.x)"))
    launched = one(BLOCK_TREE, launches={"k": [LITERAL_LAUNCH]}).loops["$L__BB0_6"]
    assert (launched.trip_count.kind, launched.trip_count.iterations) == ("constant", Polynomial.constant(8))


def test_a_warp_reduction_from_warp_size_halving_by_signed_division_is_simulated():
    # `for (int offset = warpSize / 2; offset > 0; offset /= 2)`, nvcc 13.0 -O3: WARP_SZ is 32,
    # and the signed division is (r + (r >>u 31)) >> 1.
    fn = one(kernel("""
	mov.u32 %r11, WARP_SZ;
	setp.lt.s32 %p1, %r11, 2;
	@%p1 bra $L__BB0_2;
$L__BB0_1:
	shr.u32 %r6, %r11, 31;
	add.s32 %r7, %r11, %r6;
	shr.s32 %r3, %r7, 1;
	add.f32 %f7, %f7, %f5;
	setp.gt.s32 %p3, %r11, 3;
	mov.u32 %r11, %r3;
	@%p3 bra $L__BB0_1;
$L__BB0_2:
	ret;
"""))
    loop = fn.loops["$L__BB0_1"]
    assert (loop.trip_count.kind, loop.trip_count.iterations) == ("constant", Polynomial.constant(5))  # 16, 8, 4, 2, 1


def test_a_doubling_loop_up_to_a_parameter_runs_log2_of_it():
    fn = one(kernel("""
	ld.param.u32 %r1, [k_param_1];
	mov.u32 %r19, 1;
$L__BB0_2:
	shl.b32 %r6, %r19, 1;
	add.f32 %f1, %f1, %f2;
	setp.lt.u32 %p3, %r6, %r1;
	mov.u32 %r19, %r6;
	@%p3 bra $L__BB0_2;
	ret;
"""), parameter_names={"k": ["data", "n"]})
    loop = fn.loops["$L__BB0_2"]
    assert (loop.trip_count.kind, loop.trip_count.iterations) == ("symbolic", Polynomial.symbol("log2(n)"))


def test_a_loop_over_the_block_size_is_named_after_it_or_takes_the_launch_value():
    body = """
	mov.u32 %r1, %ntid.x;
	mov.u32 %r2, 0;
$L__BB0_1:
	add.f32 %f1, %f1, %f2;
	add.s32 %r2, %r2, 1;
	setp.lt.u32 %p1, %r2, %r1;
	@%p1 bra $L__BB0_1;
	ret;
"""
    fn = one(kernel(body))
    assert fn.loops["$L__BB0_1"].trip_count.iterations == Polynomial.symbol("blockDim.x")
    assert any("blockDim.x not given by a launch in this file: a named size (set it with --param blockDim.x=…)" in a
               for a in fn.assumptions)
    launched = one(kernel(body), launches={"k": [LITERAL_LAUNCH]}).loops["$L__BB0_1"]
    assert (launched.trip_count.kind, launched.trip_count.iterations) == ("constant", Polynomial.constant(256))


# nvcc -O3 unrolls `for (j = 0; j < n; ++j)` by 4: a main loop counting n - (n & 3) down by 4
# and a remainder loop counting n & 3 down by 1 (from examples/row_normalize.cu, abridged).
UNROLLED = kernel("""
	ld.param.u64 %rd20, [k_param_0];
	ld.param.u32 %r20, [k_param_1];
	cvta.to.global.u64 %rd2, %rd20;
	setp.lt.s32 %p2, %r20, 1;
	@%p2 bra $L__BB0_8;
	add.s32 %r26, %r20, -1;
	and.b32 %r38, %r20, 3;
	setp.lt.u32 %p3, %r26, 3;
	mov.u32 %r37, 0;
	@%p3 bra $L__BB0_5;
	sub.s32 %r36, %r20, %r38;
	mov.u64 %rd27, %rd2;
	mov.u32 %r37, 0;
$L__BB0_4:
	ld.global.f32 %f13, [%rd27];
	div.rn.f32 %f14, %f13, %f1;
	ld.global.f32 %f15, [%rd27+4];
	div.rn.f32 %f16, %f15, %f1;
	ld.global.f32 %f17, [%rd27+8];
	div.rn.f32 %f18, %f17, %f1;
	ld.global.f32 %f19, [%rd27+12];
	div.rn.f32 %f20, %f19, %f1;
	add.s32 %r37, %r37, 4;
	add.s64 %rd27, %rd27, 16;
	add.s32 %r36, %r36, -4;
	setp.ne.s32 %p4, %r36, 0;
	@%p4 bra $L__BB0_4;
$L__BB0_5:
	setp.eq.s32 %p5, %r38, 0;
	@%p5 bra $L__BB0_8;
$L__BB0_7:
	.pragma "nounroll";
	div.rn.f32 %f21, %f21, %f1;
	add.s32 %r38, %r38, -1;
	setp.ne.s32 %p6, %r38, 0;
	@%p6 bra $L__BB0_7;
$L__BB0_8:
	ret;
""")


def test_unrolled_loops_take_the_remainder_at_its_mean():
    fn = one(UNROLLED, parameter_names={"k": ["a", "n"]})
    main, rest = fn.loops["$L__BB0_4"], fn.loops["$L__BB0_7"]
    # n & 3 is taken as its mean 1.5, as the LLVM reader takes a value modulo 4: the main loop runs
    # E[floor(n / 4)] = (n - 1.5) / 4 times, the remainder loop 1.5 times; together about n / 4 + 1.5.
    assert (main.trip_count.kind, main.trip_count.iterations) == ("symbolic", (n - Fraction(3, 2)) * Fraction(1, 4))
    assert (rest.trip_count.kind, rest.trip_count.iterations) == ("constant", Polynomial.constant(Fraction(3, 2)))
    assert "(n & 3)" in main.trip_count.source_text
    assert fn.assumptions[1:] == [
        "loop at line 39 ($L__BB0_4): (n & 3) taken as its mean 1.5 (the expected value): 0.25·n - 0.375 "
        "iterations (exact: -0.25·(n & 3) + 0.25·n)",
        "loop at line 48 ($L__BB0_7): (n & 3) taken as its mean 1.5 (the expected value): 1.5 iterations "
        "(exact: (n & 3))"]
    strided = by_opcode(fn)["ld.global.f32"].access
    assert (strided.pattern, strided.stride_bytes) == ("strided", Polynomial.constant(16))


def test_division_by_a_constant_in_the_bound_takes_the_mean_like_the_llvm_reader():
    # for (i = 0; i < n / 4; ++i): n >> 2 = n/4 - frac(n/4), frac in [0, 3/4], mean 3/8, so the
    # loop runs E[floor(n / 4)] = (n - 1.5) / 4 times, the LLVM reader's `/u` rule.
    fn = one(kernel("""
	ld.param.u32 %r1, [k_param_1];
	shr.u32 %r3, %r1, 2;
	mov.u32 %r2, 0;
$L_loop:
	add.s32 %r2, %r2, 1;
	setp.lt.u32 %p1, %r2, %r3;
	@%p1 bra $L_loop;
	ret;
"""), parameter_names={"k": ["a", "n"]})
    trip = fn.loops["$L_loop"].trip_count
    assert (trip.kind, trip.iterations) == ("symbolic", (n - Fraction(3, 2)) * Fraction(1, 4))
    assert "frac(n/4) taken as its mean 0.375" in fn.assumptions[1]


@pytest.mark.parametrize("policy, kind, iterations", [("expected", "expected", (n + 1) * Fraction(1, 2)),
                                                     ("worst", "bounded", n)])
def test_loop_with_an_early_exit_takes_the_policy(policy, kind, iterations):
    fn = one(kernel("""
	ld.param.u64 %rd1, [k_param_0];
	ld.param.u32 %r1, [k_param_1];
	mov.u32 %r2, 0;
$L_loop:
	ld.global.u32 %r3, [%rd1];
	setp.eq.s32 %p1, %r3, 0;
	@%p1 bra $L_out;
	add.s64 %rd1, %rd1, 4;
	add.s32 %r2, %r2, 1;
	setp.lt.s32 %p2, %r2, %r1;
	@%p2 bra $L_loop;
$L_out:
	ret;
"""), parameter_names={"k": ["a", "n"]}, early_exit=policy)
    loop = fn.loops["$L_loop"]
    assert (loop.trip_count.kind, loop.trip_count.iterations) == (kind, iterations)
    assert any("1 other exit(s), taken on data" in a for a in fn.assumptions)


# --- module level ---------------------------------------------------------------------------------

def test_targets_map_to_cost_tables():
    assert arch_for_target("sm_86") == ("nvptx-sm80", None)
    assert arch_for_target("sm_90a")[0] == "nvptx-sm90"
    assert arch_for_target("sm_100")[0] == "nvptx-sm90" and "sm_90" in arch_for_target("sm_100")[1]
    arch, note = arch_for_target("sm_75")
    assert arch == "nvptx-sm80" and "sm_75" in note
    fn = one(kernel("ret;", target="sm_70"))
    assert fn.arch == "nvptx-sm80" and "sm_70" in fn.assumptions[0]


def test_demangling_of_simple_names():
    assert demangle_simple("_Z5saxpyifPKfPf") == "saxpy"
    assert demangle_simple("_ZN2ns6kernelEPfi") == "ns::kernel"
    assert demangle_simple("plain_kernel") == "plain_kernel"
    assert demangle_simple("_Z99x") == "_Z99x"


def test_device_functions_and_declarations():
    text = """.version 8.0
.target sm_90
.address_size 64
.extern .func (.param .b32 func_retval0) __nv_sqrtf(.param .b32 __nv_sqrtf_param_0);
.global .align 4 .b8 table[8] = {1, 2, 3, 4, 5, 6, 7, 8};

.func (.param .b32 func_retval0) _Z6squaref(.param .b32 _Z6squaref_param_0)
{
	.reg .f32 %f<3>;
	ld.param.f32 %f1, [_Z6squaref_param_0];
	mul.f32 %f2, %f1, %f1;
	st.param.f32 [func_retval0+0], %f2;
	ret;
}

.visible .entry caller(.param .u64 caller_param_0)
{
	.reg .f32 %f<3>;
	{ // callseq 0, 0
	.param .b32 param0;
	st.param.f32 [param0+0], %f1;
	.param .b32 retval0;
	call.uni (retval0),
	_Z6squaref,
	(
	param0
	);
	ld.param.f32 %f2, [retval0+0];
	} // callseq 0
	ret;
}
"""
    functions, errors = read_ptx(text, "k.ptx")
    assert errors == []
    square, caller = functions
    assert (square.name, square.display_name, square.parameters, square.arch) == (
        "_Z6squaref", "square", ["param_0"], "nvptx-sm90")
    assert classes(square) == ["load.param", "fp_mul.f32", "store.param", "return"]
    call = by_opcode(caller)["call.uni"]
    assert (call.cls, call.callee) == ("call", "_Z6squaref")


# --- malformed input ------------------------------------------------------------------------------

def test_malformed_function_is_an_error_and_the_rest_is_kept():
    text = SAXPY.replace(".file", "// .file") + """
.visible .entry bad(.param .u32 bad_param_0)
{
	bra.uni $L_nowhere;
}

.visible .entry unclosed(.param .u32 unclosed_param_0)
{
	ret;
"""
    functions, errors = read_ptx(text, "k.ptx")
    assert [f.name for f in functions] == ["_Z5saxpyifPKfPf"]
    messages = {e.message.split(":")[0]: e for e in errors}
    assert set(messages) == {"bad", "function unclosed"}
    assert "$L_nowhere" in messages["bad"].message
    bad_line = text.splitlines().index("\tbra.uni $L_nowhere;") + 1
    assert messages["bad"].line == bad_line and messages["bad"].file == "k.ptx"


def test_statement_without_semicolon_is_reported():
    functions, errors = read_ptx(kernel("\tadd.s32 %r1, %r2, 1\n"), "k.ptx")
    assert any("without ';'" in e.message for e in errors)


PIECES = SAXPY.splitlines() + DIV_LOOP.splitlines() + UNROLLED.splitlines() + [
    "{", "}", "$L:", ".loc 1 1 1", '.file 1 "x"', ".section .debug_str {", "@%p1 bra $L__BB0_2;", "bra.uni $L_head;",
    "setp.ne.s32 %p1, %r1, 0;", "add.s32 %r1, %r1, -1;", "shr.u32 %r14, %r14, 1;", "and.b32 %r4, %r1, 2147483644;"]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=400))
def test_reader_never_raises_on_random_text(text):
    functions, errors = read_ptx(text, "x.ptx")
    assert isinstance(functions, list) and isinstance(errors, list)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=400))
def test_reader_never_raises_on_random_bytes(data):
    read_ptx(data.decode("utf-8", errors="replace"), "x.ptx")


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(PIECES), max_size=80), st.integers(0, 2**32))
def test_reader_never_raises_on_shuffled_ptx(lines, seed):
    random.Random(seed).shuffle(lines)
    functions, _ = read_ptx("\n".join(lines), "x.ptx", loc_files=["x"])
    for fn in functions:
        assert {block.loop for block in fn.blocks} - {None} <= set(fn.loops)
        for loop in fn.loops.values():
            assert loop.trip_count.kind in get_args(TripKind)  # every kind the model has, `expected` and `data` too
            assert loop.trip_count.is_assumed == (loop.trip_count.kind in ("bounded", "expected", "unknown"))
            assert loop.parent is None or fn.loops[loop.parent].depth == loop.depth - 1


@pytest.mark.parametrize("cut", range(0, len(SAXPY), 37))
def test_truncated_ptx_never_raises(cut):
    read_ptx(SAXPY[:cut], "x.ptx", loc_files=["/src/saxpy.cu"])


# --- the .ptx front end ---------------------------------------------------------------------------

def test_ptx_front_end_reads_a_file_with_ptx_lines():
    result = analyze_ptx(SourceFile("/work/k.ptx", SAXPY), AnalysisOptions(default_trip_count=9))
    assert result.errors == []
    (fn,) = result.functions
    assert (fn.language, fn.display_name, fn.file) == ("ptx", "saxpy", "/work/k.ptx")
    assert fn.loops["$L__BB0_2"].trip_count.iterations == Polynomial.constant(1)  # per thread, launch unknown
