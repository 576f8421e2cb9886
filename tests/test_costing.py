"""Counts x table -> metrics (eq. 2) and the J -> kWh -> kg CO2 / USD conversions."""
from __future__ import annotations

from fractions import Fraction

import pytest

from ccls.costing import JOULES_PER_KWH, cost_counts, cu_expression, hidden_by_overlap
from ccls.model import MemoryOverlap
from ccls.polynomial import Polynomial
from ccls.tables import CacheModel, ClassCost, CostTable, Region, load_tables


def _cost(cu: float, pj: float) -> ClassCost:
    return ClassCost(cu, pj * 1e-12, "test", "modelled")


TABLE = CostTable(
    arch="toy", version="1.0.0", clock_hz=2e9,
    classes={"int_add": _cost(0.25, 70), "int_div": _cost(13, 90), "load.L1": _cost(0.5, 90),
             "fp_mul": _cost(0.5, 88), "kwh_op": _cost(0, 1e12)},
    cache=CacheModel(32768, 1 << 20, 32 << 20, 64), vector_native_bits=256,
    vector_multipliers={128: (1.0, 1.125), 256: (1.0, 1.375), 512: (2.0, 1.875)}, metadata={})
REGION = Region("TEST", "Test grid", carbon_kg_per_kwh=0.5, price_usd_per_kwh=0.2,
                cloud_usd_per_core_hour=None, source="test")


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
    cloud = Region("C", "Cloud", 0.5, 0.2, cloud_usd_per_core_hour=0.036, source="test")
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
    for cls in ("load.stream", "store.stream@v128", "load.DRAM", "load.DRAM.strided", "store.DRAM"):
        assert overlaps_compute(cls), cls
    for cls in ("load.DRAM.chase", "load.L1", "load.L2", "load.L3.chase", "int_add", "fp_add.f64"):
        assert not overlaps_compute(cls), cls
