"""Kernel launches and the per-thread unit of GPU costs.

PTX describes one thread: the reader's counts are one thread's executed instructions, and the
nvptx cost tables price each instruction per thread (a warp instruction's cost shared by its 32
lanes). A whole launch costs the per-thread figures times its thread count, which only a
`kernel<<<grid, block>>>(…)` in the same source can tell (`ccls.frontends.cuda` finds them).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

_DIMS = "xyz"


@dataclass(frozen=True)
class Launch:
    """`kernel<<<grid, block>>>` at a source line. Sizes per dimension (x, y, z) are integers
    when written as integer constants, None when symbolic (`(n + 255) / 256`, a variable)."""

    line: int
    grid_text: str
    block_text: str
    grid: tuple[int | None, int | None, int | None]
    block: tuple[int | None, int | None, int | None]

    @property
    def config(self) -> str:
        return f"<<<{self.grid_text}, {self.block_text}>>>"

    @property
    def threads(self) -> int | None:
        sizes = self.grid + self.block
        return math.prod(sizes) if all(s is not None for s in sizes) else None  # type: ignore[arg-type]

    def special_values(self) -> dict[str, int]:
        """Literal values of the PTX size registers: `%ntid.x` (blockDim.x), `%nctaid.x` (gridDim.x)…"""
        values = {f"%nctaid.{d}": s for d, s in zip(_DIMS, self.grid) if s is not None}
        values.update({f"%ntid.{d}": s for d, s in zip(_DIMS, self.block) if s is not None})
        return values


def same_configuration(launches: Sequence[Launch]) -> Launch | None:
    """The launch whose sizes every launch shares, or None when there are none or they differ."""
    if not launches or any((l.grid_text, l.block_text) != (launches[0].grid_text, launches[0].block_text)
                           for l in launches):
        return None
    return launches[0]


def per_thread_note(is_kernel: bool, launches: Sequence[Launch]) -> str:
    """The assumption that states the unit, and what is known of the launch."""
    unit = ("costs are per thread: counts are one thread's executed instructions and each warp "
            "instruction's cost is shared by its 32 lanes (cost / 32)")
    if not is_kernel:
        return unit.replace("per thread", "per calling thread", 1)
    if not launches:
        return f"{unit}; launch configuration unknown"
    launch = same_configuration(launches)
    if launch is None:
        seen = ", ".join(f"{l.config} at line {l.line}" for l in launches)
        return f"{unit}; launched with different configurations ({seen}), so the launch size is unknown"
    where = f"launched as {launch.config} at line {launch.line}" + (
        f" and {len(launches) - 1} more line(s)" if len(launches) > 1 else "")
    if launch.threads is not None:
        return (f"{unit}; {where}: {launch.threads} threads, so one launch costs {launch.threads} × "
                f"these figures")
    return (f"{unit}; {where}: one launch costs (gridDim·blockDim threads = ({launch.grid_text})·"
            f"({launch.block_text})) × these figures")
