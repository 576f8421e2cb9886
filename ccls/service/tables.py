"""The cost tables the service counts and costs with: loaded once, on first use, from any thread;
and where the calibrated table of arch `host` is."""
from __future__ import annotations

import os
import threading
from typing import Mapping, Sequence

from ccls.cache import cache_key
from ccls.table_types import Tables
from ccls.tables import load_tables


class TableStore:
    """Lazily loaded tables (bundled or from `directory`, plus custom profiles) and the digest
    of the part of them that can change counts, for cache keys."""

    def __init__(self, directory: str | None = None, custom_profiles: Mapping[str, Sequence[float]] | None = None,
                 tables: Tables | None = None):
        self._directory = directory
        self._custom = dict(custom_profiles) if custom_profiles else None
        self._tables = tables
        self._host_table: str | None = None  # a calibrated table (`ccls calibrate`), added as arch "host"
        self._version = counting_version(tables) if tables is not None else ""
        self._lock = threading.Lock()

    def get(self) -> Tables:
        """The tables (raises `TableError` when they cannot be loaded)."""
        with self._lock:
            if self._tables is None:
                self._tables = load_tables(self._directory, self._custom, host_table=self._host_table)
                self._version = counting_version(self._tables)
            return self._tables

    @property
    def loaded(self) -> Tables | None:
        """The tables if already loaded, without loading them."""
        return self._tables

    def counting_version(self) -> str:
        self.get()
        return self._version

    @property
    def host_table(self) -> str | None:
        return self._host_table

    def reload(self, custom_profiles: Mapping[str, Sequence[float]] | None, host_table: str | None = None) -> None:
        """Load again on next use, with these custom profiles (and this calibrated table)."""
        with self._lock:
            self._custom = dict(custom_profiles) if custom_profiles else None
            self._host_table = host_table
            self._tables = None


def counting_version(tables: Tables) -> str:
    """What of the tables can change counts (not costs): each cost table's cache model."""
    parts = []
    for arch, table in sorted(getattr(tables, "cost", {}).items()):
        parts.append((arch, repr(getattr(table, "cache", None))))
    return cache_key("tables/1", parts)


def calibrated_table(arch: str, cache_setting: str | None) -> tuple[str | None, str | None]:
    """The calibrated table where `arch` is `host` (`ccls calibrate` wrote it under the cache
    directory): (its path, None), or (None, a message) while there is none, and the engine
    costs with the x86_64 table (saying so in the assumptions). (None, None) for other arches."""
    from ccls.calibrate import table_path
    from ccls.tables import NO_CALIBRATION
    from ccls.targets import HOST_ARCH

    if arch != HOST_ARCH:
        return None, None
    path = table_path(cache_setting)
    if os.path.isfile(path):
        return path, None
    return None, f"{NO_CALIBRATION}; costing with the x86_64 table until then"
