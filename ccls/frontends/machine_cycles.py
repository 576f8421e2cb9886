"""llvm-mca's cycles per machine block: the tool run, here at the edge with the front ends that
compile (ccls.machine_code builds its input and reads its report). Blocks are simulated once
per distinct text and remembered across modules (`CYCLES`)."""
from __future__ import annotations

import os
import threading
from concurrent.futures import Future, ThreadPoolExecutor

from ccls import toolchain
from ccls.machine_code import (MCA_ITERATIONS, BlockTiming, mca_input, parse_mca_cycles, with_calls_as_jumps,
                               without_move_elimination)
from ccls.options import AnalysisOptions
from ccls.targets import CPU_TARGETS


def block_cycles(blocks: list[tuple[str, ...]], arch: str, timeout_s: float, memory_mb: int,
                 warm: bool = False) -> list[BlockTiming | None]:
    """llvm-mca's cycles per execution of each machine block, on the core of `arch`'s table.
    All None when llvm-mca is missing or fails: counts still work, CU falls back to the table.
    `warm`: use (and later replace) a started llvm-mca from toolchain.SPARES."""
    target = CPU_TARGETS.get(arch)
    mca = toolchain.find_tool("llvm-mca")
    if target is None or mca is None or not blocks:
        return [None] * len(blocks)
    triple, cpu = target
    # Calls as the jumps they are to the core (machine_code says why); the callee is costed on its own.
    blocks = [with_calls_as_jumps(code) for code in blocks]
    # Blocks with vector moves run a second time with the moves rewritten (machine_code says why).
    rewritten = [without_move_elimination(code) for code in blocks] if triple.startswith("x86_64") else []
    second = [(index, code, moves) for index, (code, moves) in enumerate(rewritten) if moves]
    regions = blocks + [code for _, code, _ in second]
    argv = [mca, f"-mtriple={triple}", f"-mcpu={cpu}", f"-iterations={MCA_ITERATIONS}",
            "-instruction-info=0", "-resource-pressure=0", "-skip-unsupported-instructions=any", "-"]
    chunks = _chunks(regions, _processes(regions))
    if len(chunks) == 1:
        timings = _simulate(argv, regions, timeout_s, memory_mb, warm)
    else:  # each region is simulated on its own: llvm-mca processes side by side give the same figures
        with ThreadPoolExecutor(len(chunks), thread_name_prefix="ccls-llvm-mca") as pool:
            parts = list(pool.map(lambda chunk: _simulate(argv, chunk, timeout_s, memory_mb, warm), chunks))
        timings = None if any(part is None for part in parts) else [t for part in parts for t in part]
    if timings is None:
        return [None] * len(blocks)
    for position, (index, _, moves) in enumerate(second):
        again, first = timings[len(blocks) + position], timings[index]
        if again is not None and first is not None and again.cycles - moves > first.cycles:
            timings[index] = BlockTiming(again.cycles - moves, first.throughput)
    return timings[:len(blocks)]


# llvm-mca takes ~0.5 ms per instruction line of its input (100 iterations each); below this many
# lines a second process costs more than it saves.
_LINES_PER_PROCESS = 1000


def _processes(regions: list[tuple[str, ...]]) -> int:
    """How many llvm-mca processes share the regions: one per _LINES_PER_PROCESS lines, at most
    one per core this process may run on."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return max(1, min(cores, sum(len(code) for code in regions) // _LINES_PER_PROCESS))


def _chunks(regions: list[tuple[str, ...]], count: int) -> list[list[tuple[str, ...]]]:
    """`regions` cut, in order, into `count` runs of about the same number of lines."""
    if count <= 1:
        return [regions]
    total = sum(len(code) for code in regions)
    chunks: list[list[tuple[str, ...]]] = [[]]
    done = 0
    for code in regions:
        if chunks[-1] and done >= total * len(chunks) / count and len(chunks) < count:
            chunks.append([])
        chunks[-1].append(code)
        done += len(code)
    return chunks


def _simulate(argv: list[str], regions: list[tuple[str, ...]], timeout_s: float, memory_mb: int,
              warm: bool) -> list[BlockTiming | None] | None:
    """One llvm-mca run over `regions` (None when it fails)."""
    try:
        result = toolchain.start_warm(argv, memory_mb=memory_mb, warm=warm).finish(mca_input(regions), timeout_s)
    except (toolchain.ToolMissing, toolchain.ToolLimit):
        return None
    if result.returncode != 0:
        return None
    return parse_mca_cycles(result.stdout, len(regions))


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
