"""Search loops: a counter that stops at the first value passing a test, as in
`for (v = 1; v < 40; v++) if (need < capacity[v]) break; use(v);`. Where the test reads only
the counter, constants, read-only tables and the function's parameters, the value the loop
leaves with is decided by the values the program passes: `ccls.sizes` steps the counter
through the test at those values (as LLVM's ScalarEvolution does for a load from a constant
table compared with a constant, `computeLoadConstantCompareExitLimit`, here with the callers'
constants), where the counter's bound alone says only "at most 40".

Also store-to-load forwarding within a block (`n1 = t[i]; … if (n1 …)` where clang reloads the
global it just stored): a search's test often reads back what its body wrote. Pure: the lines
of one function in, definitions out.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

_LABEL = re.compile(r'^([-\w$.]+|"[^"]*"):')
_NAME = r'%([-\w$.]+|"[^"]*")'
_BRANCH = re.compile(rf"^\s*br i1 {_NAME}, label {_NAME}, label {_NAME}")
_JUMP = re.compile(rf"^\s*br label {_NAME}")
_DEF = re.compile(rf"^\s*{_NAME} = (.*)$")
_GLOBAL_STORE = re.compile(r"^\s*store (?P<type>i\d+) (?P<value>[^,]+), ptr @(?P<name>[-\w$.]+)(?:,|$)")
_GLOBAL_LOAD = re.compile(r"^load (?P<type>i\d+), ptr @(?P<name>[-\w$.]+)(?:,|$)")
_ICMP = re.compile(r"^icmp (?P<predicate>eq|ne|[su][lg][te]) i\d+ (?P<left>[^,]+), (?P<right>[^,\s]+)")
_ENTRY = "<entry>"
FORWARDED = "forwarded "  # a definition standing for the value a load reads back: "forwarded %16"


@dataclass(frozen=True)
class _Block:
    lines: tuple[str, ...]
    successors: tuple[str, ...]  # () with an unknown terminator (a switch, a return): never a loop's
    branch: tuple[str, str, str] | None  # (condition, true target, false target)


def _unquote(name: str) -> str:
    return name[1:-1] if len(name) >= 2 and name[0] == name[-1] == '"' else name


def blocks_of(body: list[str]) -> dict[str, _Block]:
    """A function's basic blocks by label (the first, unlabelled one as "<entry>")."""
    out: dict[str, _Block] = {}
    label, lines = _ENTRY, []
    for raw in body + ["}"]:
        m = _LABEL.match(raw)
        if m is None and not raw.startswith("}"):
            lines.append(raw)
            continue
        if lines or label != _ENTRY:
            last = next((line for line in reversed(lines) if line.strip() and not line.lstrip().startswith("#dbg")), "")
            branch = _BRANCH.match(last)
            jump = _JUMP.match(last)
            successors = (_unquote(branch[2]), _unquote(branch[3])) if branch else (_unquote(jump[1]),) if jump else ()
            out[label] = _Block(tuple(lines), successors,
                                tuple(_unquote(g) for g in branch.groups()) if branch else None)
        if m is None:
            break
        label, lines = _unquote(m[1]), []
    return out


def forwarded_loads(blocks: dict[str, _Block]) -> dict[str, str]:
    """Loads of an integer global that read what the same block stored there just before
    (`store i8 %16, ptr @n1` … `%25 = load i8, ptr @n1`): load → the stored value's token. A
    call or a store through a pointer between them may write the global: no forwarding past it."""
    out: dict[str, str] = {}
    for block in blocks.values():
        stored: dict[str, tuple[str, str]] = {}
        for raw in block.lines:
            text = raw.strip()
            if (store := _GLOBAL_STORE.match(raw)) is not None:
                stored[store["name"]] = (store["type"], store["value"].strip())
                continue
            d = _DEF.match(raw)
            load = _GLOBAL_LOAD.match(d[2]) if d else None
            if load is not None and (known := stored.get(load["name"])) and known[0] == load["type"]:
                out[_unquote(d[1])] = known[1]
            elif (text.startswith("store ") or " call " in f" {text}") and not re.search(r"@llvm\.(?:lifetime|dbg)", text):
                stored.clear()  # a call or a store through a pointer may write the global
    return out


@dataclass(frozen=True)
class SearchLoop:
    """A counter phi whose loop leaves at its bound or at the first value passing `leave`."""

    counter: str  # the phi's name
    start: int
    step: int
    stay: tuple[str, str, str, bool]  # the header's test: (predicate, left, right, stays when true)
    leave: tuple[str, str, str, bool]  # the body's test: (predicate, left, right, leaves when true)


def search_loops(blocks: dict[str, _Block], definitions: dict[str, str]) -> list[SearchLoop]:
    """Counters of loops with exactly two exits: the header's test of the counter and one test
    in a block every iteration passes through. Tokens are the IR's; `ccls.readers.call_sites`
    turns them into expressions."""
    predecessors: dict[str, set[str]] = {}
    for label, block in blocks.items():
        for successor in block.successors:
            predecessors.setdefault(successor, set()).add(label)
    out = []
    for header, block in blocks.items():
        for raw in block.lines:
            d = _DEF.match(raw)
            if d is None or not d[2].startswith("phi "):
                continue
            found = _search(_unquote(d[1]), d[2], header, blocks, predecessors, definitions)
            if found is not None:
                out.append(found)
    return out


def _search(name: str, phi: str, header: str, blocks: dict[str, _Block], predecessors: dict,
            definitions: dict[str, str]) -> SearchLoop | None:
    incoming = re.findall(r"\[\s*([^,\]]+),\s*%([-\w$.]+|\"[^\"]*\")\s*\]", phi)
    if len(incoming) != 2:
        return None
    starts = [(v.strip(), _unquote(b)) for v, b in incoming if re.fullmatch(r"-?\d+", v.strip())]
    steps = [(v.strip(), _unquote(b)) for v, b in incoming if v.strip().startswith("%")]
    if len(starts) != 1 or len(steps) != 1:
        return None
    step = re.match(rf"^add (?:nuw |nsw )*i\d+ %{re.escape(name)}, (\d+)", definitions.get(_unquote(steps[0][0][1:]), ""))
    if step is None or int(step[1]) < 1:
        return None
    latch = steps[0][1]
    loop = {header} | _reaching(latch, header, predecessors)
    if any(not blocks.get(label, _Block((), (), None)).successors for label in loop):
        return None  # a switch or a return inside: not a loop whose paths are all known here
    exits = [label for label in loop if any(s not in loop for s in blocks[label].successors)]
    if len(exits) != 2 or header not in exits:
        return None
    tester = next(label for label in exits if label != header)
    if latch in _reachable(header, blocks, avoiding=tester):
        return None  # an iteration may go round without meeting the test
    stay = _test(blocks[header], loop, definitions, leaves=False)
    leave = _test(blocks[tester], loop, definitions, leaves=True)
    if stay is None or leave is None:
        return None
    return SearchLoop(name, int(starts[0][0]), int(step[1]), stay, leave)


def _test(block: _Block, loop: set[str], definitions: dict[str, str], leaves: bool) -> tuple | None:
    """(predicate, left, right, when): the block's branch test, true for `when` on the side that
    leaves (`leaves`) or stays in the loop."""
    if block.branch is None:
        return None
    condition, on_true, _ = block.branch
    m = _ICMP.match(definitions.get(condition, ""))
    if m is None:
        return None
    true_leaves = on_true not in loop
    return m["predicate"], m["left"].strip(), m["right"].strip(), true_leaves if leaves else not true_leaves


def _reaching(target: str, stop: str, predecessors: dict[str, set[str]]) -> set[str]:
    """Blocks from which `target` is reached without passing `stop` (the loop's body)."""
    seen, stack = {target}, [target]
    while stack:
        for p in predecessors.get(stack.pop(), ()):
            if p != stop and p not in seen:
                seen.add(p)
                stack.append(p)
    return seen


def _reachable(start: str, blocks: dict[str, _Block], avoiding: str) -> set[str]:
    seen, stack = {start}, [start]
    while stack:
        for s in blocks.get(stack.pop(), _Block((), (), None)).successors:
            if s != avoiding and s not in seen:
                seen.add(s)
                stack.append(s)
    return seen
