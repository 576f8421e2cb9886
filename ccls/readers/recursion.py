"""Recursion in a module: the functions that can call one another back, read from the direct
calls of its IR (an as-built twin or LLVM's clone stands for its original)."""
from __future__ import annotations

from typing import Sequence

from ccls.readers.components import strongly_connected
from ccls.readers.llvm.physical_bounds import on_every_iteration
from ccls.readers.llvm.text import IRFunction, original_name


def named_callee(instr) -> str | None:
    """The function a call instruction names (its original's name), or None: LLVM's intrinsics
    and calls through a pointer loaded at run time (`%fp`) name none."""
    if instr.opcode not in ("call", "invoke") or not instr.operands:
        return None
    callee = instr.operands[-1]
    if callee.name and "@" in callee.text and not callee.name.startswith("llvm.") and not callee.is_global_variable:
        return original_name(callee.name)
    return None


def direct_callees(fn: IRFunction) -> set[str]:
    """The functions `fn` calls by name (original names), LLVM's intrinsics left out."""
    return {name for _, instrs in fn.blocks for instr in instrs if (name := named_callee(instr)) is not None}


def recursive_cycles(functions: Sequence[IRFunction]) -> dict[str, frozenset[str]]:
    """Each defined function that can be called again before it returns (it calls itself, or a
    function that calls back into it) → the functions of that cycle (its strongly connected
    component of the call graph, itself included)."""
    calls: dict[str, set[str]] = {}
    for fn in functions:
        if not fn.is_declaration:
            calls.setdefault(original_name(fn.name), set()).update(direct_callees(fn))
    out: dict[str, frozenset[str]] = {}
    for component in strongly_connected(calls):
        if len(component) > 1 or next(iter(component)) in calls[next(iter(component))]:
            for name in component:
                out[name] = frozenset(component)
    return out


def recursing_pass(record, terminators: dict, reading) -> str | None:
    """A loop that, on every pass, calls a function of its own function's recursive cycle
    (`reading.recursion`): the callee named, or None. A recursion's calls form a tree: among N
    invocations N − 1 are calls made by another, fewer than one per invocation on average (a tree
    walk's loop over a node's children runs once per node on average, leaves included). A loop
    that recursed on each of a guessed 100 passes would make 100^depth calls: over the
    recursion, such a loop runs about once per entry."""
    if not reading.recursion:
        return None
    inside = set(record.blocks)
    for block in record.blocks:
        for instr in reading.instructions.get(block, ()):
            callee = named_callee(instr)
            if callee in reading.recursion and on_every_iteration(block, record.header, inside, terminators):
                return callee
    return None
