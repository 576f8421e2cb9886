"""The sizes a workspace's own call sites pass its functions, for the language server: the
call sites of every analysed file (open documents and the background pass), kept per file,
and what `ccls.sizes` infers from them. A document is analysed with the sizes known when it
starts; a file whose call sites change re-checks the documents whose sizes that moves."""
from __future__ import annotations

import threading
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
        self._lock = threading.Lock()

    def learn(self, path: str, counted: Sequence[CountedFunction]) -> bool:
        """Keep a file's call sites (from its counted functions); True if they changed."""
        module = module_of(path, counted)
        with self._lock:
            if self._modules.get(path) == module:
                return False
            self._modules[path] = module
            self._names[path] = {cf.name: cf.display_name for cf in counted}
            self._inferred = None
            return True

    def forget(self, path: str) -> None:
        with self._lock:
            if self._modules.pop(path, None) is not None:
                self._names.pop(path, None)
                self._inferred = None

    def for_document(self, path: str) -> DocumentSizes:
        with self._lock:
            if self._inferred is None:
                self._inferred = infer_sizes(self._modules.values())
            inferred, names = self._inferred, self._names.get(path, {})
        out: DocumentSizes = {}
        for (file, symbol), params in inferred.items():
            if file == path:
                out[symbol] = params
                if names.get(symbol):
                    out[names[symbol]] = params
        return out
