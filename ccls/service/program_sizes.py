"""The sizes a workspace's own call sites pass its functions, for the language server: the
call sites of every analysed file (open documents and the background pass), kept per file,
and what `ccls.sizes` infers from them. A document is analysed with the sizes known when it
starts; a file whose call sites change re-checks the documents whose sizes that moves."""
from __future__ import annotations

import threading
import time
from typing import Sequence

from ccls.model import CountedFunction
from ccls.readers.call_sites import ModuleCalls
from ccls.sizes import InferredSize, infer_sizes, module_of

DocumentSizes = dict[str, dict[str, InferredSize]]  # function name (display and symbol) -> parameter -> size


class ProgramSizes:
    def __init__(self) -> None:
        self._modules: dict[str, ModuleCalls] = {}
        self._names: dict[str, dict[str, str]] = {}  # path -> symbol -> display name
        self._inferred: dict | None = None  # infer_sizes over every module, until one changes
        self._stale = False  # a module changed since _inferred was computed
        self._computed_at = 0.0
        self._lock = threading.Lock()

    def learn(self, path: str, counted: Sequence[CountedFunction]) -> bool:
        """Keep a file's call sites (from its counted functions); True if they changed."""
        module = module_of(path, counted)
        with self._lock:
            if self._modules.get(path) == module:
                return False
            self._modules[path] = module
            self._names[path] = {cf.name: cf.display_name for cf in counted}
            self._stale = True
            return True

    def forget(self, path: str) -> None:
        with self._lock:
            if self._modules.pop(path, None) is not None:
                self._names.pop(path, None)
                self._stale = True

    def for_document(self, path: str, max_age_s: float = 0.0) -> DocumentSizes:
        """The sizes a file's functions receive. Inference runs over every module (a second
        on a large workspace: call it from a worker); `max_age_s` lets a caller take a result
        computed that recently although a module changed since (the background pass: its keys
        hold the values it used, so a stale map costs a re-count, never a wrong one)."""
        with self._lock:
            if self._inferred is None or (self._stale and time.monotonic() - self._computed_at >= max_age_s):
                self._inferred = infer_sizes(self._modules.values())
                self._stale, self._computed_at = False, time.monotonic()
            inferred, names = self._inferred, self._names.get(path, {})
        return _by_name(inferred, path, names)

    def own_sizes(self, path: str) -> DocumentSizes:
        """The sizes a file's own call sites pass its functions (cheap: that file alone)."""
        with self._lock:
            module, names = self._modules.get(path), self._names.get(path, {})
        return _by_name(infer_sizes([module]), path, names) if module is not None else {}


def _by_name(inferred: dict, path: str, names: dict[str, str]) -> DocumentSizes:
    out: DocumentSizes = {}
    for (file, symbol), params in inferred.items():
        if file == path:
            out[symbol] = params
            if names.get(symbol):
                out[names[symbol]] = params
    return out
