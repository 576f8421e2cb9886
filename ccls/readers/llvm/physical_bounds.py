"""Bounds that a loop's own operations put on how often it can run, where ScalarEvolution gives
none: what C leaves undefined cannot happen in a correct program, so it limits the count.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from fractions import Fraction

from ccls.polynomial import Polynomial
from ccls.readers import data_walks
from ccls.readers.llvm.reading import _exit_test, _Reading, _successors
from ccls.readers.scev import FunctionAnalyses, add_recurrence

_SHIFTS = ("shl", "lshr", "ashr")
_CASTS = ("zext", "sext", "trunc", "freeze")
_INT = re.compile(r"^i(\d+)$")


def uncast(name: str, reading: _Reading) -> str:
    """The value behind integer casts (`zext nneg i32 %bits to i64` → `bits`)."""
    for _ in range(4):
        instr = reading.definitions.get(name)
        if instr is None or instr.opcode not in _CASTS or not instr.operands[0].name:
            return name
        name = instr.operands[0].name
    return name


def _reaches_avoiding(start: str, goals: set[str], avoid: str, inside: set[str], terminators: dict) -> bool:
    """Whether a path inside the loop leads from `start` to one of `goals` without passing `avoid`."""
    seen, stack = {start}, [start]
    while stack:
        block = stack.pop()
        if block in goals:
            return True
        for target in _successors(terminators[block]) if block in terminators else ():
            target = target.strip('"')
            if target in inside and target != avoid and target not in seen:
                seen.add(target)
                stack.append(target)
    return False


def on_every_iteration(block: str, header: str, inside: set[str], terminators: dict) -> bool:
    """Whether `block` runs on every iteration that goes round again: each path from the header
    to a block that jumps back to it passes through `block`."""
    if block == header:
        return True
    latches = {b for b in inside if b in terminators
               and header in (t.strip('"') for t in _successors(terminators[b]))}
    return bool(latches) and not _reaches_avoiding(header, latches, block, inside, terminators)


def _passes_below(limit: int, step: int, block: str, header: str) -> int:
    """Iterations of a counter stepped by `step` that a use in `block` on every iteration keeps
    below `limit`: ⌈limit/step⌉ that go round again, and the last one if the use is past the
    header's exit test."""
    return math.ceil(limit / step) + (0 if block == header else 1)


def shift_width_trip(record, analyses: FunctionAnalyses, terminators: dict,
                     reading: _Reading) -> tuple[int, str] | None:
    """A counter stepped up by a constant that is, on every iteration, the amount of a shift
    (a bit buffer: `while (bits < need) { hold += (unsigned long)*in++ << bits; bits += 8; }`).
    C defines `x << n` only for 0 <= n < the width of x, so the counter takes at most
    ceil(width / step) values on the iterations that go round again: the loop runs at most one
    more time than that. (iterations, what the bound assumes, in words), or None."""
    inside = set(record.blocks)
    best: tuple[int, str] | None = None
    for block in record.blocks:
        for instr in reading.instructions.get(block, ()):
            if instr.opcode not in _SHIFTS or len(instr.operands) < 2 or not instr.operands[1].name:
                continue
            width = _INT.match(instr.operands[0].type_text or "")
            counter = uncast(instr.operands[1].name, reading)
            recurrence = add_recurrence(analyses.value_scevs.get(counter, ""))
            if width is None or recurrence is None or recurrence.loop != record.header:
                continue
            bits, step = int(width[1]), recurrence.step
            if not 0 < step < bits or not on_every_iteration(block, record.header, inside, terminators):
                continue
            # the iterations that go round again each shift by a distinct amount in [0, bits)
            most = _passes_below(bits, step, block, record.header)
            why = (f"its counter grows by {step} each iteration and is the amount of a shift of a {bits}-bit "
                   f"value, which C defines only below {bits}: at most {most} iterations")
            if best is None or most < best[0]:
                best = (most, why)
    return best


# The names clang and LLVM give the values they make (`%add60`, `%conv42`, `%spec.select`,
# `%indvars.iv`); a phi named otherwise is a C variable's value (`%len.0`, `%op.3.ph`: mem2reg
# names a variable's merged values after it).
_MADE_NAMES = frozenset("""
    add sub mul div rem shl shr and or xor not neg conv call cmp tobool lnot land lor cond inc dec
    incdec arrayidx arraydecay idx idxprom idxext frombool tmp retval spec ind indvars lsr xtraiter niter
    unroll narrow sext zext trunc cast ptr vla agg coerce this bf sroa storemerge lcssa promoted min max
    umin umax smin smax abs select sel phi iv index vec vector broadcast splat reass mask masked wide
    or_cond brmerge switch predphi exitcond cleanup cleanup_dest ehselector exn
""".split())
# mem2reg's `len.0`, `len.addr.017`, with the suffixes of LLVM's loop passes (`op.3.ph`, `op.3.unr`,
# `len.0.lcssa`) and the inliner's `.i`; not LICM's `have.promoted` (a memory location)
_VARIABLE = re.compile(r"^(?P<base>[A-Za-z_]\w*?)(?:\.addr)?(?:\.\d+)+"
                       r"(?:\.(?:ph|unr|lcssa\d*|be|us\d*|epil|prol|i\d*|\d+))*$")


def variable_of(value: str, reading: _Reading, parameters: set[str]) -> str | None:
    """The C variable whose value `value` is, where its name says so: an integer phi named after
    a variable the function assigns (`%len.0` → `len`; a select, where LLVM made the merge one),
    or a merge of reads of one member (`s->lookahead`); None for a value LLVM made (`%add60`, a
    numbered `%i42`), a load, a pointer (an address, no count), or a parameter's own name (its
    value at entry is the parameter)."""
    instr = reading.definitions.get(value)
    if instr is None or instr.opcode not in ("phi", "select") or not _INT.match(instr.type_text):
        return None
    if _VARIABLE.match(value) is None:  # a merge of what the loop reads from one member each time (`s->lookahead`, re-read)
        return _one_member_read(instr, reading, parameters)
    base = variable_name(value)
    return base if base not in parameters else None


def variable_name(value: str) -> str | None:
    """The C variable a merge LLVM made is named after (`%len.0`, `%ip.addr.0.lcssa` → `len`,
    `ip`); None for a name LLVM made (`%add60`, `%cond228`)."""
    m = _VARIABLE.match(value)
    if m is None:
        return None
    base = m["base"]
    if base.rstrip("0123456789").lower() in _MADE_NAMES or data_walks.GENERIC.match(base):
        return None
    return base


def _one_member_read(phi, reading: _Reading, parameters: set[str]) -> str | None:
    """`s->lookahead` for a phi whose incoming values are all reads of that one member."""
    if phi.opcode != "phi":
        return None
    names = data_walks.Names(reading.definitions, parameters)
    read = set()
    for value, _ in _PHI_PAIR.findall(phi.text):
        instr = reading.definitions.get(value[1:].strip('"')) if value.startswith("%") else None
        if instr is None or instr.opcode != "load":
            return None
        read.add(names.loaded_from(instr.operands[0]))
    named = read.pop() if len(read) == 1 else None
    return named


_EQUALITY_TEST = re.compile(r"= icmp (?P<predicate>eq|ne) i\d+ %(?P<value>\"[^\"]+\"|[-\w.$]+), "
                            r"(?P<target>-?\d+|%(?:\"[^\"]+\"|[-\w.$]+))\s*(?:,|$)")


@dataclass(frozen=True)
class ExactStride:
    """A counter that leaves its loop only on meeting a value (`exact_stride`)."""

    start: str  # where the counter starts, as ScalarEvolution writes it
    step: int
    target: str  # the value it leaves on: a constant, or `%value`
    note: str


def _start_step(scev: str, header: str) -> tuple[str, int] | None:
    """(start, constant step) of this loop's add recurrence `{start,+,step}<%header>`."""
    found = add_recurrence(scev)
    return (found.start, found.step) if found is not None and found.loop == header else None


def exact_stride(record, analyses: FunctionAnalyses, terminators: dict, reading: _Reading) -> ExactStride | None:
    """A loop whose only exit is its counter, stepped by a constant of 2 or more, becoming equal
    to a value (`for (; length; length -= 16)`, `do { … } while (n -= 4)`, the body LLVM
    unrolled k times after a prologue ran the remainder): ScalarEvolution gives no count, since
    a counter that steps past the value would wrap around and go on. A loop that ends meets the
    value exactly: (target − start) / step iterations go round again. None for other loops."""
    inside = set(record.blocks)
    branch, test = _exit_test(record, terminators, reading)
    equal = _EQUALITY_TEST.search(test.text) if test is not None else None
    if equal is None:
        return _stride_down_to_a_floor(branch, test, record, analyses) if test is not None else None
    if (branch["true"].strip('"') not in inside) != (equal["predicate"] == "eq"):
        return None  # leaves while the counter differs from the value: a search, not a count
    recurrence = _start_step(analyses.value_scevs.get(equal["value"].strip('"'), ""), record.header)
    if recurrence is None or abs(recurrence[1]) < 2:
        return None  # a step of 1 ScalarEvolution counts itself
    start, step = recurrence
    target = equal["target"]
    where = "zero" if target == "0" else "the value it leaves on"
    return ExactStride(start, step, target,
                       f"its counter steps by {step} until it is exactly {where}, taken to meet it (a start at a "
                       f"multiple of {abs(step)} from it, as LLVM arranges for a loop it unrolls; otherwise it would "
                       f"wrap around and not end)")


_ABOVE_TEST = re.compile(r"= icmp (?P<predicate>ugt|sgt) i\d+ %(?P<value>\"[^\"]+\"|[-\w.$]+), (?P<floor>\d+)\s*(?:,|$)")


def _stride_down_to_a_floor(branch, test, record, analyses: FunctionAnalyses) -> ExactStride | None:
    """A loop whose only exit is its counter, stepped down by a constant of 2 or more, no longer
    above a constant floor (`while (len > 2) { …; len -= 3; }`, the body LLVM unrolled after a
    prologue ran the remainder): ScalarEvolution gives no count where an unsigned counter could
    step past zero and wrap around. Going on while above the floor, it runs (start − floor) /
    step more times, rounded up: taken as that fraction (within one of the count)."""
    above = _ABOVE_TEST.search(test.text)
    if above is None or branch["true"].strip('"') not in set(record.blocks):
        return None  # not "goes on while above the floor"
    recurrence = _start_step(analyses.value_scevs.get(above["value"].strip('"'), ""), record.header)
    if recurrence is None or recurrence[1] > -2:
        return None  # a counter going up, or one of step 1 ScalarEvolution counts itself
    start, step = recurrence
    floor = int(above["floor"])
    wraps = "" if -step <= floor + 1 or above["predicate"] == "sgt" else \
        (f"; taken not to step from above {floor} past zero, as LLVM arranges for a loop it unrolls (a counter that "
         f"did would wrap around and go on)")
    return ExactStride(start, step, str(floor),
                       f"its counter steps by {step} while above {floor}: (start − {floor}) / {-step} iterations "
                       f"more, within one (the last step may pass below {floor} by less than {-step}){wraps}")


_ARRAY_ELEMENT = re.compile(r"= getelementptr (?:inbounds )?(?:nuw )?\[(?P<n>\d+) x [^\]]+\], "
                            r"ptr [%@](?:\"[^\"]+\"|[-\w.$]+), i\d+ 0, i\d+ %(?P<index>\"[^\"]+\"|[-\w.$]+)(?:,|$)")


def array_index_trip(record, analyses: FunctionAnalyses, terminators: dict,
                     reading: _Reading) -> tuple[int, str] | None:
    """A counter stepped by a constant that indexes an array of N elements, read or written on
    every iteration (`while (s->count[bits] == 0) bits--;`, `lens[order[have++]] = 0`): C
    defines `a[i]` only for 0 <= i < N, so the counter takes at most ceil(N / |step|) values on
    the iterations that go round again. (iterations, what the bound assumes), or None."""
    inside = set(record.blocks)
    best: tuple[int, str] | None = None
    for block in record.blocks:
        every = None  # whether the block runs on every iteration, found once it matters
        for instr in reading.instructions.get(block, ()):
            if instr.opcode not in ("load", "store") or not instr.operands:
                continue
            pointer = instr.operands[0 if instr.opcode == "load" else 1].name
            gep = reading.definitions.get(pointer) if pointer else None
            m = _ARRAY_ELEMENT.search(gep.text) if gep is not None and gep.opcode == "getelementptr" else None
            if m is None or int(m["n"]) < 2:  # [0 x T] and [1 x T]: a trailing array of any length
                continue
            recurrence = _start_step(analyses.value_scevs.get(uncast(m["index"].strip('"'), reading), ""),
                                     record.header)
            if recurrence is None or recurrence[1] == 0:
                continue
            if every is None:
                every = on_every_iteration(block, record.header, inside, terminators)
            if not every:
                break
            n, step = int(m["n"]), abs(recurrence[1])
            most = _passes_below(n, step, block, record.header)
            why = (f"its counter, stepped by {recurrence[1]} each iteration, indexes an array of {n} elements on "
                   f"every iteration, which C defines only below {n}: at most {most} iterations")
            if best is None or most < best[0]:
                best = (most, why)
    return best


_PHI_PAIR = re.compile(r"\[\s*(%?(?:\"[^\"]+\"|[-\w.$]+)),\s*%(\"[^\"]+\"|[-\w.$]+)\s*\]")
_SHIFT_BY = re.compile(r"= (?P<op>lshr|shl)(?: exact| nuw| nsw)* i(?P<bits>\d+) %(?P<of>\"[^\"]+\"|[-\w.$]+), "
                       r"(?P<k>\d+)(?:,|$)")
_PURE = frozenset(("add", "sub", "mul", "and", "or", "xor", "shl", "lshr", "ashr", "icmp", "select", "zext", "sext",
                   "trunc", "freeze", "udiv", "sdiv", "urem", "srem"))


def _shifted_to_zero(phi, inside: set[str], reading: _Reading) -> int | None:
    """How many nonzero values a header phi takes when it starts at a constant and is shifted
    by a constant each iteration (`m = 1u << 31; … m >>= 1`): after that many it is 0 for good."""
    pairs = [(value, block.strip('"')) for value, block in _PHI_PAIR.findall(phi.text)]
    starts = [value for value, block in pairs if block not in inside]
    steps = [value for value, block in pairs if block in inside]
    if len(starts) != 1 or len(steps) != 1 or not re.fullmatch(r"-?\d+", starts[0]) or not steps[0].startswith("%"):
        return None
    step = reading.definitions.get(steps[0][1:].strip('"'))
    m = _SHIFT_BY.search(step.text) if step is not None else None
    if m is None or m["of"].strip('"') != phi.name or not 0 < int(m["k"]) < int(m["bits"]):
        return None
    bits, k = int(m["bits"]), int(m["k"])
    start = int(starts[0]) % (1 << bits)
    if start == 0:
        return None
    if m["op"] == "lshr":
        return start.bit_length() // k + (1 if start.bit_length() % k else 0)
    trailing = (start & -start).bit_length() - 1
    return math.ceil((bits - trailing) / k)


def shifted_mask_trip(record, terminators: dict, reading: _Reading) -> tuple[int, str] | None:
    """A loop whose every branch depends only on values from before the loop and on masks
    shifted from a constant to zero (`for (m = 0x80; …; m >>= 1)`, a bit-at-a-time product):
    once the masks are 0 each iteration goes the same way, so a loop that ends at all ends
    within one iteration more. (iterations, what the bound assumes), or None."""
    inside = set(record.blocks)
    header = reading.instructions.get(record.header, ())
    masks = {}
    for phi in header:
        if phi.opcode == "phi" and (count := _shifted_to_zero(phi, inside, reading)) is not None:
            masks[phi.name] = count
    if not masks:
        return None
    seen: set[str] = set()

    def depends_only_on_masks(name: str) -> bool:
        if not name or name in seen or reading.block_of.get(name) not in inside:
            return True  # a constant, or a value from before the loop
        seen.add(name)
        if len(seen) > 200:
            return False
        instr = reading.definitions.get(name)
        if instr is None:
            return False
        if instr.opcode == "phi":
            if name in masks:
                return True
            if reading.block_of.get(name) == record.header:
                return False  # state the loop carries: its branches may change as long as it does
            return all(depends_only_on_masks(value[1:].strip('"'))
                       for value, _ in _PHI_PAIR.findall(instr.text) if value.startswith("%"))
        return instr.opcode in _PURE and all(depends_only_on_masks(op.name) for op in instr.operands)

    for block in record.blocks:
        term = terminators.get(block)
        if term is None or term.opcode not in ("br", "switch") or not term.operands:
            continue
        if term.opcode == "br" and len(term.operands) == 1:
            continue  # unconditional
        if not depends_only_on_masks(term.operands[0].name):
            return None
    most = max(masks.values()) + 1
    why = (f"its branches depend only on values from before it and on a mask shifted by a constant each "
           f"iteration, which is zero after {most - 1} iterations and from then on sends every iteration the same "
           f"way: if it ends at all it ends within {most} iterations")
    return most, why


_ADD_NO_WRAP = re.compile(r"= add nuw (?:nsw )?i\d+ (?P<a>%?(?:\"[^\"]+\"|[-\w.$]+)), "
                          r"(?P<b>%?(?:\"[^\"]+\"|[-\w.$]+))(?:,|$)")
_ADD_ANY = re.compile(r"= add (?:nuw )?(?:nsw )?i\d+ (?P<a>%?(?:\"[^\"]+\"|[-\w.$]+)), "
                      r"(?P<b>%?(?:\"[^\"]+\"|[-\w.$]+))(?:,|$)")
# Casts that keep an unsigned value as it is: widening, and narrowing LLVM marks lossless.
_SAME_VALUE = re.compile(r"= (?:zext(?: nneg)?|trunc nuw(?: nsw)?|sext nneg) i\d+ %(?P<of>\"[^\"]+\"|[-\w.$]+) to ")
_ICMP = re.compile(r"= icmp (?P<predicate>[us](?:lt|le|gt|ge)) i\d+ (?P<a>%?(?:\"[^\"]+\"|[-\w.$]+)), "
                   r"(?P<b>%?(?:\"[^\"]+\"|[-\w.$]+))(?:,|$)")
_INVERSE = {"ult": "uge", "ule": "ugt", "slt": "sge", "sle": "sgt", "uge": "ult", "ugt": "ule", "sge": "slt", "sgt": "sle"}
_SWAPPED = {"ult": "ugt", "ule": "uge", "slt": "sgt", "sle": "sge", "ugt": "ult", "uge": "ule", "sgt": "slt", "sge": "sle"}


def _not_below(value: str, phi: str, inside: set[str], reading: _Reading, depth: int = 0,
               merging: frozenset[str] = frozenset(), adds: re.Pattern = _ADD_NO_WRAP) -> bool:
    """Whether `value` is, on every path inside the loop, `phi` plus something an addition that
    cannot wrap keeps at least 0 (`k`, `k + r`, `k + 15`, a merge of those, an inner loop's
    counter that starts from one of those and only adds to itself)."""
    if value == phi or value in merging:
        return True  # (a merge met again round an inner loop: not below what it merges, by induction)
    instr = reading.definitions.get(value)
    if instr is None or depth > 12 or reading.block_of.get(value) not in inside:
        return False
    text = instr.text.split(", !")[0]
    if instr.opcode == "add" and (m := adds.search(text)):
        return any(_not_below(operand.lstrip("%").strip('"'), phi, inside, reading, depth + 1, merging, adds)
                   for operand in (m["a"], m["b"]) if operand.startswith("%"))
    if (cast := _SAME_VALUE.search(text)) is not None:
        return _not_below(cast["of"].strip('"'), phi, inside, reading, depth + 1, merging, adds)
    if instr.opcode == "phi":
        arms = [v for v, _ in _PHI_PAIR.findall(instr.text)]
    elif instr.opcode == "select":
        arms = [f"%{op.name}" if op.name else op.text.split()[-1] for op in instr.operands[1:3]]
    else:
        return False
    arms = [arm for arm in arms if arm not in ("poison", "undef")]  # a path that does not use the value
    return bool(arms) and all(arm.startswith("%") and _not_below(arm[1:].strip('"'), phi, inside, reading, depth + 1,
                                                                 merging | {value}, adds)
                              for arm in arms)


def _rises_by_one(value: str, phi: str, inside: set[str], reading: _Reading, adds: re.Pattern = _ADD_NO_WRAP) -> bool:
    """Whether `value` (what the phi takes round the back edge) is at least `phi + 1`: an
    addition (`adds`: one that cannot wrap) of a positive constant to a value not below the phi."""
    instr = reading.definitions.get(value)
    m = adds.search(instr.text.split(", !")[0]) if instr is not None and instr.opcode == "add" else None
    if m is None:
        return False
    for counter, step in ((m["a"], m["b"]), (m["b"], m["a"])):
        if re.fullmatch(r"\d+", step) and int(step) >= 1 and counter.startswith("%") \
                and _not_below(counter[1:].strip('"'), phi, inside, reading, adds=adds):
            return True
    return False


_MAX_PATHS = 64  # leaf paths of a counter's merges: more is a tangle, not a decoder's few cases


def _path_advances(value: str, phi: str, inside: set[str], reading: _Reading, maxima: dict[str, int],
                   depth: int = 0, merging: frozenset[str] = frozenset()) -> list[Fraction] | None:
    """How far above `phi` `value` lies on each path that merges into it, where `_not_below`
    holds: a constant added counts whole, a value the data decides within [0, m] (`r = s >> 4`:
    m = 15) counts m / 2, and what is not known (an inner loop's own count) counts 0, its least.
    None round an inner loop's cycle (its entry values say where it starts)."""
    if value == phi:
        return [Fraction(0)]
    if value in merging:
        return None
    instr = reading.definitions.get(value)
    if instr is None or depth > 12 or reading.block_of.get(value) not in inside:
        return [Fraction(0)]
    text = instr.text.split(", !")[0]
    if instr.opcode == "add" and (m := _ADD_ANY.search(text)):
        for counter, other in ((m["a"], m["b"]), (m["b"], m["a"])):
            if counter.startswith("%") and _not_below(counter[1:].strip('"'), phi, inside, reading, adds=_ADD_ANY):
                below = _path_advances(counter[1:].strip('"'), phi, inside, reading, maxima, depth + 1, merging)
                added = Fraction(int(other)) if re.fullmatch(r"\d+", other) else \
                    Fraction(maxima.get(other[1:].strip('"') if other.startswith("%") else "", 0), 2)
                return [advance + added for advance in below] if below is not None else None
        return [Fraction(0)]
    if (cast := _SAME_VALUE.search(text)) is not None:
        return _path_advances(cast["of"].strip('"'), phi, inside, reading, maxima, depth + 1, merging)
    if instr.opcode == "phi":
        arms = [v for v, _ in _PHI_PAIR.findall(instr.text)]
    elif instr.opcode == "select":
        arms = [f"%{op.name}" if op.name else op.text.split()[-1] for op in instr.operands[1:3]]
    else:
        return [Fraction(0)]
    paths: list[Fraction] = []
    for arm in arms:
        if arm.startswith("%") and (found := _path_advances(arm[1:].strip('"'), phi, inside, reading, maxima,
                                                            depth + 1, merging | {value})) is not None:
            paths.extend(found)
    return paths[:_MAX_PATHS] or None


def rising_counter_mean_step(record, terminators: dict, reading: _Reading, maxima: dict[str, int]) -> Fraction | None:
    """The mean step of the counter that bounds a loop (`rising_counter_trip`) where its
    back-edge values add, on some paths, amounts the data decides (`k += r` in a run-length
    decoder, `k += 15` over a run of 16 zeros): the mean over its paths (`_path_advances`),
    each path alike, as nothing says which the data takes more. None where there is no such
    counter, or it only steps by 1 (a plain `k++`)."""
    found = _rising_counter_trip(record, terminators, reading, _ADD_NO_WRAP) \
        or _rising_counter_trip(record, terminators, reading, _ADD_ANY)
    if found is None:
        return None
    phi, inside = found[2], set(record.blocks)
    steps = [value[1:].strip('"') for value, block in _PHI_PAIR.findall(phi.text)
             if block.strip('"') in inside and value.startswith("%")]
    paths: list[Fraction] = []
    for step in steps:
        if (found := _path_advances(step, phi.name, inside, reading, maxima)) is None:
            return None
        paths.extend(found)
    mean = sum(paths, Fraction(0)) / len(paths) if paths else Fraction(0)
    return mean if mean > 1 else None


def rising_counter_trip(record, terminators: dict, reading: _Reading) -> tuple[int, str] | None:
    """A counter that rises by at least 1 each iteration, by steps only the run knows (`for (k
    = 1; k < 64; k++) { … k += r; }`, a run-length decoder skipping ahead), tested against a
    constant: its additions cannot wrap (LLVM marks them `nuw`), so after j iterations it is at
    least its start + j, and the loop runs at most bound - start + 1 times. Where LLVM could not
    mark them (a narrow `uint8_t k`), they are taken not to wrap, and the note says so: a wrap
    would restart the count below the bound, a loop without end. (iterations, what the bound
    assumes), or None."""
    found = _rising_counter_trip(record, terminators, reading, _ADD_NO_WRAP)
    if found is None and (found := _rising_counter_trip(record, terminators, reading, _ADD_ANY)) is not None:
        found = (found[0], found[1].replace("(additions that cannot wrap)", "(additions taken not to wrap: LLVM "
                                                                         "could not prove it)"), found[2])
    return found[:2] if found is not None else None


def _rising_counter_trip(record, terminators: dict, reading: _Reading, adds: re.Pattern) -> tuple[int, str, object] | None:
    """`rising_counter_trip`'s (iterations, why) with the counter's phi."""
    inside = set(record.blocks)
    rising: dict[str, int] = {}  # header phi → its constant start
    phis = {}
    for phi in reading.instructions.get(record.header, ()):
        if phi.opcode != "phi" or not _INT.match(phi.type_text):
            continue
        pairs = [(value, block.strip('"')) for value, block in _PHI_PAIR.findall(phi.text)]
        starts = [value for value, block in pairs if block not in inside]
        steps = [value for value, block in pairs if block in inside]
        if len(starts) == 1 and re.fullmatch(r"\d+", starts[0]) and steps \
                and all(step.startswith("%") and _rises_by_one(step[1:].strip('"'), phi.name, inside, reading, adds)
                        for step in steps):
            rising[phi.name] = int(starts[0])
            phis[phi.name] = phi
    best: tuple[int, str, object] | None = None
    for block, branch, test in _compare_branches(record, terminators, reading):
        if (branch["true"].strip('"') in inside) == (branch["false"].strip('"') in inside):
            continue
        m = _ICMP.search(test)
        if m is None:
            continue
        if not on_every_iteration(block, record.header, inside, terminators):
            continue  # a test on some paths only (`if (r == 15 && k > 48) fail`): others go round past it
        predicate = m["predicate"] if branch["true"].strip('"') in inside else _INVERSE[m["predicate"]]  # goes on
        value, bound = m["a"], m["b"]
        if not re.fullmatch(r"-?\d+", bound):
            value, bound, predicate = bound, value, _SWAPPED[predicate]
        if not re.fullmatch(r"-?\d+", bound) or not value.startswith("%") or predicate[1:] not in ("lt", "le"):
            continue
        for phi, start in rising.items():
            if not _not_below(value[1:].strip('"'), phi, inside, reading, adds=adds):
                continue
            most = int(bound) + (1 if predicate.endswith("le") else 0) - start + 1
            if most < 1:
                continue
            why = (f"its counter starts at {start} and rises by at least 1 each iteration (additions that cannot "
                   f"wrap), and goes on only while below {int(bound) + (1 if predicate.endswith('le') else 0)}: "
                   f"at most {most} iterations")
            if best is None or most < best[0]:
                best = (most, why, phis[phi])
    return best


def _compare_branches(record, terminators: dict, reading: _Reading):
    """(block, its conditional branch's match, the compare it tests, as text) for each block of
    the loop that ends on a branch on an integer compare."""
    for block in record.blocks:
        term = terminators.get(block)
        branch = data_walks.BRANCH.match(term.text) if term is not None and term.opcode == "br" else None
        test = reading.definitions.get(branch["cond"].strip('"')) if branch else None
        if test is not None and test.opcode == "icmp":
            yield block, branch, test.text.split(", !")[0]


_AND = re.compile(r"= and i\d+ (?P<a>%?(?:\"[^\"]+\"|[-\w.$]+)), (?P<b>%?(?:\"[^\"]+\"|[-\w.$]+))(?:,|$)")
_ZERO_COMPARE = re.compile(r"= icmp (?P<predicate>eq|ne) i\d+ %(?P<value>\"[^\"]+\"|[-\w.$]+), 0(?:,|$)")
_SHIFT_RIGHT = re.compile(r"= (?:lshr(?: exact)? i(?P<bits>\d+) %(?P<of>\"[^\"]+\"|[-\w.$]+), (?P<k>\d+)"
                          r"|udiv(?: exact)? i(?P<dbits>\d+) %(?P<dof>\"[^\"]+\"|[-\w.$]+), (?P<d>\d+))(?:,|$)")


def _shifted_right(phi, inside: set[str], reading: _Reading) -> tuple[str, int, int] | None:
    """(the value it takes round the back edge, its width in bits, the bits shifted out each
    iteration) for a header phi shifted right by a constant each iteration (`m >>= 1`, `m /= 4`),
    from any start; None for any other phi."""
    pairs = [(value, block.strip('"')) for value, block in _PHI_PAIR.findall(phi.text)]
    steps = {value for value, block in pairs if block in inside}
    if len(steps) != 1 or len(pairs) == len(steps):
        return None
    step = next(iter(steps))
    instr = reading.definitions.get(step[1:].strip('"')) if step.startswith("%") else None
    m = _SHIFT_RIGHT.search(instr.text.split(", !")[0]) if instr is not None else None
    if m is None or (m["of"] or m["dof"]).strip('"') != phi.name:
        return None
    bits = int(m["bits"] or m["dbits"])
    if m["k"] is not None:
        k = int(m["k"])
    else:  # a division by 2^k
        d = int(m["d"])
        k = d.bit_length() - 1 if d >= 2 and d & (d - 1) == 0 else 0
    return (instr.name, bits, k) if 0 < k < bits else None


def shifted_out_trip(record, terminators: dict, reading: _Reading) -> tuple[int, str] | None:
    """A loop that leaves when a value shifted right by a constant each iteration is zero, or
    has no bit in common with a value (`while (huff & incr) incr >>= 1;`, `while (x) x >>= 1`),
    tested on every iteration, whatever the value starts at: a w-bit value shifted right by k
    is zero after ⌈w / k⌉ shifts, and then so is its AND with anything, so the loop leaves by
    then, a worst case of the data (it leaves as soon as a bit is clear). (iterations, what the
    bound assumes, in words), or None."""
    inside = set(record.blocks)
    shifted = {}  # phi or its shifted value → (the phi's name, width, k, 1 if the test sees the phi itself)
    for phi in reading.instructions.get(record.header, ()):
        if phi.opcode == "phi" and _INT.match(phi.type_text) and (found := _shifted_right(phi, inside, reading)):
            step, bits, k = found
            shifted[phi.name] = (phi.name, bits, k, 1)
            shifted[step] = (phi.name, bits, k, 0)
    if not shifted:
        return None
    best: tuple[int, str] | None = None
    for block, branch, test in _compare_branches(record, terminators, reading):
        zero = _ZERO_COMPARE.search(test)
        if zero is None:
            continue
        on_zero = (branch["true"] if zero["predicate"] == "eq" else branch["false"]).strip('"')
        if on_zero in inside:
            continue  # zero goes round again: the loop ends on a set bit, not on the value running out
        tested = zero["value"].strip('"')
        candidates = [tested]
        masked = reading.definitions.get(tested)
        if masked is not None and masked.opcode == "and" and (m := _AND.search(masked.text.split(", !")[0])):
            candidates = [operand[1:].strip('"') for operand in (m["a"], m["b"]) if operand.startswith("%")]
        for candidate in candidates:
            if candidate not in shifted:
                continue
            phi, bits, k, sees_phi = shifted[candidate]
            if not on_every_iteration(block, record.header, inside, terminators):
                break
            most = math.ceil(bits / k) + sees_phi
            named = variable_name(phi)
            what = f"`{named}` (a {bits}-bit value)" if named else f"a {bits}-bit value"
            test_said = "shares no set bit with another value" if candidate != tested else "is zero"
            why = (f"it leaves once {what}, shifted right by {k} each iteration, {test_said}, whatever it starts at; "
                   f"after {math.ceil(bits / k)} shifts it is zero (and so is its AND with anything): at most {most} "
                   f"iterations (a worst case: it leaves as soon as the bits tested are clear)")
            if best is None or most < best[0]:
                best = (most, why)
    return best


_BINARY = re.compile(r"= (?P<op>add|sub|shl)(?: nuw| nsw| exact)* i\d+ (?P<a>-?\d+|%(?:\"[^\"]+\"|[-\w.$]+)), "
                     r"(?P<b>-?\d+|%(?:\"[^\"]+\"|[-\w.$]+))(?:,|$)")


def spelled(value: str, reading: _Reading, parameters: set[str], depth: int = 0) -> str | None:
    """A value as C would spell it from the source's names (`curr`, `len-drop`, `1<<curr`,
    `s->size`): constants, parameters, variables (`variable_name`), named members, and `+`, `-`,
    `<<` of those; None where a value has no such name (a load of a computed address, a call)."""
    if re.fullmatch(r"-?\d+", value):
        return value
    value = value.lstrip("%").strip('"')
    if value in parameters:
        return value
    instr = reading.definitions.get(value)
    if instr is None or depth > 4:
        return None
    if instr.opcode in _CASTS and instr.operands and instr.operands[0].name:
        return spelled(instr.operands[0].name, reading, parameters, depth + 1)
    if instr.opcode in ("phi", "select"):
        return variable_name(value)
    if instr.opcode == "load":
        return data_walks.Names(reading.definitions, parameters).value(value)
    m = _BINARY.search(instr.text.split(", !")[0])
    if m is None:
        return None
    a, b = (spelled(m[side], reading, parameters, depth + 1) for side in ("a", "b"))
    if a is None or b is None:
        return None
    if m["op"] == "add" and b.startswith("-"):
        return f"{a}-{b[1:]}"
    wrap = _parenthesised
    return {"add": f"{a}+{b}", "sub": f"{a}-{wrap(b)}", "shl": f"{wrap(a)}<<{wrap(b)}"}[m["op"]]


def _parenthesised(spelling: str) -> str:
    """A spelled value as an operand: bare where it is one name or number (`len`, `s->size`, `-1`)."""
    return spelling if re.fullmatch(r"-?\d+|[A-Za-z_]\w*(?:(?:->|\.)\w+)*", spelling) else f"({spelling})"


def _step_magnitude(step: str, phi: str, inside: set[str], reading: _Reading, parameters: set[str]) -> str | None:
    """How much the back-edge value `step` takes off the phi each iteration, spelled in the source's
    names, where it is a value fixed before the loop: `phi - d` gives `d`; `phi + (-1 << x)` (how
    LLVM writes `phi - (1 << x)`) gives `1<<x`; `phi + (0 - d)` gives `d`. None otherwise."""
    instr = reading.definitions.get(step)
    m = _BINARY.search(instr.text.split(", !")[0]) if instr is not None else None
    if m is None or m["op"] == "shl":
        return None
    operands = [m["a"].lstrip("%").strip('"'), m["b"].lstrip("%").strip('"')]
    if m["op"] == "sub":
        taken = operands[1] if operands[0] == phi else None
        negated = False
    else:
        taken = operands[1] if operands[0] == phi else operands[0] if operands[1] == phi else None
        negated = True
    if taken is None or re.fullmatch(r"-?\d+", taken):
        return None  # a constant step ScalarEvolution (or `exact_stride`) counts
    if reading.block_of.get(taken, "" if taken in parameters else None) in inside | {None}:
        return None  # a step the loop computes, which may change from one iteration to the next
    if not negated:
        return spelled(taken, reading, parameters)
    negative = reading.definitions.get(taken)
    n = _BINARY.search(negative.text.split(", !")[0]) if negative is not None else None
    if n is None or (n["op"], n["a"]) not in (("shl", "-1"), ("sub", "0")):
        return None
    inner = spelled(n["b"], reading, parameters)
    return f"1<<{_parenthesised(inner)}" if n["op"] == "shl" and inner else inner


def run_time_stride_to_zero(record, terminators: dict, reading: _Reading,
                            parameters: set[str]) -> tuple[int, str, str] | None:
    """A counter taken down by a step fixed before the loop but known only at run time, until it is
    exactly zero (`do { fill -= incr; … } while (fill != 0)`, both powers of two in a table
    builder's replication): ScalarEvolution gives no count (a counter that steps past zero would
    wrap around and go on), but a loop that ends meets zero exactly, after start / step
    iterations. (1 if the test sees the counter before its step else 0, the ratio's name as the
    source spells its parts, `(1<<curr)/(1<<(len-drop))`, what that assumes), or None where the
    start or the step has no name in the source."""
    inside = set(record.blocks)
    branch, test = _exit_test(record, terminators, reading)
    zero = _ZERO_COMPARE.search(test.text.split(", !")[0]) if test is not None else None
    if zero is None or (branch["true"].strip('"') not in inside) != (zero["predicate"] == "eq"):
        return None  # leaves while the counter is nonzero: not a count down to zero
    tested = zero["value"].strip('"')
    for phi in reading.instructions.get(record.header, ()):
        if phi.opcode != "phi" or not _INT.match(phi.type_text):
            continue
        pairs = [(value, block.strip('"')) for value, block in _PHI_PAIR.findall(phi.text)]
        starts = [value for value, block in pairs if block not in inside]
        steps = {value.lstrip("%").strip('"') for value, block in pairs if block in inside}
        if len(starts) != 1 or len(steps) != 1:
            continue
        step = steps.pop()
        if tested not in (phi.name, step):
            continue
        by = _step_magnitude(step, phi.name, inside, reading, parameters)
        start = spelled(starts[0], reading, parameters)
        if by is None or start is None or start.lstrip("-").isdigit() and by.isdigit():
            return None
        symbol = f"{_parenthesised(start)}/{_parenthesised(by)}"
        named = variable_name(phi.name)
        counter = f"`{named}`" if named else "its counter"
        why = (f"{counter} starts at `{start}` and goes down by `{by}` (fixed before the loop, known only at run "
               f"time) each iteration until it is exactly zero, taken to meet it (a loop that ends does; one that "
               f"steps past zero wraps around and goes on): `{symbol}` iterations, the ratio of the two")
        return (1 if tested == phi.name else 0), symbol, why
    return None


def indexed_array_length(value: str, record, terminators: dict, reading: _Reading) -> tuple[int, str] | None:
    """(N, the array's name or "an array") where `value` (or an integer cast of it) indexes an
    array of N elements (`next_code[len]++`, read or written) in a block that runs on every way
    into the loop: the blocks before its header, back through those with one way in. C defines
    `a[i]` only for 0 <= i < N, so the value is below N once the loop starts. None otherwise."""
    inside = set(record.blocks)
    same = {value} | {i.name for block in reading.instructions.values() for i in block  # casts that keep the value
                      if i.opcode in ("zext", "sext", "freeze") and i.operands and i.operands[0].name == value and i.name}
    predecessors: dict[str, list[str]] = {}
    for block, term in terminators.items():
        for target in _successors(term):
            predecessors.setdefault(target.strip('"'), []).append(block)
    entries = [b for b in predecessors.get(record.header, []) if b not in inside]
    block = entries[0] if len(entries) == 1 else None
    for _ in range(8):
        if block is None or block in inside:
            return None
        instrs = reading.instructions.get(block, ())
        accessed = {i.operands[0 if i.opcode == "load" else 1].name for i in instrs
                    if i.opcode in ("load", "store") and len(i.operands) >= (1 if i.opcode == "load" else 2)}
        for instr in instrs:
            m = _ARRAY_ELEMENT.search(instr.text) if instr.opcode == "getelementptr" else None
            if m and " inbounds " in instr.text and int(m["n"]) >= 2 and m["index"].strip('"') in same \
                    and instr.name in accessed:
                array = data_walks.Names(reading.definitions, set(reading.parameters)).value(instr.operands[0].name)
                return int(m["n"]), f"`{array}`" if array else "an array"
        before = predecessors.get(block, [])
        block = before[0] if len(before) == 1 else None
    return None


_UMIN = re.compile(r"= (?:tail )?call i\d+ @llvm\.umin\.i\d+\(i\d+ (?:noundef )?(?P<a>-?\d+|%(?:\"[^\"]+\"|[-\w.$]+)), "
                   r"i\d+ (?:noundef )?(?P<b>-?\d+|%(?:\"[^\"]+\"|[-\w.$]+))\)")


def chunked_count(record, terminators: dict, reading: _Reading, parameters: set[str],
                  default_trip_count: int = 100) -> tuple[Polynomial, set[str], str, tuple[str, str]] | None:
    """A count consumed in chunks of a fixed size (`while (len) { n = len < C ? len : C; …; len -=
    n; }`, a large write handed on C bytes at a time; or `do { ret = read(…, min(len - have, C));
    …; have += ret; } while (have < len)`): each iteration takes the chunk, or all that is left,
    and the loop leaves when nothing is, so it runs ⌈len / C⌉ times, taken as len / C plus the mean
    of the rounding, (C − 1) / 2C. C a constant, or a value fixed before the loop (then the ratio
    is a data symbol, `len/size`). Where what is taken is what a call returns when handed the
    chunk (`write`, `read`), the call is taken to consume all of it, as a complete write or read
    does. Where the count has no name in the source but C is a constant, the counter's type bounds
    it: ⌈(2^w − 1) / C⌉. (count, data symbols, why, the exit edge), or None."""
    inside = set(record.blocks)
    for block in record.blocks:
        term = terminators.get(block)
        branch = data_walks.BRANCH.match(term.text) if term is not None and term.opcode == "br" else None
        test = reading.definitions.get(branch["cond"].strip('"')) if branch else None
        if test is None or test.opcode != "icmp":
            continue
        text = test.text.split(", !")[0]
        found, exit_edge = None, None
        if (zero := _ZERO_COMPARE.search(text)) is not None:
            on_zero = (branch["true"] if zero["predicate"] == "eq" else branch["false"]).strip('"')
            other = (branch["false"] if zero["predicate"] == "eq" else branch["true"]).strip('"')
            if on_zero not in inside and other in inside:
                found, exit_edge = _chunked_down(zero["value"].strip('"'), record, inside, reading, parameters), \
                    (block, on_zero)
        elif (below := _ICMP.search(text)) is not None and below["predicate"] == "ult" \
                and branch["true"].strip('"') in inside and branch["false"].strip('"') not in inside:
            found, exit_edge = _chunked_up(below["a"], below["b"], record, inside, reading, parameters), \
                (block, branch["false"].strip('"'))
        if found is None:
            continue
        start, chunk, sees_phi, handed, bits = found
        start = _parenthesised(start) if start else start
        consumed = f"`{start}`" if start else "what is left"
        if start and re.fullmatch(r"\d+", chunk):
            size = int(chunk)
            count = Polynomial.symbol(start) * Fraction(1, size) + Fraction(size - 1, 2 * size) + sees_phi
            data = set() if start in parameters else {start}
            said = f"⌈{start} / {chunk}⌉ iterations, taken as {start} / {chunk} and the mean of the rounding"
        elif start:
            symbol = f"{start}/{chunk}"
            count, data = Polynomial.symbol(symbol) + Fraction(1, 2) + sees_phi, {symbol}
            said = f"⌈{symbol}⌉ iterations, taken as {symbol} and the mean of the rounding"
        elif re.fullmatch(r"\d+", chunk) and (most := -(-((1 << bits) - 1) // int(chunk)) + sees_phi) \
                <= default_trip_count:
            count, data = Polynomial.constant(most), set()
            said = (f"what is left is a {bits}-bit value, below 2^{bits}: at most {most} iterations (a worst case of "
                    f"the data)")
        else:
            continue
        call = (f"; each call to {handed} that is handed the chunk is taken to consume all of it, as a complete "
                f"{handed} does (one that takes less leaves more iterations)") if handed else ""
        why = (f"it takes `{chunk}` at a time from {consumed} (or all that is left, if less) and leaves when nothing "
               f"is left: {said}{call}")
        return count, data, why, exit_edge
    return None


def _header_step(tested: str, record, inside: set[str], reading: _Reading):
    """(the header phi, its start, the value it takes round the back edge) for the integer phi
    that `tested` is, or is the back-edge value of; None if none."""
    for phi in reading.instructions.get(record.header, ()):
        if phi.opcode != "phi" or not _INT.match(phi.type_text):
            continue
        pairs = [(value, block.strip('"')) for value, block in _PHI_PAIR.findall(phi.text)]
        starts = [value for value, block in pairs if block not in inside]
        steps = {value.lstrip("%").strip('"') for value, block in pairs if block in inside}
        if len(starts) == 1 and len(steps) == 1 and tested in (phi.name, next(iter(steps))):
            return phi, starts[0], next(iter(steps))
    return None


def _taken_chunk(value: str, remaining: str, inside: set[str], reading: _Reading) -> tuple[str, str | None] | None:
    """(the chunk's value, the callee that was handed it, or None) where `value` is `umin(remaining,
    chunk)`, or what a call returns that was handed that (`write(fd, p, umin(left, C))`)."""
    taken = reading.definitions.get(uncast(value, reading))
    if taken is None or taken.opcode != "call":
        return None
    u = _UMIN.search(taken.text)
    if u is not None:
        operands = [u["a"].lstrip("%").strip('"'), u["b"].lstrip("%").strip('"')]
        if remaining not in operands:
            return None
        chunk = operands[1] if operands[0] == remaining else operands[0]
        if not re.fullmatch(r"\d+", chunk) and reading.block_of.get(chunk) in inside:
            return None  # a chunk the loop computes: it may change each time
        return chunk, None
    callee = re.search(r"@([\w.$]+)\(", taken.text)
    if callee is None or callee[1].startswith("llvm."):
        return None
    for operand in taken.operands:
        if operand.name and (found := _taken_chunk(operand.name, remaining, inside, reading)) is not None \
                and found[1] is None:
            return found[0], callee[1]
    return None


def _chunked_down(tested: str, record, inside: set[str], reading: _Reading, parameters: set[str]):
    """(the count's start as the source spells it, the chunk, 1 if the test sees the counter before
    its step, the callee handed each chunk or None, the counter's bits) for a header phi `len` taken
    down by `umin(len, chunk)` (or by what a call handed that returns) each iteration, where the
    phi, or a read of the memory it was read from, is what the chunk is taken from; None otherwise."""
    found = _header_step(tested, record, inside, reading)
    if found is None:
        return None
    phi, start_value, step = found
    sub = reading.definitions.get(step)
    m = _BINARY.search(sub.text.split(", !")[0]) if sub is not None else None
    if m is None or m["op"] != "sub" or not _same_count(m["a"].lstrip("%").strip('"'), phi, start_value, step,
                                                         inside, reading):
        return None
    taken = _taken_chunk(m["b"].lstrip("%").strip('"'), phi.name, inside, reading)
    if taken is None:
        return None
    chunk_value, handed = taken
    chunk, start = spelled(chunk_value, reading, parameters), spelled(start_value, reading, parameters)
    if chunk is None or chunk in ("0", "1") or start is not None and re.fullmatch(r"-?\d+", start):
        return None
    return start, chunk, (1 if tested == phi.name else 0), handed, int(_INT.match(phi.type_text)[1])


def _same_count(value: str, phi, start_value: str, step: str, inside: set[str], reading: _Reading) -> bool:
    """Whether `value` is the count the phi holds: the phi itself, or (a count kept in memory, such
    as `strm->avail_in` or `*have`, read again after a call) a read, in the loop, of the one address
    the loop stores the phi's next value to (LLVM made the phi of that memory: on entry it holds
    what was read or stored there before the loop)."""
    if value == phi.name:
        return True
    again = reading.definitions.get(value)
    if again is None or again.opcode != "load" or reading.block_of.get(value) not in inside:
        return False
    home = again.operands[0].name
    stores = [i for block in inside for i in reading.instructions.get(block, ())
              if i.opcode == "store" and len(i.operands) == 2 and i.operands[1].name == home]
    return len(stores) == 1 and stores[0].operands[0].name == step


def _chunked_up(a: str, b: str, record, inside: set[str], reading: _Reading, parameters: set[str]):
    """The same for a counter that rises by what each chunk gives (`have += read(…, min(len - have,
    C))`) while below a bound fixed before the loop: the count is bound − start (None where it has
    no name: then the bound's type bounds it)."""
    tested, bound = a.lstrip("%").strip('"'), b.lstrip("%").strip('"')
    if not a.startswith("%") or reading.block_of.get(bound, "" if bound in parameters else None) in inside | {None}:
        return None
    found = _header_step(tested, record, inside, reading)
    if found is None or tested != found[2]:
        return None
    phi, start_value, step = found
    add = reading.definitions.get(step)
    m = _BINARY.search(add.text.split(", !")[0]) if add is not None else None
    operands = [m["a"].lstrip("%").strip('"'), m["b"].lstrip("%").strip('"')] if m is not None and m["op"] == "add" \
        else []
    counted = [o for o in operands if _same_count(o, phi, start_value, step, inside, reading)]
    if len(counted) != 1:
        return None
    given = m["b"] if operands[0] == counted[0] else m["a"]
    left = next((i.name for block in inside for i in reading.instructions.get(block, ())
                 if i.opcode == "sub" and (n := _BINARY.search(i.text.split(", !")[0])) is not None
                 and n["a"].lstrip("%").strip('"') == bound and n["b"].lstrip("%").strip('"') == phi.name), None)
    taken = _taken_chunk(given.lstrip("%").strip('"'), left, inside, reading) if left else None
    if taken is None:
        return None
    chunk_value, handed = taken
    chunk, limit = spelled(chunk_value, reading, parameters), spelled(bound, reading, parameters)
    first = spelled(start_value, reading, parameters)
    if chunk is None or chunk in ("0", "1"):
        return None
    start = None if limit is None or first is None else limit if first == "0" else f"{_parenthesised(limit)}-" \
        f"{_parenthesised(first)}"
    bits = int(re.match(r"i(\d+)", reading.definitions[bound].type_text)[1]) if bound in reading.definitions \
        and _INT.match(reading.definitions[bound].type_text) else int(_INT.match(phi.type_text)[1])
    return start, chunk, 0, handed, bits


_EQUALITY = re.compile(r"= icmp (?P<predicate>eq|ne) (?P<type>i\d+) (?P<a>%?(?:\"[^\"]+\"|[-\w.$]+)), "
                       r"(?P<b>%?(?:\"[^\"]+\"|[-\w.$]+))(?:,|$)")


def _walked_element(value: str, inside: set[str], reading: _Reading, seen: frozenset[str] = frozenset()) -> bool:
    """`value` is an element read at an address that moves in the loop: a load there (behind
    integer casts), or a header phi carrying such loads round the back edge (a rotated loop
    reads the next element at its end)."""
    name = uncast(value.lstrip("%").strip('"'), reading)
    instr = reading.definitions.get(name)
    if instr is None or name in seen or reading.block_of.get(instr.name) not in inside:
        return False
    if instr.opcode == "load":
        address = instr.operands[0].name if instr.operands else ""
        return reading.block_of.get(address) in inside
    if instr.opcode == "phi":
        return any(_walked_element(op.name, inside, reading, seen | {name}) for op in instr.operands
                   if op.name and reading.block_of.get(uncast(op.name, reading)) in inside)
    return False


def first_difference(record, terminators: dict, reading: _Reading) -> tuple[str, int] | None:
    """What a loop compares and the elements' width in bits, where it runs only while an element it walks equals another (the
    next element of a second walk: `strcmp`, `memcmp`, a common prefix; or a value the loop
    does not change, other than zero: a run of one character). It leaves at the first pair that differs, which
    for unrelated data is the first (two uniformly distributed b-bit elements are equal with
    probability 2^-b, so the run of equal pairs lasts 1 / (1 − 2^-b) ≈ 1 comparison); only
    equal sequences run to their end. Its other exits (a NUL, a bound) can only end it sooner."""
    inside = set(record.blocks)
    for block in record.blocks:
        term = terminators.get(block)
        branch = data_walks.BRANCH.match(term.text) if term is not None and term.opcode == "br" else None
        test = reading.definitions.get(branch["cond"].strip('"')) if branch else None
        equality = _EQUALITY.search(test.text) if test is not None and test.opcode == "icmp" else None
        if equality is None:
            continue
        leaves_when_unequal = branch["false" if equality["predicate"] == "eq" else "true"].strip('"')
        if leaves_when_unequal in inside:
            continue
        sides = [equality["a"], equality["b"]]
        walked = [_walked_element(side, inside, reading) for side in sides]
        # Not zero: the commonest value in memory (zero-filled buffers, sparse tables), whose runs are long.
        invariant = [side != "0" and (not side.startswith("%") or reading.block_of.get(
            uncast(side.lstrip("%").strip('"'), reading)) not in inside) for side in sides]
        if all(walked):
            return "compares two sequences element by element", int(equality["type"][1:])
        if any(walked) and any(invariant):
            return "runs while the elements it reads equal one value", int(equality["type"][1:])
    return None


def counter_ceiling(value: str, analyses: FunctionAnalyses, reading: _Reading,
                    depth: int = 0) -> tuple[int, str] | None:
    """The most a counter can hold: one that a loop of at most T passes steps up by at most k a
    pass from a start of at most c (`if (freq[i]) heap[n++] = i;` over 256 values of i) holds at
    most c + k·T; one the loop only steps down (`while (n > 1) { --n; … }`) no more than its
    start. For the counter's phi, its steps in the loop, and its value after the loop. None where
    the start has no such bound, a rising counter's loop no constant bound on its passes, or the
    counter moves any other way (a product, data)."""
    name = _through_single_merges(uncast(value, reading), reading)
    block, headers = reading.block_of.get(name), set(analyses.loops)
    for record in sorted(analyses.loops.values(), key=lambda r: -r.depth):
        if block not in record.blocks:
            continue
        inside = set(record.blocks)
        for phi in reading.instructions.get(record.header, ()):
            if phi.opcode != "phi" or not _INT.match(phi.type_text):
                continue
            pairs = data_walks._incoming(phi)
            starts = [v for v, b in pairs if b not in inside]
            nexts = {v for v, b in pairs if b in inside}
            if len(starts) != 1 or len(nexts) != 1:
                continue
            walked: dict[tuple[str, int], int | None] = {}  # one walk of the merges for both questions
            step = _most_added(nexts.pop(), phi.name, inside, reading, headers, walked=walked)
            offset = 0 if name == phi.name else _most_added(name, phi.name, inside, reading, headers, walked=walked)
            if step is None or offset is None:
                continue
            if starts[0].lstrip("-").isdigit():
                start, from_ = int(starts[0]), f"from {starts[0]}"
            elif depth < 3 and (found := counter_ceiling(starts[0], analyses, reading, depth + 1)) is not None:
                start, from_ = found[0], f"from at most {found[0]} ({found[1]})"
            else:
                continue
            if step <= 0:
                return start + max(0, offset), f"a counter {from_} that its loop only steps down"
            if record.constant_max_backedge_taken is None:
                continue
            passes = record.constant_max_backedge_taken + 1
            return start + step * passes, (f"a counter {from_} that its loop (at most {passes} passes) steps up by "
                                           f"at most {step} a pass")
    return None


def _through_single_merges(name: str, reading: _Reading) -> str:
    """The value an LCSSA phi (one incoming value) carries out of its loop."""
    for _ in range(4):
        instr = reading.definitions.get(name)
        pairs = data_walks._incoming(instr) if instr is not None and instr.opcode == "phi" else []
        if len(pairs) != 1 or pairs[0][0] not in reading.definitions:
            return name
        name = uncast(pairs[0][0], reading)
    return name


def _most_added(value: str, phi: str, inside: set[str], reading: _Reading, headers: set[str],
                depth: int = 0, walked: dict[tuple[str, int], int | None] | None = None) -> int | None:
    """The most `value` adds to `phi` in one pass of the loop (below 0 where it only takes away):
    through adds of constants and merges (phis, selects) inside it; None for any other step (a
    product, data). `walked`: the answers so far for this phi, loop and headers, by value and
    depth: merges that rejoin (a state machine's phis) are reached along many paths, and each
    is walked once instead of once per path."""
    if walked is None:
        walked = {}
    key = (value, depth)
    if key not in walked:
        walked[key] = _most_added_once(value, phi, inside, reading, headers, depth, walked)
    return walked[key]


def _most_added_once(value: str, phi: str, inside: set[str], reading: _Reading, headers: set[str],
                     depth: int, walked: dict[tuple[str, int], int | None]) -> int | None:
    value = uncast(value, reading)
    if value == phi:
        return 0
    instr = reading.definitions.get(value)
    if instr is None or depth > 12 or reading.block_of.get(value) not in inside:
        return None
    if instr.opcode in ("add", "or") and len(instr.operands) == 2 and (
            instr.opcode == "add" or " disjoint " in f" {instr.text} "):
        base, step = instr.operands
        if base.name and not step.name and step.text.split()[-1].lstrip("-").isdigit():
            below = _most_added(base.name, phi, inside, reading, headers, depth + 1, walked)
            return None if below is None else below + int(step.text.split()[-1])
        return None
    if instr.opcode in ("phi", "select"):
        if instr.opcode == "phi" and reading.block_of.get(value) in headers:
            return None  # carried round an inner loop: stepped once per pass of that one
        arms = [v for v, _ in data_walks._incoming(instr)] if instr.opcode == "phi" else \
            [op.name for op in instr.operands[1:3]]
        found = [_most_added(arm, phi, inside, reading, headers, depth + 1, walked) if arm else None for arm in arms]
        return None if not found or None in found else max(found)
    return None
