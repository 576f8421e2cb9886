"""Sizes a program passes its own functions: the constant values each function's parameters
receive at its call sites, followed through the call graph (a → b → c passing `n` on).

A program that says `int n = N; kernel(n, a);` runs `kernel` at n = N, not at ccls's default;
its numbers are evaluated there and the assumption says where the value came from. The cost
expression stays symbolic. Pure: call-site records in, values out; nothing is run.
"""
from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from typing import Iterable

from ccls.model import CallSite, CountedFunction
from ccls.readers.call_sites import NOT_PASSED, Expr, ModuleCalls
from ccls.readers.global_constants import value_at

MAX_VALUES = 16  # distinct values kept per parameter (a recursion n → n − 1 would go on)
MAX_ROUNDS = 16  # passes over the call sites: how deep a chain of calls values follow
_LIMIT = 1 << 62  # arithmetic beyond this is not a size


@dataclass(frozen=True)
class InferredSize:
    """A parameter's value from its call sites: the largest constant it receives, where from,
    and the others (the numbers are evaluated at the largest, a bound for the others)."""

    value: int  # or, for a pointer parameter, the ("addr", global, offset, fields) it receives
    origin: str  # "the call at main.c:141"
    others: tuple[tuple[int, str], ...] = ()  # other values, each with its call
    unknown_at: tuple[str, ...] = ()  # calls that pass a value not known at compile time
    others_are: str = "also called with"  # how the others came (a global's: "also set to")

    def describe(self, name: str) -> str:
        text = f"{name} = {self.value} from {self.origin}"
        if self.others:
            shown = ", ".join(f"{value} ({origin})" for value, origin in self.others[:4])
            more = f" and {len(self.others) - 4} more" if len(self.others) > 4 else ""
            text += f"; {self.others_are} {shown}{more}"
        if self.unknown_at:
            text += f"; also called with a value known only at run time ({', '.join(self.unknown_at[:3])})"
        return text


@dataclass(frozen=True)
class ValueCeiling:
    """A size no call site sets whose values are bounded (an 8-bit integer, a range LLVM
    proves): evaluated at that bound where the default value is more."""

    value: int
    why: str
    default: float

    def describe(self, name: str) -> str:
        return f"{name} = {self.value}, the most it can be: {self.why} (the default {self.default:g} is not a value it can have)"


def value_ceilings(ceilings: dict[str, tuple[int, str]], inferred: dict, options) -> dict[str, ValueCeiling]:
    """The sizes `ceilings` (FunctionIR.value_ceilings) bounds below the default value, for
    symbols neither the call sites (`inferred`) nor the user set."""
    return {name: ValueCeiling(most, why, options.default_parameter_value) for name, (most, why) in ceilings.items()
            if name not in inferred and not options.given(name) and most < options.default_parameter_value}


FunctionKey = tuple[str, str]  # (file, symbol)


def module_of(path: str, functions: Iterable[CountedFunction]) -> ModuleCalls:
    """A file's call sites again, from its counted functions (what the language server keeps
    per function, cached or freshly compiled)."""
    functions = list(functions)
    # Only a Python module's own calls reach its functions (ccls.readers.python_calls): never a C call.
    return ModuleCalls(path, {fn.name: tuple(fn.size_slots or fn.parameters) for fn in functions},
                       tuple(site for fn in functions for site in fn.call_sites),
                       internal=frozenset(fn.name for fn in functions if fn.language == "python"),
                       field_stores=tuple(store for fn in functions for store in fn.field_stores))


def infer_sizes(modules: Iterable[ModuleCalls]) -> dict[FunctionKey, dict[str, InferredSize]]:
    """Per function (file, symbol): its parameters that receive constants at call sites in
    `modules`, and the integer globals (as "@G") every write of the program gives known values.
    A call resolves to the caller's own module's definition, else to any other module's
    non-static definition of that name."""
    modules = [_with_dispatched_calls(module) for module in modules]
    defined: dict[str, list[tuple[ModuleCalls, str]]] = {}
    for module in modules:
        for symbol in module.parameters:
            if symbol not in module.internal:
                defined.setdefault(symbol, []).append((module, symbol))
    values, unknown, fields = _propagate(modules, defined)
    if fields:  # a field written from a parameter some call passes a run-time value holds that too
        known_fields = _field_values(modules, values, unknown)
        if known_fields != fields:
            values, unknown, fields = _propagate(modules, defined, known_fields)
    out: dict[FunctionKey, dict[str, InferredSize]] = {}
    if known_globals := _global_values(fields):  # what any function may read of them
        for module in modules:
            for symbol in module.parameters:
                out[(module.file, symbol)] = dict(known_globals)
    for (function, name), found in values.items():
        ranked = sorted(found.items(), key=lambda item: -item[0] if isinstance(item[0], int) else 0)
        (value, origin), others = ranked[0], tuple(ranked[1:])
        out.setdefault(function, {})[name] = InferredSize(value, origin, others,
                                                          tuple(dict.fromkeys(unknown.get((function, name), ()))))
    return out


def _propagate(modules: list[ModuleCalls], defined: dict, fields_given: dict | None = None) -> tuple[dict, dict, dict]:
    """Values flowed through the calls (and struct fields, found along the way unless given)
    until nothing changes; then the calls that pass values not known here."""
    values: dict[tuple[FunctionKey, str], dict[int, str]] = {}
    unknown: dict[tuple[FunctionKey, str], list[str]] = {}
    fields = fields_given or {}
    # First with only exact values, then with the bounds of what stays undecided (a table entry at
    # an index not known, a search whose tests are not): a bound taken while values were still on
    # their way would stay among the values for good.
    for settled in (False, True):
        for _ in range(MAX_ROUNDS):
            changed = False
            for module in modules:
                for site in module.sites:
                    for callee_module in _targets(site, module, defined):
                        changed |= _visit(site, module, callee_module, values, None, fields, settled)
            if fields_given is None:
                found = _field_values(modules, values, settled=settled)
                changed |= found != fields
                fields = found
            if not changed:
                break
    for module in modules:  # what stays unknown once everything known has flowed
        for site in module.sites:
            for callee_module in _targets(site, module, defined):
                _visit(site, module, callee_module, values, unknown, fields)
    return values, unknown, fields


def _field_values(modules: list[ModuleCalls], values: dict, unknown_params: dict | None = None,
                  settled: bool = True) -> dict[tuple[str, int], dict[int, str]]:
    """The values each struct field can hold, where every write the program makes to it stores
    a value known at compile time (`ctx->rounds = nr` with nr 10, 12 or 14 from the calls): a
    configuration set once and read by the code that uses it. A field written with a run-time
    value, or from itself (a counter: `s->n++`), anywhere in the program holds values not known
    here: it gets none. Copies of the field into itself (`dst->rounds = src->rounds`) add none."""
    found: dict[tuple[str, int], dict[int, str]] = {}
    unknown: set[tuple[str, int]] = set()
    for module in modules:
        for store in module.field_stores:
            key = (store.struct, store.offset)
            if store.value == ("field", *key) or key in unknown:
                continue
            writer = (module.file, store.writer)
            where = f"the write at {os.path.basename(module.file)}" + (f":{store.line}" if store.line else "") \
                if store.writer else f"its initial value in {os.path.basename(module.file)}"
            known = _evaluate(store.value, lambda p: values.get((writer, p)), where, settled=settled) \
                if store.value is not None and not _reads_field(store.value) else None
            if known and unknown_params and any((writer, p) in unknown_params for p in _parameters_in(store.value)):
                known = None
            if not known or not all(isinstance(v, int) for v in known):
                unknown.add(key)
                continue
            slot = found.setdefault(key, {})
            for value, origin in known.items():
                slot.setdefault(value, origin)
    return {key: slot for key, slot in found.items() if key not in unknown and len(slot) <= MAX_VALUES}


def _global_values(fields: dict[tuple[str, int], dict[int, str]]) -> dict[str, InferredSize]:
    """The integer globals (one-field structs `@G`, `ccls.readers.global_stores`) every write of
    the program gives a value known here: "@G" → its largest value, where from, and the others."""
    out: dict[str, InferredSize] = {}
    for (struct, offset), found in fields.items():
        if struct.startswith("@") and offset == 0 and found and all(isinstance(v, int) for v in found):
            ranked = sorted(found.items(), key=lambda item: -item[0])
            out[struct] = InferredSize(ranked[0][0], ranked[0][1], tuple(ranked[1:]), others_are="also set to")
    return out


def sizes_of_globals(symbols: dict[str, tuple[str, int]], passed: dict[str, InferredSize]) -> dict[str, InferredSize]:
    """A function's sizes read from integer globals (FunctionIR.global_symbols: symbol →
    (global, bits)) whose values every write of the program gives (`infer_sizes` passes them to
    every function as "@G"), where they fit the global's type."""
    return {symbol: passed[f"@{name}"] for symbol, (name, bits) in symbols.items()
            if f"@{name}" in passed and 0 <= passed[f"@{name}"].value < 1 << bits}


# Operations whose result rises with that operand (the other known, sizes non-negative): a
# bound on the operand bounds the result.
_RISES_WITH_LEFT = {"add", "mul", "shl", "sub", "sdiv", "udiv", "lshr", "ashr"}
_RISES_WITH_RIGHT = {"add", "mul", "shl"}


def _parts(expr: Expr) -> tuple:
    """The expressions `expr` is computed from. A search loop's tests are not among them: they
    only pick, among the values its counter can have, the one it leaves with (its bound holds
    whatever they read)."""
    if expr[0] == "op":
        return expr[2:]
    if expr[0] == "choice":
        return expr[1]
    if expr[0] == "entry":
        return (expr[3],)
    return ()


def _holds_most(expr: Expr | None) -> bool:
    """Whether an expression reads a value that may be known only as a bound (`("most", n, …)`,
    a table entry or a search's counter where what decides it is not known)."""
    if expr is None:
        return False
    if expr[0] in ("most", "entry", "search"):
        return True
    return any(_holds_most(part) for part in _parts(expr))


def _parameters_in(expr: Expr) -> set[str]:
    if expr[0] == "param":
        return {expr[1]}
    return {name for part in _parts(expr) if part is not None for name in _parameters_in(part)}


def _reads_field(expr: Expr) -> bool:
    if expr[0] == "field":
        return True
    return any(part is not None and _reads_field(part) for part in _parts(expr))


def _with_dispatched_calls(module: ModuleCalls) -> ModuleCalls:
    """`module` with the calls its dispatchers make for their callers: where `time_function(f,
    arg)` calls `f(&args)`, `time_function(&s174, &m)` calls s174 with time_function's
    arguments bound to what that call passes (`arg` → `&m`). A callback, a thread's start
    routine or a harness's kernel gets its sizes from each call of its dispatcher that hands
    it over, and from no other: the call is followed per handing-over call, never merged."""
    handed: dict[str, list[CallSite]] = {}
    for site in module.sites:
        handed.setdefault(site.callee, []).append(site)
    extra = []
    for inner in module.sites:
        names = module.parameters.get(inner.caller, ())
        if not inner.callee.startswith("%") or inner.callee[1:] not in names:
            continue
        index = names.index(inner.callee[1:])
        for outer in handed.get(inner.caller, ()):
            target = outer.args[index] if index < len(outer.args) else None
            if target is None or target[0] != "function":
                continue
            bound = dict(zip(names, outer.args))
            extra.append(CallSite(outer.caller, target[1], outer.line, tuple(_bound(a, bound) for a in inner.args),
                                  through=inner.caller))
    return dataclasses.replace(module, sites=module.sites + tuple(extra)) if extra else module


def _bound(expr: Expr | None, values: dict) -> Expr | None:
    """`expr` with the caller's parameters replaced by what one call passes for them (None
    where that is not known; a local keeps the fields that stay known)."""
    if expr is None or expr == NOT_PASSED:
        return None
    kind = expr[0]
    if kind == "param":
        value = values.get(expr[1])
        return None if value == NOT_PASSED else value
    if kind == "op":
        left, right = _bound(expr[2], values), _bound(expr[3], values)
        return None if left is None or right is None else ("op", expr[1], left, right)
    if kind == "choice":
        options = [_bound(option, values) for option in expr[1]]
        return None if any(option is None for option in options) else ("choice", tuple(options))
    if kind == "local":
        fields = tuple((offset, bits, part) for offset, bits, value in expr[2]
                       if (part := _bound(value, values)) is not None)
        return ("local", expr[1], fields) if fields else None
    if kind in ("entry", "search"):  # its tests and index read the dispatcher's parameters: not rebound here
        return None if "'param'" in repr(expr) else expr
    return expr


def _targets(site: CallSite, module: ModuleCalls, defined: dict) -> list[ModuleCalls]:
    if site.callee.startswith("%"):  # through a parameter: `_with_dispatched_calls` made its calls
        return []
    if site.callee in module.parameters:
        return [module]
    return [other for other, _ in defined.get(site.callee, ()) if other is not module]


def _visit(site: CallSite, module: ModuleCalls, callee_module: ModuleCalls,
           values: dict[tuple[FunctionKey, str], dict[int, str]], unknown: dict | None,
           fields: dict[tuple[str, int], dict[int, str]] | None = None, settled: bool = True) -> bool:
    """Adds what one call passes to its callee's parameters; True if anything was new. With
    `unknown`, also notes the calls whose value for a parameter is not known."""
    caller: FunctionKey = (module.file, site.caller)
    callee: FunctionKey = (callee_module.file, site.callee)
    names = callee_module.parameters[site.callee]
    where = f"the call at {os.path.basename(module.file)}" + (f":{site.line}" if site.line else "") \
        + (f" through {site.through}" if site.through else "")
    changed = False
    for name, expr in zip(names, site.args):
        if not name or expr == NOT_PASSED:
            continue
        known = _evaluate(expr, lambda p: values.get((caller, p)), where, (fields or {}).get, settled=settled) \
            if expr is not None else None
        if not known:
            if unknown is not None and where not in unknown.setdefault((callee, name), []):
                unknown[(callee, name)].append(where)
            continue
        slot = values.setdefault((callee, name), {})
        for value, origin in known.items():
            if slot and isinstance(value, int) != isinstance(next(iter(slot)), int):
                continue  # an integer where addresses arrive (or the reverse): not one parameter's values
            if value not in slot and (len(slot) < MAX_VALUES or isinstance(value, int) and value > min(slot)):
                slot[value] = origin
                if len(slot) > MAX_VALUES:
                    del slot[min(slot)]
                changed = True
    return changed


MAX_SEARCH_STEPS = 4096  # iterations a search loop is stepped through (LLVM's exhaustive evaluation stops at 100)
_COMPARE = {"eq": lambda a, b: a == b, "ne": lambda a, b: a != b,
            "slt": lambda a, b: a < b, "ult": lambda a, b: a < b, "sle": lambda a, b: a <= b, "ule": lambda a, b: a <= b,
            "sgt": lambda a, b: a > b, "ugt": lambda a, b: a > b, "sge": lambda a, b: a >= b, "uge": lambda a, b: a >= b}


MAX_SEARCH_INPUTS = 16  # combinations of the values a search's tests read that are each stepped through


def _search_exits(expr: Expr, parameter: callable, field: callable) -> dict[int, tuple] | None:
    """The counter's values where a search loop leaves (`ccls.readers.search_loops`), stepping it
    through the header's test and the body's once for each combination of the values its tests
    read (parameters, globals): exit → the inputs that lead there. None where a test reads
    anything not known exactly."""
    _, start, step, stay, leave, _ = expr
    tests = (stay, leave)
    names = sorted({name for test in tests for part in test[2:4] for name in _parameters_in(part)})
    keys = sorted({key for test in tests for part in test[2:4] for key in _fields_in(part)})
    choices = []
    for name in names:
        known = parameter(name)
        if not known:
            return None
        choices.append([("param", name, value) for value in known])
    for key in keys:
        known = field(key)
        if not known:
            return None
        choices.append([("field", key, value) for value in known])
    combinations = [()]
    for options in choices:
        combinations = [(*done, option) for done in combinations for option in options]
        if len(combinations) > MAX_SEARCH_INPUTS:
            return None
    out: dict[int, tuple] = {}
    for inputs in combinations:
        given = {(kind, name): value for kind, name, value in inputs}
        found = _search_exit(start, step, tests, lambda p: {given[("param", p)]: ""} if ("param", p) in given else None,
                             lambda k: {given[("field", k)]: ""} if ("field", k) in given else None)
        if found is None:
            return None
        out.setdefault(found, inputs)
    return out


def _search_exit(start: int, step: int, tests: tuple, parameter: callable, field: callable) -> int | None:
    """Where the counter leaves with each value its tests read known exactly."""
    def holds(test: tuple, counter: int) -> bool | None:
        _, predicate, left, right, when = test
        a = _evaluate(left, parameter, "", field, counter)
        b = _evaluate(right, parameter, "", field, counter)
        if not a or not b or len(a) != 1 or len(b) != 1:
            return None
        (a,), (b,) = a, b
        if not isinstance(a, int) or not isinstance(b, int) or predicate not in _COMPARE:
            return None
        return _COMPARE[predicate](a, b) == when

    counter = start
    for _ in range(MAX_SEARCH_STEPS):
        stays = holds(tests[0], counter)
        if not stays:
            return counter if stays is False else None
        leaves = holds(tests[1], counter)
        if leaves is None or leaves:
            return counter if leaves else None
        counter += step
    return None


def _fields_in(expr: Expr) -> set:
    if expr[0] == "field":
        return {expr[1:3]}
    return {key for part in _parts(expr) if part is not None for key in _fields_in(part)}


def _evaluate(expr: Expr, parameter: callable, where: str, field: callable = lambda key: None,
              counter: int | None = None, settled: bool = True) -> dict[int, str] | None:
    """The values `expr` can take, each with where it came from; None if any part is unknown.
    With `counter` (a search loop's test at that value of its counter), only exact values;
    unless `settled`, no bound for a table entry or a search not decided (yet)."""
    kind = expr[0]
    if kind == "const":
        return {expr[1]: where}
    if kind == "counter":
        return {counter: where} if counter is not None else None
    if kind == "search":
        found = _search_exits(expr, parameter, field) if counter is None else None
        if found:
            return {value: f"{where}, a search loop's counter, {value} where it leaves" + (
                " at " + ", ".join(f"{name if kind == 'param' else name[0].lstrip('@')} = {given}"
                                   for kind, name, given in inputs) if inputs else "")
                    for value, inputs in found.items()}
        return _evaluate(expr[5], parameter, where, field, counter) if expr[5] is not None and settled else None
    if kind == "entry":  # ("entry", table, entries, index, most)
        # only an index known exactly picks an entry (the bound of an index bounds no entry)
        indices = _evaluate(expr[3], parameter, where, field, counter, False) if expr[3] is not None else None
        if indices and all(isinstance(i, int) and 0 <= i < len(expr[2]) for i in indices):
            return {expr[2][i]: origin if origin != where else f"{where}, reading read-only {expr[1]}[{i}]"
                    for i, origin in indices.items()}
        return _evaluate(expr[4], parameter, where, field, counter) if settled else None
    if kind == "field":  # a struct's field the program only ever sets to known values
        known = field(expr[1:3])
        if not known:
            return None
        if expr[1].startswith("@"):  # an integer global (`ccls.readers.global_stores`)
            return {value: f"{where}, reading global {expr[1][1:]}, set to {value} by {origin}"
                    for value, origin in known.items()}
        return {value: f"{where}, passing struct {expr[1]}'s field at byte {expr[2]}, set to {value} by {origin}"
                for value, origin in known.items()}
    if kind == "most" and (counter is not None or not settled):
        return None  # a bound: a search's test, a table's index need the value itself
    if kind == "most":  # an entry of a read-only table (`ccls.readers.global_stores`): at most its largest reachable
        if expr[2] == "a loop counter":
            return {expr[1]: f"{where}, a loop counter, at most {expr[1]} where its loop leaves"}
        return {expr[1]: f"{where}, reading read-only {expr[2]}, whose entries its index reaches are at most {expr[1]}"}
    if kind == "addr":  # a pointer into a read-only global: its contents travel with it
        return {expr: where} if len(expr) == 4 and expr[3] else None
    if kind == "local":  # a pointer to the caller's local: the fields it stores one known value in
        fields = []
        for offset, bits, part in expr[2]:
            known = _evaluate(part, parameter, where, field, settled=settled)
            if known and len(known) == 1:
                fields.append((offset, bits, next(iter(known))))
        return {("addr", expr[1], 0, tuple(fields)): where} if fields else None
    if kind == "param":
        known = parameter(expr[1])
        if not known:
            return None
        return {value: f"{where}, passing on {expr[1]} = {value} from {origin}" for value, origin in known.items()}
    if kind == "choice":
        out: dict[int, str] = {}
        for option in expr[1]:
            part = _evaluate(option, parameter, where, field, counter, settled)
            if part is None:
                return None
            for value, origin in part.items():
                out.setdefault(value, origin)
        return out
    if kind == "op":
        if counter is None and (_holds_most(expr[2]) and expr[1] not in _RISES_WITH_LEFT
                                or _holds_most(expr[3]) and expr[1] not in _RISES_WITH_RIGHT):
            return None  # a bound where the result does not rise with it (`64 - n`, `n & 7`): no bound of the result
        left = _evaluate(expr[2], parameter, where, field, counter, settled)
        right = _evaluate(expr[3], parameter, where, field, counter, settled)
        if left is None or right is None:
            return None
        out = {}
        for a, origin in list(left.items())[:MAX_VALUES]:
            for b, other in list(right.items())[:MAX_VALUES]:
                if not isinstance(a, int) or not isinstance(b, int):
                    continue
                value = _apply(expr[1], a, b)
                if value is not None:
                    out.setdefault(value, origin if origin != where else other)
        return out or None
    return None


def _apply(opcode: str, a: int, b: int) -> int | None:
    if opcode == "add":
        value = a + b
    elif opcode == "sub":
        value = a - b
    elif opcode == "mul":
        value = a * b
    elif opcode == "shl":
        value = a << b if 0 <= b < 63 else None
    elif opcode in ("sdiv", "udiv"):
        value = int(a / b) if b else None
    elif opcode in ("lshr", "ashr"):
        value = a >> b if 0 <= b < 63 else None
    elif opcode == "and":
        value = a & b
    elif opcode == "or":
        value = a | b
    elif opcode == "xor":
        value = a ^ b
    else:
        value = None
    return value if value is not None and abs(value) < _LIMIT else None


def field_sizes(fields: dict[str, tuple[str, int, int]], inferred: dict[str, InferredSize]) -> dict[str, InferredSize]:
    """Sizes a function reads through its pointer parameters (`params->depth`: symbol →
    (parameter, byte offset, bits), and the offsets of the pointers it loads on the way, as in
    `*(int *)args->arg`) where every known call passes a pointer into a read-only global, or to
    a local its caller stores in, whose integer at that offset is known: evaluated at the
    largest, like a parameter."""
    out: dict[str, InferredSize] = {}
    for symbol, (parameter, offset, bits, *through) in fields.items():
        size = inferred.get(parameter)
        if size is None or isinstance(size.value, int):
            continue
        found: dict[int, str] = {}
        for address, origin in ((size.value, size.origin), *size.others):
            holder = _pointed_to(address, tuple(through[0]) if through else ())
            value = value_at(holder[3], holder[2] + offset, bits) if holder is not None else None
            if not isinstance(value, int):
                found = {}
                break
            found.setdefault(value, f"{_spelled(holder)}, passed by {origin}")
        if found:
            ranked = sorted(found.items(), key=lambda item: -item[0])
            out[symbol] = InferredSize(ranked[0][0], ranked[0][1], tuple(ranked[1:]), size.unknown_at)
    return out


def _pointed_to(address: tuple, pointers: tuple[int, ...]) -> tuple | None:
    """The address reached by loading the pointer stored at each of `pointers` in turn."""
    for offset in pointers:
        address = value_at(address[3], address[2] + offset, 64)
        if not isinstance(address, tuple) or address[0] != "addr":
            return None
    return address


def _spelled(address: tuple) -> str:
    if " in " in address[1]:  # a local: "n1 in main"
        name, function = address[1].split(" in ", 1)
        return f"what {function} stores in its local {name}" + (f" at byte {address[2]}" if address[2] else "")
    return f"read-only &{address[1]}" + (f" + {address[2]} bytes" if address[2] else "")
