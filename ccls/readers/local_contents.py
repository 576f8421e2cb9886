"""What a function stores into a local it hands a callee by address: `int n = 1; run(&n);`,
`run(&(struct cfg){16000, 4});`, or a harness's `struct args a = {.arg = p}; f(&a);`.

A callback, a thread's start routine or a benchmark harness receives its sizes this way (a
`void *` to a struct or an int), not as integer arguments. The local's contents are what the
function stores at constant byte offsets of it; the callee is taken to read them as stored.
Pure: one function's IR lines in (SROA has run, so only locals whose address is taken remain),
byte offset → stored value text out.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

# Integer and pointer stores only: sizes and the pointers that lead to them.
_STORE = re.compile(r"^\s*store (?P<type>i\d+|ptr) (?P<value>[^,]+), ptr (?P<pointer>%(?:\"[^\"]*\"|[-\w$.]+))"
                    r"(?:, align \d+)?(?:,|$)")
_GEP = re.compile(r"^\s*%(?P<name>\"[^\"]*\"|[-\w$.]+) = getelementptr (?:inbounds )?(?:nuw )?"
                  r"(?P<type>%[-\w$.]+|\{[^}]*\}|\[[^\]]*\]|i\d+), ptr %(?P<base>\"[^\"]*\"|[-\w$.]+)"
                  r"(?P<indices>(?:, i\d+ -?\d+)+)(?:,|$)")
_HARMLESS_CALL = re.compile(r"call void @llvm\.(?:lifetime|dbg)\.")
_ZERO_FILL = re.compile(r"call void @llvm\.memset\.[\w.]+\(ptr (?:align \d+ )?(?P<pointer>%[-\w$.]+), i8 0,")
_CALLEE = re.compile(r"(?:call|invoke) [^@%(]*?(?P<sigil>[@%])(?P<name>\"[^\"]*\"|[-\w$.]+)\(")
_LOAD = re.compile(r"= load [^,]+, ptr %")
# `struct cfg c = {16000, 4, …};` arrives as a copy of a constant clang made of the initializer.
_COPY = re.compile(r"call void @llvm\.memcpy\.[\w.]+\(ptr (?:align \d+ )?(?P<pointer>%[-\w$.]+), "
                   r"ptr (?:align \d+ )?@(?P<source>[-\w$.]+), i64 (?P<bytes>\d+),")
_BYTES = {"ptr": 8}
MAX_FIELDS = 64  # a local with more stores than this is a buffer being filled, not settings


@dataclass(frozen=True)
class LocalRecord:
    """One local's stores: byte offset → (type, value text) where every store there wrote the
    same value, and the callees it is passed to (each as the call spells it: `@f` or `%fp`)."""

    fields: tuple[tuple[int, str, str], ...]  # (byte offset, "i32" or "ptr", value token)
    callees: frozenset[str]
    copies: tuple[tuple[int, str, int], ...] = ()  # (byte offset, global copied in, bytes)
    stored: tuple[tuple[int, int], ...] = ()  # (byte offset, bytes) of every store, known or not


def local_record(name: str, lines: list[str], offset_of) -> LocalRecord | None:
    """The stores into local `name` (an alloca) and the calls it is passed to; None where its
    address goes anywhere else (stored, compared, handed to a phi), or is stored through at an
    offset not known: then nothing says what it holds when the callee reads it. `offset_of(type,
    indices)` gives a struct GEP's byte offset (None if not known)."""
    derived: dict[str, int] = {name: 0}
    stored: dict[int, tuple[str, str] | None] = {}
    callees: set[str] = set()
    copies: list[tuple[int, str, int]] = []
    for line in lines:
        if "%" not in line or line.lstrip().startswith("#dbg"):
            continue
        used = [n for n in derived if _mentions(line, n)]
        if not used:
            continue
        if " = alloca " in line and line.lstrip().startswith(("%" + name + " ", f'%"{name}" ')):
            continue
        if _HARMLESS_CALL.search(line) or _LOAD.search(line) and not _STORE.match(line):
            continue
        zero = _ZERO_FILL.search(line)
        if zero and zero["pointer"][1:].strip('"') in derived:
            continue  # `= {.arg = p}`: the other fields zeroed; they stay unknown here, never wrong
        copy = _COPY.search(line)
        if copy and copy["pointer"][1:].strip('"') in derived:
            copies.append((derived[copy["pointer"][1:].strip('"')], copy["source"], int(copy["bytes"])))
            continue
        gep = _GEP.match(line)
        if gep and gep["base"].strip('"') in derived:
            step = offset_of(gep["type"], [int(i.split()[-1]) for i in gep["indices"].split(",")[1:]])
            if step is None:
                return None
            derived[gep["name"].strip('"')] = derived[gep["base"].strip('"')] + step
            continue
        store = _STORE.match(line)
        if store:
            pointer = store["pointer"][1:].strip('"')
            value = store["value"].split()[-1]
            if pointer not in derived or value.startswith("%") and value[1:].strip('"') in derived:
                return None  # its address is written somewhere: it escapes
            offset = derived[pointer]
            entry = (store["type"], value)
            stored[offset] = entry if stored.get(offset, entry) == entry else None
            continue
        call = _CALLEE.search(line)
        if call and not line.lstrip().startswith("store"):
            callees.add(call["sigil"] + call["name"].strip('"'))
            continue
        return None
    fields = tuple((offset, kind, value) for offset, entry in sorted(stored.items()) if entry is not None
                   for kind, value in [entry])
    extents = tuple((offset, _BYTES.get(entry[0]) or (int(entry[0][1:]) + 7) // 8) if entry else (offset, 1)
                    for offset, entry in sorted(stored.items()))
    return LocalRecord(fields, frozenset(callees), tuple(copies), extents) if len(fields) <= MAX_FIELDS else None


def _mentions(line: str, name: str) -> bool:
    token = "%" + (f'"{name}"' if not re.fullmatch(r"[-\w$.]+", name) else name)
    start = line.find(token)
    while start >= 0:
        end = start + len(token)
        if end == len(line) or not re.match(r"[-\w$.]", line[end]):
            return True
        start = line.find(token, end)
    return False
