"""Call sites of a Python module: what each call to a function of the same module passes, as the
`CallSite` records `ccls.sizes` follows (the C front end reads the same from LLVM IR).

`bench(10)`, `main(n=100000)`, `Board(SIZE)` (its `__init__`), `self.step(n // 2)` (the method of
the caller's class): an integer argument is a constant, a caller's parameter or arithmetic on
those; a sequence argument of known length passes that length as the callee's ``len(param)``
(``solve([0] * 50)``). Parameters a call leaves out take the callee's default when that is an
integer literal or a module constant. Nothing is run: the values come from the bytecode's stack
interpreter and the module's syntax tree (for defaults and decorators).

Which function a call reaches is decided by name, as Python would look it up in this module: a
module-level function or class; a nested function of the caller; ``self.m`` in a method (the
method of the caller's class, else the module's only method of that name); ``obj.m`` (the
module's only method of that name). A call that could reach several of the module's functions
is left out; so are calls through ``*args``/``**kwargs`` and 3.13's keyword calls. The module's
own top-level code (a script's ``if __name__ == "__main__": main(100)``) calls as ``<module>``,
a caller with no parameters: it passes what is constant there, as C's main() does. A function
(or a class, or a bound method of an object the module makes: ``richard.run``) handed to an API
that calls it with the arguments after it (``executor.submit(work, 100)``,
pyperf's ``runner.bench_func("name", work, 100)``) is called with them; pyperf's
``bench_time_func("name", work, 100)`` calls ``work(loops, 100)``, its own loop count first.
An option of the parsed command line (``args.width`` after ``args = parser.parse_args()``)
passes its ``add_argument(..., default=100)``: what the program runs with when given none.

An instance attribute that ``__init__`` binds once from its parameters (``self.degree = degree``)
is a size of the methods that read it: a record from ``__init__`` to each passes the value.
``planner.m(edits)`` on a global the module assigns (not a module, function or class it binds)
is a method call as ``obj.m()`` is. A parameter whose default is a module constant of known
length (``bodies=SYSTEM``) takes that length where a call leaves it out. The copy and pickle
protocols call ``__setstate__(state)`` with the instance's ``__dict__``: as many items as the
attributes its class sets.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Iterator

from ccls.model import CallSite
from ccls.polynomial import Polynomial
from ccls.readers.call_sites import NOT_PASSED, Expr, ModuleCalls
from ccls.readers.python_ast import syntax_tree
from ccls.readers.python_bytecode import MODULE_CALLER, ModuleRead, _length, _Site, _Val, named_difference


@dataclass(frozen=True)
class _Def:
    """A function as the syntax tree declares it."""

    qualname: str
    kind: str  # "function" | "method" | "staticmethod" | "classmethod"
    defaults: dict[str, Expr] = field(default_factory=dict)  # parameter → integer default
    positional: int | None = None  # positional parameters (self included), None with *args
    optional: int = 0  # how many of them have a default
    lengths: dict[str, Expr] = field(default_factory=dict)  # parameter → length of its default


def length_parameter(name: str) -> str:
    """The size symbol for the length of a parameter, as the reader writes it (``len(a)``)."""
    return f"len({name})"


def module_calls(read: ModuleRead, file: str, text: str) -> ModuleCalls:
    """The module's functions (each with its parameters, then ``len(p)`` of each) and the calls
    its functions make to them, with what each passes."""
    return module_calls_and_targets(read, file, text)[0]


def module_calls_and_targets(read: ModuleRead, file: str,
                             text: str) -> tuple[ModuleCalls, dict[str, dict[str, str]], dict[str, list[str]]]:
    """`module_calls`, per caller the module function each call name of its reaches
    (``self.step`` → ``Walker.step``, ``Board`` → ``Board.__init__``), where `_resolve` decides
    one for every call of that name: the callee the inclusive cost follows; and per callee the
    notes of the sizes its calls pass only as values made at run time (`_settle_run_time_values`)."""
    parameters = {f.name: tuple(f.parameters) + tuple(length_parameter(p) for p in f.parameters)
                  for f in read.functions}
    own = {f.name: list(f.parameters) for f in read.functions}
    attribute_sites = _attribute_sites(read, parameters, own)
    defs = _definitions(text, read)
    methods: dict[str, list[str]] = {}
    for d in defs.values():
        if d.kind != "function":
            methods.setdefault(d.qualname.rsplit(".", 1)[-1], []).append(d.qualname)
    classes = {q.rsplit(".", 1)[0] for q, d in defs.items() if d.kind != "function" and "<locals>" not in q
               and "." not in q.rsplit(".", 1)[0]}
    objects = _global_objects(text)
    command_line = _command_line(text, read)
    sites: list[CallSite] = []
    targets: dict[str, dict[str, str | None]] = {}
    for caller, calls in read.sites.items():
        if caller not in own and caller != MODULE_CALLER:
            continue
        caller_def = defs.get(caller)
        caller_params = own.get(caller, [])  # the module's top level has none: only constants pass
        known = set(caller_params) | {length_parameter(p) for p in caller_params}
        named = targets.setdefault(caller, {})
        for line, site in calls:
            target = _resolve(caller, caller_def, caller_params, site, own, defs, methods, classes, objects)
            if site.func.name and site.func.direct:  # the name the reader gave the call (Instruction.callee)
                reached = target[0] if target is not None else None
                named[site.func.name] = reached if named.get(site.func.name, reached) == reached else None
            if target is None:
                site = _passed_on(site, own, defs, classes, methods, objects)
                target = _resolve(caller, caller_def, caller_params, site, own, defs, methods, classes, objects) \
                    if site is not None else None
            if target is None:
                continue
            callee, bound = target
            args = _arguments(site, own[callee], bound, defs.get(callee), known, command_line,
                              data=caller != MODULE_CALLER)
            if args is not None and any(a is not None for a in args):
                sites.append(CallSite(caller, callee, line, args))
    sites += _protocol_sites(text, read, own)
    sites, guessed = _settle_run_time_values(sites, parameters,
                                             read.module.default_trip_count if read.module is not None else 100)
    renamed = {caller: {name: callee for name, callee in named.items() if callee is not None and callee != name}
               for caller, named in targets.items()}
    # Only this module's calls reach its functions: never a C call to a function of that name.
    return (ModuleCalls(file, parameters, tuple(sites + attribute_sites), internal=frozenset(parameters)),
            {caller: named for caller, named in renamed.items() if named}, guessed)


def _protocol_sites(text: str, read: ModuleRead, own: dict[str, list[str]]) -> list[CallSite]:
    """Calls the copy and pickle protocols make: ``copy.copy``/``deepcopy``/``pickle.loads``
    rebuild an instance by calling its ``__setstate__(state)`` with the state ``__reduce_ex__``
    gave: the instance's ``__dict__`` (the default ``__getstate__``, or a ``__reduce__`` that
    returns ``self.__dict__`` third), as many items as the attributes its class's methods set
    on ``self``. Not when the class gives another state (its own ``__getstate__``, a
    ``__reduce__`` returning something else, ``__slots__``) or the attributes are not all
    named (``setattr``, ``self.__dict__[k] = …``)."""
    try:
        tree = syntax_tree(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    out: list[CallSite] = []

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.ClassDef):
                qualname = f"{prefix}{node.name}"
                _setstate_site(node, qualname, own, read, out)
                visit(node.body, f"{qualname}.")
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                visit(node.body, f"{prefix}{node.name}.<locals>.")
            else:
                for child in ast.iter_child_nodes(node):
                    if isinstance(child, ast.stmt):
                        visit([child], prefix)

    visit(tree.body, "")
    return out


def _setstate_site(node: ast.ClassDef, qualname: str, own: dict[str, list[str]], read: ModuleRead,
                   out: list[CallSite]) -> None:
    methods = {m.name: m for m in node.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))}
    callee = f"{qualname}.__setstate__"
    if callee not in own or len(own[callee]) != 2 or "__getstate__" in methods or any(
            isinstance(t, ast.Name) and t.id == "__slots__" for a in node.body if isinstance(a, ast.Assign)
            for t in a.targets):
        return
    for name in ("__reduce__", "__reduce_ex__"):
        if name in methods:
            returns = [r.value for r in ast.walk(methods[name]) if isinstance(r, ast.Return)]
            this = methods[name].args.args[0].arg if methods[name].args.args else None
            if not returns or not all(isinstance(v, ast.Tuple) and len(v.elts) >= 3
                                      and isinstance(v.elts[2], ast.Attribute) and v.elts[2].attr == "__dict__"
                                      and isinstance(v.elts[2].value, ast.Name) and v.elts[2].value.id == this
                                      for v in returns):
                return
    names: set[str] = set()
    for method in methods.values():
        if not method.args.args:
            continue
        this = method.args.args[0].arg
        for inner in ast.walk(method):
            targets = inner.targets if isinstance(inner, ast.Assign) else [inner.target] \
                if isinstance(inner, (ast.AugAssign, ast.AnnAssign)) else []
            for t in targets:
                if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == this:
                    names.add(t.attr)
            if isinstance(inner, ast.Call) and isinstance(inner.func, ast.Name) and inner.func.id == "setattr":
                return
            if isinstance(inner, ast.Subscript) and isinstance(inner.value, ast.Attribute) \
                    and inner.value.attr == "__dict__" and isinstance(inner.ctx, ast.Store):
                return
    if not names:
        return
    state = own[callee][1]
    function = next((f for f in read.functions if f.name == callee), None)
    if function is not None:
        function.assumptions.append(
            f"len({state}) = {len(names)}: copy and pickle call {callee}({state}) with the instance's "
            f"__dict__, the {len(names)} attribute(s) {qualname}'s methods set ({', '.join(sorted(names))})")
    params = own[callee] + [length_parameter(p) for p in own[callee]]
    args = tuple(("const", len(names)) if p == length_parameter(state) else None for p in params)
    out.append(CallSite(MODULE_CALLER, callee, methods["__setstate__"].lineno, args))


def _attribute_sites(read: ModuleRead, parameters: dict[str, tuple[str, ...]],
                     own: dict[str, list[str]]) -> list[CallSite]:
    """An attribute bound once, in ``__init__`` (``self.degree = degree``), is a size of each method
    that reads it (``self.degree``, ``len(self.knots)``), set where the instance is made: a record
    from ``__init__`` to the method, passing the value it stores, so that `ccls.sizes` follows the
    calls that create instances (``Spline(points, 3, knots)``) into it. Adds those symbols to the
    methods' parameters."""
    out: list[CallSite] = []
    trips = {f.name: {s for loop in f.loops.values() for s in loop.trip_count.iterations.symbols}
             for f in read.functions}
    for function, reads in read.attributes.items():
        if function not in parameters:
            continue
        cls = next(iter(reads.values())).cls
        init = f"{cls}.__init__"
        if init not in own:
            continue
        known = set(own[init]) | {length_parameter(p) for p in own[init]}
        given: dict[str, tuple[Polynomial, int | None]] = {}  # size symbol → its value in __init__, line
        for symbol, attribute in sorted(reads.items()):
            for name, value in ((symbol, attribute.poly), (length_parameter(symbol), attribute.length)):
                if value is not None:
                    given[name] = (value, attribute.line)
        # A range between two of them (`range(self.degree - 1, len(self.knots) - self.degree)`)
        # is one size of its own, as many items as the difference of what __init__ stores.
        for name in sorted(trips.get(function, ())):
            difference = named_difference(name)
            if difference is not None and difference.symbols and difference.symbols <= set(given):
                value = difference
                for symbol in difference.symbols:
                    value = value.substitute(symbol, given[symbol][0])
                given[name] = (value, min((given[s][1] or 0 for s in difference.symbols), default=None) or None)
        for name, (value, line) in given.items():
            expr = _expr(value, known)
            if expr is None:
                continue
            parameters[function] += (name,)
            args = (NOT_PASSED,) * (len(parameters[function]) - 1) + (expr,)
            out.append(CallSite(init, function, line, args))
    return out


# APIs documented to call the callable they are given with the positional arguments that follow
# it: concurrent.futures Executor.submit(fn, *args); asyncio's loop.call_soon / call_soon_threadsafe
# / call_later / call_at (callback, *args), loop.run_in_executor(executor, func, *args),
# asyncio.to_thread(func, *args); atexit.register(func, *args); functools.partial(func, *args);
# contextlib.ExitStack.callback(callback, *args); unittest's addCleanup / addClassCleanup
# (function, *args); weakref.finalize(obj, func, *args); pyperf's Runner.bench_func(name, func,
# *args), the harness of pyperformance. (The arity check below leaves out map(f, xs), which
# passes items, not xs.)
_CALLS_WITH_ARGUMENTS = frozenset(("submit", "call_soon", "call_soon_threadsafe", "call_later", "call_at",
                                   "run_in_executor", "to_thread", "register", "partial", "callback",
                                   "addCleanup", "addClassCleanup", "finalize", "bench_func"))
# APIs documented to call it with a value of their own first, then those arguments: pyperf's
# Runner.bench_time_func(name, time_func, *args) calls time_func(loops, *args), the loop count
# its calibration chooses (not known here: that parameter is passed nothing).
_CALLS_WITH_LEADING_VALUE = frozenset(("bench_time_func",))


_UNKNOWN_ARG = _Val()


def _passed_on(site: _Site, own: dict[str, list[str]], defs: dict[str, _Def], classes: set[str],
               methods: dict[str, list[str]], objects: frozenset[str]) -> _Site | None:
    """``executor.submit(work, 100)``, ``runner.bench_func("name", work, 100)``: an API that calls
    the module's function it is handed with the positional arguments after it, as the call
    ``work(100)``; only when their number fits the function's positional parameters (those
    without a default at least, all of them at most)."""
    api = site.func.attr or site.func.name
    if api not in _CALLS_WITH_ARGUMENTS | _CALLS_WITH_LEADING_VALUE or site.keywords:
        return None
    lead = (_UNKNOWN_ARG,) if api in _CALLS_WITH_LEADING_VALUE else ()
    for index, value in enumerate(site.args):
        handed = _handed(value, own, defs, classes, methods, objects)
        if handed is None:
            continue  # the executor of run_in_executor(EXECUTOR, work, 4), not a function of ours
        callee, bound, func = handed
        definition = defs.get(callee)
        if definition is None or definition.positional is None:
            return None
        rest = lead + site.args[index + 1:]
        if lead and len(rest) == 1:
            return None  # nothing passed but the loop count: nothing to tell
        if not definition.positional - definition.optional <= len(rest) + bound <= definition.positional:
            return None
        return _Site(func, None, rest, None)
    return None


def _handed(value: _Val, own: dict[str, list[str]], defs: dict[str, _Def], classes: set[str],
            methods: dict[str, list[str]], objects: frozenset[str]) -> tuple[str, int, _Val] | None:
    """The module function a callable handed to an API runs, the arguments bound before the
    API's own (self), and the callable as a call names it: a function; a class (its
    ``__init__``); a bound method of an object (``richard.run`` after ``richard = Richards()``,
    a local or a global the module assigns: the module's only method of that name, as `_resolve`
    takes ``obj.m()``)."""
    name = value.name if value.is_global and value.owner is None else None
    if name is not None and "." not in name:
        callee = f"{name}.__init__" if name in classes else name
        return (callee, int(callee != name), _Val(name=name, direct=True, is_global=True)) if callee in own else None
    owner = value.owner
    if owner is None or not value.attr:
        return None
    if (owner.from_global or owner.is_global) and not (owner.is_global and owner.owner is None
                                                        and owner.name in objects):
        return None  # a module's function (math.sqrt), not a method of one of ours
    candidates = methods.get(value.attr, [])
    if len(candidates) != 1 or candidates[0] not in own:
        return None
    return candidates[0], 0 if defs[candidates[0]].kind == "staticmethod" else 1, value


def _resolve(caller: str, caller_def: _Def | None, caller_params: list[str], site: _Site,
             own: dict[str, list[str]], defs: dict[str, _Def], methods: dict[str, list[str]],
             classes: set[str], objects: frozenset[str] = frozenset()) -> tuple[str, int] | None:
    """(callee, arguments bound before the call's own: 1 for self or cls) for a call to one of
    the module's functions, or None. ``objects``: globals the module assigns values to (not
    modules, functions or classes): ``planner.m()`` on one is a method call, as ``obj.m()``."""
    func = site.func
    if func.owner is None and func.attr is None:
        if func.is_global and func.name in own and "." not in func.name:
            return func.name, 0
        if func.is_global and func.name in classes:  # instantiation runs the class's __init__
            init = f"{func.name}.__init__"
            return (init, 1) if init in own else None
        nested = f"{caller}.<locals>.{func.var or func.name}"
        if (func.var or func.name) and nested in own:
            return nested, 0
        return None
    owner, attr = func.owner, func.attr
    if owner is None or not attr:
        return None
    if owner.is_global and owner.name in classes:  # Class.method(obj, …), Class.create(…)
        target = f"{owner.name}.{attr}"
        if target not in own:
            return None
        return target, 1 if defs[target].kind == "classmethod" else 0
    if (owner.from_global or owner.is_global) and not (owner.is_global and owner.owner is None
                                                        and owner.name in objects):
        return None  # a module's function (math.sqrt), not one of ours
    candidates = methods.get(attr, [])
    if caller_def is not None and caller_def.kind in ("method", "classmethod") and caller_params \
            and owner.var == caller_params[0]:
        mine = f"{caller.rsplit('.', 1)[0]}.{attr}"
        if mine in own:
            candidates = [mine]
    if len(candidates) != 1 or candidates[0] not in own:
        return None
    target = candidates[0]
    return target, 0 if defs[target].kind == "staticmethod" else 1


def _arguments(site: _Site, params: list[str], bound: int, definition: _Def | None,
               known: set[str], command_line: tuple[frozenset[str], dict[str, Expr]] = (frozenset(), {}),
               data: bool = False) -> tuple | None:
    """The call's value for each of the callee's parameters, then for ``len(p)`` of each
    (``args.width`` of a parsed command line: the option's default, `_command_line`). With
    `data` (a call inside the program's functions), a value made at run time is `RUN_TIME`; at the
    module's top level it is an input (``int(sys.argv[1])``) and passes nothing."""
    n_keywords = len(site.keywords or ())
    positional = site.args[:len(site.args) - n_keywords] if n_keywords else site.args
    values: dict[str, _Val] = {}
    for index, value in enumerate(positional):
        if bound + index >= len(params):
            break  # into *args: not a named parameter
        values[params[bound + index]] = value
    for name, value in zip(site.keywords or (), site.args[len(site.args) - n_keywords:]):
        if name in params:
            values[name] = value
    ints: list[Expr | None] = []
    lengths: list[Expr | None] = []
    for index, name in enumerate(params):
        if index < bound:
            ints.append(None)
            lengths.append(None)
            continue
        value = values.get(name)
        if value is None:
            ints.append(definition.defaults.get(name) if definition is not None else None)
            lengths.append(definition.lengths.get(name) if definition is not None else None)
            continue
        ints.append(_expr(value.poly, known) if value.poly is not None else _option_default(value, command_line))
        size = _length(value)
        lengths.append(_expr(size[0], known) if size is not None and size[1] != "unknown" else None)
        if data and _made_at_run_time(value):
            ints[-1] = RUN_TIME if ints[-1] is None and value.container is None and not value.is_str else ints[-1]
            lengths[-1] = RUN_TIME if lengths[-1] is None and value.poly is None else lengths[-1]
    return tuple(ints + lengths)


# What a call inside the program's functions passes that the program computes as it runs: an
# attribute's list (``board.history``), a list built in a loop of unknown count, a number read from
# its data (``hex.count``). Such a size is a guess of the same kind as the count of a loop that
# nothing bounds, so it is taken at the default trip count (`_settle_run_time_values`), as
# ``self.<attr>`` sizes no call sets are (`_ModuleInfo.attribute`): not at the default parameter
# value, which stands for an input size (an entry point's, or what the top level reads: argv).
RUN_TIME = ("run time",)


def _made_at_run_time(value: _Val) -> bool:
    """Whether an argument is a value the program makes as it runs (not a literal, not None, not
    the loop count an API such as pyperf's bench_time_func chooses: `_UNKNOWN_ARG`)."""
    return value is not _UNKNOWN_ARG and not value.literal and not value.is_none and value.code is None


def _settle_run_time_values(sites: list[CallSite], parameters: dict[str, tuple[str, ...]],
                            default_trip_count: int) -> tuple[list[CallSite], dict[str, list[str]]]:
    """Each `RUN_TIME` argument as the default trip count, where no call of the same function
    states a value for that parameter (a constant, a caller's parameter: those decide, the
    run-time one stays unknown, as before); calls left passing nothing are dropped. The sites,
    and per callee a note for each parameter so taken."""
    stated = {(s.callee, i) for s in sites for i, a in enumerate(s.args) if a is not None and a != RUN_TIME}
    out: list[CallSite] = []
    lines: dict[tuple[str, int], list[int]] = {}
    for s in sites:
        args = tuple(a if a != RUN_TIME else None if (s.callee, i) in stated else ("const", default_trip_count)
                     for i, a in enumerate(s.args))
        for i, a in enumerate(s.args):
            if a == RUN_TIME and args[i] is not None:
                lines.setdefault((s.callee, i), []).append(s.line)
        if any(a is not None for a in args):
            out.append(replace(s, args=args) if args != s.args else s)
    notes: dict[str, list[str]] = {}
    for (callee, i), at in sorted(lines.items()):
        where = ", ".join(str(line) for line in sorted({line for line in at if line is not None}))
        notes.setdefault(callee, []).append(
            f"{parameters[callee][i]} taken as {default_trip_count}, the default trip count: the call"
            f"{'s' if len(at) > 1 else ''}{f' at line {where}' if where else ''} pass{'' if len(at) > 1 else 'es'} "
            f"a value the program makes as it runs (its data, not an input size), as unknown as a loop's count")
    return out, notes


def _option_default(value: _Val, command_line: tuple[frozenset[str], dict[str, Expr]]) -> Expr | None:
    """``args.width`` where ``args`` holds a parsed command line: the option's default."""
    parsed, defaults = command_line
    owner = value.owner
    if owner is None or value.attr not in defaults or not ({owner.var, owner.name} & parsed):
        return None
    return defaults[value.attr]


def _expr(p: Polynomial, known: set[str]) -> Expr | None:
    """A polynomial over the caller's parameters (and their lengths) as a call-site expression;
    None when it mentions anything else (a loop index, a log)."""
    out: Expr | None = None
    for monomial, coeff in p.terms:
        term: Expr | None = None
        for symbol, power in monomial:
            if symbol not in known:
                return None
            for _ in range(power):
                term = ("param", symbol) if term is None else ("op", "mul", term, ("param", symbol))
        coeff = Fraction(coeff)
        if term is None:
            term = ("const", coeff.numerator)
        elif coeff.numerator != 1:
            term = ("op", "mul", ("const", coeff.numerator), term)
        if coeff.denominator != 1:
            term = ("op", "sdiv", term, ("const", coeff.denominator))
        out = term if out is None else ("op", "add", out, term)
    return out if out is not None else ("const", 0)


def _global_objects(text: str) -> frozenset[str]:
    """Module globals bound only by assignment (``planner = None`` at the top level, ``global
    planner; planner = Planner()`` in a function), never by ``import``, ``def`` or ``class``:
    names of objects, whose ``.m()`` is a method call, not a module's function."""
    try:
        tree = syntax_tree(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return frozenset()
    assigned: set[str] = set()
    other: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Global):
            assigned.update(node.names)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            other.update((a.asname or a.name).split(".")[0] for a in node.names)
    for node in tree.body:
        for inner in ast.walk(node):
            if isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                other.add(inner.name)
    for node in _top_level_statements(tree.body):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] \
            if isinstance(node, (ast.AnnAssign, ast.AugAssign)) else []
        assigned.update(t.id for t in targets if isinstance(t, ast.Name))
    return frozenset(assigned - other)


def _top_level_statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The module's own statements, those inside its top-level ``if``/``try``/``with``/``for``
    blocks too (``if __name__ == "__main__": runner = …``): they bind module globals."""
    for node in body:
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.stmt):
                    yield from _top_level_statements([child])


def _constant(node: ast.expr | None, module, part: str) -> Expr | None:
    """A module constant's value (``part`` "poly") or length ("length": ``bodies=SYSTEM``, a
    list of 5), where that is a whole number."""
    value = module.constant(node.id) if isinstance(node, ast.Name) and module is not None else None
    held = getattr(value, part) if value is not None else None
    number = held.constant_value() if held is not None else None
    return ("const", int(number)) if number is not None and number.denominator == 1 else None


def _integer(node: ast.expr | None, module) -> Expr | None:
    """An integer literal (``-3`` too) or a module constant that is one, as a default is written."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return ("const", node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _integer(node.operand, module)
        return ("const", -inner[1]) if inner is not None else None
    return _constant(node, module, "poly")


def _command_line(text: str, read: ModuleRead) -> tuple[frozenset[str], dict[str, Expr]]:
    """The names the module binds to parsed command lines (``args = parser.parse_args()``) and
    each option's integer default (``add_argument("--width", type=int, default=100)`` → width):
    what ``args.width`` holds when the program runs without that option, as a parameter holds
    its default. An option declared twice with different defaults is left out."""
    try:
        tree = syntax_tree(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return frozenset(), {}
    parsed: set[str] = set()
    found: dict[str, Expr | None] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) \
                and isinstance(node.value.func, ast.Attribute) and node.value.func.attr == "parse_args":
            parsed.update(t.id for t in node.targets if isinstance(t, ast.Name))
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "add_argument"):
            continue
        keywords = {k.arg: k.value for k in node.keywords if k.arg}
        names = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        if "default" not in keywords or not names:
            continue
        dest = keywords["dest"].value if isinstance(keywords.get("dest"), ast.Constant) else \
            next((n for n in names if n.startswith("--")), names[0]).lstrip("-").replace("-", "_")
        value = _integer(keywords["default"], read.module)
        found[dest] = value if found.get(dest, value) == value else None
    return frozenset(parsed), {k: v for k, v in found.items() if v is not None}


def _definitions(text: str, read: ModuleRead) -> dict[str, _Def]:
    """Every function the syntax tree declares, by qualified name: whether it is a method (and
    which kind), and its parameters' integer defaults."""
    try:
        tree = syntax_tree(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    module = read.module
    out: dict[str, _Def] = {}

    def visit(body: list[ast.stmt], prefix: str, in_class: bool) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                qualname = f"{prefix}{node.name}"
                decorators = {d.id for d in node.decorator_list if isinstance(d, ast.Name)}
                kind = ("staticmethod" if "staticmethod" in decorators else "classmethod"
                        if "classmethod" in decorators else "method") if in_class else "function"
                a = node.args
                positional = a.posonlyargs + a.args
                given = list(zip([p.arg for p in positional[len(positional) - len(a.defaults):]], a.defaults))
                given += [(p.arg, d) for p, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None]
                defaults = {name: _integer(d, module) for name, d in given}
                lengths = {name: _constant(d, module, "length") for name, d in given}
                out[qualname] = _Def(qualname, kind, {k: v for k, v in defaults.items() if v is not None},
                                     None if a.vararg is not None else len(positional), len(a.defaults),
                                     {k: v for k, v in lengths.items() if v is not None})
                visit(node.body, f"{qualname}.<locals>.", False)
            elif isinstance(node, ast.ClassDef):
                visit(node.body, f"{prefix}{node.name}.", True)
            else:
                for child in ast.iter_child_nodes(node):  # if/try/with/for bodies at the same level
                    if isinstance(child, ast.stmt):
                        visit([child], prefix, in_class)

    visit(tree.body, "", False)
    return out
