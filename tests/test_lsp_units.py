"""Units of the language server that need no client: settings, positions, incremental parsing,
debounce and the worker pool (the service's units: tests/test_service_units.py)."""
from __future__ import annotations

import asyncio
import random
import threading
import time

from ccls import source_map
from ccls.lsp.documents import DocumentModel
from ccls.lsp.positions import UTF8, UTF16, UTF32, LineIndex
from ccls.lsp.scheduler import BACKGROUND, FOREGROUND, DebouncePolicy, DocumentScheduler, WorkerPool
from ccls.lsp.settings import Settings, parse_settings, read_project_file


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
