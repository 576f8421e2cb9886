"""Loop bounds the IR reads from memory, named as the source names them (`this->n`, a
container's `size()`, `a->count`), and where such a size is read (`params->depth`).
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, Sequence

from ccls.polynomial import Polynomial
from ccls.readers import data_walks
from ccls.readers.llvm.lines import _first_lines
from ccls.readers.llvm.text import IRInstruction, Operand
from ccls.readers.scev import FunctionAnalyses

if TYPE_CHECKING:
    from ccls.source_map import LoopBound  # tree-sitter only where the source is parsed


_FIELD_ADDRESS = re.compile(r"= getelementptr (?:inbounds )?i8, ptr %(?P<base>\"[^\"]+\"|[-\w.$]+), "
                            r"i64 (?P<offset>\d+)(?:,|$)")


MAX_POINTER_LOADS = 2  # `*(int *)args->arg`: one pointer loaded on the way; two for a harness's own struct


def _field_symbols(substituted: dict[str, Polynomial], definitions: dict,
                   parameters: set[str]) -> dict[str, tuple]:
    """The sizes named after a load through a pointer parameter at a constant offset
    (`params->depth`), with where they are read: symbol → (parameter, byte offset, bits), and
    where the pointer read is itself loaded from the parameter's memory (`*(int *)args->arg`,
    a callback's `void *` argument) the byte offsets of those loads, outermost first."""
    out: dict[str, tuple] = {}
    for value, size in substituted.items():
        load = definitions.get(value)
        symbol = next(iter(size.symbols), None)
        bits = re.fullmatch(r"i(\d+)", load.type_text) if load is not None and load.opcode == "load" else None
        if bits is None or size != Polynomial.symbol(symbol):
            continue
        found = _address_in_parameter(load.operands[0].name, definitions, parameters)
        if found is not None:
            parameter, through, offset = found
            out[symbol] = (parameter, offset, int(bits[1])) + ((through,) if through else ())
    return out


def _address_in_parameter(pointer: str, definitions: dict, parameters: set[str],
                          ) -> tuple[str, tuple[int, ...], int] | None:
    """`pointer` as (parameter, offsets of the pointers loaded on the way, final byte offset)."""
    offsets: list[int] = []  # the final offset first, then each loaded pointer's, inward out
    offset = 0
    for _ in range(2 * MAX_POINTER_LOADS + 2):
        if pointer in parameters:
            offsets.append(offset)
            return pointer, tuple(reversed(offsets[1:])), offsets[0]
        definition = definitions.get(pointer)
        if definition is not None and (m := _FIELD_ADDRESS.search(definition.text)):
            offset += int(m["offset"])
            pointer = m["base"].strip('"')
        elif definition is not None and definition.opcode == "load" and definition.type_text == "ptr" \
                and len(offsets) < MAX_POINTER_LOADS:
            offsets.append(offset)
            offset = 0
            pointer = definition.operands[0].name
        else:
            return None
    return None


def _named_loads(analyses: FunctionAnalyses, parameters: set[str], body: list, definitions: dict,
                 dbg_ids: list[str | None], dilocation_lines: dict[str, int], loop_bounds: Sequence[LoopBound],
                 assumptions: list[str]) -> dict[str, Polynomial]:
    """Loop bounds the IR reads from memory before the loop (`this->n`, `m->rows`, a global
    `N`, a vector's size): a value that alone decides a loop's trip count is read as a symbol
    named after what the loop's condition compares with in the source (`i < n` -> `n`); a
    range-for's begin and end pointers as 0 and its container's `size()` elements. The loop is
    matched by its first line and its depth; no name, no symbol (the trip count stays unknown)."""
    if not loop_bounds or not analyses.loops:
        return {}
    first_lines = _first_lines(body, dbg_ids, dilocation_lines)
    fixed = {i.name: bb for bb, instrs in body for i in instrs
             if i.name and (i.opcode == "load" and _fixed_address(i.operands[0], parameters, definitions)
                            or _element_count(i, parameters, definitions))}
    names: dict[str, Polynomial] = {}
    for record in sorted(analyses.loops.values(), key=lambda r: r.depth):
        # Read before this loop (an outer loop may read it again per iteration: `cols` per row).
        invariant = {v for v, bb in fixed.items() if bb not in record.blocks}
        used = {v for v in re.findall(r"%([-\w.$]+)", record.backedge_taken or "") if v in invariant}
        line = first_lines.get(record.header)
        if not used or line is None or used <= set(names):
            continue
        spelled = [b for b in loop_bounds if b.start_line <= line <= b.end_line and b.depth == record.depth]
        bound = spelled[-1].bound if spelled else None
        if not bound or bound in parameters or Polynomial.symbol(bound) in names.values():
            continue
        where = f"as the source names it at line {spelled[-1].start_line}"
        if len(used) == 1 and definitions[next(iter(used))].type_text != "ptr":  # a pointer is no count
            (value,) = used
            names[value] = Polynomial.symbol(bound)
            assumptions.append(f"loop bound %{value} is read from memory before the loops: kept symbolic as "
                               f"`{bound}`, {where}")
        elif bound.endswith(".size()") and (pair := _begin_end(record.backedge_taken or "", used, definitions)):
            begin, end, element = pair
            names[begin], names[end] = Polynomial(), Polynomial.symbol(bound) * element
            assumptions.append(f"loop over %{begin} … %{end} (a container's begin and end, read before the loop): "
                               f"kept symbolic as `{bound}` elements of {element} bytes, {where}")
    return names


# (-8 + (-1 * (ptrtoint ptr %begin to i64)) + (ptrtoint ptr %end to i64)) /u 8: a range-for's count
_BEGIN_END = re.compile(r"\(-(?P<e>\d+) \+ \(-1 \* \(ptrtoint ptr %(?P<begin>[-\w.$]+) to i64\)\) \+ "
                        r"\(ptrtoint ptr %(?P<end>[-\w.$]+) to i64\)\) /u (?P<e2>\d+)")


def _begin_end(scev: str, used: set[str], definitions: dict) -> tuple[str, str, int] | None:
    """(begin, end, element bytes) when a trip count walks from one pointer read before the loop
    to another read from 8 bytes further in the same object (std::vector's _M_start, _M_finish)."""
    m = _BEGIN_END.search(scev)
    if m is None or m["e"] != m["e2"] or {m["begin"], m["end"]} != used:
        return None
    begin, end = definitions.get(m["begin"]), definitions.get(m["end"])
    if begin is None or end is None:
        return None
    base = begin.operands[0].name
    gep = definitions.get(end.operands[0].name)
    if gep is None or gep.opcode != "getelementptr" or gep.operands[0].name != base \
            or not re.search(r", i64 8$", gep.text.split(", !")[0]):
        return None
    return m["begin"], m["end"], int(m["e"])


def _element_count(instr: IRInstruction, parameters: set[str], definitions: dict) -> bool:
    """`(end - begin) >> 3` of two pointers read from fixed addresses: a container's size in
    elements (std::vector's `size()`: `_M_finish - _M_start`), which ScalarEvolution keeps opaque."""
    if instr.opcode not in ("ashr", "lshr", "sdiv", "udiv") or " exact " not in instr.text:
        return False
    difference = definitions.get(instr.operands[0].name)
    if difference is None or difference.opcode != "sub":
        return False
    for operand in difference.operands:
        cast = definitions.get(operand.name)
        load = definitions.get(cast.operands[0].name) if cast is not None and cast.opcode == "ptrtoint" else None
        if load is None or load.opcode != "load" or not _fixed_address(load.operands[0], parameters, definitions):
            return False
    return True


def _fixed_address(pointer: Operand, parameters: set[str], definitions: dict) -> bool:
    """A pointer argument, a global, or a constant offset from a pointer argument: memory a
    function reads its sizes from (a field of `this`, a global `N`)."""
    if pointer.name in parameters or pointer.is_global_variable:
        return True
    gep = definitions.get(pointer.name)
    return (gep is not None and gep.opcode == "getelementptr" and gep.operands[0].name in parameters
            and all(not op.name for op in gep.operands[1:]))


def _data_named_loads(analyses: FunctionAnalyses, definitions: dict, block_of: dict[str, str], parameters: set[str],
                      substituted: dict[str, Polynomial], assumptions: list[str]) -> set[str]:
    """Counts read from memory before their loop that the source did not name in the loop's
    header (`while (i < a->count)`, a bound of a search): named from the IR (`a->count`) and
    kept symbolic in `substituted`. The names given."""
    given: set[str] = set()
    for record in sorted(analyses.loops.values(), key=lambda r: r.depth):
        for value, name in data_walks.named_loads(record, definitions, block_of, parameters, substituted).items():
            substituted[value] = Polynomial.symbol(name)
            given.add(name)
            assumptions.append(f"loop %{record.header}: its bound reads `{name}` from memory before the loop: "
                               f"kept symbolic as `{name}`")
    return given
