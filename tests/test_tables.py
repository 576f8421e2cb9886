"""cost_tables/: every file parses, validates and names its sources; bad files are rejected
with the file name; lookup falls back from specific to general keys."""
from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest

from ccls import taxonomy
from ccls.table_types import GPU_THREAD_FAMILY, CacheModel, ClassCost, CostTable, reference_family
from ccls.tables import METHODS, TableError, default_table_dir, load_tables, validate_profile

TABLE_DIR = default_table_dir()
ALL_FILES = sorted(p.name for p in TABLE_DIR.glob("*.json"))
CPU_TABLES = ("x86_64.json", "aarch64.json")
GPU_TABLES = ("nvptx-sm80.json", "nvptx-sm90.json")


def _doc(name: str) -> dict:
    return json.loads((TABLE_DIR / name).read_text())


def _numbers_without_provenance(node, path="data", provenance=False):
    """Independent re-walk of the provenance rule: yields paths of unsourced numbers."""
    if isinstance(node, dict):
        if isinstance(node.get("source"), str) and node["source"].strip() and node.get("method") in METHODS:
            provenance = True
        for key, value in node.items():
            yield from _numbers_without_provenance(value, f"{path}.{key}", provenance)
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _numbers_without_provenance(value, f"{path}[{i}]", provenance)
    elif isinstance(node, (int, float)) and not isinstance(node, bool) and not provenance:
        yield path


# -- the shipped files ---------------------------------------------------------------------------

def test_the_shipped_directory_holds_every_expected_file():
    expected = {"x86_64.json", "aarch64.json", "nvptx-sm80.json", "nvptx-sm90.json", "cpython-3.11.json",
                "regions.json", "profiles.json", "grades.json", "reference_ranges.json", "energy_parts.json"}
    assert expected <= set(ALL_FILES)


def test_every_file_loads_and_every_cost_table_is_keyed_by_its_file_name():
    tables = load_tables()
    cost_files = {n[:-5] for n in ALL_FILES} - {"regions", "profiles", "grades", "reference_ranges", "energy_parts"}
    assert set(tables.cost) == cost_files
    assert tables.version.startswith("tables-") and len(tables.version) == len("tables-") + 12


@pytest.mark.parametrize("name", ALL_FILES)
def test_every_number_names_a_source_and_method(name):
    doc = _doc(name)
    assert list(_numbers_without_provenance(doc["data"])) == []
    meta = doc["metadata"]
    for field in ("version", "source", "hardware", "method", "date", "units", "notes"):
        assert isinstance(meta[field], str) and meta[field].strip(), field


@pytest.mark.parametrize("name", CPU_TABLES + GPU_TABLES + ("cpython-3.11.json",))
def test_every_cost_class_carries_its_own_source_and_methods(name):
    for cls, entry in _doc(name)["data"]["classes"].items():
        assert entry["source"].strip(), cls
        assert entry["method"] in METHODS, cls
        assert entry["energy_method"] in METHODS, cls
        assert entry["energy_source"].strip(), cls
        assert entry["cu"] >= 0 and entry["energy_pj"] >= 0, cls


@pytest.mark.parametrize("name", CPU_TABLES)
def test_cpu_tables_cover_the_taxonomy_and_every_memory_tier(name):
    classes = _doc(name)["data"]["classes"]
    wanted = set(taxonomy.BASE_CLASSES) - {"mma", "sfu", "barrier", "py"}
    assert wanted <= set(classes)
    for kind in ("load", "store"):
        for tier in ("L1", "L2", "L3", "DRAM", "stream"):
            assert f"{kind}.{tier}" in classes


def test_cpu_cores_state_their_out_of_order_window_and_others_do_not():
    tables = load_tables()
    for arch in ("x86_64", "aarch64"):
        window = _doc(f"{arch}.json")["data"]["window"]
        assert window["reorder_buffer"] == tables.cost[arch].cache.reorder_buffer == 320
        assert window["source"] and window["method"] == "literature"
    assert tables.cost["nvptx-sm80"].cache.reorder_buffer is None


@pytest.mark.parametrize("arch", ["x86_64-zen3", "x86_64-zen4"])
def test_the_host_tables_are_measured_and_correct_llvm_mcas_divider(arch):
    tables = load_tables()
    host = tables.cost[arch]
    data = _doc(f"{arch}.json")["data"]
    assert data["clock_hz"]["method"] == data["cache"]["method"] == data["divider"]["method"] == "measured"
    for cls in ("load.DRAM.chase", "load.stream", "store.stream", "int_div.i32"):
        assert data["classes"][cls]["method"] == "measured"
    if arch == "x86_64-zen4":  # measured since the strided probe exists (zen3's record predates it)
        strided = data["classes"]["load.DRAM.strided"]
        assert strided["method"] == "measured" and "median over strides" in strided["source"]
        assert data["classes"]["load.stream"]["cu"] <= strided["cu"] <= data["classes"]["load.DRAM.chase"]["cu"]
    divider = host.cache.divider
    assert divider.mca_cycles == (data["divider"]["i32"]["mca_cycles"], data["divider"]["i64"]["mca_cycles"])
    assert "llvm-mca's model says 13" in data["classes"]["int_div.i32"]["notes"]
    assert all(0 < real < mca for real, mca in zip(divider.cycles, divider.mca_cycles))
    assert host.lookup("int_div").cu == divider.cycles[0]


def test_a_table_without_a_strided_figure_prices_strided_misses_as_independent_ones():
    literature = load_tables().cost["x86_64"]
    assert "load.DRAM.strided" not in literature.classes
    assert literature.lookup("load.DRAM.strided") == literature.lookup("load.DRAM")


def test_how_long_streamed_lines_last_is_measured_where_known():
    tables = load_tables()
    assert tables.cost["x86_64-zen4"].cache.stream_reuse_bytes == 1024  # re-read probe, host-measurements
    assert tables.cost["x86_64"].cache.stream_reuse_bytes is None  # not measured: the cache sizes decide
    assert tables.cost["x86_64-zen3"].cache.stream_reuse_bytes is None


@pytest.mark.parametrize("value", [-1, 1.5, "1K", True])
def test_malformed_stream_reuse_is_rejected(tmp_path, value):
    _rejects(tmp_path, "x86_64-zen4.json", lambda d: d["data"]["cache"].update(stream_reuse_bytes=value),
             "data.cache.stream_reuse_bytes")


def test_the_literature_zen4_table_takes_the_divider_measured_on_a_zen4():
    tables = load_tables()
    literature, data = tables.cost["x86_64"], _doc("x86_64.json")["data"]
    assert literature.cache.divider == tables.cost["x86_64-zen4"].cache.divider
    assert data["divider"]["method"] == data["classes"]["int_div.i64"]["method"] == "measured"
    assert data["cache"]["method"] == "literature"  # the rest stays as published
    assert tables.cost["aarch64"].cache.divider is None  # no Neoverse measured: llvm-mca's model


@pytest.mark.parametrize("change, fragments", [
    (lambda d: d["data"]["divider"]["i32"].pop("cycles"), ("data.divider.i32", "cycles")),
    (lambda d: d["data"]["divider"].pop("i64"), ("data.divider", "i64")),
    (lambda d: d["data"]["divider"]["i64"].update(cycles=-1), ("data.divider.i64",)),
    (lambda d: d["data"].update(divider=[1]), ("data.divider",)),
])
def test_malformed_divider_is_rejected(tmp_path, change, fragments):
    _rejects(tmp_path, "x86_64-zen3.json", change, *fragments)


@pytest.mark.parametrize("name", CPU_TABLES)
def test_cpu_costs_are_ordered_as_hardware_is(name):
    c = load_tables().cost[name[:-5]]
    cu = {k: c.lookup(k).cu for k in ("int_add", "int_mul", "int_div", "fp_add", "fp_div", "load.L1",
                                     "load.L2", "load.L3", "load.DRAM", "load.stream")}
    assert cu["int_add"] < cu["int_mul"] < cu["int_div"]
    assert cu["int_div"] >= 10 * cu["int_add"]
    assert cu["fp_add"] < cu["fp_div"]
    assert cu["load.L1"] < cu["load.L2"] < cu["load.L3"] < cu["load.DRAM"]
    assert cu["load.stream"] < cu["load.DRAM"]  # prefetched lines cost bandwidth, not latency
    chase = {k: c.lookup(f"load.{k}.chase").cu for k in ("L2", "L3", "DRAM")}
    assert chase["L2"] < chase["L3"] < chase["DRAM"]
    for level in ("L2", "L3", "DRAM"):  # a dependent miss waits the whole latency; independent ones overlap
        assert chase[level] >= 5 * cu[f"load.{level}"]
    assert c.lookup("branch.mispredict").cu >= 10 * cu["int_add"]
    energy = {k: c.lookup(k).energy_joules for k in ("load.L1", "load.L2", "load.L3", "load.DRAM")}
    assert energy["load.L1"] < energy["load.L2"] < energy["load.L3"] < energy["load.DRAM"]
    # a simple instruction costs tens of picojoules, not the paper's 1e-4 J
    assert 10e-12 <= c.lookup("int_add").energy_joules <= 200e-12
    assert c.clock_hz > 1e9 and c.cache.line_bytes == 64


@pytest.mark.parametrize("name", GPU_TABLES)
def test_gpu_tables_have_precisions_state_spaces_and_gpu_families(name):
    classes = _doc(name)["data"]["classes"]
    for op in ("fp_add", "fp_mul", "fp_fma"):
        for precision in ("f32", "f64", "f16", "bf16"):
            assert f"{op}.{precision}" in classes
    for cls in ("int_add", "int_mul", "int_div", "fp_div.f32", "fp_div.f64", "sfu", "mma", "barrier",
                "atomic.global", "atomic.shared", "load.global", "load.shared", "load.local", "load.const",
                "load.param", "store.global", "store.shared", "store.local", "branch", "convert", "select",
                "call", "return", "other"):
        assert cls in classes, cls
    # Per thread, like the PTX reader's counts: a warp instruction's 32 / (results per clock per SM)
    # cycles shared by its 32 lanes. fp32 FMA at 64/clk on sm_80, 128/clk on sm_90.
    expected_fp32 = {"nvptx-sm80.json": 1 / 64, "nvptx-sm90.json": 1 / 128}[name]
    assert classes["fp_fma.f32"]["cu"] == expected_fp32
    assert classes["sfu"]["cu"] == 1 / 16  # 16 MUFU results per clock per SM on both
    assert classes["fp_fma.f64"]["cu"] == 2 * expected_fp32
    assert classes["atomic.global"]["cu"] == 1.0  # 32 SM cycles per warp of distinct addresses
    meta = _doc(name)["metadata"]
    assert meta["version"] == "2.0.0" and "per executed THREAD instruction" in meta["units"]


def test_cpython_table_has_every_bytecode_family_measured():
    data = _doc("cpython-3.11.json")["data"]
    families = ("load", "store", "binary_add", "binary_mul", "binary_div", "binary_other", "compare", "call",
                "branch", "iter", "build", "subscr", "attr", "return", "other")
    for fam in families:
        entry = data["classes"][f"py.{fam}"]
        assert entry["method"] == "measured"
        assert 0 <= entry["cu"] < 1000
    assert data["classes"]["py.binary_div"]["cu"] > data["classes"]["py.load"]["cu"]


def test_regions_profiles_grades_and_ranges_hold_the_specified_values():
    t = load_tables()
    assert t.regions["WORLD"].carbon_kg_per_kwh == 0.475
    for rid in ("US", "EU", "FR", "DE", "GB", "PL", "NO", "SE", "CN", "IN", "JP", "CA", "AU", "BR"):
        region = t.regions[rid]
        assert 0 < region.carbon_kg_per_kwh < 1.5 and 0 < region.price_usd_per_kwh < 1, rid
        assert region.source
    assert t.regions["NO"].carbon_kg_per_kwh < t.regions["PL"].carbon_kg_per_kwh
    assert t.profiles["RESEARCH"].weights == (0.4, 0.3, 0.25, 0.05)
    assert t.profiles["COMMERCIAL"].weights == (0.3, 0.2, 0.2, 0.3)
    assert t.profiles["MOBILE"].weights == (0.25, 0.5, 0.15, 0.1)
    assert t.profiles["HPC"].weights == (0.5, 0.3, 0.15, 0.05)
    assert math.isclose(sum(t.profiles["DEFAULT"].weights), 1.0)
    grades = [g for _, g, _ in t.grades.bands]
    assert grades == ["A+", "A", "A-", "B+", "B", "B-", "C+", "C", "C-", "D", "F"]
    assert {r for _, _, r in t.grades.bands} == {"Excellent", "Very Good", "Good", "Fair", "Poor"}
    assert set(t.reference.low) == {"CU", "EU", "CO2", "USD"}
    assert all(t.reference.low[m] < t.reference.high[m] for m in t.reference.low)


def test_reference_ranges_have_a_per_thread_section_for_gpu_code():
    reference = load_tables().reference
    gpu = reference.families[GPU_THREAD_FAMILY]
    assert set(gpu.low) == set(gpu.high) == {"CU", "EU", "CO2", "USD"}
    assert all(gpu.low[m] < gpu.high[m] for m in gpu.low)
    # a trivial GPU thread costs ~0.5 CU, far below a trivial CPU call (10 cycles)
    assert gpu.low["CU"] < reference.low["CU"] and gpu.high["CU"] < reference.high["CU"]
    for arch in ("nvptx-sm80", "nvptx-sm90"):
        assert reference_family(arch) == GPU_THREAD_FAMILY and reference.for_arch(arch) is gpu
    for arch in ("x86_64", "aarch64", "cpython-3.11"):
        assert reference.for_arch(arch) is reference
    entries = _doc("reference_ranges.json")["data"]["families"][GPU_THREAD_FAMILY]["metrics"]
    assert all(e["method"] == "modelled" and e["source"].startswith("modelled:") for e in entries.values())


def test_reference_ranges_without_families_still_load(tmp_path):
    copy = _copy(tmp_path)
    _edit(copy, "reference_ranges.json", lambda d: d["data"].pop("families"))
    reference = load_tables(str(copy)).reference
    assert reference.families == {} and reference.for_arch("nvptx-sm80") is reference


def _gpu_ranges(doc: dict) -> dict:
    return doc["data"]["families"][GPU_THREAD_FAMILY]


@pytest.mark.parametrize("change, fragments", [
    (lambda d: _gpu_ranges(d)["metrics"]["CU"].update(high=0.1), ("data.families.gpu-thread.metrics.CU", "exceed")),
    (lambda d: _gpu_ranges(d)["metrics"].pop("USD"), ("data.families.gpu-thread.metrics", "exactly")),
    (lambda d: _gpu_ranges(d)["metrics"]["EU"].update(low="2.5e-10"), ("data.families.gpu-thread.metrics.EU.low",)),
    (lambda d: _gpu_ranges(d)["metrics"]["CO2"].update(low=0), ("metrics.CO2.low", "positive")),
    (lambda d: _gpu_ranges(d).pop("metrics"), ("data.families.gpu-thread.metrics", "object")),
    (lambda d: d["data"]["families"].update(gpu=d["data"]["families"].pop(GPU_THREAD_FAMILY)),
     ("data.families.gpu", "unknown family")),
    (lambda d: d["data"]["families"].update({GPU_THREAD_FAMILY: [1]}), ("data.families.gpu-thread",)),
    (lambda d: d["data"].update(families=[]), ("data.families", "object")),
    (lambda d: [e.pop("source") for e in _gpu_ranges(d)["metrics"].values()], ("data.families.gpu-thread.metrics",)),
])
def test_malformed_gpu_reference_ranges_are_rejected(tmp_path, change, fragments):
    _rejects(tmp_path, "reference_ranges.json", change, *fragments)


def test_version_is_stable_and_changes_when_a_file_changes(tmp_path):
    copy = _copy(tmp_path)
    first = load_tables(str(copy)).version
    assert load_tables(str(copy)).version == first
    doc = json.loads((copy / "grades.json").read_text())
    doc["metadata"]["notes"] += " (edited)"
    (copy / "grades.json").write_text(json.dumps(doc))
    assert load_tables(str(copy)).version != first


# -- rejected files ------------------------------------------------------------------------------

def _copy(tmp_path: Path) -> Path:
    dest = tmp_path / "tables"
    dest.mkdir(parents=True)
    for name in ALL_FILES:
        shutil.copy(TABLE_DIR / name, dest / name)
    return dest


def _edit(directory: Path, name: str, change) -> None:
    doc = json.loads((directory / name).read_text())
    change(doc)
    (directory / name).write_text(json.dumps(doc))


def _rejects(tmp_path, name, change, *fragments):
    copy = _copy(tmp_path)
    _edit(copy, name, change)
    with pytest.raises(TableError) as err:
        load_tables(str(copy))
    assert err.value.file == name
    message = str(err.value)
    assert message.startswith(name + ":")
    for fragment in fragments:
        assert fragment in message
    return message


def test_missing_metadata_field_is_rejected_with_the_file_name(tmp_path):
    _rejects(tmp_path, "x86_64.json", lambda d: d["metadata"].pop("hardware"), "metadata.hardware")


def test_bad_semver_is_rejected(tmp_path):
    _rejects(tmp_path, "regions.json", lambda d: d["metadata"].update(version="1.0"), "semantic versioning")


def test_negative_cost_is_rejected(tmp_path):
    _rejects(tmp_path, "aarch64.json", lambda d: d["data"]["classes"]["int_div"].update(cu=-3.0),
             "data.classes.int_div.cu", "negative")


def test_profile_not_summing_to_one_is_rejected(tmp_path):
    _rejects(tmp_path, "profiles.json", lambda d: d["data"]["profiles"]["HPC"].update(weights=[0.5, 0.3, 0.15, 0.1]),
             "'HPC'", "sum to 1")


def test_number_without_provenance_is_rejected(tmp_path):
    def strip(d):
        entry = d["data"]["regions"]["FR"]
        del entry["source"], entry["method"]
    _rejects(tmp_path, "regions.json", strip, "data.regions.FR", "no 'source'")


def test_unknown_method_is_rejected(tmp_path):
    _rejects(tmp_path, "nvptx-sm80.json", lambda d: d["data"]["classes"]["sfu"].update(method="guessed"),
             "'guessed'")


def test_class_key_outside_the_taxonomy_is_rejected(tmp_path):
    _rejects(tmp_path, "x86_64.json",
             lambda d: d["data"]["classes"].update(teleport=d["data"]["classes"]["int_add"]), "teleport")


def test_arch_must_match_file_name(tmp_path):
    _rejects(tmp_path, "aarch64.json", lambda d: d["data"].update(arch="arm64"), "'aarch64'")


def test_grade_bands_must_descend_and_reach_zero(tmp_path):
    _rejects(tmp_path, "grades.json", lambda d: d["data"]["bands"].pop(), "start at 0")
    _rejects(tmp_path / "b", "grades.json", lambda d: d["data"]["bands"].reverse(), "decrease")


def test_invalid_json_reports_line_and_column(tmp_path):
    copy = _copy(tmp_path)
    (copy / "grades.json").write_text('{"data": {},\n "metadata": }')
    with pytest.raises(TableError, match=r"grades\.json: invalid JSON at line 2"):
        load_tables(str(copy))


def test_missing_required_file_is_named(tmp_path):
    copy = _copy(tmp_path)
    (copy / "reference_ranges.json").unlink()
    with pytest.raises(TableError, match="reference_ranges.json"):
        load_tables(str(copy))


def test_missing_directory_is_reported(tmp_path):
    with pytest.raises(TableError, match="directory not found"):
        load_tables(str(tmp_path / "nowhere"))


# -- custom profiles (eq. 6) -----------------------------------------------------------------------

def test_custom_profiles_are_validated_and_added():
    tables = load_tables(custom_profiles={"GREEN": [0.1, 0.2, 0.6, 0.1]})
    assert tables.profiles["GREEN"].weights == (0.1, 0.2, 0.6, 0.1)
    assert tables.version != load_tables().version
    with pytest.raises(TableError, match="customProfiles: profile 'BAD'.*sum to 1"):
        load_tables(custom_profiles={"BAD": [0.5, 0.5, 0.5, 0.5]})
    with pytest.raises(TableError, match="built-in"):
        load_tables(custom_profiles={"HPC": [0.25, 0.25, 0.25, 0.25]})


@pytest.mark.parametrize("weights, problem", [
    ([0.5, 0.5, 0.0], "4 numbers"), ("0.25", "4 numbers"), ([0.5, 0.6, -0.1, 0.0], "non-negative"),
    ([0.25, 0.25, 0.25, float("nan")], "non-negative"), ([True, 0, 0, 0], "non-negative"),
    ([0.3, 0.3, 0.3, 0.3], "sum to 1")])
def test_validate_profile_rejects(weights, problem):
    with pytest.raises(TableError, match=problem):
        validate_profile("X", weights)


def test_validate_profile_tolerates_rounding():
    assert validate_profile("X", [0.1, 0.2, 0.3, 0.4000001]).weights[3] == 0.4000001


# -- lookup fallbacks ------------------------------------------------------------------------------

def _table() -> CostTable:
    def cost(cu, pj):
        return ClassCost(cu, pj * 1e-12, "test", "modelled")
    return CostTable(arch="toy", version="1.0.0", clock_hz=1e9,
                     classes={"int_add": cost(1, 10), "load": cost(2, 20), "load.global": cost(8, 80),
                              "fp_mul": cost(0.5, 40), "fp_mul.f16": cost(0.25, 5), "fp_mul@v256": cost(3, 99)},
                     cache=CacheModel(32768, 1 << 20, None, 64), vector_native_bits=128,
                     vector_multipliers={128: (1.0, 1.2), 512: (2.0, 3.0)}, metadata={})


def test_lookup_prefers_the_exact_key():
    t = _table()
    assert t.lookup("fp_mul@v256").cu == 3  # listed explicitly, no scaling
    assert t.lookup("load.global").cu == 8


def test_lookup_drops_qualifiers_from_the_right():
    t = _table()
    assert t.lookup("load.global.L2").cu == 8  # -> load.global
    assert t.lookup("load.shared").cu == 2  # -> load
    assert t.lookup("int_add.s64").cu == 1


def test_lookup_scales_vectors_by_the_width_multiplier():
    t = _table()
    v128 = t.lookup("fp_mul@v128")
    assert (v128.cu, v128.energy_joules) == pytest.approx((0.5, 48e-12))
    below = t.lookup("fp_mul@v64")  # below the smallest listed: the smallest
    assert (below.cu, below.energy_joules) == pytest.approx((0.5, 48e-12))
    between = t.lookup("int_add@v300")  # between listed widths: the next larger (512)
    assert (between.cu, between.energy_joules) == pytest.approx((2.0, 30e-12))
    above = t.lookup("fp_mul.f16@v2048")  # 4 x the largest (512): 4 x its multipliers
    assert (above.cu, above.energy_joules) == pytest.approx((0.25 * 8, 5e-12 * 12))
    assert "2048-bit vector" in above.source


def test_lookup_returns_none_for_unknown_classes():
    t = _table()
    assert t.lookup("atomic") is None
    assert t.lookup("atomic@v256") is None
    assert t.lookup("fp_mul@vwide") is None


def test_stream_reuse_reach_from_the_re_read_probe():
    import importlib.util
    from pathlib import Path
    path = Path(__file__).parents[1] / "cost_tables" / "derive" / "measure_host.py"
    spec = importlib.util.spec_from_file_location("measure_host", path)
    measure_host = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(measure_host)
    reach = measure_host.stream_reuse_bytes
    assert reach({"one": 0.30, "two": 0.69, "1024": 0.35, "131072": 0.79}) == 1024  # this Zen 4 guest
    assert reach({"one": 0.30, "two": 0.69, "1024": 0.31, "131072": 0.33}) is None  # no limit seen
    assert reach({"one": 0.30, "two": 0.69, "1024": 0.60, "131072": 0.33}) == 0


# -- energy parts, instance prices and stated ranges (issue 13) ----------------------------------

def test_every_cost_table_gets_a_machine_and_every_region_a_time_price():
    tables = load_tables()
    for arch, table in tables.cost.items():
        assert table.energy is not None
        assert table.energy.name == (arch if arch.startswith("nvptx") else "cpu")
        for span in (table.energy.constant_power_w, table.energy.embodied_kg, table.energy.lifetime_years):
            assert 0 < span.low <= span.value <= span.high
    for region in tables.regions.values():
        assert region.instance_usd_per_core_hour is not None
        assert region.carbon_factor.low < 1 < region.carbon_factor.high
        assert region.price_factor.low < 1 < region.price_factor.high
    assert tables.regions["WORLD"].instance_kind == "on-premises"
    assert tables.regions["WORLD-CLOUD"].instance_kind == "cloud"
    assert tables.regions["WORLD-CLOUD"].instance_usd_per_core_hour.value > \
        10 * tables.regions["WORLD"].instance_usd_per_core_hour.value


def test_modelled_energy_constants_say_so():
    machines = _doc("energy_parts.json")["data"]["machines"]
    for machine in machines.values():
        assert machine["constant_power_w"]["method"] == "modelled"
        assert machine["embodied_kg"]["method"] == "modelled"
        assert "Choi" in machine["constant_power_w"]["source"]


@pytest.mark.parametrize("change, fragments", [
    (lambda d: d["data"]["machines"].pop("cpu"), ("energy_parts.json", "must contain 'cpu'")),
    (lambda d: d["data"]["machines"]["cpu"]["constant_power_w"].update(low=2.0), ("low <= value <= high",)),
    (lambda d: d["data"]["machines"]["cpu"]["embodied_kg"].pop("source"), ("'source' must be",)),
])
def test_malformed_energy_parts_are_rejected(tmp_path, change, fragments):
    _rejects(tmp_path, "energy_parts.json", change, *fragments)


@pytest.mark.parametrize("change, fragments", [
    (lambda d: d["data"]["uncertainty"]["price_factor"].update(low=1.1), ("must contain 1",)),
    (lambda d: d["data"].pop("instance_default"), ("instance_default must be an object",)),
])
def test_malformed_region_ranges_are_rejected(tmp_path, change, fragments):
    _rejects(tmp_path, "regions.json", change, *fragments)
