"""Branches on a loop's own counter: shares counted from the arithmetic, not estimated."""
from fractions import Fraction

from ccls.readers.counter_branches import counter_branch_probabilities

# for (i = 0; i < 64; i++) { if (i < 16) A; else if (i < 32) B; else C; }  — as clang lays it out
SUCCESSORS = {"head": ["a", "else"], "else": ["b", "c"], "a": ["end"], "b": ["end"], "c": ["end"],
              "end": ["exit", "head"]}
BODY = ["head", "a", "else", "b", "c", "end"]
SCEVS = {"i": "{0,+,1}<nuw><nsw><%head>", "j": "{5,+,3}<%head>"}


def test_a_chain_of_counter_compares_gets_each_round_its_share():
    branches = {"head": ("%cmp = icmp ult i32 %i, 16", "a", "else"),
                "else": ("%cmp2 = icmp ult i32 %i, 32", "b", "c")}
    shares = counter_branch_probabilities("head", BODY, 64, branches, SUCCESSORS, SCEVS)
    assert shares == {("head", "a"): Fraction(1, 4), ("head", "else"): Fraction(3, 4),
                      # of the 48 iterations that reach the second test, 16 take it
                      ("else", "b"): Fraction(1, 3), ("else", "c"): Fraction(2, 3)}


def test_equality_signed_compares_and_a_counter_on_the_right():
    branches = {"head": ("%first = icmp eq i64 %i, 0", "a", "else"),
                # 40 > j, with j = 5, 8, 11, …: true while j < 40, for k = 0 … 11
                "else": ("%c = icmp sgt i32 40, %j", "b", "c")}
    shares = counter_branch_probabilities("head", BODY, 100, branches, SUCCESSORS, SCEVS)
    assert shares[("head", "a")] == Fraction(1, 100)
    assert shares[("else", "b")] == Fraction(11, 99)  # k = 1 … 11 of the 99 that are not the first


def test_compares_on_anything_else_are_left_to_the_estimates():
    branches = {"head": ("%cmp = icmp ult i32 %n, 16", "a", "else"),  # not the counter
                "else": ("%cmp2 = icmp ult i32 %i, %m", "b", "c")}  # not against a constant
    assert counter_branch_probabilities("head", BODY, 64, branches, SUCCESSORS, SCEVS) == {}
    # an inner counter of another loop, or a count past what is counted one by one
    assert counter_branch_probabilities("other", ["other"], 64, {}, {}, SCEVS) == {}
    assert counter_branch_probabilities("head", BODY, 1 << 20, {"head": ("%c = icmp ult i32 %i, 16", "a", "else")},
                                        SUCCESSORS, SCEVS) == {}
