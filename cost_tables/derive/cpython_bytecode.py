"""Measure CPython bytecode costs on this machine and write cost_tables/cpython-<ver>.json.

    python3 cost_tables/derive/cpython_bytecode.py          # ~1 minute; run on an otherwise idle machine
    python3 cost_tables/derive/cpython_bytecode.py --refit  # offline: fit the saved measurements again
    python3 cost_tables/derive/cpython_bytecode.py --add unpack_tuple3,listcomp_32  # measure new snippets

Method (all snippets are our own, run in this process):
1. Each snippet is one statement repeated K times inside ``for _ in range(n):`` in a generated
   function whose variables are parameters (so they are fast locals).
2. Time per statement = (t(K statements) - t(0 statements)) / (n * K), minimum over repeats,
   garbage collector off (as timeit does).
3. Executed bytecode instructions per statement come from tracing the same function once with
   per-opcode tracing (sys.settrace + f_trace_opcodes), again differenced against K = 0, and
   grouped into families with ``family()`` below (the mapping the Python reader should use).
4. Per-family cost in ns is the non-negative least-squares fit (scipy.optimize.nnls) of the
   per-statement times on the per-statement family counts, rows weighted by 1/time so every
   snippet counts by its relative error. ns -> cycles with this machine's reported clock.
5. A family split out of another (py.load.global out of py.load: a global or builtin is two
   dict lookups, a local an index; py.build.append and py.build.unpack out of py.build: neither
   allocates a container; py.build.map, py.build.set and py.build.format out of py.build: a dict
   display makes a hash table, a set display hashes its items, an f-string converts values to
   text) is fitted in a second stage, on what is left of the time of the
   snippets that run it once the others are priced, so that a split leaves the other families
   as they were. Snippets added later with ``--add`` (timed with the reference snippets of
   cpython_builtins.py and divided by that run's speed ratio) take part only in that stage.
   On a loaded machine the ratio moves between runs (1.7-4.5 on 2026-11-25): the dict, set and
   f-string snippets were added four times and each kept at its least time (the saved rows).
Raw times, counts and the fit residuals go to cpython-<ver>-measurements.json next to this script;
``--refit`` rebuilds the table from that file. The table is written through envelope.py, like the
CPU and GPU tables: a rerun whose numbers are unchanged keeps the file's date.
"""
from __future__ import annotations

import argparse
import datetime
import dis
import gc
import json
import platform
import sys
import time
from pathlib import Path

import numpy as np
from scipy.optimize import nnls

HERE = Path(__file__).resolve().parent
OUT_DIR = HERE.parent
VERSION = f"{sys.version_info.major}.{sys.version_info.minor}"
MEASUREMENTS = HERE / f"cpython-{VERSION}-measurements.json"
BUILTINS = HERE / f"cpython-{VERSION}-builtins-measurements.json"  # cpython_builtins.py: py.work.*

sys.path.insert(0, str(HERE))
from envelope import envelope, write_table  # noqa: E402

FAMILIES = ("py.load", "py.store", "py.binary_add", "py.binary_mul", "py.binary_div", "py.binary_other",
            "py.compare", "py.call", "py.branch", "py.iter", "py.build", "py.subscr", "py.attr",
            "py.return", "py.other", "py.load.global", "py.build.unpack", "py.build.append",
            "py.build.map", "py.build.set", "py.build.format")

_LOAD = {"LOAD_FAST", "LOAD_CONST", "LOAD_DEREF", "LOAD_CLOSURE",
         "LOAD_CLASSDEREF", "LOAD_FAST_CHECK", "LOAD_FAST_AND_CLEAR", "LOAD_FAST_LOAD_FAST",
         "LOAD_ASSERTION_ERROR", "LOAD_BUILD_CLASS", "LOAD_FROM_DICT_OR_DEREF"}
# A global or builtin is looked up in the module's dict, then the builtins' (3.11 specialises the
# lookup, but it still checks both dicts' versions): about three times a local's load.
_LOAD_GLOBAL = {"LOAD_GLOBAL", "LOAD_NAME", "LOAD_FROM_DICT_OR_GLOBALS"}
_STORE = {"STORE_FAST", "STORE_NAME", "STORE_GLOBAL", "STORE_DEREF", "DELETE_FAST", "DELETE_NAME",
          "DELETE_GLOBAL", "DELETE_DEREF", "STORE_FAST_LOAD_FAST", "STORE_FAST_STORE_FAST"}
_ADD = {"+", "-", "+=", "-="}
_MUL = {"*", "*="}
_DIV = {"/", "//", "%", "/=", "//=", "%="}
_COMPARE = {"COMPARE_OP", "IS_OP", "CONTAINS_OP"}
_CALL = {"CALL", "CALL_FUNCTION_EX", "CALL_KW", "CALL_INTRINSIC_1", "CALL_INTRINSIC_2"}
_ITER = {"GET_ITER", "FOR_ITER", "GET_YIELD_FROM_ITER", "END_FOR"}
_BUILD = {"BUILD_TUPLE", "BUILD_LIST", "BUILD_SET", "BUILD_MAP", "BUILD_CONST_KEY_MAP", "BUILD_STRING",
          "BUILD_SLICE", "LIST_EXTEND", "SET_UPDATE", "DICT_UPDATE",
          "DICT_MERGE", "LIST_TO_TUPLE", "FORMAT_VALUE"}
# Neither allocates a container (py.build's cost is mostly that): unpacking pushes the items it
# already holds; a comprehension's append adds one item to a list that grows geometrically.
_UNPACK = {"UNPACK_SEQUENCE", "UNPACK_EX"}
_APPEND = {"LIST_APPEND", "SET_ADD", "MAP_ADD"}
# Containers and strings that cost several times a tuple's or a list's allocation: a dict display
# makes a hash table and inserts each key; a set display hashes each item into a table; an f-string
# converts each value to text (int and float to decimal) and joins the pieces.
_BUILD_MAP = {"BUILD_MAP", "BUILD_CONST_KEY_MAP"}
_BUILD_SET = {"BUILD_SET"}
_FORMAT = {"FORMAT_VALUE", "BUILD_STRING", "FORMAT_SIMPLE", "FORMAT_WITH_SPEC", "CONVERT_VALUE"}
_SUBSCR = {"BINARY_SUBSCR", "STORE_SUBSCR", "DELETE_SUBSCR", "BINARY_SLICE", "STORE_SLICE"}
_ATTR = {"LOAD_ATTR", "STORE_ATTR", "DELETE_ATTR", "LOAD_METHOD", "LOAD_SUPER_ATTR"}
_RETURN = {"RETURN_VALUE", "RETURN_CONST", "YIELD_VALUE", "RETURN_GENERATOR"}


def family(opname: str, argrepr: str = "") -> str:
    """The py.<family> class of one bytecode instruction (CPython 3.11 opcode names; later ones
    are mapped where the name is known)."""
    if opname in _LOAD:
        return "py.load"
    if opname in _LOAD_GLOBAL:
        return "py.load.global"
    if opname in _UNPACK:
        return "py.build.unpack"
    if opname in _APPEND:
        return "py.build.append"
    if opname in _BUILD_MAP:
        return "py.build.map"
    if opname in _BUILD_SET:
        return "py.build.set"
    if opname in _FORMAT:
        return "py.build.format"
    if opname in _STORE:
        return "py.store"
    if opname == "BINARY_OP":
        return ("py.binary_add" if argrepr in _ADD else "py.binary_mul" if argrepr in _MUL
                else "py.binary_div" if argrepr in _DIV else "py.binary_other")
    if opname.startswith("UNARY_"):
        return "py.binary_other"
    if opname in _COMPARE:
        return "py.compare"
    if opname in _CALL:
        return "py.call"
    if opname.startswith(("POP_JUMP", "JUMP")):
        return "py.branch"
    if opname in _ITER:
        return "py.iter"
    if opname in _BUILD:
        return "py.build"
    if opname in _SUBSCR:
        return "py.subscr"
    if opname in _ATTR:
        return "py.attr"
    if opname in _RETURN:
        return "py.return"
    return "py.other"  # RESUME, POP_TOP, NOP, PRECALL, PUSH_NULL, KW_NAMES, COPY, SWAP, ...


class Obj:
    def __init__(self) -> None:
        self.x = 1

    def m(self):
        return None


def g():
    return None


def h(v):
    return v


def h2(v, w):
    return w


G = 7
PARAMS = "a, b, x, y, lst, d, o, t, g, h, h2, f, r"
ARGS = dict(a=3, b=5, x=2.5, y=1.5, lst=[1, 2, 3], d={"k": 1}, o=Obj(), t=(1, 2, 3), g=g, h=h, h2=h2, f=True,
            r=tuple(range(32)))

SNIPPETS = [
    ("assign_local", "c = a"), ("assign_const", "c = 1"), ("load_global", "c = G"),
    ("add_int", "c = a + b"), ("sub_int", "c = a - b"), ("add_float", "c = x + y"),
    ("iadd_int", "c = a; c += b"),
    ("mul_int", "c = a * b"), ("mul_float", "c = x * y"),
    ("truediv_float", "c = x / y"), ("floordiv_int", "c = a // b"), ("mod_int", "c = a % b"),
    ("xor_int", "c = a ^ b"), ("lshift_int", "c = a << b"), ("neg_int", "c = -a"),
    ("compare_int", "c = a < b"), ("is_op", "c = a is b"),
    ("if_fallthrough", "if a < b: c = a"), ("if_taken", "if a > b: c = a"), ("if_bool", "if f: c = a"),
    ("if_not_bool", "if not f: c = a"),
    ("subscr_load", "c = lst[1]"), ("subscr_store", "lst[1] = a"), ("dict_load", "c = d['k']"),
    ("attr_load", "c = o.x"), ("attr_store", "o.x = a"),
    ("build_tuple", "c = (a, b)"), ("build_list", "c = [a, b]"),
    ("call_py_noargs", "c = g()"), ("call_py_arg", "c = h(a)"), ("call_py_2args", "c = h2(a, b)"),
    ("call_method", "c = o.m()"), ("call_builtin", "c = len(lst)"), ("call_builtin_abs", "c = abs(a)"),
    ("for_tuple3", "for i in t: pass"), ("expr_stmt", "a"),
    # added 2026-11-24 with --add (times put in the table's time by that run's speed ratio):
    ("unpack_tuple3", "c, e, k = t"), ("listcomp_32", "c = [v for v in r]"),
    # added 2026-11-25 with --add (the same way):
    ("build_dict", "c = {a: b}"), ("build_dict_const_keys", "c = {'p': a, 'q': b}"), ("build_set", "c = {a, b}"),
    ("fstring_ints", 'c = f"{a} {b}"'), ("fstring_float", 'c = f"{x}"'),
]


def make_bench(stmt: str, k: int):
    body = "".join(f"        {stmt}\n" for _ in range(k)) or "        pass\n"
    src = f"def bench(n, {PARAMS}):\n    for _ in range(n):\n{body}"
    ns: dict = {"G": G}
    exec(compile(src, f"<bench {stmt!r} x{k}>", "exec"), ns)
    return ns["bench"]


def offset_families(code) -> dict[int, str]:
    """Family per instruction offset. The tracer reports an EXTENDED_ARG prefix in place of the
    instruction it extends, so the prefix takes that instruction's family."""
    out: dict[int, str] = {}
    pending: list[int] = []
    for ins in dis.get_instructions(code):
        if ins.opname == "EXTENDED_ARG":
            pending.append(ins.offset)
            continue
        fam = family(ins.opname, ins.argrepr)
        for off in pending:
            out[off] = fam
        pending.clear()
        out[ins.offset] = fam
    return out


def traced_counts(fn) -> dict[str, int]:
    """Dynamic family counts of one call fn(1, ...)."""
    tables: dict = {}
    counts = {f: 0 for f in FAMILIES}

    def local(frame, event, arg):
        if event == "opcode":
            code = frame.f_code
            if code not in tables:
                tables[code] = offset_families(code)
            counts[tables[code][frame.f_lasti]] += 1
        return local

    def global_trace(frame, event, arg):
        frame.f_trace_opcodes = True
        return local

    sys.settrace(global_trace)
    try:
        fn(1, **ARGS)
    finally:
        sys.settrace(None)
    return counts


def best_time_ns(fn, n: int, repeats: int) -> float:
    best = float("inf")
    gc.disable()
    try:
        for _ in range(repeats):
            t0 = time.perf_counter_ns()
            fn(n, **ARGS)
            best = min(best, time.perf_counter_ns() - t0)
    finally:
        gc.enable()
    return best


def cpu_info() -> tuple[str, float]:
    model, mhz = platform.processor() or "unknown", 0.0
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name") and model in ("", "unknown", "x86_64"):
                model = line.split(":", 1)[1].strip()
            if line.startswith("cpu MHz") and not mhz:
                mhz = float(line.split(":", 1)[1])
            if line.startswith(("cpu family", "model\t")):
                model += f"; {line.split(':', 1)[0].strip()} {line.split(':', 1)[1].strip()}"
    except OSError:
        pass
    return model, mhz * 1e6


def per_statement_counts(stmt: str, k: int = 20) -> dict[str, float]:
    """Executed instructions per statement, by family (traced, differenced against K = 0)."""
    base, full = make_bench(stmt, 0), make_bench(stmt, k)
    full(200, **ARGS)  # warm up: let the adaptive interpreter specialise
    base(200, **ARGS)
    c0, ck = traced_counts(base), traced_counts(full)
    return {f: (ck[f] - c0[f]) / k for f in FAMILIES if ck[f] - c0[f]}


def recount(rows: list[dict]) -> list[dict]:
    """Saved rows with their counts traced again under today's family(): a family split (such
    as py.load.global out of py.load) refits the saved times without measuring them again."""
    return [{**r, "counts_per_stmt": per_statement_counts(r["stmt"])} for r in rows]


def measure(k: int = 20, n: int = 30000, repeats: int = 15, names: set[str] | None = None) -> list[dict]:
    rows = []
    for name, stmt in SNIPPETS:
        if names is not None and name not in names:
            continue
        base, full = make_bench(stmt, 0), make_bench(stmt, k)
        full(200, **ARGS)  # warm up: let the adaptive interpreter specialise
        base(200, **ARGS)
        c0, ck = traced_counts(base), traced_counts(full)
        per_stmt = {f: (ck[f] - c0[f]) / k for f in FAMILIES}
        t0 = best_time_ns(base, n, repeats)
        tk = best_time_ns(full, n, repeats)
        rows.append({"snippet": name, "stmt": stmt, "ns_per_stmt": (tk - t0) / (n * k),
                     "counts_per_stmt": {f: v for f, v in per_stmt.items() if v}})
        print(f"{name:16s} {rows[-1]['ns_per_stmt']:7.2f} ns  {rows[-1]['counts_per_stmt']}")
    return rows


def added(names: set[str]) -> list[dict]:
    """Snippets measured now, in the saved table's time: each time divided by the speed ratio of
    this run (the mean of one taken before and one after)."""
    from cpython_builtins import speed_ratio
    before = speed_ratio()
    rows = measure(names=names)
    after = speed_ratio()
    ratio = (before["value"] + after["value"]) / 2
    today = datetime.date.today().isoformat()
    return [{**r, "ns_per_stmt": r["ns_per_stmt"] / ratio, "measured_ns_per_stmt": r["ns_per_stmt"],
             "speed_ratio": round(ratio, 4), "date": today} for r in rows]


def fit(rows: list[dict]) -> tuple[dict[str, float], list[dict]]:
    """ns per family, in two stages. First the families the original snippets measure together
    (NNLS over those snippets, a split family counted as the one it was split from, so that a
    split leaves them as they were fitted). Then each split family (py.load.global out of
    py.load, ...) alone, from what is left of the time of the snippets that run it once the
    others are priced; a snippet added later (``--add``, another day, put in this time by a
    speed ratio) takes part only in this second stage."""
    split = [f for f in FAMILIES if "." in f[3:]]  # py.load.global; not py.load
    parent = {f: f.rsplit(".", 1)[0] for f in split}

    def merged(r: dict) -> dict[str, float]:
        out: dict[str, float] = {}
        for f, v in r["counts_per_stmt"].items():
            out[parent.get(f, f)] = out.get(parent.get(f, f), 0.0) + v
        return out

    base = [r for r in rows if "speed_ratio" not in r]
    families = [f for f in FAMILIES if f not in parent]
    ns = dict.fromkeys(FAMILIES, 0.0)
    ns.update(_nnls([{**r, "counts_per_stmt": merged(r)} for r in base], families, lambda r: 0.0))
    running = [r for r in rows if any(r["counts_per_stmt"].get(f) for f in split)]
    if running:
        known = lambda r: sum(v * ns[f] for f, v in r["counts_per_stmt"].items() if f not in parent)  # noqa: E731
        ns.update(_nnls(running, split, known))
    resid = [{"snippet": r["snippet"], "measured_ns": round(float(r["ns_per_stmt"]), 3),
              "fitted_ns": round(float(sum(r["counts_per_stmt"].get(f, 0.0) * ns[f] for f in FAMILIES)), 3)}
             for r in rows]
    return ns, resid


def _nnls(rows: list[dict], families: list[str], known) -> dict[str, float]:
    """Non-negative least squares of each row's time, less `known(row)`, on its counts of
    `families`; rows weighted by 1/time so that every snippet counts by its relative error."""
    a = np.array([[r["counts_per_stmt"].get(f, 0.0) for f in families] for r in rows])
    t = np.array([r["ns_per_stmt"] for r in rows])
    w = 1.0 / t
    coef, _ = nnls(a * w[:, None], (t - np.array([known(r) for r in rows])) * w)
    return dict(zip(families, (float(c) for c in coef)))


def build(rows: list[dict], ns: dict[str, float], resid: list[dict], model: str, clock_hz: float,
          python_version: str, measured_on: str) -> dict:
    """The cost table for measured `rows` and their fit (`ns`, `resid`), as an envelope for write_table."""
    x86 = json.loads((OUT_DIR / "x86_64.json").read_text())["data"]["classes"]
    # Interpreter code retires ~2.5 instructions per cycle, about one in three a load (assumed):
    pj_per_cycle = 2.5 * (2 / 3 * x86["int_add"]["energy_pj"] + 1 / 3 * x86["load.L1"]["energy_pj"])
    mean_rel = float(np.mean([abs(r["fitted_ns"] - r["measured_ns"]) / r["measured_ns"] for r in resid]))
    src = (f"own microbenchmarks (cost_tables/derive/cpython_bytecode.py) on {model}, CPython "
           f"{python_version}, {measured_on}; NNLS fit over {len(rows)} snippets, mean relative "
           f"residual {mean_rel:.0%}")
    classes = {}
    for f in FAMILIES:
        cyc = ns[f] * 1e-9 * clock_hz
        source = src
        if "." in f[3:]:  # a split family: fitted in the second stage (module docstring, step 5)
            running = [r for r in rows if r["counts_per_stmt"].get(f)]
            later = sorted({f"{r['snippet']} ({r['date']}, speed ratio {r['speed_ratio']})" for r in running
                            if "speed_ratio" in r})
            source = (f"{src}; split out of {f.rsplit('.', 1)[0]} and fitted on what is left of the time of "
                      f"[{', '.join(r['snippet'] for r in running)}] once the other families are priced"
                      + (f"; added with --add: {', '.join(later)}" if later else ""))
        entry = {"cu": round(cyc, 3), "ns": round(ns[f], 3), "energy_pj": round(cyc * pj_per_cycle, 2),
                 "source": source, "method": "measured",
                 "energy_source": f"modelled: cu x {pj_per_cycle:.1f} pJ per core cycle, from cost_tables/"
                                  "x86_64.json (2.5 instructions per cycle, one in three an L1 load; assumed)",
                 "energy_method": "modelled"}
        if ns[f] == 0.0:
            entry["notes"] = "the fit attributes no separate time to this family (absorbed by others)"
        classes[f] = entry
    split = ("the fit separates call set-up from frame teardown only loosely (their sum is stable across "
             "runs, the split moves by ~30%); a Python-to-Python call costs py.call + the callee's py.return")
    classes["py.call"]["notes"] = split
    classes["py.return"]["notes"] = split
    classes["py"] = {**{k: classes["py.other"][k] for k in ("cu", "ns", "energy_pj")},
                     "source": src, "method": "measured", "energy_source": classes["py.other"]["energy_source"],
                     "energy_method": "modelled", "notes": "unqualified py = py.other"}
    classes["other"] = {**classes["py"], "notes": "anything unclassified = py.other"}
    classes.update(work_classes(pj_per_cycle, clock_hz))
    data = {
        "arch": f"cpython-{_minor(python_version)}",
        "core": f"CPython {python_version} bytecode on {model}",
        "clock_hz": {"value": clock_hz, "source": f"/proc/cpuinfo 'cpu MHz' on the measuring machine "
                     f"({model}); a KVM guest reports the nominal TSC rate, the core may boost higher, so "
                     "cycles may be underestimated by up to ~30%", "method": "measured"},
        "cache": {"l1d_bytes": 32 * 1024, "l2_bytes": 512 * 1024, "l3_bytes": 32 * 1024 * 1024,
                  "line_bytes": 64, "source": "lscpu on the measuring machine (per-core L1d 32 KiB, "
                  "L2 512 KiB, L3 32 MiB); not used for Python costs", "method": "measured"},
        "vector": {"native_bits": 64, "widths": {"64": {"cu": 1.0, "energy": 1.0}},
                   "source": "bytecode has no vector operations", "method": "modelled"},
        "classes": dict(sorted(classes.items())),
        "families": {f: "see family() in cost_tables/derive/cpython_bytecode.py" for f in FAMILIES},
    }
    return envelope(
        data,
        version="1.0.0",
        source=src,
        hardware=model,
        method="measured (timing of own snippets + NNLS per opcode family); energy modelled",
        units="cu: core cycles per executed bytecode instruction (ns x clock_hz); ns: nanoseconds; "
              "energy_pj: picojoules per executed bytecode instruction",
        notes="Specialised (adaptive) instructions after warm-up; small ints, floats, lists, dicts. "
              "py.call is the call overhead only (callee body not included; PRECALL/PUSH_NULL/KW_NAMES "
              "count as py.other); costs of C functions called (len, dict ops) are inside their "
              "bytecode. Opcode -> family mapping: family() in the derive script. Regenerate with "
              "cost_tables/derive/cpython_bytecode.py. py.work.* are one unit of work inside a builtin "
              "(sorted, list(), sum, str.join, ...), measured by cost_tables/derive/cpython_builtins.py, "
              "possibly on another machine and day (each entry's source says which).",
    )


def work_classes(pj_per_cycle: float, clock_hz: float) -> dict[str, dict]:
    """py.work.* entries (one unit of work inside a builtin such as sorted) from the per-element
    measurements cpython_builtins.py saved, in this table's time (its speed_ratio) and clock;
    none when that file is absent."""
    if not BUILTINS.exists():
        return {}
    saved = json.loads(BUILTINS.read_text())
    out = {}
    for cls, m in saved["classes"].items():
        ratio = m.get("speed_ratio", saved["speed_ratio"])["value"]  # a class measured again has its own run's
        ns = max(0.0, m["ns_per_unit"]) / ratio
        cyc = ns * 1e-9 * clock_hz
        ops = ", ".join(r["op"] for r in m["ops"])
        where = (f"own measurements (cost_tables/derive/cpython_builtins.py) on {m.get('machine', saved['machine'])}, "
                 f"CPython {saved['python']}, {m.get('date', saved['date'])}")
        scaled = (f"{m['ns_per_unit']:.3f} ns there, divided by {ratio:.3f} (that run's time for 7 of this "
                  "table's snippets over the time the table predicts for them) to put it in this table's time")
        if m.get("method"):  # a measurement that says how it was taken (py.work.resume)
            source = f"{where}: {m['method'].format(ops=ops)}; {scaled}"
            notes = f"{m['units']}: {m['complexity']}"
        elif m.get("fixed"):
            source = (f"{where}: median over [{ops}] of the time of the statement less that of the same call shape "
                      f"without the operation (a function that runs the same body, or a C function that does next "
                      f"to nothing), {m['n']} iterations, minimum over repeats; {scaled}")
            notes = f"one per call, charged beside the call's py.call: {m['complexity']}"
        else:
            source = (f"{where}: median over [{ops}] of the least-squares slope of time against {m['units']}, "
                      f"n = {min(saved['sizes'])}…{max(saved['sizes'])}; {scaled}")
            notes = (f"one unit of work inside a builtin; units per call from the documented complexity "
                     f"({m['complexity']}; {saved['reference']}), counted by the Python reader")
        out[cls] = {
            "cu": round(cyc, 3), "ns": round(ns, 3), "energy_pj": round(cyc * pj_per_cycle, 2),
            "source": source, "method": "measured",
            "energy_source": f"modelled: cu x {pj_per_cycle:.1f} pJ per core cycle (as the bytecode classes)",
            "energy_method": "modelled", "notes": notes,
        }
    return out


def _minor(python_version: str) -> str:
    """3.11.7 -> 3.11: the interpreter line a table is named after."""
    return ".".join(python_version.split(".")[:2])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--refit", action="store_true",
                        help=f"fit the measurements saved in {MEASUREMENTS.name} again instead of measuring "
                             "(offline: the saved times, with counts traced again under family(); unchanged "
                             "measurements and families rewrite the table byte for byte)")
    parser.add_argument("--add", help="comma-separated snippet names to measure now and add to the saved ones, "
                        "their times divided by this run's speed ratio (cpython_builtins.speed_ratio: this "
                        "machine's time for reference snippets over the table's), then refit")
    args = parser.parse_args(argv)
    if args.refit or args.add:
        saved = json.loads(MEASUREMENTS.read_text())
        model, clock_hz, python_version = saved["machine"], saved["clock_hz"], saved["python"]
        measured_on, rows = saved["date"], recount(saved["snippets"])
        if args.add:
            rows = [r for r in rows if r["snippet"] not in args.add.split(",")] + added(set(args.add.split(",")))
    else:
        model, clock_hz = cpu_info()
        if not clock_hz:
            raise SystemExit("no clock frequency in /proc/cpuinfo; cannot convert ns to cycles")
        python_version, measured_on = platform.python_version(), datetime.date.today().isoformat()
        rows = measure()
    ns, resid = fit(rows)
    table = build(rows, ns, resid, model, clock_hz, python_version, measured_on)
    write_table(OUT_DIR / f"{table['data']['arch']}.json", table)
    # The file keeps the counts the fit used (traced again on --refit) and the snippets added.
    MEASUREMENTS.write_text(json.dumps(
        {"machine": model, "clock_hz": clock_hz, "python": python_version, "date": measured_on,
         "ns_per_family": ns, "snippets": rows, "fit": resid}, indent=1) + "\n")
    for f in FAMILIES:
        print(f"{f:18s} {ns[f]:7.2f} ns  {ns[f] * 1e-9 * clock_hz:7.2f} cycles")
    mean_rel = float(np.mean([abs(r["fitted_ns"] - r["measured_ns"]) / r["measured_ns"] for r in resid]))
    print(f"mean relative residual {mean_rel:.1%}")


if __name__ == "__main__":
    main()
