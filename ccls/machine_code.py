"""Lower LLVM IR to target assembly with LLVM's code generator (llvmlite's target machine), so
executed machine instructions can be estimated per IR block. In-process; no files."""
from __future__ import annotations

import re
import threading
from typing import NamedTuple
from concurrent.futures import Future

import llvmlite.binding as llvm

from ccls.options import AnalysisOptions
from ccls.targets import CPU_TARGETS

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
            _initialised = True


def verbose_assembly(ir_text: str, triple: str | None = None, cpu: str = "") -> str:
    """Assembly with IR block names as comments (``# %for.body``). Raises RuntimeError from
    llvmlite when the IR can't be parsed or the target is unknown."""
    _initialise()
    with _codegen_lock:
        module = llvm.parse_assembly(ir_text)
        target = llvm.Target.from_triple(triple or module.triple or llvm.get_default_triple())
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


def block_cycles(blocks: list[tuple[str, ...]], arch: str, timeout_s: float, memory_mb: int,
                 warm: bool = False) -> list[BlockTiming | None]:
    """llvm-mca's cycles per execution of each machine block, on the core of `arch`'s table.
    All None when llvm-mca is missing or fails: counts still work, CU falls back to the table.
    `warm`: use (and later replace) a started llvm-mca from toolchain.SPARES."""
    from ccls import toolchain

    target = CPU_TARGETS.get(arch)
    mca = toolchain.find_tool("llvm-mca")
    if target is None or mca is None or not blocks:
        return [None] * len(blocks)
    triple, cpu = target
    rewritten = [without_move_elimination(code) for code in blocks] if triple.startswith("x86_64") else []
    second = [(index, code, moves) for index, (code, moves) in enumerate(rewritten) if moves]
    regions = blocks + [code for _, code, _ in second]
    try:
        result = toolchain.start_warm(
            [mca, f"-mtriple={triple}", f"-mcpu={cpu}", f"-iterations={MCA_ITERATIONS}",
             "-instruction-info=0", "-resource-pressure=0", "-skip-unsupported-instructions=any", "-"],
            memory_mb=memory_mb, warm=warm).finish(mca_input(regions), timeout_s)
    except (toolchain.ToolMissing, toolchain.ToolTimeout):
        return [None] * len(blocks)
    if result.returncode != 0:
        return [None] * len(blocks)
    timings = parse_mca_cycles(result.stdout, len(regions))
    for position, (index, _, moves) in enumerate(second):
        again, first = timings[len(blocks) + position], timings[index]
        if again is not None and first is not None and again.cycles - moves > first.cycles:
            timings[index] = BlockTiming(again.cycles - moves, first.throughput)
    return timings[:len(blocks)]


class CycleMemo:
    """Cycles per distinct block text, remembered across modules: an edit changes a few blocks
    of one function, and the rest (and common prologues and epilogues) need no simulation.
    Only answers llvm-mca gave are kept, so a failed or timed-out run is retried next time."""

    def __init__(self, capacity: int = 50_000):
        self._known: dict[tuple, BlockTiming] = {}
        self._capacity = capacity
        self._lock = threading.Lock()

    def cycles(self, blocks: set[tuple[str, ...]], options: AnalysisOptions) -> dict[tuple[str, ...], BlockTiming | None]:
        arch = options.arch
        with self._lock:
            known = {code: self._known.get((arch, code)) for code in blocks}
        missing = sorted(code for code, value in known.items() if value is None)
        if missing:
            fresh = block_cycles(missing, arch, options.compile_timeout_s, options.compile_memory_mb,
                                 options.warm_tools)
            known.update(zip(missing, fresh))
            with self._lock:
                if len(self._known) + len(missing) > self._capacity:
                    self._known.clear()
                self._known.update(((arch, code), value) for code, value in zip(missing, fresh) if value is not None)
        return known

    def start(self, blocks: set[tuple[str, ...]], options: AnalysisOptions) -> Future:
        """`cycles` on a thread of its own: llvm-mca runs while the caller reads the IR."""
        future: Future = Future()

        def run() -> None:
            try:
                future.set_result(self.cycles(blocks, options))
            except BaseException as exc:
                future.set_exception(exc)
        threading.Thread(target=run, name="ccls-llvm-mca", daemon=True).start()
        return future


CYCLES = CycleMemo()
