"""The readers never raise on arbitrary input beyond their documented error (issue 17 §4):
LLVM IR text (IRNotReadable), opt's analysis printout (never), ScalarEvolution expressions
(NotPolynomial, BudgetExhausted), Python source (never: errors come back as AnalysisErrors).
The strongest case: a real module read with its analysis printout cut and shuffled, so that the
loops, trip counts and values the reader is told about do not match the code it reads."""
import random
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ccls.readers.llvm_ir import IRNotReadable, ModuleText, parse_module, read_functions
from ccls.readers.python_bytecode import read_module
from ccls.readers.scev import (BudgetExhausted, NotPolynomial, ReadingBudget, ScevContext, parse_opt_output,
                               to_polynomial)

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "textkit.c"
needs_clang = pytest.mark.skipif(shutil.which("clang-19") is None and shutil.which("clang") is None,
                                 reason="clang-19 is not installed (apt-get install clang-19)")

SCEV_PIECES = ["{", "}", "(", ")", ",+,", "<%for.body>", "<%L>", "<nuw>", "<nsw>", " + ", " * ", " /u ", " smax ",
               " umin ", " umin_seq ", "(zext i32 ", "(sext i8 ", "(trunc i64 ", " to i64)", " to i2)", "%n", "%p",
               "%loaded", "@g", "-1", "0", "1", "7", "4294967295", "***COULDNOTCOMPUTE***", "i64 ", "ptr ",
               "(ptrtoint ptr ", "%", "<", ">", ","]


def reads_everything(text: str) -> None:
    """parse_module then read_functions: IRNotReadable is the only error allowed."""
    analyses = parse_opt_output(text)
    try:
        parsed = parse_module(ModuleText(IR_TEXT[0], analyses))
    except IRNotReadable:
        return
    read_functions(parsed, "fuzz.c", "c", "x86_64", 100, budget_steps=20_000)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=600))
def test_opt_printout_reader_never_raises_on_random_text(text):
    parse_opt_output(text)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(SCEV_PIECES), max_size=40))
def test_scev_expressions_raise_only_not_polynomial(pieces):
    ctx = ScevContext({"n", "p"}, {"loaded": "{0,+,1}<%L>"}, {"loaded": ["%n", "%loaded"]}, {"L", "for.body"},
                      budget=ReadingBudget(max_steps=5_000))
    try:
        to_polynomial("".join(pieces), ctx)
    except (NotPolynomial, BudgetExhausted):
        pass


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=400))
def test_ir_reader_raises_only_ir_not_readable_on_random_text(text):
    try:
        parsed = parse_module(ModuleText(text, parse_opt_output(text)))
    except IRNotReadable:
        return
    read_functions(parsed, "fuzz.ll", "ir", "x86_64", 100)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=400))
def test_python_reader_never_raises_on_random_source(text):
    functions, errors = read_module(text, "fuzz.py")
    assert isinstance(functions, list) and isinstance(errors, list)


IR_TEXT: list[str] = []  # the fixture's IR, compiled once
ANALYSES: list[str] = []


@pytest.fixture(scope="module")
def compiled():
    from tests.test_real_code import module
    if not IR_TEXT:
        ir, analyses = module(FIXTURE.read_text())
        IR_TEXT.append(ir)
        ANALYSES.append(analyses)
    return IR_TEXT[0], ANALYSES[0]


@needs_clang
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1), keep=st.floats(0.3, 1.0))
def test_a_real_module_with_a_cut_and_shuffled_analysis_printout_is_read_without_raising(compiled, seed, keep):
    _, analyses = compiled
    rng = random.Random(seed)
    lines = analyses.splitlines()
    kept = [line for line in lines if rng.random() < keep]
    for _ in range(rng.randint(0, 20)):  # lines moved to other functions' sections
        if kept:
            kept.insert(rng.randrange(len(kept) + 1), rng.choice(lines))
    for _ in range(rng.randint(0, 10)):  # expressions cut short
        if kept:
            at = rng.randrange(len(kept))
            kept[at] = kept[at][:rng.randint(0, len(kept[at]))]
    reads_everything("\n".join(kept))


@needs_clang
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1))
def test_a_real_module_with_lines_of_its_ir_removed_is_read_or_refused_as_ir_not_readable(compiled, seed):
    ir, analyses = compiled
    rng = random.Random(seed)
    lines = ir.splitlines()
    for _ in range(rng.randint(1, 5)):
        del lines[rng.randrange(len(lines))]
    try:
        parsed = parse_module(ModuleText("\n".join(lines), parse_opt_output(analyses)))
    except IRNotReadable:
        return
    read_functions(parsed, "fuzz.c", "c", "x86_64", 100)


CALL_SITE_LINES = [
    "define dso_local void @set(ptr noundef %c, i32 noundef %n) {", "define internal i32 @run(ptr %c) {", "}",
    "  store i32 %n, ptr %c, align 4, !tbaa !13", "  store i32 14, ptr %c, !tbaa !13", "  store i32 %x, ptr %c",
    "  %x = load i32, ptr %c, align 4, !tbaa !13", "  %y = load i32, ptr %c, !tbaa !99", "  %z = add i32 %x, %y",
    "  %p = phi i32 [ %x, %a ], [ 3, %b ]", "  call void @work(i32 noundef %x, ptr %c), !dbg !20",
    "  call void @set(ptr @G, i32 noundef %z)", "!13 = !{!14, !9, i64 0}", "!14 = !{!\"ctx\", !9, i64 0, !9, i64 4}",
    "!13 = !{!13, !13, i64 0}", "!14 = !{!\"\", !14, i64 0, ", "!20 = !DILocation(line: 7, scope: !1)", "%", "!", "",
]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(CALL_SITE_LINES), max_size=30))
def test_call_sites_and_sizes_never_raise_on_shuffled_ir(lines):
    from ccls.readers.call_sites import read_call_sites
    from ccls.sizes import infer_sizes

    infer_sizes([read_call_sites("\n".join(lines), "/src/fuzz.c")])
