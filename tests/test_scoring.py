"""Paper eqs. 4-8: normalisation, composite score under each profile, weights, grades."""
from __future__ import annotations

import pytest

from ccls.model import Metrics
from ccls.scoring import EPSILON, absolute_position, absolute_score, composite_scores, grade_for, normalize
from ccls.tables import GradeScale, Profile, ReferenceRanges, TableError, load_tables, validate_profile

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
    assert composite_scores(COHORT, profile) == pytest.approx(BY_HAND[name], abs=1e-6)


def test_shipped_profiles_give_the_same_scores():
    profiles = load_tables().profiles
    for name, expected in BY_HAND.items():
        assert composite_scores(COHORT, profiles[name]) == pytest.approx(expected, abs=1e-6)


def test_metric_units_do_not_change_cohort_scores():
    # kg vs g of CO2: min-max is unit-free; epsilon must not drown a 1e-15-scale spread
    grams = [Metrics(m.cu, m.energy_joules, m.co2_kg * 1000, m.usd) for m in COHORT]
    profile = Profile("P", PAPER["COMMERCIAL"])
    assert composite_scores(grams, profile) == pytest.approx(composite_scores(COHORT, profile))


def test_tiny_metric_differences_still_count():
    a, b = Metrics(10, 1e-9, 1e-16, 1e-17), Metrics(10, 1e-9, 2e-16, 1e-17)
    scores = composite_scores([a, b], Profile("P", PAPER["RESEARCH"]))
    assert scores[0] - scores[1] == pytest.approx(100 * 0.25, abs=1e-4)  # only CO2 differs


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
    hpc = composite_scores([compute_heavy, energy_heavy], Profile("HPC", PAPER["HPC"]))
    mobile = composite_scores([compute_heavy, energy_heavy], Profile("MOBILE", PAPER["MOBILE"]))
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
