"""Units of the language server that need no client: settings, positions, incremental parsing,
reduced translation units, debounce and the worker pool."""
from __future__ import annotations

import asyncio
import random
import shutil
import subprocess
import threading
import time

import pytest

from ccls import source_map
from ccls.service import units as reduce
from ccls.lsp.documents import DocumentModel
from ccls.lsp.positions import UTF8, UTF16, UTF32, LineIndex
from ccls.lsp.scheduler import BACKGROUND, FOREGROUND, DebouncePolicy, DocumentScheduler, WorkerPool
from ccls.lsp.settings import Settings, parse_settings, read_project_file

CLANG = shutil.which("clang-19") or shutil.which("clang")


# -- settings ---------------------------------------------------------------------------------

def test_defaults_are_the_documented_ones():
    settings, messages = parse_settings({})
    assert messages == []
    assert settings == Settings()
    assert (settings.profile, settings.region, settings.scoring, settings.hints_format) == \
        ("DEFAULT", "WORLD", "absolute", "{grade} · {cu} CU · {energy}")
    assert settings.severity("division-in-loop") == "warning"
    assert settings.severity("miss-heavy-loop") == "information"
    assert settings.analysis_options().compile_timeout_s == 30.0


def test_the_vscode_enum_choices_are_the_servers():
    import json
    from pathlib import Path

    from ccls.early_exit import EARLY_EXIT_POLICIES
    from ccls.scoring import NORMALIZATIONS
    from ccls.targets import CPU_ARCHES
    manifest = json.loads((Path(__file__).parents[1] / "vscode-client" / "package.json").read_text())
    properties = manifest["contributes"]["configuration"]["properties"]
    assert properties["ccls.arch"]["enum"] == list(CPU_ARCHES)
    assert properties["ccls.earlyExit"]["enum"] == list(EARLY_EXIT_POLICIES)
    assert properties["ccls.normalization"]["enum"] == list(NORMALIZATIONS)


def test_nested_and_dotted_keys_are_equivalent():
    nested, _ = parse_settings({"hints": {"enabled": False}, "compile": {"extraFlags": ["-DX=1"]}})
    dotted, _ = parse_settings({"hints.enabled": False, "compile.extraFlags": ["-DX=1"]})
    assert nested == dotted
    assert nested.hints_enabled is False and nested.analysis_options().extra_flags == ("-DX=1",)


def test_invalid_values_keep_defaults_and_say_why():
    settings, messages = parse_settings({
        "scoring": "relative", "diagnostics": {"minShare": 3, "divisionInLoop": "loud"},
        "compile": {"timeoutSeconds": "soon", "flags": "-O2"}, "defaultTripCount": 0,
        "hints": {"format": "{grade"}, "surprise": 1, "earlyExit": "optimistic",
    })
    assert settings == Settings()
    joined = "\n".join(messages)
    for key in ("ccls.scoring", "ccls.diagnostics.minShare", "ccls.diagnostics.divisionInLoop",
                "ccls.compile.timeoutSeconds", "ccls.compile.flags", "ccls.defaultTripCount",
                "ccls.hints.format", "ccls.surprise: unknown setting", "ccls.earlyExit"):
        assert key in joined


def test_the_normalisation_setting_reaches_the_report_settings():
    assert Settings().normalization == "log-minmax"
    settings, messages = parse_settings({"normalization": "minmax"})
    assert not messages and settings.normalization == "minmax"
    settings, messages = parse_settings({"normalization": "linear"})
    assert settings.normalization == "log-minmax" and any("ccls.normalization" in m for m in messages)


def test_early_exit_setting_reaches_the_analysis_options():
    assert Settings().analysis_options().early_exit == "expected"
    settings, messages = parse_settings({"earlyExit": "Worst"})
    assert not messages and settings.analysis_options().early_exit == "worst"


def test_profiles_case_insensitive_and_custom_profiles_validated():
    settings, messages = parse_settings({"profile": "hpc"})
    assert settings.profile == "HPC" and not messages
    settings, messages = parse_settings({"profile": "green", "customProfiles": {"green": [0.1, 0.6, 0.2, 0.1]}})
    assert settings.profile == "green" and not messages
    settings, messages = parse_settings({"profile": "green", "customProfiles": {"green": [0.5, 0.6, 0.2, 0.1]}})
    assert settings.profile == "DEFAULT"
    assert any("must sum to 1" in m for m in messages) and any("unknown profile" in m for m in messages)


def test_region_checked_only_against_known_regions():
    settings, messages = parse_settings({"region": "fr"}, known_regions=("WORLD", "FR", "DE"))
    assert settings.region == "FR" and not messages
    settings, messages = parse_settings({"region": "atlantis"}, known_regions=("WORLD", "FR"))
    assert settings.region == "WORLD" and "unknown region" in messages[0]


def test_project_file(tmp_path):
    (tmp_path / "ccls-cost.toml").write_text('profile = "HPC"\n[hints]\nformat = "{grade}"\n')
    values, messages = read_project_file(str(tmp_path))
    assert values == {"profile": "HPC", "hints.format": "{grade}"} and messages == []
    (tmp_path / "ccls-cost.toml").write_text("profile = \n")
    values, messages = read_project_file(str(tmp_path))
    assert values == {} and "cannot read" in messages[0]


# -- positions --------------------------------------------------------------------------------

def test_columns_in_each_encoding():
    # "é" is 2 UTF-8 bytes / 1 UTF-16 unit; "𝄞" is 4 bytes / 2 units / 1 code point.
    index = LineIndex("int x; // é𝄞\nint f(int é𝄞y) {}\n")
    line = index.line(1)
    byte_col = len(line[:line.index("y")].encode("utf-8"))
    assert index.byte_col_to_character(1, byte_col, UTF8) == byte_col
    assert index.byte_col_to_character(1, byte_col, UTF16) == line.index("y") + 1
    assert index.byte_col_to_character(1, byte_col, UTF32) == line.index("y")
    for encoding in (UTF8, UTF16, UTF32):
        character = index.byte_col_to_character(1, byte_col, encoding)
        assert index.character_to_byte_col(1, character, encoding) == byte_col
    assert index.byte_col_to_character(0, 3, UTF16) == 3  # ASCII fast path
    assert index.lsp_to_offset(99, 0, UTF16)[0] == len(index.text.encode())  # clamped to the end


def test_lone_surrogates_do_not_break_conversion():
    index = LineIndex("a\udcff\ud800b")
    assert index.character_to_byte_col(0, 3, UTF16) == 7
    assert index.byte_col_to_character(0, 7, UTF16) == 3


def test_lone_cr_lf_and_crlf_each_end_a_line():
    index = LineIndex("a\rbé\r\nc\nd")
    assert index.lines == ["a", "bé", "c", "d"]
    assert index.byte_starts() == [0, 2, 7, 9]
    assert index.lsp_to_offset(1, 9, UTF16) == (5, 1, 3)  # clamped before the "\r\n"
    assert index.lsp_to_offset(2, 1, UTF16) == (8, 2, 1)
    assert index.end_point() == (3, 1)


def test_lone_cr_documents_parse_on_lsp_lines():
    model = DocumentModel("file:///w/a.c", "/w/a.c", "c",
                          "int f(int a)\r{\r  return a / 3;\r}\rint g(void) { return 1; }\r", 1)
    assert [(f.name, f.start_line, f.end_line, f.name_start) for f in model.functions()] == \
        [("f", 1, 4, (0, 4)), ("g", 5, 5, (4, 4))]
    model.apply_change((4, 5), (4, 5), "x", UTF16)
    assert model.text.endswith("}\rint gx(void) { return 1; }\r")  # the buffer keeps its "\r"s
    assert [(f.name, f.start_line, f.name_start) for f in model.functions()] == [("f", 1, (0, 4)), ("gx", 5, (4, 4))]
    snapshot = model.snapshot()  # what is compiled: the same lines, each ended by "\n"
    assert snapshot.text == "int f(int a)\n{\n  return a / 3;\n}\nint gx(void) { return 1; }\n"
    assert len(snapshot.data) == len(model.data)


# -- incremental parsing ----------------------------------------------------------------------

C_TEXT = """#include <math.h>
/* é — ünïcode comment */
static double sq(double x) { return x * x; }
double norm(const double *v, int n) {
    double s = 0;
    for (int i = 0; i < n; i++) s += sq(v[i]);
    return sqrt(s);
}
int main(void) { double v[3] = {1, 2, 3}; return (int) norm(v, 3); }
"""


def _utf16_position(text: str, offset: int) -> tuple[int, int]:
    before = text[:offset]
    line = before.count("\n")
    column_text = before[before.rfind("\n") + 1:]
    return line, len(column_text.encode("utf-16-le")) // 2


def test_incremental_edits_match_a_fresh_parse():
    rng = random.Random(7)
    text = C_TEXT
    model = DocumentModel("file:///t.c", "/t.c", "c", text, 1)
    assert [f.name for f in model.functions()] == ["sq", "norm", "main"]
    alphabet = ["x", " ", "\n", "é", "𝄞", "{", "}", ";", "int y = 1;", ""]
    for step in range(150):
        start = rng.randrange(len(text) + 1)
        end = min(len(text), start + rng.randrange(4))
        new = rng.choice(alphabet)
        model.apply_change(_utf16_position(text, start), _utf16_position(text, end), new, UTF16)
        text = text[:start] + new + text[end:]
        assert model.text == text
        if step % 10 == 0:
            incremental = model.functions()
            fresh = source_map.functions_in(source_map.parse(text.encode(), "c"), text.encode(), "c")
            assert [(f.name, f.start_byte, f.end_byte, f.text_hash) for f in incremental] == \
                [(f.name, f.start_byte, f.end_byte, f.text_hash) for f in fresh]


def test_utf8_positions_apply_to_bytes():
    model = DocumentModel("file:///t.c", "/t.c", "c", "// é\nint f(void) { return 0; }\n", 1)
    model.functions()
    model.apply_change((0, 3), (0, 5), "e", UTF8)  # replace the two bytes of "é"
    assert model.text.startswith("// e\n")
    assert [f.name for f in model.functions()] == ["f"]


# -- reduced translation units ----------------------------------------------------------------

def _functions(text: bytes, language: str):
    return source_map.functions_in(source_map.parse(text, language), text, language)


def test_context_ignores_comments_and_layout_but_not_code():
    a = b"#define N 4\n// note\nint f(void) { return N; }\n"
    b = b"#define N 4\n\n\n/* other note */\nint f(void) { return N; }\n"
    c = b"#define N 8\nint f(void) { return N; }\n"
    ctx = [reduce.context_text(t, _functions(t, "c")) for t in (a, b, c)]
    assert ctx[0] == ctx[1] != ctx[2]


def test_units_to_compile_follow_callees_and_internal_callers():
    data = C_TEXT.encode()
    fns = _functions(data, "c")
    names = [f.name for f in fns]
    def named(indices):
        return sorted(names[i] for i in indices)
    assert named(reduce.units_to_compile(data, fns, [names.index("main")], "c")) == ["main", "norm", "sq"]
    # The C front end emits every function as external, so a static helper compiles alone...
    assert named(reduce.units_to_compile(data, fns, [names.index("sq")], "c")) == ["sq"]
    # ...while for other compilers its callers come along, so that it is emitted as in the file.
    assert named(reduce.units_to_compile(data, fns, [names.index("sq")], "cuda")) == ["norm", "sq"]
    assert named(reduce.units_to_compile(data, fns, [names.index("norm")], "c")) == ["norm", "sq"]


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


# -- scheduling -------------------------------------------------------------------------------

def test_debounce_policy_is_clangds():
    policy = DebouncePolicy()
    assert policy.compute([]) == 0.5
    assert policy.compute([0.01, 0.02, 0.03]) == 0.05
    assert policy.compute([0.1, 0.2, 5.0]) == 0.2
    assert policy.compute([2.0, 3.0]) == 0.5


def test_background_jobs_never_take_the_last_worker():
    pool = WorkerPool(2)
    release = threading.Event()
    started = []
    try:
        background = [pool.submit(lambda i=i: (started.append(i), release.wait(5)), BACKGROUND) for i in range(3)]
        time.sleep(0.1)
        assert len(started) == 1  # one background job at a time with two workers
        t0 = time.monotonic()
        assert pool.submit(lambda: "fg", FOREGROUND).result(timeout=2) == "fg"
        assert time.monotonic() - t0 < 1.0
        release.set()
        for future in background:
            future.result(timeout=5)
    finally:
        release.set()
        pool.shutdown()


def test_a_burst_of_changes_coalesces_into_few_analyses():
    async def scenario():
        runs: list[int] = []
        current: list[bool] = []

        async def analyse(key, generation):
            runs.append(generation)
            await asyncio.sleep(0.05)
            current.append(scheduler.is_current(key, generation))

        scheduler = DocumentScheduler(analyse, DebouncePolicy(min_s=0.02, max_s=0.02))
        for _ in range(200):
            scheduler.schedule("doc")
            await asyncio.sleep(0.001)
        await asyncio.sleep(0.4)
        return runs, current, scheduler.generation("doc")

    runs, current, last = asyncio.run(scenario())
    assert 1 <= len(runs) <= 20
    assert runs[-1] == last and current[-1] is True


def test_a_burst_of_edits_is_parsed_ahead_once_per_pause():
    from lsprotocol import types

    from ccls.lsp.session import PARSE_AHEAD_S, Session

    class Model:
        def __init__(self):
            self.parses, self.version = 0, 0

        def apply_change(self, *args):
            pass

        def call_graph(self):
            self.parses += 1

    class Scheduler:
        def schedule(self, uri):
            pass

    async def scenario():
        session = Session(server=None)
        session.scheduler, model = Scheduler(), Model()
        session.docs["file:///a.c"] = model
        for version in range(1, 30):  # keystrokes, each handled before the next (callbacks run)
            session.change("file:///a.c", version, [types.TextDocumentContentChangeWholeDocument(text="x")])
            await asyncio.sleep(0)
        await asyncio.sleep(PARSE_AHEAD_S * 5)
        during_burst = model.parses
        session.change("file:///a.c", 30, [types.TextDocumentContentChangeWholeDocument(text="y")])
        await asyncio.sleep(PARSE_AHEAD_S * 5)
        return during_burst, model.parses

    during_burst, after_pause = asyncio.run(scenario())
    assert during_burst == 1 and after_pause == 2


def test_an_edit_after_a_pause_waits_only_the_minimum():
    async def scenario():
        started: list[float] = []

        async def analyse(key, generation):
            started.append(time.monotonic())

        scheduler = DocumentScheduler(analyse, DebouncePolicy(min_s=0.05, max_s=0.5))
        scheduler.history.extend([0.4, 0.4, 0.4])  # recent analyses took 400 ms
        t0 = time.monotonic()
        scheduler.schedule("doc")  # first edit after a long pause
        await asyncio.sleep(0.3)
        isolated = started[0] - t0
        t1 = time.monotonic()
        scheduler.schedule("doc")  # 300 ms later: inside the window, so part of a burst
        await asyncio.sleep(0.6)
        return isolated, started[1] - t1

    isolated, burst = asyncio.run(scenario())
    assert isolated < 0.2
    assert burst >= 0.38


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
