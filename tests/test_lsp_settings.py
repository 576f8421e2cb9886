"""Editor settings: defaults, nested and dotted keys, invalid values falling back with a message,
names checked against the tables, the choices the VS Code client offers, and the
`ccls-cost.toml` project files."""
from __future__ import annotations

from ccls.lsp.settings import (Settings, known_names, parse_against_tables, parse_settings, read_project_file,
                               read_project_files)


def test_defaults_are_the_documented_ones():
    settings, messages = parse_settings({})
    assert messages == []
    assert settings == Settings()
    assert (settings.profile, settings.region, settings.scoring, settings.hints_format) == \
        ("DEFAULT", "WORLD", "absolute", "{grade} · {cu} CU · {energy}")
    assert settings.severity("division-in-loop") == "warning"
    assert settings.severity("miss-heavy-loop") == "information"
    assert settings.analysis_options().compile_timeout_s == 30.0


def test_the_vscode_enum_choices_are_the_servers():
    import json
    from pathlib import Path

    from ccls.early_exit import EARLY_EXIT_POLICIES
    from ccls.scoring import NORMALIZATIONS
    from ccls.targets import CPU_ARCHES
    manifest = json.loads((Path(__file__).parents[1] / "vscode-client" / "package.json").read_text())
    properties = manifest["contributes"]["configuration"]["properties"]
    assert properties["ccls.arch"]["enum"] == list(CPU_ARCHES)
    assert properties["ccls.earlyExit"]["enum"] == list(EARLY_EXIT_POLICIES)
    assert properties["ccls.normalization"]["enum"] == list(NORMALIZATIONS)


def test_nested_and_dotted_keys_are_equivalent():
    nested, _ = parse_settings({"hints": {"enabled": False}, "compile": {"extraFlags": ["-DX=1"]}})
    dotted, _ = parse_settings({"hints.enabled": False, "compile.extraFlags": ["-DX=1"]})
    assert nested == dotted
    assert nested.hints_enabled is False and nested.analysis_options().extra_flags == ("-DX=1",)


def test_invalid_values_keep_defaults_and_say_why():
    settings, messages = parse_settings({
        "scoring": "relative", "diagnostics": {"minShare": 3, "divisionInLoop": "loud"},
        "compile": {"timeoutSeconds": "soon", "flags": "-O2"}, "defaultTripCount": 0,
        "hints": {"format": "{grade"}, "surprise": 1, "earlyExit": "optimistic",
    })
    assert settings == Settings()
    joined = "\n".join(messages)
    for key in ("ccls.scoring", "ccls.diagnostics.minShare", "ccls.diagnostics.divisionInLoop",
                "ccls.compile.timeoutSeconds", "ccls.compile.flags", "ccls.defaultTripCount",
                "ccls.hints.format", "ccls.surprise: unknown setting", "ccls.earlyExit"):
        assert key in joined


def test_the_normalisation_setting_reaches_the_report_settings():
    assert Settings().normalization == "log-minmax"
    settings, messages = parse_settings({"normalization": "minmax"})
    assert not messages and settings.normalization == "minmax"
    settings, messages = parse_settings({"normalization": "linear"})
    assert settings.normalization == "log-minmax" and any("ccls.normalization" in m for m in messages)


def test_early_exit_setting_reaches_the_analysis_options():
    assert Settings().analysis_options().early_exit == "expected"
    settings, messages = parse_settings({"earlyExit": "Worst"})
    assert not messages and settings.analysis_options().early_exit == "worst"


def test_profiles_case_insensitive_and_custom_profiles_validated():
    settings, messages = parse_settings({"profile": "hpc"})
    assert settings.profile == "HPC" and not messages
    settings, messages = parse_settings({"profile": "green", "customProfiles": {"green": [0.1, 0.6, 0.2, 0.1]}})
    assert settings.profile == "green" and not messages
    settings, messages = parse_settings({"profile": "green", "customProfiles": {"green": [0.5, 0.6, 0.2, 0.1]}})
    assert settings.profile == "DEFAULT"
    assert any("must sum to 1" in m for m in messages) and any("unknown profile" in m for m in messages)


def test_region_checked_only_against_known_regions():
    settings, messages = parse_settings({"region": "fr"}, known_regions=("WORLD", "FR", "DE"))
    assert settings.region == "FR" and not messages
    settings, messages = parse_settings({"region": "atlantis"}, known_regions=("WORLD", "FR"))
    assert settings.region == "WORLD" and "unknown region" in messages[0]


def test_project_file(tmp_path):
    (tmp_path / "ccls-cost.toml").write_text('profile = "HPC"\n[hints]\nformat = "{grade}"\n')
    values, messages = read_project_file(str(tmp_path))
    assert values == {"profile": "HPC", "hints.format": "{grade}"} and messages == []
    (tmp_path / "ccls-cost.toml").write_text("profile = \n")
    values, messages = read_project_file(str(tmp_path))
    assert values == {} and "cannot read" in messages[0]


def test_project_files_of_several_folders_merge_the_first_winning(tmp_path):
    first, second, third = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    for folder in (first, second, third):
        folder.mkdir()
    (first / "ccls-cost.toml").write_text('profile = "HPC"\n')
    (second / "ccls-cost.toml").write_text('profile = "MOBILE"\nregion = "FR"\n')
    (third / "ccls-cost.toml").write_text("profile = \n")
    values, messages = read_project_files([str(first), str(second), str(third)])
    assert values == {"profile": "HPC", "region": "FR"}
    assert len(messages) == 1 and "cannot read" in messages[0]


class _Tables:
    profiles = {"DEFAULT": None, "HPC": None}
    regions = {"WORLD": None, "FR": None}


def test_profile_and_region_names_are_the_tables_once_loaded():
    settings, messages = parse_against_tables({"profile": "hpc", "region": "fr"}, _Tables)
    assert (settings.profile, settings.region, messages) == ("HPC", "FR", [])
    settings, messages = parse_against_tables({"region": "atlantis"}, _Tables)
    assert settings.region == "WORLD" and "unknown region" in messages[0]
    settings, messages = parse_against_tables({"region": "atlantis"}, None)  # not loaded yet: not checked
    assert messages == []
    custom, _ = parse_settings({"customProfiles": {"green": [0.1, 0.6, 0.2, 0.1]}})
    assert known_names("profile", _Tables, custom) == ("DEFAULT", "HPC", "green")
    assert known_names("region", _Tables, custom) == ("WORLD", "FR")
    assert known_names("scoring", _Tables, custom) is None
