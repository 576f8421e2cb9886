"""What the user sees of each open document: the rows of its last inlayHint request, else
rows around the last edit or hover, else the first screenful; and a cold open's short wait
for the client's first range. The session counts those rows' functions first."""
from __future__ import annotations

import asyncio

from ccls.service import viewport


class Screens:
    """Rows on screen per document URI, as the client's requests and edits tell them."""

    def __init__(self) -> None:
        self._ranges: dict[str, tuple[int, int]] = {}  # uri -> rows of its last inlayHint request
        self._cursor_rows: dict[str, int] = {}  # uri -> row of the last edit or hover
        self._waiters: dict[str, asyncio.Event] = {}

    def rows(self, uri: str) -> tuple[int, int]:
        """Rows (0-based) the user sees: the last inlayHint range, else around the last edit or
        hover, else the first screenful."""
        if uri in self._ranges:
            return self._ranges[uri]
        row = self._cursor_rows.get(uri)
        if row is not None:
            return max(0, row - viewport.SCREEN_ROWS // 2), row + viewport.SCREEN_ROWS // 2
        return 0, viewport.SCREEN_ROWS

    def has_range(self, uri: str) -> bool:
        """Whether the client has asked for hints in a range of this document yet."""
        return uri in self._ranges

    def saw_range(self, uri: str, first_row: int, last_row: int) -> None:
        self._ranges[uri] = (first_row, last_row)
        waiter = self._waiters.pop(uri, None)
        if waiter is not None:
            waiter.set()

    def saw_cursor(self, uri: str, row: int) -> None:
        self._cursor_rows[uri] = row

    async def wait_for_range(self, uri: str) -> None:
        waiter = self._waiters.setdefault(uri, asyncio.Event())
        try:
            await asyncio.wait_for(waiter.wait(), viewport.FIRST_RANGE_WAIT_S)
        except asyncio.TimeoutError:
            pass  # a client that asks later (or never) gets the first screenful first
        finally:
            self._waiters.pop(uri, None)

    def forget(self, uri: str) -> None:
        self._ranges.pop(uri, None)
        self._cursor_rows.pop(uri, None)
