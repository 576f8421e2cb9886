"""Server settings: one typed dataclass with safe defaults, parsed leniently from client dicts.

Sources, lowest precedence first: defaults, the workspace project file `ccls-cost.toml`,
`initializationOptions`, then `workspace/configuration` (or `didChangeConfiguration`). Every
source uses the same keys; nested tables (``{"hints": {"enabled": true}}``) and dotted keys
(``{"hints.enabled": true}``) are equivalent. An invalid value keeps its default and adds a
human-readable message; parsing never raises. The analysis options' keys come from their one
definition, `ccls.options.OPTION_SPECS` (the CLI's flags come from the same table).
"""
from __future__ import annotations

import math
import os
import tomllib
from dataclasses import dataclass, replace
from typing import Any, Callable, Mapping, Sequence

from ccls.options import OPTION_SPECS, SPEC_BY_SETTING, AnalysisOptions, options_from_settings
from ccls.render import DEFAULT_HINT_SHOW, HINT_SHOW_MODES
from ccls.report_types import ReportSettings
from ccls.scoring import DEFAULT_NORMALIZATION, NORMALIZATIONS

BUILTIN_PROFILES = ("DEFAULT", "RESEARCH", "COMMERCIAL", "MOBILE", "HPC")
SEVERITIES = ("error", "warning", "information", "hint", "off")
SCORINGS = ("absolute", "cohort")
PROJECT_FILE = "ccls-cost.toml"
DEFAULT_HINT_FORMAT = "{grade} · {cu} CU · {energy}"

# Settings whose value is itself a mapping: not flattened into dotted keys.
_MAPPING_KEYS = ("customProfiles", *(spec.setting for spec in OPTION_SPECS if spec.kind == "parameters"))


@dataclass(frozen=True)
class Settings:
    profile: str = "DEFAULT"
    custom_profiles: tuple[tuple[str, tuple[float, float, float, float]], ...] = ()
    region: str = "WORLD"
    scoring: str = "absolute"
    normalization: str = DEFAULT_NORMALIZATION  # cohort scoring's scale (ccls.scoring)
    hints_enabled: bool = True
    hints_format: str = DEFAULT_HINT_FORMAT
    hints_show: str = DEFAULT_HINT_SHOW  # which functions get a hint (ccls.render.hint_filter)
    severity_division_in_loop: str = "warning"
    severity_miss_heavy_loop: str = "information"
    min_share: float = 0.05
    code_lens_enabled: bool = False
    analysis: AnalysisOptions = AnalysisOptions()  # every key of ccls.options.OPTION_SPECS
    # Server-only keys (not part of the CLI): where the count cache lives, and whether the
    # workspace is analysed in the background for cohort scoring.
    cache_directory: str | None = None
    background_analysis: bool = True

    def analysis_options(self) -> AnalysisOptions:
        """The options that reach the engine; only these can change counts."""
        return self.analysis

    def report_settings(self) -> ReportSettings:
        """What reports are made under: the profile, region, scoring and its normalisation."""
        return ReportSettings(self.profile, self.region, self.scoring, self.normalization)

    def custom_profiles_dict(self) -> dict[str, list[float]]:
        return {name: list(weights) for name, weights in self.custom_profiles}

    def severity(self, finding_kind: str) -> str:
        return {"division-in-loop": self.severity_division_in_loop,
                "miss-heavy-loop": self.severity_miss_heavy_loop}.get(finding_kind, "information")


def flatten(raw: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """{"hints": {"enabled": True}} -> {"hints.enabled": True}; mapping-valued settings stay whole."""
    flat: dict[str, Any] = {}
    for key, value in raw.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping) and name not in _MAPPING_KEYS:
            flat.update(flatten(value, name + "."))
        else:
            flat[name] = value
    return flat


def merge(*sources: Mapping[str, Any] | None) -> dict[str, Any]:
    """Flattened union of setting dicts; later sources win key by key."""
    merged: dict[str, Any] = {}
    for source in sources:
        if isinstance(source, Mapping):
            merged.update(flatten(source))
    return merged


def unwrap_section(raw: Any) -> Mapping[str, Any] | None:
    """Client payloads come as {"ccls": {...}} or as the section itself; accept both."""
    if not isinstance(raw, Mapping):
        return None
    inner = raw.get("ccls")
    if isinstance(inner, Mapping):
        return inner
    return raw


def _enum(choices: tuple[str, ...]) -> Callable[[Any], Any]:
    def check(value: Any) -> Any:
        if isinstance(value, str):
            for choice in choices:
                if value.lower() == choice.lower():
                    return choice
        raise ValueError(f"expected one of {', '.join(choices)}")
    return check


def _bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    raise ValueError("expected true or false")


def _number(low: float, high: float) -> Callable[[Any], float]:
    def check(value: Any) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise ValueError("expected a number")
        if not low <= value <= high:
            raise ValueError(f"expected a number between {low:g} and {high:g}")
        return float(value)
    return check


def _string(value: Any) -> str:
    if isinstance(value, str) and value.strip():
        return value
    raise ValueError("expected a non-empty string")


def _hint_format(value: Any) -> str:
    text = _string(value)
    # Reject templates Python's str.format cannot parse, so rendering cannot fail later.
    import string
    try:
        list(string.Formatter().parse(text))
    except ValueError as exc:
        raise ValueError(f"not a valid template ({exc})") from None
    return text


def _custom_profiles(value: Any) -> tuple[tuple[str, tuple[float, float, float, float]], ...]:
    if not isinstance(value, Mapping):
        raise ValueError("expected a table {name: [w_CU, w_EU, w_CO2, w_USD]}")
    out = []
    for name, weights in value.items():
        if not isinstance(name, str) or not name.strip():
            raise ValueError("profile names must be non-empty strings")
        if (not isinstance(weights, (list, tuple)) or len(weights) != 4
                or any(isinstance(w, bool) or not isinstance(w, (int, float)) or not math.isfinite(w) or w < 0
                       for w in weights)):
            raise ValueError(f"{name}: expected four non-negative weights [w_CU, w_EU, w_CO2, w_USD]")
        if abs(sum(weights) - 1.0) > 1e-6:
            raise ValueError(f"{name}: weights must sum to 1 (they sum to {sum(weights):g})")
        out.append((name, tuple(float(w) for w in weights)))
    return tuple(out)


def _directory(value: Any) -> str:
    text = _string(value)
    return os.path.abspath(os.path.expanduser(text))


# setting key -> (Settings field, validator)
_FIELDS: dict[str, tuple[str, Callable[[Any], Any]]] = {
    "profile": ("profile", _string),
    "customProfiles": ("custom_profiles", _custom_profiles),
    "region": ("region", _string),
    "scoring": ("scoring", _enum(SCORINGS)),
    "normalization": ("normalization", _enum(NORMALIZATIONS)),
    "hints.enabled": ("hints_enabled", _bool),
    "hints.format": ("hints_format", _hint_format),
    "hints.show": ("hints_show", _enum(HINT_SHOW_MODES)),
    "diagnostics.divisionInLoop": ("severity_division_in_loop", _enum(SEVERITIES)),
    "diagnostics.missHeavyLoop": ("severity_miss_heavy_loop", _enum(SEVERITIES)),
    "diagnostics.minShare": ("min_share", _number(0.0, 1.0)),
    "codeLens.enabled": ("code_lens_enabled", _bool),
    "cache.directory": ("cache_directory", _directory),
    "workspace.backgroundAnalysis": ("background_analysis", _bool),
}


def parse_settings(raw: Mapping[str, Any] | None, known_profiles: tuple[str, ...] = BUILTIN_PROFILES,
                   known_regions: tuple[str, ...] | None = None) -> tuple[Settings, list[str]]:
    """Settings from a (nested or dotted) dict, plus one message per rejected or unknown key.

    `known_regions` None skips the region check (tables not loaded yet)."""
    flat = merge(raw) if raw else {}
    analysis, messages = options_from_settings(flat)
    values: dict[str, Any] = {"analysis": analysis}
    for key, value in flat.items():
        if value is None or key in SPEC_BY_SETTING:
            continue  # clients send null for "not set"; analysis options are read above
        spec = _FIELDS.get(key)
        if spec is None:
            messages.append(f"ccls.{key}: unknown setting (ignored)")
            continue
        name, check = spec
        try:
            values[name] = check(value)
        except ValueError as exc:
            messages.append(f"ccls.{key}: {exc}; got {value!r}, using the default")
    settings = replace(Settings(), **values)
    custom = tuple(name for name, _ in settings.custom_profiles)
    profiles = {p.upper(): p for p in (*known_profiles, *custom)}
    if settings.profile.upper() in profiles:
        settings = replace(settings, profile=profiles[settings.profile.upper()])
    else:
        messages.append(f"ccls.profile: unknown profile {settings.profile!r} "
                        f"(known: {', '.join(profiles.values())}); using DEFAULT")
        settings = replace(settings, profile="DEFAULT")
    if known_regions is not None:
        regions = {r.upper(): r for r in known_regions}
        if settings.region.upper() in regions:
            settings = replace(settings, region=regions[settings.region.upper()])
        else:
            messages.append(f"ccls.region: unknown region {settings.region!r}; using WORLD")
            settings = replace(settings, region="WORLD")
    return settings, messages


def parse_against_tables(raw: Mapping[str, Any] | None, tables: Any | None) -> tuple[Settings, list[str]]:
    """`parse_settings` with the profile and region names of loaded `tables` (None: not loaded
    yet, so the built-in profiles and no region check)."""
    known_profiles = tuple(tables.profiles) if tables is not None else None
    known_regions = tuple(tables.regions) if tables is not None else None
    kwargs: dict[str, Any] = {"known_regions": known_regions}
    if known_profiles:
        kwargs["known_profiles"] = known_profiles
    return parse_settings(raw, **kwargs)


def known_names(key: str, tables: Any, settings: Settings) -> tuple[str, ...] | None:
    """The values `ccls.setProfile` (key "profile") or `ccls.setRegion` ("region") accept;
    None for another key (not checked)."""
    if key == "profile":
        return tuple(tables.profiles) + tuple(n for n, _ in settings.custom_profiles)
    if key == "region":
        return tuple(tables.regions)
    return None


def read_project_files(folders: Sequence[str]) -> tuple[dict[str, Any], list[str]]:
    """The project files of the workspace folders, merged (the first folder wins), and what is
    wrong with them."""
    merged: dict[str, Any] = {}
    messages: list[str] = []
    for folder in reversed(folders):
        values, found = read_project_file(folder)
        merged.update(values)
        messages += found
    return merged, messages


def read_project_file(folder: str) -> tuple[dict[str, Any], list[str]]:
    """The `ccls-cost.toml` in a workspace folder as a flat dict, or {} (with a message if broken)."""
    path = os.path.join(folder, PROJECT_FILE)
    try:
        with open(path, "rb") as handle:
            data = tomllib.load(handle)
    except FileNotFoundError:
        return {}, []
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        return {}, [f"{path}: cannot read ({exc}); ignoring it"]
    section = data.get("ccls") if isinstance(data.get("ccls"), dict) else data
    return flatten(section), []
