"""Call sites of a module, read from IR where each function's locals have been promoted to
values (`opt -passes=sroa,early-cse,instsimplify`, no inlining): what each call passes for each
argument, as a constant, one of the caller's parameters, or arithmetic on those.

`int n = N; kernel(n, a);` arrives here as `call void @kernel(i32 noundef 120, ptr %a)`: the
preprocessor, constant folding and SROA (LLVM's own) did the work. Pure: text in, records out.
"""
from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from typing import Union

from ccls.model import CallSite, FieldStore
from ccls.readers.global_stores import global_stores, read_only_tables, table_read
from ccls.readers.search_loops import FORWARDED, blocks_of, forwarded_loads, search_loops
from ccls.readers.local_contents import local_record

# An argument's value as the caller computes it. Only integers matter: sizes and counts.
Const = tuple  # ("const", int)
Param = tuple  # ("param", name)
Op = tuple  # ("op", opcode, left, right)
Choice = tuple  # ("choice", (expr, …)): a phi or select of several values
Addr = tuple  # ("addr", global, byte offset[, its known integers]): a pointer into a global
Field = tuple  # ("field", struct, byte offset): an integer read from a field of a struct (by its type),
# or from an integer global (`("field", "@G", 0)`)
Most = tuple  # ("most", n, what): at most n (an entry of a read-only table, a loop counter where it leaves)
# ("entry", table, entries, index Expr, most): an entry of a read-only table, exact where the
# index is known, else at most `most` (the largest its index can reach)
Entry = tuple
# ("search", start, step, stay test, leave test, Most or None): a search loop's counter where it
# leaves (`ccls.readers.search_loops`); a test is ("icmp", predicate, left, right, when), its
# operands reading the counter as ("counter",)
Search = tuple
Function = tuple  # ("function", symbol): a function's address, passed to a dispatcher that calls it
# ("local", "n1 in main", ((byte offset, bits, Expr), …)): a pointer to a local of the caller and
# what the caller stores in it (`ccls.readers.local_contents`); bits 64 with a pointer Expr for
# a pointer stored there.
Local = tuple
Expr = Union[Const, Param, Op, Choice, Addr, Field, Most, Entry, Search, Function, Local]
# In a record that sets only some of a callee's sizes (Python's `__init__` → method records for
# instance attributes): says nothing about that parameter, where None says "a run-time value".
NOT_PASSED = ("not passed",)

_DEFINE = re.compile(r'^define ([^@]*)@("(?:[^"\\]|\\.)*"|[-\w$.]+)\((.*)\)[^(]*\{\s*$')
_DEF = re.compile(r"^\s*%([-\w$.]+|\"[^\"]*\") = (.*)$")
_CALL = re.compile(r'(?:^\s*|= )(?:tail |musttail |notail )?(?:call|invoke) (?:[^@(]*?)@("(?:[^"\\]|\\.)*"|[-\w$.]+)\((.*)$')
# A call through a value (`call float %vector_func(ptr %args)`): kept where it is a parameter.
_INDIRECT_CALL = re.compile(r'(?:^\s*|= )(?:tail |musttail |notail )?(?:call|invoke) (?:[^@%(]*?)%("[^"]*"|[-\w$.]+)\((.*)$')
_FUNCTION_NAME = re.compile(r'^(?:define|declare) [^@]*@("(?:[^"\\]|\\.)*"|[-\w$.]+)\(', re.M)
_TYPE_DEF = re.compile(r"^%(?P<name>[-\w$.]+) = type (?P<body>.*)$", re.M)
_DBG = re.compile(r"!dbg !(\d+)")
_DILOCATION = re.compile(r"^!(\d+) = !DILocation\(line: (\d+)", re.M)
_INT_TYPE = re.compile(r"^i(\d+)$")
# Type-based alias analysis tags (clang emits them when optimising): an access tag names the
# struct it reads a field of and the field's byte offset, `!13 = !{!14, !9, i64 0}` with
# `!14 = !{!"aes_ctx", !9, i64 0, …}`; the same field in every function and file that includes the
# struct's definition.
_TBAA_TAG = re.compile(r"^!(\d+) = !\{!(\d+), !(\d+), i64 (\d+)\}", re.M)
_TBAA_TYPE = re.compile(r'^!(\d+) = !\{!"([^"]+)", !\d+, i64 \d+, ', re.M)  # a struct: members follow
_TBAA_USE = re.compile(r"!tbaa !(\d+)")
_STORE = re.compile(r"^\s*store (i\d+) ([^,]+), ptr ")
_BINARY = {"add", "sub", "mul", "shl", "sdiv", "udiv", "lshr", "ashr", "and", "or", "xor"}
_CASTS = {"sext", "zext", "trunc"}
MAX_CHOICES = 8  # a phi merging more values than this is a state machine's, not a size
MAX_NODES = 64  # an argument computed from more than this is not a size either
# operations an argument is followed back through: a table index stepped entry by entry (`i++` after
# each read of a record's fields) and the value read there and combined make chains of a dozen
MAX_DEPTH = 24
MAX_ENTRY_TABLE = 4096  # entries a table read carries along to be looked up exactly (a larger one: its bound)
_ATTRIBUTES = {"noundef", "signext", "zeroext", "nonnull", "immarg", "inreg", "returned", "noalias", "nocapture",
               "readonly", "writeonly", "nsw", "nuw", "exact", "disjoint"}


@dataclass(frozen=True)
class ModuleCalls:
    """One module's defined functions (symbol → parameter names) and its direct calls."""

    file: str  # the source file the module was compiled from (for "the call at file:line")
    parameters: dict[str, tuple[str, ...]]
    sites: tuple[CallSite, ...]
    internal: frozenset[str] = frozenset()  # functions only this module can call (static)
    field_stores: tuple[FieldStore, ...] = ()  # what the module writes into integer fields of structs


def read_call_sites(ir_text: str, file: str) -> ModuleCalls:
    lines = {int(m[1]): int(m[2]) for m in _DILOCATION.finditer(ir_text)}
    facts = _ModuleFacts(_struct_fields(ir_text), _string_lengths(ir_text),
                         frozenset(_unquote(m[1]) for m in _FUNCTION_NAME.finditer(ir_text)),
                         {m["name"]: m["body"] for m in _TYPE_DEF.finditer(ir_text)}, ir_text,
                         tables=read_only_tables(ir_text))
    fields = facts.fields
    parameters: dict[str, tuple[str, ...]] = {}
    sites: list[CallSite] = []
    stores: list[FieldStore] = []
    internal: set[str] = set()
    caller: str | None = None
    definitions: dict[str, str] = {}
    pending: list[tuple[str, str, int | None]] = []  # (callee, argument text, line) in the current function
    pending_stores: list[tuple[tuple[str, int], str, int | None]] = []  # (field, value token, line)
    body: list[str] = []  # the current function's lines, for what it stores into its locals
    prepared: dict[str, tuple[dict, dict]] = {}  # function → its definitions and values resolved so far

    def close_function() -> None:
        known = set(parameters[caller])
        # one resolution per value: a decoder's phi web fans out
        memo: dict[str, Expr | None] = _with_searches(body, definitions, known, facts)
        prepared[caller] = (definitions, memo)
        records: dict = {}
        for callee, arguments, line in pending:
            spelled = callee if callee.startswith("%") else "@" + callee

            def local(name: str) -> Expr | None:
                return _local(name, spelled, caller, body, definitions, known, memo, facts, records)
            sites.append(CallSite(caller, callee, line, tuple(
                _expression(arg, definitions, known, memo, facts, local) for arg in split_arguments(arguments))))
        for (struct, offset), token, line in pending_stores:
            stores.append(FieldStore(struct, offset, caller, line, _value(token, definitions, known, memo, 0, facts)))

    for raw in ir_text.splitlines():
        if caller is None:
            m = _DEFINE.match(raw)
            if m:
                caller = _unquote(m[2])
                parameters[caller] = tuple(_argument_name(a) or "" for a in split_arguments(m[3]))
                if re.match(r"(?:internal|private)\b", m[1]):
                    internal.add(caller)
                definitions, pending, pending_stores, body = {}, [], [], []
            continue
        body.append(raw)
        if raw.startswith("}"):
            close_function()
            caller = None
            continue
        d = _DEF.match(raw)
        if d:
            definitions[_unquote(d[1])] = d[2]
        store = _STORE.match(raw)
        if store:
            tag = _TBAA_USE.search(raw)
            if tag and tag[1] in fields:
                dbg = _DBG.search(raw)
                pending_stores.append((fields[tag[1]], store[2].split()[-1], lines.get(int(dbg[1])) if dbg else None))
            continue
        call = _CALL.search(raw)
        if call and not call[1].startswith("llvm."):
            arguments = balanced_prefix(call[2])
            dbg = _DBG.search(raw[call.start(2) + len(arguments):])
            pending.append((_unquote(call[1]), arguments, lines.get(int(dbg[1])) if dbg else None))
        elif (indirect := _INDIRECT_CALL.search(raw)) and _unquote(indirect[1]) in parameters[caller]:
            # A dispatcher calling the function it was handed: `ccls.sizes` follows it to each one.
            arguments = balanced_prefix(indirect[2])
            dbg = _DBG.search(raw[indirect.start(2) + len(arguments):])
            pending.append(("%" + _unquote(indirect[1]), arguments, lines.get(int(dbg[1])) if dbg else None))
    sites = _without_fields_others_write(sites, stores)
    # integer globals are one-field structs here (`@WD`, byte 0): `ccls.sizes` reads both alike
    def value_of(token: str, defined: dict, known: set, writer: str) -> Expr | None:
        definitions, memo = prepared.get(writer, (defined, {}))
        return _value(token, definitions, known, memo, 0, facts)
    written = global_stores(ir_text, value_of)
    return ModuleCalls(file, parameters, tuple(sites), frozenset(internal), tuple(stores) + written)


_STRUCT_ALLOCA = re.compile(r"^alloca %(?:struct|class)\.([-\w$.]+?)(?:\.\d+)?,")


def _without_fields_others_write(sites: list[CallSite], stores: list[FieldStore]) -> list[CallSite]:
    """Sites whose locals keep only the fields no other function writes: `info.n = 0;
    foo(&info)` where foo counts up `info->n++` passes 0 only to start with."""
    written = {(store.struct, store.offset, store.writer) for store in stores}

    def kept(arg):
        if arg is None or arg[0] != "local" or len(arg) < 4:
            return arg[:3] if arg is not None and arg[0] == "local" else arg
        owner = arg[1].split(" in ", 1)[1]
        fields = tuple(f for f in arg[2] if not any(struct == arg[3] and offset == f[0] and writer != owner
                                                     for struct, offset, writer in written))
        return ("local", arg[1], fields) if fields else None
    return [dataclasses.replace(site, args=tuple(kept(a) for a in site.args)) for site in sites]


def _struct_fields(ir_text: str) -> dict[str, tuple[str, int]]:
    """TBAA access tags that name a field of a struct: tag id → (struct name, byte offset)."""
    structs = {m[1]: m[2] for m in _TBAA_TYPE.finditer(ir_text)}
    return {m[1]: (structs[m[2]], int(m[4])) for m in _TBAA_TAG.finditer(ir_text) if m[2] in structs}


@dataclass(frozen=True)
class _ModuleFacts:
    """What a module's text says about values its functions read."""

    fields: dict[str, tuple[str, int]]  # TBAA access tag → (struct, byte offset) it reads
    strings: dict[str, int]  # global → strlen of the text it holds
    functions: frozenset[str] = frozenset()  # symbols the module defines or declares
    types: dict[str, str] = field(default_factory=dict)  # named IR struct types → their bodies
    ir_text: str = ""  # for the read-only globals a local is initialised from
    constants: dict = field(default_factory=dict)  # those read so far: global → its integers
    tables: dict[str, tuple[int, ...]] = field(default_factory=dict)  # read-only integer tables → entries


_NO_FACTS = _ModuleFacts({}, {})
_STRING_GLOBAL = re.compile(r'^@(?P<name>[-\w$.]+) = (?P<words>[^=]*?)\b(?P<kind>global|constant) '
                            r'\[(?P<size>\d+) x i8\] c"(?P<text>[^"]*)"', re.M)
# C library calls that write through their first argument.
_WRITES_FIRST = r"(?:stpn?cpy|strn?cpy|strn?cat|mem(?:cpy|move|set)[\w.]*|v?sn?printf)"
_STRLEN = re.compile(r"^(?:tail )?call i\d+ @strlen\(ptr [^@]*@(?P<name>[-\w$.]+)\)")


def _string_lengths(ir_text: str) -> dict[str, int]:
    """`strlen(text)` of each global char array initialised with a string (`char text[] =
    "abba…"`, passed to a matcher with `strlen(text)`): its text's length. A global the module
    stores into or copies into (`strcpy(buf, …)`) is left out; any other is taken to hold, as
    it is read, the text the program starts with."""
    out = {}
    for m in _STRING_GLOBAL.finditer(ir_text):
        raw = m["text"]
        if "\\00" in raw:  # LLVM prints each byte outside printable ASCII as \XX
            out[m["name"]] = len(re.sub(r"\\[0-9A-Fa-f]{2}", "_", raw[:raw.index("\\00")]))
    if not out:
        return {}
    names = "|".join(map(re.escape, out))
    written = set(re.findall(rf"^\s*store [^\n]*, ptr [^\n]*@({names})\b"
                             rf"|call [^\n]*@(?:llvm\.)?{_WRITES_FIRST}\(ptr [^,@]*@({names})\b", ir_text, re.M))
    written = {name for pair in written for name in pair if name}
    return {name: length for name, length in out.items() if name not in written and length > 0}


def _expression(text: str, definitions: dict[str, str], parameters: set[str], memo: dict,
                facts: _ModuleFacts | None = None, local=None) -> Expr | None:
    """An integer argument or operand (`i32 noundef %n`, `i64 120`) as an expression; a pointer
    argument as the global it points into (`ptr @PARAMS`), the function it names, the caller's
    pointer parameter, or a local of the caller with what it stores there (`local(name)`)."""
    words = [w for w in text.split() if w not in _ATTRIBUTES]
    if len(words) >= 2 and words[0] == "ptr":
        return _pointer(text, parameters, facts or _NO_FACTS, local)
    if len(words) < 2 or not _INT_TYPE.match(words[0]):
        return None
    return _value(words[-1], definitions, parameters, memo, 0, facts)


_GLOBAL_ADDRESS = re.compile(r"(?:^|\s)@(?P<name>[-\w$.]+)$"
                             r"|getelementptr (?:inbounds )?\(i8, ptr @(?P<based>[-\w$.]+), i64 (?P<offset>-?\d+)\)$")


def _pointer(text: str, parameters: set[str], facts: _ModuleFacts = _NO_FACTS, local=None) -> Expr | None:
    """`ptr @G` → ("addr", "G", 0), `ptr getelementptr inbounds (i8, ptr @G, i64 8)` → ("addr", "G", 8);
    `ptr @f` for a function → ("function", "f"); the caller's own pointer parameter → ("param",
    name); a local, where `local` knows it. `ccls.readers.global_constants` says later whether
    the global's contents are known."""
    m = _GLOBAL_ADDRESS.search(text.strip())
    if m and m["name"] in facts.functions:
        return ("function", _unquote(m["name"]))
    if m:
        return ("addr", m["name"], 0) if m["name"] else ("addr", m["based"], int(m["offset"]))
    last = text.split()[-1]
    if not last.startswith("%"):
        return None
    if _unquote(last[1:]) in parameters:
        return ("param", _unquote(last[1:]))
    return local(_unquote(last[1:])) if local is not None else None


def _local(name: str, callee: str, caller: str, body: list[str], definitions: dict[str, str],
           parameters: set[str], memo: dict, facts: _ModuleFacts, records: dict) -> Expr | None:
    """A local of the caller passed by address (`&n`, `&(struct cfg){16000}`) with the integers
    and pointers it stores in it, where only calls to `callee` receive it: then what the callee
    reads there is what the caller stored (a function handed it to fill it in is another callee)."""
    if not definitions.get(name, "").startswith("alloca "):
        return None
    if name not in records:
        records[name] = local_record(name, body, lambda t, i: _gep_offset(t, i, facts.types))
    record = records[name]
    if record is None or record.callees != {callee}:
        return None
    fields = []
    for offset, kind, token in record.fields:
        if kind == "ptr":
            expr = _pointer(f"ptr {token}", parameters, facts)
            bits = 64
        else:
            expr = _value(token, definitions, parameters, memo, 0, facts)
            bits = int(kind[1:])
        if expr is not None:
            fields.append((offset, bits, expr))
    for start, source, size in record.copies:  # `struct cfg c = {…}`: the constant clang copies in
        fields.extend((start + at, bits, ("const", value)) for at, bits, value in _constants(source, facts)
                      if at + bits // 8 <= size and not any(
                          o < start + at + max(1, bits // 8) and start + at < o + n for o, n in record.stored))
    struct = _STRUCT_ALLOCA.match(definitions[name])
    # The struct's name rides along until the module's writes to its fields are known.
    return ("local", f"{name} in {caller}", tuple(fields), struct[1] if struct else "") if fields else None


def _constants(name: str, facts: _ModuleFacts) -> tuple:
    """The integers a read-only global holds (`ccls.readers.global_constants`), () if written."""
    from ccls.readers.global_constants import read_only_constants  # imports this module: imported late

    if name not in facts.constants:
        facts.constants[name] = read_only_constants(facts.ir_text, {name}).get(name, ())
    return facts.constants[name]


def _gep_offset(type_text: str, indices: list[int], types: dict[str, str]) -> int | None:
    """The byte offset a constant getelementptr adds (`%struct.args_t, ptr %a, i32 0, i32 2` → 32
    on x86-64), by LLVM's layout rules (`ccls.readers.global_constants`)."""
    from ccls.readers.global_constants import TypeLayout  # imports this module: imported late

    try:
        return TypeLayout(types).offset(type_text, indices)
    except (IndexError, ValueError, KeyError, RecursionError):
        return None


def _value(token: str, definitions: dict[str, str], parameters: set[str], memo: dict, depth: int,
           facts: _ModuleFacts | None = None) -> Expr | None:
    if re.fullmatch(r"-?\d+", token):
        return ("const", int(token))
    if token in ("true", "false"):
        return ("const", int(token == "true"))
    if not token.startswith("%") or depth > MAX_DEPTH:
        return None
    name = _unquote(token[1:])
    if name in parameters:
        return ("param", name)
    if name not in memo:
        memo[name] = None  # while it is being resolved: a loop's phi does not reach itself
        expr = _defined(name, definitions, parameters, memo, depth, facts or _NO_FACTS)
        # Values shared by several paths would be written out once per path: keep them small.
        memo[name] = expr if expr is None or _nodes(expr) <= MAX_NODES else None
    return memo[name]


def _nodes(expr: Expr, limit: int = MAX_NODES + 1) -> int:
    """Nodes of an expression tree, counted up to `limit`."""
    count, stack = 0, [expr]
    while stack and count < limit:
        node = stack.pop()
        count += 1
        if node[0] == "op":
            stack.extend(node[2:])
        elif node[0] == "choice":
            stack.extend(node[1])
    return count


def _defined(name: str, definitions: dict[str, str], parameters: set[str], memo: dict, depth: int,
             facts: _ModuleFacts) -> Expr | None:
    definition = definitions.get(name)
    if definition is None:
        return None
    if definition.startswith(FORWARDED):  # a load of what its block just stored (`ccls.readers.search_loops`)
        return _value(definition[len(FORWARDED):], definitions, parameters, memo, depth, facts)
    if definition.startswith("load ") and (read := table_read(definition, definitions, facts.tables)):
        table, entries, index, most = read
        if len(entries) > MAX_ENTRY_TABLE:
            return ("most", most, table)
        index_expr = _value(index, definitions, parameters, memo, depth + 1, facts)
        return ("entry", table, entries, index_expr, ("most", most, table)) if index_expr else ("most", most, table)
    if definition.startswith("load "):  # load i32, ptr %ctx, align 4, !tbaa !13: a struct's field
        scalar = _GLOBAL_LOAD.match(definition)
        if scalar:  # an integer global: a one-field struct `@G` (`ccls.readers.global_stores`)
            return ("field", f"@{scalar['name']}", 0)
        tag = _TBAA_USE.search(definition)
        field = facts.fields.get(tag[1]) if tag else None
        return ("field", *field) if field and _INT_TYPE.match(definition.split()[1].rstrip(",")) else None
    definition = definition.split(", !")[0]  # metadata attachments (!dbg, !range)
    words = [w for w in definition.replace(",", " , ").split() if w not in _ATTRIBUTES]
    opcode = words[0] if words else ""
    strlen = _STRLEN.search(definition)
    if strlen and strlen["name"] in facts.strings:
        return ("const", facts.strings[strlen["name"]])
    if opcode in _BINARY:  # add nsw i32 %a, 2
        operands = " ".join(words[1:]).split(" , ")
        if len(operands) != 2:
            return None
        type_name = operands[0].split()[0]
        left = _value(operands[0].split()[-1], definitions, parameters, memo, depth + 1, facts)
        right = _value(operands[1].split()[-1], definitions, parameters, memo, depth + 1, facts)
        return ("op", opcode, left, right) if _INT_TYPE.match(type_name) and left and right else None
    if opcode in _CASTS:  # sext i32 %n to i64
        return _value(words[2], definitions, parameters, memo, depth + 1, facts) if len(words) >= 3 else None
    if opcode == "phi":  # phi i32 [ 120, %entry ], [ 3, %if.then ]
        incoming = re.findall(r"\[\s*([^,\]]+),", definition)
        if (most := _counter_most(name, incoming, definitions)) is not None:
            return ("most", most, "a loop counter")
        if len(incoming) > MAX_CHOICES:
            return None
        return _choice([_value(v.strip(), definitions, parameters, memo, depth + 1, facts) for v in incoming])
    if opcode == "select":  # select i1 %c, i32 4, i32 8
        operands = " ".join(words[1:]).split(" , ")
        if len(operands) != 3:
            return None
        return _choice([_value(o.split()[-1], definitions, parameters, memo, depth + 1, facts) for o in operands[1:]])
    return None


_GLOBAL_LOAD = re.compile(r"^load i\d+, ptr @(?P<name>[-\w$.]+)(?:,|$)")
_COUNTER_TEST = re.compile(r"^icmp (?P<predicate>slt|ult|sle|ule|ne) i\d+ %(?P<value>[-\w$.]+|\"[^\"]*\"), (?P<bound>-?\d+)")


def _with_searches(body: list[str], definitions: dict[str, str], parameters: set[str], facts: _ModuleFacts) -> dict:
    """Marks in `definitions` the loads that read back what their block just stored, and returns
    the function's first resolved values: each search loop's counter (`ccls.readers.search_loops`)
    as the value it leaves with, its tests read with the counter as ("counter",)."""
    if not any(line.lstrip().startswith("br i1 ") for line in body):
        return {}
    blocks = blocks_of(body)
    for load, token in forwarded_loads(blocks).items():
        definitions[load] = FORWARDED + token
    memo: dict[str, Expr | None] = {}
    for loop in search_loops(blocks, definitions):
        reading = {loop.counter: ("counter",)}
        tests = []
        for predicate, left, right, when in (loop.stay, loop.leave):
            left_expr = _value(left, definitions, parameters, reading, 0, facts)
            right_expr = _value(right, definitions, parameters, reading, 0, facts)
            tests.append(("icmp", predicate, left_expr, right_expr, when) if left_expr and right_expr else None)
        if None in tests:
            continue
        incoming = re.findall(r"\[\s*([^,\]]+),", definitions[loop.counter])
        most = _counter_most(loop.counter, incoming, definitions)
        memo[loop.counter] = ("search", loop.start, loop.step, tests[0], tests[1],
                              ("most", most, "a loop counter") if most is not None else None)
    return memo


def _counter_most(name: str, incoming: list[str], definitions: dict[str, str]) -> int | None:
    """The most a loop counter can be (`for (v = 1; v < 40; v++) … f(v)`: 40, where it leaves):
    a phi of a constant start and itself plus a positive constant, compared below a constant
    bound. None for any other phi."""
    values = [v.strip() for v in incoming]
    if len(values) != 2:
        return None
    starts = [int(v) for v in values if re.fullmatch(r"-?\d+", v)]
    steps = [v for v in values if v.startswith("%")]
    if len(starts) != 1 or len(steps) != 1:
        return None
    step = re.match(rf"^add (?:nuw |nsw )*i\d+ %{re.escape(name)}, (\d+)", definitions.get(steps[0][1:].strip('"'), ""))
    if step is None or int(step[1]) < 1:
        return None
    tested = {name} | {other for other, text in definitions.items()
                       if re.match(rf"^(?:zext|sext)(?: nneg)? i\d+ %{re.escape(name)} to ", text)}
    stride = int(step[1])  # it leaves at most a step past the bound
    bounds = [int(m["bound"]) + stride - (m["predicate"] in ("slt", "ult")) if m["predicate"] != "ne" else int(m["bound"])
              for text in definitions.values() if (m := _COUNTER_TEST.match(text)) and m["value"].strip('"') in tested]
    return max(bounds) if len(bounds) == 1 and bounds[0] > starts[0] else None


def _choice(options: list[Expr | None]) -> Expr | None:
    if not options or any(o is None for o in options):
        return None
    return ("choice", tuple(options))


def split_arguments(text: str) -> list[str]:
    """Top-level comma-separated items of an argument list (types may hold commas)."""
    items, depth, start = [], 0, 0
    for index, char in enumerate(text):
        if char in "([{<":
            depth += 1
        elif char in ")]}>":
            depth -= 1
        elif char == "," and depth == 0:
            items.append(text[start:index].strip())
            start = index + 1
    tail = text[start:].strip()
    if tail:
        items.append(tail)
    return items


def balanced_prefix(text: str) -> str:
    """The argument list up to its closing parenthesis (`text` starts just after the opening one)."""
    depth = 1
    for index, char in enumerate(text):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth == 0:
            return text[:index]
    return text


def _argument_name(parameter: str) -> str | None:
    last = parameter.split()[-1] if parameter.split() else ""
    return _unquote(last[1:]) if last.startswith("%") else None


def _unquote(name: str) -> str:
    return name[1:-1] if len(name) >= 2 and name[0] == name[-1] == '"' else name
