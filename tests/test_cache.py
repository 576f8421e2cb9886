"""The persistent count cache: round trips, restarts, and damaged or foreign databases."""
from __future__ import annotations

import os
import sqlite3
import stat
from fractions import Fraction

import pytest

from ccls.cache import DB_NAME, CountCache, cache_key, default_cache_dir
from ccls.model import AtPoint, CountedFunction, FindingSite, LoopSummary, MemoryOverlap, TripCount
from ccls.polynomial import Polynomial


def counted(name: str = "dot", line: int = 3) -> CountedFunction:
    n = Polynomial.symbol("n")
    return CountedFunction(
        name=name, display_name=name, file="/src/a.c", line=line, end_line=line + 4, language="c",
        arch="x86_64", parameters=["n"], static_counts={"fp_fma": 1, "load": 2},
        counts={"fp_fma": n, "load": n * 2 + Polynomial.constant(1)},
        machine_instructions=n * 5, loops=[LoopSummary("for.body", 1, line + 1, TripCount("symbolic", n, "%n"))],
        line_counts={line + 2: {"fp_fma": n}}, calls={"": Polynomial.constant(0)},
        sites=[FindingSite("division-in-loop", line + 2, "for.body", {"int_div": n}, "div", "loop-invariant")],
        assumptions=["compiled by clang"], ir_text="define i32 @dot() {}",
        overlaps=[MemoryOverlap("for.body", n * 3, {"load.stream": n * Fraction(1, 8)})],
    )


def test_round_trip_in_memory_and_on_disk(tmp_path):
    cache = CountCache(str(tmp_path))
    fn = counted()
    cache.put("k1", [fn])
    assert cache.get("k1") == [fn]
    cache.close()

    reopened = CountCache(str(tmp_path))
    got = reopened.get("k1")
    assert got == [fn]
    assert reopened.hits == 1 and reopened.misses == 0
    assert reopened.get("absent") is None and reopened.misses == 1
    reopened.close()


def test_numbers_at_the_evaluation_point_survive_a_restart(tmp_path):
    import dataclasses
    fn = dataclasses.replace(counted("blocks"), at_point=AtPoint({"n": 16.0}, {"fp_fma": 0.0, "load": 1.0}, 3.0, None,
                                                                 {"": 0.0}))
    cache = CountCache(str(tmp_path))
    cache.put("k", [fn])
    cache.close()
    reopened = CountCache(str(tmp_path))
    assert reopened.get("k") == [fn]
    reopened.close()


def test_a_reading_the_clock_cut_short_is_kept_for_the_session_not_on_disk(tmp_path):
    import dataclasses
    cache = CountCache(str(tmp_path))
    cut = dataclasses.replace(counted("slow"), stopped_on_time=True)
    cache.put_many([("cut", [cut]), ("whole", [counted()])])
    assert cache.get("cut") == [cut]  # this session still answers from it
    cache.close()
    reopened = CountCache(str(tmp_path))
    assert reopened.get("cut") is None and reopened.get("whole") == [counted()]
    reopened.close()


def test_empty_list_means_compiled_with_nothing_emitted(tmp_path):
    cache = CountCache(str(tmp_path))
    cache.put("unused-static", [])
    cache.close()
    again = CountCache(str(tmp_path))
    assert again.get("unused-static") == []
    assert again.contains("unused-static") and not again.contains("other")


def test_database_uses_wal_and_records_schema(tmp_path):
    CountCache(str(tmp_path)).close()
    db = sqlite3.connect(tmp_path / DB_NAME)
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    meta = dict(db.execute("SELECT key, value FROM meta"))
    assert meta["application"] == "ccls-cost count cache" and meta["schema_version"] == "1"


def test_corrupt_database_is_moved_aside_and_rebuilt(tmp_path):
    (tmp_path / DB_NAME).write_bytes(b"this is not an sqlite database at all" * 100)
    cache = CountCache(str(tmp_path))
    assert any("unusable" in m for m in cache.messages)
    assert any(name.startswith(DB_NAME + ".broken-") for name in os.listdir(tmp_path))
    cache.put("k", [counted()])
    assert CountCache(str(tmp_path)).get("k") == [counted()]


def test_foreign_database_is_not_used(tmp_path):
    db = sqlite3.connect(tmp_path / DB_NAME)
    db.execute("CREATE TABLE counts (key TEXT, value BLOB, used REAL)")
    db.execute("INSERT INTO counts VALUES ('k', x'00', 0)")
    db.commit()
    db.close()
    cache = CountCache(str(tmp_path))
    assert any("not a ccls-cost count cache" in m for m in cache.messages)
    assert cache.get("k") is None


def test_other_schema_version_is_rebuilt(tmp_path):
    CountCache(str(tmp_path)).close()
    db = sqlite3.connect(tmp_path / DB_NAME)
    db.execute("UPDATE meta SET value = '999' WHERE key = 'schema_version'")
    db.commit()
    db.close()
    cache = CountCache(str(tmp_path))
    assert any("schema version 999" in m for m in cache.messages)
    cache.put("k", [])
    assert cache.get("k") == []


def test_undecodable_row_is_a_miss_not_an_error(tmp_path):
    cache = CountCache(str(tmp_path))
    cache.put("k", [counted()])
    cache.close()
    db = sqlite3.connect(tmp_path / DB_NAME)
    db.execute("UPDATE counts SET value = x'789c03000000000001'")  # valid zlib of b"", invalid JSON
    db.commit()
    db.close()
    again = CountCache(str(tmp_path))
    assert again.get("k") is None
    assert again.misses == 1


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write anywhere")
def test_unwritable_directory_degrades_to_memory(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(stat.S_IRUSR | stat.S_IXUSR)
    cache = CountCache(str(locked / "sub"))
    assert cache.path is None and cache.messages
    cache.put("k", [counted()])
    assert cache.get("k") == [counted()]


def test_directory_that_is_a_file_degrades_to_memory(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    cache = CountCache(str(blocker))
    assert cache.path is None and "memory only" in cache.messages[0]
    cache.put("k", [])
    assert cache.get("k") == []


def test_memory_layer_is_bounded(tmp_path):
    cache = CountCache(None, memory_entries=3)
    for i in range(10):
        cache.put(f"k{i}", [])
    assert cache.get("k0") is None  # evicted, and there is no disk layer
    assert cache.get("k9") == []


def test_prune_keeps_the_most_recently_used(tmp_path):
    cache = CountCache(str(tmp_path), disk_entries=5)
    cache.put_many([(f"k{i}", []) for i in range(8)])
    assert cache.prune() == 3
    cache.clear_memory()
    assert sum(cache.get(f"k{i}") is not None for i in range(8)) == 5


def test_keys_are_stable_and_order_sensitive():
    assert cache_key("a", 1, {"x": [1, 2]}) == cache_key("a", 1, {"x": [1, 2]})
    assert cache_key("a", 1) != cache_key(1, "a")
    assert len(cache_key("x")) == 64


def test_default_directory_precedence(monkeypatch, tmp_path):
    monkeypatch.delenv("CCLS_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == str(tmp_path / "xdg" / "ccls-cost")
    monkeypatch.setenv("CCLS_CACHE_DIR", str(tmp_path / "env"))
    assert default_cache_dir() == str(tmp_path / "env")
    assert default_cache_dir(str(tmp_path / "setting")) == str(tmp_path / "setting")
