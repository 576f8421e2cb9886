"""cost_tables/derive/envelope.py: the one writer of derived tables keeps the envelope's field
order and the date of unchanged content, so regenerating is byte-stable."""
from __future__ import annotations

import datetime
import importlib.util
import json
from pathlib import Path

import pytest

_PATH = Path(__file__).resolve().parent.parent / "cost_tables" / "derive" / "envelope.py"
_SPEC = importlib.util.spec_from_file_location("envelope", _PATH)
envelope = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(envelope)

META = dict(version="1.0.0", source="s", hardware="h", method="modelled", units="u", notes="n")


def _table(cu: float) -> dict:
    return envelope.envelope({"classes": {"int_add": {"cu": cu, "source": "s", "method": "modelled"}}}, **META)


def test_envelope_orders_the_metadata_and_rejects_missing_fields():
    assert list(_table(1.0)["metadata"]) == ["version", "source", "hardware", "method", "date", "units", "notes"]
    with pytest.raises(ValueError):
        envelope.envelope({}, **{k: v for k, v in META.items() if k != "notes"})


def test_regenerating_unchanged_content_keeps_the_file_byte_for_byte(tmp_path, capsys):
    path = tmp_path / "t.json"
    envelope.write_table(path, _table(1.0))
    assert "wrote" in capsys.readouterr().out and json.loads(path.read_text())["metadata"]["date"] == \
        datetime.date.today().isoformat()
    old = json.loads(path.read_text())
    old["metadata"]["date"] = "2001-02-03"
    path.write_text(json.dumps(old, indent=1) + "\n")
    before = path.read_bytes()
    envelope.write_table(path, _table(1.0))
    assert path.read_bytes() == before  # same numbers: the date the numbers last changed stays
    envelope.write_table(path, _table(2.0))
    assert json.loads(path.read_text())["metadata"]["date"] == datetime.date.today().isoformat()
