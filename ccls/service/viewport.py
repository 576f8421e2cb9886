"""Which of a document's functions to count first: those on the editor's screen (the rows of
its latest inlayHint request), then the rest by their distance from it. Pure; the language
server asks for a plan before each batch, so a scroll re-orders what is left."""
from __future__ import annotations

from typing import Protocol, Sequence

SCREEN_ROWS = 60  # a screen when the client has not said (no inlayHint range yet)
# Functions this close to the screen are counted with it. 0: the screen alone first (each
# function read costs ~0.1 s of the first screen's second); its neighbours lead the next batch.
NEAR_ROWS = 0
SCREEN_BATCH_MIN = 4  # at least this many functions in a screen's batch (an edit's few fit)
# Functions per later batch: each batch is one reduced compile (clang's start, the headers,
# the context), and a scroll waits for the batch in flight (a compile is not interrupted).
# bench/server/viewport.py: with 32, a jump to the middle of an 80-function file waited 11.9 s
# under load 7 on 2 cores (~0.2 s a function); batches cost little over one whole-file compile
# (300 functions in-process: 33.8 s in batches of 32, 43.9 s whole), so 16 halves that wait.
REST_BATCH = 16
# Up to this many uncounted functions are counted in one compile, screen or not: an edit's
# few, a small file opened cold (as before batches; one compile is cheapest in all).
WHOLE_UP_TO = 32
FIRST_RANGE_WAIT_S = 0.15  # how long a cold open waits for the client's first inlayHint range


class Span(Protocol):
    start_line: int  # 1-based, as ccls.source_map.SourceFunction
    end_line: int


def nearest_first(functions: Sequence[Span], first_row: int, last_row: int) -> list[int]:
    """Function indices: those on rows [first_row, last_row] (0-based) first, in text order,
    then the rest by their distance from them; at equal distance the one below first (reading
    goes down)."""
    def distance(i: int) -> tuple[int, int, int]:
        start, end = functions[i].start_line - 1, functions[i].end_line - 1
        if end < first_row:
            return first_row - end, 1, i
        if start > last_row:
            return start - last_row, 0, i
        return 0, 0, i
    return sorted(range(len(functions)), key=distance)


def plan(functions: Sequence[Span] | None, screen: tuple[int, int], first: bool,
         pending: Sequence[int] | None = None) -> tuple[list[int] | None, int | None]:
    """(order, batch) for `Analyzer.analyse`: `first` (a pass's first batch, or the screen
    moved) counts the functions on and near the screen; later batches `REST_BATCH` more.
    `pending`: what the pass has not tried yet (None: everything uncached)."""
    if functions is None:
        return None, None  # whole-file languages: one compile
    first_row, last_row = screen
    order = nearest_first(functions, first_row, last_row)
    if pending is not None:
        left = set(pending)
        order = [i for i in order if i in left]
    if first:
        low, high = first_row - NEAR_ROWS, last_row + NEAR_ROWS
        near = sum(1 for i in order if functions[i].end_line - 1 >= low and functions[i].start_line - 1 <= high)
        # A client that asks for a whole file's hints shows no screen: batches as usual.
        batch = max(SCREEN_BATCH_MIN, min(near, REST_BATCH))
    else:
        batch = REST_BATCH
    if pending is not None:
        batch = max(1, min(batch, len(order)))  # never again what a batch tried and could not count
    return order, batch
