"""The CPU targets ccls can cost: each names the clang target triple code is compiled for and
the core llvm-mca simulates; cost_tables/<arch>.json describes the same core. `host` is this
machine, as LLVM detects it; its table is the one `ccls calibrate` measured (ccls/calibrate.py)."""
from __future__ import annotations

import functools
from typing import Iterator, Mapping

HOST_ARCH = "host"

# arch -> (target triple, llvm-mca -mcpu)
_FIXED_TARGETS: dict[str, tuple[str, str]] = {
    "x86_64": ("x86_64-unknown-linux-gnu", "znver4"),
    "aarch64": ("aarch64-unknown-linux-gnu", "neoverse-v2"),
    # machines the accuracy benchmark has measured on (cost_tables/derive/measure_host.py)
    "x86_64-zen3": ("x86_64-unknown-linux-gnu", "znver3"),
    "x86_64-zen4": ("x86_64-unknown-linux-gnu", "znver4"),
}


@functools.cache
def host_target() -> tuple[str, str]:
    """(this process's target triple, the host CPU's LLVM name, e.g. "znver4"), as LLVM detects them."""
    import llvmlite.binding as llvm

    return llvm.get_process_triple(), llvm.get_host_cpu_name()


class _Targets(Mapping[str, tuple[str, str]]):
    """The fixed targets, and `host` resolved on first use (detecting the CPU loads LLVM)."""

    def __getitem__(self, arch: str) -> tuple[str, str]:
        if arch == HOST_ARCH:
            return host_target()
        return _FIXED_TARGETS[arch]

    def __iter__(self) -> Iterator[str]:
        yield from _FIXED_TARGETS
        yield HOST_ARCH

    def __len__(self) -> int:
        return len(_FIXED_TARGETS) + 1


CPU_TARGETS: Mapping[str, tuple[str, str]] = _Targets()
CPU_ARCHES = tuple(CPU_TARGETS)

# GPU cost table -> the CUDA compute capability device code is compiled for (nvcc, clang).
GPU_TARGETS: Mapping[str, str] = {"nvptx-sm80": "sm_80", "nvptx-sm90": "sm_90"}
GPU_ARCHES = tuple(GPU_TARGETS)
