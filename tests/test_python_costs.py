"""Python front end: what a call costs beyond its bytecode (instances, builtins' work), priced
from the measured cpython table."""
from __future__ import annotations

import textwrap

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
