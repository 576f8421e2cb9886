"""What a module writes into its integer globals (`WD = 17 + 4 * vers;`, `width = table[i + 2];`),
as `FieldStore` records of a one-field struct named `@WD` (byte 0), so that `ccls.sizes` finds
the values a global can hold the way it finds a struct field's: from every write the program
makes. A global whose address is used otherwise (passed, stored, indexed) may be written
through a pointer: it gets a record with no value, which says so.

A value read from a read-only table (`static const unsigned char blocks[] = {…}`) is one of the
entries its index can reach: an index `4·level + 16·version + 2` only ever lands on entries 2,
6, 10, …, so the global is at most the largest of those (`("most", n, table)`). Pure: the IR
the call sites are read from in, records out.
"""
from __future__ import annotations

import math
import re

from ccls.model import FieldStore

_INT_GLOBAL = re.compile(r"^@(?P<name>[-\w$.]+) = (?:[\w()\" ]+ )?global i(?P<bits>\d+)(?: (?P<init>-?\d+|zeroinitializer))?\b")
_TABLE = re.compile(r"^@(?P<name>[-\w$.]+) = (?:[\w()\" ]+ )?constant \[(?P<count>\d+) x i(?P<bits>\d+)\] (?P<init>.*?)"
                    r"(?:, align \d+)?(?:, !dbg !\d+)?$")
_DEFINE = re.compile(r'^define [^@]*@("(?:[^"\\]|\\.)*"|[-\w$.]+)\((.*)\)[^(]*\{\s*$')
_DEF = re.compile(r"^\s*%([-\w$.]+|\"[^\"]*\") = (.*)$")
_STORE = re.compile(r"^\s*store i\d+ (?P<value>[^,]+), ptr @(?P<name>[-\w$.]+)(?:, align \d+)?(?:, !|$)")
_LOAD = re.compile(r"= load i\d+, ptr @(?P<name>[-\w$.]+)(?:, align \d+)?(?:, !|$)")
_DBG = re.compile(r"!dbg !(\d+)")
_DILOCATION = re.compile(r"^!(\d+) = !DILocation\(line: (\d+)", re.M)
_TABLE_READ = re.compile(r"^load i\d+, ptr (?P<pointer>%[-\w$.]+)")
_INDEXED = re.compile(r"^getelementptr (?:inbounds )?(?:nuw )?(?P<type>\[\d+ x i\d+\]|i\d+), ptr @(?P<table>[-\w$.]+), "
                      r"(?P<indices>.*)$")
_CASTS = ("zext", "sext", "trunc")
MAX_TABLE = 1 << 16  # entries: a larger array is data, not a configuration table


def read_only_tables(ir_text: str) -> dict[str, tuple[int, ...]]:
    """Each read-only integer table of the module (at most MAX_TABLE entries) → its entries."""
    out = {}
    for m in map(_TABLE.match, ir_text.splitlines()):
        if m and int(m["count"]) <= MAX_TABLE and (entries := _entries(m["init"], int(m["bits"]))):
            out[m["name"]] = tuple(entries)
    return out


def global_stores(ir_text: str, value_of) -> tuple[FieldStore, ...]:
    """Each write into an integer global of the module (`@G`, byte 0), its value as `value_of`
    (call_sites' reader: token, the function's definitions, its parameters, the function →
    expression) gives it, a table read the reader cannot follow as ("most", n, table); a use
    that may write it otherwise, with no value."""
    lines = ir_text.splitlines()
    scalars = {m["name"] for m in map(_INT_GLOBAL.match, lines) if m}
    if not scalars:
        return ()
    tables = read_only_tables(ir_text)
    at_line = {int(m[1]): int(m[2]) for m in _DILOCATION.finditer(ir_text)}
    uses = re.compile(r"@(" + "|".join(re.escape(n) for n in sorted(scalars, key=len, reverse=True)) + r")\b")
    # what a defined global holds before any write (`unsigned char WD;`: 0)
    out = [FieldStore(f"@{m['name']}", 0, "", None, ("const", 0 if m["init"] == "zeroinitializer" else int(m["init"])))
           for m in map(_INT_GLOBAL.match, lines) if m and m["init"]]
    writer, definitions, parameters = None, {}, set()
    for raw in lines:
        if writer is None:
            if (define := _DEFINE.match(raw)) is not None:
                writer, definitions = define[1].strip('"'), {}
                parameters = {p.split()[-1][1:].strip('"') for p in define[2].split(",") if "%" in p}
            elif raw.startswith("@") and (found := set(uses.findall(raw.split(" = ", 1)[-1]))):
                out.extend(FieldStore(f"@{name}", 0, "", None, None) for name in found)  # an address in data
            continue
        if raw.startswith("}"):
            writer = None
            continue
        if (d := _DEF.match(raw)) is not None:
            definitions[d[1].strip('"')] = d[2]
        found = set(uses.findall(raw))
        if not found or raw.lstrip().startswith("#dbg_"):
            continue
        line = at_line.get(int(dbg[1])) if (dbg := _DBG.search(raw)) else None
        store, load = _STORE.match(raw), _LOAD.search(raw)
        for name in found:
            if load is not None and load["name"] == name and raw.count(f"@{name}") == 1:
                continue
            if store is not None and store["name"] == name and f"@{name}" not in store["value"]:
                token = store["value"].strip()
                value = value_of(token, definitions, parameters, writer)
                if value is None or value[0] != "entry":
                    value = _table_read(token, definitions, tables) or value
                out.append(FieldStore(f"@{name}", 0, writer, line, value))
                continue
            out.append(FieldStore(f"@{name}", 0, writer, line, None))  # its address taken: any value
    return tuple(out)


def table_read(text: str, definitions: dict[str, str], tables: dict[str, tuple[int, ...]]) -> tuple | None:
    """(table, its entries, index token, the most its index can reach) where `text` (a
    definition) loads an entry of a read-only integer table at a variable index; None otherwise."""
    read = _TABLE_READ.match(text)
    pointer = definitions.get(read["pointer"][1:], "") if read else ""
    indexed = _INDEXED.match(pointer.split(", !")[0])
    if indexed is None or indexed["table"] not in tables:
        return None
    indices = [index.split()[-1] for index in indexed["indices"].split(", ")]
    if indexed["type"].startswith("["):
        if len(indices) != 2 or indices[0] != "0":
            return None
        indices = indices[1:]
    if len(indices) != 1:
        return None
    entries = tables[indexed["table"]]
    modulus, remainder = _residue(indices[0], definitions)
    reached = [v for i, v in enumerate(entries) if (i == remainder if modulus == 0 else i % modulus == remainder % modulus)]
    return (indexed["table"], entries, indices[0], max(reached)) if reached else None


def _table_read(token: str, definitions: dict[str, str], tables: dict) -> tuple | None:
    """("most", largest entry reachable, table) where `token` is (a cast of) an entry read from a
    read-only integer table; None otherwise."""
    for _ in range(4):
        if not token.startswith("%"):
            return None
        text = definitions.get(token[1:].strip('"'), "")
        words = text.split()
        if words and words[0] in _CASTS and len(words) >= 3:
            token = words[2]
            continue
        break
    found = table_read(text, definitions, tables)
    return ("most", found[3], found[0]) if found else None


def _residue(token: str, definitions: dict[str, str], depth: int = 0) -> tuple[int, int]:
    """(m, r): the value is ≡ r modulo m (m = 0: it is exactly r; m = 1: anything)."""
    if re.fullmatch(r"-?\d+", token):
        return 0, int(token)
    if not token.startswith("%") or depth > 16:
        return 1, 0
    words = definitions.get(token[1:].strip('"'), "").split(", !")[0].replace(",", " ").split()
    words = [w for w in words if w not in ("nsw", "nuw", "exact", "disjoint", "nneg")]
    if len(words) >= 3 and words[0] in _CASTS:
        return _residue(words[2], definitions, depth + 1)
    if len(words) != 4 or words[0] not in ("add", "sub", "mul", "shl", "or"):
        return 1, 0
    (ma, ra), (mb, rb) = (_residue(w, definitions, depth + 1) for w in words[2:4])
    if words[0] == "add" or words[0] == "or" and "disjoint" in definitions.get(token[1:].strip('"'), ""):
        return math.gcd(ma, mb), ra + rb
    if words[0] == "sub":
        return math.gcd(ma, mb), ra - rb
    if words[0] == "mul" and (ma == 0 or mb == 0):
        (m, r), c = ((ma, ra), rb) if mb == 0 else ((mb, rb), ra)
        return m * abs(c), r * c
    if words[0] == "shl" and mb == 0 and 0 <= rb < 32:
        return ma << rb, ra << rb
    return 1, 0


def _entries(init: str, bits: int) -> list[int]:
    """The unsigned integers of a table's initializer (`c"\\01\\00…"` or `[i16 3, i16 7, …]`)."""
    if init.startswith('c"'):
        text, out, i = init[2:init.rindex('"')], [], 0
        while i < len(text):
            if text[i] == "\\" and i + 2 < len(text) + 1 and re.fullmatch(r"[0-9A-Fa-f]{2}", text[i + 1:i + 3]):
                out.append(int(text[i + 1:i + 3], 16))
                i += 3
            elif text[i] == "\\" and text[i + 1:i + 2] == "\\":
                out.append(92)
                i += 2
            else:
                out.append(ord(text[i]))
                i += 1
        return out
    if init.startswith("["):
        return [int(v) % (1 << bits) for v in re.findall(rf"\bi{bits} (-?\d+)", init)]
    return []
