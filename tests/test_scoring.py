"""Paper eqs. 4-8: normalisation, composite score under each profile, weights, grades."""
from __future__ import annotations

import json

import pytest

from ccls.model import Metrics
from ccls.scoring import (EPSILON, LOG_MINMAX, MINMAX, NORMALIZATIONS, absolute_position, absolute_score,
                          composite_scores, grade_for, log_ends, normalize, normalize_by, normalize_log,
                          profile_flips, weights_at)
from ccls.table_types import GradeScale, Profile, ReferenceRanges
from ccls.tables import TableError, load_tables, validate_profile

PAPER = {"RESEARCH": (0.4, 0.3, 0.25, 0.05), "COMMERCIAL": (0.3, 0.2, 0.2, 0.3),
         "MOBILE": (0.25, 0.5, 0.15, 0.1), "HPC": (0.5, 0.3, 0.15, 0.05)}

# Three functions whose per-metric min-max positions are simple fractions:
#   CU  100 / 300 / 200       -> 0, 1, 0.5
#   EU  4e-9 / 2e-9 / 3e-9     -> 1, 0, 0.5
#   CO2 1e-15 / 2e-15 / 3e-15  -> 0, 0.5, 1
#   USD 3e-16 / 1e-16 / 2e-16  -> 1, 0, 0.5
COHORT = [Metrics(100, 4e-9, 1e-15, 3e-16), Metrics(300, 2e-9, 2e-15, 1e-16), Metrics(200, 3e-9, 3e-15, 2e-16)]
# score = 100 * sum(w * (1 - norm)), computed by hand for each profile
BY_HAND = {"RESEARCH": [65.0, 47.5, 37.5], "COMMERCIAL": [50.0, 60.0, 40.0],
           "MOBILE": [40.0, 67.5, 42.5], "HPC": [65.0, 42.5, 42.5]}


def test_eq4_min_max_with_epsilon():
    assert EPSILON == 1e-9
    assert normalize([1.0, 3.0, 5.0]) == [0.0, 2.0 / (4.0 + 1e-9), 4.0 / (4.0 + 1e-9)]
    assert normalize([5.0, 1.0]) == [4.0 / (4.0 + 1e-9), 0.0]


def test_eq4_degenerate_cohort_divides_by_epsilon_not_zero():
    assert normalize([2.0, 2.0, 2.0]) == [0.0, 0.0, 0.0]
    assert normalize([7.0]) == [0.0]
    assert normalize([]) == []
    # a spread far below epsilon stays far below 1 instead of blowing up
    assert normalize([0.0, 1e-12]) == [0.0, pytest.approx(1e-12 / (1e-12 + 1e-9))]


@pytest.mark.parametrize("name", sorted(PAPER))
def test_eq5_each_paper_profile_on_a_three_function_cohort(name):
    profile = Profile(name, PAPER[name])
    assert composite_scores(COHORT, profile, MINMAX) == pytest.approx(BY_HAND[name], abs=1e-6)


def test_shipped_profiles_give_the_same_scores():
    profiles = load_tables().profiles
    for name, expected in BY_HAND.items():
        assert composite_scores(COHORT, profiles[name], MINMAX) == pytest.approx(expected, abs=1e-6)


def test_metric_units_do_not_change_cohort_scores():
    # kg vs g of CO2: min-max is unit-free; epsilon must not drown a 1e-15-scale spread
    grams = [Metrics(m.cu, m.energy_joules, m.co2_kg * 1000, m.usd) for m in COHORT]
    profile = Profile("P", PAPER["COMMERCIAL"])
    for normalization in NORMALIZATIONS:
        assert composite_scores(grams, profile, normalization) == pytest.approx(
            composite_scores(COHORT, profile, normalization))


def test_tiny_metric_differences_still_count():
    a, b = Metrics(10, 1e-9, 1e-16, 1e-17), Metrics(10, 1e-9, 2e-16, 1e-17)
    scores = composite_scores([a, b], Profile("P", PAPER["RESEARCH"]), MINMAX)
    assert scores[0] - scores[1] == pytest.approx(100 * 0.25, abs=1e-4)  # only CO2 differs


def test_log_minmax_is_eq4_on_the_logarithm_of_a_small_cohort():
    assert normalize_log([10.0, 1000.0]) == pytest.approx([0.0, 1.0])
    # logs 1, 2, 5: ends 1 + 0.1·1 = 1.1 and 2 + 0.9·3 = 4.7 (linear between ranks)
    assert normalize_log([10.0, 100.0, 100000.0]) == [0.0, pytest.approx((2 - 1.1) / (4.7 - 1.1)), 1.0]
    values = [10.0, 100.0, 1000.0, 10000.0]
    assert normalize_by(LOG_MINMAX, values) == normalize_log(values)
    assert normalize_by(MINMAX, values) == normalize(values)
    with pytest.raises(ValueError, match="unknown normalization"):
        normalize_by("zscore", values)


def test_log_minmax_ends_at_the_5th_and_95th_percentiles():
    # 21 logs 0..20: percentiles at 1 and 19; the ends beyond them are clipped
    values = [10.0 ** k for k in range(21)]
    assert log_ends(values) == pytest.approx((1.0, 19.0))
    norm = normalize_log(values)
    assert norm[0] == 0.0 and norm[1] == pytest.approx(0.0, abs=1e-9) and norm[-1] == 1.0
    assert norm[10] == pytest.approx(0.5)
    # a 1e40 outlier instead of 1e20 changes no one else's position
    assert normalize_log(values[:-1] + [1e40])[:-1] == pytest.approx(norm[:-1])


def test_log_minmax_zero_cost_counts_as_the_cheapest():
    assert normalize_log([0.0, 10.0, 1000.0]) == pytest.approx([0.0, 0.0, 1.0])
    assert normalize_log([]) == [] and normalize_log([5.0]) == [0.0]
    assert normalize_log([0.0, 0.0]) == [0.0, 0.0]


def test_one_costly_outlier_barely_moves_a_log_distributed_cohort():
    # 40 functions log-uniform over six decades; a 41st 100x the costliest
    cohort = [Metrics(10 ** (1 + 6 * i / 39), 1e-9 * 10 ** (6 * i / 39), 1e-16 * 10 ** (6 * i / 39),
                      1e-17 * 10 ** (6 * i / 39)) for i in range(40)]
    outlier = Metrics(cohort[-1].cu * 100, cohort[-1].energy_joules * 100, cohort[-1].co2_kg * 100,
                      cohort[-1].usd * 100)
    profile = Profile("D", (0.25, 0.25, 0.25, 0.25))
    before = composite_scores(cohort, profile)
    after = composite_scores(cohort + [outlier], profile)[:-1]
    assert max(abs(a - b) for a, b in zip(before, after)) < 5.0
    # eq. 4 on raw values squeezes everyone to the top: the log scale spreads them
    raw = composite_scores(cohort, profile, MINMAX)
    assert sum(s > 90 for s in raw) > 30 and sum(s > 90 for s in before) < 8


def test_degenerate_cohort_scores_everyone_100():
    same = Metrics(50, 1e-8, 1e-15, 1e-16)
    assert composite_scores([same, same], Profile("P", PAPER["HPC"])) == [100.0, 100.0]
    assert composite_scores([], Profile("P", PAPER["HPC"])) == []


def test_eq6_weights_must_form_a_simplex():
    assert validate_profile("ok", [0.25, 0.25, 0.25, 0.25]).weights == (0.25,) * 4
    with pytest.raises(TableError, match="sum to 1"):
        validate_profile("heavy", [0.5, 0.5, 0.5, 0.0])
    with pytest.raises(TableError, match="non-negative"):
        validate_profile("neg", [1.2, -0.2, 0.0, 0.0])


def test_profile_shift_reorders_compute_heavy_and_energy_heavy_functions():
    # On a cloud-priced region USD follows CU, so each function wins half the metrics:
    compute_heavy = Metrics(cu=9e6, energy_joules=1e-4, co2_kg=1e-11, usd=9e-6)
    energy_heavy = Metrics(cu=1e6, energy_joules=9e-4, co2_kg=9e-11, usd=1e-6)
    hpc = composite_scores([compute_heavy, energy_heavy], Profile("HPC", PAPER["HPC"]), MINMAX)
    mobile = composite_scores([compute_heavy, energy_heavy], Profile("MOBILE", PAPER["MOBILE"]), MINMAX)
    assert hpc[1] > hpc[0]  # HPC (w_CU 0.5) prefers the fast, power-hungry one
    assert mobile[0] > mobile[1]  # MOBILE (w_EU 0.5) prefers the frugal, slower one
    assert hpc == pytest.approx([45.0, 55.0], abs=1e-6)
    assert mobile == pytest.approx([65.0, 35.0], abs=1e-6)


REF = ReferenceRanges(low={"CU": 10, "EU": 1e-9, "CO2": 1e-16, "USD": 1e-17},
                      high={"CU": 1e10, "EU": 1.0, "CO2": 1e-7, "USD": 1e-8})


def test_absolute_position_is_log_scaled_and_clipped():
    assert absolute_position(1e4, 10, 1e10) == pytest.approx(1 / 3)
    assert absolute_position(1.0, 10, 1e10) == 0.0
    assert absolute_position(0.0, 10, 1e10) == 0.0
    assert absolute_position(1e12, 10, 1e10) == 1.0


def test_absolute_score_of_a_lone_function_by_hand():
    third = Metrics(cu=1e4, energy_joules=1e-6, co2_kg=1e-13, usd=1e-14)  # every metric at 1/3
    for weights in PAPER.values():
        assert absolute_score(third, Profile("P", weights), REF) == pytest.approx(100 * 2 / 3)
    clipped = Metrics(cu=1, energy_joules=10, co2_kg=1e-7, usd=1e-17)  # positions 0, 1, 1, 0
    assert absolute_score(clipped, Profile("R", PAPER["RESEARCH"]), REF) == pytest.approx(45.0)


def test_absolute_mode_is_stable_where_a_cohort_of_one_is_not():
    lone = Metrics(cu=1e4, energy_joules=1e-6, co2_kg=1e-13, usd=1e-14)
    bigger = Metrics(cu=1e8, energy_joules=1e-2, co2_kg=1e-9, usd=1e-10)
    profile = Profile("D", (0.25, 0.25, 0.25, 0.25))
    assert composite_scores([lone], profile) == [100.0]  # min-max of one function is meaningless
    assert absolute_score(lone, profile, REF) == pytest.approx(66.6666667)
    assert absolute_score(bigger, profile, REF) < absolute_score(lone, profile, REF)


def test_grade_boundaries():
    scale = GradeScale(bands=((90.0, "A", "Excellent"), (70.0, "B", "Good"), (0.0, "F", "Poor")))
    assert grade_for(100.0, scale) == ("A", "Excellent")
    assert grade_for(90.0, scale) == ("A", "Excellent")
    assert grade_for(89.999, scale) == ("B", "Good")
    assert grade_for(70.0, scale) == ("B", "Good")
    assert grade_for(69.999, scale) == ("F", "Poor")
    assert grade_for(-5.0, scale) == ("F", "Poor")
    with pytest.raises(ValueError, match="NaN"):
        grade_for(float("nan"), scale)


def test_shipped_grade_scale_boundaries():
    grades = load_tables().grades
    assert grade_for(100, grades) == ("A+", "Excellent")
    for minimum, grade, rating in grades.bands:
        assert grade_for(minimum, grades) == (grade, rating)
        if minimum > 0:
            assert grade_for(minimum - 1e-6, grades)[0] != grade


def test_profile_flips_find_the_pairs_and_where_they_cross():
    # test above: HPC scores [45, 55], MOBILE [65, 35] for (compute-heavy, energy-heavy)
    [flip] = profile_flips([45.0, 55.0], [65.0, 35.0])
    assert (flip.better_first, flip.better_second) == (1, 0)
    assert flip.t == pytest.approx(10 / 40)  # d1 = -10, d2 = +30: crosses a quarter of the way
    hpc, mobile = Profile("HPC", PAPER["HPC"]), Profile("MOBILE", PAPER["MOBILE"])
    w = weights_at(hpc, mobile, flip.t)
    pair = [Metrics(cu=9e6, energy_joules=1e-4, co2_kg=1e-11, usd=9e-6),
            Metrics(cu=1e6, energy_joules=9e-4, co2_kg=9e-11, usd=1e-6)]
    crossed = composite_scores(pair, Profile("t", w), MINMAX)
    assert crossed[0] == pytest.approx(crossed[1], abs=1e-6) and sum(w) == pytest.approx(1.0)
    assert profile_flips([1.0, 2.0, 3.0], [1.5, 2.5, 3.5]) == []  # same order: no flip
    assert profile_flips([1.0, 1.0], [2.0, 1.0]) == []  # a tie is no order to flip


def _counted(name: str, counts: dict[str, float], arch: str = "x86_64"):
    from ccls.model import CountedFunction
    from ccls.polynomial import Polynomial
    return CountedFunction(
        name=name, display_name=name, file="/src/a.c", line=1, end_line=5, language="c", arch=arch,
        parameters=[], static_counts={}, counts={k: Polynomial.constant(v) for k, v in counts.items()},
        machine_instructions=None, loops=[], line_counts={}, calls={}, sites=[], assumptions=[])


def test_the_hover_says_which_mode_graded_the_function():
    from ccls.engine import ReportSettings, report
    from ccls.options import AnalysisOptions
    from ccls.render import analysis_json, hover_markdown
    tables, options = load_tables(), AnalysisOptions()
    fns = [_counted("small", {"int_add": 10}), _counted("big", {"int_div": 10_000})]
    cohort = ReportSettings(scoring="cohort")
    small, big = report(fns, tables, cohort, options)
    assert small.graded_by == "cohort of 2 functions, min–max of log10, ends at the cohort's 5th/95th percentiles"
    assert "Graded by cohort of 2 functions" in hover_markdown(small, cohort)
    assert small.score == pytest.approx(100.0) and big.score == pytest.approx(0.0)
    linear = ReportSettings(scoring="cohort", normalization="minmax")
    assert report(fns, tables, linear, options)[0].graded_by.endswith("(paper eq. 4)")
    [lone] = report(fns[:1], tables, cohort, options)
    assert lone.graded_by == "absolute: fixed reference ranges (default) (a cohort of one cannot be min–max scaled)"
    [alone] = report(fns[:1], tables, ReportSettings(), options)
    assert "Graded by absolute: fixed reference ranges (default)." in hover_markdown(alone)
    document = json.loads(analysis_json([small, big], [], cohort, "x86_64", tables.version))
    assert document["normalization"] == "log-minmax" and document["functions"][1]["graded_by"] == big.graded_by
    with pytest.raises(KeyError, match="unknown normalization"):
        report(fns, tables, ReportSettings(normalization="zscore"), options)


def test_the_hover_does_not_rank_functions_whose_cu_bands_overlap():
    from ccls.engine import ReportSettings, report, rescore
    from ccls.options import AnalysisOptions
    from ccls.render import analysis_json, analysis_table, hover_markdown
    tables, settings = load_tables(), ReportSettings(scoring="cohort")
    fns = [_counted("a", {"int_add": 1000}), _counted("b", {"int_add": 1100}), _counted("c", {"int_div": 100_000})]
    a, b, c = report(fns, tables, settings, AnalysisOptions())
    assert a.within_uncertainty_of == ["b"] and b.within_uncertainty_of == ["a"] and c.within_uncertainty_of == []
    text = hover_markdown(a, settings)
    assert "Within uncertainty of b:" in text and "Within uncertainty" not in hover_markdown(c, settings)
    # each metric's parts and band are in the hover
    for words in ("dynamic", "static", "operational", "embodied", "instance", "| ± |"):
        assert words in text
    assert [r.within_uncertainty_of for r in rescore([a, c], tables, settings)] == [[], []]
    document = json.loads(analysis_json([a, b, c], [], settings, "x86_64", tables.version))
    assert document["functions"][0]["metrics_band"]["CU"] == [a.metrics_band.low.cu, a.metrics_band.high.cu]
    assert set(document["functions"][0]["metric_parts"]["EU"]) == {"dynamic_compute", "dynamic_memory", "static"}
    assert "±EU" in analysis_table([a], [], settings, "x86_64")


def test_fig9_flips_are_in_the_json():
    from ccls.engine import ReportSettings, report
    from ccls.options import AnalysisOptions
    from ccls.render import profile_flips_json
    tables, settings = load_tables(), ReportSettings(scoring="cohort", profile="HPC")
    # x86_64.json: an FMA is 1 cycle and 90 pJ, an integer add 0.25 cycles and 70 pJ (with 1 W of
    # constant power per core on top). 923 FMAs take longer (923 CU against 750) but spend less
    # energy than 3000 adds (343 nJ against 422 nJ): HPC prefers the adds, MOBILE the FMAs.
    # Integer-add functions from 10 to 10^7 around them are proportional to each other: no flips.
    fillers = [_counted(f"adds_{k}", {"int_add": 10 ** k}) for k in range(1, 8)]
    fns = [_counted("fmas", {"fp_fma": 923}), _counted("adds", {"int_add": 3000}), *fillers]
    reports = report(fns, tables, settings, AnalysisOptions())
    fmas, adds = reports[:2]
    assert fmas.metrics.cu > adds.metrics.cu and fmas.metrics.energy_joules < adds.metrics.energy_joules
    flips = {f["to"]: f for f in profile_flips_json(reports, "HPC", tables.profiles)}
    assert set(flips) == set(tables.profiles) - {"HPC"} and flips["MOBILE"]["pairs"] == 9 * 8 // 2
    [example] = flips["MOBILE"]["examples"]
    assert (example["preferred_by_from"], example["preferred_by_to"]) == ("adds", "fmas")
    assert 0 < example["t"] < 1 and sum(example["weights"]) == pytest.approx(1.0)
    without_weights = {f["to"]: f for f in profile_flips_json(reports, "HPC")}  # no tables: t only
    assert without_weights["MOBILE"]["examples"][0].keys() == {"preferred_by_from", "preferred_by_to", "t"}


def test_fig9_flips_are_not_computed_for_a_huge_cohort(monkeypatch):
    from ccls import render
    from ccls.engine import ReportSettings, report
    from ccls.options import AnalysisOptions
    reports = report([_counted(f"f{k}", {"int_add": 10 ** k}) for k in range(1, 5)], load_tables(),
                     ReportSettings(scoring="cohort"), AnalysisOptions())
    monkeypatch.setattr(render, "FLIP_COHORT_LIMIT", 3)
    [first, *_] = render.profile_flips_json(reports, "DEFAULT")
    assert first["flips"] is None and first["pairs"] == 6 and "not computed" in first["note"]
