"""One writer for every derived cost table: the envelope `{data, metadata}` that ccls/tables.py
validates, laid out the same way in every file.

    table = envelope(data, version=…, source=…, hardware=…, method=…, units=…, notes=…)
    write_table(path, table)

`date` says when the numbers last changed: regenerating a table whose content is unchanged keeps
the date already in the file, so a rerun on another day rewrites nothing.
"""
from __future__ import annotations

import datetime
import json
from pathlib import Path

METADATA_FIELDS = ("version", "source", "hardware", "method", "date", "units", "notes")


def envelope(data: dict, **metadata: str) -> dict:
    """`metadata` takes every field of METADATA_FIELDS but `date`, which write_table fills in."""
    expected = set(METADATA_FIELDS) - {"date"}
    if set(metadata) != expected:
        raise ValueError(f"metadata fields {sorted(metadata)} != {sorted(expected)}")
    ordered = {name: metadata.get(name) for name in METADATA_FIELDS}
    return {"data": data, "metadata": ordered}


def write_table(path: Path, table: dict) -> None:
    """Write `table` with today's date, or with the file's date when nothing else changed."""
    table["metadata"]["date"] = _unchanged_date(path, table) or datetime.date.today().isoformat()
    path.write_text(json.dumps(table, indent=1) + "\n")
    print(f"wrote {path} ({len(table['data'].get('classes', {}))} classes)")


def _unchanged_date(path: Path, table: dict) -> str | None:
    try:
        old = json.loads(path.read_text())
        date = old["metadata"]["date"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    new = json.loads(json.dumps(table))  # as it will read back: tuples become lists
    old["metadata"]["date"] = new["metadata"]["date"] = None
    return date if old == new else None
