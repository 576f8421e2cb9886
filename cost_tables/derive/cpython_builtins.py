"""Measure the per-element cost of CPython builtins whose work grows with their argument.

    python3 cost_tables/derive/cpython_builtins.py   # ~1 minute; run on an otherwise idle machine

The Python reader charges a call such as ``sorted(a)`` its bytecode (the call itself, priced by
cpython_bytecode.py) plus ``work units × py.work.<kind>``, where the number of work units follows
the operation's documented complexity (CPython wiki, "TimeComplexity",
https://wiki.python.org/moin/TimeComplexity): n·log₂ n for a sort, n for a copy, a scan or a
reduction, n characters for a string method. This script measures the price of one unit.

Method: each operation runs on inputs of n = 250 … 4,000 elements, cache-resident and around the
default size 1000 (random ints, or a string of n characters); time per call is the minimum over repeats with the garbage collector off (as
timeit does). The cost of one unit is the least-squares slope of time against units with a free
intercept, so the call's fixed overhead (already charged as bytecode) stays out of it.

The bytecode classes were measured on another day, perhaps on another machine or a busier one.
So that a unit of work and a bytecode stay in proportion, the same run times a few of
cpython_bytecode.py's snippets and compares them with what the table predicts for them (its
fitted ns per family × each snippet's traced family counts): units are divided by that ratio
(``speed_ratio``: this run's ns per table ns) before they become cycles at the table's clock.

Fixed costs (``FIXED``): work that grows with nothing but that bytecode does not show. Calling a
class (``Board(size)``, py.work.new) allocates the instance and reaches ``__init__`` through
type.__call__ and slot_tp_init, a C-level call that 3.11 does not inline as it does a
Python-to-Python call. It is timed as the difference between ``c = C(a)`` and ``c = f(o, a)``,
where ``f`` runs the same body as ``C.__init__`` on an existing object; the instance's
deallocation (when the next one replaces it in ``c``) is included. Some builtins do many times the
work of a plain builtin call (``len(a)``, ``abs(x)``: py.call alone) whatever their arguments:
min/max of several values (py.work.varargs: in 3.11 an argument tuple and a keyword parse per
call) and builtin types that make a new object (py.work.object: ``range(n)``, ``zip(a, b)``,
``int(x)``, …); each is timed against a C function of the same call shape that does next to
nothing (``abs``, ``operator.is_``). ``--only py.work.new`` measures one class again and keeps
the others.

A return to an interpreted caller after a long call (py.work.resume, charged by ccls.cold_resume)
refetches the caller's frame, code and data from beyond L2: the same few statements are timed
after a call that walks objects filling L2 four times over and after a call that does nothing.

Raw times go to cpython-<ver>-builtins-measurements.json; cpython_bytecode.py (also ``--refit``)
folds the slopes into cost_tables/cpython-<ver>.json as the py.work.* classes.
"""
from __future__ import annotations

import array
import datetime
import gc
import json
import operator
import platform
import random
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
VERSION = f"{sys.version_info.major}.{sys.version_info.minor}"
MEASUREMENTS = HERE / f"cpython-{VERSION}-builtins-measurements.json"
SIZES = (250, 500, 1000, 2000, 4000)  # cache-resident, around the default size 1000


def _ints(n: int) -> list[int]:
    rng = random.Random(n)
    return [rng.randrange(1 << 30) for _ in range(n)]


_ARRAY_D = array.array("d", [0.0])


def _text(n: int) -> str:
    rng = random.Random(n)
    return "".join(rng.choice("abcdefghij klmnop") for _ in range(n))


# work class → (what the TimeComplexity page lists, units of work for size n, {label: (setup, op)})
# Each op takes the prepared input and does the operation once.
OPERATIONS: dict[str, tuple[str, str, dict]] = {
    "py.work.sort": ("list.sort / sorted: O(n log n)", "n·log2(n) comparisons", {
        "sorted(list of random ints)": (_ints, sorted),
    }),
    "py.work.copy": ("copy, slice, list()/tuple(), extend: O(n) (O(k) for a k-element slice)", "n elements", {
        "list(a)": (_ints, list), "tuple(a)": (_ints, tuple), "a[:]": (_ints, lambda a: a[:]),
    }),
    "py.work.move": ("list.insert / list.pop(i) / reverse: O(n) (the item pointers after i are moved)",
                     "n elements moved", {
        "a.insert(0, x); a.pop(0)": (_ints, lambda a: (a.insert(0, -1), a.pop(0))),
    }),
    "py.work.hash": ("set(a) / dict building: O(n) (O(1) average per insert)", "n elements", {
        "set(a)": (_ints, set), "dict.fromkeys(a)": (_ints, dict.fromkeys),
    }),
    "py.work.scan": ("x in list, list.index, list.count: O(n)", "n elements compared", {
        "-1 in a (absent)": (_ints, lambda a: -1 in a), "a.count(-1)": (_ints, lambda a: a.count(-1)),
    }),
    "py.work.sum": ("sum / any / all over a sequence: O(n)", "n elements", {
        "sum(a)": (_ints, sum), "any(0 for each)": (lambda n: [0] * n, any),
        "all(1 for each)": (lambda n: [1] * n, all),
    }),
    "py.work.minmax": ("min / max over a sequence: O(n)", "n elements compared", {
        "min(a)": (_ints, min), "max(a)": (_ints, max),
    }),
    # Repeating a flat buffer copies its bytes (memset/memcpy): no reference counts, unlike a
    # list's repetition (py.work.copy). One unit is one byte of the result (an array('d') item is 8).
    "py.work.fill": ("repetition of a flat sequence (str * n, bytes * n, array * n): O(len x n), the items' "
                     "bytes copied, no references counted", "n bytes made", {
        "array('d', [0]) * (n // 8)": (lambda n: n // 8, lambda k: _ARRAY_D * k),
        "'-' * n": (lambda n: n, lambda n: "-" * n),
        "b'ab' * (n // 2)": (lambda n: n // 2, lambda k: b"ab" * k),
    }),
    "py.work.join": ("str.join: O(n) in the number of pieces", "n pieces", {
        "','.join(n short strs)": (lambda n: [str(x) for x in _ints(n)], ",".join),
    }),
    "py.work.char": ("str methods (replace, strip, lower, upper, find …): O(n) in characters",
                     "n characters", {
        "s.replace(' ', '_')": (_text, lambda s: s.replace(" ", "_")), "s.upper()": (_text, str.upper),
        "s.strip('x')": (lambda n: "x" * (n // 2) + _text(n - n // 2), lambda s: s.strip("x")),
        "s.find('z') (absent)": (_text, lambda s: s.find("z")),
    }),
    "py.work.split": ("str.split / splitlines: O(n) in characters (one new string per piece)",
                      "n characters", {
        "s.split()": (_text, str.split), "s.split(' ')": (_text, lambda s: s.split(" ")),
    }),
}


class _Point:
    def __init__(self, v):
        self.x = v


class _Slotted:
    __slots__ = ("x",)

    def __init__(self, v):
        self.x = v


class _Pair:
    def __init__(self, v, w):
        self.x = v
        self.y = w


def _set_x(o, v):
    o.x = v


def _set_xy(o, v, w):
    o.x = v
    o.y = w


def _loop(stmt: str, names: dict):
    """``for _ in range(n): <stmt>`` as a function of n, its names fast locals (as in cpython_bytecode.py)."""
    params = ", ".join(names)
    src = f"def run(n, {params}):\n    for _ in range(n):\n        {stmt}\n"
    scope: dict = {}
    exec(compile(src, f"<{stmt}>", "exec"), scope)
    fn = scope["run"]
    return lambda n: fn(n, **names)


# Fixed costs: one operation that bytecode does not show, timed as the difference of two
# statements that run the same Python code but for that operation.
# class → (what it is, {label: (statement with the operation, the same without it, names)})
FIXED: dict[str, tuple[str, dict]] = {
    "py.work.new": ("calling a class: type.__call__ allocates the instance, finds __init__ and calls it "
                    "(a C-level call, not 3.11's inlined Python-to-Python call), and the instance is freed "
                    "when the next one replaces it", {
                        "C(a), __init__ sets one attribute": ("c = C(a)", "c = f(o, a)",
                                                              {"C": _Point, "f": _set_x, "o": _Point(0), "a": 3}),
                        "C(a) with __slots__": ("c = C(a)", "c = f(o, a)",
                                                {"C": _Slotted, "f": _set_x, "o": _Slotted(0), "a": 3}),
                        "C(a, b), __init__ sets two attributes": ("c = C(a, b)", "c = f(o, a, b)",
                                                                  {"C": _Pair, "f": _set_xy, "o": _Pair(0, 0),
                                                                   "a": 3, "b": 4}),
                    }),
    # Builtins whose own work is many times a plain builtin call's (len, abs), whatever their
    # arguments' sizes: each timed against a C function of the same call shape that does next to
    # nothing (abs of a small int, operator.is_), every callable a fast local as in the loop above.
    "py.work.varargs": ("min()/max() of several values: 3.11 calls them with an argument tuple, parses their "
                        "key=/default= keywords and iterates the tuple, comparing each value", {
                            "min(a, b)": ("c = min(a, b)", "c = is_(a, b)", {"min": min, "is_": operator.is_,
                                                                            "a": 3, "b": 4}),
                            "max(a, b)": ("c = max(a, b)", "c = is_(a, b)", {"max": max, "is_": operator.is_,
                                                                            "a": 3, "b": 4}),
                        }),
    "py.work.object": ("calling a builtin type that makes a new object (range, enumerate, zip, reversed, map, "
                       "filter; int, str, round): type.__call__ (or the type's vectorcall), the object's "
                       "allocation, and its deallocation when the next one replaces it", {
                           "range(n)": ("c = range(a)", "c = abs(a)", {"range": range, "abs": abs, "a": 100}),
                           "enumerate(l)": ("c = enumerate(a)", "c = abs(b)",
                                            {"enumerate": enumerate, "abs": abs, "a": [1, 2, 3], "b": 3}),
                           "zip(l, m)": ("c = zip(a, b)", "c = is_(a, b)",
                                         {"zip": zip, "is_": operator.is_, "a": [1, 2, 3], "b": [4, 5, 6]}),
                           "reversed(l)": ("c = reversed(a)", "c = abs(b)",
                                           {"reversed": reversed, "abs": abs, "a": [1, 2, 3], "b": 3}),
                           "map(f, l)": ("c = map(f, a)", "c = is_(f, a)",
                                         {"map": map, "is_": operator.is_, "f": abs, "a": [1, 2, 3]}),
                           "int(x)": ("c = int(x)", "c = abs(x)", {"int": int, "abs": abs, "x": 2.5}),
                           "str(n)": ("c = str(a)", "c = abs(a)", {"str": str, "abs": abs, "a": 1234}),
                           "round(x)": ("c = round(x)", "c = abs(x)", {"round": round, "abs": abs, "x": 2.5}),
                       }),
}


# Returning to an interpreted caller after a long call (py.work.resume): the caller's frame, code,
# constants and the dict entries and objects it reads next were evicted by the callee's own data.
# Timed as the same few statements after a call that walks objects filling L2 several times over
# and after a call that does nothing; the difference is the cold restart. Only L2 is cycled (the
# least a callee past ccls's threshold has done), so heavier callees, which cycle L3 too, cost more.
RESUME_FOOTPRINT_BYTES = 4 * 512 * 1024  # four times the measuring machine's L2 (lscpu: 512 KiB per core)
RESUME_WHAT = ("returning to an interpreted caller after a call long enough to cycle L2: the statements it runs "
               "next refetch its frame, code, constants and the objects they read")


class _Item:
    def __init__(self, v):
        self.a = v
        self.b = 2.0


def _walk(items):  # a typical loop over a program's objects: attribute reads and float arithmetic
    s = 0.0
    for o in items:
        s += o.a * o.b
    return s


def _nothing(items):
    return 0.0


_RESUMED = {  # statements a caller runs after the call: locals, globals, attributes, a subscript, a C call
    "attributes and arithmetic": "o = objs[3]; x = o.a + g; y = o.b * x; p = objs[5]; q = p.a + p.b * y",
    "a C call and a subscript": "o = objs[2]; z = floor(o.b * g); p = objs[6]; q = p.a + z",
    "a list built and read": "o = objs[4]; t = [o.a, o.b, g]; w = t[1] + len(t) * objs[1].a",
}


def _resumed(stmt: str):
    """``callee(items)`` then ``stmt``, timed around ``stmt`` alone (ns)."""
    src = (f"def run(callee, items, objs, g, floor, clock):\n    callee(items)\n    t0 = clock()\n"
           f"    {stmt}\n    return clock() - t0\n")
    scope: dict = {}
    exec(compile(src, "<resume>", "exec"), scope)
    return scope["run"]


def measure_resume(repeats: int = 41) -> dict:
    items = [_Item(i) for i in range(RESUME_FOOTPRINT_BYTES // 150)]  # ~150 bytes per instance and its float
    objs = [_Item(i) for i in range(8)]
    import math
    rows = []
    for label, stmt in _RESUMED.items():
        run = _resumed(stmt)
        args = (objs, 5, math.floor, time.perf_counter_ns)
        run(_nothing, items, *args)
        run(_walk, items, *args)  # warm up: let the adaptive interpreter specialise
        cold, warm = [], []
        gc.disable()
        try:
            for _ in range(repeats):  # alternated, so that a change in the machine's load hits both
                cold.append(run(_walk, items, *args))
                warm.append(run(_nothing, items, *args))
        finally:
            gc.enable()
        t_cold, t_warm = float(np.median(cold)), float(np.median(warm))  # medians: one timing per call
        rows.append({"op": label, "statement": stmt, "baseline_statement": "the same after a call that does nothing",
                     "ns": t_cold, "baseline_ns": t_warm, "ns_per_unit": t_cold - t_warm})
        print(f"py.work.resume  {label:40s} {t_cold - t_warm:7.1f} ns ({t_cold:.0f} - {t_warm:.0f})")
    method = ("median over [{ops}] of the median time of the statements run after a call that walks objects filling "
              f"{RESUME_FOOTPRINT_BYTES // 1024} KiB less after a call that does nothing, {repeats} calls each, alternated")
    return {"py.work.resume": {"complexity": RESUME_WHAT, "units": "one per return from such a call", "fixed": True,
                               "method": method,
                               "n": repeats, "footprint_bytes": RESUME_FOOTPRINT_BYTES,
                               "ns_per_unit": float(np.median([r["ns_per_unit"] for r in rows])), "ops": rows}}


def measure_fixed(n: int = 20000, repeats: int = 41) -> dict:
    out = {}
    for cls, (what, ops) in FIXED.items():
        rows = []
        for label, (with_op, without, names) in ops.items():
            full, bare = _loop(with_op, names), _loop(without, names)
            full(200)
            bare(200)  # warm up: let the adaptive interpreter specialise
            t_full = t_bare = float("inf")
            for _ in range(repeats):  # alternated, so that a change in the machine's load hits both
                t_full = min(t_full, best_ns(full, n, 1) / n)
                t_bare = min(t_bare, best_ns(bare, n, 1) / n)
            rows.append({"op": label, "statement": with_op, "baseline_statement": without,
                         "ns": t_full, "baseline_ns": t_bare, "ns_per_unit": t_full - t_bare})
            print(f"{cls:15s} {label:40s} {t_full - t_bare:7.2f} ns ({t_full:.1f} - {t_bare:.1f})")
        out[cls] = {"complexity": what, "units": "one per call", "fixed": True, "n": n,
                    "ns_per_unit": float(np.median([r["ns_per_unit"] for r in rows])), "ops": rows}
    return out


def _units(cls: str, n: int) -> float:
    if cls == "py.work.move":
        return 2.0 * n  # insert(0, x) then pop(0): the n items move twice
    return n * np.log2(n) if cls == "py.work.sort" else float(n)


def best_ns(op, data, repeats: int) -> float:
    best = float("inf")
    gc.disable()
    try:
        for _ in range(repeats):
            t0 = time.perf_counter_ns()
            op(data)
            best = min(best, time.perf_counter_ns() - t0)
    finally:
        gc.enable()
    return float(best)


def measure(only: set[str] | None = None, repeats: int = 41) -> dict:
    out = {}
    for cls, (complexity, units, ops) in OPERATIONS.items():
        if only is not None and cls not in only:
            continue
        rows = []
        for label, (setup, op) in ops.items():
            times = []
            for n in SIZES:
                data = setup(n)
                times.append(best_ns(op, data, repeats))  # every op leaves its input as it found it
            x = np.array([_units(cls, n) for n in SIZES])
            slope, intercept = np.polyfit(x, np.array(times), 1)
            rows.append({"op": label, "sizes": list(SIZES), "ns": times, "ns_per_unit": float(slope),
                         "intercept_ns": float(intercept)})
            print(f"{cls:15s} {label:28s} {slope:7.3f} ns per unit")
        per_unit = float(np.median([r["ns_per_unit"] for r in rows]))
        out[cls] = {"complexity": complexity, "units": units, "ns_per_unit": per_unit, "ops": rows}
    return out


REFERENCE_SNIPPETS = ("add_int", "mul_float", "subscr_load", "attr_load", "call_builtin", "call_py_arg", "build_tuple")


def speed_ratio() -> dict:
    """This run's time for some of cpython_bytecode.py's snippets over the time the table's fit
    predicts for them (median over snippets)."""
    import cpython_bytecode as bc
    table = json.loads((HERE.parent / f"cpython-{VERSION}.json").read_text())["data"]["classes"]
    rows = []
    for name, stmt in bc.SNIPPETS:
        if name not in REFERENCE_SNIPPETS:
            continue
        base, full = bc.make_bench(stmt, 0), bc.make_bench(stmt, 20)
        full(200, **bc.ARGS)
        base(200, **bc.ARGS)
        c0, ck = bc.traced_counts(base), bc.traced_counts(full)
        # a family the table does not have yet (being added) is priced as the one it was split from
        predicted = sum((ck[f] - c0[f]) / 20 * table.get(f, table[f.rsplit(".", 1)[0]])["ns"] for f in bc.FAMILIES)
        measured = (bc.best_time_ns(full, 30000, 15) - bc.best_time_ns(base, 30000, 15)) / (30000 * 20)
        rows.append({"snippet": name, "measured_ns": round(measured, 3), "table_ns": round(predicted, 3)})
        print(f"reference {name:14s} {measured:6.2f} ns here, {predicted:6.2f} ns by the table")
    ratio = float(np.median([r["measured_ns"] / r["table_ns"] for r in rows]))
    return {"value": ratio, "snippets": rows}


def main(argv: list[str] | None = None) -> None:
    import argparse
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="comma-separated classes to measure again (e.g. py.work.new); the others "
                        f"are kept as {MEASUREMENTS.name} has them, and these get this run's own speed_ratio")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(HERE))
    from cpython_bytecode import cpu_info  # noqa: E402

    model, clock_hz = cpu_info()
    ratio = speed_ratio()
    only = set(args.only.split(",")) if args.only else None
    classes = {}
    if only is None or only - set(FIXED) - {"py.work.resume"}:
        classes.update(measure(only))
    if only is None or only & set(FIXED):
        classes.update({k: v for k, v in measure_fixed().items() if only is None or k in only})
    if only is None or "py.work.resume" in only:
        classes.update(measure_resume())
    ratio_after = speed_ratio()  # the machine's load may change while it measures: take the mean
    ratio = {"value": (ratio["value"] + ratio_after["value"]) / 2, "before": ratio, "after": ratio_after}
    if only is not None:  # merge: these classes carry this run's ratio and date
        saved = json.loads(MEASUREMENTS.read_text())
        for cls, m in classes.items():
            saved["classes"][cls] = {**m, "speed_ratio": ratio, "date": datetime.date.today().isoformat(),
                                     "machine": model}
        MEASUREMENTS.write_text(json.dumps(saved, indent=1) + "\n")
        print(f"updated {', '.join(sorted(classes))} in {MEASUREMENTS}; now fold it into the table: "
              f"python3 {HERE / 'cpython_bytecode.py'} --refit")
        return
    MEASUREMENTS.write_text(json.dumps(
        {"machine": model, "clock_hz": clock_hz, "python": platform.python_version(),
         "date": datetime.date.today().isoformat(), "sizes": list(SIZES), "speed_ratio": ratio,
         "reference": "https://wiki.python.org/moin/TimeComplexity", "classes": classes}, indent=1) + "\n")
    print(f"wrote {MEASUREMENTS}; now fold it into the table: python3 {HERE / 'cpython_bytecode.py'} --refit")


if __name__ == "__main__":
    main()
