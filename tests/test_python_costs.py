"""Python front end: what a call costs beyond its bytecode (instances, builtins' work), priced
from the measured cpython table."""
from __future__ import annotations

import textwrap
from collections import Counter

from ccls.readers.python_bytecode import is_work_loop, read_module
from ccls.tables import load_tables


def read(source: str):
    functions, errors = read_module(textwrap.dedent(source), "/src/example.py")
    assert errors == []
    return {f.name: f for f in functions}


def work_classes(f) -> list[str]:
    return [i.cls for b in f.blocks if b.loop and is_work_loop(b.loop) for i in b.instructions]


def test_calling_a_class_of_the_module_allocates_an_instance_and_a_function_call_does_not():
    fs = read("""
        class Point:
            def __init__(self, x):
                self.x = x

        def make(x):
            return x

        def build(n):
            out = []
            for i in range(n):
                out.append(Point(i))
                make(i)
            return out
    """)
    f = fs["build"]
    assert work_classes(f) == ["py.work.new"]  # Point(i), not make(i) nor out.append(...)
    (work,) = [lp for lp in f.loops.values() if is_work_loop(lp.id)]
    assert work.trip_count.iterations.constant_value() == 1 and work.parent is not None  # once per iteration
    assert any("Point(…) creates an instance" in a for a in f.assumptions)


def test_a_class_the_module_rebinds_or_a_builtin_type_is_not_taken_for_an_instance():
    fs = read("""
        class Point:
            pass

        def swap():
            global Point
            Point = tuple

        def build():
            return Point(), list(), dict()
    """)
    assert "py.work.new" not in work_classes(fs["build"])


def test_an_instance_is_priced_from_its_own_measurement():
    entry = load_tables().cost["cpython-3.11"].classes["py.work.new"]
    call = load_tables().cost["cpython-3.11"].classes["py.call"]
    assert entry.method == "measured" and "cpython_builtins.py" in entry.source
    assert entry.cu > 10 * call.cu  # type.__call__ → object allocation → __init__ from C: far dearer than a call


def test_list_insert_pop_and_concatenation_move_or_copy_their_items_and_pop_of_the_last_item_does_not():
    fs = read("""
        def f(n, d, s, t):
            a = [0] * n
            b = [1] * n
            c = a + b
            q = [2] * n
            q.insert(0, 5)
            q.pop(0)
            q.pop()
            d.pop(3)
            s.update(t)
            return c
    """)
    notes = [x for x in fs["f"].assumptions if "costed as" in x]
    assert any("a + b costed as 2·n × py.work.copy" in x for x in notes), notes
    assert any("q.insert(…, …) costed as" in x and "py.work.move" in x for x in notes)
    assert sum("pop(" in x for x in notes) == 1  # q.pop(0); not q.pop(), nor d.pop(3) (d may be a dict)
    assert any("s.update(t) costed as len(t) × py.work.hash" in x for x in notes)
    assert any("s.update(t) taken as dict/set.update" in x for x in fs["f"].assumptions)


def test_every_work_class_the_reader_can_emit_is_measured():
    from ccls.readers.python_bytecode import (_BUILTIN_WORK, _CONCAT, _FIXED_WORK, _METHOD_WORK, _REPEAT, _SCAN,
                                              _SLICE)
    table = load_tables().cost["cpython-3.11"]
    classes = {spec.cls for spec in (*_BUILTIN_WORK.values(), *_METHOD_WORK.values(), _SCAN, _SLICE, _REPEAT,
                                     _CONCAT, *_FIXED_WORK.values())} | {"py.work.new"}
    for cls in classes:
        entry = table.classes[cls]  # the exact key, not a fallback to py.other
        assert entry.method == "measured" and "cpython_builtins.py" in entry.source and entry.cu > 0


def test_globals_appends_and_unpacking_have_their_own_measured_prices():
    fs = read("""
        LIMIT = [3]

        def f(pairs):
            out = [a * b for a, b in pairs]
            return len(out), LIMIT
    """)
    by_opcode: dict[str, set[str]] = {}
    for b in fs["f"].blocks:
        for i in b.instructions:
            by_opcode.setdefault(i.opcode, set()).add(i.cls)
    assert by_opcode["LOAD_GLOBAL"] == {"py.load.global"}  # len, LIMIT: the module's dict, then the builtins'
    assert by_opcode["LIST_APPEND"] == {"py.build.append"}  # no allocation, unlike BUILD_LIST
    assert by_opcode["UNPACK_SEQUENCE"] == {"py.build.unpack"}
    table = load_tables().cost["cpython-3.11"].classes
    for cls in ("py.load.global", "py.build.append", "py.build.unpack"):
        assert table[cls].method == "measured" and "cpython_bytecode.py" in table[cls].source
    assert table["py.load"].cu < table["py.load.global"].cu and table["py.build.append"].cu < table["py.build"].cu


def test_dict_and_set_displays_and_f_strings_have_their_own_measured_prices():
    fs = read("""
        def f(a, b):
            pair = (a, b)
            table = {a: b}
            named = {"x": a, "y": b}
            seen = {a, b}
            return f"{a} and {b}", pair, table, named, seen
    """)
    by_opcode: dict[str, set[str]] = {}
    for b in fs["f"].blocks:
        for i in b.instructions:
            by_opcode.setdefault(i.opcode, set()).add(i.cls)
    assert by_opcode["BUILD_TUPLE"] == {"py.build"}
    assert by_opcode["BUILD_MAP"] == by_opcode["BUILD_CONST_KEY_MAP"] == {"py.build.map"}
    assert by_opcode["BUILD_SET"] == {"py.build.set"}
    assert by_opcode["FORMAT_VALUE"] == by_opcode["BUILD_STRING"] == {"py.build.format"}
    table = load_tables().cost["cpython-3.11"].classes
    for cls in ("py.build.map", "py.build.set", "py.build.format"):
        assert table[cls].method == "measured" and "cpython_bytecode.py" in table[cls].source
        assert table[cls].cu > table["py.build"].cu  # more than a tuple's or a list's allocation


def test_printf_style_formatting_costs_a_format_per_conversion_and_one_to_join():
    fs = read("""
        def labels(i, n, fmt, x):
            a = "%d of %d" % (i, n)
            b = "v%s" % i
            c = "100%% done: %s" % x
            d = fmt % x
            return a, b, c, d, i % n
    """)
    per_line: dict[int, Counter] = {}
    for b in fs["labels"].blocks:
        for i in b.instructions:
            per_line.setdefault(i.line, Counter())[i.cls] += 1
    formats = {line: c["py.build.format"] for line, c in per_line.items()}
    # two conversions and the join; one and the join; `%%` is a literal, not a conversion
    assert [formats[line] for line in (3, 4, 5)] == [3, 2, 2]
    assert all(per_line[line]["py.binary_div"] == per_line[line]["py.binary_other"] == 0 for line in (3, 4, 5))
    # `%` on values of unknown type (a parameter) is taken as the remainder it usually is
    assert [(per_line[line]["py.binary_div"], formats[line]) for line in (6, 7)] == [(1, 0), (1, 0)]


def test_min_max_of_several_values_and_builtin_types_cost_their_measured_work_once_per_call():
    from ccls.counting import block_executions
    fs = read("""
        def clamp(x, lo, hi):
            return max(lo, min(hi, int(x)))

        def lowest(a):
            return min(a)

        def walk(n, a, b):
            t = 0
            for i in range(n):
                for x, y in zip(a, b):
                    t += x * y
            return str(t)
    """)
    shadowed = read("""
        range = list

        def f(n):
            return range(n)
    """)["f"]

    def once_per_call(f) -> dict[str, float]:
        """py.work.* units that are instructions of the calling block, by class: runs per call (n = 10)."""
        out: dict[str, float] = {}
        for b in f.blocks:
            runs = block_executions(b, f.loops).evaluate({s: 10 for s in block_executions(b, f.loops).symbols})
            for i in b.instructions:
                if i.cls.startswith("py.work.") and not is_work_loop(b.loop or ""):
                    out[i.cls] = out.get(i.cls, 0) + runs
        return out

    assert once_per_call(fs["clamp"]) == {"py.work.varargs": 2, "py.work.object": 1}  # max, min; int
    assert once_per_call(fs["lowest"]) == {} and work_classes(fs["lowest"]) == ["py.work.minmax"]  # a reduction
    # range(n) and str(t) once; zip(a, b) again on each of the outer loop's 10 passes
    assert once_per_call(fs["walk"]) == {"py.work.object": 12}
    assert once_per_call(shadowed) == {}  # the module's own `range` (a list), not the builtin
    table = load_tables().cost["cpython-3.11"].classes
    call = table["py.call"].cu
    # 3.11's min(a, b) and a builtin type's call cost many plain builtin calls (measured, not assumed)
    assert table["py.work.varargs"].cu > 20 * call and table["py.work.object"].cu > 10 * call


def test_repeating_a_str_bytes_or_array_copies_bytes_not_references():
    fs = read("""
        from array import array
        import array as arr

        def grid(w, h):
            data = array('d', [0]) * (w * h)
            bits = arr.array('b', [0, 0]) * w
            return data, bits

        def banner(n):
            return "=-" * n

        def raw(k):
            return b"ab" * k

        def refs(n):
            return [0] * n
    """)
    fills = {str(lp.trip_count.iterations) for lp in fs["grid"].loops.values() if is_work_loop(lp.id)}
    assert fills == {"8·h·w", "2·w"}  # bytes made: 8 per double, 1 per signed char
    assert work_classes(fs["grid"]) == ["py.work.fill", "py.work.fill"]
    assert {str(lp.trip_count.iterations) for lp in fs["banner"].loops.values()} == {"2·n"}
    assert {str(lp.trip_count.iterations) for lp in fs["raw"].loops.values()} == {"2·k"}
    assert work_classes(fs["refs"]) == ["py.work.copy"]  # a list's items are references, counted
