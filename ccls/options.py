"""Analysis options: typed, with safe defaults. Views build these from flags or settings."""
from __future__ import annotations

import math
from dataclasses import dataclass, field, fields, replace

from ccls.polynomial import LOG2_PREFIX

DEFAULT_QUERY_DRIVER = ("/usr/bin/clang*", "/usr/bin/gcc*", "/usr/bin/g++*", "/usr/bin/cc", "/usr/bin/c++",
                        "/usr/local/cuda*/bin/nvcc", "/usr/local/bin/nvcc", "/usr/bin/nvcc")

_SPEED_ONLY = {"speed_only": True}  # fields that change how fast an analysis runs, never its counts


@dataclass(frozen=True)
class AnalysisOptions:
    arch: str = "x86_64"  # CPU cost table for C/C++/IR; GPU code uses `gpu_arch`
    gpu_arch: str = "nvptx-sm80"
    optimization: str = "-O2"
    extra_flags: tuple[str, ...] = ()  # appended after flags from the compile database
    flags_override: tuple[str, ...] | None = None  # replaces the compile database entirely
    query_driver: tuple[str, ...] = DEFAULT_QUERY_DRIVER  # compilers a compile database may name
    default_trip_count: int = 100  # used, and reported, when a trip count is unknown
    parameter_values: tuple[tuple[str, float], ...] = ()  # numeric values for symbolic parameters
    default_parameter_value: float = 1000.0  # for parameters not given above (reported)
    # One function's sizes from its call sites (`ccls.sizes`): used where `parameter_values`
    # gives none. The engine sets it per function; views never do.
    inferred_values: tuple[tuple[str, float], ...] = ()
    # A loop that may leave early on data: "expected" (mean of a uniformly placed exit) or
    # "worst" (its bound); see ccls.early_exit.
    early_exit: str = "expected"
    # Limits: a compile that hits them fails with a message; one that succeeds counts the same.
    compile_timeout_s: float = field(default=30.0, metadata=_SPEED_ONLY)
    compile_memory_mb: int = field(default=4096, metadata=_SPEED_ONLY)
    machine_code: bool = True  # lower CPU IR to machine code to estimate retired instructions
    # Where C/C++ front ends may keep precompiled preambles (the language server's cache
    # directory); None: compile every buffer whole. Changes how fast, never what is counted.
    preamble_dir: str | None = field(default=None, metadata=_SPEED_ONLY)
    # Keep a started clang, opt and llvm-mca waiting for the next compile (toolchain.SPARES):
    # the language server's open documents. Changes how fast, never what is counted.
    warm_tools: bool = field(default=False, metadata=_SPEED_ONLY)

    def counting_fields(self) -> dict:
        """The options counts depend on (a count cache key includes these, and only these)."""
        return {f.name: getattr(self, f.name) for f in fields(self) if not f.metadata.get("speed_only")}

    def parameter_value(self, name: str) -> float:
        if name.startswith(LOG2_PREFIX) and name.endswith(")"):  # a halving loop's trip count
            return math.log2(max(2.0, self.parameter_value(name[len(LOG2_PREFIX):-1])))
        for given in (self.parameter_values, self.inferred_values):
            value = dict(given).get(name)
            if value is not None:
                return value
        return self.default_parameter_value

    def given(self, name: str) -> bool:
        """Whether the user set this parameter's value (`--param`, `ccls.parameterValues`)."""
        return name in dict(self.parameter_values)

    def for_function(self, inferred: dict[str, float]) -> "AnalysisOptions":
        """These options with one function's sizes from its call sites."""
        return replace(self, inferred_values=tuple(sorted(inferred.items()))) if inferred or self.inferred_values else self
