"""How many iterations to take for a loop that may leave early on data (a search, a `break`).

The readers know such a loop's bound (ScalarEvolution's maximum, a `range(n)`, a counted PTX
exit) but not where the data makes it leave. `expected` takes the mean of an exit equally likely
at each of the bound's iterations, (bound + 1) / 2: a successful sequential search (Knuth, TAOCP
vol. 3, §6.1, Algorithm S). `worst` takes the bound itself. Either way the choice is stated.
"""
from __future__ import annotations

from fractions import Fraction
from typing import Callable

from ccls.model import TripCount
from ccls.polynomial import Polynomial

EARLY_EXIT_POLICIES = ("expected", "worst")


def early_exit_trip(bound: Polynomial, policy: str, source_text: str = "",
                    speak: Callable[[Polynomial], str] = Polynomial.format) -> tuple[TripCount, str]:
    """The trip count for a loop whose header runs at most `bound` times, and what was assumed
    (its polynomials written by `speak`)."""
    if policy == "worst":
        return TripCount("bounded", bound, source_text), f"using its upper bound {speak(bound)} (the worst case)"
    if policy != "expected":
        raise ValueError(f"early-exit policy {policy!r} is not one of {', '.join(EARLY_EXIT_POLICIES)}")
    mean = (bound + 1) * Fraction(1, 2)
    return (TripCount("expected", mean, source_text),
            f"taking the mean {speak(mean)} of an exit equally likely at each iteration "
            f"(a successful search; worst case {speak(bound)})")


def first_difference_trip(bits: int, what: str, source_text: str = "") -> tuple[TripCount, str]:
    """The trip count for a loop that runs while the elements it compares are equal: the mean
    run of equal pairs of uniformly distributed `bits`-bit elements, 1 / (1 − 2^-bits)."""
    mean = 1 / (1 - Fraction(1, 1 << min(bits, 64)))
    return (TripCount("expected", Polynomial.constant(mean), source_text),
            f"it {what} and leaves at the first difference: taken as the mean run of equal values in "
            f"unrelated {bits}-bit data, {float(mean):.3g} (equal sequences run to their end)")
