"""Python front end: sizes the module itself tells (its constants, ranges kept in locals, slices,
zip) and the sizes its own call sites pass (never run)."""
from __future__ import annotations

import textwrap

from ccls.model import FunctionIR, Loop
from ccls.polynomial import Polynomial
from ccls.readers.python_bytecode import is_work_loop, read_module

n = Polynomial.symbol("n")


def read(source: str) -> dict[str, FunctionIR]:
    functions, errors = read_module(textwrap.dedent(source), "/src/example.py")
    assert errors == []
    return {f.name: f for f in functions}


def loops_by_line(f: FunctionIR) -> dict[int, Loop]:
    return {lp.line: lp for lp in f.loops.values() if not is_work_loop(lp.id)}


def test_module_constants_set_loop_counts_and_say_where_they_come_from():
    f = read("""
        SIZE = 9
        GAMES = 2 * SIZE
        DIRS = ((0, 1), (1, 0), (1, 1))
        BUFSIZE_RANGE = range(SIZE)
        def play():
            for i in range(SIZE * SIZE):
                pass
            for d in DIRS:
                pass
            for g in range(GAMES):
                pass
            for b in BUFSIZE_RANGE:
                pass
            for x in range(len(DIRS)):
                pass
    """)["play"]
    trips = {line: (lp.trip_count.kind, lp.trip_count.iterations.constant_value()) for line, lp in loops_by_line(f).items()}
    assert trips == {7: ("constant", 81), 9: ("constant", 3), 11: ("constant", 18), 13: ("constant", 9),
                     15: ("constant", 3)}
    assert "loop at line 7: SIZE is the module's constant (line 2)" in f.assumptions
    assert "loop at line 13: BUFSIZE_RANGE is the module's constant (line 5)" in f.assumptions


def test_globals_a_function_rebinds_and_module_lists_it_grows_are_not_constants():
    f = read("""
        COUNT = 3
        GROW = []
        TWICE = 1
        TWICE = 2
        def bump():
            global COUNT
            COUNT += 1
            GROW.append(COUNT)
        def f():
            for c in range(COUNT):
                pass
            for c in GROW:
                pass
            for c in range(TWICE):
                pass
    """)["f"]
    assert {lp.trip_count.kind for lp in loops_by_line(f).values()} == {"unknown"}


def test_a_range_kept_in_a_local_is_that_range():
    f = read("""
        def bench(loops):
            range_it = range(loops)
            for _ in range_it:
                pass
    """)["bench"]
    (loop,) = loops_by_line(f).values()
    assert (loop.trip_count.kind, loop.trip_count.iterations) == ("symbolic", Polynomial.symbol("loops"))


def test_a_slice_has_its_length_and_zip_its_first_arguments():
    f = read("""
        def f(points, u, v):
            for p in points[1:]:
                pass
            for a, b in zip(u, v):
                pass
            for a, b in zip(u, u[:]):
                pass
    """)["f"]
    loops = loops_by_line(f)
    length = Polynomial.symbol("len(points)")
    assert loops[3].trip_count.iterations == length - 1
    assert loops[5].trip_count.iterations == Polynomial.symbol("len(u)")
    assert "loop at line 5: zip stops at its shortest argument; taken as len(u) items" in f.assumptions
    assert loops[7].trip_count.iterations == Polynomial.symbol("len(u)")
    assert not any("line 7: zip" in a for a in f.assumptions)  # both the same length: nothing to say


# -- sizes from the module's own call sites -----------------------------------------------------
CALLS = """
    SIZE = 9
    class Board:
        def __init__(self, size):
            for i in range(size * size):
                pass
        def walk(self, k):
            for i in range(k):
                pass
        def go(self):
            self.walk(SIZE + 1)

    def bench(loops, n=50):
        for _ in range(loops):
            for i in range(n):
                pass

    def solve(board):
        for x in board:
            pass

    def grown(path):
        for x in path:
            pass

    def main():
        b = Board(SIZE)
        bench(10)
        bench(loops=20, n=30)
        solve([0] * 64)
        path = [b]
        path.append(b)
        grown(path)
        helper(3)

    def helper(m):
        bench(2 * m)
"""


def counted(source: str):
    from ccls.engine import count_source
    from ccls.frontends import SourceFile
    from ccls.options import AnalysisOptions
    return {f.name: f for f in count_source(SourceFile("/src/example.py", textwrap.dedent(source)),
                                            AnalysisOptions()).functions}


def test_call_sites_pass_constants_keywords_defaults_lengths_and_through_the_call_graph():
    fs = counted(CALLS)
    assert fs["Board.__init__"].inferred_sizes == {"size": 9.0}  # Board(SIZE) runs __init__
    assert fs["Board.__init__"].size_notes == ["size = 9 from the call at example.py:27"]
    assert fs["Board.walk"].inferred_sizes == {"k": 10.0}  # self.walk(SIZE + 1) in the same class
    assert fs["bench"].inferred_sizes == {"loops": 20.0, "n": 50.0}  # the largest; n's default where left out
    assert "6 (the call at example.py:37, passing on m = 3 from the call at example.py:34)" \
        in fs["bench"].size_notes[0]
    assert fs["solve"].inferred_sizes == {"len(board)": 64.0}  # [0] * 64 passes its length
    assert fs["grown"].inferred_sizes == {"len(path)": 2.0}  # built with 1 item, 1 append counted


def test_the_user_s_parameter_values_win_over_call_sites():
    from ccls.engine import count_source
    from ccls.frontends import SourceFile
    from ccls.options import AnalysisOptions
    options = AnalysisOptions(parameter_values=(("n", 7.0),))
    fs = {f.name: f for f in count_source(SourceFile("/src/example.py", textwrap.dedent(CALLS)), options).functions}
    assert fs["bench"].inferred_sizes == {"loops": 20.0}


def test_calls_that_could_reach_several_functions_or_none_of_the_module_s_pass_nothing():
    from ccls.frontends import SourceFile
    from ccls.frontends.python import analyse_python
    from ccls.options import AnalysisOptions
    result = analyse_python(SourceFile("/src/example.py", textwrap.dedent("""
        import math
        class A:
            def step(self, n):
                pass
        class B:
            def step(self, n):
                pass
        def run(x):
            x.step(5)          # A.step or B.step: left out
            math.floor(5)      # another module's function
            len([1, 2])        # a builtin
            run(*[1])          # through *args
    """)), AnalysisOptions())
    assert result.errors == [] and result.calls.sites == ()


def test_unusual_definitions_and_calls_give_call_sites_or_none_and_never_an_error():
    from ccls.frontends import SourceFile
    from ccls.frontends.python import analyse_python
    from ccls.options import AnalysisOptions
    result = analyse_python(SourceFile("/src/example.py", textwrap.dedent("""
        import functools
        class Grid:
            @staticmethod
            def cells(n):
                return [0] * n
            @classmethod
            def square(cls, n):
                return cls.cells(n * n)
            @property
            def size(self):
                return 3
            class Inner:
                def __init__(self, k, /, *, m=4):
                    for i in range(k + m):
                        pass
        def outer(n, *args, **kw):
            def inner(k=-2):
                return [i for i in range(k)]
            f = lambda x: x
            inner(n)
            f(3)
            Grid.cells(5)
            Grid.square(n=6)
            Grid.Inner(2, m=1)
            functools.reduce(f, [1])
            return inner(**kw), outer(*args)
        def main():
            outer(7)
    """)), AnalysisOptions())
    assert result.errors == []
    sites = {(s.caller, s.callee): s.args for s in result.calls.sites}
    assert sites[("outer", "Grid.cells")][0] == ("const", 5)  # a staticmethod: no self
    assert sites[("outer", "Grid.square")][1] == ("const", 6)  # a classmethod: cls first, n by keyword
    assert sites[("outer", "outer.<locals>.inner")][0] == ("param", "n")  # a nested function
    assert sites[("main", "outer")][0] == ("const", 7)


def test_a_c_call_to_a_function_of_the_same_name_passes_no_size_to_python():
    from ccls.frontends import SourceFile
    from ccls.frontends.python import analyse_python
    from ccls.model import CallSite
    from ccls.options import AnalysisOptions
    from ccls.readers.call_sites import ModuleCalls
    from ccls.sizes import infer_sizes
    py = analyse_python(SourceFile("/src/example.py", "def bench(n):\n    for i in range(n):\n        pass\n"),
                        AnalysisOptions()).calls
    c = ModuleCalls("/src/main.c", {"main": ()}, (CallSite("main", "bench", 3, (("const", 5),)),))
    assert infer_sizes([py, c]) == {}


def test_a_range_between_two_amounts_added_to_one_unknown_value_has_their_difference():
    fs = read("""
        def spline(u):
            I = find(u)
            out = 0
            for ik in range(1, 4):
                for ii in range(I - 3 + ik + 1, I + 2):
                    out += ii
            return out

        def chunks(data):
            out = []
            for i in range(len(data)):
                k = pick(i)
                for j in range(k, k + 8):
                    out.append(data[k:k + 16])
            return out
    """)
    inner = loops_by_line(fs["spline"])[6]
    (index,) = inner.trip_count.iterations.symbols  # the outer loop's index: (I + 2) - (I - 3 + ik + 1) = 3 - index
    assert [inner.trip_count.iterations.evaluate({index: k}) for k in range(3)] == [3, 2, 1]
    assert "loop at line 6: range over I, not known here: as many items as its bounds differ by" in fs["spline"].assumptions
    trips = {line: str(lp.trip_count.iterations) for line, lp in loops_by_line(fs["chunks"]).items()}
    assert trips == {12: "len(data)", 14: "8"}
    assert any("data[k:k + 16] costed as 16 × py.work.copy" in a for a in fs["chunks"].assumptions)


def test_the_unknown_value_must_be_the_same_one_at_both_bounds():
    fs = read("""
        def restored(n):
            i = pick(n)
            lo = i
            i = pick(n)              # i changed after lo took it
            for j in range(lo, i + 1):
                pass

        def carried(n):
            lo = 0
            i = pick(n)
            for k in range(n):
                for j in range(lo, i + 1):   # lo is the previous iteration's i
                    pass
                lo = i
                i = pick(k)

        def two(n):
            a = pick(n)
            b = pick(n)
            for j in range(a, b + 2):
                pass
            for j in range(a, a * 2):  # not a shift of a
                pass
    """)
    for name in ("restored", "carried", "two"):
        kinds = [lp.trip_count.kind for lp in loops_by_line(fs[name]).values() if lp.trip_count.kind != "symbolic"]
        assert kinds and set(kinds) == {"unknown"}, name


def test_the_module_s_top_level_calls_pass_their_constants_as_a_c_main_does():
    fs = counted("""
        import sys
        def work(n):
            for i in range(n):
                pass
        def main(n):
            work(n)
        def unread(m):
            for i in range(m):
                pass
        if __name__ == "__main__":
            N = 40
            main(N)
            unread(int(sys.argv[1]))
    """)
    assert fs["work"].inferred_sizes == {"n": 40.0}
    assert fs["work"].size_notes == ["n = 40 from the call at example.py:7, passing on n = 40 from the call at "
                                     "example.py:13"]
    assert fs["unread"].inferred_sizes == {}  # a value known only at run time keeps the default


def test_a_function_handed_to_an_api_with_its_arguments_is_called_with_them():
    fs = counted("""
        import functools
        import pyperf
        from concurrent.futures import ThreadPoolExecutor
        def work(n):
            for i in range(n):
                pass
        def bench(n, k=2):
            for i in range(n * k):
                pass
        def timed(loops, n):
            for i in range(n):
                pass
        def each(x):
            for i in range(x):
                pass
        if __name__ == "__main__":
            with ThreadPoolExecutor() as pool:
                pool.submit(work, 30)
            runner = pyperf.Runner()
            runner.bench_func("bench", bench, 12)
            runner.bench_time_func("timed", timed, 5)  # calls timed(loops, 5): loops is the runner's own
            list(map(each, [1, 2, 3]))                 # map passes items, not the list
    """)
    assert fs["work"].inferred_sizes == {"n": 30.0}
    assert fs["bench"].inferred_sizes == {"n": 12.0, "k": 2.0}
    assert fs["timed"].inferred_sizes == {"n": 5.0} and fs["each"].inferred_sizes == {}


def test_a_bound_method_of_an_object_the_main_block_makes_is_handed_on_with_its_arguments():
    fs = counted("""
        import pyperf
        class Richards:
            def run(self, iterations):
                for i in range(iterations):
                    pass
        class Other:
            def step(self, n):
                for i in range(n):
                    pass
        class Another:
            def step(self, n):
                for i in range(n):
                    pass
        if __name__ == "__main__":
            runner = pyperf.Runner()
            richard = Richards()          # bound inside the main block: a module global all the same
            runner.bench_func("richards", richard.run, 1)
            other = Other()
            runner.bench_func("other", other.step, 7)  # two classes define step: which one is not known
    """)
    assert fs["Richards.run"].inferred_sizes == {"iterations": 1.0}
    assert fs["Other.step"].inferred_sizes == {} and fs["Another.step"].inferred_sizes == {}


def test_an_option_of_the_parsed_command_line_passes_its_default():
    fs = counted("""
        import argparse
        import pyperf
        DEFAULT_WIDTH = 64
        class Canvas:
            def __init__(self, width, height):
                for i in range(width * height):
                    pass
        def render(loops, width, height, depth):
            for i in range(depth):
                pass
            return Canvas(width, height)
        class Game:
            def play(self, turns):
                for i in range(turns):
                    pass
        def main(runner, args):
            game = Game()                     # a local object's bound method, handed on
            runner.bench_func("game", game.play, args.turns)
        if __name__ == "__main__":
            runner = pyperf.Runner()
            cmd = runner.argparser
            cmd.add_argument("--width", type=int, default=DEFAULT_WIDTH)
            cmd.add_argument("--height", type=int, default=48)
            cmd.add_argument("--max-depth", dest="depth", type=int, default=5)
            cmd.add_argument("--turns", type=int, default=7)
            cmd.add_argument("--scale", type=int, default=2)
            cmd.add_argument("--scale", type=int, default=3)  # declared twice, differently: not known
            args = runner.parse_args()
            runner.bench_time_func("render", render, args.width, args.height, args.depth)
            main(runner, args)
    """)
    assert fs["render"].inferred_sizes == {"depth": 5.0}  # its own loops; width and height pass on
    assert fs["Canvas.__init__"].inferred_sizes == {"width": 64.0, "height": 48.0}
    assert fs["Game.play"].inferred_sizes == {"turns": 7.0}


def test_the_language_server_s_call_sites_keep_python_s_length_and_attribute_sizes():
    from ccls.serialize import counted_from_json, counted_to_json
    from ccls.sizes import infer_sizes, module_of
    fs = counted(CALLS + """
    class Spline:
        def __init__(self, knots, degree):
            self.knots = knots
            self.degree = degree
        def at(self, u):
            for i in range(self.degree):
                pass

    def curve():
        return Spline([0.0] * 8, 3)
    """)
    # as the server keeps them: counted functions, through the count cache's JSON
    kept = [counted_from_json(counted_to_json(f)) for f in fs.values()]
    again = infer_sizes([module_of("/src/example.py", kept)])
    assert again[("/src/example.py", "solve")]["len(board)"].value == 64  # solve([0] * 64)
    assert again[("/src/example.py", "Spline.at")]["self.degree"].value == 3  # Spline(…, 3) sets self.degree
    assert fs["Spline.at"].inferred_sizes == {"self.degree": 3.0}  # the same as one file's own analysis


def test_a_size_a_call_passes_as_data_made_at_run_time_is_taken_at_the_default_trip_count():
    fs = counted("""
        class Board:
            def __init__(self):
                self.history = []
            def move(self, pos):
                self.history.append(pos)
            def replay(self, history):
                for pos in history:
                    self.move(pos)
        def copy_game(board, other):
            other.replay(board.history)      # an attribute's list: its length is the program's data
        def walk(n):
            for i in range(n):
                pass
        def first(items):
            walk(len(items))                 # passes on its own parameter's length: stated
        def second(hexes):
            walk(hexes.count)                # a number from the data: left out, the other call states one
        def scaled(f):
            for i in range(10):
                pass
        def main():
            scaled(2.5)                      # a float literal is no size and no run-time value
    """)
    assert fs["Board.replay"].inferred_sizes == {"len(history)": 100.0}  # the default trip count, not 1000
    assert ("len(history) taken as 100, the default trip count: the call at line 11 passes a value the program "
            "makes as it runs (its data, not an input size), as unknown as a loop's count") \
        in fs["Board.replay"].assumptions
    assert fs["walk"].inferred_sizes == {}  # first's len(items) is known only where first is called
    assert not any("taken as" in a for a in fs["walk"].assumptions)
    assert fs["scaled"].inferred_sizes == {}


def test_run_time_sizes_follow_the_default_trip_count_option():
    from ccls.engine import count_source
    from ccls.frontends import SourceFile
    from ccls.options import AnalysisOptions
    source = textwrap.dedent("""
        def total(values):
            s = 0
            for v in values:
                s += v
            return s
        def report(table):
            return total(table.rows)
    """)
    fs = {f.name: f for f in count_source(SourceFile("/src/example.py", source),
                                          AnalysisOptions(default_trip_count=30)).functions}
    assert fs["total"].inferred_sizes == {"len(values)": 30.0}
