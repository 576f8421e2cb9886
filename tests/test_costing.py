"""Counts x table -> metrics (eq. 2) and the J -> kWh -> kg CO2 / USD conversions."""
from __future__ import annotations

import dataclasses
from fractions import Fraction

import pytest

from ccls.costing import (JOULES_PER_KWH, SECONDS_PER_YEAR, cost_counts, cu_expression, hidden_by_overlap,
                          metric_parts, metrics_band)
from ccls.model import MemoryOverlap
from ccls.polynomial import Polynomial
from ccls.table_types import CacheModel, ClassCost, CostTable, MachineEnergy, Region, Span
from ccls.tables import load_tables


def _cost(cu: float, pj: float) -> ClassCost:
    return ClassCost(cu, pj * 1e-12, "test", "modelled")


TABLE = CostTable(
    arch="toy", version="1.0.0", clock_hz=2e9,
    classes={"int_add": _cost(0.25, 70), "int_div": _cost(13, 90), "load.L1": _cost(0.5, 90),
             "fp_mul": _cost(0.5, 88), "kwh_op": _cost(0, 1e12)},
    cache=CacheModel(32768, 1 << 20, 32 << 20, 64), vector_native_bits=256,
    vector_multipliers={128: (1.0, 1.125), 256: (1.0, 1.375), 512: (2.0, 1.875)}, metadata={})
REGION = Region("TEST", "Test grid", carbon_kg_per_kwh=0.5, price_usd_per_kwh=0.2,
                instance_usd_per_core_hour=None, source="test")


def test_small_count_vector_by_hand():
    metrics, rows = cost_counts({"int_add": 100, "int_div": 10, "load.L1": 40}, TABLE, REGION)
    # CU = 100*0.25 + 10*13 + 40*0.5 ; EU = (100*70 + 10*90 + 40*90) pJ
    assert metrics.cu == pytest.approx(175.0)
    assert metrics.energy_joules == pytest.approx(11_500e-12)
    assert metrics.co2_kg == pytest.approx(11_500e-12 / 3.6e6 * 0.5)
    assert metrics.usd == pytest.approx(11_500e-12 / 3.6e6 * 0.2)
    assert [r.cls for r in rows] == ["int_div", "int_add", "load.L1"]  # largest CU first
    div = rows[0]
    assert (div.count, div.cu, div.energy_joules, div.known) == (10.0, 130.0, pytest.approx(900e-12), True)


def test_one_kilowatt_hour_costs_exactly_the_regions_intensity_and_price():
    assert JOULES_PER_KWH == 3.6e6
    metrics, _ = cost_counts({"kwh_op": 3.6e6}, TABLE, REGION)  # 3.6e6 operations of 1 J each
    assert metrics.energy_joules == pytest.approx(3.6e6)
    assert metrics.co2_kg == pytest.approx(0.5)
    assert metrics.usd == pytest.approx(0.2)


def test_cloud_price_adds_core_hours():
    cloud = Region("C", "Cloud", 0.5, 0.2, instance_usd_per_core_hour=Span.exact(0.036), source="test")
    # 7.2e12 cycles at 2 GHz = 3600 s = one core-hour; int_add energy 7.2e12/0.25 ops x 70 pJ
    metrics, _ = cost_counts({"int_add": 2.88e13}, TABLE, cloud)
    assert metrics.cu == pytest.approx(7.2e12)
    energy = 2.88e13 * 70e-12
    assert metrics.usd == pytest.approx(0.036 + energy / 3.6e6 * 0.2)
    plain, _ = cost_counts({"int_add": 2.88e13}, TABLE, REGION)
    assert metrics.usd - plain.usd == pytest.approx(0.036)
    assert metrics.co2_kg == plain.co2_kg


def test_vector_classes_scale_by_width():
    metrics, rows = cost_counts({"fp_mul@v512": 4, "fp_mul@v128": 2}, TABLE, REGION)
    assert metrics.cu == pytest.approx(4 * 0.5 * 2.0 + 2 * 0.5 * 1.0)
    assert metrics.energy_joules == pytest.approx((4 * 88 * 1.875 + 2 * 88 * 1.125) * 1e-12)
    assert all(r.known for r in rows)


def test_unknown_classes_cost_nothing_and_are_flagged():
    metrics, rows = cost_counts({"int_add": 4, "mma.f16": 1000}, TABLE, REGION)
    assert metrics.cu == pytest.approx(1.0)
    unknown = [r for r in rows if not r.known]
    assert [(r.cls, r.count, r.cu, r.energy_joules) for r in unknown] == [("mma.f16", 1000.0, 0.0, 0.0)]


def test_empty_counts_cost_zero():
    metrics, rows = cost_counts({}, TABLE, REGION)
    assert (metrics.cu, metrics.energy_joules, metrics.co2_kg, metrics.usd, rows) == (0.0, 0.0, 0.0, 0.0, [])


@pytest.mark.parametrize("bad", [-1.0, float("nan")])
def test_negative_or_nan_counts_are_refused(bad):
    with pytest.raises(ValueError, match="int_add"):
        cost_counts({"int_add": bad}, TABLE, REGION)


def test_cu_expression_is_symbolic_and_exact():
    n = Polynomial.symbol("n")
    expr = cu_expression({"int_add": 4 * n + 2, "int_div": n, "mystery": n * n}, TABLE)
    # 0.25 (4n + 2) + 13 n = 14 n + 1/2 ; the unknown class adds nothing
    assert expr == 14 * n + Fraction(1, 2)
    assert expr.big_o() == "O(n)"
    assert cu_expression({"load.L1": Polynomial.constant(3)}, TABLE).constant_value() == Fraction(3, 2)


def test_real_x86_table_makes_division_loops_expensive():
    tables = load_tables()
    table, region = tables.cost["x86_64"], tables.regions["WORLD"]
    adds, _ = cost_counts({"int_add": 1000, "branch": 1000}, table, region)
    divs, _ = cost_counts({"int_div": 1000, "branch": 1000}, table, region)
    branches, _ = cost_counts({"branch": 1000}, table, region)
    # a divide is 20-80x an add (the Zen 4 divider measured at 6.3 cycles per div r32, an add 0.25)
    assert divs.cu - branches.cu > 20 * (adds.cu - branches.cu)
    # a thousand simple instructions: on the order of 0.1 microjoule, not the paper's 0.1 J
    assert 1e-8 < adds.energy_joules < 1e-6
    assert adds.co2_kg == pytest.approx(adds.energy_joules / 3.6e6 * 0.475)


def test_machine_cycles_replace_the_compute_sum_and_misses_add_their_extra_cycles():
    table = CostTable(
        arch="toy", version="1.0.0", clock_hz=2e9,
        classes={"int_add": _cost(0.25, 70), "load.L1": _cost(0.5, 90), "load.DRAM": _cost(40.5, 2000),
                 "branch.mispredict": _cost(13, 1000)},
        cache=TABLE.cache, vector_native_bits=256, vector_multipliers=TABLE.vector_multipliers, metadata={})
    counts = {"int_add": 100, "load.L1": 30, "load.DRAM": 10, "branch.mispredict": 2}
    metrics, rows = cost_counts(counts, table, REGION, machine_cycles=60.0)
    # 60 simulated cycles (all loads as L1 hits) + 10 misses × (40.5 − 0.5) + 2 × 13
    assert metrics.cu == pytest.approx(60 + 400 + 26)
    assert sum(r.cu for r in rows) == pytest.approx(metrics.cu)
    by_class = {r.cls: r.cu for r in rows}
    # the compute share (25 + 15 + 5 by the table) is scaled to the 60 cycles
    assert by_class["int_add"] == pytest.approx(25 * 60 / 45)
    assert by_class["load.DRAM"] == pytest.approx(5 * 60 / 45 + 400)
    n = Polynomial.symbol("n")
    expression = cu_expression({"load.DRAM": n, "int_add": 3 * n}, table, machine_cycles=7 * n + 2)
    assert expression == 47 * n + 2


STREAM_TABLE = CostTable(
    arch="toy", version="1.0.0", clock_hz=2e9,
    classes={"int_add": _cost(0.25, 70), "load.L1": _cost(0.5, 90), "load.stream": _cost(16.5, 2000)},
    cache=TABLE.cache, vector_native_bits=256, vector_multipliers=TABLE.vector_multipliers, metadata={})


def _streaming_loop(cycles_per_iteration: int) -> tuple[MemoryOverlap, dict[str, Polynomial]]:
    """n iterations, one load each, a new 64-byte line every 8 (n/8 stream loads)."""
    n = Polynomial.symbol("n")
    counts = {"int_add": 4 * n, "load.L1": n * Fraction(7, 8), "load.stream": n * Fraction(1, 8)}
    return MemoryOverlap("body", cycles_per_iteration * n, {"load.stream": counts["load.stream"]}), counts


@pytest.mark.parametrize("cycles_per_iteration, compute_bound", [(3, True), (1, False)])
def test_a_streaming_loop_costs_the_larger_of_compute_and_transfer(cycles_per_iteration, compute_bound):
    overlap, counts = _streaming_loop(cycles_per_iteration)
    n = 8000
    evaluate = lambda poly: poly.evaluate({"n": n})  # noqa: E731
    (hidden,) = hidden_by_overlap([overlap], STREAM_TABLE, evaluate)
    assert hidden.memory is compute_bound
    compute, transfer = cycles_per_iteration * n, n / 8 * (16.5 - 0.5)  # 3n or n vs 2n
    metrics, rows = cost_counts({k: evaluate(v) for k, v in counts.items()}, STREAM_TABLE, REGION,
                                machine_cycles=compute, hidden=[hidden])
    assert metrics.cu == pytest.approx(max(compute, transfer))
    assert sum(r.cu for r in rows) == pytest.approx(metrics.cu)
    by_class = {r.cls: r.cu for r in rows}
    if compute_bound:  # the stream's stalls are hidden: its loads cost their compute share only
        assert by_class["load.stream"] == pytest.approx(compute * (n / 8 * 0.5) / (n + n * 0.5))
    else:  # the compute is hidden: what is left is the transfer
        assert by_class["load.stream"] == pytest.approx(transfer)
        assert by_class["int_add"] == pytest.approx(0)
    expression = cu_expression(counts, STREAM_TABLE, overlap.cycles, [hidden])
    assert expression.evaluate({"n": n}) == pytest.approx(metrics.cu)
    symbol = Polynomial.symbol("n")
    assert expression == (cycles_per_iteration * symbol if compute_bound else 2 * symbol)


def test_only_misses_that_do_not_wait_for_each_other_overlap_compute():
    from ccls.taxonomy import overlaps_compute
    for cls in ("load.stream", "store.stream@v128", "load.DRAM", "load.DRAM.strided", "store.DRAM",
                "load.L2", "store.L2@v128", "load.L3", "load.L2.crowded", "store.L3.crowded"):
        assert overlaps_compute(cls), cls
    for cls in ("load.DRAM.chase", "load.L1", "store.L1", "load.L2.chase", "load.L3.chase", "load.L2.crowded.aliased",
                "int_add", "fp_add.f64"):
        assert not overlaps_compute(cls), cls


# -- the energy roofline, SCI carbon and the time price (issue 13 §2) --------------------------

MACHINE = MachineEnergy(name="toy", cores=100, constant_power_w=Span(2.0, 1.0, 3.0),
                        embodied_kg=Span(1000.0, 500.0, 2000.0), lifetime_years=Span(4.0, 3.0, 5.0),
                        dynamic_energy_factor=Span(1.0, 0.5, 2.0), cu_factor=Span(1.0, 0.8, 1.25))
PHYSICAL = dataclasses.replace(TABLE, energy=MACHINE, classes={
    **TABLE.classes, "load.stream": _cost(5.0, 1490), "fp_fma": _cost(1.0, 90)})
OWNED = Region("O", "Owned", 0.5, 0.2, instance_usd_per_core_hour=Span(0.004, 0.002, 0.008), source="test",
               instance_kind="on-premises", carbon_factor=Span(1.0, 0.8, 1.2), price_factor=Span(1.0, 0.7, 1.3))


def test_roofline_energy_is_dynamic_per_class_plus_constant_power_times_time():
    metrics, rows = cost_counts({"fp_fma": 2e9}, PHYSICAL, OWNED)  # 2e9 cycles at 2 GHz = 1 s
    parts = metric_parts(rows, metrics.cu, PHYSICAL, OWNED)
    assert parts.seconds == pytest.approx(1.0)
    assert parts.compute_joules == pytest.approx(2e9 * 90e-12) and parts.memory_joules == 0.0
    assert parts.static_joules == pytest.approx(2.0)  # π₀ = 2 W for 1 s
    assert metrics.energy_joules == pytest.approx(0.18 + 2.0)
    # SCI: E x I plus the machine's 1000 kg over 4 years x 100 cores, for 1 s of one core
    assert parts.operational_kg == pytest.approx(2.18 / 3.6e6 * 0.5)
    assert parts.embodied_kg == pytest.approx(1000 / (4 * SECONDS_PER_YEAR * 100))
    assert metrics.co2_kg == pytest.approx(parts.operational_kg + parts.embodied_kg)
    # USD: energy x price plus one core-second at 0.004 USD per core-hour
    assert parts.instance_usd == pytest.approx(0.004 / 3600)
    assert metrics.usd == pytest.approx(2.18 / 3.6e6 * 0.2 + 0.004 / 3600)


def test_memory_bound_and_compute_bound_of_equal_cu_differ_in_energy_as_hardware_does():
    # Equal time (1e9 cycles): 2e8 DRAM stream lines (64 B each at 5 cycles) against 1e9 FMAs from
    # L1. Moving a byte from DRAM costs more than the arithmetic on it (Horowitz: a 64-bit DRAM
    # access 1.3-2.6 nJ against an FP add's 0.9 pJ): the streaming loop spends more energy.
    memory, memory_rows = cost_counts({"load.stream": 2e8}, PHYSICAL, OWNED)
    compute, compute_rows = cost_counts({"fp_fma": 1e9}, PHYSICAL, OWNED)
    assert memory.cu == pytest.approx(compute.cu)
    assert memory.energy_joules > compute.energy_joules
    memory_parts = metric_parts(memory_rows, memory.cu, PHYSICAL, OWNED)
    compute_parts = metric_parts(compute_rows, compute.cu, PHYSICAL, OWNED)
    assert memory_parts.static_joules == pytest.approx(compute_parts.static_joules)  # same time, same π₀·T
    assert memory_parts.memory_joules > 0 == memory_parts.compute_joules
    assert memory_parts.memory_joules > 3 * compute_parts.compute_joules  # 0.298 J against 0.09 J
    # the time-priced parts are equal; the energy-priced ones follow the energy
    assert memory_parts.embodied_kg == pytest.approx(compute_parts.embodied_kg)
    assert memory_parts.instance_usd == pytest.approx(compute_parts.instance_usd)


def test_co2_per_joule_differs_with_the_mix_of_time_and_energy():
    # the same energy in ten times the time: embodied carbon grows with time, operational does not
    slow, _ = cost_counts({"int_div": 1e9}, PHYSICAL, OWNED)  # 13e9 cycles, 0.09 J dynamic
    busy, _ = cost_counts({"load.stream": 2.6e9}, PHYSICAL, OWNED)  # 13e9 cycles, 3.9 J dynamic
    assert slow.cu == pytest.approx(busy.cu)
    assert slow.co2_kg / slow.energy_joules > busy.co2_kg / busy.energy_joules
    assert slow.usd / slow.energy_joules > busy.usd / busy.energy_joules
    # without embodied carbon and a time price, CO2/EU and $/EU are the same for every function
    plain_slow, _ = cost_counts({"int_div": 1e9}, TABLE, REGION)
    plain_busy, _ = cost_counts({"load.stream": 2.6e9}, dataclasses.replace(PHYSICAL, energy=None), REGION)
    assert plain_slow.co2_kg / plain_slow.energy_joules == pytest.approx(plain_busy.co2_kg / plain_busy.energy_joules)


def test_band_holds_every_constant_at_its_stated_ends():
    metrics, rows = cost_counts({"fp_fma": 2e9}, PHYSICAL, OWNED)
    band = metrics_band(rows, metrics.cu, metrics.cu, metrics.cu, PHYSICAL, OWNED)
    assert band.low.cu == pytest.approx(0.8 * metrics.cu) and band.high.cu == pytest.approx(1.25 * metrics.cu)
    # EU low: half the dynamic energy, 1 W for 0.8 s; high: twice it, 3 W for 1.25 s
    assert band.low.energy_joules == pytest.approx(0.09 + 0.8)
    assert band.high.energy_joules == pytest.approx(0.36 + 3.75)
    for low, mid, high in zip(band.low.as_dict().values(), metrics.as_dict().values(), band.high.as_dict().values()):
        assert low < mid < high
    # a CU range from the function's assumptions widens every band
    wide = metrics_band(rows, metrics.cu, metrics.cu / 10, metrics.cu * 10, PHYSICAL, OWNED)
    assert wide.low.cu < band.low.cu and wide.high.cu > band.high.cu
    assert wide.high.energy_joules > band.high.energy_joules and wide.low.usd < band.low.usd


def _function(kind: str, iterations: float = 100):
    """A loop at line 3 whose body (line 4) runs `iterations` times: 4 FMAs and a load each."""
    from ccls.model import CountedFunction, LoopSummary, TripCount
    n = Polynomial.constant(iterations)
    body = {"fp_fma": n * 4, "load.L1": n}
    return CountedFunction(
        name=f"f_{kind}", display_name=f"f_{kind}", file="/src/a.c", line=1, end_line=6, language="c",
        arch="x86_64", parameters=[], static_counts={}, counts=body, machine_instructions=None,
        loops=[LoopSummary("for.body", 1, 3, TripCount(kind, n))], line_counts={4: body}, calls={}, sites=[],
        assumptions=[])


def test_bands_widen_with_an_unknown_trip_count():
    from ccls.engine import ReportSettings, report
    from ccls.options import AnalysisOptions
    tables = load_tables()
    known, unknown, expected = report([_function("constant"), _function("unknown"), _function("expected", 50)],
                                      tables, ReportSettings(), AnalysisOptions())
    assert known.metrics.cu == pytest.approx(unknown.metrics.cu)
    factor = tables.cost["x86_64"].energy.cu_factor
    # a known count: only the table's CU range
    assert known.metrics_band.low.cu == pytest.approx(known.metrics.cu * factor.low)
    assert known.metrics_band.high.cu == pytest.approx(known.metrics.cu * factor.high)
    # the default of 100 taken as 10 … 1000 iterations: the loop's CU ÷10 … ×10
    assert unknown.metrics_band.low.cu == pytest.approx(unknown.metrics.cu * 0.1 * factor.low)
    assert unknown.metrics_band.high.cu == pytest.approx(unknown.metrics.cu * 10 * factor.high)
    for metric in ("CU", "EU", "CO2", "USD"):
        k_low, k_high = known.metrics_band.as_dict()[metric]
        u_low, u_high = unknown.metrics_band.as_dict()[metric]
        assert u_low < k_low and u_high > k_high
    # the mean of a data-dependent exit, 50: between 1 iteration and the bound, 99
    assert expected.metrics_band.high.cu == pytest.approx(expected.metrics.cu * 99 / 50 * factor.high)
    assert expected.metrics_band.low.cu == pytest.approx(expected.metrics.cu / 50 * factor.low)


def test_bands_span_no_mispredictions_to_random_data():
    # 200 mispredictions charged at the mean rate (1/4 of 800 data-dependent branches): the band
    # runs from none (data that always goes one way) to twice as many (random data).
    from ccls.engine import ReportSettings, report
    from ccls.options import AnalysisOptions
    tables = load_tables()
    plain = _function("constant")
    branchy = dataclasses.replace(plain, counts={**plain.counts, "branch.mispredict": Polynomial.constant(200)})
    [r] = report([branchy], tables, ReportSettings(), AnalysisOptions())
    penalty = 200 * tables.cost["x86_64"].classes["branch.mispredict"].cu
    factor = tables.cost["x86_64"].energy.cu_factor
    assert r.metrics_band.low.cu == pytest.approx((r.metrics.cu - penalty) * factor.low)
    assert r.metrics_band.high.cu == pytest.approx((r.metrics.cu + penalty) * factor.high)


def test_parts_sum_to_the_metrics_and_bands_contain_them():
    from ccls.engine import ReportSettings, report
    from ccls.options import AnalysisOptions
    for region in ("WORLD", "FR", "WORLD-CLOUD"):
        [r] = report([_function("constant")], load_tables(), ReportSettings(region=region), AnalysisOptions())
        parts = r.metric_parts
        assert parts.metrics(r.metrics.cu) == r.metrics
        assert parts.static_joules > 0 and parts.embodied_kg > 0 and parts.instance_usd > 0
        for metric, (low, high) in r.metrics_band.as_dict().items():
            assert low < r.metrics.as_dict()[metric] < high


def test_without_line_information_an_unknown_loop_still_widens_the_band():
    import dataclasses as dc

    from ccls.engine import ReportSettings, report
    from ccls.options import AnalysisOptions
    bare = dc.replace(_function("unknown"), line_counts={})  # IR without debug info
    known = dc.replace(_function("constant"), line_counts={})
    [u, k] = report([bare, known], load_tables(), ReportSettings(), AnalysisOptions())
    factor = load_tables().cost["x86_64"].energy.cu_factor
    assert u.metrics_band.high.cu == pytest.approx(u.metrics.cu * 10 * factor.high)
    assert k.metrics_band.high.cu == pytest.approx(k.metrics.cu * factor.high)


def test_a_library_math_call_adds_its_body_to_the_simulated_cycles():
    """The machine block holds `call sinf`; the function's body is the table's cycles per call
    less the call itself. A function without its own entry costs the generic class."""
    table = CostTable(
        arch="toy", version="1.0.0", clock_hz=2e9,
        classes={"int_add": _cost(0.25, 70), "call": _cost(2, 100), "fp_transcendental": _cost(40, 1900),
                 "fp_transcendental.sinf": _cost(13, 600)},
        cache=TABLE.cache, vector_native_bits=256, vector_multipliers=TABLE.vector_multipliers, metadata={})
    counts = {"int_add": 100, "fp_transcendental.sinf": 10, "fp_transcendental.sinl": 1}
    metrics, _ = cost_counts(counts, table, REGION, machine_cycles=60.0)
    assert metrics.cu == pytest.approx(60 + 10 * (13 - 2) + 1 * (40 - 2))
    n = Polynomial.symbol("n")
    assert cu_expression({"fp_transcendental.sinf": n}, table, machine_cycles=5 * n) == 16 * n
