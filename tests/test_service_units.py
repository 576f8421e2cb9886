"""Units of the analysis service that need no client: reduced translation units (what is
compiled when some functions changed, lines kept), moved reports, cohort members and peers,
count cache keys, and the program's sizes from call sites."""
from __future__ import annotations

import shutil
import subprocess

import pytest

from ccls import source_map
from ccls.service import units as reduce
from tests.test_lsp_documents import C_TEXT

CLANG = shutil.which("clang-19") or shutil.which("clang")


# -- reduced translation units ----------------------------------------------------------------

def _functions(text: bytes, language: str):
    return source_map.functions_in(source_map.parse(text, language), text, language)


def _units(data: bytes):
    """(the file's functions, their names, the sorted names of given function indices) of C text."""
    fns = _functions(data, "c")
    names = [f.name for f in fns]
    return fns, names, lambda indices: sorted(names[i] for i in indices)


def test_context_ignores_comments_and_layout_but_not_code():
    a = b"#define N 4\n// note\nint f(void) { return N; }\n"
    b = b"#define N 4\n\n\n/* other note */\nint f(void) { return N; }\n"
    c = b"#define N 8\nint f(void) { return N; }\n"
    ctx = [reduce.context_text(t, _functions(t, "c")) for t in (a, b, c)]
    assert ctx[0] == ctx[1] != ctx[2]


def test_units_to_compile_follow_callees_and_internal_callers():
    data = C_TEXT.encode()
    fns, names, named = _units(data)
    assert named(reduce.units_to_compile(data, fns, [names.index("main")], "c")) == ["main", "norm", "sq"]
    # The C front end emits every function as external, so a static helper compiles alone...
    assert named(reduce.units_to_compile(data, fns, [names.index("sq")], "c")) == ["sq"]
    # ...while for other compilers its callers come along, so that it is emitted as in the file.
    assert named(reduce.units_to_compile(data, fns, [names.index("sq")], "cuda")) == ["norm", "sq"]
    assert named(reduce.units_to_compile(data, fns, [names.index("norm")], "c")) == ["norm", "sq"]


def test_a_static_callee_with_other_callers_keeps_one_of_them():
    data = (b"static int shared(int x) { return x * 3; }\n"
            b"static int alone(int x) { return x + 1; }\n"
            b"int a(int x) { return shared(x) + alone(x); }\n"
            b"int big_b(int x) { int s = 0; for (int i = 0; i < x; i++) s += shared(i); return s; }\n"
            b"int c(int x) { return shared(x - 1); }\n")
    fns, names, named = _units(data)
    graph = reduce.callees(data, fns)
    assert named(reduce.shared_statics(data, fns, graph, "c")) == ["shared"]
    # `shared` has two other callers in the file: the build inlines it into `a` only if its size
    # allows, so the reduced unit keeps one more caller (the smallest), `alone` needs none.
    assert named(reduce.units_to_compile(data, fns, [names.index("a")], "c", graph)) == ["a", "alone", "c", "shared"]
    assert named(reduce.units_to_compile(data, fns, [names.index("a"), names.index("c")], "c", graph)) == \
        ["a", "alone", "c", "shared"]


def test_static_callees_sharing_their_other_callers_keep_one_each_once():
    # `p` is called by `a`, `b` and `c`, `q` by `a` and `b`: the caller kept for `p` is `q`'s second.
    data = (b"static int p(int x) { return x * 3; }\n"
            b"static int q(int x) { return x + 1; }\n"
            b"int a(int x) { return p(x) + q(x); }\n"
            b"int b(int x) { return p(x) - q(x); }\n"
            b"int c(int x) { int s = 0; for (int i = 0; i < x; i++) s += p(i) * i; return s; }\n")
    fns, names, named = _units(data)
    assert named(reduce.units_to_compile(data, fns, [names.index("a")], "c")) == ["a", "b", "p", "q"]


@pytest.mark.skipif(CLANG is None, reason="clang not installed")
@pytest.mark.parametrize("language,text", [
    ("c", C_TEXT),
    ("cpp", """#include <vector>
namespace geo {
struct Grid {
    explicit Grid(int n) : cells(n) {}
    double total() const { double s = 0; for (double c : cells) s += c; return s; }
    std::vector<double> cells;
    double scaled(double k) const;
};
double Grid::scaled(double k) const {
    return total() * k;
}
template <class T> T twice(T x) { return x + x; }
constexpr int cube(int x) { return x * x * x; }
auto deduced(int x) { return x * 2; }
}
int use(int n) {
    geo::Grid g(n);
    static_assert(geo::cube(2) == 8, "constexpr body kept");
    return static_cast<int>(g.scaled(2.0)) + geo::twice(n) + geo::deduced(n);
}
"""),
])
def test_reduced_unit_compiles_and_keeps_line_numbers(tmp_path, language, text):
    data = text.encode()
    fns = _functions(data, language)
    keep = {len(fns) - 1}  # only the last function keeps its body
    reduced = reduce.reduced_text(data, fns, keep, language)
    assert reduced.count(b"\n") == data.count(b"\n")
    last = fns[-1]
    assert reduced.splitlines()[last.start_line - 1:last.end_line] == data.splitlines()[last.start_line - 1:last.end_line]
    source = tmp_path / ("r.c" if language == "c" else "r.cpp")
    source.write_bytes(reduced)
    result = subprocess.run([CLANG, "-fsyntax-only", "-Werror=return-type", str(source)],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr


def test_c_units_drop_functions_nobody_names():
    data = C_TEXT.encode()
    fns = _functions(data, "c")
    names = [f.name for f in fns]
    keep = {names.index("norm")}
    graph = reduce.callees(data, fns)
    declare = reduce.referenced(data, fns, keep, graph)
    assert sorted(names[i] for i in declare) == ["sq"]
    reduced = reduce.reduced_text(data, fns, keep, "c", declare).decode()
    assert reduced.count("\n") == C_TEXT.count("\n")
    assert "static double sq(double x) ;" in reduced and "main" not in reduced
    assert "for (int i = 0; i < n; i++) s += sq(v[i]);" in reduced


def test_shift_lines_moves_every_line():
    from tests.test_cache import counted
    fn = counted(line=10)
    moved = reduce.shift_lines(fn, 5, "/new.c")
    assert (moved.line, moved.end_line, moved.file) == (15, 19, "/new.c")
    assert moved.loops[0].line == 16 and moved.sites[0].line == 17
    assert list(moved.line_counts) == [17]
    assert reduce.shift_lines(moved, -5, "/src/a.c") == fn


def test_line_mentions_inside_the_function_move_with_it():
    import dataclasses
    from tests.test_cache import counted
    fn = counted(line=10)  # lines 10..14
    fn = dataclasses.replace(
        fn, assumptions=["branch at line 12 follows loaded data", "launched as <<<4, 64>>> at line 40"],
        sites=[dataclasses.replace(fn.sites[0], message="integer division inside a loop at line 12")])
    moved = reduce.shift_lines(fn, 3)
    assert moved.assumptions == ["branch at line 15 follows loaded data", "launched as <<<4, 64>>> at line 40"]
    assert moved.sites[0].message == "integer division inside a loop at line 15" and moved.sites[0].line == 15
    assert reduce.shift_lines(moved, -3) == fn


def test_a_moved_function_keeps_its_report_with_lines_shifted():
    import dataclasses
    from ccls.engine import ReportSettings, report
    from ccls.options import AnalysisOptions
    from ccls.tables import load_tables
    from tests.test_cache import counted
    fn = counted(line=10)
    fn = dataclasses.replace(fn, sites=[dataclasses.replace(fn.sites[0], message="division at line 12")])
    tables, options = load_tables(), AnalysisOptions()
    before = report([fn], tables, ReportSettings(), options)[0]
    moved_fn = reduce.shift_lines(fn, 7)
    from ccls.service.reports import moved_report
    shifted = moved_report(before, moved_fn)
    fresh = report([moved_fn], tables, ReportSettings(), options)[0]
    assert shifted == fresh  # the same as costing the moved function again
    assert shifted.findings[0].line == 19 and "line 19" in shifted.findings[0].message
    assert shifted.hottest_lines == [(19, before.hottest_lines[0][1])]


def test_assign_uses_innermost_line_range_then_name():
    data = C_TEXT.encode()
    fns = _functions(data, "c")
    from tests.test_cache import counted
    import dataclasses
    no_line = dataclasses.replace(counted("sq"), line=None)
    placed = reduce.assign([counted("norm", 4), no_line, counted("ghost", 99)], fns)
    assert {fns[i].name: [c.name for c in cs] for i, cs in placed.items()} == {"norm": ["norm"], "sq": ["sq"]}


@pytest.mark.skipif(CLANG is None, reason="clang not installed")
def test_cohort_members_cost_like_the_functions_they_stand_for(tmp_path):
    from ccls.engine import ReportSettings, count_source, report
    from ccls.frontends import SourceFile
    from ccls.service.reports import CohortMember
    from ccls.options import AnalysisOptions
    from ccls.tables import load_tables

    options = AnalysisOptions(parameter_values=(("n", 8e6),))  # 61 MiB, beyond the caches: a stream
    tables = load_tables()
    counted = count_source(SourceFile(str(tmp_path / "k.c"), C_TEXT), options, tables).functions
    assert len(counted) == 3 and any(cf.overlaps for cf in counted)
    members = [CohortMember.of(cf, options).counted() for cf in counted]
    assert all(not m.ir_text and not m.line_counts for m in members)
    full = report(counted, tables, ReportSettings(scoring="cohort"), options)
    small = report(members, tables, ReportSettings(scoring="cohort"), options)
    for a, b in zip(full, small):
        assert b.metrics.as_dict() == pytest.approx(a.metrics.as_dict(), rel=1e-12)
        assert b.score == pytest.approx(a.score) and b.grade == a.grade


@pytest.mark.skipif(CLANG is None, reason="clang not installed")
def test_peers_score_and_call_like_the_functions_they_stand_for(tmp_path):
    from ccls.engine import CohortPeer, ReportSettings, count_source, function_metrics, report, rescore
    from ccls.frontends import SourceFile
    from ccls.options import AnalysisOptions
    from ccls.tables import load_tables

    text = ("double unknown(const double *v);\n"
            "__attribute__((noinline)) double heavy(const double *v, int n) {\n"
            "    double s = 0; for (int i = 0; i < n; i++) s += v[i] / (i + 1); return s; }\n"
            "double light(const double *v) { return v[0] + v[1]; }\n"
            "double caller(const double *v, int n) { return heavy(v, n) * 2 + light(v) + unknown(v); }\n")
    options = AnalysisOptions(parameter_values=(("n", 64.0),))
    tables = load_tables()
    counted = count_source(SourceFile(str(tmp_path / "k.c"), text), options, tables).functions
    callers = [cf for cf in counted if cf.calls]
    others = [cf for cf in counted if not cf.calls]
    assert callers and others
    for scoring in ("cohort", "absolute"):
        settings = ReportSettings(scoring=scoring)
        together = report(callers + others, tables, settings, options)[:len(callers)]
        peers = [CohortPeer(cf.name, cf.display_name, function_metrics(cf, tables, settings, options))
                 for cf in others]
        alone = report(callers, tables, settings, options, peers)
        for a, b in zip(together, alone):
            assert (b.score, b.grade, b.scores_by_profile) == (a.score, a.grade, a.scores_by_profile)
            assert b.inclusive_metrics == a.inclusive_metrics and b.unknown_callees == a.unknown_callees
        assert alone[0].unknown_callees == ["unknown"]
        assert alone[0].inclusive_metrics.cu > alone[0].metrics.cu  # heavy(), a peer, is counted in
    # Re-scoring reports made in another cohort gives the scores of this one.
    cohort = ReportSettings(scoring="cohort")
    absolute = report(callers + others, tables, ReportSettings(scoring="absolute"), options)
    rescored = rescore(absolute, tables, cohort)
    assert [(r.score, r.grade) for r in rescored] == \
        [(r.score, r.grade) for r in report(callers + others, tables, cohort, options)]


def test_only_options_that_change_counts_key_the_count_cache():
    from ccls.options import AnalysisOptions
    base = AnalysisOptions().counting_fields()
    faster = AnalysisOptions(warm_tools=True, preamble_dir="/tmp/p", compile_timeout_s=5, compile_memory_mb=512)
    assert faster.counting_fields() == base
    for changed in (AnalysisOptions(default_trip_count=7), AnalysisOptions(arch="aarch64"),
                    AnalysisOptions(parameter_values=(("n", 5.0),)), AnalysisOptions(machine_code=False)):
        assert changed.counting_fields() != base


def test_program_sizes_are_inferred_fresh_for_documents_and_may_be_stale_for_the_background():
    from ccls.service.program_sizes import ProgramSizes
    from ccls.model import CallSite, CountedFunction

    def counted(name: str, parameters: list[str], sites: tuple = ()) -> CountedFunction:
        return CountedFunction(name=name, display_name=name, file="", line=1, end_line=1, language="c", arch="x86_64",
                               parameters=parameters, static_counts={}, counts={}, machine_instructions=None, loops=[],
                               line_counts={}, calls={}, sites=[], assumptions=[], call_sites=sites)

    sizes = ProgramSizes()
    assert sizes.learn("/w/lib.c", [counted("kernel", ["n"])])
    assert sizes.for_document("/w/lib.c") == {}
    assert sizes.learn("/w/main.c", [counted("main", [], (CallSite("main", "kernel", 3, (("const", 64),)),))])
    assert not sizes.learn("/w/main.c", [counted("main", [], (CallSite("main", "kernel", 3, (("const", 64),)),))])
    assert sizes.for_document("/w/lib.c", max_age_s=30.0) == {}  # computed a moment ago: may be stale
    assert sizes.for_document("/w/lib.c")["kernel"]["n"].value == 64  # a document's analysis: fresh
    assert sizes.own_sizes("/w/lib.c") == {} and sizes.own_sizes("/w/main.c") == {}
