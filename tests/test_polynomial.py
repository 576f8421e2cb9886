import pytest
from fractions import Fraction

from ccls.polynomial import Polynomial

n, m = Polynomial.symbol("n"), Polynomial.symbol("m")


def test_format_orders_by_degree_and_shows_constant_factors():
    assert (6 * n * n + 14 * n + 9).format() == "6·n² + 14·n + 9"
    assert (n * m - 3).format() == "m·n - 3"  # symbols in alphabetical order


def test_triangular_sum_gives_half_n_squared():
    inner = Polynomial.symbol("@outer")  # inner loop runs `outer index` times
    total = inner.sum_over("@outer", n)
    assert total == Fraction(1, 2) * n * n - Fraction(1, 2) * n
    assert total.big_o() == "O(n²)"


def test_power_sums_match_brute_force():
    k = Polynomial.symbol("k")
    for power in range(5):
        closed = (k ** power).sum_over("k", n)
        for value in (0, 1, 5, 17):
            assert closed.evaluate({"n": value}) == pytest.approx(sum(i ** power for i in range(value)), abs=1e-9)


def test_substitute_and_evaluate():
    p = (n + 1) * (n - 1)
    assert p.substitute("n", m * 2).evaluate({"m": 3}) == 35
    assert Polynomial.constant(7).constant_value() == 7
    assert (n - n).is_zero and (n - n).big_o() == "O(1)"


def test_big_o_ranks_log_factors_below_powers():
    n, log_n = Polynomial.symbol("n"), Polynomial.symbol("log2(n)")
    assert (n * log_n + n * n).big_o() == "O(n²)"
    assert (n + 3 * log_n).big_o() == "O(n)"
    assert (n * log_n + n).big_o() == "O(log2(n)·n)"


def test_a_constant_factor_gives_the_general_products_terms():
    """The short path for constant factors (`Polynomial._scaled`) against the product term by term."""
    n, m = Polynomial.symbol("n"), Polynomial.symbol("m")
    for p in (n * n * Fraction(3, 7) + m * n - 5, Polynomial.constant(Fraction(9, 4)), Polynomial(), n - n + 2):
        for factor in (Fraction(1, 3), Fraction(-2), Fraction(0), 4, 0.5):
            c = Fraction(factor)
            expected = tuple((mono, coefficient * c) for mono, coefficient in p.terms if coefficient * c)
            for product in (p * factor, Polynomial.constant(factor) * p, factor * p):
                assert product.terms == expected
                assert all(type(coefficient) is Fraction for _, coefficient in product.terms)


def test_product_with_a_number_is_the_product_with_its_constant_polynomial():
    n, m = Polynomial.symbol("n"), Polynomial.symbol("m")
    p = n * m * 3 + n * Fraction(1, 2) - 7
    for number in (2, 0.5, Fraction(-3, 4), 0, 1):
        assert (p * number).terms == (p * Polynomial.constant(number)).terms
        assert (number * p).terms == (p * number).terms
    assert (p * 0).is_zero
    assert (p * 0.5).format() == "1.5·m·n + 0.25·n - 3.5"
