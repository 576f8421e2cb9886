"""Flags a program never sets: a byte of a static zero-filled array that every store leaves at
zero (stores of 0, copies of such bytes) is zero for the whole run, so a branch testing it goes
one way (a generated state machine's charts that are never activated)."""
import shutil

import pytest

from tests.test_data_loops import analyse
from ccls.readers.unset_flags import never_set_bytes

IR = """
@flags = internal unnamed_addr global [8 x i8] zeroinitializer, align 1
@wide = internal global [4 x i16] zeroinitializer, align 2
@leaked = internal global [4 x i8] zeroinitializer, align 1
@shared = dso_local global [4 x i8] zeroinitializer, align 1

define void @set() {
entry:
  store i8 1, ptr getelementptr inbounds (i8, ptr @flags, i64 1), align 1
  store i8 0, ptr getelementptr inbounds (i8, ptr @flags, i64 4), align 1
  %a = load i8, ptr getelementptr inbounds (i8, ptr @flags, i64 3), align 1
  store i8 %a, ptr getelementptr inbounds (i8, ptr @flags, i64 2), align 1
  %b = load i8, ptr getelementptr inbounds (i8, ptr @flags, i64 1), align 1
  store i8 %b, ptr getelementptr inbounds (i8, ptr @flags, i64 5), align 1
  %c = load i8, ptr getelementptr inbounds (i8, ptr @flags, i64 5), align 1
  store i8 %c, ptr getelementptr inbounds (i8, ptr @flags, i64 6), align 1
  store i16 7, ptr getelementptr inbounds ([4 x i16], ptr @wide, i64 0, i64 2), align 2
  ret void
}

define ptr @leak() {
entry:
  ret ptr @leaked
}

define void @clear(i64 %i) {
entry:
  %p = getelementptr inbounds [8 x i8], ptr @flags, i64 0, i64 %i
  store i8 0, ptr %p, align 1
  %v = load <4 x i8>, ptr @flags, align 1
  ret void
}
"""


def test_bytes_only_zeros_and_copies_of_unset_bytes_reach_stay_zero():
    unset = never_set_bytes(IR)
    # 1 is set, 5 copies 1, 6 copies 5; 2 copies 3 (never set), 4 gets 0, a variable index only 0
    assert unset["flags"] == frozenset({0, 2, 3, 4, 7})
    assert unset["wide"] == frozenset({0, 1, 2, 3, 6, 7})  # element 2 is bytes 4 and 5
    assert "leaked" not in unset  # its address leaves the module's loads and stores
    assert "shared" not in unset  # another file may write a global that is not static


def test_a_store_of_anything_at_a_variable_index_may_set_every_byte():
    text = IR.replace("store i8 0, ptr %p", "store i8 9, ptr %p")
    assert "flags" not in never_set_bytes(text)


pytestmark_clang = pytest.mark.skipif(shutil.which("clang-19") is None and shutil.which("clang") is None,
                                      reason="clang-19 is not installed (apt-get install clang-19)")

STATE_MACHINE = """
static char active[64];  /* a chart's flags; checked with a variable index below, so LLVM keeps the array */
int state, out;
void work(int);
void activate(void) { active[1] = 1; }
void copy(void) { active[2] = active[3]; active[5] = active[1]; }
void step(void) {
  if (active[2]) { state = state * 7 + 3; work(state); work(out); }   /* never runs */
  if (active[5]) { out = out * 5 + 1; work(out); }                    /* may run */
}
int count(void) { int n = 0; for (int i = 0; i < 64; i++) n += active[i]; return n; }
"""


@pytestmark_clang
def test_a_branch_on_a_never_set_flag_goes_one_way():
    step = analyse(STATE_MACHINE, "/tmp/ccls-test/unset_flags.c")["step"]
    shares = {b.name: b.frequency for b in step.blocks}
    assert shares["if.then"] == 0  # behind `active[2]`: never
    assert 0 < shares["if.then2"] < 1  # behind `active[5]`, a copy of a flag `activate` sets: LLVM's estimate
    assert any("no store of this file makes nonzero" in a for a in step.assumptions)


@pytestmark_clang
def test_a_flag_array_whose_address_escapes_is_not_known():
    leaked = STATE_MACHINE + "char *flags(void) { return active; }\n"
    step = analyse(leaked, "/tmp/ccls-test/unset_flags_leaked.c")["step"]
    assert {b.name: b.frequency for b in step.blocks}["if.then"] > 0
    assert not any("no store of this file makes nonzero" in a for a in step.assumptions)
