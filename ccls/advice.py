"""What to do about a finding: the words a person reads next to it (hover, diagnostics, reports).

The counting stage records a finding's kind and its cause (the divisor's kind, the access
pattern); the words live here, beside rendering. Pure.
"""
from __future__ import annotations

_DIVISION = {
    "loop-invariant": ("the divisor does not change inside the loop: compute its reciprocal once before "
                       "the loop and multiply (for integers, a precomputed multiply-shift, libdivide-style)"),
    "constant": "divide by a constant the compiler can strength-reduce, or multiply by its reciprocal",
    "power-of-two": "use a shift or mask for power-of-two divisors",
    "variant": ("the divisor changes every iteration: if it is a power of two use a shift/mask; otherwise "
                "restructure (e.g. keep a running quotient, or batch divisions) to avoid one per iteration"),
}

_MISS = {
    "strided": ("the innermost loop walks memory with a large stride (column-major order): interchange "
                "the loops so the innermost index is contiguous, or tile/block the nest; rows a power of "
                "two long (1024 floats) put a column in a few cache sets: padding them (1040) spreads it"),
    "indirect": ("accesses go through an index array (a[idx[i]]): sort or bucket the indices, or gather "
                 "the data into a contiguous buffer first"),
    "pointer-chase": ("each load depends on the previous one (linked structure): store nodes contiguously "
                      "(an array of nodes, structure-of-arrays) or prefetch ahead"),
}


def recommendation(kind: str, cause: str) -> str:
    """The advice for a finding of `kind` ("division-in-loop", "miss-heavy-loop") with `cause`."""
    if kind == "division-in-loop":
        return _DIVISION.get(cause, _DIVISION["variant"])
    return _MISS.get(cause, "")
