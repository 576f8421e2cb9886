"""Persistent count cache: the expensive stage's results (compile → read → count) by content key.

Values are lists of `CountedFunction` (a source function may lower to several: template
instantiations, lambdas, OpenMP outlined bodies; an empty list records "compiled, nothing
emitted" so it is not compiled again). Keys are opaque digests built by `cache_key` from
everything that can change counts: the function's text and context, flags, compiler version,
table version and counting options — never profile or region, which only change costs.

Two layers: a bounded in-memory LRU and an sqlite database (WAL) in a cache directory outside
the source tree. A database that is corrupt, of another schema or of another application is
renamed aside and rebuilt; any disk failure degrades to memory-only, never to an error.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import sqlite3
import threading
import time
import zlib
from collections import OrderedDict
from typing import Any, Iterable

from ccls.model import CountedFunction
from ccls.serialize import counted_from_json, counted_to_json

log = logging.getLogger(__name__)

SCHEMA_VERSION = 1
APPLICATION = "ccls-cost count cache"
DB_NAME = "counts.sqlite3"


def default_cache_dir(setting: str | None = None) -> str:
    """Setting > $CCLS_CACHE_DIR > $XDG_CACHE_HOME/ccls-cost > ~/.cache/ccls-cost."""
    if setting:
        return os.path.abspath(os.path.expanduser(setting))
    env = os.environ.get("CCLS_CACHE_DIR")
    if env:
        return os.path.abspath(os.path.expanduser(env))
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(os.path.abspath(xdg), "ccls-cost")


def cache_key(*parts: Any) -> str:
    """A stable digest of JSON-serialisable parts (order matters)."""
    blob = json.dumps(parts, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode("utf-8", "surrogatepass")).hexdigest()


def text_digest(text: str | bytes) -> str:
    data = text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass")
    return hashlib.sha256(data).hexdigest()


def _encode(functions: list[CountedFunction]) -> bytes:
    blob = json.dumps([counted_to_json(f) for f in functions], separators=(",", ":"))
    return zlib.compress(blob.encode("utf-8", "surrogatepass"), 1)


def _decode(blob: bytes) -> list[CountedFunction]:
    data = json.loads(zlib.decompress(blob).decode("utf-8", "surrogatepass"))
    return [counted_from_json(d) for d in data]


class CountCache:
    """Thread-safe get/put of counted functions by key. `directory=None` keeps it in memory only."""

    def __init__(self, directory: str | None, memory_entries: int = 2048, disk_entries: int = 200_000):
        self.directory = directory
        self.messages: list[str] = []  # user-facing notes (cache rebuilt, disk unusable)
        self.hits = 0
        self.misses = 0
        self.writes = 0
        self._memory: OrderedDict[str, list[CountedFunction]] = OrderedDict()
        self._memory_entries = memory_entries
        self._disk_entries = disk_entries
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        if directory is not None:
            self._db = self._open(directory)

    @property
    def path(self) -> str | None:
        return os.path.join(self.directory, DB_NAME) if self.directory and self._db else None

    # -- opening -------------------------------------------------------------------------

    def _open(self, directory: str) -> sqlite3.Connection | None:
        try:
            os.makedirs(directory, exist_ok=True)
        except OSError as exc:
            self.messages.append(f"count cache: cannot create {directory} ({exc.strerror}); "
                                 "keeping counts in memory only")
            return None
        path = os.path.join(directory, DB_NAME)
        try:
            return self._connect_checked(path)
        except (sqlite3.DatabaseError, _ForeignCache) as exc:
            aside = f"{path}.broken-{int(time.time())}"
            self.messages.append(f"count cache: {path} is unusable ({exc}); moved it to {aside} "
                                 "and started a new one")
            log.warning("%s", self.messages[-1])
            for suffix in ("", "-wal", "-shm"):
                try:
                    os.replace(path + suffix, aside + suffix)
                except OSError:
                    pass
            try:
                return self._connect_checked(path)
            except (sqlite3.DatabaseError, _ForeignCache, OSError) as again:
                self.messages.append(f"count cache: cannot rebuild {path} ({again}); memory only")
                return None
        except OSError as exc:
            self.messages.append(f"count cache: cannot open {path} ({exc}); memory only")
            return None

    def _connect_checked(self, path: str) -> sqlite3.Connection:
        db = sqlite3.connect(path, timeout=5.0, check_same_thread=False, isolation_level=None)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
            if not tables:
                # Another process (a language server's worker) may be creating it this moment:
                # look again under the write lock.
                db.execute("BEGIN IMMEDIATE")
                tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
            if not tables:
                db.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
                db.execute("CREATE TABLE counts (key TEXT PRIMARY KEY, value BLOB NOT NULL, "
                           "used REAL NOT NULL)")
                db.execute("CREATE INDEX counts_used ON counts(used)")
                db.executemany("INSERT INTO meta VALUES (?, ?)",
                               [("application", APPLICATION), ("schema_version", str(SCHEMA_VERSION))])
                db.execute("COMMIT")
            else:
                if db.in_transaction:
                    db.execute("COMMIT")
                meta = dict(db.execute("SELECT key, value FROM meta")) if "meta" in tables else {}
                if meta.get("application") != APPLICATION or "counts" not in tables:
                    raise _ForeignCache("not a ccls-cost count cache")
                if meta.get("schema_version") != str(SCHEMA_VERSION):
                    raise _ForeignCache(f"schema version {meta.get('schema_version')}, "
                                        f"this ccls uses {SCHEMA_VERSION}")
                db.execute("SELECT count(*) FROM counts").fetchone()
            return db
        except BaseException:
            db.close()
            raise

    # -- access --------------------------------------------------------------------------

    def get(self, key: str, remember: bool = True) -> list[CountedFunction] | None:
        """The entry, or None. `remember=False` (bulk background reads) leaves the memory layer
        to the documents being edited."""
        with self._lock:
            found = self._memory.get(key)
            if found is not None:
                self._memory.move_to_end(key)
                self.hits += 1
                return found
            blob = self._disk_get(key)
            if blob is None:
                self.misses += 1
                return None
            try:
                functions = _decode(blob)
            except Exception as exc:  # a row written by a different serializer: treat as a miss
                log.info("count cache: dropping undecodable entry %s (%s)", key[:12], exc)
                self._disk_delete(key)
                self.misses += 1
                return None
            if remember:
                self._remember(key, functions)
            self.hits += 1
            return functions

    def contains(self, key: str) -> bool:
        with self._lock:
            if key in self._memory:
                return True
            return self._disk_get(key, touch=False) is not None

    def put_many(self, items: Iterable[tuple[str, list[CountedFunction]]], remember: bool = True) -> None:
        rows = []
        with self._lock:
            for key, functions in items:
                if remember:
                    self._remember(key, functions)
                rows.append((key, functions))
            self.writes += len(rows)
            # A reading the clock cut short says what this moment's load allowed: kept for the
            # session (above), not on disk, so a quieter run reads it again in full.
            rows = [(key, functions) for key, functions in rows if not any(f.stopped_on_time for f in functions)]
            if self._db is None or not rows:
                return
            try:
                encoded = [(key, _encode(functions), time.time()) for key, functions in rows]
                self._db.execute("BEGIN")
                self._db.executemany("INSERT OR REPLACE INTO counts VALUES (?, ?, ?)", encoded)
                self._db.execute("COMMIT")
            except sqlite3.Error as exc:
                self._disk_failed(exc)

    def put(self, key: str, functions: list[CountedFunction], remember: bool = True) -> None:
        self.put_many([(key, functions)], remember)

    def get_json(self, key: str) -> Any | None:
        """A JSON value stored by `put_json_many` (disk only), or None. Not counted in
        hits/misses/writes, which are about counts."""
        with self._lock:
            blob = self._disk_get(key)
            if blob is None:
                return None
            try:
                return json.loads(zlib.decompress(blob).decode("utf-8", "surrogatepass"))
            except Exception as exc:  # written by something else under this key: a miss
                log.info("count cache: dropping undecodable entry %s (%s)", key[:12], exc)
                self._disk_delete(key)
                return None

    def put_json_many(self, items: Iterable[tuple[str, Any]]) -> None:
        """Store JSON-serialisable values (what counts depend on besides counts: call sites,
        tool versions)."""
        rows = [(key, zlib.compress(json.dumps(value, separators=(",", ":")).encode("utf-8", "surrogatepass"), 1),
                 time.time()) for key, value in items]
        with self._lock:
            if self._db is None or not rows:
                return
            try:
                self._db.execute("BEGIN")
                self._db.executemany("INSERT OR REPLACE INTO counts VALUES (?, ?, ?)", rows)
                self._db.execute("COMMIT")
            except sqlite3.Error as exc:
                self._disk_failed(exc)

    def clear_memory(self) -> None:
        with self._lock:
            self._memory.clear()

    def prune(self) -> int:
        """Drop the least recently used rows beyond the disk bound; returns how many."""
        with self._lock:
            if self._db is None:
                return 0
            try:
                (count,) = self._db.execute("SELECT count(*) FROM counts").fetchone()
                excess = count - self._disk_entries
                if excess <= 0:
                    return 0
                self._db.execute("DELETE FROM counts WHERE key IN "
                                 "(SELECT key FROM counts ORDER BY used LIMIT ?)", (excess,))
                return excess
            except sqlite3.Error as exc:
                self._disk_failed(exc)
                return 0

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                try:
                    self._db.close()
                finally:
                    self._db = None

    # -- internals -----------------------------------------------------------------------

    def _remember(self, key: str, functions: list[CountedFunction]) -> None:
        self._memory[key] = functions
        self._memory.move_to_end(key)
        while len(self._memory) > self._memory_entries:
            self._memory.popitem(last=False)

    def _disk_get(self, key: str, touch: bool = True) -> bytes | None:
        if self._db is None:
            return None
        try:
            row = self._db.execute("SELECT value FROM counts WHERE key = ?", (key,)).fetchone()
            if row is not None and touch:
                self._db.execute("UPDATE counts SET used = ? WHERE key = ?", (time.time(), key))
            return row[0] if row else None
        except sqlite3.Error as exc:
            self._disk_failed(exc)
            return None

    def _disk_delete(self, key: str) -> None:
        if self._db is None:
            return
        try:
            self._db.execute("DELETE FROM counts WHERE key = ?", (key,))
        except sqlite3.Error as exc:
            self._disk_failed(exc)

    def _disk_failed(self, exc: Exception) -> None:
        self.messages.append(f"count cache: disk error ({exc}); keeping counts in memory only")
        log.warning("%s", self.messages[-1])
        try:
            if self._db is not None:
                self._db.close()
        except sqlite3.Error:
            pass
        self._db = None


class _ForeignCache(Exception):
    """The database exists but is not ours (or is of another schema)."""
