"""Machine code: lower LLVM IR to target assembly with llvmlite's code generator, in-process
(where no llc is installed: `frontends.c_family` runs the build's own llc otherwise), so
executed machine instructions can be estimated per IR block; llvm-mca's input for machine blocks
and the figures of its report; the rewrite that keeps llvm-mca from eliminating a move.
`ccls.frontends.machine_cycles` runs llvm-mca."""
from __future__ import annotations

import re
import threading
from typing import NamedTuple

import llvmlite.binding as llvm

_init_lock = threading.Lock()
_initialised = False
# LLVM's code generator is not safe to drive from several threads at once.
_codegen_lock = threading.Lock()


def _initialise() -> None:
    global _initialised
    with _init_lock:
        if not _initialised:
            llvm.initialize_all_targets()
            llvm.initialize_all_asmprinters()
            llvm.initialize_native_asmparser()  # inline asm is parsed when a module is lowered
            _initialised = True


# llvmlite lowers in this process, with no time or memory limit of its own and under the codegen
# lock: measured on a generated 35k-line C file (5,000 functions), 16.5 MB of optimised IR took 60 s
# and 118 MB more RSS on this project's 2-core CI machine, i.e. ~3.6 s per MB. Above this size
# a module's machine code is not lowered (its costs come from the IR instructions, as with
# machine code off): a bound of ~15 s, never a worker held for minutes.
MAX_LOWERED_IR_BYTES = 4_000_000


def lowering_skipped(ir_bytes: int) -> str | None:
    """The assumption a module's functions carry when its IR is too large to lower in-process."""
    if ir_bytes <= MAX_LOWERED_IR_BYTES:
        return None
    return (f"machine code not lowered: the module's IR is {ir_bytes / 1e6:.1f} MB, over the "
            f"{MAX_LOWERED_IR_BYTES / 1e6:g} MB ccls lowers (a time and memory bound); "
            "costs come from the IR instructions")


# A call to inline assembly: `call void asm sideeffect "…"`, `call i32 asm "…"`.
_INLINE_ASM = re.compile(r"\bcall\b[^\n]*?\basm\b(?: sideeffect| alignstack| inteldialect| unwind)* \"")


def verbose_assembly(ir_text: str, triple: str | None = None, cpu: str = "", parsed: object = None) -> str:
    """Assembly with IR block names as comments (``# %for.body``). Raises RuntimeError from
    llvmlite when the IR can't be parsed or the target is unknown, and for inline assembly
    aimed at another machine than this one (LLVM parses it with the target's assembly parser,
    which only the native one is set up for; without it LLVM aborts the process). `parsed`:
    llvmlite's module of `ir_text` where the caller has it (not parsed twice); lowering
    changes it (the code generator's IR passes), so it is of no further use."""
    _initialise()
    with _codegen_lock:
        module = parsed if parsed is not None else llvm.parse_assembly(ir_text)
        triple = triple or module.triple or llvm.get_default_triple()
        if _INLINE_ASM.search(ir_text) and triple.split("-")[0] != llvm.get_process_triple().split("-")[0]:
            raise RuntimeError(f"inline assembly for {triple} is not lowered on this machine")
        target = llvm.Target.from_triple(triple)
        # Match clang's defaults for the same triple: PIC, small code model, generic CPU.
        machine = target.create_target_machine(cpu=cpu, opt=2, reloc="pic", codemodel="small")
        machine.set_asm_verbosity(True)
        return machine.emit_assembly(module)


# llvm-mca simulates the core each CPU cost table describes (ccls.targets), so cycles and
# per-class costs come from one scheduling model.
MCA_ITERATIONS = 100
_REGION = re.compile(r"^\[(\d+)\] Code Region - b(\d+)\s*$")
_TOTAL_CYCLES = re.compile(r"^Total Cycles:\s+(\d+)")
_THROUGHPUT = re.compile(r"^Block RThroughput:\s+([\d.]+)")
# Integer divides by operand width: x86 div/idiv with an l or q suffix, AArch64 sdiv/udiv on w or x.
_DIVIDE_32 = re.compile(r"^\s*(?:i?divl\b|[su]div\s+w)")
_DIVIDE_64 = re.compile(r"^\s*(?:i?divq\b|[su]div\s+x)")


class BlockTiming(NamedTuple):
    """llvm-mca's figures for a block repeated back to back, per execution."""

    cycles: float  # simulated: dependencies carried from one repetition to the next bind
    throughput: float  # resource bound only ("Block RThroughput"): what independent repetitions reach


def divides(code: tuple[str, ...]) -> tuple[int, int]:
    """The integer divide instructions in a machine block: (32-bit, 64-bit operands)."""
    return (sum(1 for line in code if _DIVIDE_32.match(line)), sum(1 for line in code if _DIVIDE_64.match(line)))


def mca_input(blocks: list[tuple[str, ...]]) -> str:
    """One llvm-mca code region per machine block, named b<index>."""
    out = []
    for index, code in enumerate(blocks):
        out += [f"# LLVM-MCA-BEGIN b{index}", *code, "# LLVM-MCA-END"]
    return "\n".join(out) + "\n"


def parse_mca_cycles(report: str, regions: int) -> list[BlockTiming | None]:
    """Each region's timing per iteration (llvm-mca repeats a region as if it were a loop body,
    so loop-carried dependencies and port pressure show up); None where no figure was printed."""
    timings: list[BlockTiming | None] = [None] * regions
    current, cycles = None, None
    for line in report.splitlines():
        if m := _REGION.match(line):
            current, cycles = int(m.group(2)), None
        elif current is None or current >= regions:
            continue
        elif m := _TOTAL_CYCLES.match(line):
            cycles = int(m.group(1)) / MCA_ITERATIONS
        elif (m := _THROUGHPUT.match(line)) and cycles is not None:
            timings[current] = BlockTiming(cycles, float(m.group(1)))
            current = None
    return timings


# llvm-mca 19 can lose a loop-carried dependency that passes through a register move it
# eliminates at rename: in `divsd %xmm0, %xmm1; …; movapd %xmm1, %xmm7; movapd %xmm6, %xmm1`,
# its timeline issues the next repetition's `addsd %xmm7, %xmm1` before the divide that
# produced %xmm7 has finished (5.4 simulated cycles per repetition of a 32-cycle chain; a Zen 1
# guest takes 19.5 ns per repetition, ~39 cycles at its nominal 2.0 GHz). So a block with such moves is simulated a second time with each written
# as a 1-cycle OR it cannot eliminate; that run, less one cycle per rewritten move, is a floor
# under the first (a chain that does not pass through the moves loses nothing).
_ELIMINABLE_MOVE = re.compile(r"^(\s*)v?mov(?:aps|apd|ups|upd|dqa|dqu|dqa32|dqa64|dqu32|dqu64)\s+"
                              r"%([xyz]mm\d+),\s*%([xyz]mm\d+)\s*(?:#.*)?$")


def without_move_elimination(code: tuple[str, ...]) -> tuple[tuple[str, ...], int]:
    """The block with its vector register moves as ORs (`vpor %a, %a, %b`), and how many."""
    out, moves = [], 0
    for line in code:
        m = _ELIMINABLE_MOVE.match(line)
        if m:
            op = "vpord" if m.group(2).startswith("zmm") else "vpor"
            out.append(f"{m.group(1)}{op}\t%{m.group(2)}, %{m.group(2)}, %{m.group(3)}")
            moves += 1
        else:
            out.append(line)
    return tuple(out), moves


# llvm-mca does not model calls: it gives each a latency of 100 cycles ("call instructions are
# not correctly modeled"), and a block that adjusts the stack after one (`callq dummy; addq $16,
# %rsp`) waits for it: TSVC's s31111 loop body, 107 instructions around a call, took 40.5
# simulated cycles a pass, 20.8 without the call. The callee's work is costed as its own
# (inclusive costs, a C library function's measured cycles); the call itself is a predicted
# jump whose stack-pointer update the core's stack engine makes at decode, undone by the
# callee's return. So each call is simulated as a jump to its target, which writes no register
# (a push in its place chains the block's stack accesses through %rsp: a `sinf` + `cosf` loop
# went from 9.3 to 26 simulated cycles a pass, 5.1 as jumps).
_CALL = re.compile(r"^(\s*)call[lq]?(\s+)(\*?)(\S.*)$")
_AARCH64_CALL = re.compile(r"^(\s*)bl(r?)(\s+\S.*)$")  # `bl f`, `blr x8` (they write the link register)


def with_calls_as_jumps(code: tuple[str, ...]) -> tuple[str, ...]:
    """The block with each call written as a jump to its target: x86 `callq f@PLT` as `jmp f@PLT`,
    `callq *%rax` as `jmpq *%rax`; AArch64 `bl f` as `b f`, `blr x8` as `br x8`."""
    def jump(line: str) -> str:
        if m := _CALL.match(line):
            return f"{m[1]}{'jmpq' if m[3] else 'jmp'}{m[2]}{m[3]}{m[4]}"
        if m := _AARCH64_CALL.match(line):
            return f"{m[1]}b{m[2]}{m[3]}"
        return line
    return tuple(jump(line) for line in code)
