"""Search loops and store-to-load forwarding read from a function's lines
(`ccls.readers.search_loops`): the shapes `ccls.sizes` steps through."""
from __future__ import annotations

from ccls.readers.search_loops import blocks_of, forwarded_loads, search_loops

# As the call sites' IR has it (SROA, no inlining): `for (v = 1; v < 40; v++) { n = t[v]; if (size < n) break; }`
BODY = """\
  br label %3
3:
  %.0 = phi i8 [ 1, %2 ], [ %9, %8 ]
  %4 = zext i8 %.0 to i32
  %5 = icmp slt i32 %4, 40
  br i1 %5, label %6, label %10
6:
  %11 = getelementptr inbounds [64 x i8], ptr @t, i64 0, i32 %4
  %12 = load i8, ptr %11, align 1
  store i8 %12, ptr @n, align 1
  %13 = load i8, ptr @n, align 1
  %14 = zext i8 %13 to i32
  %7 = icmp ult i32 %1, %14
  br i1 %7, label %10, label %8
8:
  %9 = add i8 %.0, 1
  br label %3
10:
  call void @use(i8 %.0)
  ret void
}""".splitlines()


def _definitions():
    return {line.split(" = ")[0].strip()[1:]: line.split(" = ", 1)[1] for line in BODY if " = " in line}


def test_a_counter_with_a_second_exit_every_iteration_meets_is_a_search():
    (loop,) = search_loops(blocks_of(BODY), _definitions())
    assert (loop.counter, loop.start, loop.step) == (".0", 1, 1)
    assert loop.stay == ("slt", "%4", "40", True)  # stays while v < 40
    assert loop.leave == ("ult", "%1", "%14", True)  # leaves once size < n


def test_a_load_reads_back_what_its_block_just_stored_unless_a_call_may_write_between():
    assert forwarded_loads(blocks_of(BODY)) == {"13": "%12"}
    called = [line.replace("%13 = load", "call void @g()\n  %13 = load") for line in BODY]
    assert forwarded_loads(blocks_of("\n".join(called).splitlines())) == {}


def test_a_test_only_some_iterations_meet_makes_no_search():
    # the second exit behind an `if` (block 15 may go straight to the latch): no search
    branchy = BODY[:5] + ["  br i1 %5, label %15, label %10", "15:", "  br i1 %p, label %6, label %8"] + BODY[6:]
    assert search_loops(blocks_of(branchy), _definitions()) == []
