"""The CPU targets ccls can cost: each names the clang target triple code is compiled for and
the core llvm-mca simulates; cost_tables/<arch>.json describes the same core."""
from __future__ import annotations

# arch -> (target triple, llvm-mca -mcpu)
CPU_TARGETS: dict[str, tuple[str, str]] = {
    "x86_64": ("x86_64-unknown-linux-gnu", "znver4"),
    "aarch64": ("aarch64-unknown-linux-gnu", "neoverse-v2"),
    # machines the accuracy benchmark has measured on (cost_tables/derive/measure_host.py)
    "x86_64-zen3": ("x86_64-unknown-linux-gnu", "znver3"),
    "x86_64-zen4": ("x86_64-unknown-linux-gnu", "znver4"),
}
CPU_ARCHES = tuple(CPU_TARGETS)
