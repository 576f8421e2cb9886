"""Work-done progress for one analysis pass: `$/progress` for the batches after a pass's first,
begun only when there are some, ended when the pass ends."""
from __future__ import annotations

import logging
import uuid
from typing import Any

from lsprotocol import types

log = logging.getLogger(__name__)


class PassProgress:
    """`$/progress` for the batches after a pass's first (begun only when there are some)."""

    def __init__(self, progress: Any, name: str):
        self._progress = progress
        self._name = name
        self._token: str | None = None
        self._tried = False

    async def report(self, done: int, total: int) -> None:
        progress = self._progress
        if progress is None:
            return
        if not self._tried:
            self._tried = True
            token = f"ccls-file-{uuid.uuid4().hex[:8]}"
            try:
                await progress.create_async(token)
                progress.begin(token, types.WorkDoneProgressBegin(
                    title=f"ccls: analysing {self._name}", percentage=int(100 * done / max(1, total))))
                self._token = token
            except Exception as exc:  # the client refused a progress token: work without one
                log.info("no progress token: %s", exc)
            return
        if self._token is not None:
            progress.report(self._token, types.WorkDoneProgressReport(
                message=f"{done}/{total} functions", percentage=int(100 * done / max(1, total))))

    def end(self) -> None:
        if self._token is not None:
            self._progress.end(self._token, types.WorkDoneProgressEnd(message="done"))
            self._token = None
