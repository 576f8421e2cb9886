"""Machine code attributed to IR blocks: verbose x86 assembly split into blocks, each block
counted with the IR block it came from, and the block that runs before each one in its loop.
"""
from __future__ import annotations

import bisect
import re
from collections import defaultdict
from dataclasses import dataclass

from ccls.readers.scev import FunctionAnalyses


_FUNCTION_LABEL = re.compile(r"^(\"[^\"]+\"|[A-Za-z_$][-\w.$]*):")


_ASM_BLOCK = re.compile(r"^(?:\.LBB\d+_\d+:|# %bb\.\d+:)\s*(?:# %(?P<name>\S+))?")


@dataclass
class _MachineBlock:
    number: str  # "5" for .LBB0_5 / # %bb.5
    ir_name: str | None  # the IR block it starts, when the assembly names one
    loop: str | None  # number of its innermost loop's header block (its own, for a header)
    code: list[str]
    depth: int = 0  # how many loops hold it (0: none)


_LOOP_TAG = re.compile(r"#\s+(?:in Loop: Header=BB\d+_(?P<inside>\d+)|=>\s*This (?:Inner )?Loop Header)(?:: Depth=|"
                       r" Depth=)(?P<depth>\d+)")
_BLOCK_NUMBER = re.compile(r"^(?:\.LBB\d+_(\d+)|# %bb\.(\d+)):")
# LLVM's division bypass (x86): `or a, b; shr $32; je/jne` picks a 32-bit divide when both
# operands fit in 32 bits; the block with the 64-bit divide is the other way.
_BYPASS_CHECK = re.compile(r"^shrq\s+\$32, %\w+$")
_DIV64 = re.compile(r"^i?divq\b")
DIVIDE_BYPASS_SLOW = "<64-bit divide of the bypass>"


def _machine_code(assembly: str) -> dict[str, dict[str, list[str]]]:
    """Instructions per IR block per function, from verbose assembly. A machine block without
    an IR name (split, tail-duplicated or made by code generation) is counted with the nearest
    named block of the same innermost loop, before it in the layout or else after it; the
    64-bit divide of a division bypass goes under DIVIDE_BYPASS_SLOW."""
    result: dict[str, dict[str, list[str]]] = {}
    functions: list[tuple[str, list[_MachineBlock]]] = []
    blocks: list[_MachineBlock] | None = None
    for line in assembly.splitlines():
        if not line:
            continue
        if (label := _FUNCTION_LABEL.match(line)) and not line.startswith(".L"):
            blocks = [_MachineBlock("entry", "entry", None, [])]
            functions.append((label.group(1).strip('"'), blocks))
            continue
        if blocks is None:
            continue
        if m := _ASM_BLOCK.match(line):
            number = _BLOCK_NUMBER.match(line)
            blocks.append(_MachineBlock(next(g for g in number.groups() if g), m.group("name"), None, []))
            _tag_loop(blocks[-1], line)
            continue
        stripped = line.strip()
        if stripped.startswith("#"):
            _tag_loop(blocks[-1], stripped)
            continue
        if not stripped or stripped[0] == "." or stripped.endswith(":"):
            continue
        blocks[-1].code.append(stripped.split("#")[0].rstrip())
    for name, fn_blocks in functions:
        _move_exit_jumps(fn_blocks)
        fn_blocks = [b for b in fn_blocks if b.code or b.ir_name]
        owners = _owners(fn_blocks, _bypass_slow_paths(fn_blocks))
        grouped = result.setdefault(name, {})
        for block, owner in zip(fn_blocks, owners):
            if block.code:
                grouped.setdefault(owner, []).extend(block.code)
    return result


_JUMP = re.compile(r"^(?P<op>j[a-z]+)\s+\.LBB\d+_(?P<target>\d+)$")


def _move_exit_jumps(blocks: list[_MachineBlock]) -> None:
    """A loop block that ends `jne <its loop>; jmp <out>` (codegen's layout of a latch whose exit
    block is not the next one) runs that `jmp` only on the pass that leaves: it is counted with
    the block it jumps to, once per exit, not on every iteration."""
    by_number = {b.number: b for b in blocks}
    for block in blocks:
        if block.loop is None or len(block.code) < 2:
            continue
        last, before = _JUMP.match(block.code[-1]), _JUMP.match(block.code[-2])
        if last is None or before is None or last["op"] != "jmp" or before["op"] == "jmp":
            continue
        stays, leaves = by_number.get(before["target"]), by_number.get(last["target"])
        if stays is None or leaves is None or stays.loop != block.loop or leaves.loop is not None and (
                leaves.loop == block.loop or leaves.depth >= block.depth):
            continue
        leaves.code.insert(0, block.code.pop())  # it runs as the way into that block


def _tag_loop(block: _MachineBlock, comment: str) -> None:
    if block.loop is None and (m := _LOOP_TAG.search(comment)):
        block.loop = m.group("inside") or block.number
        block.depth = int(m.group("depth"))


def _bypass_slow_paths(blocks: list[_MachineBlock]) -> set[int]:
    """Indices of the blocks holding the 64-bit divide of LLVM's division bypass."""
    index = {b.number: i for i, b in enumerate(blocks)}
    slow = set()
    for i, block in enumerate(blocks[:-1]):
        if len(block.code) < 2 or not _BYPASS_CHECK.match(block.code[-2]):
            continue
        jump, _, target = block.code[-1].partition("\t")
        taken = index.get(target.strip().rsplit("_", 1)[-1]) if target.strip().startswith(".LBB") else None
        if taken is None or jump not in ("je", "jne"):
            continue
        # je: the upper halves are zero → jump to the 32-bit divide; jne: jump to the 64-bit one.
        candidate = i + 1 if jump == "je" else taken
        if any(_DIV64.match(code) for code in blocks[candidate].code):
            slow.add(candidate)
    return slow


def _owners(blocks: list[_MachineBlock], slow: set[int]) -> list[str]:
    """The IR block each machine block counts with: its own name; else the nearest named block
    of its loop (the one before it, else the one after); else the named block before it."""
    named_by_loop: dict = defaultdict(list)  # loop -> indices of named blocks, ascending
    for j, b in enumerate(blocks):
        if b.ir_name:
            named_by_loop[b.loop].append(j)
    owners = []
    last_named = None
    for i, block in enumerate(blocks):
        if block.ir_name:
            last_named = block.ir_name
        if i in slow:
            owners.append(DIVIDE_BYPASS_SLOW)
            continue
        if block.ir_name:
            owners.append(block.ir_name)
            continue
        same_loop = named_by_loop.get(block.loop, [])
        if same_loop:
            at = bisect.bisect_left(same_loop, i)
            owners.append(blocks[same_loop[at - 1] if at > 0 else same_loop[0]].ir_name)
        else:  # no named block in its loop: the one before it in the layout, as codegen left it
            owners.append(last_named)
    return owners


def _machine_per_ir_block(machine: dict[str, list[str]] | None, ir_blocks: set[str],
                          assumptions: list[str]) -> dict[str, list[str]] | None:
    """Attribute machine blocks that code generation created to the IR block they came from:
    ``X.split…`` halves belong to X; ``call.sqrt…`` is the libm errno path that codegen splits
    off a sqrt (taken only for negative or NaN inputs), assumed cold."""
    if machine is None:
        return None
    out: dict[str, list[str]] = {}
    for name, code in machine.items():
        base = name
        while base not in ir_blocks and base.endswith(".split"):
            base = base[: -len(".split")]
        if base in ir_blocks:
            out.setdefault(base, []).extend(code)
        elif name.startswith("call.sqrt"):
            note = "sqrt's errno path (negative or NaN input) assumed not taken"
            if note not in assumptions:
                assumptions.append(note)
        elif name == DIVIDE_BYPASS_SLOW:
            assumptions.append("64-bit divisions: operands assumed to fit in 32 bits, so LLVM's division "
                               "bypass takes its 32-bit divide (64-bit values would cost more)")
    return out


def _contexts(predecessors: dict[str, list[str]], analyses: FunctionAnalyses | None) -> dict[str, tuple[str, ...]]:
    """Block → the blocks that always run before it in the same iteration of its innermost loop,
    from the loop's header on (those that dominate it there, back edges left out): `if (a[i] <
    0) { … }` rejoins after the test that loaded a[i]. llvm-mca repeats a block alone as if it
    were a loop body, so a register a block before defines looks carried from the block's own
    previous run: `if (a[i] > b[i]) { s = a[i] - …; }` becomes a chain through `s` that no
    iteration waits for. Simulated after those blocks, the chain starts afresh each time."""
    if analyses is None:
        return {}
    innermost: dict[str, str] = {}
    for header, record in sorted(analyses.loops.items(), key=lambda item: item[1].depth):
        innermost.update(dict.fromkeys(record.blocks, header))
    inside = {block: [p for p in preds if innermost.get(p) == innermost.get(block) and p != block]
              for block, preds in predecessors.items() if innermost.get(block) is not None}
    dominators = _iteration_dominators(inside, innermost)
    out = {}
    for block, preds in inside.items():
        above = dominators.get(block, set()) - {block}
        if block != innermost[block] and preds and above:
            out[block] = tuple(sorted(above, key=lambda d: len(dominators[d])))  # the header first
    return out


def _iteration_dominators(inside: dict[str, list[str]], innermost: dict[str, str]) -> dict[str, set[str]]:
    """Within one iteration of each innermost loop (from its header, back edges left out): the
    blocks every path from the header to each block passes through, the block included."""
    members: dict[str, set[str]] = {}  # header → the blocks of its iteration (grouped once, not per block)
    for block in inside:
        members.setdefault(innermost[block], set()).add(block)
    dominators: dict[str, set[str]] = {}
    for block in inside:
        header = innermost[block]
        dominators[block] = {block} if block == header else set(members[header])
    changed = True
    while changed:
        changed = False
        for block, preds in inside.items():
            if block == innermost[block]:
                continue
            reached = [dominators[p] for p in preds]
            merged = {block} | set.intersection(*reached) if reached else {block}
            if merged != dominators[block]:
                dominators[block], changed = merged, True
    return dominators


# llvm-mca takes ~0.5 ms per line per 100 repetitions: a longer body is left to its blocks' sum.
MAX_TRACE_LINES = 200


def _traces(block_order: list[str], machine: dict[str, list[str]],
            analyses: FunctionAnalyses | None) -> dict[str, tuple[str, ...]]:
    """Innermost loop → the machine code of its blocks in the function's order, for loops whose
    body has two blocks or more with code: simulated as one piece, what the core overlaps between them
    (llvm-mca repeating each block alone charges every small block at least a cycle)."""
    if analyses is None:
        return {}
    parents = {record.parent for record in analyses.loops.values()}
    out = {}
    for header, record in analyses.loops.items():
        if header in parents:
            continue  # not innermost
        members = set(record.blocks)
        code = [machine[b] for b in block_order if b in members and machine.get(b)]
        lines = sum(map(len, code))
        if len(code) >= 2 and lines <= MAX_TRACE_LINES:
            out[header] = tuple(line for block in code for line in block)
    return out
