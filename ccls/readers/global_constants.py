"""The integers a module's read-only globals hold, by byte offset: what a function reads from
`params->depth` when its caller passes `&PARAMS` and nothing in the program ever writes PARAMS.

A global is read-only when LLVM says so (`constant`), or when it is internal (no other file can
name it) and every use in the module only reads it: a load, or an argument to a parameter that
LLVM's function-attribute inference marked `readonly`/`readnone`. Offsets follow LLVM's
layout rules for the x86-64 and AArch64 data layouts (natural alignment, packed structs
unpadded). Pure: optimised IR text in, {global: ((offset, bits, value), …)} out.
"""
from __future__ import annotations

import dataclasses
import re

from ccls.readers.call_sites import ModuleCalls, split_arguments

Fields = tuple[tuple[int, int, int], ...]  # (byte offset, bits, value as LLVM prints it)
MAX_FIELDS = 256  # a table larger than this is data, not a program's configuration

_GLOBAL = re.compile(r"^@(?P<name>[-\w$.]+) = (?P<words>[^=]*?)\b(?P<kind>global|constant) (?P<rest>.*)$")
_TYPE_DEF = re.compile(r"^%(?P<name>[-\w$.]+) = type (?P<body>.*)$")
_DEFINE = re.compile(r"^define [^@]*@(?P<name>[-\w$.]+)\((?P<params>.*)\)[^(]*\{\s*$")
_TOKEN = re.compile(r'c"[^"]*"|<\{|\}>|[{}\[\]<>(),]|[-+\w$.%@:]+|\S')
# Bytes of LLVM's scalar types as the x86-64 and AArch64 data layouts store them.
SCALAR_BYTES = {"i1": 1, "i8": 1, "i16": 2, "i32": 4, "i64": 8, "i128": 16, "half": 2, "bfloat": 2, "float": 4,
                "double": 8, "x86_fp80": 16, "fp128": 16, "ptr": 8}


def read_only_constants(ir_text: str, names: set[str] | None = None) -> dict[str, Fields]:
    """Each read-only global's integer fields (zero-initialised ones included); only those of
    `names` where given (the globals calls pass)."""
    lines = ir_text.splitlines()
    layout = TypeLayout({m["name"]: m["body"] for m in map(_TYPE_DEF.match, lines) if m})
    candidates: dict[str, Fields] = {}
    internal: set[str] = set()
    for line in lines:
        m = _GLOBAL.match(line)
        if m is None or names is not None and m["name"] not in names:
            continue
        linkage = m["words"].split()
        if m["kind"] == "global" and not {"internal", "private"} & set(linkage):
            continue
        fields = layout.fields(m["rest"])
        if fields:
            candidates[m["name"]] = fields
            if m["kind"] == "global":
                internal.add(m["name"])
    written = _written(lines, internal) if internal else set()
    return {name: fields for name, fields in candidates.items() if name not in written}


def value_at(fields: Fields, offset: int, bits: int) -> int | None:
    """The integer of `bits` bits the global holds at `offset`, if one was written there."""
    for at, width, value in fields:
        if at == offset and width == bits:
            return value
    return None


_SCALAR_GLOBAL = re.compile(r"^@(?P<name>[-\w$.]+) = (?:internal|private) (?:[\w ]+ )?global i(?P<bits>\d+) "
                            r"(?P<init>-?\d+|zeroinitializer|false|true)\b")
_READ = re.compile(r"= load i\d+, ptr @(?P<name>[-\w$.]+)(?:, align \d+)?$")
_STORED = re.compile(r"^store i\d+ (?P<value>-?\d+|true|false|%[-\w$.]+), ptr @(?P<name>[-\w$.]+)(?:, align \d+)?$")
_CHOICE = re.compile(r"^%(?P<name>[-\w$.]+) = (?:select i1 [^,]+, i\d+ (?P<a>[^,]+), i\d+ (?P<b>[^,]+)"
                     r"|phi i\d+ (?P<pairs>.*))$")
_PAIR = re.compile(r"\[\s*([^,\]]+),")


def stored_maxima(ir_text: str) -> dict[str, int]:
    """The largest value each file-local integer global (a `static` scalar) can hold, where
    every use of it in the module is a load or a store of a constant: its initial value and
    the constants stored (`gMaxBlocksPerMCU = 1`, `… = 6`: at most 6). No other file can write
    it, and no pointer to it escapes, so no run can give it another value. Values are read as
    unsigned, as a count compared with them would be."""
    lines = ir_text.splitlines()
    candidates: dict[str, int] = {}
    bits: dict[str, int] = {}
    for m in map(_SCALAR_GLOBAL.match, lines):
        if m:
            candidates[m["name"]] = _unsigned(m["init"], int(m["bits"]))
            bits[m["name"]] = int(m["bits"])
    if not candidates:
        return {}
    uses = re.compile(r"@(" + "|".join(re.escape(n) for n in sorted(candidates, key=len, reverse=True)) + r")\b")
    choices: dict[str, list[str]] = {}  # this function's selects and phis: value → what it chooses between
    for line in lines:
        if line.startswith("define "):
            choices = {}
        body = line.split(", !")[0].strip()
        if (choice := _CHOICE.match(body)) is not None:
            choices[choice["name"]] = [choice["a"], choice["b"]] if choice["a"] else _PAIR.findall(choice["pairs"])
        found = set(uses.findall(line))
        if not found or line.startswith("@") or line.lstrip().startswith("#dbg_"):
            continue
        read, stored = _READ.search(body), _STORED.match(body)
        for name in found:
            if read is not None and read["name"] == name:
                continue
            values = _constants(stored["value"], choices) if stored is not None and stored["name"] == name else None
            if values is not None and name in candidates:
                candidates[name] = max([candidates[name]] + [_unsigned(v, bits[name]) for v in values])
                continue
            candidates.pop(name, None)  # its address taken, or a value stored that is not a constant
    return candidates


def _constants(value: str, choices: dict[str, list[str]], depth: int = 0) -> list[str] | None:
    """The constants `value` is (a choice between constants LLVM made of `x = c ? 4 : 6`), or None."""
    value = value.strip()
    if not value.startswith("%"):
        return [value] if re.fullmatch(r"-?\d+|true|false", value) else None
    arms = choices.get(value[1:])
    if arms is None or depth > 3:
        return None
    out: list[str] = []
    for arm in arms:
        found = _constants(arm, choices, depth + 1)
        if found is None:
            return None
        out += found
    return out


def _unsigned(text: str, bits: int) -> int:
    value = {"zeroinitializer": 0, "false": 0, "true": 1}.get(text)
    return (int(text) if value is None else value) % (1 << bits)


def _written(lines: list[str], names: set[str]) -> set[str]:
    """Those of `names` some use in the module may write: anything but a load of it, or an
    argument to a read-only parameter of a function defined here."""
    readonly: dict[str, list[bool]] = {}
    for m in map(_DEFINE.match, lines):
        if m:
            readonly[m["name"]] = [bool(re.search(r"\b(?:readonly|readnone)\b", p))
                                   for p in split_arguments(m["params"])]
    uses = re.compile(r"@(" + "|".join(re.escape(n) for n in sorted(names)) + r")\b")
    written: set[str] = set()
    for line in lines:
        found = set(uses.findall(line))
        if not found or line.startswith(tuple(f"@{n} =" for n in found)) or line.lstrip().startswith("#dbg_"):
            continue
        body = line.split(", !")[0].strip()  # metadata attachments (!dbg, !tbaa)
        if re.search(r"= load [^,]+, ptr (?:getelementptr (?:inbounds )?\([^()]*\)|@[-\w$.]+)(?:, align \d+)?$", body):
            continue
        call = re.search(r"\b(?:call|invoke) [^@]*@([-\w$.]+)\((.*)\)", body)
        if call and call[1] in readonly:
            flags = readonly[call[1]]
            arguments = split_arguments(call[2])
            hit = [i for i, a in enumerate(arguments) if uses.search(a)]
            unsafe = {n for i in hit if i >= len(flags) or not flags[i] for n in uses.findall(arguments[i])}
            written |= unsafe
            continue
        written |= found
    return written


class TypeLayout:
    """Sizes and alignments of IR types, and the integers an initializer puts at each offset."""

    def __init__(self, types: dict[str, str]):
        self.types = types

    def fields(self, text: str) -> Fields:
        tokens = _TOKEN.findall(text)
        out: list[tuple[int, int, int]] = []
        try:
            type_tokens, rest = self._type(tokens, 0)
            self._value(type_tokens, tokens, rest, 0, out)
        except (IndexError, ValueError, KeyError, RecursionError):
            return ()
        return tuple(out) if len(out) <= MAX_FIELDS else ()

    def _type(self, tokens: list[str], i: int) -> tuple[list[str], int]:
        """The tokens of the type that starts at `i`, and the index after it."""
        start = i
        if tokens[i] in ("{", "<{", "[", "<"):
            close = {"{": "}", "<{": "}>", "[": "]", "<": ">"}[tokens[i]]
            depth = 0
            while True:
                if tokens[i] in ("{", "<{", "[", "<"):
                    depth += 1
                elif tokens[i] in ("}", "}>", "]", ">"):
                    depth -= 1
                i += 1
                if depth == 0:
                    break
            if close != tokens[i - 1]:
                raise ValueError("unbalanced type")
            return tokens[start:i], i
        return tokens[i:i + 1], i + 1

    def size_align(self, t: list[str]) -> tuple[int, int]:
        head = t[0]
        if head.startswith("%"):
            return self.size_align(_TOKEN.findall(self.types[head[1:]]))
        if re.fullmatch(r"i\d+", head):
            size = max(1, (int(head[1:]) + 7) // 8)
            size = 1 << (size - 1).bit_length()
            return size, min(size, 16)
        if head in SCALAR_BYTES:
            return SCALAR_BYTES[head], SCALAR_BYTES[head]
        if head in ("[", "<"):  # [N x T], <N x T>
            count, element = int(t[1]), t[3:-1]
            size, align = self.size_align(element)
            if head == "<":
                total = 1 << max(0, (count * size - 1).bit_length())
                return total, total
            return count * size, align
        if head in ("{", "<{"):
            offset, align = 0, 1
            for member in self._members(t):
                size, member_align = self.size_align(member)
                if head == "{":
                    offset = -(-offset // member_align) * member_align
                    align = max(align, member_align)
                offset += size
            return -(-offset // align) * align, align
        raise ValueError(f"type {head}")

    def offset(self, type_text: str, indices: list[int]) -> int:
        """The byte offset a getelementptr of `type_text` with constant `indices` adds."""
        t = self._type(_TOKEN.findall(type_text), 0)[0]
        offset = indices[0] * self.size_align(t)[0]
        for index in indices[1:]:
            while t[0].startswith("%"):
                t = self._type(_TOKEN.findall(self.types[t[0][1:]]), 0)[0]
            if t[0] in ("[", "<"):
                t = t[3:-1]
                offset += index * self.size_align(t)[0]
            elif t[0] in ("{", "<{"):
                members, at = self._members(t), 0
                for member in members[:index]:
                    size, align = self.size_align(member)
                    at = (-(-at // align) * align if t[0] == "{" else at) + size
                size, align = self.size_align(members[index])
                offset += -(-at // align) * align if t[0] == "{" else at
                t = members[index]
            else:
                raise ValueError(f"index into {t[0]}")
        return offset

    def _members(self, t: list[str]) -> list[list[str]]:
        inner, members, i = t[1:-1], [], 0
        while i < len(inner):
            member, i = self._type(inner, i)
            members.append(member)
            if i < len(inner) and inner[i] == ",":
                i += 1
        return members

    def _value(self, t: list[str], tokens: list[str], i: int, base: int, out: list) -> int:
        """Reads the constant of type `t` at tokens[i], adding its integers at `base`; the index after it."""
        token = tokens[i]
        if token == "zeroinitializer":
            self._zeros(t, base, out)
            return i + 1
        if t[0].startswith("%"):
            return self._value(self._type(_TOKEN.findall(self.types[t[0][1:]]), 0)[0], tokens, i, base, out)
        if re.fullmatch(r"i\d+", t[0]) and (re.fullmatch(r"-?\d+", token) or token in ("true", "false")):
            out.append((base, int(t[0][1:]), int(token) if token not in ("true", "false") else int(token == "true")))
            return i + 1
        if token.startswith('c"'):  # [N x i8] c"text\00"
            data = re.sub(r"\\([0-9A-Fa-f]{2})", lambda m: chr(int(m[1], 16)), token[2:-1])
            out.extend((base + k, 8, ord(ch) - 256 if ord(ch) > 127 else ord(ch)) for k, ch in enumerate(data))
            return i + 1
        if token in ("{", "<{", "[") and t[0] in ("{", "<{", "["):
            members = self._members(t) if t[0] != "[" else [t[3:-1]] * int(t[1])
            offset, i = 0, i + 1
            for member in members:
                size, align = self.size_align(member)
                if t[0] == "{":
                    offset = -(-offset // align) * align
                member_type, i = self._type(tokens, i)
                i = self._value(member_type, tokens, i, base + offset, out)
                offset += size
                if tokens[i] == ",":
                    i += 1
            return i + 1  # the closing bracket
        return self._skip(tokens, i)  # a float, pointer, undef or constant expression: not an integer

    def _zeros(self, t: list[str], base: int, out: list) -> None:
        if t[0].startswith("%"):
            return self._zeros(self._type(_TOKEN.findall(self.types[t[0][1:]]), 0)[0], base, out)
        if re.fullmatch(r"i\d+", t[0]):
            out.append((base, int(t[0][1:]), 0))
        elif t[0] in ("{", "<{", "["):
            members = self._members(t) if t[0] != "[" else [t[3:-1]] * min(int(t[1]), MAX_FIELDS + 1)
            offset = 0
            for member in members:
                size, align = self.size_align(member)
                if t[0] == "{":
                    offset = -(-offset // align) * align
                self._zeros(member, base + offset, out)
                offset += size
                if len(out) > MAX_FIELDS:
                    return

    @staticmethod
    def _skip(tokens: list[str], i: int) -> int:
        """Past one constant that is not read (`null`, `1.0e+00`, `getelementptr (…)`)."""
        i += 1
        if i < len(tokens) and tokens[i] == "(":
            depth = 0
            while True:
                depth += {"(": 1, ")": -1}.get(tokens[i], 0)
                i += 1
                if depth == 0:
                    return i
        return i


def with_contents(calls: ModuleCalls, constants: dict[str, Fields]) -> ModuleCalls:
    """`calls` with each pointer into a global carrying that global's integers where it is
    read-only (`("addr", "PARAMS", 0, fields)`); none (`()`) where it may be written."""
    def known(arg):
        return (*arg[:3], constants.get(arg[1], ())) if arg is not None and arg[0] == "addr" else arg
    sites = tuple(dataclasses.replace(site, args=tuple(known(a) for a in site.args)) for site in calls.sites)
    return dataclasses.replace(calls, sites=sites)


def passed_globals(calls: ModuleCalls) -> set[str]:
    """The globals a module's calls pass pointers into."""
    return {arg[1] for site in calls.sites for arg in site.args if arg is not None and arg[0] == "addr"}
