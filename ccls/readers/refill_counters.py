"""The share of iterations that refill a counter: a bit reader's `if (!bitsLeft) { buf |=
getByte(); bitsLeft += 8; } bitsLeft--;` in a loop that takes one bit per round.

The counter falls by d each iteration and, when the branch finds it at zero, is refilled by K
first: each refill lasts K / d iterations, so the refill side runs on d / K of them (1 in 8 for
a byte-wise bit reader), whatever the data. LLVM's heuristics give an `== 0` test a fixed share
(and a test on a phi none), which runs the refill, a call, on most or all iterations.

Pure: the loop body's instructions in, branch probabilities out.
"""
from __future__ import annotations

import re
from fractions import Fraction
from typing import Mapping, Sequence

from ccls.readers.llvm.text import VALUE_NAME

_PHI_PAIR = re.compile(rf"\[\s*(%?{VALUE_NAME}),\s*%({VALUE_NAME})\s*\]")
_ADD_CONSTANT = re.compile(rf"= add (?:nuw )?(?:nsw )?i\d+ %(?P<of>{VALUE_NAME}), (?P<k>-?\d+)$")
_ZERO_TEST = re.compile(rf"= icmp (?P<predicate>eq|ne) i\d+ %(?P<of>{VALUE_NAME}), 0$")
_BRANCH = re.compile(rf"^br i1 %(?P<cond>{VALUE_NAME}), label %(?P<true>{VALUE_NAME}), label %(?P<false>{VALUE_NAME})")


def _bare(name: str) -> str:
    return name.lstrip("%").strip('"')


def _added(value: str, definitions: Mapping) -> tuple[str, int] | None:
    """(the value added to, the constant) for `value = add %x, k`, else None."""
    instr = definitions.get(_bare(value))
    m = _ADD_CONSTANT.search(instr.text.split(", !")[0]) if instr is not None and instr.opcode == "add" else None
    return (_bare(m["of"]), int(m["k"])) if m else None


def _refilled(counter: str, inside: set[str], definitions: Mapping) -> tuple[str, str, int, int] | None:
    """(the block the refill comes from, the block the counter passes on unchanged from, K, d)
    where `counter`, a loop header phi, takes round the back edge a merge of itself and of a
    value plus K (K > 0), less d (d > 0)."""
    phi = definitions.get(counter)
    back = [value for value, block in _PHI_PAIR.findall(phi.text) if _bare(block) in inside]
    if len(back) != 1 or (dec := _added(back[0], definitions)) is None or dec[1] >= 0:
        return None
    merge = definitions.get(dec[0])
    if merge is None or merge.opcode != "phi":
        return None
    pairs = [(_bare(value), _bare(block)) for value, block in _PHI_PAIR.findall(merge.text)]
    kept = [block for value, block in pairs if value == counter]
    refills = [(block, refill[1]) for value, block in pairs if value != counter
               and (refill := _added(value, definitions)) is not None and refill[1] > 0]
    if len(pairs) != 2 or len(kept) != 1 or len(refills) != 1:
        return None
    return refills[0][0], kept[0], refills[0][1], -dec[1]


def refill_branch_probabilities(loops: Mapping[str, Sequence[str]], header_phis: Mapping[str, set[str]],
                                terminators: Mapping, definitions: Mapping) -> dict[tuple[str, str], Fraction]:
    """(block, target) → probability for each branch that tests a loop's refilled counter for
    zero (`loops`: header → its blocks; `header_phis`: header → its phis' names): d / K to the
    refill, the rest to the other side."""
    out: dict[tuple[str, str], Fraction] = {}
    for header, blocks in loops.items():
        inside = set(blocks)
        for block in blocks:
            term = terminators.get(block)
            branch = _BRANCH.match(term.text) if term is not None and term.opcode == "br" else None
            test = definitions.get(_bare(branch["cond"])) if branch else None
            zero = _ZERO_TEST.search(test.text.split(", !")[0]) if test is not None and test.opcode == "icmp" else None
            counter = definitions.get(_bare(zero["of"])) if zero else None
            if counter is None or counter.name not in header_phis.get(header, ()):
                continue
            found = _refilled(counter.name, inside, definitions)
            if found is None:
                continue
            refill_from, kept_from, k, d = found
            on_zero, other = ((branch["true"], branch["false"]) if zero["predicate"] == "eq"
                              else (branch["false"], branch["true"]))
            on_zero, other = _bare(on_zero), _bare(other)
            if on_zero != refill_from or kept_from not in (block, other) or d > k:
                continue  # the refill must be what the zero side does, the other side pass it on
            share = Fraction(d, k)
            out[(block, on_zero)] = share
            out[(block, other)] = 1 - share
    return out



# A counter kept in memory (a global, a field of a struct the function is handed): each pass
# loads it, tests it for zero, and stores it back less d. Passes are calls or iterations alike.
_LOAD = re.compile(rf"= load i\d+, ptr (?P<at>[@%]{VALUE_NAME})")
_STORE = re.compile(rf"^store (?:volatile )?i\d+ (?P<value>%{VALUE_NAME}|-?\d+), ptr (?P<at>[@%]{VALUE_NAME})")


def _fixed_location(value: str, definitions: Mapping, loop_defined: Mapping[str, str | None]) -> str | None:
    """The memory `value` is loaded from, where it is the same at every pass: a global, or an
    address computed outside every loop (a counter in `a[i]` is one per element, not one)."""
    instr = definitions.get(_bare(value))
    m = _LOAD.search(instr.text) if instr is not None and instr.opcode == "load" else None
    if m is None:
        return None
    at = m["at"]
    return at if at.startswith("@") or loop_defined.get(_bare(at)) is None else None


def _refill_amount(value: str, location: str, definitions: Mapping) -> int | None:
    """K where `value`, what the zero side leaves in the counter, is the constant K or `x + K`
    (K > 0); 0 where it is the counter reloaded (a call on that side refilled it, by an amount
    not read here); None where it is neither (no refill: a budget that stays spent)."""
    if value.lstrip("-").isdigit():
        return int(value) if int(value) > 0 else None
    if (added := _added(value, definitions)) is not None:
        return added[1] if added[1] > 0 else None
    reloaded = definitions.get(_bare(value))
    m = _LOAD.search(reloaded.text) if reloaded is not None and reloaded.opcode == "load" else None
    return 0 if m is not None and m["at"] == location else None


def countdown_branch_probabilities(body: Sequence, terminators: Mapping, definitions: Mapping,
                                   loop_defined: Mapping[str, str | None], default_count: int
                                   ) -> tuple[dict[tuple[str, str], Fraction], list[str]]:
    """(block, target) → probability for each branch that finds a counter kept in memory at
    zero, where every pass stores it back less d and the zero side refills it (`body`: (block,
    instructions) pairs): d / K to the zero side for a refill by K; where a call refills it by an
    amount not read here, 1 / `default_count` (one pass in an unknown count of them). With notes."""
    stores: dict[str, list[str]] = {}
    for _, instrs in body:
        for instr in instrs:
            if instr.opcode == "store" and (m := _STORE.match(instr.text)):
                stores.setdefault(m["at"], []).append(m["value"].lstrip("%"))
    out: dict[tuple[str, str], Fraction] = {}
    notes = []
    for block, term in terminators.items():
        branch = _BRANCH.match(term.text) if term.opcode == "br" else None
        test = definitions.get(_bare(branch["cond"])) if branch else None
        zero = _ZERO_TEST.search(test.text.split(", !")[0]) if test is not None and test.opcode == "icmp" else None
        location = _fixed_location(zero["of"], definitions, loop_defined) if zero else None
        if location is None:
            continue
        counter = _bare(zero["of"])
        refill = None
        for stored in stores.get(location, ()):
            dec = _added(stored, definitions)
            merge = definitions.get(dec[0]) if dec is not None and dec[1] < 0 else None
            if merge is None or merge.opcode != "phi":
                continue
            values = [_bare(value) for value, _ in _PHI_PAIR.findall(merge.text)]
            if len(values) == 2 and values.count(counter) == 1:
                other = next(value for value in values if value != counter)
                refill = (_refill_amount(other, location, definitions), -dec[1])
                break
        if refill is None or refill[0] is None or 0 < refill[0] < refill[1]:
            continue
        k, d = refill
        share = Fraction(d, k) if k else Fraction(1, default_count)
        on_zero, other = ((branch["true"], branch["false"]) if zero["predicate"] == "eq"
                          else (branch["false"], branch["true"]))
        out[(block, _bare(on_zero))] = share
        out[(block, _bare(other))] = 1 - share
        where = location.lstrip("@%")
        notes.append(f"`{where}` counts down by {d} a pass and is refilled when found at zero"
                     + (f" by {k}: the refill runs once in {float(k / d):.3g} passes" if k else
                        f" by a call, by an amount not known here: the refill taken to run once in {default_count}"
                        f" passes (the default count)"))
    return out, notes
