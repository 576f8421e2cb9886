"""Block shares from LLVM's static branch probabilities (inline graphs, inline opt output)."""
from __future__ import annotations

from fractions import Fraction as F

from ccls.readers.block_frequency import block_frequencies
from ccls.readers.scev import parse_opt_output

# TSVC s277's loop: `if (a[i] >= 0) goto L20; if (b[i] >= 0) goto L30; a[i] += …; L30: b[i+1] = …; L20: ;`
S277 = (["entry", "h", "a", "b", "L30", "x", "inc", "exit"],
        {"entry": ["h"], "h": ["a", "x"], "a": ["b", "L30"], "b": ["L30"], "L30": ["inc"], "x": ["inc"],
         "inc": ["exit", "h"], "exit": []},
        {"h": (["h", "a", "b", "L30", "x", "inc"], None)})


def test_blocks_behind_branches_on_data_run_on_their_share_of_iterations():
    blocks, successors, loops = S277
    data = {("h", "a"): F(1, 2), ("h", "x"): F(1, 2), ("a", "b"): F(1, 2), ("a", "L30"): F(1, 2)}
    shares, entries = block_frequencies(blocks, successors, loops, data)
    assert [shares[b] for b in ("h", "a", "b", "L30", "x", "inc")] == [1, F(1, 2), F(1, 4), F(1, 2), F(1, 2), 1]
    assert shares["entry"] == shares["exit"] == 1 and entries == {"h": 1}


def test_branches_without_probabilities_run_every_successor_at_most_once():
    blocks, successors, loops = S277
    shares, _ = block_frequencies(blocks, successors, loops, {("a", "b"): F(1, 4), ("a", "L30"): F(3, 4)})
    assert shares["a"] == shares["x"] == 1  # the branch in h tests no data: both sides run, as before
    assert shares["b"] == F(1, 4) and shares["L30"] == 1  # 1/4 + 3/4 reach L30: never more than once


def test_an_inner_loop_behind_a_data_branch_is_entered_on_its_share():
    blocks = ["entry", "o", "i", "j", "after", "exit"]
    successors = {"entry": ["o"], "o": ["i", "after"], "i": ["j"], "j": ["i", "after"], "after": ["o", "exit"],
                  "exit": []}
    loops = {"o": (["o", "i", "j", "after"], None), "i": (["i", "j"], "o")}
    shares, entries = block_frequencies(blocks, successors, loops, {("o", "i"): F(3, 4), ("o", "after"): F(1, 4)})
    assert entries == {"o": 1, "i": F(3, 4)}
    assert shares["after"] == 1 and shares["i"] == shares["j"] == 1  # all leave the inner loop to `after`


def test_a_cycle_no_loop_explains_keeps_every_block():
    blocks = ["entry", "h", "p", "q", "exit"]
    successors = {"entry": ["h"], "h": ["p", "q"], "p": ["q", "h"], "q": ["p", "exit"], "exit": []}
    shares, _ = block_frequencies(blocks, successors, {"h": (["h", "p", "q"], None)},
                                  {("h", "p"): F(1, 2), ("h", "q"): F(1, 2)})
    assert all(shares.get(b, 1) == 1 for b in ("h", "p", "q"))


def test_opt_branch_probabilities_are_read_per_function_and_summed_per_edge():
    text = """Printing analysis 'Branch Probability Analysis' for function 'f':
---- Branch Probabilities ----
  edge %entry -> %loop probability is 0x80000000 / 0x80000000 = 100.00% [HOT edge]
  edge %loop -> %"then x" probability is 0x30000000 / 0x80000000 = 37.50%
  edge %sw -> %case probability is 0x20000000 / 0x80000000 = 25.00%
  edge %sw -> %case probability is 0x20000000 / 0x80000000 = 25.00%
Printing analysis 'Branch Probability Analysis' for function 'g':
---- Branch Probabilities ----
  edge %a -> %b probability is 0x40000000 / 0x80000000 = 50.00%
"""
    analyses = parse_opt_output(text)
    assert analyses["f"].edge_probabilities == {("entry", "loop"): 1, ("loop", "then x"): F(3, 8),
                                                ("sw", "case"): F(1, 2)}
    assert analyses["g"].edge_probabilities == {("a", "b"): F(1, 2)}


def test_a_child_loop_the_parents_blocks_do_not_list_is_left_out_not_raised_on():
    # Loop information that does not hold together (the parent's block list omits its child's
    # header, as a cut analysis printout can give): the edge into the child counts as an exit.
    shares, entries = block_frequencies(
        ["entry", "while.cond", "while.body", "land.rhs.i"],
        {"entry": ["while.cond"], "while.cond": ["while.body", "exit"], "while.body": ["land.rhs.i", "while.cond"],
         "land.rhs.i": ["land.rhs.i", "while.cond"]},
        {"while.cond": (["while.cond", "while.body"], None), "land.rhs.i": (["land.rhs.i"], "while.cond")},
        {("while.body", "land.rhs.i"): F(5, 8), ("while.body", "while.cond"): F(3, 8)})
    assert shares["while.body"] == 1


def test_two_arms_that_both_work_run_one_of_them_and_a_guard_is_not_two_arms():
    from ccls.readers.block_frequency import two_armed_branches
    # entry: if (p == q) A else B; both meet at join (a diamond)
    diamond = {"entry": ["a", "b"], "a": ["join"], "b": ["join"], "join": []}
    assert two_armed_branches(["entry"], diamond, {}) == {"entry"}
    # if (n > 0) { loop } : the guard's skip side is reached from the loop side
    guard = {"entry": ["pre", "end"], "pre": ["loop"], "loop": ["loop", "end"], "end": []}
    assert two_armed_branches(["entry"], guard, {"loop": (["loop"], None)}) == set()
    # the same guard with its join threaded into two copies: one side alone enters a loop
    threaded = {"entry": ["pre", "skip"], "pre": ["loop"], "loop": ["loop", "after"], "skip": ["tail"],
                "after": ["tail"], "tail": []}
    assert two_armed_branches(["entry"], threaded, {"loop": (["loop"], None)}) == set()
    # two copies of one source loop the compiler chooses between (unswitched): the counts decide
    copies = {"entry": ["pre1", "pre2"], "pre1": ["l1"], "l1": ["l1", "end"], "pre2": ["l2"], "l2": ["l2", "end"],
              "end": []}
    loops = {"l1": (["l1"], None), "l2": (["l2"], None)}
    assert two_armed_branches(["entry"], copies, loops, {"l1": frozenset({7}), "l2": frozenset({7})}) == set()
    assert two_armed_branches(["entry"], copies, loops, {"l1": frozenset({7}), "l2": frozenset({9})}) == {"entry"}
    # copies whose counts are the same (a nest unswitched on an invariant flag, `if (x > 0)` in
    # its body): no count decides which runs, the flag does, and one copy runs per pass
    same = {"l1": frozenset({7}), "l2": frozenset({7})}
    assert two_armed_branches(["entry"], copies, loops, same, {"l1": "31999", "l2": "31999"}) == {"entry"}
    assert two_armed_branches(["entry"], copies, loops, same, {"l1": "31999", "l2": "(%n /u 4)"}) == set()
    assert two_armed_branches(["entry"], copies, loops, same, {"l1": None, "l2": None}) == set()
    # an early return that never meets the other side
    early = {"entry": ["ret", "work"], "ret": [], "work": []}
    assert two_armed_branches(["entry"], early, {}) == set()


def test_a_switch_that_picks_one_of_its_arms_runs_one_of_them():
    from ccls.readers.block_frequency import one_case_switches

    # switch (m) { case 0: loop a; break; case 1: loop b; break; default: break; }: each arm
    # enters its own loop, the default goes straight to the join (an empty case)
    arms = {"entry": ["a", "b", "join"], "a": ["a", "join"], "b": ["b", "join"], "join": []}
    loops = {"a": (["a"], None), "b": (["b"], None)}
    assert one_case_switches(["entry"], arms, loops, set(), set()) == {"entry": {"join"}}
    # a case falling through into the next (`case 0: x++; case 1: …`) shares the next one's work
    falling = {"entry": ["a", "b", "c"], "a": ["b"], "b": ["join"], "c": ["join"], "join": []}
    assert one_case_switches(["entry"], falling, {}, set(), set()) == {}
