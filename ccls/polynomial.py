"""Polynomials with rational coefficients over named symbols: cost expressions and trip counts.

A symbol is a function parameter (``n``) or a loop's iteration index (``@for.body``, the
0-based count of iterations of the enclosing loop, used while summing a triangular nest).
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from math import comb
from operator import itemgetter
from typing import Iterable, Mapping

LOG2_PREFIX = "log2("  # a symbol "log2(n)" stands for log₂ of parameter n (halving loops)
# A symbol "chunks(len)", "steps(state->mode)", "calls(f)" names a loop's count that only the data
# decides (`readers.llvm.named_rounds`): unset, it takes the default trip count, as an unknown count.
ROUND_PREFIXES = ("chunks(", "steps(", "calls(")


def is_named_round(symbol: str) -> bool:
    """Whether a symbol names such a count."""
    return symbol.startswith(ROUND_PREFIXES) and symbol.endswith(")")
Monomial = tuple[tuple[str, int], ...]  # sorted (symbol, power) pairs; () is the constant term

_SUPERSCRIPTS = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


_ZERO, _ONE = Fraction(0), Fraction(1)
_FIRST = itemgetter(0)

# Exact rational coefficients, but most are whole numbers: those take a short path through
# Fraction's arithmetic (its general one, with its type checks and gcds, dominated counting).


def _add(a: Fraction | None, b: Fraction) -> Fraction:
    """a + b, where a None is 0 (what a sum starts from)."""
    if a is None:
        return b if type(b) is Fraction else _ZERO + b
    if type(a) is Fraction and type(b) is Fraction and a.denominator == 1 and b.denominator == 1:
        return Fraction(a.numerator + b.numerator)
    return a + b


def _mul(a: Fraction, b: Fraction) -> Fraction:
    if type(a) is Fraction and type(b) is Fraction and a.denominator == 1 and b.denominator == 1:
        return Fraction(a.numerator * b.numerator)
    return a * b


def _mono_mul(a: Monomial, b: Monomial) -> Monomial:
    if not a:
        return b
    if not b:
        return a
    powers = dict(a)
    for symbol, power in b:
        powers[symbol] = powers.get(symbol, 0) + power
    return tuple(sorted(powers.items()))


@dataclass(frozen=True)
class Polynomial:
    terms: tuple[tuple[Monomial, Fraction], ...] = ()

    # -- construction -------------------------------------------------------------------
    @staticmethod
    def _from_dict(terms: Mapping[Monomial, Fraction]) -> "Polynomial":
        # Monomials are unique, so ordering by them alone is the order of the (m, c) pairs.
        return Polynomial(tuple(sorted(((m, c) for m, c in terms.items() if c), key=_FIRST)))

    @staticmethod
    def constant(value: int | float | Fraction) -> "Polynomial":
        if type(value) is not Fraction:
            value = Fraction(value)
        return Polynomial(((((), value),) if value else ()))

    @staticmethod
    def symbol(name: str) -> "Polynomial":
        return Polynomial(((((name, 1),), _ONE),))

    # -- arithmetic -----------------------------------------------------------------------
    def _as_dict(self) -> dict[Monomial, Fraction]:
        return dict(self.terms)

    def __add__(self, other: "Polynomial | int | float | Fraction") -> "Polynomial":
        other = _lift(other)
        out = self._as_dict()
        for m, c in other.terms:
            out[m] = _add(out.get(m), c)
        return Polynomial._from_dict(out)

    __radd__ = __add__

    def __neg__(self) -> "Polynomial":
        return Polynomial(tuple((m, -c) for m, c in self.terms))

    def __sub__(self, other: "Polynomial | int | float | Fraction") -> "Polynomial":
        return self + (-_lift(other))

    def __rsub__(self, other: "Polynomial | int | float | Fraction") -> "Polynomial":
        return _lift(other) - self

    def __mul__(self, other: "Polynomial | int | float | Fraction") -> "Polynomial":
        if not isinstance(other, Polynomial):  # a number: no constant polynomial built for it
            return self._scaled(other if type(other) is Fraction else Fraction(other))
        # A constant factor only scales the coefficients (most products: a count times a trip
        # count, a step times 1/k): no monomial to multiply, no dict to fill.
        if len(other.terms) == 1 and not other.terms[0][0]:
            return self._scaled(other.terms[0][1])
        if len(self.terms) == 1 and not self.terms[0][0]:
            return other._scaled(self.terms[0][1])
        out: dict[Monomial, Fraction] = {}
        for ma, ca in self.terms:
            for mb, cb in other.terms:
                m = _mono_mul(ma, mb)
                out[m] = _add(out.get(m), _mul(ca, cb))
        return Polynomial._from_dict(out)

    __rmul__ = __mul__

    def _scaled(self, factor: Fraction) -> "Polynomial":
        """self × a constant: the same terms as the general product gives, in the same order."""
        scaled = ((m, _add(None, _mul(c, factor))) for m, c in self.terms)
        return Polynomial(tuple(sorted(((m, c) for m, c in scaled if c), key=_FIRST)))

    def __pow__(self, exponent: int) -> "Polynomial":
        result = Polynomial.constant(1)
        for _ in range(exponent):
            result = result * self
        return result

    # -- queries --------------------------------------------------------------------------
    @property
    def is_zero(self) -> bool:
        return not self.terms

    @property
    def symbols(self) -> frozenset[str]:
        return frozenset(s for m, _ in self.terms for s, _ in m)

    def constant_value(self) -> Fraction | None:
        """The value if the polynomial has no symbols, else None."""
        if self.symbols:
            return None
        return self.terms[0][1] if self.terms else Fraction(0)

    def degree(self, symbol: str | None = None) -> int:
        if symbol is None:
            return max((sum(p for _, p in m) for m, _ in self.terms), default=0)
        return max((dict(m).get(symbol, 0) for m, _ in self.terms), default=0)

    def evaluate(self, values: Mapping[str, float]) -> float:
        """Numeric value; every symbol must be in ``values``."""
        total = 0.0
        for m, c in self.terms:
            term = float(c)
            for symbol, power in m:
                term *= float(values[symbol]) ** power
            total += term
        return total

    def substitute(self, symbol: str, value: "Polynomial") -> "Polynomial":
        # Summed in one dict rather than term by term: exact arithmetic, the same sum.
        out: dict[Monomial, Fraction] = {}
        for m, c in self.terms:
            power = dict(m).get(symbol, 0)
            if power == 0:
                parts: tuple = ((m, c),)
            else:
                rest = Polynomial((((tuple((s, p) for s, p in m if s != symbol)), c),))
                parts = (rest * (value ** power)).terms
            for mono, coefficient in parts:
                out[mono] = _add(out.get(mono), coefficient)
        return Polynomial._from_dict(out)

    def sum_over(self, index: str, count: "Polynomial") -> "Polynomial":
        """Σ_{index=0}^{count-1} self — how a block inside a triangular nest is counted."""
        out = Polynomial()
        for m, c in self.terms:
            power = dict(m).get(index, 0)
            rest = Polynomial((((tuple((s, p) for s, p in m if s != index)), c),))
            out = out + rest * _power_sum(power).substitute("N", count)
        return out

    # -- rendering ------------------------------------------------------------------------
    def big_o(self) -> str:
        """Leading monomials (those of highest total degree), e.g. ``O(n·m)``, ``O(1)``."""
        def growth(m: Monomial) -> tuple[int, int]:  # log₂ factors grow slower than any power
            logs = sum(p for s, p in m if s.startswith(LOG2_PREFIX))
            return sum(p for _, p in m) - logs, logs

        top = max((growth(m) for m, _ in self.terms), default=(0, 0))
        if top == (0, 0):
            return "O(1)"
        leads = sorted({_mono_text(m) for m, c in self.terms if growth(m) == top})
        return "O(" + " + ".join(leads) + ")"

    def format(self, digits: int = 3) -> str:
        """Human form, highest degree first: ``6·n² + 14·n + 9``."""
        if not self.terms:
            return "0"
        ordered = sorted(self.terms, key=lambda t: (-sum(p for _, p in t[0]), t[0]))
        parts: list[str] = []
        for m, c in ordered:
            magnitude = abs(c)
            coef = _number_text(magnitude, digits)
            text = coef if not m else (_mono_text(m) if magnitude == 1 else f"{coef}·{_mono_text(m)}")
            sign = "-" if c < 0 else "+"
            parts.append(f"{sign} {text}" if parts else ("-" + text if c < 0 else text))
        return " ".join(parts)

    def __str__(self) -> str:
        return self.format()


def sum_of(polynomials: Iterable[Polynomial]) -> Polynomial:
    """Σ `polynomials`, added in one dict: exact, so the same sum as adding them one by one, which
    copies and sorts the growing sum at each step (a function's counts add one per instruction)."""
    out: dict[Monomial, Fraction] = {}
    for polynomial in polynomials:
        for m, c in polynomial.terms:
            out[m] = _add(out.get(m), c)
    return Polynomial._from_dict(out)


def _lift(value: "Polynomial | int | float | Fraction") -> Polynomial:
    return value if isinstance(value, Polynomial) else Polynomial.constant(value)


def _mono_text(m: Monomial) -> str:
    return "·".join(s.lstrip("%@") + (str(p).translate(_SUPERSCRIPTS) if p > 1 else "") for s, p in m)


def _number_text(value: Fraction, digits: int) -> str:
    if value.denominator == 1:
        return f"{value.numerator:,}".replace(",", "") if value < 10**6 else f"{float(value):.{digits}g}"
    return f"{float(value):.{digits}g}"


_POWER_SUMS: dict[int, Polynomial] = {}


def _power_sum(power: int) -> Polynomial:
    """S_p(N) = Σ_{k=0}^{N-1} k^p as a polynomial in N (Faulhaber, via the recurrence
    (N)^{p+1} = Σ_{j<=p} C(p+1, j) S_j(N))."""
    if power not in _POWER_SUMS:
        n = Polynomial.symbol("N")
        acc = n ** (power + 1)
        for j in range(power):
            acc = acc - comb(power + 1, j) * _power_sum(j)
        _POWER_SUMS[power] = acc * Fraction(1, power + 1)
    return _POWER_SUMS[power]
