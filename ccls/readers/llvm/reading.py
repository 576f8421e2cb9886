"""What the analyses of one function share: resolved ScalarEvolution values, the budget, the
function's definitions, and the loop nest's small questions (inside, ancestors, successors).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from ccls.polynomial import Polynomial
from ccls.readers import data_walks
from ccls.readers.llvm.text import IRInstruction
from ccls.readers.scev import FunctionAnalyses, ReadingBudget, ScevContext, ValueMemo


@dataclass
class _Reading:
    """What the analyses of one function share: resolved SCEV values and the budget."""

    memo: ValueMemo
    budget: ReadingBudget
    global_bytes: dict[str, int] = field(default_factory=dict)  # each global array's size (`global_sizes`)
    local_bytes: dict[str, int] = field(default_factory=dict)  # each local array's size (`local_array_sizes`)
    definitions: dict = field(default_factory=dict)  # value name → its instruction
    allocators: frozenset[str] = frozenset()  # `ParsedModule.allocators`
    block_of: dict[str, str] = field(default_factory=dict)  # value name → its block
    instructions: dict[str, list] = field(default_factory=dict)  # block → its instructions
    parameters: list[str] = field(default_factory=list)  # the function's arguments
    data_symbols: set[str] = field(default_factory=set)  # sizes named after data (`a->count`, `strlen(s)`)
    # A C variable a count was read in → the IR values the count took under its name.
    counted_values: dict[str, set[str]] = field(default_factory=dict)
    merged_counters: dict = field(default_factory=dict)  # loop header → `trips._merged_counter`'s finding
    # Values of run-time steps a count was taken at 1 for (`trips._run_time_step_trip`): the
    # addresses that move by them are read at the same step.
    unit_steps: set[str] = field(default_factory=set)
    # Loop header → the most bytes the nodes of the tree it descends occupy (`tree_descents`):
    # what its chased loads can reach.
    tree_bytes: dict[str, int] = field(default_factory=dict)
    # The functions of this one's recursive cycle (`readers.recursion.recursive_cycles`), itself included.
    recursion: frozenset[str] = frozenset()


def _stopped_note(budget: ReadingBudget, stopped_lines: list[int | None], default_trip_count: int) -> str:
    """The assumption of a function whose reading ran out of budget."""
    where = ("the loops at " + ", ".join(f"line {line}" if line else "an unknown line"
                                         for line in sorted(stopped_lines, key=lambda l: l or 0))
             if stopped_lines else "none of its loops")
    return (f"analysis stopped after {budget.elapsed_seconds() * 1000:.0f} ms ({budget.steps} steps, over its "
            f"budget): loop trip counts in {where} assumed {default_trip_count}; memory accesses and branches "
            "read after that taken as unknown")


def _inside(defined_loop: str | None, loop_id: str | None, analyses: FunctionAnalyses) -> bool:
    """Whether a value defined in `defined_loop` may change across iterations of `loop_id`."""
    while defined_loop is not None:
        if defined_loop == loop_id:
            return True
        defined_loop = analyses.loops[defined_loop].parent if defined_loop in analyses.loops else None
    return False


def _ancestors(header: str, analyses: FunctionAnalyses) -> set[str]:
    out, parent = set(), analyses.loops[header].parent
    while parent:
        out.add(parent)
        parent = analyses.loops[parent].parent
    return out


def _scev_context(analyses: FunctionAnalyses, parameters: set[str], enclosing: set[str],
                  substituted: dict[str, Polynomial], reading: _Reading, addresses: bool = False) -> ScevContext:
    """A converter for one loop's SCEV text with everything the function's analyses know, and
    the values already resolved in the function under the same parameters and loops.
    `addresses`: for an access's address, where a global array's address is its base."""
    return ScevContext(parameters, analyses.value_scevs, analyses.phi_incoming, enclosing,
                       low_bits_set=analyses.low_bits_set, small_ranges=analyses.small_ranges,
                       substituted=substituted, memo=reading.memo.table(parameters, enclosing, addresses),
                       budget=reading.budget, global_bases=addresses, exit_values=analyses.exit_values,
                       phi_blocks=analyses.phi_blocks)


def _named_sizes(size: Polynomial, reading: _Reading) -> Polynomial:
    """`size` with each value read from memory named as the source names it (`s->lookahead`,
    not the IR's `%i65`), where the IR keeps a name (`data_walks.Names`)."""
    names = data_walks.Names(reading.definitions, set(reading.parameters))
    for symbol in sorted(size.symbols):
        instr = reading.definitions.get(symbol)
        if instr is not None and instr.opcode == "load" and (named := names.value(symbol)) is not None:
            size = size.substitute(symbol, Polynomial.symbol(named))
            reading.data_symbols.add(named)
    return size


def _successors(terminator: IRInstruction) -> list[str]:
    """The blocks a terminator can go to (its operands of type label)."""
    return [op.name for op in terminator.operands if op.type_text == "label"]


def _ancestors_innermost_first(loop_id: str, analyses: FunctionAnalyses) -> list[str]:
    out, parent = [], analyses.loops[loop_id].parent if loop_id in analyses.loops else None
    while parent:
        out.append(parent)
        parent = analyses.loops[parent].parent
    return out


def _exit_test(record, terminators: dict, reading: _Reading) -> tuple[re.Match | None, object | None]:
    """The branch of a loop's only exiting block and the `icmp` it tests, where there is one."""
    inside = set(record.blocks)
    exits = [name for name in record.blocks if name in terminators
             and any(target not in inside for target in _successors(terminators[name]))]
    branch = data_walks.BRANCH.match(terminators[exits[0]].text) if len(exits) == 1 else None
    test = reading.definitions.get(branch["cond"].strip('"')) if branch else None
    return branch, test if test is not None and test.opcode == "icmp" else None


