"""Counting on hand-built `FunctionIR`, no compiler: execution counts of nested loops, and the
memory model — which tier a load's executions are charged to, by its access pattern and the
working set its loop nest touches (`CacheModel`'s defaults: 48 KiB L1d, 2 MiB L2, 32 MiB L3,
64-byte lines)."""
from __future__ import annotations

from fractions import Fraction

from ccls.counting import count_function
from ccls.model import BasicBlock, FunctionIR, Instruction, Loop, MemoryAccess, TripCount
from ccls.polynomial import Polynomial
from ccls.table_types import CacheModel

N = Polynomial.symbol("n")
LINE = CacheModel().line_bytes


def _moving(stride_bytes: int, region: str) -> MemoryAccess:
    """a[i·stride/8] of doubles: moves `stride_bytes` per iteration of the loop."""
    pattern = "unit" if stride_bytes == 8 else "strided"
    step = Polynomial.constant(stride_bytes)
    return MemoryAccess(pattern, 8, step, loop_strides=(("loop", step),), region=f"{stride_bytes}·loop + {region}",
                        offset=Polynomial())


STREAM = _moving(8, "a")  # a[i]
COLUMN = _moving(4096, "b")  # b[512·i]: a new line, and a new page, every iteration
CHASE = MemoryAccess("pointer-chase", 8)  # p = p->next
INVARIANT = MemoryAccess("invariant", 8)  # *scale, the same address every iteration


def one_loop(*accesses: MemoryAccess, trip: TripCount = TripCount("symbolic", N)) -> FunctionIR:
    """`for (i = 0; i < n; i++)` whose body loads each access once (line 3, 4, …)."""
    body = [Instruction("load", line=3 + k, access=access) for k, access in enumerate(accesses)]
    body += [Instruction("int_add"), Instruction("int_cmp"), Instruction("branch")]
    return FunctionIR(
        name="f", display_name="f", file="/w/f.c", line=1, end_line=9, language="c", arch="x86_64",
        parameters=["n"],
        blocks=[BasicBlock("entry", None, [Instruction("branch")]),
                BasicBlock("loop", "loop", body),
                BasicBlock("exit", None, [Instruction("return")])],
        loops={"loop": Loop("loop", None, 1, trip, line=2)})


def counts_at(fn: FunctionIR, n: float, cache: CacheModel | None = None) -> dict[str, Polynomial]:
    return count_function(fn, cache, {"n": n}.__getitem__).counts


def test_a_unit_stride_stream_takes_a_new_line_every_eighth_double_from_the_tier_its_size_reaches():
    new_lines = Fraction(8, LINE)
    # 800 bytes: all in L1
    assert counts_at(one_loop(STREAM), 100)["load.L1"] == N
    # 80 KB: past L1, inside L2; 80 MB: past L3, where the prefetcher streams lines in
    for n, far in ((10_000, "load.L2"), (10_000_000, "load.stream")):
        counts = counts_at(one_loop(STREAM), n)
        assert counts["load.L1"] == N * (1 - new_lines)
        assert counts[far] == N * new_lines
        assert {c for c in counts if c.startswith("load.")} == {"load.L1", far}


def test_a_pointer_chase_pays_the_whole_latency_of_its_tier_every_time_and_is_never_streamed():
    # A node a line: 1,000 nodes (64 KB) fit L2; a million (64 MB) are taken to be in DRAM.
    assert counts_at(one_loop(CHASE), 1_000)["load.L2.chase"] == N
    counted = count_function(one_loop(CHASE), None, {"n": 1e6}.__getitem__)
    assert counted.counts["load.DRAM.chase"] == N
    assert not any(c.startswith(("load.L1", "load.stream")) for c in counted.counts)
    assert any("pointer chase" in note for note in counted.assumptions)
    assert [site.kind for site in counted.sites] == ["miss-heavy-loop"]


def test_a_chase_inside_one_known_array_is_served_by_the_cache_that_holds_the_array():
    # node = next[node] in a 6 KB table: every load waits for the one before, from L1, however
    # many steps the loop takes; in a 1 MiB table, from L2 (with the chase's whole latency).
    for span, expected in ((6_087, "load.L1"), (1 << 20, "load.L2.chase")):
        within = MemoryAccess("pointer-chase", 1, span_bytes=span)
        counted = count_function(one_loop(within), None, {"n": 1e6}.__getitem__)
        assert counted.counts[expected] == N
        assert not any("DRAM" in c for c in counted.counts)


def test_a_gather_within_one_known_array_hits_l1_for_the_share_l1_holds_and_misses_to_the_arrays_cache():
    # b[idx[i]] within a 192 KiB array (4x the 48 KiB L1, inside the 2 MiB L2) while a[i] streams
    # 80 MB past: a quarter of the gathers find their line in L1, the rest come from L2, not DRAM.
    gather = MemoryAccess("indirect", 8, span_bytes=4 * 48 * 1024)
    counted = count_function(one_loop(STREAM, gather), None, {"n": 10_000_000}.__getitem__)
    assert counted.counts["load.L2"] == N * Fraction(3, 4)
    assert counted.counts["load.L1"] == N * Fraction(1, 4) + N * (1 - Fraction(8, LINE))
    assert not any("DRAM" in c for c in counted.counts)
    assert any("within an array of 192 KiB: 25% find their line in L1" in a for a in counted.assumptions)
    # beyond every cache (a 1 GiB array), each gather is a miss to DRAM
    huge = MemoryAccess("indirect", 8, span_bytes=1 << 30)
    far = count_function(one_loop(STREAM, huge), None, {"n": 10_000_000}.__getitem__).counts
    l1_share = Fraction(48 * 1024, 1 << 30)
    assert far["load.DRAM"] == N * (1 - l1_share)


def test_an_invariant_load_stays_in_l1_whatever_streams_past_it():
    counts = counts_at(one_loop(STREAM, INVARIANT), 10_000_000)
    assert counts["load.stream"] == N * Fraction(8, LINE)
    assert counts["load.L1"] == N + N * (1 - Fraction(8, LINE))  # all of *scale, and a[i]'s hits


def test_a_stride_of_whole_lines_beyond_the_caches_misses_every_time_and_is_a_finding():
    counted = count_function(one_loop(COLUMN), None, {"n": 1e6}.__getitem__)
    assert counted.counts["load.DRAM.strided"] == N
    assert "load.L1" not in counted.counts
    (site,) = counted.sites
    assert (site.kind, site.line, site.loop) == ("miss-heavy-loop", 3, "loop")
    assert site.classes == {"load.DRAM.strided": N} and "stride 4096 bytes" in site.message
    # the same walk over a contiguous stream is no finding: the prefetcher hides it
    assert count_function(one_loop(STREAM), None, {"n": 1e6}.__getitem__).sites == []


def test_the_cost_tables_caches_decide_the_tier_and_no_table_means_cacheModels_defaults():
    four_mb = 4 * 1024 * 1024 / 8  # doubles: past L2, inside the default 32 MiB L3
    assert "load.L3" in counts_at(one_loop(STREAM), four_mb)
    assert counts_at(one_loop(STREAM), four_mb) == counts_at(one_loop(STREAM), four_mb, CacheModel())
    without_l3 = CacheModel(l1_bytes=32 * 1024, l2_bytes=1024 * 1024, l3_bytes=None)
    counts = counts_at(one_loop(STREAM), four_mb, without_l3)
    assert "load.L3" not in counts and counts["load.stream"] == N * Fraction(8, LINE)


def test_a_triangular_nest_runs_its_inner_body_n_n_minus_1_over_2_times():
    outer = Loop("outer", None, 1, TripCount("symbolic", N), line=2)
    inner = Loop("inner", "outer", 2, TripCount("symbolic", Polynomial.symbol("@outer")), line=3)  # j < i
    fn = FunctionIR(name="t", display_name="t", file="/w/t.c", line=1, end_line=6, language="c", arch="x86_64",
                    parameters=["n"], loops={"outer": outer, "inner": inner},
                    blocks=[BasicBlock("outer", "outer", [Instruction("int_cmp")]),
                            BasicBlock("inner", "inner", [Instruction("fp_add", line=4),
                                                          Instruction("int_div", line=4, divisor="variant")])])
    counted = count_function(fn, None, {"n": 100.0}.__getitem__)
    pairs = N * (N - 1) * Fraction(1, 2)
    assert counted.counts["fp_add"] == pairs and counted.counts["int_cmp"] == N
    assert counted.line_counts[4]["int_div"] == pairs
    assert counted.counts["fp_add"].big_o() == "O(n²)"
    (site,) = counted.sites
    assert (site.kind, site.line, site.classes) == ("division-in-loop", 4, {"int_div": pairs})


def test_an_assumed_trip_count_is_counted_and_the_readers_note_kept():
    fn = one_loop(STREAM, trip=TripCount("unknown", Polynomial.constant(100)))
    fn.assumptions.append("loop %loop: trip count unknown, assumed 100")
    counted = count_function(fn, None, {}.__getitem__)
    assert counted.counts["load.L1"] == Polynomial.constant(100)
    assert counted.loops[0].trip_count.is_assumed and "assumed 100" in counted.assumptions[0]


def test_a_loop_whose_count_is_below_zero_at_the_evaluation_point_does_not_run_there_and_cancels_nothing():
    # `while (len >= 64) {…}` read as len/64 − 1/2 (blocks of 64), then a tail of 100 unknown
    # iterations: at len = 16 the blocks' loop does not run, the tail still does.
    blocks = TripCount("symbolic", N * Fraction(1, 64) - Fraction(1, 2))
    tail = TripCount("unknown", Polynomial.constant(100))
    body = [Instruction("int_add"), Instruction("int_add"), Instruction("branch")]
    fn = FunctionIR(
        name="f", display_name="f", file="/w/f.c", line=1, end_line=9, language="c", arch="x86_64",
        parameters=["n"],
        blocks=[BasicBlock("entry", None, [Instruction("branch")]),
                BasicBlock("blocks", "blocks", [Instruction("int_add")] * 40 + body),
                BasicBlock("tail", "tail", body + [Instruction("call", callee="memset", bulk_bytes=Polynomial.symbol("k"))]),
                BasicBlock("exit", None, [Instruction("return")])],
        loops={"blocks": Loop("blocks", None, 1, blocks, line=2), "tail": Loop("tail", None, 1, tail, line=5)})
    # (k, a memset's size, is a symbol only the numbers at this point evaluate: not a block's count)
    counted = count_function(fn, None, {"n": 16, "k": 64}.__getitem__)
    # The polynomial (exact for large n) stays the expression: at n = 16 it would be negative.
    assert counted.counts["int_add"] == (N * Fraction(1, 64) - Fraction(1, 2)) * 42 + 200
    assert counted.counts["int_add"].evaluate({"n": 16}) < 200
    # The numbers at n = 16 count the blocks' loop as 0 iterations and the tail in full, and say so.
    assert counted.at_point is not None and counted.at_point.values == {"n": 16}
    assert counted.at_point.counts["int_add"] == 200
    assert counted.at_point.counts["branch"] == 1 + 100
    assert any("loop at line 2" in a and "below zero" in a and "does not run here" in a for a in counted.assumptions)
    # Where every loop runs, there is nothing to set apart.
    assert count_function(fn, None, {"n": 6400, "k": 64}.__getitem__).at_point is None


def test_an_exit_the_data_places_is_missed_once_per_entry_unless_it_comes_first():
    from ccls.counting import _exit_varies
    search = Loop("s", None, 1, TripCount("expected", Polynomial.constant(Fraction(35, 2))), line=2)
    first_difference = Loop("c", None, 1, TripCount("expected", Polynomial.constant(Fraction(256, 255))), line=3)
    counted = Loop("k", None, 1, TripCount("constant", Polynomial.constant(64)), line=4)
    assert _exit_varies(search)  # a search's hit: a different iteration each entry
    assert not _exit_varies(first_difference)  # leaves at the first iteration almost every entry
    assert not _exit_varies(counted)


def _diagonal_copy(offset_bytes: int) -> MemoryAccess:
    """One of two unrolled copies of a diagonal walk d[i][i] of floats in rows 1028 bytes apart:
    the pair moves 2056 bytes per iteration, and every pass of the loop around reads it again."""
    step = Polynomial.constant(2056)
    return MemoryAccess("strided", 4, step, loop_strides=(("loop", step), ("outer", Polynomial())),
                        region="2056·loop + d", offset=Polynomial.constant(offset_bytes))


def test_unrolled_copies_of_a_wide_stride_touch_lines_of_their_own_so_their_footprints_add():
    # 500 iterations: each copy touches 500 lines (32 KB, inside the 48 KiB L1), both 64 KB, so
    # the next pass finds them in L2. Copies a whole stride apart would share their lines.
    body = [Instruction("load", line=3, access=_diagonal_copy(0)), Instruction("load", line=3, access=_diagonal_copy(1028)),
            Instruction("int_add"), Instruction("branch")]
    fn = FunctionIR(
        name="f", display_name="f", file="/w/f.c", line=1, end_line=9, language="c", arch="x86_64", parameters=["n"],
        blocks=[BasicBlock("entry", None, [Instruction("branch")]), BasicBlock("outer", "outer", [Instruction("branch")]),
                BasicBlock("loop", "loop", body), BasicBlock("exit", None, [Instruction("return")])],
        loops={"outer": Loop("outer", None, 1, TripCount("constant", Polynomial.constant(100)), line=1),
               "loop": Loop("loop", "outer", 2, TripCount("symbolic", N), line=2)})
    counted = count_function(fn, None, {"n": 500}.__getitem__)
    assert any("data reread by every iteration of loop %outer, found in L2" in a for a in counted.assumptions)
    assert not any("found in L1" in a for a in counted.assumptions)


def test_a_copy_in_a_loop_overlaps_the_lines_it_brings_in_with_its_moves():
    # `for (r = 0; r < n; r++) memcpy(a, b, 128000)`: 125 KiB, past L1 (48 KiB), within L2. The
    # copy moves 4,000 32-byte chunks a call; its 2,000 new lines in each direction arrive from L2
    # while it moves the ones it has, so the loop records them to overlap its cycles.
    copy = Instruction("call", callee="memcpy", bulk_bytes=Polynomial.constant(128000))
    fn = FunctionIR(
        name="f", display_name="f", file="/w/f.c", line=1, end_line=9, language="c", arch="x86_64",
        parameters=["n"],
        blocks=[BasicBlock("entry", None, [Instruction("branch")], machine_instructions=1, machine_cycles=1.0),
                BasicBlock("loop", "loop", [copy, Instruction("int_add"), Instruction("branch")],
                           machine_instructions=8, machine_cycles=3.0),
                BasicBlock("exit", None, [Instruction("return")], machine_instructions=1, machine_cycles=1.0)],
        loops={"loop": Loop("loop", None, 1, TripCount("symbolic", N), line=2)})
    counted = count_function(fn, None, {"n": 10}.__getitem__)
    [overlap] = counted.overlaps
    assert overlap.loop == "loop"
    assert overlap.cycles == N * (3 + 4000)  # the block's own cycles and the copy's moves
    assert overlap.misses == {"load.L2": N * 2000, "store.L2": N * 2000}
    # outside a loop a copy's lines stay on top of its moves
    fn.blocks[1] = BasicBlock("straight", None, [copy], machine_instructions=8, machine_cycles=3.0)
    assert count_function(fn, None, {"n": 10}.__getitem__).overlaps == []
