"""Python front end: an instance attribute that `__init__` binds once (``self.degree = degree``)
is a size of the methods that read it, set by the calls that create instances (never run)."""
from __future__ import annotations

import textwrap

from ccls.options import AnalysisOptions
from tests.test_python_sizes import loops_by_line, read


def counted(source: str, options: AnalysisOptions = AnalysisOptions()):
    from ccls.engine import count_source
    from ccls.frontends import SourceFile
    return {f.name: f for f in count_source(SourceFile("/src/example.py", textwrap.dedent(source)),
                                            options).functions}


SPLINE = """
    class Spline:
        def __init__(self, points, degree, knots):
            self.points = points
            self.degree = degree
            self.knots = knots

        def basis(self, u):
            for ik in range(1, self.degree + 1):
                u += ik
            return u

        def find(self, u):
            for k in self.knots:
                if k > u:
                    return k
            return u

        def index(self, u):
            for ii in range(self.degree - 1, len(self.knots) - self.degree):
                u += ii
            return u

    def main():
        s = Spline([1, 2, 3], 3, [0, 0, 0, 1, 1, 1, 2, 2, 2])
        return s.basis(0.5) + s.find(1) + s.index(0)
"""


def test_attributes_bound_in_init_are_sizes_of_the_methods_that_read_them():
    fs = read(SPLINE)
    loops = loops_by_line(fs["Spline.basis"])
    assert str(loops[9].trip_count.iterations) == "self.degree"
    assert str(loops_by_line(fs["Spline.find"])[14].trip_count.iterations) != "100"
    assert "len(self.knots)" in loops_by_line(fs["Spline.find"])[14].trip_count.iterations.symbols


def test_the_calls_that_create_instances_set_them_through_init():
    fs = counted(SPLINE)
    assert fs["Spline.basis"].inferred_sizes == {"self.degree": 3.0}
    assert fs["Spline.basis"].size_notes == [
        "self.degree = 3 from the call at example.py:5, passing on degree = 3 from the call at example.py:25"]
    assert fs["Spline.find"].inferred_sizes == {"len(self.knots)": 9.0}
    # A range between two of them is one size, their difference: 9 - 2·3 + 1 = 4 items.
    (name, value), = fs["Spline.index"].inferred_sizes.items()
    assert name.startswith("len(range(") and value == 4.0


def test_an_attribute_no_call_sets_keeps_the_unknown_loop_s_default():
    fs = counted("""
        class Done:
            def __init__(self, count):
                self.count = count
            def clear(self):
                for i in range(self.count):
                    pass
        def run(n):
            return Done(n).clear()
    """, AnalysisOptions(default_trip_count=100, default_parameter_value=1000.0))
    assert fs["Done.clear"].inferred_sizes == {}
    assert "numbers evaluated at self.count=100" in fs["Done.clear"].assumptions


def test_a_constant_attribute_is_its_value_where_read():
    f = read("""
        SIZE = 9
        class Board:
            def __init__(self):
                self.squares = [i for i in range(SIZE * SIZE)]
                self.width = 4
            def reset(self):
                for square in self.squares:
                    pass
                for x in range(self.width):
                    pass
    """)["Board.reset"]
    trips = {line: lp.trip_count.iterations.constant_value() for line, lp in loops_by_line(f).items()}
    assert trips == {8: 81, 10: 4}
    assert "loop at line 8: self.squares is bound once, in Board.__init__ (line 5)" in f.assumptions


def test_attributes_something_else_may_change_stay_unknown():
    fs = read("""
        class Grown:
            def __init__(self):
                self.items = [1, 2, 3]
                self.n = 3
            def add(self, x):
                self.items.append(x)      # grown in place
            def bump(self):
                self.n += 1               # a second store
            def walk(self):
                for x in self.items:
                    pass
                for i in range(self.n):
                    pass

        class Base:
            def __init__(self):
                self.k = 2
            def walk(self):
                for i in range(self.k):
                    pass

        class Derived(Base):
            def __init__(self):
                self.k = 50               # a subclass rebinds it: Base.walk may see either

        class Other:
            def __init__(self, k):
                self.k = k                # an unrelated class's own attribute of that name
            def walk(self):
                for i in range(self.k):
                    pass

        class Elsewhere:
            def __init__(self):
                self.w = 5
            def walk(self, other):
                other.w = 7               # not through self: any instance's w may change
                for i in range(self.w):
                    pass

        class NotSelf:
            def __init__(self):
                self.v = 4
            def walk(self, other):
                for i in range(other.v):  # read through another object: its class is not known
                    pass
    """)
    kinds = {name: [lp.trip_count.kind for lp in loops_by_line(fs[name]).values()]
             for name in ("Grown.walk", "Base.walk", "Elsewhere.walk", "NotSelf.walk")}
    assert kinds == {"Grown.walk": ["unknown", "unknown"], "Base.walk": ["unknown"],
                     "Elsewhere.walk": ["unknown"], "NotSelf.walk": ["unknown"]}
    assert [str(lp.trip_count.iterations) for lp in loops_by_line(fs["Other.walk"]).values()] == ["self.k"]


def test_setattr_or_dict_anywhere_in_the_module_leaves_every_attribute_unknown():
    for change in ("setattr(self, 'n', 9)", "self.__dict__.update(state)"):
        f = read(f"""
            class C:
                def __init__(self, state):
                    self.n = 3
                def restore(self, state):
                    {change}
                def walk(self):
                    for i in range(self.n):
                        pass
        """)["C.walk"]
        assert [lp.trip_count.kind for lp in loops_by_line(f).values()] == ["unknown"]
