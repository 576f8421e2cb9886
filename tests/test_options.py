"""Options once: every analysis option is reached the same way from `ccls analyze` flags, editor
settings and `ccls-cost.toml`, from its one definition (ccls.options.OPTION_SPECS)."""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from ccls import cli
from ccls.lsp.settings import parse_settings, read_project_file
from ccls.options import OPTION_SPECS, VIEW_FIELDS, AnalysisOptions, OptionSpec

MANIFEST = Path(__file__).parents[1] / "vscode-client" / "package.json"


def _chosen(spec: OptionSpec):
    """(a value other than the default as settings and TOML write it, the same on the command line)."""
    if spec.kind == "choice":
        value = next(c for c in reversed(spec.choices) if c != spec.default)
        return value, [f"{spec.flag}={value}"]
    if spec.kind == "bool":
        return (not spec.default), [spec.flag if not spec.default else "--no-" + spec.flag[2:]]
    if spec.kind == "int":
        value = int(spec.low) + 7
        return value, [spec.flag, str(value)]
    if spec.kind == "float":
        value = spec.low + 2.5
        return value, [spec.flag, repr(value)]
    if spec.kind == "flags":
        return ["-DWIDTH=4", "-fno-math-errno"], [f"{spec.flag}=-DWIDTH=4 -fno-math-errno"]
    if spec.kind == "globs":
        return ["/opt/cc/bin/clang*", "/opt/nv/bin/nvcc"], [spec.flag, "/opt/cc/bin/clang*,/opt/nv/bin/nvcc"]
    if spec.kind == "parameters":
        return {"n": 4096, "m": 3}, [spec.flag, "n=4096", spec.flag, "m=3"]
    raise AssertionError(spec.kind)


def _nested(flat: dict) -> dict:
    nested: dict = {}
    for key, value in flat.items():
        *parents, last = key.split(".")
        node = nested
        for part in parents:
            node = node.setdefault(part, {})
        node[last] = value
    return nested


def _toml(value) -> str:
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_toml(v)}" for k, v in value.items()) + " }"
    return json.dumps(value)  # booleans, numbers, strings and lists are spelled alike


def _cli_options(argv: list[str]) -> AnalysisOptions:
    return cli._analysis_options(cli._parser().parse_args(["analyze", "unit.c", *argv]))


def test_every_field_is_a_user_option_or_set_by_a_view():
    names = [f.name for f in dataclasses.fields(AnalysisOptions)]
    specs = [spec.field for spec in OPTION_SPECS]
    assert sorted(specs + list(VIEW_FIELDS)) == sorted(names)
    assert len({spec.setting for spec in OPTION_SPECS}) == len(OPTION_SPECS)
    assert len({spec.flag for spec in OPTION_SPECS}) == len(OPTION_SPECS)
    for spec in OPTION_SPECS:
        assert spec.help and (spec.kind != "choice" or spec.default in spec.choices), spec.field
        assert (spec.low is not None) == (spec.kind in ("int", "float")), spec.field


def test_the_cli_the_settings_and_ccls_cost_toml_give_the_same_options(tmp_path):
    flat, argv = {}, []
    for spec in OPTION_SPECS:
        value, words = _chosen(spec)
        flat[spec.setting] = value
        argv += words
    from_cli = _cli_options(argv)
    from_settings, messages = parse_settings(_nested(flat))
    assert messages == []
    lines = [f"{key} = {_toml(value)}" for key, value in flat.items()]
    (tmp_path / "ccls-cost.toml").write_text("[ccls]\n" + "\n".join(lines) + "\n")
    project, problems = read_project_file(str(tmp_path))
    from_toml, messages = parse_settings(project)
    assert problems == [] and messages == []
    assert from_cli == from_settings.analysis_options() == from_toml.analysis_options()
    changed = [spec.field for spec in OPTION_SPECS if getattr(from_cli, spec.field) == spec.default]
    assert changed == []  # every option arrived, none stayed at its default
    assert from_cli.gpu_arch == "nvptx-sm90"  # the editor is no longer always sm_80


def test_defaults_agree_except_where_a_batch_run_says_otherwise():
    from_cli = _cli_options([])
    differ = {spec.field: spec.batch_default for spec in OPTION_SPECS if spec.batch_default != spec.default}
    assert differ == {"compile_timeout_s": 60.0}
    assert from_cli == dataclasses.replace(AnalysisOptions(), **differ)
    assert parse_settings({})[0].analysis_options() == AnalysisOptions()


_INVALID = {"choice": "sm_80", "bool": "yes", "int": 2.5, "float": -1e30, "flags": "-O2", "globs": 7,
            "parameters": {"n": -4}}


@pytest.mark.parametrize("spec", OPTION_SPECS, ids=lambda spec: spec.setting)
def test_an_invalid_setting_is_named_and_falls_back_to_the_default(spec):
    settings, messages = parse_settings(_nested({spec.setting: _INVALID[spec.kind]}))
    assert settings.analysis_options() == AnalysisOptions()
    assert len(messages) == 1 and messages[0].startswith(f"ccls.{spec.setting}: ") and "using the default" in messages[0]


@pytest.mark.parametrize("spec", [spec for spec in OPTION_SPECS if spec.kind not in ("bool", "flags", "globs")],
                         ids=lambda spec: spec.flag)
def test_an_invalid_flag_is_a_usage_error(spec, capsys):
    bad = {"choice": "sm_80", "int": "2.5", "float": "-1e30", "parameters": "n=-4"}[spec.kind]
    with pytest.raises(SystemExit) as exit_:
        cli._parser().parse_args(["analyze", "unit.c", f"{spec.flag}={bad}"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert f"argument {spec.flag}: expected" in err and "Traceback" not in err


def test_unsplittable_flags_are_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exit_:
        cli._parser().parse_args(["analyze", "unit.c", "--extra-flags=-DNAME='unclosed"])
    assert exit_.value.code == 2 and "cannot split" in capsys.readouterr().err


def test_optimisation_levels_are_read_as_written():
    assert _cli_options(["--optimization", "O3"]).optimization == "-O3"
    assert _cli_options(["--optimization=-Os"]).optimization == "-Os"
    assert parse_settings({"compile": {"optimization": "-O1"}})[0].analysis_options().optimization == "-O1"


def test_the_vscode_manifest_declares_every_option_as_defined():
    properties = json.loads(MANIFEST.read_text())["contributes"]["configuration"]["properties"]
    json_type = {"choice": "string", "bool": "boolean", "int": "integer", "float": "number", "flags": "array",
                 "globs": "array", "parameters": "object"}
    for spec in OPTION_SPECS:
        declared = properties[f"ccls.{spec.setting}"]
        assert declared["type"] == json_type[spec.kind], spec.setting
        if spec.kind == "choice":
            assert declared["enum"] == list(spec.choices), spec.setting
        if spec.low is not None:
            assert (declared["minimum"], declared["maximum"]) == (spec.low, spec.high), spec.setting
        if spec.kind in ("flags", "globs"):
            # VS Code cannot leave an array unset: the client sends no [] (vscode-client/src/settings.ts).
            assert declared["default"] == (list(spec.default) if spec.default and spec.kind == "flags" else [])
        elif spec.kind == "parameters":
            assert declared["default"] == dict(spec.default)
        else:
            assert declared["default"] == spec.default, spec.setting
