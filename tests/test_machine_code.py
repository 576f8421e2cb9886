"""Reading verbose assembly and llvm-mca reports (pure text in), and llvm-mca on inline blocks."""
import shutil

import pytest

from ccls.frontends.machine_cycles import block_cycles
from ccls.machine_code import (BlockTiming, divides, parse_mca_cycles, with_calls_as_jumps,
                               without_move_elimination)
from ccls.readers.llvm.machine import DIVIDE_BYPASS_SLOW, _machine_code

# Shaped like LLVM 19's x86 output for `s += a[i] / d[i]` unrolled twice: the bypass's blocks
# have no IR names, and one of them is laid out before the loop header.
ASSEMBLY = """\
f:                                      # @f
# %bb.0:                                # %entry
\ttestq\t%rdx, %rdx
\tjle\t.LBB0_9
# %bb.1:                                # %for.body.preheader.new
\txorl\t%r11d, %r11d
\tjmp\t.LBB0_2
.LBB0_6:                                #   in Loop: Header=BB0_2 Depth=1
\tcqto
\tidivq\t%r14
.LBB0_7:                                #   in Loop: Header=BB0_2 Depth=1
\taddq\t%rax, %rcx
\tcmpq\t%r11, %rbx
\tje\t.LBB0_8
.LBB0_2:                                # %for.body
                                        # =>This Inner Loop Header: Depth=1
\tmovq\t(%rdi,%r11,8), %rax
\tmovq\t(%rsi,%r11,8), %r9
\torq\t%r9, %rdx
\tshrq\t$32, %rdx
\tje\t.LBB0_3
# %bb.4:                                #   in Loop: Header=BB0_2 Depth=1
\tcqto
\tidivq\t%r9
\tjmp\t.LBB0_5
.LBB0_3:                                #   in Loop: Header=BB0_2 Depth=1
\txorl\t%edx, %edx
\tdivl\t%r9d
.LBB0_5:                                #   in Loop: Header=BB0_2 Depth=1
\tmovq\t8(%rdi,%r11,8), %rax
\torq\t%r14, %rdx
\tshrq\t$32, %rdx
\tjne\t.LBB0_6
# %bb.10:                               #   in Loop: Header=BB0_2 Depth=1
\txorl\t%edx, %edx
\tdivl\t%r14d
\tjmp\t.LBB0_7
.LBB0_8:
\tpopq\t%rbx
.LBB0_9:                                # %for.cond.cleanup
\tretq
"""


def test_unnamed_blocks_go_to_a_named_block_of_their_own_loop():
    blocks = _machine_code(ASSEMBLY)["f"]
    body = blocks["for.body"]
    assert "addq\t%rax, %rcx" in body  # laid out before the header, but inside its loop
    assert "popq\t%rbx" in blocks["for.body.preheader.new"]  # after the loop, outside it
    assert all("idivq" not in line for line in body)
    assert [line for line in body if "divl" in line] == ["divl\t%r9d", "divl\t%r14d"]
    assert blocks[DIVIDE_BYPASS_SLOW] == ["cqto", "idivq\t%r14", "cqto", "idivq\t%r9", "jmp\t.LBB0_5"]  # layout order


# LLVM 19's x86 layout of `for (i…) for (j < m; j++) f();` where the inner loop's exit block is
# not the next one: its latch ends `jne <itself>; jmp <exit>`.
LATCH_AND_EXIT = """\
g:                                      # @g
# %bb.0:                                # %entry
\txorl\t%r14d, %r14d
\tjmp\t.LBB8_2
.LBB8_3:                                # %outer.latch
                                        #   in Loop: Header=BB8_2 Depth=1
\tincl\t%r14d
\tcmpl\t%ebp, %r14d
\tje\t.LBB8_4
.LBB8_2:                                # %outer
                                        # =>This Loop Header: Depth=1
\tmovl\t%ebx, %r15d
\tje\t.LBB8_3
.LBB8_6:                                # %inner
                                        #   Parent Loop BB8_2 Depth=1
                                        # =>  This Inner Loop Header: Depth=2
\tcallq\tf
\tdecl\t%r15d
\tjne\t.LBB8_6
\tjmp\t.LBB8_3
.LBB8_4:                                # %exit
\tretq
"""


def test_a_latchs_jump_to_its_exit_counts_once_per_exit_not_per_iteration():
    blocks = _machine_code(LATCH_AND_EXIT)["g"]
    assert blocks["inner"] == ["callq\tf", "decl\t%r15d", "jne\t.LBB8_6"]  # three a pass, as the core runs
    assert blocks["outer.latch"] == ["jmp\t.LBB8_3", "incl\t%r14d", "cmpl\t%ebp, %r14d", "je\t.LBB8_4"]
    # a loop's own back edge after a conditional exit runs on every pass: kept
    back_edge = LATCH_AND_EXIT.replace("\tjne\t.LBB8_6\n\tjmp\t.LBB8_3", "\tje\t.LBB8_3\n\tjmp\t.LBB8_6")
    assert _machine_code(back_edge)["g"]["inner"][-2:] == ["je\t.LBB8_3", "jmp\t.LBB8_6"]


def test_mca_report_gives_cycles_and_throughput_per_region():
    report = """
[0] Code Region - b0

Iterations:        100
Instructions:      1100
Total Cycles:      4003
Block RThroughput: 2.0

[1] Code Region - b1

Iterations:        100
Total Cycles:      250
"""
    assert parse_mca_cycles(report, 3) == [BlockTiming(40.03, 2.0), None, None]


def test_integer_divides_are_counted_by_operand_width():
    x86 = ("\tcqto", "\tidivq\t%r9", "\txorl\t%edx, %edx", "\tdivl\t%r9d", "\tdivsd\t%xmm1, %xmm0")
    assert divides(x86) == (1, 1)  # divsd is the FP divider, not counted
    assert divides(("\tsdiv\tw0, w1, w2", "\tudiv\tx0, x1, x2", "\tfdiv\td0, d1, d2")) == (1, 1)


def test_divider_correction_takes_the_model_excess_off_but_keeps_the_divides_own_time():
    from ccls.counting import _divider_corrected
    from ccls.table_types import DividerModel
    divider = DividerModel(mca_cycles=(13.0, 17.0), cycles=(6.5, 7.0))
    # divider-bound: two divl at 13 each + 1 cycle of other work -> two at 6.5 + 1
    assert _divider_corrected(27.0, 26.0, (2, 0), divider) == (14.0, 13.0)
    # bound by something longer (a 100-cycle chain): only the excess comes off, never below the divides
    assert _divider_corrected(100.0, None, (0, 1), divider) == (90.0, None)
    assert _divider_corrected(8.0, None, (1, 0), divider)[0] == 6.5


# A Gauss-Seidel-style inner loop as clang -O2 emits it: the division's result reaches the next
# repetition's sum through `movapd %xmm1, %xmm7` (a 6-add + divide chain, ~31 cycles on Zen 4).
_CHAIN_THROUGH_MOVES = (
    "\tmovapd\t%xmm3, %xmm6", "\taddsd\t%xmm3, %xmm1", "\tmovsd\t-16000(%r11,%rbx,8), %xmm3",
    "\taddsd\t%xmm3, %xmm1", "\taddsd\t%xmm7, %xmm1", "\taddsd\t%xmm2, %xmm1", "\tmovsd\t-8000(%r11,%rbx,8), %xmm2",
    "\taddsd\t%xmm2, %xmm1", "\taddsd\t%xmm4, %xmm1", "\taddsd\t%xmm5, %xmm1", "\tmovapd\t%xmm5, %xmm4",
    "\tmovsd\t(%r11,%rbx,8), %xmm5", "\taddsd\t%xmm5, %xmm1", "\tdivsd\t%xmm0, %xmm1",
    "\tmovsd\t%xmm1, -8008(%r11,%rbx,8)", "\tincq\t%rbx", "\tmovapd\t%xmm1, %xmm7", "\tmovapd\t%xmm6, %xmm1",
    "\tcmpq\t%rbx, %r8", "\tjne\t.LBB0_5")
# A multiply-add chain through two moves that llvm-mca follows correctly: 3 + 3 cycles.
_CHAIN_MCA_FOLLOWS = ("\tmulsd\t%xmm0, %xmm0", "\tmovapd\t%xmm0, %xmm1", "\taddsd\t%xmm1, %xmm2",
                      "\tmovapd\t%xmm2, %xmm0")


def test_vector_moves_are_rewritten_as_ors_that_cannot_be_eliminated():
    code, moves = without_move_elimination(("\tmovapd\t%xmm1, %xmm7", "\tvmovaps\t%ymm2, %ymm3",
                                            "\tmovsd\t%xmm1, %xmm2", "\tmovsd\t(%rax), %xmm0"))
    assert moves == 2
    assert code == ("\tvpor\t%xmm1, %xmm1, %xmm7", "\tvpor\t%ymm2, %ymm2, %ymm3", "\tmovsd\t%xmm1, %xmm2",
                    "\tmovsd\t(%rax), %xmm0")


@pytest.mark.skipif(shutil.which("llvm-mca-19") is None and shutil.which("llvm-mca") is None,
                    reason="llvm-mca not installed")
def test_a_chain_through_eliminated_moves_is_not_lost():
    lost, followed = block_cycles([_CHAIN_THROUGH_MOVES, _CHAIN_MCA_FOLLOWS], "x86_64-zen4", 30, 1024)
    assert lost.cycles >= 25  # llvm-mca alone: 5.4
    assert 5.5 <= followed.cycles <= 6.5  # no moves' cycle added where llvm-mca already follows the chain


def test_calls_are_simulated_as_jumps_to_their_targets():
    assert with_calls_as_jumps(("\tcallq\tsinf@PLT", "\tcallq\t*%rax", "\tcall\t*8(%rbx,%rcx,8)",
                                "\tmovq\t%rax, %rbx  # callq")) == \
        ("\tjmp\tsinf@PLT", "\tjmpq\t*%rax", "\tjmpq\t*8(%rbx,%rcx,8)", "\tmovq\t%rax, %rbx  # callq")
    assert with_calls_as_jumps(("\tbl\tsinf", "\tblr\tx8", "\tblt\t.LBB0_2", "\tble\t.LBB0_3")) == \
        ("\tb\tsinf", "\tbr\tx8", "\tblt\t.LBB0_2", "\tble\t.LBB0_3")


@pytest.mark.skipif(shutil.which("llvm-mca-19") is None and shutil.which("llvm-mca") is None,
                    reason="llvm-mca not installed")
def test_a_call_costs_a_block_what_a_jump_costs_not_llvm_mcas_100_cycles():
    # The end of a timing loop's pass (TSVC's s31111): a sum finished, a call with two stack
    # arguments, the stack adjusted after it. llvm-mca alone holds the `addq` for the call's
    # assumed 100 cycles of latency: 5.8 cycles a pass, 4.0 with the call as a jump.
    body = ("\tshufps\t$85, %xmm0, %xmm0", "\taddss\t%xmm3, %xmm0", "\tleaq\ta(%rip), %rdi", "\tmovq\t%r15, %rsi",
            "\tmovq\t%r12, %rdx", "\tmovq\t%r13, %rcx", "\tmovq\t%rbp, %r8", "\tmovq\t%rbx, %r9",
            "\tleaq\tcc(%rip), %rax", "\tpushq\t%rax", "\tleaq\tbb(%rip), %rax", "\tpushq\t%rax",
            "\tcallq\tdummy@PLT", "\taddq\t$16, %rsp", "\tdecl\t%r14d", "\tjne\t.LBB92_1")
    [timing] = block_cycles([body], "x86_64-zen4", 30, 1024)
    assert timing.cycles <= 4.5


def test_regions_are_cut_in_order_into_runs_of_about_equal_lines():
    from ccls.frontends.machine_cycles import _chunks

    regions = [("a",) * n for n in (5, 1, 1, 3, 2, 4, 4)]
    for count in (1, 2, 3):
        chunks = _chunks(regions, count)
        assert len(chunks) == count and [r for chunk in chunks for r in chunk] == regions
    assert [sum(map(len, chunk)) for chunk in _chunks(regions, 2)] == [10, 10]


@pytest.mark.skipif(shutil.which("llvm-mca-19") is None and shutil.which("llvm-mca") is None,
                    reason="llvm-mca not installed")
def test_llvm_mca_processes_side_by_side_give_the_figures_of_one(monkeypatch):
    from ccls.frontends import machine_cycles

    blocks = [_CHAIN_THROUGH_MOVES, _CHAIN_MCA_FOLLOWS, ("\taddq\t%rax, %rcx", "\timulq\t%rcx, %rax"),
              ("\tdivsd\t%xmm1, %xmm0",)]
    monkeypatch.setattr(machine_cycles, "_LINES_PER_PROCESS", 10**9)
    one = block_cycles(blocks, "x86_64-zen4", 30, 1024)
    monkeypatch.setattr(machine_cycles, "_LINES_PER_PROCESS", 1)
    monkeypatch.setattr(machine_cycles.os, "sched_getaffinity", lambda pid: set(range(4)))
    assert machine_cycles._processes(blocks) == 4
    assert block_cycles(blocks, "x86_64-zen4", 30, 1024) == one and None not in one
