"""Cost tables, regions, profiles, grades and reference ranges: read, validate, freeze into the
types of `ccls.table_types`.

This is the edge of the costing path: the only module that touches cost_tables/. Every file
is an envelope ``{"data": ..., "metadata": {version, source, hardware, method, date, units,
notes}}``; every number inside ``data`` must carry provenance (``source`` + ``method``) on its
own entry or on an enclosing one. Problems raise `TableError` naming the file.
"""
from __future__ import annotations

import hashlib
import json
import math
import re
from dataclasses import replace
from pathlib import Path
from typing import Any, Mapping, Sequence

from ccls import taxonomy
from ccls.table_types import (METRICS, REFERENCE_FAMILIES, CacheModel, ClassCost, CostTable, DividerModel, GradeScale,
                              MachineEnergy, Profile, ReferenceRanges, Region, Span, Tables)

METADATA_FIELDS = ("version", "source", "hardware", "method", "date", "units", "notes")
METHODS = frozenset({"measured", "llvm-sched-model", "literature", "modelled", "design-choice"})
PICOJOULES_PER_JOULE = 1e12
REGIONS_FILE, PROFILES_FILE, GRADES_FILE, REFERENCE_FILE, ENERGY_FILE = (
    "regions.json", "profiles.json", "grades.json", "reference_ranges.json", "energy_parts.json")
NON_COST_FILES = frozenset({REGIONS_FILE, PROFILES_FILE, GRADES_FILE, REFERENCE_FILE, ENERGY_FILE})
CPU_MACHINE = "cpu"  # energy_parts.json: the machine of every table without an entry of its own
PACKAGED_DIR = "_cost_tables"  # where the wheel ships cost_tables/ inside the ccls package
HOST_FILE = "host.json"  # how a calibrated table is named in errors; its data.arch is "host"
NO_CALIBRATION = "no calibration of this machine yet: run `ccls calibrate` (about a minute; --quick: seconds)"

_SEMVER = re.compile(r"^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


class TableError(Exception):
    """A table file is missing, malformed, or breaks a rule; the message names file and problem."""

    def __init__(self, file: str, problem: str) -> None:
        super().__init__(f"{file}: {problem}")
        self.file = file
        self.problem = problem


# -- public entry points ----------------------------------------------------------------------

def load_tables(directory: str | None = None,
                custom_profiles: Mapping[str, Sequence[float]] | None = None,
                host_table: str | Path | None = None) -> Tables:
    """Read and validate every table file. ``directory`` defaults to the packaged copy
    (``ccls/_cost_tables``) or, in a source checkout, ``<repo>/cost_tables``. ``host_table``: a
    calibrated table of this machine (`ccls calibrate`), added as arch ``host``."""
    root = _table_dir(directory)
    files = {entry.name: entry for entry in root.iterdir() if entry.name.endswith(".json")}
    for required in sorted(NON_COST_FILES):
        if required not in files:
            raise TableError(required, f"missing from {root}")
    digest = hashlib.sha256()
    envelopes: dict[str, Any] = {}
    for name in sorted(files):
        raw = files[name].read_bytes()
        digest.update(name.encode() + b"\0" + raw + b"\0")
        envelopes[name] = _parse_envelope(name, raw)
    machines = _machines(ENERGY_FILE, envelopes[ENERGY_FILE]["data"])
    cost = {}
    for name in sorted(set(files) - NON_COST_FILES):
        table = _cost_table(name, envelopes[name])
        cost[table.arch] = replace(table, energy=machines.get(table.arch, machines[CPU_MACHINE]))
    if host_table is not None:
        raw = _host_bytes(Path(host_table))
        digest.update(HOST_FILE.encode() + b"\0" + raw + b"\0")
        table = _cost_table(HOST_FILE, _parse_envelope(HOST_FILE, raw))
        cost[table.arch] = replace(table, energy=machines.get(table.arch, machines[CPU_MACHINE]))
    if not cost:
        raise TableError(str(root), "no cost table (*.json besides regions/profiles/grades/reference_ranges)")
    profiles = _profiles(PROFILES_FILE, envelopes[PROFILES_FILE]["data"])
    for name, weights in (custom_profiles or {}).items():
        if name in profiles:
            raise TableError("customProfiles", f"{name!r} is a built-in profile name; choose another")
        profiles[name] = validate_profile(name, weights, origin="customProfiles")
        digest.update(json.dumps([name, list(profiles[name].weights)]).encode())
    return Tables(cost=cost, regions=_regions(REGIONS_FILE, envelopes[REGIONS_FILE]["data"]), profiles=profiles,
                  grades=_grades(GRADES_FILE, envelopes[GRADES_FILE]["data"]),
                  reference=_reference(REFERENCE_FILE, envelopes[REFERENCE_FILE]["data"]),
                  version=f"tables-{digest.hexdigest()[:12]}")


def _host_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise TableError(str(path), NO_CALIBRATION) from None
    except OSError as problem:
        raise TableError(str(path), f"cannot read the calibrated table: {problem.strerror or problem}") from None


def validate_profile(name: str, weights: Any, origin: str = "customProfiles") -> Profile:
    """Four non-negative finite weights (CU, EU, CO2, USD) summing to 1 within 1e-6 (eq. 6)."""
    where = f"profile {name!r}"
    if isinstance(weights, (str, bytes)) or not isinstance(weights, Sequence) or len(weights) != 4:
        raise TableError(origin, f"{where}: weights must be a list of 4 numbers (CU, EU, CO2, USD), got {weights!r}")
    values = []
    for metric, w in zip(METRICS, weights):
        if not _is_number(w) or not math.isfinite(w) or w < 0:
            raise TableError(origin, f"{where}: weight for {metric} must be a non-negative number, got {w!r}")
        values.append(float(w))
    total = sum(values)
    if abs(total - 1.0) > 1e-6:
        raise TableError(origin, f"{where}: weights must sum to 1 (eq. 6), they sum to {total:.6g}")
    return Profile(name=name, weights=(values[0], values[1], values[2], values[3]))


def default_table_dir() -> Path:
    """The directory load_tables() reads when none is given."""
    return Path(str(_table_dir(None)))


# -- locating and parsing ---------------------------------------------------------------------

def _table_dir(directory: str | None):
    if directory is not None:
        path = Path(directory)
        if not path.is_dir():
            raise TableError(str(path), "cost table directory not found")
        return path
    tried = []
    beside = Path(__file__).parent / PACKAGED_DIR  # the package on disk: importlib.resources not needed
    if beside.is_dir():
        return beside
    try:
        from importlib import resources  # e.g. a zipped install

        packaged = resources.files("ccls").joinpath(PACKAGED_DIR)
        if packaged.is_dir():
            return packaged
        tried.append(str(packaged))
    except (ModuleNotFoundError, TypeError):  # ccls imported from an unusual loader
        pass
    checkout = Path(__file__).resolve().parent.parent / "cost_tables"
    if checkout.is_dir():
        return checkout
    tried.append(str(checkout))
    raise TableError("cost_tables", "directory not found; tried " + ", ".join(tried))


def _parse_envelope(name: str, raw: bytes) -> dict:
    try:
        doc = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise TableError(name, f"not UTF-8 text ({exc.reason})") from None
    except json.JSONDecodeError as exc:
        raise TableError(name, f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from None
    if not isinstance(doc, dict) or set(doc) != {"data", "metadata"}:
        keys = sorted(doc) if isinstance(doc, dict) else type(doc).__name__
        raise TableError(name, f"envelope must be an object with exactly 'data' and 'metadata', got {keys}")
    meta = doc["metadata"]
    if not isinstance(meta, dict):
        raise TableError(name, "metadata must be an object")
    for field in METADATA_FIELDS:
        if not isinstance(meta.get(field), str) or not meta[field].strip():
            raise TableError(name, f"metadata.{field} is missing or not a non-empty string")
    if not _SEMVER.match(meta["version"]):
        raise TableError(name, f"metadata.version {meta['version']!r} is not semantic versioning (MAJOR.MINOR.PATCH)")
    if not _DATE.match(meta["date"]):
        raise TableError(name, f"metadata.date {meta['date']!r} is not YYYY-MM-DD")
    if not isinstance(doc["data"], dict):
        raise TableError(name, "data must be an object")
    _check_provenance(name, doc["data"], "data", None)
    return doc


def _check_provenance(name: str, node: Any, path: str, inherited: bool | None, at: tuple = ()) -> None:
    """Every number needs a source+method on its own object or an enclosing one; none negative.
    `at`: the keys and indices below `path` (spelt out only in an error: a table has thousands)."""
    if isinstance(node, dict):
        has_source = isinstance(node.get("source"), str) and bool(node["source"].strip())
        if "method" in node or has_source:
            if not has_source:
                raise TableError(name, f"{_spelt(path, at)}: 'source' must be a non-empty string")
            if node.get("method") not in METHODS:
                raise TableError(name, f"{_spelt(path, at)}: method {node.get('method')!r} is not one of {sorted(METHODS)}")
            inherited = True
        if "energy_method" in node and node["energy_method"] not in METHODS:
            raise TableError(name, f"{_spelt(path, at)}: energy_method {node['energy_method']!r} is not one of "
                                   f"{sorted(METHODS)}")
        for key, value in node.items():
            _check_provenance(name, value, path, inherited, (*at, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            _check_provenance(name, value, path, inherited, (*at, i))
    elif _is_number(node):
        if not math.isfinite(node):
            raise TableError(name, f"{_spelt(path, at)}: {node!r} is not a finite number")
        if node < 0:
            raise TableError(name, f"{_spelt(path, at)}: negative value {node!r}")
        if not inherited:
            raise TableError(name, f"{_spelt(path, at)}: number {node!r} has no 'source' and 'method' on it or an "
                                   "enclosing entry")


def _spelt(path: str, at: tuple) -> str:
    """`data.costs[2].x` for ("costs", 2, "x") below "data"."""
    return path + "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in at)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _number(name: str, obj: Mapping, key: str, path: str, positive: bool = False) -> float:
    value = obj.get(key)
    if not _is_number(value):
        raise TableError(name, f"{path}.{key} must be a number, got {value!r}")
    if positive and value <= 0:
        raise TableError(name, f"{path}.{key} must be positive, got {value!r}")
    return float(value)


def _int(name: str, obj: Mapping, key: str, path: str) -> int:
    value = obj.get(key)
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise TableError(name, f"{path}.{key} must be a positive integer, got {value!r}")
    return value


def _count(name: str, obj: Mapping, key: str, path: str) -> int:
    value = obj.get(key)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise TableError(name, f"{path}.{key} must be a non-negative integer, got {value!r}")
    return value


def _object(name: str, obj: Mapping, key: str, path: str) -> dict:
    value = obj.get(key)
    if not isinstance(value, dict):
        raise TableError(name, f"{path}.{key} must be an object")
    return value


def _memory_chain(name: str, data: dict) -> dict:
    """CacheModel's chain figures: store-to-load forwarding and the classes' latencies."""
    if "memory_chain" not in data:
        return {}
    forward = _object(name, _object(name, data, "memory_chain", "data"), "store_forward_cycles", "data.memory_chain")
    where = "data.memory_chain.store_forward_cycles"
    latencies = tuple((cls, float(entry["latency_cycles"])) for cls, entry in sorted(data["classes"].items())
                      if isinstance(entry, dict) and isinstance(entry.get("latency_cycles"), (int, float)))
    return {"store_forward_cycles": (_number(name, forward, "int", where, positive=True),
                                     _number(name, forward, "fp", where, positive=True)),
            "latencies": latencies}


def _cost_table(name: str, doc: dict) -> CostTable:
    data = doc["data"]
    stem = name[: -len(".json")]
    if data.get("arch") != stem:
        raise TableError(name, f"data.arch must equal the file name stem {stem!r}, got {data.get('arch')!r}")
    clock = _number(name, _object(name, data, "clock_hz", "data"), "value", "data.clock_hz", positive=True)
    cache = _object(name, data, "cache", "data")
    l3 = cache.get("l3_bytes")
    if l3 is not None:
        l3 = _int(name, cache, "l3_bytes", "data.cache")
    cache_model = CacheModel(l1_bytes=_int(name, cache, "l1d_bytes", "data.cache"),
                             l2_bytes=_int(name, cache, "l2_bytes", "data.cache"), l3_bytes=l3,
                             line_bytes=_int(name, cache, "line_bytes", "data.cache"),
                             reorder_buffer=_int(name, data["window"], "reorder_buffer", "data.window")
                             if isinstance(data.get("window"), dict) else None,
                             divider=_divider(name, data["divider"]) if "divider" in data else None,
                             stream_reuse_bytes=_count(name, cache, "stream_reuse_bytes", "data.cache")
                             if "stream_reuse_bytes" in cache else None,
                             **{field_name: _int(name, cache, key, "data.cache")
                                for key, field_name in (("l1d_ways", "l1_ways"), ("l2_ways", "l2_ways"),
                                                        ("tlb_entries", "tlb_entries"), ("page_bytes", "page_bytes"))
                                if key in cache},
                             **_memory_chain(name, data))
    vector = _object(name, data, "vector", "data")
    native = _int(name, vector, "native_bits", "data.vector")
    multipliers: dict[int, tuple[float, float]] = {}
    for width, entry in _object(name, vector, "widths", "data.vector").items():
        where = f"data.vector.widths.{width}"
        if not width.isdigit() or int(width) <= 0 or not isinstance(entry, dict):
            raise TableError(name, f"{where}: width must be a positive integer key with an object value")
        multipliers[int(width)] = (_number(name, entry, "cu", where, positive=True),
                                   _number(name, entry, "energy", where, positive=True))
    classes: dict[str, ClassCost] = {}
    for cls, entry in _object(name, data, "classes", "data").items():
        where = f"data.classes.{cls}"
        key, _, width = cls.partition("@v")
        base = key.split(".", 1)[0]
        if base not in taxonomy.BASE_CLASSES or (width and not width.isdigit()):
            raise TableError(name, f"{where}: not a class key base[.qualifier][@vWIDTH] with a base from ccls.taxonomy")
        if not isinstance(entry, dict):
            raise TableError(name, f"{where} must be an object")
        cu = _number(name, entry, "cu", where)
        energy_pj = _number(name, entry, "energy_pj", where)
        if not isinstance(entry.get("source"), str) or "method" not in entry:
            raise TableError(name, f"{where}: every class entry needs its own 'source' and 'method'")
        source = entry["source"]
        if "energy_source" in entry:
            source = f"{source}; energy: {entry['energy_source']} ({entry.get('energy_method', 'unspecified')})"
        classes[cls] = ClassCost(cu=cu, energy_joules=energy_pj / PICOJOULES_PER_JOULE, source=source,
                                 method=entry["method"])
    return CostTable(arch=stem, version=doc["metadata"]["version"], clock_hz=clock, classes=classes,
                     cache=cache_model, vector_native_bits=native, vector_multipliers=multipliers,
                     metadata=dict(doc["metadata"]))


def _span(name: str, entry: Any, where: str) -> Span:
    """{value, low, high} with low ≤ value ≤ high (value alone: an exact figure)."""
    if not isinstance(entry, dict):
        raise TableError(name, f"{where} must be an object with value, low, high")
    value = _number(name, entry, "value", where)
    low = _number(name, entry, "low", where) if "low" in entry else value
    high = _number(name, entry, "high", where) if "high" in entry else value
    if not low <= value <= high:
        raise TableError(name, f"{where}: needs low <= value <= high, got {low}, {value}, {high}")
    return Span(value, low, high)


def _factor(name: str, entry: Any, where: str) -> Span:
    """{low, high} multipliers around 1."""
    if not isinstance(entry, dict):
        raise TableError(name, f"{where} must be an object with low and high")
    low, high = _number(name, entry, "low", where), _number(name, entry, "high", where)
    if not low <= 1.0 <= high:
        raise TableError(name, f"{where}: a factor range must contain 1, got [{low}, {high}]")
    return Span(1.0, low, high)


def _regions(name: str, data: dict) -> dict[str, Region]:
    default = _object(name, data, "instance_default", "data")
    default_price = _span(name, default.get("usd_per_core_hour"), "data.instance_default.usd_per_core_hour")
    uncertainty = _object(name, data, "uncertainty", "data")
    carbon = _factor(name, uncertainty.get("carbon_factor"), "data.uncertainty.carbon_factor")
    price = _factor(name, uncertainty.get("price_factor"), "data.uncertainty.price_factor")
    out = {}
    for rid, entry in _object(name, data, "regions", "data").items():
        where = f"data.regions.{rid}"
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            raise TableError(name, f"{where}: needs an object with a 'name'")
        if "instance_usd_per_core_hour" in entry:
            instance = _span(name, entry["instance_usd_per_core_hour"], f"{where}.instance_usd_per_core_hour")
            kind = entry.get("instance_kind", "cloud")
        else:
            instance, kind = default_price, str(default.get("kind", "on-premises"))
        out[rid] = Region(id=rid, name=entry["name"],
                          carbon_kg_per_kwh=_number(name, entry, "carbon_kg_per_kwh", where),
                          price_usd_per_kwh=_number(name, entry, "price_usd_per_kwh", where),
                          instance_usd_per_core_hour=instance, source=entry["source"], instance_kind=kind,
                          carbon_factor=carbon, price_factor=price)
    if "WORLD" not in out:
        raise TableError(name, "data.regions must contain WORLD (the default region)")
    return out


def _machines(name: str, data: dict) -> dict[str, MachineEnergy]:
    """data.machines: {name: {cores, constant_power_w, embodied_kg, lifetime_years,
    dynamic_energy_factor, cu_factor}}; `cpu` is required (every table without its own entry)."""
    out = {}
    for mid, entry in _object(name, data, "machines", "data").items():
        where = f"data.machines.{mid}"
        if not isinstance(entry, dict):
            raise TableError(name, f"{where} must be an object")
        cores = _object(name, entry, "cores", where)
        spans = {key: _span(name, entry.get(key), f"{where}.{key}")
                 for key in ("constant_power_w", "embodied_kg", "lifetime_years", "dynamic_energy_factor", "cu_factor")}
        if spans["lifetime_years"].low <= 0:
            raise TableError(name, f"{where}.lifetime_years must be positive")
        out[mid] = MachineEnergy(name=mid, cores=_int(name, cores, "value", f"{where}.cores"), **spans)
    if CPU_MACHINE not in out:
        raise TableError(name, f"data.machines must contain {CPU_MACHINE!r} (the default machine)")
    return out


def _profiles(name: str, data: dict) -> dict[str, Profile]:
    order = data.get("order")
    if order != list(METRICS):
        raise TableError(name, f"data.order must be {list(METRICS)}, got {order!r}")
    out = {}
    for pname, entry in _object(name, data, "profiles", "data").items():
        if not isinstance(entry, dict):
            raise TableError(name, f"data.profiles.{pname} must be an object")
        out[pname] = validate_profile(pname, entry.get("weights"), origin=name)
    if "DEFAULT" not in out:
        raise TableError(name, "data.profiles must contain DEFAULT")
    return out


def _grades(name: str, data: dict) -> GradeScale:
    bands = data.get("bands")
    if not isinstance(bands, list) or not bands:
        raise TableError(name, "data.bands must be a non-empty list")
    out: list[tuple[float, str, str]] = []
    for i, band in enumerate(bands):
        where = f"data.bands[{i}]"
        if not isinstance(band, dict):
            raise TableError(name, f"{where} must be an object")
        score = _number(name, band, "min_score", where)
        if score > 100:
            raise TableError(name, f"{where}.min_score {score} is above 100")
        if out and score >= out[-1][0]:
            raise TableError(name, f"{where}: min_score must decrease strictly ({score} after {out[-1][0]})")
        grade, rating = band.get("grade"), band.get("rating")
        if not isinstance(grade, str) or not grade or not isinstance(rating, str) or not rating:
            raise TableError(name, f"{where}: grade and rating must be non-empty strings")
        out.append((score, grade, rating))
    if out[-1][0] != 0:
        raise TableError(name, f"the last band must start at 0 so every score gets a grade, got {out[-1][0]}")
    if len({g for _, g, _ in out}) != len(out):
        raise TableError(name, "grades must be unique")
    return GradeScale(bands=tuple(out))


def _divider(name: str, divider: Any) -> DividerModel:
    """data.divider: {i32: {mca_cycles, cycles}, i64: {...}, source, method}."""
    if not isinstance(divider, dict):
        raise TableError(name, "data.divider must be an object")
    pairs = [(_number(name, _object(name, divider, w, "data.divider"), "mca_cycles", f"data.divider.{w}", positive=True),
              _number(name, divider[w], "cycles", f"data.divider.{w}", positive=True)) for w in ("i32", "i64")]
    return DividerModel(mca_cycles=(pairs[0][0], pairs[1][0]), cycles=(pairs[0][1], pairs[1][1]))


def _reference(name: str, data: dict) -> ReferenceRanges:
    """data.metrics: the default ranges; data.families (optional): {family: {metrics: ...}}, each
    family one of REFERENCE_FAMILIES (a file without it scores every function on the default)."""
    low, high = _metric_ranges(name, data, "data")
    families: dict[str, ReferenceRanges] = {}
    if "families" in data:
        for family, entry in _object(name, data, "families", "data").items():
            where = f"data.families.{family}"
            if family not in REFERENCE_FAMILIES:
                raise TableError(name, f"{where}: unknown family {family!r}; known: {sorted(REFERENCE_FAMILIES)}")
            if not isinstance(entry, dict):
                raise TableError(name, f"{where} must be an object")
            family_low, family_high = _metric_ranges(name, entry, where)
            families[family] = ReferenceRanges(low=family_low, high=family_high)
    return ReferenceRanges(low=low, high=high, families=families)


def _metric_ranges(name: str, data: dict, path: str) -> tuple[dict[str, float], dict[str, float]]:
    metrics = _object(name, data, "metrics", path)
    if set(metrics) != set(METRICS):
        raise TableError(name, f"{path}.metrics must have exactly {list(METRICS)}, got {sorted(metrics)}")
    low, high = {}, {}
    for m in METRICS:
        where = f"{path}.metrics.{m}"
        entry = _object(name, metrics, m, f"{path}.metrics")
        low[m] = _number(name, entry, "low", where, positive=True)
        high[m] = _number(name, entry, "high", where, positive=True)
        if high[m] <= low[m]:
            raise TableError(name, f"{where}: high ({high[m]}) must exceed low ({low[m]})")
    return low, high
