"""Analysis options: typed, with safe defaults, and the one definition both views read them by.

`AnalysisOptions` holds them; `OPTION_SPECS` says, for each one a user sets, its editor setting
(the same key in `ccls-cost.toml`), its `ccls analyze` flag, its type, range and help. The CLI
(`ccls.cli`), the language server's settings (`ccls.lsp.settings`) and the VS Code manifest are
built from or checked against this table; the default is the dataclass field's.
"""
from __future__ import annotations

import math
import shlex
from dataclasses import dataclass, field, fields, replace
from typing import Any, Mapping

from ccls.early_exit import EARLY_EXIT_POLICIES
from ccls.polynomial import LOG2_PREFIX, is_named_round
from ccls.targets import CPU_ARCHES, GPU_ARCHES

DEFAULT_QUERY_DRIVER = ("/usr/bin/clang*", "/usr/bin/gcc*", "/usr/bin/g++*", "/usr/bin/cc", "/usr/bin/c++",
                        "/usr/local/cuda*/bin/nvcc", "/usr/local/bin/nvcc", "/usr/bin/nvcc")

INSTANCE_ATTRIBUTE = "self."  # in a size's name: a Python instance attribute (readers/python_bytecode)
OPTIMIZATION_LEVELS = ("-O1", "-O2", "-O3", "-Os", "-Oz")  # the levels ccls analyses at
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
        if INSTANCE_ATTRIBUTE in name:  # Python's self.count that no constructor call sets: the
            return float(self.default_trip_count)  # unknown count of the loop it bounds, as before
        if is_named_round(name):  # a count only the data decides, named: unset, still the default
            return float(self.default_trip_count)
        return self.default_parameter_value

    def given(self, name: str) -> bool:
        """Whether the user set this parameter's value (`--param`, `ccls.parameterValues`)."""
        return name in dict(self.parameter_values)

    def for_function(self, inferred: dict[str, float]) -> "AnalysisOptions":
        """These options with one function's sizes from its call sites."""
        return replace(self, inferred_values=tuple(sorted(inferred.items()))) if inferred or self.inferred_values else self


# --- one definition per option ---------------------------------------------------------------

@dataclass(frozen=True)
class OptionSpec:
    """How users set one `AnalysisOptions` field. `kind` says how a value is read:
    choice, int, float, bool, flags (a command line), globs, parameters (name -> number)."""

    field: str  # the AnalysisOptions field
    setting: str  # key below `ccls` in editor settings, and in ccls-cost.toml
    flag: str  # `ccls analyze` flag
    kind: str
    help: str
    choices: tuple[str, ...] = ()
    low: float | None = None  # inclusive range of int and float options
    high: float | None = None
    cli_default: Any = None  # where a batch run's default differs from the editor's (said in `help`)

    @property
    def default(self) -> Any:
        """The editor's default: the dataclass field's."""
        return _FIELDS[self.field].default

    @property
    def batch_default(self) -> Any:
        return self.default if self.cli_default is None else self.cli_default

    def from_setting(self, value: Any) -> Any:
        """A settings or TOML value (JSON types) as the field's type; ValueError says why not."""
        if self.kind == "choice":
            if isinstance(value, str):
                found = self._choice(value)
                if found is not None:
                    return found
            raise ValueError(f"expected one of {', '.join(self.choices)}")
        if self.kind == "bool":
            if isinstance(value, bool):
                return value
            raise ValueError("expected true or false")
        if self.kind in ("int", "float"):
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ValueError(f"expected {self._range_words()}")
            return self._in_range(value)
        if self.kind in ("flags", "globs"):
            if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
                return tuple(value)
            raise ValueError("expected a list of strings")
        if self.kind == "parameters":
            if not isinstance(value, Mapping):
                raise ValueError("expected a table {parameter: number}")
            return tuple(sorted(_parameter(name, number) for name, number in value.items()))
        raise AssertionError(self.kind)

    def from_text(self, text: str) -> Any:
        """A command-line value as the field's type; ValueError says why not. Flags are split
        as a shell would, globs at commas, and a parameter is NAME=NUMBER."""
        if self.kind == "choice":
            found = self._choice(text)
            if found is None:
                raise ValueError(f"expected one of {', '.join(self.choices)}, got {text!r}")
            return found
        if self.kind in ("int", "float"):
            try:
                return self._in_range(float(text))
            except ValueError:
                raise ValueError(f"expected {self._range_words()}, got {text}") from None
        if self.kind == "flags":
            try:
                return tuple(shlex.split(text))
            except ValueError as problem:
                raise ValueError(f"cannot split {text!r} into flags ({problem})") from None
        if self.kind == "globs":
            return tuple(glob.strip() for glob in text.split(",") if glob.strip())
        if self.kind == "parameters":
            name, sep, number = text.partition("=")
            try:
                value = float(number) if sep else math.nan
            except ValueError:
                value = math.nan
            return _parameter(name.strip(), value, f"expected NAME=NUMBER, got {text!r}")
        raise AssertionError(self.kind)

    def _choice(self, text: str) -> str | None:
        spelled = text.strip().lower()
        if self.field == "optimization" and not spelled.startswith("-"):
            spelled = "-" + spelled if spelled.startswith("o") else "-o" + spelled  # O3 and 3 too
        return next((c for c in self.choices if c.lower() == spelled), None)

    def _in_range(self, number: float) -> int | float:
        whole = self.kind == "int"
        if (not math.isfinite(number) or (whole and number != int(number))
                or (self.low is not None and number < self.low) or (self.high is not None and number > self.high)):
            raise ValueError(f"expected {self._range_words()}")
        return int(number) if whole else float(number)

    def _range_words(self) -> str:
        """"a whole number from 1 to 1000000000", "a number from 0 to 1e+18"."""
        noun = "a whole number" if self.kind == "int" else "a number"
        shown = (lambda x: f"{int(x)}") if self.kind == "int" else (lambda x: f"{x:g}")
        return f"{noun} from {shown(self.low)} to {shown(self.high)}" if self.low is not None else noun


def _parameter(name: Any, number: Any, message: str = "") -> tuple[str, float]:
    if (not isinstance(name, str) or not name.strip() or isinstance(number, bool)
            or not isinstance(number, (int, float)) or not math.isfinite(number) or number < 0):
        raise ValueError(message or f"{name}: expected a non-negative number")
    return name.strip(), float(number)


_FIELDS = {f.name: f for f in fields(AnalysisOptions)}

OPTION_SPECS: tuple[OptionSpec, ...] = (
    OptionSpec("arch", "arch", "--arch", "choice", "CPU cost table and target for C, C++ and LLVM IR",
               choices=CPU_ARCHES),
    OptionSpec("gpu_arch", "gpuArch", "--gpu-arch", "choice", "GPU cost table and compute capability for CUDA "
               "and PTX", choices=GPU_ARCHES),
    OptionSpec("optimization", "compile.optimization", "--optimization", "choice",
               "optimisation level analysed where the build names none (the compile database's last -O wins)",
               choices=OPTIMIZATION_LEVELS),
    OptionSpec("flags_override", "compile.flags", "--flags", "flags",
               "compile flags replacing compile_commands.json (one string on the command line; write "
               "--flags=-O3 when it starts with a dash)"),
    OptionSpec("extra_flags", "compile.extraFlags", "--extra-flags", "flags",
               "compile flags appended to every compile (after the compile database's)"),
    OptionSpec("query_driver", "compile.queryDriver", "--query-driver", "globs",
               "globs of compilers a compile_commands.json may name (an allow-list; comma-separated on the "
               "command line)"),
    OptionSpec("compile_timeout_s", "compile.timeoutSeconds", "--timeout", "float",
               "seconds one compile may take", low=0.001, high=86400.0,
               cli_default=60.0),  # a batch run waits longer than an editor
    OptionSpec("compile_memory_mb", "compile.memoryMB", "--compile-memory-mb", "int",
               "memory one compile may use, in MB", low=256, high=1 << 20),
    OptionSpec("machine_code", "machineCode", "--machine-code", "bool",
               "lower CPU code to machine code to estimate retired instructions and cycles (llvm-mca)"),
    OptionSpec("default_trip_count", "defaultTripCount", "--default-trip-count", "int",
               "assumed iterations of a loop whose count is unknown", low=1, high=10**9),
    OptionSpec("early_exit", "earlyExit", "--early-exit", "choice",
               "a loop that may leave early on data (a search, a break): expected = the mean exit, "
               "(bound + 1)/2; worst = its bound", choices=EARLY_EXIT_POLICIES),
    OptionSpec("parameter_values", "parameterValues", "--param", "parameters",
               "value of a symbolic parameter (default: what the program's call sites pass, else the "
               "default parameter value)"),
    OptionSpec("default_parameter_value", "defaultParameterValue", "--default-parameter-value", "float",
               "value of a symbolic parameter nothing gives a value", low=0.0, high=1e18),
)
# Set by the views or the engine, never by users: sizes from call sites, the server's preamble
# directory and warm tools.
VIEW_FIELDS = ("inferred_values", "preamble_dir", "warm_tools")
SPEC_BY_SETTING = {spec.setting: spec for spec in OPTION_SPECS}


def options_from_settings(values: Mapping[str, Any]) -> tuple[AnalysisOptions, list[str]]:
    """Options from flattened setting keys (editor or ccls-cost.toml): an invalid value keeps its
    default and adds a message; keys that are not analysis options are left to the caller."""
    chosen: dict[str, Any] = {}
    messages: list[str] = []
    for key, value in values.items():
        spec = SPEC_BY_SETTING.get(key)
        if spec is None or value is None:
            continue
        try:
            chosen[spec.field] = spec.from_setting(value)
        except ValueError as problem:
            messages.append(f"ccls.{key}: {problem}; got {value!r}, using the default")
    return replace(AnalysisOptions(), **chosen), messages
