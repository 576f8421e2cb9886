"""CPython bytecode → `FunctionIR`: basic blocks, natural loops, ``range()`` trip counts.

Pure: code objects come from ``compile()`` (which only compiles); nothing is ever executed.
Written against CPython 3.11 and kept tolerant of 3.12/3.13 opcode names (END_FOR,
LOAD_FAST_LOAD_FAST, callable-before-NULL call layout, MAKE_FUNCTION without flags).

Trip counts come from a tiny abstract interpreter over each block's value stack: it knows
integers as polynomials over parameters (``n``), ``len(param)`` and outer loop indices
(``@<loop id>``), and what ``range``/``enumerate``/``len`` return. Anything it cannot model
clears its stack, so an unmodelled opcode makes a trip count *unknown*, never wrong.

Iterations counted for a ``for`` loop are those of its body; the final FOR_ITER that finds
the iterator exhausted is not counted separately (one cheap instruction per loop entry).

Lengths the module itself tells: literals (lists, tuples, dicts, strings, bytes), module
constants nothing resizes, an Enum's members, a local list counted by the appends that run
(`_grown`), a dict while nothing adds keys (`_keeps_keys`), an attribute list built in one
place (`_ModuleInfo.collection`), what a module function returns (`_ModuleInfo.returns`),
``array.array``. ``while`` loops over a counter moved by a constant, or divided/multiplied,
are counted (`_log_trip`).
"""
from __future__ import annotations

import builtins
import dis
import functools
import io
import math
import platform
import tokenize
import types
import warnings
from dataclasses import dataclass, field, replace
from fractions import Fraction
from inspect import CO_OPTIMIZED
from typing import Iterator

from ccls.early_exit import early_exit_trip
from ccls.model import AnalysisError, BasicBlock, FunctionIR, Instruction, Loop, TripCount
from ccls.options import INSTANCE_ATTRIBUTE
from ccls.readers.block_frequency import block_frequencies
from ccls.readers.dominance import dominator_sets, immediate_dominators
from ccls.readers.python_ast import syntax_tree
from ccls.polynomial import LOG2_PREFIX, Polynomial

ARCH = "cpython-3.11"  # cost table id; the interpreter's own version goes into an assumption
WORK_LOOP = "W"  # id prefix of a loop that stands for the C loop inside a builtin (`sorted(a)`)
COMPREHENSIONS = ("<listcomp>", "<setcomp>", "<dictcomp>", "<genexpr>")
_MAX_CHAIN = 40  # how many `a = b + 1` assignments deep a value is followed

_JUMPS = set(getattr(dis, "hasjump", ())) | set(dis.hasjrel) | set(dis.hasjabs)
_UNCONDITIONAL = {"JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT", "JUMP_ABSOLUTE",
                  "JUMP", "JUMP_NO_INTERRUPT"}
_TERMINAL = {"RETURN_VALUE", "RETURN_CONST", "RAISE_VARARGS", "RERAISE"}
_STORES = {"STORE_FAST", "STORE_DEREF", "DELETE_FAST", "DELETE_DEREF", "LOAD_FAST_AND_CLEAR",
           "STORE_NAME", "DELETE_NAME"}

# -- instruction classes (keys of cost_tables/cpython-3.11.json) -----------------------------
_EXACT_CLASS = {
    **dict.fromkeys(("LOAD_ATTR", "LOAD_METHOD", "LOAD_SUPER_ATTR", "STORE_ATTR", "DELETE_ATTR"), "py.attr"),
    **dict.fromkeys(("BINARY_SUBSCR", "STORE_SUBSCR", "DELETE_SUBSCR", "BINARY_SLICE", "STORE_SLICE"),
                    "py.subscr"),
    **dict.fromkeys(("COMPARE_OP", "IS_OP", "CONTAINS_OP"), "py.compare"),
    **dict.fromkeys(("CALL", "CALL_FUNCTION_EX", "CALL_KW"), "py.call"),
    **dict.fromkeys(("CALL_INTRINSIC_1", "CALL_INTRINSIC_2"), "py.call"),
    **dict.fromkeys(("GET_ITER", "FOR_ITER", "END_FOR", "GET_YIELD_FROM_ITER"), "py.iter"),
    **dict.fromkeys(("LIST_EXTEND", "SET_UPDATE", "DICT_UPDATE",
                     "DICT_MERGE", "LIST_TO_TUPLE"), "py.build"),
    # Measured apart from a tuple's or a list's allocation: a dict display makes a hash table and
    # inserts each key, a set display hashes each item, an f-string turns each value into text.
    **dict.fromkeys(("BUILD_MAP", "BUILD_CONST_KEY_MAP"), "py.build.map"),
    "BUILD_SET": "py.build.set",
    **dict.fromkeys(("FORMAT_VALUE", "BUILD_STRING", "FORMAT_SIMPLE", "FORMAT_WITH_SPEC", "CONVERT_VALUE"),
                    "py.build.format"),
    # Neither allocates a container: unpacking pushes items the sequence holds; a comprehension's
    # append adds one item to a list that grows geometrically.
    **dict.fromkeys(("UNPACK_SEQUENCE", "UNPACK_EX"), "py.build.unpack"),
    **dict.fromkeys(("LIST_APPEND", "SET_ADD", "MAP_ADD"), "py.build.append"),
    # A global or a builtin: the module's dict, then the builtins' (about three local loads).
    **dict.fromkeys(("LOAD_GLOBAL", "LOAD_NAME", "LOAD_FROM_DICT_OR_GLOBALS"), "py.load.global"),
    **dict.fromkeys(("RETURN_VALUE", "RETURN_CONST", "YIELD_VALUE", "RETURN_GENERATOR"), "py.return"),
    # Stack shuffles, call set-up, MAKE_FUNCTION, async iteration: the table fits them as py.other.
    **dict.fromkeys(("PRECALL", "KW_NAMES", "PUSH_NULL", "COPY", "SWAP", "POP_TOP", "RESUME", "NOP",
                     "EXTENDED_ARG", "MAKE_CELL", "COPY_FREE_VARS", "SET_FUNCTION_ATTRIBUTE", "MAKE_FUNCTION",
                     "GET_AITER", "GET_ANEXT", "END_ASYNC_FOR"), "py.other"),
    "STORE_FAST_LOAD_FAST": "py.store",
}
# Must agree with family() in cost_tables/derive/cpython_bytecode.py, which the table was fitted
# with (a test checks); names that only later CPythons have are mapped here by analogy.
_PREFIX_CLASS = (("LOAD_", "py.load"), ("STORE_", "py.store"), ("DELETE_", "py.store"),
                 ("BUILD_", "py.build"), ("POP_JUMP", "py.branch"), ("JUMP", "py.branch"),
                 ("UNARY_", "py.binary_other"))
_BINARY_CLASS = {
    **dict.fromkeys(("+", "-", "+=", "-="), "py.binary_add"),
    **dict.fromkeys(("*", "*="), "py.binary_mul"),
    **dict.fromkeys(("/", "//", "%", "/=", "//=", "%="), "py.binary_div"),
    "[]": "py.subscr",  # 3.14 spells subscription as BINARY_OP
}


def classify(instr: dis.Instruction) -> str:
    """Instruction class of one bytecode instruction (`%` on a string: `_printf_units`)."""
    op = instr.opname
    if op == "BINARY_OP":
        return _BINARY_CLASS.get(instr.argrepr.strip(), "py.binary_other")
    if op in _EXACT_CLASS:
        return _EXACT_CLASS[op]
    for prefix, cls in _PREFIX_CLASS:
        if op.startswith(prefix):
            return cls
    return "py.other"


# -- abstract values for the block-local stack interpreter ---------------------------------
@dataclass(frozen=True)
class _Iter:
    """An iterator the interpreter understands: how many items, and what each item is."""

    trips: Polynomial
    kind: str  # "constant" | "symbolic"
    notes: tuple[str, ...] = ()  # approximations made on the way, reported as assumptions
    start: Polynomial | None = None  # range item = start + step·index
    step: Fraction | None = None
    enumerated: "_Iter | None" = None  # enumerate(inner): item = (index, inner item)

    def item(self, index: Polynomial) -> "_Val":
        if self.enumerated is not None:
            return _Val(items=(_Val(poly=index), self.enumerated.item(index)))
        if self.start is not None and self.step is not None:
            return _Val(poly=self.start + index * self.step, notes=self.notes)
        return _UNKNOWN


@dataclass(frozen=True)
class _Range:
    start: Polynomial
    stop: Polynomial
    step: Fraction
    notes: tuple[str, ...]


@dataclass(frozen=True)
class _Val:
    poly: Polynomial | None = None  # an int known as a polynomial
    seq: str | None = None  # a sized collection: len(seq) is a symbol
    notes: tuple[str, ...] = ()  # approximations behind `poly`
    name: str | None = None  # dotted name, for call targets
    var: str | None = None  # the local/cell variable this value was loaded from
    direct: bool = False  # name is a call target we can name (not a parameter)
    rng: _Range | None = None
    iter: _Iter | None = None
    code: types.CodeType | None = None  # a function made by MAKE_FUNCTION
    items: tuple["_Val", ...] | None = None
    is_global: bool = False  # loaded by LOAD_GLOBAL/LOAD_NAME: a builtin unless the module shadows it
    is_str: bool = False
    is_null: bool = False
    is_none: bool = False
    owner: "_Val | None" = None  # for an attribute: the object it was read from
    attr: str | None = None  # for an attribute: its own name
    from_global: bool = False  # an attribute chain that starts at a global (a module's function)
    container: str | None = None  # "list" / "tuple" when this function built it
    length: Polynomial | None = None  # its length, when known
    bounds: tuple["_Val", "_Val"] | None = None  # a slice object's (start, stop), step 1
    # An integer not known here plus a known amount (`i + 3`): `base` names the unknown value (a
    # local as one block reads it between two stores), so that `(i + 3) - i` is 3.
    base: str | None = None
    shift: Polynomial | None = None
    made_at: int | None = None  # a generator expression: the offset of the call that made it
    item_bytes: int | None = None  # a flat sequence (str, bytes, array): bytes per item
    text: str | None = None  # a short string constant's own text (an array's typecode)
    literal: bool = False  # a constant the code states that is no size (a float, a bool, a complex)
    conversions: int | None = None  # a format string constant's % conversions (`"%d of %d"`: 2)


_UNKNOWN = _Val()
_LITERAL = _Val(literal=True)
_NULL = _Val(is_null=True)
# Builtins that read a sequence they are handed and keep nothing of it that could grow it.
_READS_SEQUENCE = frozenset(("len", "sorted", "list", "tuple", "set", "frozenset", "sum", "min", "max", "any",
                             "all", "enumerate", "reversed", "zip", "print", "repr", "str", "iter"))
# Methods that change a container's length in place.
_RESIZING = frozenset(("append", "extend", "insert", "pop", "remove", "clear", "add", "discard", "update",
                       "setdefault", "popitem", "appendleft", "popleft", "extendleft"))


@dataclass(frozen=True)
class _Site:
    """One call as the stack interpreter saw it: what is called, on what, with what."""

    func: _Val
    this: _Val | None  # 3.11's bound-method layout: the object a method is called on
    args: tuple[_Val, ...]
    keywords: tuple[str, ...] | None  # names of the last len(keywords) arguments


def _const_value(value: object) -> _Val:
    if isinstance(value, int) and not isinstance(value, bool):
        return _Val(poly=Polynomial.constant(value))
    if isinstance(value, str):  # a literal: its characters are known (`for base in "ACGT"`)
        return _Val(is_str=True, length=Polynomial.constant(len(value)), item_bytes=1,
                    text=value if len(value) <= 2 else None, conversions=value.replace("%%", "").count("%"))
    if isinstance(value, bytes):
        return _Val(container="bytes", length=Polynomial.constant(len(value)), item_bytes=1)
    if value is None:
        return _Val(is_none=True)
    if isinstance(value, (tuple, frozenset)):
        return _Val(container="tuple", length=Polynomial.constant(len(value)))
    if isinstance(value, types.CodeType):
        return _Val(code=value)
    return _LITERAL


# printf-style formatting (`"%d of %d" % (i, n)`) is an f-string's work done by PyUnicode_Format:
# each conversion turns a value into text as FORMAT_VALUE does, and the pieces are joined into a
# new string as BUILD_STRING does; priced as that many py.build.format. Timed on locals (3.11.7,
# 2026-11-25, least of 15 runs, net of an empty loop): `"%d" % a` 49 ns against f"{a}" 29 (one
# FORMAT_VALUE), `"%d %d" % (a, b)` 88 against f"{a} {b}" 79 (three units), `a + b` 6.
_PRINTF = "py.build.format"


def _printf_units(template: _Val) -> int:
    """py.build.format units of ``template % values``: its conversions (one where the template is
    not a constant) and the join."""
    conversions = template.conversions if template.conversions is not None else 1
    return max(conversions, 1) + 1


def _polys(v: _Val) -> list[Polynomial]:
    """Every polynomial a value carries (its int value, its length, its range's bounds, its
    iterator's count): a value read outside a loop must not mention that loop's index."""
    out = [p for p in (v.poly, v.length) if p is not None]
    if v.rng is not None:
        out += [v.rng.start, v.rng.stop]
    if v.iter is not None:
        out.append(v.iter.trips)
        out += [v.iter.start] if v.iter.start is not None else []
    for item in v.items or ():
        out += _polys(item)
    return out


def _kind(p: Polynomial) -> str:
    return "constant" if p.constant_value() is not None else "symbolic"


def _notes(*values: _Val) -> tuple[str, ...]:
    return tuple(dict.fromkeys(n for v in values for n in v.notes))


def _call_builtin(name: str, args: list[_Val]) -> _Val:
    """What range/len/enumerate/reversed return, when their arguments are understood."""
    if name == "len" and len(args) == 1 and args[0].seq is not None:
        return _Val(poly=Polynomial.symbol(f"len({args[0].seq})"))
    if name == "len" and len(args) == 1 and args[0].length is not None:  # a list built here, a tuple constant
        return _Val(poly=args[0].length, notes=args[0].notes)
    if name == "range" and 2 <= len(args) <= 3 and args[0].base is not None and args[0].base == args[1].base \
            and (len(args) == 2 or (args[2].poly is not None and args[2].poly.constant_value())):
        # range(i + a, i + b) over an i not known here: b − a items, whatever i is
        step = args[2].poly.constant_value() if len(args) == 3 else Fraction(1)
        local = args[0].base.split("#")[0]
        notes = _notes(*args) + (f"range over {local}, not known here: as many items as its bounds differ by",)
        trips, notes = _range_trips(_Range(args[0].shift, args[1].shift, step, notes))
        return _Val(iter=_Iter(trips, _kind(trips), notes), length=trips, notes=notes)
    if name == "range" and 1 <= len(args) <= 3 and all(a.poly is not None for a in args):
        if len(args) == 1:
            return _Val(rng=_Range(Polynomial.constant(0), args[0].poly, Fraction(1), args[0].notes))
        step, notes = Fraction(1), _notes(*args)
        if len(args) == 3:
            step = args[2].poly.constant_value()
            if not step:  # a symbolic step (or 0, which raises at run time)
                return _UNKNOWN
            if abs(step) != 1:
                notes += (f"range step {step}: trip count (stop − start)/{step}, ignoring rounding",)
        return _Val(rng=_Range(args[0].poly, args[1].poly, step, notes))
    if name == "list" and not args:
        return _Val(container="list", length=Polynomial.constant(0))
    if name in ("sorted", "list", "tuple") and len(args) == 1:
        size = _length(args[0])  # same length as its argument
        return _Val(seq=args[0].seq, container="tuple" if name == "tuple" else "list",
                    length=size[0] if size is not None and size[1] != "unknown" else None)
    if name == "zip" and args:
        sizes = [_length(a) for a in args]
        known = [size for size in sizes if size is not None and size[1] != "unknown"]
        if known:
            trips, kind, notes = known[0]
            if len(known) < len(sizes) or any(size[0] != trips for size in known[1:]):
                notes += (f"zip stops at its shortest argument; taken as {trips} items",)
            return _Val(iter=_Iter(trips, kind, notes), length=trips, notes=notes)
    if name in ("enumerate", "reversed") and len(args) == 1:
        inner = _get_iter(args[0])
        if inner is not None and name == "enumerate":
            return _Val(iter=_Iter(inner.trips, inner.kind, inner.notes, enumerated=inner))
        if inner is not None:  # same length; items no longer start + step·index
            return _Val(iter=_Iter(inner.trips, inner.kind, inner.notes))
    return _UNKNOWN


def _array_value(args: list[_Val]) -> _Val:
    """``array.array(typecode[, initializer])``: an array of the typecode's item size (from the
    array module itself, which the analysis imports: it runs nothing of the user's), as long as
    its initializer when that is known."""
    import array as array_module
    try:
        item = array_module.array(args[0].text).itemsize
    except (ValueError, TypeError):
        return _UNKNOWN
    size = _length(args[1]) if len(args) > 1 else (Polynomial.constant(0), "constant", ())
    if size is None or size[1] == "unknown":
        return _Val(container="array", item_bytes=item)
    return _Val(container="array", item_bytes=item, length=size[0], notes=size[2])


def _flat(v: _Val) -> bool:
    """A str, bytes or array.array of known length: repeating it copies bytes (`_FILL`)."""
    return v.item_bytes is not None and v.length is not None


def _is_difference(p: Polynomial) -> bool:
    """A count such as ``hi - lo``: a size with a negative coefficient and no loop index, which
    evaluating each size at the same default would make 0 (or negative)."""
    return (not any(s.startswith("@") for s in p.symbols)
            and any(c < 0 for m, c in p.terms if m))


def _range_trips(r: _Range) -> tuple[Polynomial, tuple[str, ...]]:
    """Items of a range: (stop − start)/step; a difference of sizes gets a name of its own,
    ``len(range(lo, hi))``, so that it is evaluated (and set with --param) as one size."""
    trips = (r.stop - r.start) * (1 / r.step)
    value = trips.constant_value()
    if value is not None and value < 0:
        return Polynomial.constant(0), r.notes
    if _is_difference(trips):
        args = f"{r.start}, {r.stop}" + (f", {r.step}" if r.step != 1 else "")
        name = f"len(range({args}))"
        if len(_NAMED_DIFFERENCES) > 4096:
            _NAMED_DIFFERENCES.clear()
        _NAMED_DIFFERENCES[name] = trips
        return Polynomial.symbol(name), r.notes + (f"{trips} items taken as one size, {name}",)
    return trips, r.notes


# What each `len(range(lo, hi))` size stands for (the name is made from lo and hi, so it always
# names the same count): `ccls.readers.python_calls` sets one whose sizes a constructor gives.
_NAMED_DIFFERENCES: dict[str, Polynomial] = {}


def named_difference(name: str) -> Polynomial | None:
    """The count a ``len(range(lo, hi))`` size was named for, when this process named it."""
    return _NAMED_DIFFERENCES.get(name)


def _length(v: _Val) -> tuple[Polynomial, str, tuple[str, ...]] | None:
    """How many items a value holds (polynomial, trip kind, notes), when the reader knows."""
    if v.length is not None:
        return v.length, _kind(v.length), v.notes
    if v.seq is not None:
        return Polynomial.symbol(f"len({v.seq})"), "symbolic", ()
    if v.rng is not None:
        trips, notes = _range_trips(v.rng)
        return trips, _kind(trips), notes
    if v.iter is not None:
        return v.iter.trips, v.iter.kind, v.iter.notes
    return None


def _comprehension_value(code: types.CodeType, iterator: _Val) -> _Val:
    """What a 3.11 comprehension call returns: a list or set (a generator) as long as its first
    iterable, when that is known (an upper bound when it filters, a lower one when it nests)."""
    it = iterator.iter
    if it is None:
        return _UNKNOWN
    if code.co_name == "<dictcomp>":  # one key per item at most (equal keys collapse)
        note = f"dictcomp at line {code.co_firstlineno}: at most as many keys as its first iterable, {it.trips}"
        return _Val(container="dict", length=it.trips, notes=it.notes + (note,))
    note = f"{code.co_name[1:-1]} at line {code.co_firstlineno}: as many items as its first iterable, {it.trips}"
    if code.co_name == "<genexpr>":
        return _Val(iter=replace(it, notes=it.notes + (note,)), length=it.trips, notes=it.notes + (note,))
    return _Val(container="list" if code.co_name == "<listcomp>" else None, length=it.trips,
                notes=it.notes + (note,))


def _get_iter(v: _Val) -> _Iter | None:
    """The iterator GET_ITER makes of a value, when its length is known."""
    if v.iter is not None:
        return v.iter
    if v.rng is not None:
        r = v.rng
        trips, notes = _range_trips(r)
        return _Iter(trips, _kind(trips), notes, start=r.start, step=r.step)
    if v.seq is not None:
        return _Iter(Polynomial.symbol(f"len({v.seq})"), "symbolic",
                     (f"iterates over {v.seq}: trip count taken as len({v.seq})",))
    if v.length is not None:
        return _Iter(v.length, _kind(v.length), v.notes)
    return None


# -- work inside builtins: C loops that bytecode does not show --------------------------------
# Documented complexity: CPython wiki, "TimeComplexity" (https://wiki.python.org/moin/TimeComplexity).
# Each unit of work is priced by a py.work.<kind> class measured by cost_tables/derive/cpython_builtins.py.
TIME_COMPLEXITY = "https://wiki.python.org/moin/TimeComplexity"


@dataclass(frozen=True)
class _WorkSpec:
    cls: str  # py.work.* cost class: the price of one unit
    owner_type: str  # the type whose operation this is ("list", "str", "builtin")
    complexity: str  # as TimeComplexity lists it
    early_exit: bool = False  # may stop at the first match (a search)
    sized_by: str = "arg"  # whose length counts: "arg" (first argument) or "self" (the object)
    known_owner: bool = False  # only when the object is known to be owner_type (dict.pop is O(1))


_SORT = _WorkSpec("py.work.sort", "list", "O(n log n)", sized_by="self")
_BUILTIN_WORK = {
    "sorted": replace(_SORT, owner_type="builtin", sized_by="arg"),
    **dict.fromkeys(("list", "tuple"), _WorkSpec("py.work.copy", "builtin", "O(n)")),
    **dict.fromkeys(("set", "frozenset", "dict"), _WorkSpec("py.work.hash", "builtin", "O(n)")),
    "sum": _WorkSpec("py.work.sum", "builtin", "O(n)"),
    **dict.fromkeys(("min", "max"), _WorkSpec("py.work.minmax", "builtin", "O(n)")),
    **dict.fromkeys(("any", "all"), _WorkSpec("py.work.sum", "builtin", "O(n)", early_exit=True)),
}


@dataclass(frozen=True)
class _FixedWork:
    """A builtin whose own work per call is many times a plain builtin call's (``len``, ``abs``:
    py.call alone), whatever the sizes of its arguments; measured in CPython 3.11 by
    cost_tables/derive/cpython_builtins.py."""

    cls: str
    fewest_args: int  # positional arguments it needs to be this operation (min(a) is a reduction)


_FIXED_WORK = {
    # 3.11 calls min/max with an argument tuple and parses their key=/default= keywords each time.
    **dict.fromkeys(("min", "max"), _FixedWork("py.work.varargs", 2)),
    # Builtin types called: each call makes a new object (an iterator, a number, a string), freed later.
    **dict.fromkeys(("range", "enumerate", "zip", "reversed", "map", "filter", "int", "str", "round"),
                    _FixedWork("py.work.object", 1)),
}

_STR_METHOD = _WorkSpec("py.work.char", "str", "O(n)", sized_by="self")
_MOVE = _WorkSpec("py.work.move", "list", "O(n)", sized_by="self")  # item pointers shifted by memmove
_HASH_ARG = _WorkSpec("py.work.hash", "dict/set", "O(len(argument))")
_METHOD_WORK = {
    "sort": _SORT,
    "insert": replace(_MOVE, complexity="O(n) (Insert)"),
    "reverse": replace(_MOVE, complexity="O(n)", known_owner=True),
    "pop": replace(_MOVE, complexity="O(n) for pop(i) (Pop intermediate)", known_owner=True),
    "remove": _WorkSpec("py.work.scan", "list", "O(n) (Delete Item)", sized_by="self", known_owner=True),
    "update": replace(_HASH_ARG, complexity="O(len(argument)) (set/dict update)"),
    **dict.fromkeys(("union", "difference", "symmetric_difference", "issuperset"),
                    replace(_HASH_ARG, complexity="O(len(t)) for the argument t (set operations)")),
    **dict.fromkeys(("intersection", "issubset"),
                    replace(_HASH_ARG, complexity="O(len(s)) at most (set operations)", sized_by="self")),
    "index": _WorkSpec("py.work.scan", "list", "O(n)", early_exit=True, sized_by="self"),
    "count": _WorkSpec("py.work.scan", "list", "O(n)", sized_by="self"),
    "copy": _WorkSpec("py.work.copy", "list", "O(n)", sized_by="self"),
    "extend": _WorkSpec("py.work.copy", "list", "O(k), k = len(argument)"),
    "join": _WorkSpec("py.work.join", "str", "O(n), n = len(argument)"),
    **dict.fromkeys(("replace", "strip", "lstrip", "rstrip", "lower", "upper", "find", "rfind"), _STR_METHOD),
    **dict.fromkeys(("split", "rsplit", "splitlines"), replace(_STR_METHOD, cls="py.work.split")),
}
_SCAN = _WorkSpec("py.work.scan", "list", "O(n)", early_exit=True)
_SLICE = _WorkSpec("py.work.copy", "list", "O(k), k = the slice's length")
_REPEAT = _WorkSpec("py.work.copy", "list", "O(nk) (list multiply)")
# str, bytes, array.array repeated: O(nk) like a list's, but their items' bytes are copied
# (memcpy), no references counted: one py.work.fill per byte made.
_FILL = _WorkSpec("py.work.fill", "str/bytes/array", "O(nk) (sequence repetition), in bytes")
_CONCAT = _WorkSpec("py.work.copy", "list", "O(n + m) (concatenation copies both)")


@dataclass(frozen=True)
class _Work:
    """Work a builtin does in C for one call: ``units`` × the price of ``cls``."""

    label: str  # the call as the user wrote it, e.g. "sorted(a)"
    cls: str
    trip: TripCount
    notes: tuple[str, ...]


def _label(v: _Val | None) -> str:
    if v is None:
        return "…"
    if v.seq or v.var or v.name:
        return v.seq or v.var or v.name
    if v.rng is not None:
        return f"range({v.rng.start}, {v.rng.stop})"
    if v.base is not None and v.shift is not None:
        local = v.base.split("#")[0]
        return local if v.shift.is_zero else f"{local} + {v.shift}"
    return "'…'" if v.is_str else "[…]" if v.container == "list" else "(…)" if v.container == "tuple" else "…"


def _n_log_n(n: Polynomial) -> Polynomial:
    """n·log₂ n, with log₂ of a size as the symbol ``log2(size)`` (as halving loops use)."""
    value = n.constant_value()
    if value is not None:
        return Polynomial.constant(Fraction(value * math.log2(max(float(value), 2.0))).limit_denominator(1000))
    symbols = sorted(n.symbols)
    return n * Polynomial.symbol(f"{LOG2_PREFIX}{symbols[0]})")  # several sizes: log₂ of the first


def _make_work(spec: _WorkSpec, label: str, sized: _Val | None, default: int, early_exit: str,
               assumed_type: bool) -> _Work:
    """The work of one call of a builtin over a value of known (or default) length."""
    size = _length(sized) if sized is not None else None
    notes: list[str] = []
    if assumed_type:
        notes.append(f"{label} taken as {spec.owner_type}.{label.rsplit('.', 1)[-1].split('(')[0]} "
                     "(the object's type is not known)")
    if size is None:
        n, kind = Polynomial.constant(default), "unknown"
        notes.append(f"{label}: length of {_label(sized)} not known, assumed {default}")
    else:
        n, kind, more = size
        notes.extend(more)
    units = _n_log_n(n) if spec.cls == "py.work.sort" else n
    text = f"{label}: {spec.complexity} ({TIME_COMPLEXITY})"
    trip = TripCount(kind, units, text)
    if spec.early_exit and kind != "unknown":
        trip, how = early_exit_trip(units, early_exit, text)
        notes.append(f"{label} may stop at its first match; {how}")
    units_text = f"({trip.iterations})" if len(trip.iterations.terms) > 1 else str(trip.iterations)
    notes.append(f"{label} costed as {units_text} × {spec.cls} (documented complexity "
                 f"{spec.complexity}, TimeComplexity)")
    return _Work(label, spec.cls, trip, tuple(notes))


def _binary(symbol: str, a: _Val, b: _Val) -> _Val:
    if (a.base or b.base) and symbol in ("+", "+=", "-", "-="):
        return _shifted(symbol in ("+", "+="), a, b)
    if a.poly is None or b.poly is None:
        return _UNKNOWN
    notes = _notes(a, b)
    if symbol in ("+", "+="):
        return _Val(poly=a.poly + b.poly, notes=notes)
    if symbol in ("-", "-="):
        return _Val(poly=a.poly - b.poly, notes=notes)
    if symbol in ("*", "*="):
        return _Val(poly=a.poly * b.poly, notes=notes)
    divisor = b.poly.constant_value()
    if symbol in ("//", "//=") and divisor and divisor > 0:
        exact = a.poly.constant_value()
        if exact is not None:
            return _Val(poly=Polynomial.constant(exact // divisor), notes=notes)
        return _Val(poly=a.poly * (1 / divisor), notes=notes + (f"// {divisor} taken as exact division",))
    return _UNKNOWN


def _shifted(plus: bool, a: _Val, b: _Val) -> _Val:
    """a ± b where one or both are an unknown value plus a known amount: the unknown cancels in
    the difference of two amounts added to the same value; otherwise it is carried along."""
    if a.base is not None and b.base is not None:
        if plus or a.base != b.base:
            return _UNKNOWN
        return _Val(poly=a.shift - b.shift, notes=_notes(a, b))
    if a.base is not None and b.poly is not None:
        return _Val(base=a.base, shift=a.shift + b.poly if plus else a.shift - b.poly, notes=_notes(a, b))
    if b.base is not None and a.poly is not None and plus:
        return _Val(base=b.base, shift=b.shift + a.poly, notes=_notes(a, b))
    return _UNKNOWN


def _unknown_base(v: _Val, name: str) -> _Val:
    """A local whose value the reader does not know, as an unknown integer named ``name``."""
    if (v.poly is not None or v.seq is not None or v.rng is not None or v.iter is not None or v.length is not None
            or v.items is not None or v.container is not None or v.code is not None or v.is_str or v.is_none
            or v.literal):
        return v
    return replace(v, base=name, shift=Polynomial.constant(0))


# Opcodes whose stack effect the interpreter models as (pops, unknown pushes).
_POPS_PUSHES = {
    **dict.fromkeys(("STORE_FAST", "STORE_DEREF", "STORE_GLOBAL", "STORE_NAME", "LIST_APPEND", "SET_ADD",
                     "SET_UPDATE", "DICT_UPDATE"), (1, 0)),
    "STORE_ATTR": (2, 0), "STORE_SUBSCR": (3, 0), "MAP_ADD": (2, 0),
    **dict.fromkeys(("DELETE_FAST", "DELETE_DEREF", "DELETE_GLOBAL", "DELETE_NAME"), (0, 0)),
    **dict.fromkeys(("COMPARE_OP", "IS_OP"), (2, 1)),
    **dict.fromkeys(("UNARY_NEGATIVE", "UNARY_NOT", "UNARY_INVERT", "TO_BOOL", "FORMAT_SIMPLE"), (1, 1)),
}


def _names(instr: dis.Instruction) -> tuple[str, ...]:
    """Variable names of an instruction; 3.13's fused LOAD_FAST_LOAD_FAST carries two."""
    if isinstance(instr.argval, tuple):
        return tuple(str(n) for n in instr.argval)
    return (str(instr.argval),)


# -- control flow ---------------------------------------------------------------------------
@dataclass
class _Block:
    start: int
    instrs: list[dis.Instruction]
    succs: list[int] = field(default_factory=list)
    preds: list[int] = field(default_factory=list)


def _nested_code(module: types.CodeType) -> Iterator[types.CodeType]:
    """The module's code and every code object nested in it (functions, classes, comprehensions)."""
    todo = [module]
    while todo:
        code = todo.pop()
        todo.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
        yield code


@functools.lru_cache(maxsize=2048)
def _instructions(code: types.CodeType) -> tuple[dis.Instruction, ...]:
    """`dis.get_instructions(code)`, decoded once: a module's code objects are walked several
    times (names it rebinds, cells, then each function). Equal code objects (same bytes,
    constants, names and line table) have equal instructions."""
    return tuple(dis.get_instructions(code))


def _jump_target(instr: dis.Instruction) -> int | None:
    if instr.opcode not in _JUMPS:
        return None
    target = getattr(instr, "jump_target", None)
    return target if target is not None else instr.argval


def _build_blocks(instrs: list[dis.Instruction]) -> dict[int, _Block]:
    """Split at jump targets and after jumps/returns/raises. Exception-table edges are left out
    on purpose: handlers are treated as not running (see `_FunctionReader`)."""
    starts = {instrs[0].offset}
    for i, ins in enumerate(instrs):
        target = _jump_target(ins)
        if target is not None:
            starts.add(target)
        if (target is not None or ins.opname in _TERMINAL) and i + 1 < len(instrs):
            starts.add(instrs[i + 1].offset)
    blocks: dict[int, _Block] = {}
    current: _Block | None = None
    for ins in instrs:
        if ins.offset in starts:
            current = blocks[ins.offset] = _Block(ins.offset, [])
        current.instrs.append(ins)
    order = sorted(blocks)
    for pos, start in enumerate(order):
        last = blocks[start].instrs[-1]
        fallthrough = order[pos + 1] if pos + 1 < len(order) else None
        target = _jump_target(last)
        succs = [] if last.opname in _TERMINAL else [target] if last.opname in _UNCONDITIONAL else \
            [t for t in (target, fallthrough) if t is not None]
        blocks[start].succs = [s for s in dict.fromkeys(succs) if s in blocks]
    return blocks


def _link(blocks: dict[int, _Block]) -> None:
    for block in blocks.values():
        block.preds = []
    for start, block in blocks.items():
        for s in block.succs:
            blocks[s].preds.append(start)


def _add_async_for_exits(code: types.CodeType, blocks: dict[int, _Block]) -> None:
    """`async for` leaves its loop through the exception table (StopAsyncIteration lands on
    END_ASYNC_FOR); give the loop header that edge so the code after the loop is reachable."""
    starts = sorted(blocks)
    exits: dict[int, int] = {}
    for entry in getattr(dis.Bytecode(code), "exception_entries", ()):
        target = blocks.get(entry.target)
        if target is not None and target.instrs[0].opname == "END_ASYNC_FOR":
            exits[entry.target] = min(exits.get(entry.target, entry.start), entry.start)
    for target, first_covered in exits.items():
        header = max((s for s in starts if s <= first_covered), default=None)
        if header is not None and target not in blocks[header].succs:
            blocks[header].succs.append(target)


def _reachable(blocks: dict[int, _Block], entry: int) -> set[int]:
    seen, todo = {entry}, [entry]
    while todo:
        for s in blocks[todo.pop()].succs:
            if s not in seen:
                seen.add(s)
                todo.append(s)
    return seen


# -- one code object ------------------------------------------------------------------------
@dataclass
class _LoopInfo:
    id: str
    header: int
    body: set[int]
    parent: str | None = None
    depth: int = 1
    line: int | None = None
    trip: TripCount | None = None
    bindings: dict[str, _Val] = field(default_factory=dict)  # loop variable → value inside the loop


class _FunctionReader:
    """Reads one code object. A comprehension (3.11, or a 3.12+ generator expression) is read by
    a nested reader and spliced in at its call site, as 3.12 inlines list comprehensions."""

    def __init__(self, code: types.CodeType, file: str, source_lines: list[str], default_trip_count: int,
                 early_exit: str = "expected", prefix: str = "", overrides: dict[str, _Val] | None = None,
                 module: "_ModuleInfo | None" = None):
        self.code, self.file, self.lines, self.default = code, file, source_lines, default_trip_count
        self.early_exit = early_exit
        self.module = module or _NO_MODULE
        self.shadowed = self.module.shadowed  # module-level names that hide builtins of the same name
        self.prefix, self.overrides = prefix, overrides or {}
        self.instrs = list(_instructions(code))
        self.line_of = self._lines()
        nparams = code.co_argcount + code.co_kwonlyargcount
        self.parameters = list(code.co_varnames[:nparams])
        extra = bool(code.co_flags & 0x04) + bool(code.co_flags & 0x08)  # *args, **kwargs
        self.symbol_names = set(code.co_varnames[:nparams + extra])
        # A method of one of the module's classes reads its instance's attributes through `self`.
        qualname = getattr(code, "co_qualname", code.co_name).split(".")
        self.cls = qualname[0] if len(qualname) == 2 and qualname[0] in self.module.classes and nparams else None
        self.attribute_reads: dict[str, _Attribute] = {}  # self.<attr> read as a size: by symbol
        self.blocks = _build_blocks(self.instrs) if self.instrs else {}
        _add_async_for_exits(code, self.blocks)
        _link(self.blocks)
        self.entry = self.instrs[0].offset if self.instrs else 0
        self.live = _reachable(self.blocks, self.entry) if self.blocks else set()
        self.stores = self._stores()
        self.resized = self._resized()
        self.dom: dict[int, set[int]] = {}  # dominators of live blocks, set by _find_loops
        self.loops = self._find_loops()
        self.innermost = self._innermost()
        self.assumptions: list[str] = []
        self.sites: list[tuple[int | None, _Site]] = []  # calls made (comprehensions' included), by `read`
        self._memo: dict[str, _Val] = {}
        self._built: dict[str, Polynomial] = {}  # list locals built here: their length as built
        self._escaped: dict[str, list[int]] | None = None  # by `_escapes`
        self._subscripted: set[str] | None = None  # locals with an item stored or deleted, `_keeps_keys`
        self._scanning = False
        self._block_of = {ins.offset: b for b in self.live for ins in self.blocks[b].instrs}
        self._reach: dict[int, set[int]] = {}  # block → the blocks reachable from its end
        self._depth = 0

    def _lines(self) -> dict[int, int | None]:
        lines, last = {}, self.code.co_firstlineno
        for ins in self.instrs:
            pos = ins.positions
            if pos is not None and pos.lineno is not None:
                last = pos.lineno
            lines[ins.offset] = last
        return lines

    def _stores(self) -> dict[str, list[tuple[int, int]]]:
        """Every (block, index) that writes each local; nested functions' nonlocal writes count."""
        stores: dict[str, list[tuple[int, int]]] = {}
        for start, block in self.blocks.items():
            for i, ins in enumerate(block.instrs):
                if ins.opname in _STORES:
                    stores.setdefault(_names(ins)[0], []).append((start, i))
                elif ins.opname == "STORE_FAST_LOAD_FAST":
                    stores.setdefault(_names(ins)[0], []).append((start, i))
                elif ins.opname == "STORE_FAST_STORE_FAST":
                    for n in _names(ins):
                        stores.setdefault(n, []).append((start, i))
        for name in _nonlocal_writes(self.code):
            stores.setdefault(name, []).append((-1, -1))
        return stores

    def _resized(self) -> set[str]:
        """Locals whose container this function grows or shrinks in place (``a.append(x)``,
        ``a.pop()``): the length they were built with no longer holds (`_grown` may count it)."""
        out: set[str] = set()
        self.appends: dict[str, list[int]] = {}  # local → offsets of its `.append` loads
        for prev, ins in zip(self.instrs, self.instrs[1:]):
            if prev.opname in ("LOAD_FAST", "LOAD_DEREF", "LOAD_FAST_CHECK", "LOAD_FAST_BORROW") and (
                    (ins.opname in ("LOAD_METHOD", "LOAD_ATTR") and str(ins.argval) in _RESIZING)):
                name = _names(prev)[-1]
                out.add(name)
                self.appends.setdefault(name, []).append(ins.offset if str(ins.argval) == "append" else -1)
        return out

    def _grown(self, name: str, store: tuple[int, int], start: Polynomial, read: int,
               at: int | None) -> Polynomial | None:
        """The length of a list local built here (``out = []``, one store, of ``start`` items)
        that only ``out.append(…)`` grows, as read in block ``read``: ``start`` plus the times
        each append runs per run of the store, the product of the trip counts of the loops around
        the append that are not around the store (``for x in xs: out.append(x)``: len(xs)). An
        append under a branch is counted as made: an upper bound. None when something else may
        resize it (another method, a callee it is handed to before its last read, a closure), a
        loop around an append has no count yet or one that varies with an outer loop's index, or
        the read (at offset ``at``) is inside a loop that is still growing it."""
        offsets = self.appends.get(name, [])
        if -1 in offsets or name not in self.code.co_varnames or name in self.code.co_cellvars:
            return None
        block_of = self._block_of
        outer = {lp.id for lp in self._enclosing(store[0])}
        reading = {lp.id for lp in self._enclosing(read)}
        total = start
        for offset in offsets:
            if offset not in block_of:
                continue  # in code that never runs
            times = Polynomial.constant(1)
            for loop in self._enclosing(block_of[offset]):
                if loop.id in outer:
                    continue
                if loop.id in reading or loop.trip is None or loop.trip.kind == "unknown" or any(
                        s.startswith("@") for s in loop.trip.iterations.symbols):
                    return None
                times = times * loop.trip.iterations
            total = total + times
        # Handed to a call as an argument, the callee may grow it: what is read after that call
        # (or in a loop around it, on the next pass) is not known; what is read before, is.
        for call in self._escapes().get(name, ()):
            if at is None or at > call or call not in block_of or \
                    (reading & {lp.id for lp in self._enclosing(block_of[call])}) - outer:
                return None
        return total

    def _keeps_keys(self, name: str) -> bool:
        """Whether a dict local keeps the keys it was built with: no item stored or deleted on a
        line that reads it (``d[k] = v`` adds a key), not handed to a call that might, no resizing
        method (`_RESIZING`, in `resized`)."""
        if self._subscripted is None:
            self._subscripted, line, names = set(), None, []
            for ins in self.instrs:
                if ins.positions is not None and ins.positions.lineno is not None and ins.positions.lineno != line:
                    line, names = ins.positions.lineno, []
                if ins.opname in ("LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_DEREF"):
                    names.append(str(ins.argval))
                elif ins.opname in ("STORE_SUBSCR", "DELETE_SUBSCR", "STORE_SLICE", "DELETE_SLICE"):
                    self._subscripted.update(names)
        return name not in self._subscripted and name not in self.resized and not self._scanning \
            and name not in self._escapes() and name not in self.code.co_cellvars

    def _escapes(self) -> dict[str, list[int]]:
        """Local → offsets of the calls it is handed to as an argument, but for builtins that only
        read a sequence (`_READS_SEQUENCE`, ``sep.join``). Scanned once, with lengths of grown
        lists left out (they are what this decides)."""
        if self._escaped is None:
            self._escaped, self._scanning = {}, True
            saved = dict(self._memo)  # values read while scanning leave grown lengths out: not kept
            try:
                for start in sorted(self.live):
                    _, facts = self._simulate(start)
                    for offset, fact in facts.items():
                        site = fact[5] if fact and fact[0] == "call" and len(fact) > 5 else None
                        if not isinstance(site, _Site) or (site.func.attr == "join" and site.func.owner is not None) or (
                                site.func.is_global and site.this is None and site.func.name in _READS_SEQUENCE
                                and site.func.name not in self.shadowed):
                            continue
                        for arg in site.args:
                            if arg.var is not None:
                                self._escaped.setdefault(arg.var, []).append(offset)
            finally:
                self._scanning = False
                self._memo = saved
        return self._escaped

    def _find_loops(self) -> dict[str, _LoopInfo]:
        if not self.blocks:
            return {}
        dom = self.dom = dominator_sets(immediate_dominators(self.entry, lambda b: self.blocks[b].succs))
        bodies: dict[int, set[int]] = {}
        for start in self.live:
            last = self.blocks[start].instrs[-1]
            target = _jump_target(last)
            # JUMP_BACKWARD_NO_INTERRUPT is the send loop of await/yield from, not a user loop.
            if (target is None or target > last.offset or target not in dom[start]
                    or last.opname == "JUMP_BACKWARD_NO_INTERRUPT"):
                continue
            body, todo = bodies.setdefault(target, {target}), [start]
            while todo:
                b = todo.pop()
                if b not in body:
                    body.add(b)
                    todo.extend(p for p in self.blocks[b].preds if p in self.live)
        loops = {f"{self.prefix}L{h}": _LoopInfo(f"{self.prefix}L{h}", h, bodies[h]) for h in sorted(bodies)}
        for loop in loops.values():
            enclosing = [o for o in loops.values() if o is not loop and loop.header in o.body]
            if enclosing:
                parent = min(enclosing, key=lambda o: len(o.body))
                loop.parent, loop.depth = parent.id, len(enclosing) + 1
            lines = [self.line_of[i.offset] for b in loop.body for i in self.blocks[b].instrs
                     if i.positions is not None and i.positions.lineno is not None]
            loop.line = min(lines) if lines else self.line_of[self.blocks[loop.header].instrs[0].offset]
        return loops

    def _innermost(self) -> dict[int, _LoopInfo | None]:
        out: dict[int, _LoopInfo | None] = {}
        for b in self.live:
            containing = [lp for lp in self.loops.values() if b in lp.body]
            out[b] = max(containing, key=lambda lp: lp.depth) if containing else None
        return out

    def _enclosing(self, block: int) -> list[_LoopInfo]:
        loop, out = self.innermost.get(block), []
        while loop is not None:
            out.append(loop)
            loop = self.loops.get(loop.parent) if loop.parent else None
        return out

    # -- values of variables --------------------------------------------------------------
    def _lookup(self, name: str, block: int, at: int | None = None) -> _Val:
        loops = self._enclosing(block)
        for loop in loops:
            if name in loop.bindings:
                return loop.bindings[name]
        if name in self.overrides and name not in self.stores:
            return replace(self.overrides[name], base=None, shift=None)
        sites = self.stores.get(name, [])
        if name in self.symbol_names and (not sites or self._before_any_store(sites, block, at)):
            is_param = name in self.parameters
            return _Val(poly=Polynomial.symbol(name) if is_param else None, seq=name, name=name)
        if len(sites) == 1 and sites[0][0] in self.live and (
                name not in self.symbol_names or self._after_the_store(sites[0], block, at)):
            value = self._single_store(name, *sites[0])
            visible = {f"@{lp.id}" for lp in loops}
            if {s for p in _polys(value) for s in p.symbols if s.startswith("@")} <= visible:
                # An unknown value it was computed from may have changed since: no base carried over.
                built = self._built.get(name)
                if built is not None and value.container == "list" and not self._scanning:
                    grown = self._grown(name, sites[0], built, block, at)
                    if grown is not None and name in self.appends:
                        note = f"{name} holds at most {grown} items: its {len(self.appends[name])} append(s) counted"
                        value = replace(value, length=grown, notes=value.notes + (note,))
                    elif grown is not None:
                        value = replace(value, length=grown)
                return replace(value, name=name, direct=True, base=None, shift=None)
        return _Val(name=name, direct=name not in self.symbol_names)

    def _before_any_store(self, sites: list[tuple[int, int]], block: int, at: int | None) -> bool:
        """Whether a parameter read at ``at`` in ``block`` still holds the value the call passed:
        no store to it can run before the read (``xs = [x for x in xs if x]`` reads the argument)."""
        if at is None or any(b not in self.live for b, _ in sites):
            return False  # a nested function's nonlocal write (-1), or a position not given
        for b, i in sites:
            if block in self._reached_from(b) or (b == block and self.blocks[b].instrs[i].offset < at):
                return False
        return True

    def _after_the_store(self, site: tuple[int, int], block: int, at: int | None) -> bool:
        """Whether a parameter's one store runs on every path to a read at ``at`` in ``block``
        (it dominates the read): the read sees what it stored, not the argument."""
        b, i = site
        if at is None or block not in self.dom:
            return False
        return self.blocks[b].instrs[i].offset < at if b == block else b in self.dom[block]

    def _reached_from(self, start: int) -> set[int]:
        """The blocks a path from the end of ``start`` reaches (``start`` itself only round a loop)."""
        if start not in self._reach:
            seen: set[int] = set()
            todo = list(self.blocks[start].succs)
            while todo:
                b = todo.pop()
                if b not in seen and b in self.blocks:
                    seen.add(b)
                    todo.extend(self.blocks[b].succs)
            self._reach[start] = seen
        return self._reach[start]

    def _attribute(self, base: _Val, attr: str) -> _Val | None:
        """``self.attr`` in a method, when __init__ binds it once (`_ModuleInfo.attribute`)."""
        this = self.parameters[0] if self.cls is not None else None
        if this is None or base.var != this or this in self.stores:
            return None
        found = self.module.attribute(self.cls, attr)
        if found is None:
            return None
        value = found.value()
        if value.seq is not None or value.poly is not None and value.poly.symbols:
            self.attribute_reads[found.symbol] = found
        return value

    def _single_store(self, name: str, block: int, index: int) -> _Val:
        """A local assigned once (``m = n * 2``) is that value wherever it is read."""
        if name not in self._memo:
            self._memo[name] = _UNKNOWN  # guards cycles; the depth cap guards long chains
            ins = self.blocks[block].instrs[index]
            if ins.opname in ("STORE_FAST", "STORE_DEREF") and self._depth < _MAX_CHAIN:
                self._depth += 1
                try:
                    stack, _ = self._simulate(block, index)
                finally:
                    self._depth -= 1
                value = stack[-1] if stack else _UNKNOWN
                if value.container == "list" and value.length is not None:
                    self._built[name] = value.length  # what `_grown` adds the appends to
                # A range or an iterator kept in a local (`r = range(n)`; `for i in r`) is that
                # range; loop indices it mentions are checked by `_lookup`.
                self._memo[name] = _Val(poly=value.poly, seq=value.seq, notes=value.notes,
                                        from_global=value.from_global or value.is_global,
                                        container=value.container, rng=value.rng,
                                        length=None if name in self.resized or name in self._built or (
                                            value.container == "dict" and not self._keeps_keys(name))
                                        else value.length,
                                        iter=value.iter, items=value.items, is_str=value.is_str)
        return self._memo[name]

    def _divisor_kind(self, divisor: _Val, block: int) -> str:
        """What the division advice needs: constant / power-of-two / loop-invariant / variant."""
        value = divisor.poly.constant_value() if divisor.poly is not None else None
        if value is not None:
            whole = value.denominator == 1 and value > 0
            return "power-of-two" if whole and (value.numerator & (value.numerator - 1)) == 0 else "constant"
        loop = self.innermost.get(block)
        if loop is None:
            return "loop-invariant"
        if divisor.poly is not None:  # parameters and outer indices are fixed within this loop
            return "variant" if f"@{loop.id}" in divisor.poly.symbols else "loop-invariant"
        if divisor.var is None:
            return "variant"  # an expression we cannot see through
        written = any(b in loop.body or b == -1 for b, _ in self.stores.get(divisor.var, []))
        return "variant" if written else "loop-invariant"

    # -- work inside builtins ---------------------------------------------------------------
    def _call_work(self, func: _Val, args: list[_Val], builtin: bool) -> _Work | _FixedWork | None:
        """A call to a builtin (not shadowed in the module) or to a common method, whose work
        grows with its argument's length, or a builtin whose fixed work per call is large
        (`_FIXED_WORK`); None for anything else."""
        if builtin:
            fixed = _FIXED_WORK.get(func.name or "")
            if fixed is not None and len(args) >= fixed.fewest_args:  # a measured price, not an assumption
                return fixed
            spec = _BUILTIN_WORK.get(func.name or "")
            if spec is None or len(args) != 1:  # min(a, b): two values, not a sequence
                return None
            return _make_work(spec, f"{func.name}({_label(args[0])})", args[0], self.default, self.early_exit,
                              assumed_type=False)
        owner, spec = func.owner, _METHOD_WORK.get(func.attr or "")
        if owner is None or spec is None or func.from_global or owner.is_global:
            return None  # a module's function (os.path.join), not a method of a value
        if f".{func.attr}" in self.shadowed and not owner.is_str:
            return None  # the module defines a method of that name: most likely the one called
        if owner.is_str and spec.owner_type != "str":
            spec = replace(_STR_METHOD, early_exit=spec.early_exit)  # "abc".count(x): a string search
        known = (owner.is_str and spec.owner_type == "str") or owner.container == spec.owner_type \
            or (owner.container == "tuple" and spec.cls == "py.work.scan")
        if spec.known_owner and not known:
            return None  # d.pop(k), s.remove(x): O(1) on a dict or a set, the likelier owners
        if func.attr == "pop" and (not args or (args[0].poly is not None and args[0].poly.constant_value() == -1)):
            return None  # pop() and pop(-1) take the last item: O(1)
        sized = owner if spec.sized_by == "self" else (args[0] if args else None)
        label = f"{_label(owner)}.{func.attr}({', '.join(_label(a) for a in args)})"
        return _make_work(spec, label, sized, self.default, self.early_exit, assumed_type=not known)

    def _returned(self, name: str, args: list[_Val]) -> _Val:
        """What a call of the module's function ``name`` returns, when every ``return`` of it
        gives a sequence of the same length over its parameters (`_ModuleInfo.returns`): that
        length with this call's arguments in (``make(n)`` of ``return [0] * n``: n items)."""
        found = self.module.returns(name)
        if found is None:
            return _UNKNOWN
        params, value = found
        if len(args) != len(params):
            return _UNKNOWN  # a default or *args stands in: not followed
        length = value.length
        for param, arg in zip(params, args):
            if Polynomial.symbol(param).symbols & length.symbols:
                if arg.poly is None:
                    return _UNKNOWN
                length = length.substitute(param, arg.poly)
            if f"len({param})" in length.symbols:
                size = _length(arg)
                if size is None or size[1] == "unknown":
                    return _UNKNOWN
                length = length.substitute(f"len({param})", size[0])
        note = f"{name}(…) returns {length} items (every return of it gives {value.length})"
        return _Val(container=value.container, is_str=value.is_str, length=length,
                    notes=_notes(*args) + value.notes + (note,))

    def _new_instance(self, name: str, line: int | None) -> _Work:
        """Calling a class of this module: type.__call__ allocates the instance and calls
        ``__init__`` from C (3.11 inlines only Python-to-Python calls): one py.work.new."""
        note = (f"{name}(…) creates an instance: allocation and the call of {name}.__init__ from C costed as "
                "1 × py.work.new")
        return _Work(f"{name}(…)", "py.work.new", TripCount("constant", Polynomial.constant(1), "one instance"),
                     (note,))

    def _contains_work(self, container: _Val, line: int | None) -> _Work | None:
        """``x in seq`` scans a list or tuple built here; a value of unknown type is taken as a
        hash container (O(1) on average) and, when it has a size, that is said."""
        if container.container in ("list", "tuple"):
            return _make_work(_SCAN, f"x in {_label(container)}", container, self.default, self.early_exit,
                              assumed_type=False)
        if container.seq is not None:
            self.assumptions.append(f"line {line}: `in {container.seq}`: the type of {container.seq} is not "
                                    f"known; taken as a set or dict (O(1) on average), a list would cost "
                                    f"O(len({container.seq}))")
        return None

    def _slice_work(self, container: _Val, start: _Val, stop: _Val) -> tuple[_Work, _Val]:
        """``a[i:j]`` copies j − i items (TimeComplexity: get slice O(k)); the work, and the
        slice itself (a sequence of that length, of its container's type)."""
        size = _length(container)
        whole = size[0] if size is not None else None

        def bound(v: _Val, default: Polynomial | None) -> Polynomial | None:
            if v.is_none:
                return default
            value = v.poly.constant_value() if v.poly is not None else None
            if value is not None and value < 0:  # counted from the end
                return whole + value if whole is not None else None
            return v.poly

        lo, hi = bound(start, Polynomial.constant(0)), bound(stop, whole)
        if start.base is not None and start.base == stop.base:  # a[i:i + k] over an i not known here
            lo, hi = start.shift, stop.shift
        label = f"{_label(container)}[{'' if start.is_none else _label(start) if start.poly is None else start.poly}:" \
                f"{'' if stop.is_none else _label(stop) if stop.poly is None else stop.poly}]"
        if lo is not None and hi is not None:
            k = hi - lo
            value = k.constant_value()
            if value is not None and value < 0:
                k = Polynomial.constant(0)
            named = Polynomial.symbol(f"len({label})") if _is_difference(k) else k
            sized = _Val(length=named, notes=((f"{k} items taken as one size, len({label})",)
                                              if named is not k else ()))
        else:
            sized = container  # a bound the reader cannot see: at most the whole sequence
        work = _make_work(_SLICE, label, sized, self.default, self.early_exit, assumed_type=False)
        size = _length(sized)
        value = _Val(container=container.container, is_str=container.is_str,
                     length=size[0] if size is not None and size[1] != "unknown" else None,
                     notes=size[2] if size is not None else ())
        return work, value

    # -- the block-local stack interpreter --------------------------------------------------
    def _simulate(self, block: int, upto: int | None = None) -> tuple[list[_Val], dict[int, tuple]]:
        """Run the abstract stack over a block (up to instruction ``upto``, exclusive). Returns the
        final stack (bottomless: entries below it are unknown) and facts per instruction offset:
        ("call", callee, code, iterator) for calls, ("str%", units) for string formatting."""
        stack: list[_Val] = []
        facts: dict[int, tuple] = {}

        def pop(k: int = 1) -> list[_Val]:
            out = [stack.pop() if stack else _UNKNOWN for _ in range(k)]
            return out[::-1]

        kw_pending: tuple[str, ...] | None = None  # 3.11's KW_NAMES: the next call's keyword names
        writes: dict[str, int] = {}  # stores to each local so far in this block: its unknown value's version
        for ins in self.blocks[block].instrs[:upto]:
            op = ins.opname
            if op in ("RESUME", "NOP", "PRECALL", "EXTENDED_ARG", "CACHE", "MAKE_CELL",
                      "COPY_FREE_VARS"):
                continue
            if op in _STORES or op.startswith("STORE_FAST"):
                for n in _names(ins):
                    writes[n] = writes.get(n, 0) + 1
            if op in ("LOAD_CONST", "LOAD_SMALL_INT"):
                stack.append(_const_value(ins.argval))
            elif op in ("LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_BORROW", "LOAD_DEREF",
                        "LOAD_FAST_LOAD_FAST", "LOAD_FAST_BORROW_LOAD_FAST_BORROW"):
                stack.extend(_unknown_base(replace(self._lookup(n, block, ins.offset), var=n),
                                           f"{n}#{writes.get(n, 0)}@{block}")
                             for n in _names(ins))
            elif op == "STORE_FAST_LOAD_FAST":
                pop()
                stack.append(replace(self._lookup(_names(ins)[1], block), var=_names(ins)[1]))
            elif op in ("LOAD_GLOBAL", "LOAD_NAME"):
                name = ins.argrepr.replace("NULL + ", "").replace(" + NULL", "")
                known = self.module.constant(name)
                value = replace(known, name=name, direct=True) if known is not None else \
                    _Val(name=name, direct=True, is_global=True)
                if ins.argrepr.startswith("NULL + "):
                    stack.extend((_NULL, value))
                elif ins.argrepr.endswith(" + NULL"):
                    stack.extend((value, _NULL))
                else:
                    stack.append(value)
            elif op in ("LOAD_ATTR", "LOAD_METHOD"):
                base = pop()[0]
                attr = str(ins.argval)
                owner = base.name or ("str" if base.is_str else None)
                value = _Val(name=f"{owner}.{attr}" if owner else attr, direct=True, owner=base, attr=attr,
                             from_global=base.is_global or base.from_global)
                bound = self._attribute(base, attr)
                if bound is None and not value.from_global and op == "LOAD_ATTR" and "NULL|self" not in ins.argrepr:
                    bound = self.module.collection(attr)
                if bound is not None:
                    value = replace(bound, name=value.name, direct=True, owner=base, attr=attr)
                is_method = op == "LOAD_METHOD" or ("NULL|self" in ins.argrepr)
                stack.extend((value, value) if is_method else (value,))
            elif op == "PUSH_NULL":
                stack.append(_NULL)
            elif op in ("IMPORT_NAME", "IMPORT_FROM"):  # a module (or its member), never a sized value
                pop(2 if op == "IMPORT_NAME" else 0)
                stack.append(_Val(name=str(ins.argval), from_global=True))
            elif op in ("LOAD_FAST_AND_CLEAR", "LOAD_CLOSURE", "LOAD_ASSERTION_ERROR", "LOAD_BUILD_CLASS"):
                stack.append(_UNKNOWN)
            elif op in _POPS_PUSHES:
                pops, pushes = _POPS_PUSHES[op]
                operand = pop(pops)
                if op == "COMPARE_OP" and all(v.poly is not None for v in operand):
                    facts[ins.offset] = ("sizes",)  # `i < n`: decided by sizes the trip counts settle
                if op == "UNARY_NEGATIVE" and operand[0].poly is not None:
                    stack.append(_Val(poly=-operand[0].poly, notes=operand[0].notes))
                else:
                    stack.extend([_UNKNOWN] * pushes)
            elif op == "POP_TOP":
                pop()
            elif op == "COPY":
                while len(stack) < ins.arg:
                    stack.insert(0, _UNKNOWN)
                stack.append(stack[-ins.arg])
            elif op == "SWAP":
                while len(stack) < ins.arg:
                    stack.insert(0, _UNKNOWN)
                stack[-1], stack[-ins.arg] = stack[-ins.arg], stack[-1]
            elif op == "BINARY_OP":
                a, b = pop(2)
                symbol = ins.argrepr.strip()
                if a.is_str and symbol in ("%", "%="):
                    facts[ins.offset] = ("str%", _printf_units(a))
                elif _BINARY_CLASS.get(symbol) == "py.binary_div":
                    facts[ins.offset] = ("div", self._divisor_kind(b, block))
                elif symbol in ("+", "+=") and a.container in ("list", "tuple") and b.container == a.container \
                        and a.length is not None and b.length is not None:
                    joined = _Val(container=a.container, length=a.length + b.length, notes=_notes(a, b))
                    facts[ins.offset] = ("work", _make_work(_CONCAT, f"{_label(a)} + {_label(b)}", joined,
                                                            self.default, self.early_exit, assumed_type=False))
                    stack.append(joined)
                    continue
                elif symbol in ("*", "*=") and (_flat(a) or _flat(b)) and (a.poly or b.poly) is not None:
                    seq, times = (a, b) if _flat(a) else (b, a)
                    repeated = _Val(container=seq.container, is_str=seq.is_str, item_bytes=seq.item_bytes,
                                    length=seq.length * times.poly, notes=_notes(seq, times))
                    made = _Val(length=repeated.length * seq.item_bytes, notes=repeated.notes)
                    facts[ins.offset] = ("work", _make_work(_FILL, f"{_label(seq)} * {times.poly}", made,
                                                            self.default, self.early_exit, assumed_type=False))
                    stack.append(repeated)
                    continue
                elif symbol == "*" and (a.container or b.container) and (a.poly or b.poly) is not None:
                    seq, times = (a, b) if a.container else (b, a)
                    if seq.length is not None and times.poly is not None:
                        repeated = _Val(container=seq.container, length=seq.length * times.poly,
                                        notes=_notes(seq, times))
                        facts[ins.offset] = ("work", _make_work(_REPEAT, f"{_label(seq)} * {times.poly}", repeated,
                                                                self.default, self.early_exit, assumed_type=False))
                        stack.append(repeated)
                        continue
                stack.append(_binary(symbol, a, b))
            elif op == "GET_ITER":
                it = _get_iter(pop()[0])
                stack.append(_Val(iter=it) if it is not None else _UNKNOWN)
            elif op == "MAKE_FUNCTION":
                flags = ins.arg or 0
                code = pop()[0]
                pop(bin(flags & 0xF).count("1"))
                stack.append(_Val(code=code.code))
            elif op == "SET_FUNCTION_ATTRIBUTE":
                func, _ = pop()[0], pop()
                stack.append(func)
            elif op in ("CALL", "CALL_KW"):
                keywords = kw_pending is not None or op == "CALL_KW"
                kw_names, kw_pending = kw_pending, None
                if op == "CALL_KW":
                    pop()  # the tuple of keyword names
                args = pop(ins.arg or 0)
                # Below the arguments: [NULL, callable] or [callable, self] (3.11, 3.12), or
                # [callable, NULL|self] (3.13+); comprehensions are called as [function, iterator].
                a, b = pop(2)
                func, this = (b, None) if a.is_null else (a, None) if b.is_null else (a, b)
                if func.code is not None and func.code.co_name in COMPREHENSIONS and this is not None:
                    facts[ins.offset] = ("call", func.code.co_qualname, func.code, this, None)
                    made = _comprehension_value(func.code, this)
                    stack.append(replace(made, made_at=ins.offset) if func.code.co_name == "<genexpr>" else made)
                    continue
                builtin = func.is_global and this is None and not keywords and func.name not in self.shadowed
                if builtin and func.name in _STOPS_EARLY and len(args) == 1 and args[0].made_at in facts:
                    # any(x.ok for x in xs): the generator runs only until the answer is known
                    made = facts[args[0].made_at]
                    facts[args[0].made_at] = made[:4] + (None, func.name)
                work = self._call_work(func, args, builtin)
                site = _Site(func, this, tuple(args), kw_names) if op == "CALL" else None  # 3.13's CALL_KW: names unread
                if work is None and func.is_global and this is None and func.name in self.module.classes:
                    work = self._new_instance(func.name, self.line_of[ins.offset])
                facts[ins.offset] = ("call", func.name if func.direct else None, None, None, work, site)
                if func.attr in ("keys", "values", "items") and not args and func.owner is not None \
                        and func.owner.container == "dict" and func.owner.length is not None:
                    stack.append(_Val(length=func.owner.length, notes=func.owner.notes))  # a view: as many items
                    continue
                if not builtin and not args and func.is_global and this is None and func.name in self.module.lists:
                    stack.append(_Val(container="list", length=Polynomial.constant(0)))  # a list subclass, empty
                    continue
                if self.module.is_array(func) and args and args[0].text:
                    stack.append(_array_value(args))
                    continue
                if not builtin and not keywords and func.is_global and this is None and func.name \
                        and "." not in func.name and func.name not in self.module.classes:
                    stack.append(self._returned(func.name, args))
                    continue
                stack.append(_call_builtin(func.name, args) if builtin else _UNKNOWN)
            elif op == "CONTAINS_OP":
                _, container = pop(2)
                stack.append(_UNKNOWN)
                work = self._contains_work(container, self.line_of[ins.offset])
                if work is not None:
                    facts[ins.offset] = ("work", work)
            elif op == "BUILD_SLICE" and ins.arg in (2, 3):
                bounds = pop(ins.arg)
                unit_step = ins.arg == 2 or bounds[2].is_none or bounds[2].poly == Polynomial.constant(1)
                stack.append(_Val(bounds=(bounds[0], bounds[1])) if unit_step else _UNKNOWN)
            elif op == "BINARY_SUBSCR" or op == "BINARY_SLICE":
                if op == "BINARY_SLICE":
                    container, start, stop = pop(3)
                    key = _Val(bounds=(start, stop))
                else:
                    container, key = pop(2)
                if key.bounds is not None:
                    work, value = self._slice_work(container, *key.bounds)
                    facts[ins.offset] = ("work", work)
                    stack.append(value)
                else:
                    stack.append(_UNKNOWN)
            elif op == "LIST_EXTEND" and len(stack) > ins.arg:
                extra = pop()[0]
                target = stack[-ins.arg]
                more = _length(extra)
                grown = target.length + more[0] if target.length is not None and more is not None else None
                stack[-ins.arg] = _Val(container=target.container, length=grown) if grown is not None else _UNKNOWN
            elif op == "LIST_TO_TUPLE":
                value = pop()[0]
                stack.append(replace(value, container="tuple") if value.container else _UNKNOWN)
            elif op == "KW_NAMES":
                names = self.code.co_consts[ins.arg] if ins.arg is not None and ins.arg < len(self.code.co_consts) else ()
                kw_pending = tuple(str(n) for n in names) if isinstance(names, tuple) else ()
            elif op in ("BUILD_LIST", "BUILD_TUPLE"):
                pop(ins.arg or 0)
                stack.append(_Val(container="list" if op == "BUILD_LIST" else "tuple",
                                  length=Polynomial.constant(ins.arg or 0)))
            elif op in ("BUILD_MAP", "BUILD_CONST_KEY_MAP"):
                # A dict literal: its keys (a module constant when never resized; a local while
                # nothing adds keys to it, `_single_store`).
                pop((ins.arg or 0) * (2 if op == "BUILD_MAP" else 1) + (op == "BUILD_CONST_KEY_MAP"))
                stack.append(_Val(container="dict", length=Polynomial.constant(ins.arg or 0)))
            elif op in ("BUILD_SET", "BUILD_STRING", "BUILD_SLICE", "BUILD_MAP", "BUILD_CONST_KEY_MAP"):
                pop((ins.arg or 0) * (2 if op == "BUILD_MAP" else 1) + (op == "BUILD_CONST_KEY_MAP"))
                stack.append(_UNKNOWN)
            elif op == "UNPACK_SEQUENCE":
                value = pop()[0]
                n = ins.arg or 0
                if value.items is not None and len(value.items) == n:
                    stack.extend(reversed(value.items))
                else:
                    stack.extend([_UNKNOWN] * n)
            else:
                # Unmodelled: forget everything, so nothing wrong is ever inferred past it.
                if classify(ins) == "py.call":
                    facts[ins.offset] = ("call", None, None, None, None)
                stack.clear()
        return stack, facts

    # -- loops and trip counts ----------------------------------------------------------------
    def _line_text(self, line: int | None) -> str:
        if line is None or not 0 < line <= len(self.lines):
            return ""
        return self.lines[line - 1].strip()

    def _analyse_loops(self) -> None:
        for loop in sorted(self.loops.values(), key=lambda lp: lp.depth):
            self._memo.clear()  # single-store values may depend on bindings made since
            header = self.blocks[loop.header]
            it: _Iter | None = None
            # A long body's FOR_ITER carries an EXTENDED_ARG prefix, the header's first instruction.
            opener = next((i.opname for i in header.instrs if i.opname != "EXTENDED_ARG"), "")
            if opener == "FOR_ITER":
                outside = [p for p in header.preds if p in self.live and p not in loop.body]
                if len(outside) == 1:
                    stack, _ = self._simulate(outside[0])
                    it = stack[-1].iter if stack else None
            text = self._line_text(loop.line)
            where = f"loop at line {loop.line}"
            if it is None and opener != "FOR_ITER":
                found = self._log_trip(loop, text)
                if found is not None:
                    loop.trip, how = found
                    self.assumptions.append(f"{where}: {how}")
                    continue
            if it is None:
                loop.trip, how = self._unknown_trip(loop, text)
                self.assumptions.append(f"{where}: {how}")
                continue
            loop.trip = TripCount(it.kind, it.trips, text)
            self.assumptions.extend(f"{where}: {note}" for note in it.notes)
            if self._leaves_early(loop):
                loop.trip, how = early_exit_trip(it.trips, self.early_exit, text)
                self.assumptions.append(f"{where}: a break or return can leave it early; {how}")
            loop.bindings = self._bind_loop_target(loop, it)

    def _log_trip(self, loop: _LoopInfo, text: str) -> tuple[TripCount, str] | None:
        """A ``while`` loop whose only exits test one variable that each iteration divides
        (``//=``, ``/=``, ``>>=`` by a constant) until a small bound, or multiplies (``*=``,
        ``<<=``) until a bound: log_c(start) or log_c(bound) iterations, as the C reader's rule."""
        tests, returns = [], False
        for b in loop.body:
            for succ in self.blocks[b].succs:
                if succ not in loop.body:
                    test = self._exit_test(b, loop)
                    if test is None and self.blocks[succ].instrs[-1].opname in _TERMINAL \
                            and len(self.blocks[succ].preds) == 1:
                        # `if found: return i` leaves early (counted loops only); an arm that
                        # raises is an error path, taken as not taken (as `_leaves_early` does)
                        returns = returns or self.blocks[succ].instrs[-1].opname in ("RETURN_VALUE", "RETURN_CONST")
                        continue
                    if test is None:
                        return None
                    tests.append(test)
        if not tests or len({(v, op, str(o.poly)) for v, op, o, _ in tests}) != 1:
            return None
        var, op, other, exit_block = tests[0]
        step = self._log_step(var, loop, [b for _, _, _, b in tests])
        if step is None or other.poly is None:
            return None
        symbol, factor, shrinks = step
        if symbol in ("+", "-"):
            return self._linear_trip(loop, text, var, op, other, symbol, factor, returns)
        if returns:
            return None
        bits = math.log2(factor) if symbol in ("//", "/", "*") else factor
        if bits <= 0 or (shrinks and op not in (">", ">=", "!=")) or (not shrinks and op not in ("<", "<=")):
            return None
        start = self._start_value(var, loop)
        if start is None or start.poly is None:
            return None
        sign = {"//": "divided by", "/": "divided by", ">>": "shifted right by", "*": "multiplied by",
                "<<": "shifted left by"}[symbol]
        how = f"{var} is {sign} {factor} each iteration while {var} {op} {other.poly}"
        first, bound = (start.poly, other.poly) if shrinks else (other.poly, start.poly)
        exact = self._run_constant(start.poly, other.poly, op, symbol, factor)
        if exact is not None:
            return TripCount("constant", Polynomial.constant(exact), text), f"{how}: {exact} iterations"
        low = bound.constant_value()
        if low is None or (not shrinks and low <= 0) or (symbol == "/" and low <= 0):
            return None  # growing from 0 never ends; a float halved towards 0 takes ~1075 steps
        size = _log2_of(first)
        if size is None:
            return None
        # log_c(first / bound) iterations; one more when the test admits equality (or tests != 0).
        extra = 1 if op in (">=", "<=") or low == 0 else 0
        offset = Fraction(-math.log2(max(float(low), 1.0))).limit_denominator(1000) + size[1]
        iterations = (Polynomial.symbol(size[0]) + offset) * Fraction(1 / bits).limit_denominator(1000) + extra
        return TripCount("bounded", iterations, text), f"{how}; trip count taken as {iterations}"

    def _linear_trip(self, loop: _LoopInfo, text: str, var: str, op: str, other: _Val, symbol: str,
                     step: Fraction, returns: bool) -> tuple[TripCount, str] | None:
        """A ``while`` loop whose only test compares a counter that each iteration moves by a
        constant (``while i < n: … i += 1``; ``while k: … k -= 1``) with a bound the loop does not
        change: (bound − start)/step iterations (one more when the test admits equality), the
        induction variable C's ScalarEvolution counts; a ``break`` or ``return`` can leave it
        earlier, as a ``for`` loop's (``returns``: its body has a ``return``; a ``break`` is not
        followed, `_log_trip` gives up on exits it cannot read)."""
        grows = symbol == "+"
        if (grows and op not in ("<", "<=", "!=")) or (not grows and op not in (">", ">=", "!=")) \
                or (op == "!=" and step != 1) or other.poly is None:
            return None
        if any(s.startswith("len(") and s[4:-1] in self.resized for s in other.poly.symbols):
            return None  # `while i < len(todo)` over a list the loop may grow
        start = self._start_value(var, loop)
        if start is None or start.poly is None:
            return None
        sign = "increased" if grows else "decreased"
        how = f"{var} is {sign} by {step} each iteration while {var} {op} {other.poly}"
        span = other.poly - start.poly if grows else start.poly - other.poly
        value = span.constant_value()
        if value is not None:  # both ends known: the exact count, by the arithmetic of the test
            if op == "!=" and value < 0:
                return None  # moving away from its bound: it never meets it
            exact = max(0, math.floor(value / step) + 1 if op in ("<=", ">=") else math.ceil(value / step))
            trip, how = TripCount("constant", Polynomial.constant(exact), text), f"{how}: {exact} iterations"
        else:
            iterations = span * (1 / step) + (1 if op in ("<=", ">=") else 0)
            trip, how = TripCount("bounded", iterations, text), f"{how}; trip count taken as {iterations}"
        if returns:
            trip, more = early_exit_trip(trip.iterations, self.early_exit, text)
            how += f"; a return can leave it early; {more}"
        return trip, how

    def _exit_test(self, block: int, loop: _LoopInfo) -> tuple[str, str, _Val, int] | None:
        """(variable, comparison that keeps the loop going, the other operand, block) for a block
        that leaves the loop on a test of one local: ``v > 1``, ``1 < v``, ``v`` (≠ 0)."""
        instrs = self.blocks[block].instrs
        last = instrs[-1]
        if not last.opname.startswith("POP_JUMP") or "NONE" in last.opname:
            return None
        stays_if_true = (_jump_target(last) in loop.body) == ("TRUE" in last.opname)
        k = len(instrs) - 2
        while k >= 0 and instrs[k].opname in ("TO_BOOL", "NOP", "CACHE", "EXTENDED_ARG"):
            k -= 1
        if k < 0:
            return None
        if instrs[k].opname == "COMPARE_OP":
            stack, _ = self._simulate(block, k)
            if len(stack) < 2:
                return None
            left, right = stack[-2], stack[-1]
            op = instrs[k].argrepr.replace("bool(", "").replace(")", "").strip()
            if left.var is not None and left.var not in self.symbol_names - set(self.stores):
                var, other = left.var, right
            elif right.var is not None:
                var, other, op = right.var, left, _FLIP.get(op, op)
            else:
                return None
        else:
            stack, _ = self._simulate(block, k + 1)
            if not stack or stack[-1].var is None:
                return None
            var, other, op = stack[-1].var, _Val(poly=Polynomial.constant(0)), "!="
        op = op if stays_if_true else _NEGATE.get(op, "")
        return (var, op, other, block) if op else None

    def _log_step(self, var: str, loop: _LoopInfo, exits: list[int]) -> tuple[str, Fraction, bool] | None:
        """(operator, constant, shrinks) when the loop writes `var` once, as ``var = var op c``,
        on every path to its exits."""
        sites = [s for s in self.stores.get(var, []) if s[0] in loop.body or s[0] == -1]
        if len(sites) != 1 or sites[0][0] == -1:
            return None
        block, index = sites[0]
        instrs = self.blocks[block].instrs
        if index < 3 or instrs[index].opname not in ("STORE_FAST", "STORE_DEREF") or any(
                block not in self.dom.get(e, set()) for e in exits):
            return None
        load, const, binary = instrs[index - 3], instrs[index - 2], instrs[index - 1]
        if binary.opname != "BINARY_OP" or load.opname not in ("LOAD_FAST", "LOAD_DEREF") or load.argval != var \
                or const.opname not in ("LOAD_CONST", "LOAD_SMALL_INT"):
            return None
        symbol, c = binary.argrepr.strip().rstrip("="), const.argval
        if isinstance(c, bool) or not isinstance(c, (int, float)):
            return None
        if symbol in ("//", "/") and c > 1 or symbol == ">>" and c >= 1:
            return symbol, Fraction(c).limit_denominator(1000), True
        if symbol == "*" and c > 1 or symbol == "<<" and c >= 1:
            return symbol, Fraction(c).limit_denominator(1000), False
        if symbol in ("+", "-") and isinstance(c, int) and c != 0:  # a counter: `i += 1`, `n -= 2`
            return ("+", Fraction(abs(c)), False) if (symbol == "+") == (c > 0) else ("-", Fraction(abs(c)), True)
        return None

    def _start_value(self, var: str, loop: _LoopInfo) -> _Val | None:
        """`var`'s value on entry to the loop: the parameter itself, or its one assignment
        before the loop."""
        outside = [s for s in self.stores.get(var, []) if s[0] not in loop.body]
        if not outside and var in self.parameters:
            return _Val(poly=Polynomial.symbol(var))
        if len(outside) != 1 or outside[0][0] == -1 or outside[0][0] not in self.dom.get(loop.header, set()):
            return None
        block, index = outside[0]
        if self.blocks[block].instrs[index].opname not in ("STORE_FAST", "STORE_DEREF"):
            return None
        stack, _ = self._simulate(block, index)
        return stack[-1] if stack else None

    @staticmethod
    def _run_constant(start: Polynomial, bound: Polynomial, op: str, symbol: str, factor: Fraction) -> int | None:
        """Iterations of a loop whose start and bound are constants, by running the arithmetic."""
        v, b = start.constant_value(), bound.constant_value()
        if v is None or b is None:
            return None
        keep = {">": lambda x: x > b, ">=": lambda x: x >= b, "!=": lambda x: x != b,
                "<": lambda x: x < b, "<=": lambda x: x <= b}[op]
        step = {"//": lambda x: x // factor, "/": lambda x: x / factor, ">>": lambda x: int(x) >> int(factor),
                "*": lambda x: x * factor, "<<": lambda x: int(x) << int(factor),
                "+": lambda x: x + factor, "-": lambda x: x - factor}[symbol]
        for count in range(2000):
            if not keep(v):
                return count
            v = step(v)
        return None

    def _unknown_trip(self, loop: _LoopInfo, text: str) -> tuple[TripCount, str]:
        """A loop whose count nothing here tells: the default D. One that can leave both at its
        header and from further in its body (``while todo: … return x``, ``for c in items: …
        break``) is a search, and takes the early-exit policy's view of a loop of D iterations (the
        mean (D + 1) / 2 of an exit equally likely at each one, as a known count does); the count
        stays a guess ("unknown"). A loop with one way out (a ``while True:`` whose break is its
        end, a ``while`` with no exit in its body, exits that raise) keeps D."""
        default = Polynomial.constant(self.default)
        ends = any(s not in loop.body for s in self.blocks[loop.header].succs)
        if not (ends and self._leaves_early(loop)):
            return TripCount("unknown", default, text), f"trip count unknown, assumed {self.default} iterations"
        trip, how = early_exit_trip(default, self.early_exit, text)
        return (TripCount("unknown", trip.iterations, text),
                f"trip count unknown, assumed {self.default} iterations; a break or return can leave it early, {how}")

    def _leaves_early(self, loop: _LoopInfo) -> bool:
        """A jump from the loop's body (not its header's exhausted iterator) to outside it: a
        `break` or `return`. Paths that end in `raise` are errors, taken as not taken."""
        return any(s not in loop.body and self.blocks[s].instrs[-1].opname not in ("RAISE_VARARGS", "RERAISE")
                   for b in loop.body if b != loop.header for s in self.blocks[b].succs)

    def _bind_loop_target(self, loop: _LoopInfo, it: _Iter) -> dict[str, _Val]:
        """The loop variable(s) stored right after FOR_ITER, valid while nothing else in the loop
        writes them."""
        header = self.blocks[loop.header]
        body_start = next((s for s in header.succs if s in loop.body and s != loop.header), None)
        if body_start is None:
            return {}
        item = it.item(Polynomial.symbol(f"@{loop.id}"))
        instrs = self.blocks[body_start].instrs
        targets: list[tuple[str, _Val, int]] = []
        first = instrs[0]
        if first.opname in ("STORE_FAST", "STORE_DEREF", "STORE_FAST_LOAD_FAST"):
            targets.append((_names(first)[0], item, 0))
        elif first.opname == "UNPACK_SEQUENCE" and item.items is not None and first.arg == len(item.items):
            for k, value in enumerate(item.items):
                if k + 1 < len(instrs) and instrs[k + 1].opname in ("STORE_FAST", "STORE_DEREF"):
                    targets.append((_names(instrs[k + 1])[0], value, k + 1))
        bindings = {}
        for name, value, index in targets:
            others = [s for s in self.stores.get(name, []) if s != (body_start, index)]
            if value is not _UNKNOWN and not value.literal and not any(b in loop.body or b == -1 for b, _ in others):
                bindings[name] = value
        return bindings

    # -- output -------------------------------------------------------------------------------
    def read(self) -> tuple[list[BasicBlock], dict[str, Loop], list[str], list[int], list[str]]:
        """Blocks, loops, assumptions, lines and extra listings; comprehensions spliced in."""
        self._analyse_loops()
        self._memo.clear()
        out_blocks: list[BasicBlock] = []
        out_loops = {lp.id: Loop(lp.id, lp.parent, lp.depth, lp.trip, lp.line) for lp in self.loops.values()}
        listings: list[str] = []
        lines = [ln for ln in self.line_of.values() if ln is not None]
        lines += [i.positions.end_lineno for i in self.instrs
                  if i.positions is not None and i.positions.end_lineno is not None]
        headers = {lp.header for lp in self.loops.values()}
        dropped = sum(len(b.instrs) for s, b in self.blocks.items() if s not in self.live)
        if dropped:
            self.assumptions.append(f"{self.code.co_qualname}: {dropped} bytecode instructions reachable only "
                                    "through exception handlers are assumed not to run")
        names = {start: f"{self.prefix}L{start}" if start in headers else f"{self.prefix}B{start}"
                 for start in self.live}
        sized: set[int] = set()  # blocks whose branch compares sizes
        added: dict[int, tuple[list[BasicBlock], list[str]]] = {}  # spliced in at each block: blocks, loops
        for start in sorted(self.live):
            _, facts = self._simulate(start)
            if any(f == ("sizes",) for f in facts.values()):
                sized.add(start)
            inner = self.innermost[start]
            name = names[start]
            block = BasicBlock(name, inner.id if inner else None)
            out_blocks.append(block)
            spliced: list[BasicBlock] = []
            loops_before = set(out_loops)
            for ins in self.blocks[start].instrs:
                fact = facts.get(ins.offset, ())
                callee = fact[1] if fact and fact[0] == "call" else None
                divisor = fact[1] if fact and fact[0] == "div" else None
                formats = fact[1] if fact and fact[0] == "str%" else 0
                block.instructions.append(Instruction(
                    _PRINTF if formats else classify(ins), self.line_of[ins.offset], ins.opname, callee,
                    divisor=divisor))
                block.instructions.extend(Instruction(_PRINTF, self.line_of[ins.offset], f"<{_PRINTF}>")
                                          for _ in range(formats - 1))
                if fact and fact[0] == "call" and fact[2] is not None:
                    consumer = fact[5] if len(fact) > 5 and isinstance(fact[5], str) else None
                    spliced += self._splice(ins, fact[2], fact[3], start, inner, out_loops, listings, lines,
                                            consumer)
                if fact and fact[0] == "call" and len(fact) > 5 and isinstance(fact[5], _Site):
                    self.sites.append((self.line_of[ins.offset], fact[5]))
                work = fact[4] if fact and fact[0] == "call" else fact[1] if fact and fact[0] == "work" else None
                if isinstance(work, _FixedWork):  # once per call: one more instruction of this block
                    block.instructions.append(Instruction(work.cls, self.line_of[ins.offset], f"<{work.cls}>"))
                elif work is not None:
                    spliced.append(self._work_loop(ins, work, inner, out_loops))
            out_blocks.extend(spliced)
            added[start] = (spliced, [lp for lp in out_loops if lp not in loops_before])
        self._branch_shares(names, sized, out_blocks, out_loops, added)
        return out_blocks, out_loops, self.assumptions, lines, listings

    def _branch_shares(self, names: dict[int, str], sized: set[int], out_blocks: list[BasicBlock],
                       out_loops: dict[str, Loop], added: dict[int, tuple[list[BasicBlock], list[str]]]) -> None:
        """Each block's runs per iteration of its loop (per call outside loops): the two arms of a
        branch on data (``if x.ok:`` … ``else:`` …) are exclusive, so each runs on a share of the
        passes, taken as half each (nothing here says which is likelier; LLVM's default for a
        comparison its heuristics do not know) and all but never for an arm that raises (a cold
        path, as LLVM's to ``unreachable``). A branch on sizes (``if i < n``) decides what the
        trip counts already count: both arms run, as before. Code spliced in at a block (a
        comprehension, a builtin's work) runs as often as that block."""
        probabilities: dict[tuple[str, str], Fraction] = {}
        headers = {lp.header: lp for lp in self.loops.values()}
        for start in self.live:
            block = self.blocks[start]
            last = block.instrs[-1]
            targets = list(dict.fromkeys(t for t in block.succs if t in self.live))
            if len(targets) != 2 or start in sized or not (
                    last.opname.startswith("POP_JUMP") or last.opname.startswith("JUMP_IF_")):
                continue
            if any(t in headers and start not in headers[t].body for t in targets):
                continue  # `while x != 1:` tested once before its loop: whether it runs is its trip count's say
            cold = [t for t in targets if self.blocks[t].instrs[-1].opname == "RAISE_VARARGS"]
            for t in targets:
                share = Fraction(1, 2) if len(cold) != 1 else _COLD if t in cold else 1 - _COLD
                probabilities[(names[start], names[t])] = share
        if not probabilities:
            return
        successors = {names[s]: [names[t] for t in self.blocks[s].succs if t in self.live] for s in self.live}
        regions = {lp.id: ([names[b] for b in lp.body if b in self.live], lp.parent) for lp in self.loops.values()}
        order = [names[s] for s in sorted(self.live)]
        block_share, entry_share = block_frequencies(order, successors, regions, probabilities)
        for b in out_blocks:
            if b.name in block_share:
                b.frequency = block_share[b.name]
        for lp in self.loops.values():
            if lp.id in entry_share:
                out_loops[lp.id].entry_frequency = entry_share[lp.id]
        for start, (spliced, new_loops) in added.items():
            share = block_share.get(names[start], Fraction(1))
            if share == 1:
                continue
            at = self.innermost[start]
            for b in spliced:
                if b.loop == (at.id if at else None):
                    b.frequency *= share
            for loop_id in new_loops:
                if out_loops[loop_id].parent == (at.id if at else None):
                    out_loops[loop_id].entry_frequency *= share

    def _work_loop(self, ins: dis.Instruction, work: _Work, at: _LoopInfo | None,
                   out_loops: dict[str, Loop]) -> BasicBlock:
        """The C loop inside a builtin, as a loop of its own: one block of one py.work.* unit,
        run trip-count times each time the call runs (nested in the loop that makes the call)."""
        line = self.line_of[ins.offset]
        loop_id = f"{self.prefix}{WORK_LOOP}{ins.offset}"
        out_loops[loop_id] = Loop(loop_id, at.id if at else None, (at.depth if at else 0) + 1, work.trip, line)
        self.assumptions.extend(f"line {line}: {note}" for note in work.notes)
        return BasicBlock(loop_id, loop_id, [Instruction(work.cls, line, f"<{work.label}: {work.trip.iterations} "
                                                                          f"× {work.cls}>")])

    def _splice(self, call: dis.Instruction, code: types.CodeType, iterator: _Val, block: int,
                at: _LoopInfo | None, out_loops: dict[str, Loop], listings: list[str],
                lines: list[int], consumer: str | None = None) -> list[BasicBlock]:
        overrides = {name: self._lookup(name, block) for name in code.co_freevars}
        if code.co_argcount:
            overrides[code.co_varnames[0]] = iterator if iterator.iter is not None else _UNKNOWN
        sub = _FunctionReader(code, self.file, self.lines, self.default, self.early_exit,
                              prefix=f"{self.prefix}C{call.offset}.", overrides=overrides, module=self.module)
        blocks, loops, assumptions, sub_lines, sub_listings = sub.read()
        self.sites.extend(sub.sites)
        depth = at.depth if at else 0
        for lp in loops.values():
            out_loops[lp.id] = Loop(lp.id, lp.parent or (at.id if at else None), lp.depth + depth,
                                    lp.trip_count, lp.line, entry_frequency=lp.entry_frequency)
        for b in blocks:
            b.loop = b.loop or (at.id if at else None)
        if code.co_name == "<genexpr>" and consumer is not None:
            # any()/all() stop at the first item that decides them, next() at the first item: the
            # generator's loop runs to there, an early exit as a loop's `break` (a search).
            outer = [lp for lp in out_loops.values() if lp.id in loops and lp.parent == (at.id if at else None)]
            filtered = any(i.opname.startswith("POP_JUMP") for i in _instructions(code))
            for lp in outer:
                if consumer == "next" and not filtered:  # the first item it yields
                    trip, how = TripCount("constant", Polynomial.constant(1), lp.trip_count.source_text), \
                        "one item, the first"
                else:
                    trip, how = early_exit_trip(lp.trip_count.iterations, self.early_exit,
                                                lp.trip_count.source_text)
                out_loops[lp.id] = replace(lp, trip_count=trip)
                assumptions = assumptions + [f"generator expression at line {code.co_firstlineno} consumed by "
                                             f"{consumer}(), which stops at the first item that decides it; {how}"]
        elif code.co_name == "<genexpr>":
            assumptions = [f"generator expression at line {code.co_firstlineno} assumed consumed fully, once"] \
                + assumptions
        self.assumptions.extend(assumptions)
        listings.append(f"Disassembly of {code.co_qualname} (inlined at line {self.line_of[call.offset]}):\n"
                        + dis.Bytecode(code).dis())
        listings.extend(sub_listings)
        lines.extend(sub_lines)
        return blocks


# An arm that raises: LLVM's weight for a path to `unreachable` (1 against 2^20 - 1).
_COLD = Fraction(1, 1 << 20)
# Builtins that consume a generator only until their answer is known.
_STOPS_EARLY = frozenset(("any", "all", "next"))

_FLIP = {"<": ">", ">": "<", "<=": ">=", ">=": "<=", "==": "==", "!=": "!="}
_NEGATE = {"<": ">=", ">": "<=", "<=": ">", ">=": "<", "==": "!=", "!=": "=="}


def _log2_of(p: Polynomial) -> tuple[str, Fraction] | None:
    """log₂ of a size ``a·n + b`` as (``log2(n)``, log₂ a); b is dropped, as the C reader does."""
    if len(p.symbols) != 1 or p.degree() != 1 or len([m for m, _ in p.terms if m]) != 1:
        return None
    (symbol,) = p.symbols
    a = next(c for m, c in p.terms if m)
    if a <= 0 or symbol.startswith("@"):
        return None
    return f"{LOG2_PREFIX}{symbol})", Fraction(math.log2(a)).limit_denominator(1000)


def is_work_loop(loop_id: str) -> bool:
    """Whether a loop id stands for the work inside a builtin call, not a loop in the source."""
    return loop_id.rsplit(".", 1)[-1].startswith(WORK_LOOP)


def _nonlocal_writes(code: types.CodeType) -> set[str]:
    """Cell variables of ``code`` that nested functions assign (``nonlocal n; n = 3``)."""
    out: set[str] = set()
    cells = set(code.co_cellvars)
    todo = [c for c in code.co_consts if isinstance(c, types.CodeType)]
    while todo and cells:
        c = todo.pop()
        todo.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
        for ins in _instructions(c):
            if ins.opname in ("STORE_DEREF", "DELETE_DEREF") and ins.argval in cells:
                out.add(str(ins.argval))
    return out


def read_code(code: types.CodeType, file: str, source_text: str, default_trip_count: int = 100,
              early_exit: str = "expected") -> FunctionIR:
    """One function's code object → `FunctionIR` (comprehensions it calls are inlined)."""
    return _read_function(code, file, source_text.splitlines(), default_trip_count, early_exit)


def _read_function(code: types.CodeType, file: str, lines: list[str], default_trip_count: int,
                   early_exit: str, module: "_ModuleInfo | None" = None,
                   sites: dict[str, list[tuple[int | None, _Site]]] | None = None,
                   attributes: dict[str, dict[str, _Attribute]] | None = None) -> FunctionIR:
    reader = _FunctionReader(code, file, lines, default_trip_count, early_exit, module=module)
    blocks, loops, assumptions, seen_lines, listings = reader.read()
    qualname = getattr(code, "co_qualname", code.co_name)
    if sites is not None:
        sites.setdefault(qualname, []).extend(reader.sites)
    if attributes is not None and reader.attribute_reads:
        attributes[qualname] = dict(reader.attribute_reads)
    return FunctionIR(
        name=qualname,
        display_name=qualname,
        file=file,
        line=code.co_firstlineno,
        end_line=max(seen_lines, default=code.co_firstlineno),
        language="python",
        arch=ARCH,
        parameters=reader.parameters,
        blocks=blocks,
        loops=loops,
        assumptions=[f"bytecode from CPython {platform.python_version()}, costed with the {ARCH} table"]
        + list(dict.fromkeys(assumptions)),
        ir_text="\n".join([dis.Bytecode(code).dis()] + listings),
    )


def _function_codes(code: types.CodeType) -> list[types.CodeType]:
    """Functions, methods, nested functions and lambdas, in source order. Comprehensions are
    inlined into their caller and class bodies are not functions, but both are searched."""
    found: list[types.CodeType] = []
    for const in code.co_consts:
        if not isinstance(const, types.CodeType):
            continue
        skip = (const.co_name in COMPREHENSIONS or not const.co_flags & CO_OPTIMIZED
                or const.co_name == "__annotate__" or const.co_name.startswith("<generic parameters"))
        if not skip:
            found.append(const)
        found.extend(_function_codes(const))
    return sorted(found, key=lambda c: c.co_firstlineno)


def _shadowed_names(module: types.CodeType) -> frozenset[str]:
    """Names the module binds itself (assignments, imports, def/class, ``global`` writes in any
    function): a call to one of these is not the builtin of that name; and ``.name`` for every
    function or method it defines: ``x.find()`` is then taken as that method, not str.find.
    ``import *`` may bind anything, so then every builtin name counts as bound."""
    bound: set[str] = set()
    for code in _nested_code(module):
        if code is not module and code.co_flags & CO_OPTIMIZED:
            bound.add(f".{code.co_name}")
        for ins in _instructions(code):
            if ins.opname == "IMPORT_STAR" or (ins.opname == "CALL_INTRINSIC_1" and "IMPORT_STAR" in ins.argrepr):
                return frozenset(dir(builtins))
            if ins.opname in ("STORE_NAME", "STORE_GLOBAL", "DELETE_NAME", "DELETE_GLOBAL") and (
                    code is module or ins.opname.endswith("GLOBAL")):
                bound.add(str(ins.argval))
    return frozenset(bound)


class _ModuleInfo:
    """What a function's reader learns from its whole module: the names that hide builtins, and
    the module's constants: a name the module binds once, at its top level, to an int, a range
    of ints, a tuple or a string (``SIZE = 9``, ``DIRS = ((0, 1), (1, 0))``), and that no
    function rebinds with ``global`` — its value wherever a function reads it, as C's macros
    and ``const`` globals are. Lists and dicts are left out: functions may grow them."""

    def __init__(self, code: types.CodeType | None = None, file: str = "", lines: list[str] | None = None,
                 default_trip_count: int = 100, early_exit: str = "expected"):
        self.code = code
        self.shadowed = _shadowed_names(code) if code is not None else frozenset()
        self._args = (file, lines or [], default_trip_count, early_exit)
        self.default_trip_count = default_trip_count
        self._reader: _FunctionReader | None = None
        self._values: dict[str, _Val | None] = {}
        self._rebound = _rebound_globals(code) if code is not None else frozenset()
        self._resized_globals = _resized_globals(code) if code is not None else frozenset()
        # Classes the module defines at its top level (calling one allocates an instance).
        self.classes = frozenset(c.co_name for c in (code.co_consts if code is not None else ())
                                 if isinstance(c, types.CodeType) and not c.co_flags & CO_OPTIMIZED
                                 and not c.co_name.startswith("<")) - self._rebound
        self._attributes: dict | None = None  # (class, attribute) → store, then _Attribute
        self._init_readers: dict[types.CodeType, _FunctionReader] = {}
        self._collections: dict | None = None  # attribute → where it is built, then its _Val
        self._enums: dict[str, tuple[int, int]] | None = None  # Enum class → (members, line)
        self._returns: dict[str, tuple[list[str], _Val] | None] = {}  # function → what it returns
        self._decorated: frozenset[str] | None = None  # top-level functions with decorators
        self._arrays: tuple[frozenset[str], frozenset[str]] | None = None  # names of array.array, of array
        # Classes of the module that derive from list and define no __init__/__new__ of their
        # own (nor do their bases in the module): calling one with no arguments makes an empty list.
        self.lists = _list_classes(lines or []) - self._rebound if code is not None else frozenset()

    def constant(self, name: str) -> _Val | None:
        """The module constant ``name``, or None when it is not one (or not understood)."""
        if self.code is None or name in self._rebound:
            return None
        if name in self._values:
            return self._values[name]
        if self._enums is None:
            self._enums = _enum_members(self._args[1])
        if name in self._enums:  # iterating an Enum yields its members: as many as it declares
            count, line = self._enums[name]
            self._values[name] = _Val(length=Polynomial.constant(count), is_global=True,
                                      notes=(f"{name} is an Enum of {count} members (line {line})",))
            return self._values[name]
        self._values[name] = None  # guards `A = B; B = A`
        if self._reader is None:
            self._reader = _FunctionReader(self.code, *self._args, module=self)
        reader = self._reader
        sites = reader.stores.get(name, [])
        if len(sites) != 1 or sites[0][0] not in reader.live:
            return None
        block, index = sites[0]
        if reader.blocks[block].instrs[index].opname != "STORE_NAME":
            return None
        stack, _ = reader._simulate(block, index)
        value = stack[-1] if stack else _UNKNOWN
        constant = value.poly is not None and value.poly.constant_value() is not None
        rng = value.rng is not None and all(p.constant_value() is not None for p in (value.rng.start, value.rng.stop))
        tuple_ = value.length is not None and value.length.constant_value() is not None and (
            value.container == "tuple" or value.container in ("list", "dict") and name not in self._resized_globals)
        if constant or rng or tuple_ or value.is_str:
            note = (f"{name} is the module's constant (line "
                    f"{reader.line_of[reader.blocks[block].instrs[index].offset]})",)
            self._values[name] = _Val(poly=value.poly if constant else None,
                                      rng=replace(value.rng, notes=value.rng.notes + note) if rng else None,
                                      container=value.container if tuple_ else None,
                                      length=value.length if tuple_ or value.is_str else None,
                                      items=value.items if tuple_ else None, is_str=value.is_str, notes=note)
        return self._values[name]

    def attribute(self, cls: str, attr: str) -> "_Attribute | None":
        """``self.attr`` in a method of ``cls``, when the module binds that attribute once: in
        ``cls.__init__``, as ``self.attr = value`` (and never grows it in place, rebinds or deletes
        it anywhere): a configuration the instance keeps, as a C struct's field set once. None when
        the value is neither known nor a function of ``__init__``'s parameters."""
        if self.code is None:
            return None
        if self._attributes is None:
            self._attributes = _configuration_attributes(self.code, self.classes, _class_family(self._args[1]))
        key = (cls, attr)
        if key not in self._attributes:
            return None
        found = self._attributes[key]
        if isinstance(found, _Attribute) or found is None:
            return found
        self._attributes[key] = None  # guards an __init__ whose store reads the attribute itself
        code, offset = found
        if code not in self._init_readers:  # one reader per __init__, whatever it binds
            self._init_readers[code] = _FunctionReader(code, *self._args, module=self)
        reader = self._init_readers[code]
        value = _UNKNOWN
        for start in sorted(reader.live):
            instrs = reader.blocks[start].instrs
            index = next((i for i, ins in enumerate(instrs) if ins.offset == offset), None)
            if index is not None:
                stack, _ = reader._simulate(start, index)
                value = stack[-2] if len(stack) >= 2 else _UNKNOWN
                break
        init_symbols = set(reader.parameters) | {f"len({p})" for p in reader.parameters}
        size = _length(value)
        poly = value.poly if value.poly is not None and value.poly.symbols <= init_symbols else None
        length = size[0] if size is not None and size[1] != "unknown" and size[0].symbols <= init_symbols else None
        if poly is None and length is None:
            return None
        self._attributes[key] = _Attribute(cls, attr, reader.line_of.get(offset), poly, length)
        return self._attributes[key]


    def is_array(self, func: "_Val") -> bool:
        """Whether a called value is the array module's ``array`` type (``from array import
        array``; ``import array`` then ``array.array``)."""
        if self.code is None or not (func.is_global or func.owner is not None):
            return False
        if self._arrays is None:
            self._arrays = _array_names(self._args[1])
        names, modules = self._arrays
        if func.owner is None:
            return func.is_global and func.name in names
        return func.attr == "array" and func.owner.is_global and func.owner.owner is None \
            and func.owner.name in modules

    def returns(self, name: str) -> "tuple[list[str], _Val] | None":
        """(parameters, value) for the module's top-level function ``name`` when every one of its
        ``return`` statements gives a sequence of one length, a polynomial in its parameters and
        their lengths (``return [0] * n``; ``out`` built by appends over ``xs``: len(xs)); the
        value's container and length. None otherwise (a generator, a length that depends on what
        the function read or on a loop index, two returns that differ)."""
        if self.code is None:
            return None
        if name in self._returns:
            return self._returns[name]
        self._returns[name] = None  # guards recursion
        codes = [c for c in self.code.co_consts if isinstance(c, types.CodeType) and c.co_name == name
                 and c.co_flags & CO_OPTIMIZED]
        if self._decorated is None:
            self._decorated = _decorated_functions(self._args[1])
        if len(codes) != 1 or name in self._decorated or "*" in self._decorated or name in self._rebound:
            return None  # defined twice, or a decorator may return something else
        code = codes[0]
        if code.co_flags & 0x2A0 or code.co_flags & 0x0C:
            return None  # a generator or coroutine (0x20/0x80/0x200), *args/**kwargs (0x04/0x08)
        reader = _FunctionReader(code, *self._args, module=self)
        reader._analyse_loops()
        allowed = set(reader.parameters) | {f"len({p})" for p in reader.parameters}
        found: _Val | None = None
        for start in sorted(reader.live):
            block = reader.blocks[start]
            if block.instrs[-1].opname not in ("RETURN_VALUE", "RETURN_CONST"):
                continue
            if block.instrs[-1].opname == "RETURN_CONST":
                return None
            stack, _ = reader._simulate(start, len(block.instrs) - 1)
            value = stack[-1] if stack else _UNKNOWN
            size = _length(value)
            if size is None or size[1] == "unknown" or not size[0].symbols <= allowed:
                return None
            if found is not None and (found.length != size[0] or found.container != value.container):
                return None
            found = _Val(container=value.container, is_str=value.is_str, length=size[0])
        if found is None:
            return None
        self._returns[name] = (list(reader.parameters), found)
        return self._returns[name]

    def collection(self, attr: str) -> "_Val | None":
        """``x.attr`` read anywhere in the module, when the module builds that attribute in one
        place only: one store (``self.neighbours = []``, of a list of known length) and, in the
        same function, appends inside loops of constant trip counts (``for d in DIRS:
        self.neighbours.append(…)``), nothing else growing, rebinding or deleting it
        (`_built_collections`). Each run of that function starts the list afresh, so it holds at
        most its initial length plus the appends: a list, of that length (an upper bound: an
        append under a branch is counted as made). None otherwise."""
        if self.code is None:
            return None
        if self._collections is None:
            self._collections = _built_collections(self.code)
        found = self._collections.get(attr)
        if found is None or isinstance(found, _Val):
            return found
        self._collections[attr] = None  # guards a build whose loops read the attribute itself
        code, store, appends = found
        reader = _FunctionReader(code, *self._args, module=self)
        reader._analyse_loops()
        where = {ins.offset: (start, i) for start in reader.live for i, ins in enumerate(reader.blocks[start].instrs)}
        if store not in where:
            return None
        stack, _ = reader._simulate(*where[store])
        value = stack[-2] if len(stack) >= 2 else _UNKNOWN
        start = value.length.constant_value() if value.container == "list" and value.length is not None else None
        if start is None:
            return None
        total = Fraction(start)
        for offset in appends:
            if offset not in where:
                continue  # in a block that never runs
            times = Fraction(1)
            for loop in reader._enclosing(where[offset][0]):
                trips = loop.trip.iterations.constant_value() if loop.trip is not None and \
                    loop.trip.kind != "unknown" else None
                if trips is None:
                    return None
                times *= trips
            total += times
        qualname = getattr(code, "co_qualname", code.co_name)
        line = reader.line_of.get(store)
        count = int(total) if total.denominator == 1 else float(total)
        grown = f", {len(appends)} append(s) counted" if appends else ""
        note = (f".{attr} holds at most {count} items: stored once, in {qualname} (line {line}), with "
                f"{start}{grown}",)
        self._collections[attr] = _Val(container="list", length=Polynomial.constant(total), notes=note)
        return self._collections[attr]


@dataclass(frozen=True)
class _Attribute:
    """An instance attribute bound once, in ``__init__`` (``self.degree = degree``): its value
    or length there, over ``__init__``'s parameters (or constant)."""

    cls: str
    attr: str
    line: int | None  # of the store in __init__
    poly: Polynomial | None  # the value, when an integer
    length: Polynomial | None  # the length, when a sized collection

    @property
    def symbol(self) -> str:
        return f"{INSTANCE_ATTRIBUTE}{self.attr}"

    def value(self) -> "_Val":
        """What ``self.attr`` reads as: a constant where __init__ stores one, else a size symbol
        that `ccls.readers.python_calls` gives __init__'s values at its call sites."""
        note = (f"self.{self.attr} is bound once, in {self.cls}.__init__ (line {self.line})",)
        poly = self.poly if self.poly is not None and self.poly.constant_value() is not None else None
        length = self.length if self.length is not None and self.length.constant_value() is not None else None
        if poly is not None or length is not None:
            return _Val(poly=poly, length=length, notes=note)
        symbol = self.symbol
        return _Val(poly=Polynomial.symbol(symbol) if self.poly is not None else None,
                    seq=symbol if self.length is not None else None)


_LOCAL_LOADS = ("LOAD_FAST", "LOAD_DEREF", "LOAD_FAST_CHECK", "LOAD_FAST_BORROW", "LOAD_FAST_LOAD_FAST",
                "LOAD_FAST_BORROW_LOAD_FAST_BORROW")


def _class_family(lines: list[str]) -> dict[str, frozenset[str]] | None:
    """Each top-level class → the module's classes it derives from or that derive from it (an
    instance of either may run the other's methods); None when the source does not parse."""
    import ast
    try:
        tree = syntax_tree("\n".join(lines))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    bases = {node.name: {b.id for b in node.bases if isinstance(b, ast.Name)}
             for node in tree.body if isinstance(node, ast.ClassDef)}

    def ancestors(name: str, seen: frozenset[str] = frozenset()) -> set[str]:
        out: set[str] = set()
        for base in bases.get(name, ()):
            if base in bases and base not in seen:
                out |= {base} | ancestors(base, seen | {name})
        return out

    up = {name: ancestors(name) for name in bases}
    return {name: frozenset(up[name] | {other for other in bases if name in up[other]}) for name in bases}


def _array_names(lines: list[str]) -> tuple[frozenset[str], frozenset[str]]:
    """(names the module binds to ``array.array``, names it binds to the ``array`` module), from
    its top-level imports; nothing when one of those names is also bound otherwise."""
    import ast
    try:
        tree = syntax_tree("\n".join(lines))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return frozenset(), frozenset()
    names, modules, other = set(), set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "array" and node.level == 0:
            names.update(a.asname or a.name for a in node.names if a.name == "array")
            other.update(a.asname or a.name for a in node.names if a.name != "array")
        elif isinstance(node, ast.Import):
            modules.update(a.asname or a.name for a in node.names if a.name == "array")
            other.update((a.asname or a.name).split(".")[0] for a in node.names if a.name != "array")
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            other.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            for t in (node.targets if isinstance(node, ast.Assign) else [node.target]):
                other.update(n.id for n in ast.walk(t) if isinstance(n, ast.Name))
    return frozenset(names - other), frozenset(modules - other)


def _decorated_functions(lines: list[str]) -> frozenset[str]:
    """Top-level functions written with a decorator (whatever calling them returns is the
    decorator's say: ``@contextmanager``, ``@lru_cache``), or every name when the source does not
    parse."""
    import ast
    try:
        tree = syntax_tree("\n".join(lines))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return frozenset(("*",))
    out = {node.name for node in ast.walk(tree)
           if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.decorator_list}
    return frozenset(out)


_ENUM_BASES = frozenset(("Enum", "IntEnum", "StrEnum"))  # Flag iterates its canonical members only


def _enum_members(lines: list[str]) -> dict[str, tuple[int, int]]:
    """Top-level classes deriving from ``Enum``/``IntEnum``/``StrEnum`` (``enum.Enum``) → how many
    members they declare (names bound in the class body, neither ``_sunder_`` nor dunder, nor
    functions; a literal value a member already has makes an alias, which iteration skips), and
    the class's line. A class that derives from anything else of the module is left out."""
    import ast
    try:
        tree = syntax_tree("\n".join(lines))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    out: dict[str, tuple[int, int]] = {}
    for node in tree.body:
        if not isinstance(node, ast.ClassDef) or len(node.bases) != 1:
            continue
        base = node.bases[0]
        name = base.id if isinstance(base, ast.Name) else base.attr if isinstance(base, ast.Attribute) else None
        if name not in _ENUM_BASES:
            continue
        values: list[object] = []
        for item in node.body:
            if isinstance(item, ast.Assign) and len(item.targets) == 1 and isinstance(item.targets[0], ast.Name):
                member = item.targets[0].id
                if member.startswith("_"):
                    continue
                value = item.value.value if isinstance(item.value, ast.Constant) else object()
                if isinstance(item.value, ast.Lambda):
                    continue
                if not any(type(v) is type(value) and v == value for v in values):
                    values.append(value)
        if values:
            out[node.name] = (len(values), node.lineno)
    return out


def _list_classes(lines: list[str]) -> frozenset[str]:
    """Top-level classes deriving from ``list`` (directly or through the module's classes) that
    neither they nor those bases give an ``__init__`` or ``__new__``: ``OrderedCollection()``
    is an empty list, as ``list()`` is."""
    import ast
    try:
        tree = syntax_tree("\n".join(lines))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return frozenset()
    nodes = {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}

    def is_list(name: str, seen: frozenset[str] = frozenset()) -> bool:
        node = nodes.get(name)
        if node is None or name in seen or node.keywords or any(
                isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name in ("__init__", "__new__")
                for item in node.body):
            return False
        bases = [b.id for b in node.bases if isinstance(b, ast.Name)]
        if len(bases) != len(node.bases):
            return False
        return any(b == "list" for b in bases) and all(b == "list" or b == "object" or is_list(b, seen | {name})
                                                       for b in bases) or \
            bool(bases) and all(b in nodes and is_list(b, seen | {name}) for b in bases)
    return frozenset(name for name in nodes if is_list(name))


def _configuration_attributes(module: types.CodeType, classes: frozenset[str],
                              family: dict[str, frozenset[str]] | None) -> dict:
    """(class, attribute) → (``__init__``'s code, offset of its one store) for each attribute that
    a class the module defines at its top level stores once, as ``self.attr = …`` in its
    ``__init__``, where nothing else in the module may change it: no other store of that name
    (except on ``self`` in a class unrelated by inheritance), no deletion, no growing or
    shrinking in place (``x.attr.append``), no ``setattr``/``__dict__`` anywhere."""
    stores: dict[str, list[tuple[types.CodeType, int, bool]]] = {}
    changed: set[str] = set()
    for code in _nested_code(module):
        instrs = _instructions(code)
        this = code.co_varnames[0] if code.co_flags & CO_OPTIMIZED and code.co_argcount else None
        for prev, ins in zip((None,) + instrs, instrs):
            name = str(ins.argval)
            if ins.opname == "STORE_ATTR":
                on_self = prev is not None and prev.opname in _LOCAL_LOADS and _names(prev)[-1] == this
                stores.setdefault(name, []).append((code, ins.offset, on_self))
            elif ins.opname == "DELETE_ATTR":
                changed.add(name)
            elif ins.opname in ("LOAD_GLOBAL", "LOAD_NAME") and name in ("setattr", "delattr", "vars"):
                return {}
            elif ins.opname in ("LOAD_ATTR", "LOAD_METHOD") and name == "__dict__":
                return {}
            elif (prev is not None and prev.opname in ("LOAD_ATTR", "LOAD_METHOD")
                  and ins.opname in ("LOAD_ATTR", "LOAD_METHOD") and name in _RESIZING):
                changed.add(str(prev.argval))
    def owner(code: types.CodeType) -> str | None:  # the top-level class of a method
        parts = getattr(code, "co_qualname", code.co_name).split(".")
        return parts[0] if len(parts) == 2 and parts[0] in classes else None

    out: dict = {}
    for attr, where in stores.items():
        if attr in changed or family is None:
            continue
        for code, offset, on_self in where:
            cls = owner(code)
            if not on_self or cls is None or code.co_name != "__init__":
                continue
            related = family.get(cls, frozenset()) | {cls}
            others = [(c, s) for c, o, s in where if o != offset or c is not code]
            if all(s and owner(c) is not None and owner(c) not in related for c, s in others):
                out[(cls, attr)] = (code, offset)
    return out


def _built_collections(module: types.CodeType) -> dict:
    """attribute → (code, offset of its one store, offsets of the ``.append`` loads) for each
    attribute the module stores exactly once and grows only by ``x.attr.append(…)`` in that same
    function; never deleted, never resized otherwise (other methods of `_RESIZING`, a slice
    assignment or an item deletion on it). Nothing is known when the module uses
    ``setattr``/``delattr``/``vars``/``__dict__``."""
    stores: dict[str, list[tuple[types.CodeType, int]]] = {}
    appends: dict[str, list[tuple[types.CodeType, int]]] = {}
    changed: set[str] = set()
    for code in _nested_code(module):
        instrs = _instructions(code)
        line_attrs: list[str] = []  # attributes loaded on the current line
        line = None
        for prev, ins in zip((None,) + instrs, instrs):
            name = str(ins.argval)
            if ins.positions is not None and ins.positions.lineno is not None and ins.positions.lineno != line:
                line, line_attrs = ins.positions.lineno, []
            if ins.opname == "STORE_ATTR":
                stores.setdefault(name, []).append((code, ins.offset))
            elif ins.opname == "DELETE_ATTR":
                changed.add(name)
            elif ins.opname in ("LOAD_GLOBAL", "LOAD_NAME") and name in ("setattr", "delattr", "vars"):
                return {}
            elif ins.opname in ("LOAD_ATTR", "LOAD_METHOD") and name == "__dict__":
                return {}
            elif ins.opname in ("DELETE_SUBSCR", "STORE_SLICE", "DELETE_SLICE") or (
                    ins.opname == "STORE_SUBSCR" and prev is not None and prev.opname == "BUILD_SLICE"):
                changed.update(line_attrs)  # `del x.attr[i]`, `x.attr[a:b] = …`: its length changes
            if (prev is not None and prev.opname in ("LOAD_ATTR", "LOAD_METHOD")
                    and ins.opname in ("LOAD_ATTR", "LOAD_METHOD") and name in _RESIZING):
                if name == "append":
                    appends.setdefault(str(prev.argval), []).append((code, ins.offset))
                else:
                    changed.add(str(prev.argval))
            if ins.opname in ("LOAD_ATTR", "LOAD_METHOD"):
                line_attrs.append(name)
    out: dict = {}
    for attr, where in stores.items():
        if attr in changed or len(where) != 1:
            continue
        code, offset = where[0]
        grown = appends.get(attr, [])
        if all(c is code for c, _ in grown):
            out[attr] = (code, offset, tuple(o for _, o in grown))
    return out


_NO_MODULE = _ModuleInfo()


def _resized_globals(module: types.CodeType) -> frozenset[str]:
    """Module-level names whose container some code of the module may resize: a resizing method
    on it (``SYSTEM.append(…)``, `_RESIZING`), or an item stored or deleted on a line that reads
    it (``TABLE[k] = v`` adds a key to a dict; ``del L[i]``, ``L[a:b] = …`` change a list's length)."""
    out: set[str] = set()
    for code in _nested_code(module):
        instrs = _instructions(code)
        line, names = None, []
        for prev, ins in zip((None,) + instrs, instrs):
            if ins.positions is not None and ins.positions.lineno is not None and ins.positions.lineno != line:
                line, names = ins.positions.lineno, []
            if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME"):
                names.append(ins.argrepr.replace("NULL + ", "").replace(" + NULL", ""))
            elif ins.opname in ("STORE_SUBSCR", "DELETE_SUBSCR", "STORE_SLICE", "DELETE_SLICE"):
                out.update(names)
            if prev is not None and prev.opname in ("LOAD_GLOBAL", "LOAD_NAME") and ins.opname in (
                    "LOAD_METHOD", "LOAD_ATTR") and str(ins.argval) in _RESIZING:
                out.add(prev.argrepr.replace("NULL + ", "").replace(" + NULL", ""))
    return frozenset(out)


def _rebound_globals(module: types.CodeType) -> frozenset[str]:
    """Module-level names that a function rebinds (``global x; x = …``) or that are deleted."""
    out: set[str] = set()
    for code in _nested_code(module):
        for ins in _instructions(code):
            if ins.opname in ("STORE_GLOBAL", "DELETE_GLOBAL") or (ins.opname == "DELETE_NAME" and code is module):
                out.add(str(ins.argval))
    return frozenset(out)


def _compilable(text: str) -> tuple[str | bytes, list[str]]:
    """What to hand compile(), and the source lines. Text read from disk as UTF-8 with
    surrogateescape keeps undecodable bytes as surrogates; such a file is compiled from its
    bytes, so that a PEP 263 coding declaration (``# -*- coding: latin-1 -*-``) decides."""
    try:
        text.encode("utf-8")
        return text, text.splitlines()
    except UnicodeEncodeError:
        raw = text.encode("utf-8", "surrogateescape")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
        lines = raw.decode(encoding, errors="replace").splitlines()
    except (SyntaxError, LookupError):  # compile() reports the bad declaration itself
        lines = text.splitlines()
    return raw, lines


def read_module(text: str, file: str, default_trip_count: int = 100,
                early_exit: str = "expected") -> tuple[list[FunctionIR], list[AnalysisError]]:
    """Compile (never run) a module and read every function in it. Never raises: compile errors
    and reader failures come back as `AnalysisError`s."""
    read = read_module_and_calls(text, file, default_trip_count, early_exit)
    return read.functions, read.errors


# The caller of the calls a module makes at its top level (CPython names that code `<module>`).
MODULE_CALLER = "<module>"


def _module_sites(info: _ModuleInfo) -> list[tuple[int | None, _Site]]:
    """The calls the module's own top-level code makes (a script's ``main(100)`` under ``if
    __name__ == "__main__":``): a program's entry, as C's main() is, passing the sizes the
    program runs at. Its names are module constants where the module binds them once."""
    if info.code is None:
        return []
    reader = _FunctionReader(info.code, *info._args, module=info)
    out: list[tuple[int | None, _Site]] = []
    for start in sorted(reader.live):
        _, facts = reader._simulate(start)
        for ins in reader.blocks[start].instrs:
            fact = facts.get(ins.offset, ())
            if fact and fact[0] == "call" and len(fact) > 5 and isinstance(fact[5], _Site):
                out.append((reader.line_of[ins.offset], fact[5]))
    return out


@dataclass
class ModuleRead:
    """A module's functions, and the calls each makes as the stack interpreter saw them
    (`ccls.readers.python_calls` turns those into call-site records)."""

    functions: list[FunctionIR]
    errors: list[AnalysisError]
    sites: dict[str, list[tuple[int | None, _Site]]] = field(default_factory=dict)  # caller → (line, call)
    module: _ModuleInfo | None = None
    # function → the instance attributes it reads as sizes (``self.degree``), by symbol
    attributes: dict[str, dict[str, "_Attribute"]] = field(default_factory=dict)


def read_module_and_calls(text: str, file: str, default_trip_count: int = 100,
                          early_exit: str = "expected") -> ModuleRead:
    """`read_module`, keeping each function's calls as well."""
    source, lines = _compilable(text)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarnings must not become errors or stderr noise
            module = compile(source, file, "exec", dont_inherit=True, optimize=0)
    except SyntaxError as e:  # includes IndentationError / TabError
        return ModuleRead([], [AnalysisError(file, e.lineno, e.msg or str(e))])
    except (ValueError, OverflowError, RecursionError, MemoryError) as e:  # null bytes, too deep, too big
        return ModuleRead([], [AnalysisError(file, None, f"{type(e).__name__}: {e}")])
    functions: list[FunctionIR] = []
    errors: list[AnalysisError] = []
    sites: dict[str, list[tuple[int | None, _Site]]] = {}
    info = _ModuleInfo(module, file, lines, default_trip_count, early_exit)
    attributes: dict[str, dict[str, _Attribute]] = {}
    try:
        sites[MODULE_CALLER] = _module_sites(info)
    except Exception as e:  # noqa: BLE001 — a reader bug must not cost the file its functions
        errors.append(AnalysisError(file, None, f"internal error reading the module's top-level calls: "
                                                f"{type(e).__name__}: {e}"))
    for code in _function_codes(module):
        try:
            functions.append(_read_function(code, file, lines, default_trip_count, early_exit, info, sites,
                                            attributes))
        except Exception as e:  # noqa: BLE001 — a reader bug must not take the editor down
            errors.append(AnalysisError(file, code.co_firstlineno,
                                        f"internal error reading bytecode of {code.co_qualname}: "
                                        f"{type(e).__name__}: {e}"))
    return ModuleRead(functions, errors, sites, info, attributes)
