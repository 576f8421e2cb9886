"""Python front end: lengths of lists the module builds itself, without running it: a local list
grown by ``append`` (its appends counted), a list subclass called empty, an attribute list built
in one place (``self.neighbours``), and method calls on a global object (``planner.m(edits)``)."""
from __future__ import annotations

from fractions import Fraction

from ccls.polynomial import Polynomial
from tests.test_python_attributes import counted
from tests.test_python_sizes import loops_by_line, read


def work_units(f, word: str) -> str:
    """The trip count of the builtin work whose label mentions ``word``."""
    return next(str(lp.trip_count.iterations) for lp in f.loops.values()
                if lp.id.rsplit(".", 1)[-1].startswith("W") and word in lp.trip_count.source_text)


def test_a_local_list_grown_by_appends_has_as_many_items_as_appends_run():
    fs = read("""
        def build(xs):
            out = []
            for x in xs:
                out.append(x * 2)
            return ", ".join(out)

        def fixed():
            parts = [0]
            for k in range(8):
                parts.append(k)
                parts.append(-k)
            total = 0
            for p in parts:
                total += p
            return total

        def per_row(rows):
            for r in rows:
                cells = []
                for c in range(3):
                    cells.append(c)
                for x in cells:
                    pass
    """)
    assert str(loops_by_line(fs["fixed"])[14].trip_count.iterations) == "17"  # 1 + 2 × 8
    assert any("parts holds at most 17 items" in a for a in fs["fixed"].assumptions)
    joins = [lp for lp in fs["build"].loops.values() if lp.id.startswith("W")]
    assert [str(lp.trip_count.iterations) for lp in joins] == ["len(xs)"]  # join: one unit per piece
    # Rebuilt on each pass of the outer loop: 3 items each time, not 3 × len(rows).
    assert str(loops_by_line(fs["per_row"])[23].trip_count.iterations) == "3"


def test_lists_that_may_grow_elsewhere_or_still_grow_have_no_length():
    fs = read("""
        def fill(a):
            a.append(1)

        def escapes(v):
            acc = []
            fill(acc)
            for a in acc:
                v += a
            return v

        def before_handing(v):
            acc = [1, 2]
            for a in acc:
                v += a
            fill(acc)
            return v

        def unknown(xs):
            out = []
            while xs:
                out.append(xs.pop())
            for o in out:
                pass

        def inside(xs):
            seen = []
            for x in xs:
                for s in seen:
                    pass
                seen.append(x)

        def other_methods():
            q = [1, 2, 3]
            q.extend([4])
            for x in q:
                pass
    """)
    assert loops_by_line(fs["escapes"])[8].trip_count.kind == "unknown"  # fill() may have grown it
    assert str(loops_by_line(fs["before_handing"])[14].trip_count.iterations) == "2"  # read before fill()
    assert loops_by_line(fs["unknown"])[23].trip_count.kind == "unknown"  # appends in a loop of unknown count
    assert loops_by_line(fs["inside"])[29].trip_count.kind == "unknown"  # read while it grows
    assert loops_by_line(fs["other_methods"])[36].trip_count.kind == "unknown"  # extend: not counted here


def test_list_subclasses_called_empty_and_lengths_handed_to_a_global_objects_method():
    fs = counted("""
        class Collection(list):
            pass

        class Planner:
            def extract(self, constraints):
                for c in constraints:
                    pass

        planner = None

        def change(v):
            global planner
            planner = Planner()
            edits = Collection()
            edits.append(v)
            planner.extract(edits)

        def items():
            xs = list()
            xs.append(1)
            return len(xs)
    """)
    assert fs["Planner.extract"].inferred_sizes == {"len(constraints)": 1.0}
    assert fs["Planner.extract"].size_notes == ["len(constraints) = 1 from the call at example.py:17"]


def test_an_attribute_list_built_in_one_place_bounds_the_loops_over_it_anywhere():
    fs = read("""
        SIZE = 9
        class Square:
            def __init__(self, pos):
                self.pos = pos

            def set_neighbours(self, board):
                self.neighbours = []
                for dx, dy in [(-1, 0), (1, 0), (0, -1), (0, 1)]:
                    if 0 <= self.pos + dx < SIZE:
                        self.neighbours.append(board[self.pos + dx])

            def free(self):
                for n in self.neighbours:
                    pass

        def useful(square):
            for n in square.neighbours:
                pass

        class Queue:
            def __init__(self):
                self.items = []

            def put(self, x):
                self.items.append(x)

            def drain(self):
                for x in self.items:
                    pass
    """)
    assert str(loops_by_line(fs["Square.free"])[14].trip_count.iterations) == "4"
    assert str(loops_by_line(fs["useful"])[18].trip_count.iterations) == "4"
    assert any(".neighbours holds at most 4 items: stored once, in Square.set_neighbours (line 8)" in a
               for a in fs["useful"].assumptions)
    # Grown by another method (put), each call one more: no bound.
    assert loops_by_line(fs["Queue.drain"])[29].trip_count.kind == "unknown"


MODULE_DATA = """
    BODIES = {'sun': (0, 1), 'earth': (1, 2), 'mars': (2, 3)}
    SYSTEM = list(BODIES.values())
    TABLE = [1, 2, 3, 4]
    NAMES = {'a': 1}
    GROWN = [1, 2]

    def energy(bodies=SYSTEM):
        e = 0
        for b in bodies:
            e += 1
        return e

    def scan():
        for t in TABLE:
            pass
        for k in NAMES:
            pass
        for g in GROWN:
            pass

    def register(k):
        NAMES[k] = 2
        GROWN.append(k)

    def main():
        return energy()
"""


def test_module_lists_and_dicts_nothing_resizes_are_constants():
    fs = read(MODULE_DATA)
    loops = loops_by_line(fs["scan"])
    assert str(loops[15].trip_count.iterations) == "4"
    assert loops[17].trip_count.kind == "unknown"  # NAMES[k] = 2 adds keys
    assert loops[19].trip_count.kind == "unknown"  # GROWN.append
    assert "loop at line 15: TABLE is the module's constant (line 4)" in fs["scan"].assumptions


def test_a_default_that_is_a_module_constant_passes_its_length():
    fs = counted(MODULE_DATA)
    assert fs["energy"].inferred_sizes == {"len(bodies)": 3.0}  # three values of a three-key dict


def test_while_loops_over_a_counter_that_moves_by_a_constant_are_counted():
    fs = read("""
        def up(n):
            i = 0
            while i < n:
                i += 1
            return i

        def down(n):
            while n:
                n -= 1

        def by_two():
            k = 3
            while k <= 20:
                k += 2

        def search(xs, n):
            i = 0
            while i < n:
                if xs[i] == 0:
                    return i
                i += 1
            return -1

        def grows(todo):
            i = 0
            while i < len(todo):
                todo.append(1)
                i += 1
    """)
    assert str(loops_by_line(fs["up"])[4].trip_count.iterations) == "n"
    assert str(loops_by_line(fs["down"])[9].trip_count.iterations) == "n"
    assert str(loops_by_line(fs["by_two"])[14].trip_count.iterations) == "9"  # 3, 5, …, 19
    found = loops_by_line(fs["search"])[19].trip_count
    assert found.kind == "expected" and found.iterations == (Polynomial.symbol("n") + 1) * Fraction(1, 2)
    assert loops_by_line(fs["grows"])[27].trip_count.kind == "unknown"  # its bound grows in the loop


def test_setstate_receives_the_instance_dict_copy_and_pickle_hand_it():
    fs = counted("""
        def make():
            class C(object):
                def __init__(self):
                    self.a = 1
                    self.b = 2

                def __reduce__(self):
                    return (C, (), self.__dict__)

                def __setstate__(self, state):
                    self.__dict__.update(state)
            return C()

        class Own:
            def __init__(self):
                self.x = 1

            def __getstate__(self):
                return [self.x] * 50

            def __setstate__(self, state):
                for s in state:
                    pass
    """)
    setstate = fs["make.<locals>.C.__setstate__"]
    assert setstate.inferred_sizes == {"len(state)": 2.0}
    assert any("the 2 attribute(s)" in a and "(a, b)" in a for a in setstate.assumptions)
    assert fs["Own.__setstate__"].inferred_sizes == {}  # its own __getstate__ says what the state is


def test_iterating_an_enum_yields_its_members():
    fs = read("""
        from enum import Enum, IntEnum
        import enum

        class Kind(Enum):
            BIG = 1
            SMALL = 2
            LARGE = 1
            _ignore_ = []

        class Level(enum.IntEnum):
            LOW = 1
            MID = 2
            HIGH = 3

        def kinds():
            for k in Kind:
                pass
            for v in Level:
                pass
            return len(Level)
    """)
    loops = loops_by_line(fs["kinds"])
    assert str(loops[17].trip_count.iterations) == "2"  # LARGE is an alias of BIG
    assert str(loops[19].trip_count.iterations) == "3"
    assert "loop at line 17: Kind is an Enum of 2 members (line 5)" in fs["kinds"].assumptions


def test_a_for_loop_with_a_long_body_keeps_its_count():
    # Past 255 code units the jumps need an EXTENDED_ARG, which comes before FOR_ITER in the header.
    source = "def do(loops, t):\n    range_it = range(loops)\n    for _ in range_it:\n" \
        + "        a, b = t\n" * 200 + "    return a\n"
    (loop,) = read(source)["do"].loops.values()
    assert str(loop.trip_count.iterations) == "loops"


def test_any_all_and_next_stop_the_generator_they_consume_early():
    fs = read("""
        def knobby(widgets):
            return any(w.has_knob for w in widgets if w)

        def first(xs):
            return next(x for x in xs if x > 3)

        def head(xs):
            return next(x * 2 for x in xs)

        def total(xs):
            return sum(x for x in xs)
    """)
    n = Polynomial.symbol("len(widgets)")
    (loop,) = [lp for lp in fs["knobby"].loops.values() if not lp.id.rsplit(".", 1)[-1].startswith("W")]
    assert loop.trip_count.kind == "expected" and loop.trip_count.iterations == (n + 1) * Fraction(1, 2)
    (loop,) = fs["head"].loops.values()
    assert str(loop.trip_count.iterations) == "1"  # no filter: next() takes the first item
    (loop,) = [lp for lp in fs["total"].loops.values() if not lp.id.rsplit(".", 1)[-1].startswith("W")]
    assert str(loop.trip_count.iterations) == "len(xs)"  # sum() consumes it all
    assert any("consumed by next()" in a for a in fs["first"].assumptions)


def test_string_literals_have_their_lengths():
    fs = read("""
        BASES = "ACGT"

        def tally(seq):
            n = 0
            for b in BASES:
                for c in "xyz":
                    n += 1
            return n

        def strip():
            return "  padded  ".strip()
    """)
    loops = loops_by_line(fs["tally"])
    assert (str(loops[6].trip_count.iterations), str(loops[7].trip_count.iterations)) == ("4", "3")
    assert work_units(fs["strip"], "strip") == "10"  # ten characters scanned


def test_a_call_returns_as_many_items_as_every_return_of_the_callee_gives():
    fs = read("""
        def make(n):
            return [0] * n

        def double(xs):
            out = []
            for x in xs:
                out.append(x)
                out.append(x)
            return out

        def maybe(xs):
            if xs:
                return xs
            return []

        def user(n, ys):
            for v in make(n):
                pass
            for w in double(ys):
                pass
            for z in double(make(5)):
                pass
            for q in maybe(ys):
                pass
    """)
    loops = loops_by_line(fs["user"])
    assert [str(loops[line].trip_count.iterations) for line in (18, 20, 22)] == ["n", "2·len(ys)", "10"]
    assert loops[24].trip_count.kind == "unknown"  # maybe() returns ys or []: two lengths
    assert "loop at line 20: double(…) returns 2·len(ys) items (every return of it gives 2·len(xs))" \
        in fs["user"].assumptions


def test_dicts_built_here_keep_their_keys_until_something_adds_one():
    fs = read("""
        def index(ws):
            by_id = {w: 1 for w in ws}
            for k, v in by_id.items():
                pass

        def literal():
            d = {'a': 1, 'b': 2}
            for k in d:
                pass

        def grows(ws):
            d = {}
            for w in ws:
                d[w] = 1
            for k in d:
                pass

        def fill(d):
            d[3] = 4

        def handed(ws):
            d = {w: 1 for w in ws}
            fill(d)
            for k in d:
                pass
    """)
    assert str(loops_by_line(fs["index"])[4].trip_count.iterations) == "len(ws)"  # at most one key per item
    assert str(loops_by_line(fs["literal"])[9].trip_count.iterations) == "2"
    assert loops_by_line(fs["grows"])[16].trip_count.kind == "unknown"  # d[w] = 1 adds keys
    assert loops_by_line(fs["handed"])[25].trip_count.kind == "unknown"  # fill(d) may add keys


def test_counted_while_loops_with_known_ends_and_decorated_callees():
    fs = read("""
        import contextlib

        @contextlib.contextmanager
        def opened(n):
            return [0] * n

        def user(n):
            for x in opened(n):
                pass

        def big():
            i = 0
            while i < 100000:
                i += 1
            j = 10
            while j >= 3:
                j -= 3
            k = 5
            while k != 3:
                k += 1
    """)
    assert loops_by_line(fs["user"])[9].trip_count.kind == "unknown"  # the decorator decides what it returns
    loops = loops_by_line(fs["big"])
    assert [str(loops[line].trip_count.iterations) for line in (14, 17)] == ["100000", "3"]  # 10, 7, 4
    assert loops[20].trip_count.kind == "unknown"  # moving away from 3: never meets it


def test_a_counted_while_loop_with_branches_or_error_checks_keeps_its_count():
    fs = read("""
        def clear(n, xs):
            i = 0
            while i < n:
                if xs[i]:
                    xs[i] = 0
                i += 1

        def checked(n, xs):
            i = 0
            while i < n:
                if xs[i] < 0:
                    raise ValueError(i)
                i += 1
    """)
    for name in ("clear", "checked"):
        (loop,) = fs[name].loops.values()
        assert (loop.trip_count.kind, str(loop.trip_count.iterations)) == ("bounded", "n")
