"""What clients send, as plain values: pygls's namedtuples as dicts, the `ccls` settings
section, a position in a command's arguments, a file URI as a path."""
from __future__ import annotations

from collections import namedtuple

import pytest

from ccls.lsp.params import plain_json, position_args, settings_section, uri_to_path


def test_namedtuples_from_pygls_become_dicts_at_any_depth():
    Object = namedtuple("Object", ["line", "character"])
    assert plain_json({"at": [Object(1, 2)], "n": 3}) == {"at": [{"line": 1, "character": 2}], "n": 3}


def test_the_settings_section_or_its_wrapper():
    assert settings_section({"ccls": {"profile": "HPC"}}) == settings_section({"profile": "HPC"}) == {"profile": "HPC"}
    assert settings_section(None) == {} and settings_section([1]) == {}


def test_a_command_position_is_an_object_or_a_pair():
    assert position_args({"line": 3, "character": 4}) == (3, 4)
    assert position_args([3, 4]) == (3, 4)
    with pytest.raises(ValueError):
        position_args("3:4")


def test_file_uris_become_absolute_paths():
    assert uri_to_path("file:///w/a%20b.c") == "/w/a b.c"
