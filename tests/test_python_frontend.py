"""Python front end: functions, loops and trip counts read from CPython bytecode (never run)."""
from __future__ import annotations

import math
import textwrap
from collections import Counter
from fractions import Fraction
from typing import get_args

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ccls.frontends import SourceFile, frontend_for
from ccls.frontends.python import analyse_python
from ccls.model import FunctionIR, Loop, TripKind
from ccls.options import AnalysisOptions
from ccls.polynomial import Polynomial
from ccls.readers.python_bytecode import is_work_loop, read_code, read_module

n, m = Polynomial.symbol("n"), Polynomial.symbol("m")


def read(source: str, default_trip_count: int = 100) -> dict[str, FunctionIR]:
    functions, errors = read_module(textwrap.dedent(source), "/src/example.py", default_trip_count)
    assert errors == []
    return {f.name: f for f in functions}


def source_loops(f: FunctionIR) -> list[Loop]:
    """Loops written in the source, without those that stand for work inside a builtin."""
    return [lp for lp in f.loops.values() if not is_work_loop(lp.id)]


def work_loops(f: FunctionIR) -> list[Loop]:
    return [lp for lp in f.loops.values() if is_work_loop(lp.id)]


def loops_by_line(f: FunctionIR) -> dict[int, Loop]:
    by_line = {lp.line: lp for lp in source_loops(f)}
    assert len(by_line) == len(source_loops(f)), "one loop per source line in these snippets"
    return by_line


def instructions(f: FunctionIR):
    return [(b, i) for b in f.blocks for i in b.instructions]


# -- functions --------------------------------------------------------------------------------
def test_finds_top_level_functions_methods_nested_functions_and_lambdas():
    fs = read("""
        def top(a, b=1, *rest, key=None, **kw):
            def helper(x):
                return x + a
            return helper(b)

        class Shape:
            def area(self, scale):
                return scale * 2

            class Inner:
                def deep(self):
                    return [i for i in range(3)]

        square = lambda v: v * v
        """)
    assert sorted(fs) == ["<lambda>", "Shape.Inner.deep", "Shape.area", "top", "top.<locals>.helper"]
    assert fs["top"].parameters == ["a", "b", "key"]  # positional + keyword-only, not *rest/**kw
    assert fs["Shape.area"].parameters == ["self", "scale"]
    assert (fs["top"].line, fs["top"].end_line) == (2, 5)
    assert fs["top.<locals>.helper"].line == 3
    assert all(f.language == "python" and f.arch == "cpython-3.11" and f.file == "/src/example.py"
               for f in fs.values())
    assert fs["top"].assumptions[0].startswith("bytecode from CPython 3.")
    assert "RESUME" in fs["top"].ir_text and "helper" in fs["top"].ir_text  # the dis listing


def test_syntax_error_is_reported_with_its_line_and_message():
    functions, errors = read_module("def ok():\n    return 1\n\ndef broken(:\n    pass\n", "/src/bad.py")
    assert functions == []
    assert len(errors) == 1
    assert errors[0].file == "/src/bad.py"
    assert errors[0].line == 4
    assert errors[0].message  # the compiler's own words, e.g. "invalid syntax"


def test_indentation_error_and_null_bytes_are_errors_not_exceptions():
    _, errors = read_module("def f():\nreturn 1\n", "/src/i.py")
    assert errors[0].line == 2 and "indent" in errors[0].message
    _, errors = read_module("x = 1\0\n", "/src/z.py")
    assert len(errors) == 1 and errors[0].file == "/src/z.py"


# -- trip counts --------------------------------------------------------------------------------
def test_range_of_a_parameter_is_symbolic_and_range_of_a_literal_is_constant():
    f = read("""
        def f(n):
            s = 0
            for i in range(n):
                s += i
            for k in range(10):
                s -= k
            return s
        """)["f"]
    loops = loops_by_line(f)
    assert loops[4].trip_count.kind == "symbolic"
    assert loops[4].trip_count.iterations == n
    assert loops[4].trip_count.source_text == "for i in range(n):"
    assert loops[6].trip_count.kind == "constant"
    assert loops[6].trip_count.iterations == Polynomial.constant(10)
    assert all(lp.depth == 1 and lp.parent is None for lp in loops.values())


def test_triangular_nest_uses_the_outer_loop_index():
    f = read("""
        def tri(n):
            c = 0
            for i in range(n):
                for j in range(i):
                    c += 1
            return c
        """)["tri"]
    loops = loops_by_line(f)
    outer, inner = loops[4], loops[5]
    assert inner.parent == outer.id and inner.depth == 2
    assert outer.id.startswith("L")
    assert inner.trip_count.iterations == Polynomial.symbol(f"@{outer.id}")
    total = inner.trip_count.iterations.sum_over(f"@{outer.id}", outer.trip_count.iterations)
    assert total == Fraction(1, 2) * n * n - Fraction(1, 2) * n


def test_range_with_start_and_step_and_shifted_outer_index():
    f = read("""
        def g(n, m):
            for i in range(1, n):
                for j in range(i, m):
                    pass
            for k in range(0, n, 4):
                pass
        """)["g"]
    loops = loops_by_line(f)
    outer, inner, stepped = loops[3], loops[4], loops[6]
    assert outer.trip_count.iterations == n - 1
    # i = 1 + @outer, so range(i, m) runs m − 1 − @outer times
    assert inner.trip_count.iterations == m - 1 - Polynomial.symbol(f"@{outer.id}")
    assert stepped.trip_count.iterations == Fraction(1, 4) * n
    assert any("line 6" in a and "ignoring rounding" in a for a in f.assumptions)


def test_len_of_parameter_single_assignment_and_iteration_over_a_parameter():
    f = read("""
        def h(xs, n):
            half = n // 2
            for i in range(len(xs)):
                pass
            for x in xs:
                pass
            for r in range(half):
                pass
            for p, q in enumerate(xs):
                for t in range(p):
                    pass
        """)["h"]
    loops = loops_by_line(f)
    assert loops[4].trip_count.iterations == Polynomial.symbol("len(xs)")
    assert loops[6].trip_count.kind == "symbolic"
    assert loops[6].trip_count.iterations == Polynomial.symbol("len(xs)")
    assert any("line 6" in a and "len(xs)" in a for a in f.assumptions)
    assert loops[8].trip_count.iterations == Fraction(1, 2) * n
    assert any("line 8" in a and "// 2" in a for a in f.assumptions)
    assert loops[10].trip_count.iterations == Polynomial.symbol("len(xs)")
    assert loops[11].trip_count.iterations == Polynomial.symbol(f"@{loops[10].id}")  # p is the index


def test_while_loop_is_unknown_with_the_default_and_an_assumption_naming_its_line():
    f = read("""
        def w(n, a):
            k = 0
            while k < n:
                k += a
            return k
        """, default_trip_count=37)["w"]
    (loop,) = f.loops.values()
    assert loop.line == 4
    assert loop.trip_count.kind == "unknown" and loop.trip_count.is_assumed
    assert loop.trip_count.iterations == Polynomial.constant(37)
    assert any("line 4" in a and "37" in a for a in f.assumptions)

SEARCHES = """
    def find(a, n, key):
        for i in range(n):
            if a[i] == key:
                return i
        return -1

    def first_gap(a, n):
        for i in range(n):
            for j in range(n):
                if a[i] == j:
                    break
        return 0

    def total(a, n):
        t = 0
        for i in range(n):
            if a[i] < 0:
                raise ValueError("negative")
            t += a[i]
        return t
    """


def test_a_break_or_return_takes_the_mean_exit_and_a_raise_does_not():
    fs = read(SEARCHES)
    half = (n + 1) * Fraction(1, 2)
    (find,) = fs["find"].loops.values()
    assert (find.trip_count.kind, find.trip_count.iterations) == ("expected", half)
    assert any("line 3: a break or return can leave it early" in a and "worst case n" in a
               for a in fs["find"].assumptions)
    outer, inner = sorted(fs["first_gap"].loops.values(), key=lambda lp: lp.depth)
    assert (outer.trip_count.kind, inner.trip_count.kind) == ("symbolic", "expected")  # break leaves the inner only
    (checked,) = fs["total"].loops.values()
    assert (checked.trip_count.kind, checked.trip_count.iterations) == ("symbolic", n)


def test_worst_case_policy_takes_the_range_itself():
    functions, _ = read_module(textwrap.dedent(SEARCHES), "/src/example.py", early_exit="worst")
    (find,) = next(f for f in functions if f.name == "find").loops.values()
    assert (find.trip_count.kind, find.trip_count.iterations) == ("bounded", n)



def test_a_parameter_reassigned_once_is_its_new_value_after_it_and_opaque_iterables_are_unknown():
    f = read("""
        def r(n, d):
            n = n + 1          # reads the argument, then every later read sees n + 1
            for i in range(n):
                pass
            for key in d.keys():
                pass
        """)["r"]
    trips = sorted((lp.line, lp.trip_count.kind, lp.trip_count.iterations) for lp in f.loops.values())
    assert trips == [(4, "symbolic", n + 1), (6, "unknown", Polynomial.constant(100))]


def test_a_parameter_read_on_a_path_a_store_may_come_before_stays_unknown():
    f = read("""
        def r(n, flag):
            if flag:
                n = 2 * n
            for i in range(n):     # n or 2n: neither store dominates, the argument may have changed
                pass
            while flag:
                for j in range(n): # inside a loop that stores n after reading it: unknown
                    pass
                n = n - 1
        """)["r"]
    assert {lp.trip_count.kind for lp in f.loops.values()} == {"unknown"}


def test_nonlocal_write_from_a_nested_function_makes_the_parameter_unknown():
    f = read("""
        def outer(n):
            def bump():
                nonlocal n
                n = 5
            bump()
            for i in range(n):
                pass
        """)["outer"]
    (loop,) = f.loops.values()
    assert loop.trip_count.kind == "unknown"


def test_list_comprehension_loop_is_inlined_in_its_function_on_every_version():
    f = read("""
        def comp(n, m):
            out = []
            for i in range(n):
                out.append(sum([j * i for j in range(m)]))
            return [[a for a in range(b)] for b in range(n)]
        """)["comp"]
    loops = sorted(source_loops(f), key=lambda lp: (lp.line, lp.depth))
    assert [(lp.line, lp.depth) for lp in loops] == [(4, 1), (5, 2), (6, 1), (6, 2)]
    assert loops[1].parent == loops[0].id and loops[1].trip_count.iterations == m
    assert loops[2].trip_count.iterations == n
    assert loops[3].parent == loops[2].id
    # sum() adds up the comprehension's m items, once per outer iteration
    (adds,) = work_loops(f)
    assert (adds.line, adds.parent, adds.trip_count.iterations) == (5, loops[0].id, m)
    assert loops[3].trip_count.iterations == Polynomial.symbol(f"@{loops[2].id}")
    # every block names a loop that exists
    assert {b.loop for b in f.blocks} - {None} <= set(f.loops)
    assert len({b.name for b in f.blocks}) == len(f.blocks)


# -- instruction classes ------------------------------------------------------------------------
def test_modulo_in_loop_is_a_division_with_its_line_and_loop():
    f = read("""
        def mod(a, b, n):
            s = 0
            for i in range(n):
                s += (a * i) % b
            label = "%d items" % n
            return s / n
        """)["mod"]
    divs = [(b.loop, i.line, i.opcode) for b, i in instructions(f) if i.cls == "py.binary_div"]
    (loop,) = f.loops.values()
    assert divs == [(loop.id, 5, "BINARY_OP"), (None, 7, "BINARY_OP")]  # "%d" % n formats, not divides
    classes = Counter(i.cls for _, i in instructions(f))
    assert classes["py.binary_mul"] == 1
    assert classes["py.binary_add"] == 1
    assert classes["py.iter"] >= 2  # GET_ITER, FOR_ITER (and END_FOR on 3.12+)
    assert classes["py.call"] == 1
    assert classes["py.return"] == 1
    assert all(i.line is not None for _, i in instructions(f))
    assert not any(i.opcode == "CACHE" for _, i in instructions(f))


def test_divisor_kinds_feed_the_division_advice():
    f = read("""
        def kinds(a, b, n, xs):
            for i in range(n):
                x = i % 8 + i // 3 + a / b
                y = xs[i] % i
        """)["kinds"]
    divisors = [i.divisor for _, i in instructions(f) if i.cls == "py.binary_div"]
    assert divisors == ["power-of-two", "constant", "loop-invariant", "variant"]


def test_classes_agree_with_the_mapping_the_cost_table_was_fitted_with():
    import dis
    import importlib.util
    from pathlib import Path
    from types import SimpleNamespace

    from ccls.readers.python_bytecode import classify

    derive = Path(__file__).resolve().parents[1] / "cost_tables" / "derive" / "cpython_bytecode.py"
    if not derive.exists():
        pytest.skip("cost table derivation script not in this checkout")
    spec = importlib.util.spec_from_file_location("cpython_bytecode_derive", derive)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # our own measurement script: defines functions, runs nothing
    ops = [(op, "") for op in dis.opmap] + [("BINARY_OP", s) for s in ("+", "-=", "*", "/", "//", "%=", "**", "<<")]
    disagree = [(op, r) for op, r in ops
                if classify(SimpleNamespace(opname=op, argrepr=r)) != module.family(op, r)]
    assert disagree == []


def test_class_families_for_common_opcodes():
    f = read("""
        def fam(xs, obj):
            y = xs[0] ** 2
            obj.field = y << 1
            z = y == 3 and y is not None and y in xs
            t = (y, z)
            return obj.method(t)
        """)["fam"]
    by_opcode: dict[str, set[str]] = {}
    for _, i in instructions(f):
        by_opcode.setdefault(i.opcode, set()).add(i.cls)
    assert by_opcode["STORE_ATTR"] == {"py.attr"}
    assert by_opcode["COMPARE_OP"] == {"py.compare"}
    assert by_opcode["IS_OP"] == {"py.compare"} and by_opcode["CONTAINS_OP"] == {"py.compare"}
    assert by_opcode["BUILD_TUPLE"] == {"py.build"}
    assert by_opcode["STORE_FAST"] == {"py.store"}
    assert by_opcode["RETURN_VALUE"] == {"py.return"}
    assert by_opcode["BINARY_OP"] >= {"py.binary_other"}  # ** and << are "other"
    subscr = by_opcode.get("BINARY_SUBSCR", set()) | {c for c in by_opcode["BINARY_OP"] if c == "py.subscr"}
    assert subscr == {"py.subscr"}
    assert "py.branch" in {c for cs in by_opcode.values() for c in cs}  # `and` short-circuits


def test_callee_names_for_globals_methods_modules_and_indirect_calls():
    f = read("""
        import math

        def helper(v):
            return v

        def caller(xs, fn):
            xs.append(1)
            r = math.sqrt(helper(len(xs)))
            fn(r)
            return ",".join(map(str, xs))
        """)["caller"]
    callees = [i.callee for _, i in instructions(f) if i.cls == "py.call"]
    assert callees == ["xs.append", "len", "helper", "math.sqrt", None, "map", "str.join"]


# -- robustness and safety ---------------------------------------------------------------------
def test_source_is_compiled_but_never_executed(tmp_path):
    marker = tmp_path / "ran.txt"
    source = textwrap.dedent(f"""
        open({str(marker)!r}, "w").write("module body ran")
        import sys
        sys.exit(3)

        def default_arg(x=open({str(marker)!r}, "w")):
            open({str(marker)!r}, "w").write("function body ran")
            return x

        @open({str(marker)!r}, "w").write
        def decorated():
            raise SystemExit(1)

        raise SystemExit("module body ran")
        """)
    functions, errors = read_module(source, str(tmp_path / "evil.py"))
    assert errors == []
    assert {f.name for f in functions} == {"default_arg", "decorated"}
    assert not marker.exists()


def test_async_for_code_after_the_loop_is_still_counted():
    f = read("""
        async def consume(stream):
            total = 0
            async for item in stream:
                total += item
            total = total * 2
            return total
        """)["consume"]
    (loop,) = f.loops.values()
    assert loop.trip_count.kind == "unknown"
    lines = {i.line for _, i in instructions(f)}
    assert {6, 7} <= lines


def test_exception_handlers_are_assumed_not_to_run():
    f = read("""
        def guarded(n):
            try:
                return 10 // n
            except ZeroDivisionError:
                return 0
        """)["guarded"]
    assert any("exception handlers are assumed not to run" in a for a in f.assumptions)
    assert 6 not in {i.line for _, i in instructions(f)}  # the handler's `return 0`


def test_read_code_reads_one_code_object():
    source = "def one(n):\n    return [i for i in range(n)]\n"
    module = compile(source, "/src/one.py", "exec", dont_inherit=True)
    code = next(c for c in module.co_consts if hasattr(c, "co_code"))
    f = read_code(code, "/src/one.py", source, default_trip_count=5)
    assert f.name == "one" and [lp.trip_count.iterations for lp in f.loops.values()] == [n]


def test_front_end_is_registered_for_py_and_matches_the_reader():
    source = SourceFile("/src/mod.py", "def f(n):\n    while n:\n        n = g(n)\n")
    registered = frontend_for("/src/mod.py")
    assert registered is not None and registered[0] == "python" and registered[1] is analyse_python
    result = analyse_python(source, AnalysisOptions(default_trip_count=7))
    assert result.errors == []
    (f,) = result.functions
    assert [lp.trip_count.iterations for lp in f.loops.values()] == [Polynomial.constant(7)]


_STATEMENTS = ["s += i % 3", "s = s * 2", "x = [k for k in range(i)]", "if s > 3:\n    s -= 1",
               "while s > 100:\n    s //= 2", "for j in range(i):\n    s += j", "for q in xs:\n    s += q",
               "try:\n    s = s / i\nexcept Exception:\n    pass", "yield s", "s = f'{s}'", "del x",
               "with open(xs) as fh:\n    s += 1", "return s", "break", "continue", "s = lambda z: z + i",
               # conditional exits keep the back edge, so the early-exit rule is reached
               "if s > 3:\n    break", "if s == i:\n    return s",
               "s = sorted(xs)[1:] + [0] * i", "s = sum(xs) + (i in xs) + len(','.join(xs))",
               "while i > 1:\n    i //= 2", "for j in range(i, n):\n    s *= 2"]


# Every kind a trip count may have (ccls.model.TripKind), and those that are an assumption rather
# than exact: a kind added to the model must be placed on one side here.
TRIP_KINDS = get_args(TripKind)
ASSUMED_KINDS = ("bounded", "expected", "unknown")


def test_the_trip_kinds_are_the_models():
    assert set(ASSUMED_KINDS) < set(TRIP_KINDS)
    assert set(TRIP_KINDS) - set(ASSUMED_KINDS) == {"constant", "symbolic", "data"}  # the exact ones


@st.composite
def _programs(draw) -> str:
    body = draw(st.lists(st.sampled_from(_STATEMENTS), min_size=1, max_size=6))
    loop = draw(st.sampled_from(["for i in range(n):", "for i in range(2, n, 3):", "while n:",
                                 "for i, v in enumerate(xs):", "async for i in xs:"]))
    inner = textwrap.indent("\n".join(body), "        ")
    prefix = "async def" if loop.startswith("async") else "def"
    return f"{prefix} f(n, xs):\n    s = 0\n    {loop}\n{inner}\n    return s\n"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(st.text(max_size=300), _programs()))
def test_read_module_never_raises_and_its_output_is_consistent(text):
    functions, errors = read_module(text, "/src/fuzz.py")
    assert all(e.file == "/src/fuzz.py" and e.message for e in errors)
    assert not any("internal error" in e.message for e in errors)
    for f in functions:
        assert {b.loop for b in f.blocks} - {None} <= set(f.loops)
        for lp in f.loops.values():
            assert lp.parent is None or f.loops[lp.parent].depth == lp.depth - 1
            assert lp.trip_count.kind in TRIP_KINDS
            assert lp.trip_count.is_assumed == (lp.trip_count.kind in ASSUMED_KINDS)
            # index symbols may only name loops that enclose this one
            enclosing, p = set(), lp.parent
            while p is not None:
                enclosing.add(f"@{p}")
                p = f.loops[p].parent
            assert {s for s in lp.trip_count.iterations.symbols if s.startswith("@")} <= enclosing


# Loop bodies with no way out of the loop (no break, return, raise or handler), each with its lines.
_STAYING = ["s += i % 3", "s = s * 2", "if s > 3:\n    s -= 1", "while s > 100:\n    s //= 2",
            "s = sorted(xs)[1:] + [0] * i", "s = sum(xs) + (i in xs)"]
# Ways to leave the loop on data, and the same lines with the exit taken out.
_EXITS = {"break": ("if s > 3:\n    break", "if s > 3:\n    pass"),
          "return": ("if s == i:\n    return s", "if s == i:\n    pass"),
          "else-break": ("if s > 3:\n    s -= 1\nelse:\n    break", "if s > 3:\n    s -= 1\nelse:\n    pass")}


@st.composite
def _early_exits(draw) -> tuple[str, str, int, bool, int | None, bool]:
    """A loop with a known count whose body may leave it (a break or a return at a random place,
    or a return inside an inner loop), the same program with every exit taken out, the outer
    loop's line and whether it can leave early, and the inner loop's line and the same."""
    header = draw(st.sampled_from(["for i in range(n):", "for i in range(2, n, 3):", "for i in range(40):",
                                   "for i, v in enumerate(xs):"]))
    body = [(text, text) for text in draw(st.lists(st.sampled_from(_STAYING), min_size=1, max_size=4))]
    own = draw(st.sampled_from([None, *_EXITS]))
    if own is not None:
        body.insert(draw(st.integers(0, len(body))), _EXITS[own])
    inner = draw(st.sampled_from([None, "none", "break", "return"]))
    inner_at = draw(st.integers(0, len(body)))
    if inner is not None:
        left, taken_out = _EXITS[inner] if inner != "none" else ("s += 1", "s += 1")
        body.insert(inner_at, ("for j in range(i):\n" + textwrap.indent(left, "    "),
                               "for j in range(i):\n" + textwrap.indent(taken_out, "    ")))

    def program(which: int) -> str:
        lines = "\n".join(statement[which] for statement in body)
        return f"def f(n, xs):\n    s = 0\n    {header}\n{textwrap.indent(lines, '        ')}\n    return s\n"
    inner_line = 4 + sum(text.count("\n") + 1 for text, _ in body[:inner_at]) if inner is not None else None
    return (program(0), program(1), 3, own is not None or inner == "return",
            inner_line, inner in ("break", "return"))


def _trips_by_line(source: str, early_exit: str = "expected") -> tuple[dict[int, tuple[str, Polynomial]], list[str]]:
    """Each source loop's (kind, iterations) by its line, outer loops' indices named by line
    (`@L3`): loop ids are bytecode offsets, which an exit taken out moves."""
    (f,), errors = read_module(source, "/src/exits.py", early_exit=early_exit)
    assert errors == []
    loops = loops_by_line(f)
    out = {}
    for line, lp in loops.items():
        iterations = lp.trip_count.iterations
        for other in loops.values():
            iterations = iterations.substitute(f"@{other.id}", Polynomial.symbol(f"@L{other.line}"))
        out[line] = (lp.trip_count.kind, iterations)
    return out, f.assumptions


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_early_exits())
def test_a_loop_that_can_leave_on_data_takes_the_mean_exit_of_its_count_and_only_that_loop(case):
    """With the exits taken out the loop's count is exact (c); with them it is (c + 1) / 2
    (`expected`), or c itself under the worst-case policy, and says so. A break leaves only its
    own loop; a return leaves every loop around it."""
    with_exits, without, outer_line, outer_leaves, inner_line, inner_leaves = case
    exact, _ = _trips_by_line(without)
    expected, notes = _trips_by_line(with_exits)
    worst, _ = _trips_by_line(with_exits, early_exit="worst")
    for line, leaves in ((outer_line, outer_leaves), (inner_line, inner_leaves)):
        if line is None:
            continue
        kind, count = exact[line]
        assert kind in ("constant", "symbolic"), with_exits
        if leaves:
            assert expected[line] == ("expected", (count + 1) * Fraction(1, 2)), with_exits
            assert worst[line] == ("bounded", count), with_exits
            assert any(note.startswith(f"loop at line {line}: a break or return can leave it early")
                       and "worst case" in note for note in notes)
        else:
            assert expected[line] == worst[line] == (kind, count), with_exits


def test_a_loop_of_unknown_count_that_can_leave_from_its_body_takes_the_mean_exit_of_the_default():
    source = textwrap.dedent("""\
        def f(items, todo, ok, more):
            for x in more():
                if ok(x):
                    return x
            while todo:
                t = todo.pop()
                if t is None:
                    break
            while True:
                if ok(more()):
                    break
            while more():
                todo.append(1)
            for y in more():
                if y is None:
                    raise ValueError(y)
        """)
    expected, notes = _trips_by_line(source)
    worst, _ = _trips_by_line(source, early_exit="worst")
    mean = (100 + 1) * Fraction(1, 2)
    # a search over data, a worklist left by a break: half the default (and one half), still a guess
    assert [expected[line] for line in (2, 5)] == [("unknown", Polynomial.constant(mean))] * 2
    assert any(note.startswith("loop at line 5: trip count unknown, assumed 100 iterations; a break or return")
               for note in notes)
    # the break is a `while True` loop's only way out; no exit in the body; an exit that raises
    assert [expected[line] for line in (9, 12, 14)] == [("unknown", Polynomial.constant(100))] * 3
    assert all(worst[line] == ("unknown", Polynomial.constant(100)) for line in (2, 5, 9, 12, 14))


@settings(max_examples=60, deadline=None)
@given(start=st.integers(0, 5), step=st.integers(1, 4), size=st.integers(0, 40))
def test_trip_counts_match_brute_force_for_exact_ranges(start, step, size):
    f = read(f"""
        def nest(n):
            for i in range({start}, n, {step}):
                for j in range(i):
                    pass
        """)["nest"]
    loops = loops_by_line(f)
    outer, inner = loops[3], loops[4]
    stop = start + step * size  # (stop − start) divisible by step: no rounding involved
    assert outer.trip_count.iterations.evaluate({"n": stop}) == pytest.approx(len(range(start, stop, step)))
    total = inner.trip_count.iterations.sum_over(f"@{outer.id}", outer.trip_count.iterations)
    assert total.evaluate({"n": stop}) == pytest.approx(sum(len(range(i)) for i in range(start, stop, step)))


def test_hover_names_how_each_loop_count_was_taken():
    from ccls.counting import count_function
    from ccls.engine import ReportSettings, report
    from ccls.render import hover_markdown
    from ccls.tables import load_tables
    fs = read(SEARCHES)
    counted = [count_function(fs[name], None, lambda symbol: 1000.0) for name in ("find", "total")]
    find, total = report(counted, load_tables(), ReportSettings(), AnalysisOptions())
    assert "0.5·n + 0.5 iterations (assumed: the mean of a data-dependent exit)" in hover_markdown(find)
    assert "n iterations (symbolic)" in hover_markdown(total)


# -- work inside builtins (TimeComplexity), log loops, ranges between two sizes, encodings -------
def analyse(source: str, **values: float):
    """Count and cost each function as the CLI does, with `values` as --param."""
    from ccls.engine import ReportSettings, count_source, report
    from ccls.tables import load_tables
    options = AnalysisOptions(parameter_values=tuple(values.items()))
    tables = load_tables()
    counted = count_source(SourceFile("/src/example.py", textwrap.dedent(source)), options, tables)
    return {r.counted.name: r for r in report(counted.functions, tables, ReportSettings(), options)}


len_a = Polynomial.symbol("len(a)")


def test_sorted_costs_n_log_n_in_the_length_of_its_argument():
    fs = read("""
        def s(a):
            return sorted(a)
        """)
    (work,) = work_loops(fs["s"])
    assert work.trip_count.iterations == len_a * Polynomial.symbol("log2(len(a))")
    assert work.line == 3 and work.trip_count.kind == "symbolic"
    (block,) = [b for b in fs["s"].blocks if b.loop == work.id]
    assert [i.cls for i in block.instructions] == ["py.work.sort"]
    assert any("sorted(a) costed as len(a)·log2(len(a)) × py.work.sort" in a for a in fs["s"].assumptions)
    small, large = analyse("def s(a):\n    return sorted(a)\n")["s"], analyse(
        "def s(a):\n    return sorted(a)\n", **{"len(a)": 100_000})["s"]
    assert small.big_o == "O(len(a)·log2(len(a)))"
    # 100× the elements, log₂ 1e5 / log₂ 1e3 = 5/3 more comparisons each: ~167× the work
    assert 150 < large.metrics.cu / small.metrics.cu < 170
    assert small.metrics.cu > 1000 * 9.9 * 5  # the sort's per-comparison price is several cycles


def test_a_module_that_shadows_a_builtin_is_not_costed_as_the_builtin():
    fs = read("""
        def sorted(xs):
            return xs

        def s(a):
            return sorted(a)

        def t(a):
            return sum(a)
        """)
    assert work_loops(fs["s"]) == []
    assert [lp.trip_count.iterations for lp in work_loops(fs["t"])] == [len_a]


def test_copies_reductions_joins_and_string_methods_are_linear_and_methods_on_unknown_objects_say_so():
    f = read("""
        import os

        def f(a, s, sep):
            b = list(a) + [max(a)]
            t = ", ".join(a)
            u = sep.join(a)
            v = s.split()
            w = os.path.join(s, s)
            return set(range(len(a)))
        """)["f"]
    by_cls = Counter(i.cls for b in f.blocks for i in b.instructions if i.cls.startswith("py.work."))
    # list(a) copies a, and `+ [max(a)]` copies both again (concatenation: O(n + m))
    assert by_cls == {"py.work.copy": 2, "py.work.minmax": 1, "py.work.join": 2, "py.work.split": 1,
                      "py.work.hash": 1, "py.work.object": 1}  # and range(…) makes a range object
    assert {str(lp.trip_count.iterations) for lp in work_loops(f)} == {"len(a)", "len(s)", "len(a) + 1"}
    assumed = [a for a in f.assumptions if "the object's type is not known" in a]
    assert [a.split(": ", 1)[1].split(" taken")[0] for a in assumed] == ["sep.join(a)", "s.split()"]
    assert not any("os.path.join" in a for a in f.assumptions)  # a module's function, not str.join


def test_membership_scans_a_list_built_here_and_takes_an_unknown_container_as_a_hash():
    f = read("""
        def m(a, x):
            seen = list(a)
            return x in seen, x in a
        """, default_trip_count=100)["m"]
    copy, scan = sorted(work_loops(f), key=lambda lp: lp.trip_count.kind != "symbolic")  # list(a), then `in`
    assert (copy.trip_count.kind, copy.trip_count.iterations) == ("symbolic", len_a)
    assert (scan.trip_count.kind, scan.trip_count.iterations) == ("expected", (len_a + 1) * Fraction(1, 2))
    assert any("`in a`: the type of a is not known; taken as a set or dict" in a for a in f.assumptions)


def test_a_slice_copies_its_length():
    f = read("""
        def sl(a, lo, hi):
            return a[lo:hi], a[1:], a[-3:], a[:]
        """)["sl"]
    got = sorted(str(lp.trip_count.iterations) for lp in work_loops(f))
    assert got == ["3", "len(a)", "len(a) - 1", "len(a[lo:hi])"]


def test_a_builtin_over_a_value_of_unknown_length_takes_the_default_and_says_so():
    f = read("""
        def u(d):
            xs = d.values()
            return sum(xs)
        """, default_trip_count=37)["u"]
    (work,) = work_loops(f)
    assert (work.trip_count.kind, work.trip_count.iterations) == ("unknown", Polynomial.constant(37))
    assert any("sum(xs): length of xs not known, assumed 37" in a for a in f.assumptions)


LOG_LOOPS = """
    def halve(n):
        c = 0
        while n > 1:
            n //= 2
            c += 1
        return c

    def double(n):
        i = 1
        while i < n:
            i *= 2
        return i

    def shift(n):
        while n:
            n >>= 1

    def digits(m):
        x = m
        while x >= 10:
            x /= 10

    def constant():
        x = 1000
        while x > 1:
            x //= 3

    def linear(n):
        while n > 1:
            n -= 2
    """


def test_loops_that_divide_or_multiply_their_variable_are_logarithmic():
    fs = read(LOG_LOOPS)
    log_n = Polynomial.symbol("log2(n)")
    trip = {name: next(iter(fs[name].loops.values())).trip_count for name in fs}
    assert (trip["halve"].kind, trip["halve"].iterations) == ("bounded", log_n)
    assert (trip["double"].kind, trip["double"].iterations) == ("bounded", log_n)
    assert trip["shift"].iterations == log_n + 1
    assert trip["constant"] == replace_kind(trip["constant"], "constant")
    assert trip["constant"].iterations == Polynomial.constant(6)  # 1000 → 333 → 111 → 37 → 12 → 4 → 1
    # Not a logarithm: a counter moving by 2 (the linear rule, ignoring rounding)
    assert (trip["linear"].kind, trip["linear"].iterations) == ("bounded", (Polynomial.symbol("n") - 1) * Fraction(1, 2))
    assert any("n is divided by 2 each iteration while n > 1; trip count taken as log2(n)" in a
               for a in fs["halve"].assumptions)
    r = analyse(LOG_LOOPS, n=1 << 20, m=10 ** 6)
    assert r["halve"].big_o == "O(log2(n))"


def replace_kind(trip, kind):
    from dataclasses import replace
    return replace(trip, kind=kind)


@settings(max_examples=40, deadline=None)
@given(start=st.integers(2, 10 ** 9), divisor=st.integers(2, 16))
def test_log_trip_counts_are_within_one_of_running_the_loop(start, divisor):
    f = read(f"""
        def h(n):
            while n > 1:
                n //= {divisor}
        """)["h"]
    (loop,) = f.loops.values()
    x, actual = start, 0
    while x > 1:
        x //= divisor
        actual += 1
    predicted = loop.trip_count.iterations.evaluate({"log2(n)": math.log2(start)})
    assert abs(predicted - actual) <= 1


def test_range_between_two_sizes_is_one_size_and_never_free():
    fs = read("""
        def dump(tag, x, lo, hi):
            out = []
            for i in range(lo, hi):
                out.append(x[i])
            return out

        def tail(a, i, n):
            for k in range(n):
                for j in range(k, n):
                    pass
        """)
    (loop,) = fs["dump"].loops.values()
    assert loop.trip_count.iterations == Polynomial.symbol("len(range(lo, hi))")
    assert any("hi - lo items taken as one size, len(range(lo, hi))" in a for a in fs["dump"].assumptions)
    outer, inner = sorted(fs["tail"].loops.values(), key=lambda lp: lp.depth)
    assert inner.trip_count.iterations == n - Polynomial.symbol(f"@{outer.id}")  # an index: kept exact
    r = analyse("def dump(x, lo, hi):\n    for i in range(lo, hi):\n        x[i] += 1\n")["dump"]
    assert r.big_o == "O(len(range(lo, hi)))" and r.metrics.cu > 1000 * 10
    given = analyse("def dump(x, lo, hi):\n    for i in range(lo, hi):\n        x[i] += 1\n",
                    **{"len(range(lo, hi))": 10})["dump"]
    assert given.metrics.cu < r.metrics.cu / 50


def test_a_pep_263_latin_1_file_is_read_with_its_declared_encoding():
    raw = b"# -*- coding: latin-1 -*-\n# caf\xe9\ndef f(n):\n    s = 'd\xe9j\xe0'\n    return sum(range(n))\n"
    text = raw.decode("utf-8", errors="surrogateescape")  # how the CLI and the server read a file
    functions, errors = read_module(text, "/src/latin1.py")
    assert errors == [] and [f.name for f in functions] == ["f"]
    # a file that declares UTF-8 but is not: the compiler's own message, not an internal error
    bad = b"# -*- coding: utf-8 -*-\ndef g():\n    return '\xe9'\n".decode("utf-8", errors="surrogateescape")
    functions, errors = read_module(bad, "/src/bad.py")
    assert functions == [] and len(errors) == 1 and "UnicodeEncodeError" not in errors[0].message


def test_every_work_class_the_reader_emits_is_measured_in_the_table():
    from ccls.readers.python_bytecode import _BUILTIN_WORK, _METHOD_WORK, _SCAN, _SLICE
    from ccls.tables import load_tables
    table = load_tables().cost["cpython-3.11"]
    classes = {spec.cls for spec in (*_BUILTIN_WORK.values(), *_METHOD_WORK.values(), _SCAN, _SLICE)}
    for cls in classes:
        entry = table.classes[cls]  # the exact key, not a fallback to py.other
        assert entry.method == "measured" and "cpython_builtins.py" in entry.source and entry.cu > 0


def test_a_method_the_module_defines_is_not_taken_for_the_builtin_method_of_that_name():
    fs = read("""
        class Node:
            def find(self):
                return self

        def walk(node, s):
            return node.find(), s.find("x"), ",".join(s)
        """)
    labels = [a for a in fs["walk"].assumptions if "costed as" in a]
    assert len(labels) == 1 and "','.join(s)" not in labels[0] and ".join(s) costed as len(s)" in labels[0]


def test_a_list_repeated_k_times_copies_its_length_times_k():
    f = read("""
        def grid(w, h):
            row = [0.0] * w
            return [[0] * w for _ in range(h)], (1, 2) * h
        """)["grid"]
    got = sorted(str(lp.trip_count.iterations) for lp in work_loops(f))
    assert got == ["2·h", "w", "w"]
    inner = [lp for lp in work_loops(f) if lp.parent is not None]
    assert len(inner) == 1 and f.loops[inner[0].parent].trip_count.iterations == Polynomial.symbol("h")


def test_a_parameter_rebound_to_a_filtered_copy_of_itself_keeps_its_length():
    f = read("""
        def add(widgets):
            widgets = [w for w in widgets if w]   # reads the argument before the store
            for w in widgets:                      # the copy: at most as many items
                pass
        """)["add"]
    assert {(lp.trip_count.kind, str(lp.trip_count.iterations)) for lp in f.loops.values()} == \
        {("symbolic", "len(widgets)")}
