"""The types the cost tables are read into: per-class costs, a core's caches, machine energy,
regions, profiles, grade bands and reference ranges. Pure: `ccls.tables` reads and validates
the files into these; counting, costing, scoring and rendering take them as arguments."""
from __future__ import annotations

from dataclasses import dataclass, field

METRICS = ("CU", "EU", "CO2", "USD")
DEFAULT_FAMILY, GPU_THREAD_FAMILY = "default", "gpu-thread"
REFERENCE_FAMILIES = frozenset({GPU_THREAD_FAMILY})  # the families reference_ranges.json may add
LINE_BYTES_DEFAULT = 64


@dataclass(frozen=True)
class ClassCost:
    cu: float
    energy_joules: float
    source: str
    method: str


@dataclass(frozen=True)
class CacheModel:
    """What counting needs to know of a core: its caches, and how many instructions its
    out-of-order window holds (None: not given; no overlap of loop entries is assumed). The
    defaults, a generic server core, are what counting assumes where no cost table is given;
    a table states every size itself."""

    l1_bytes: int = 48 * 1024
    l2_bytes: int = 2 * 1024 * 1024
    l3_bytes: int | None = 32 * 1024 * 1024
    line_bytes: int = LINE_BYTES_DEFAULT
    reorder_buffer: int | None = None
    divider: DividerModel | None = None
    # How many bytes of other traffic a stream's lines survive for a re-read (measured; None:
    # as long as the cache that holds the traffic in between, as the cache sizes say).
    stream_reuse_bytes: int | None = None
    # Associativity of L1d and L2, and the TLB's entries for base pages: where a strided walk's
    # lines can stay (counting._set_capacity) and how many pages a sweep may touch (None: not given).
    l1_ways: int | None = None
    l2_ways: int | None = None
    tlb_entries: int | None = None
    page_bytes: int = 4096
    # Store-to-load forwarding, (general, vector registers): cycles from a store until a load of
    # the same address has its value, and each class's latency: what a chain through memory
    # takes per round trip (counting._chain_floors; None: not given, no chain is priced).
    store_forward_cycles: tuple[float, float] | None = None
    latencies: tuple[tuple[str, float], ...] = ()


@dataclass(frozen=True)
class DividerModel:
    """Measured integer-divide throughput next to what llvm-mca's scheduling model charges, in
    core cycles per divide (32-bit, 64-bit operands): the difference corrects llvm-mca's block
    cycles where its divider model is known to be off."""

    mca_cycles: tuple[float, float]
    cycles: tuple[float, float]


@dataclass(frozen=True)
class Span:
    """A table figure with its stated range: `value`, and `low` ≤ value ≤ `high`."""

    value: float
    low: float
    high: float

    @staticmethod
    def exact(value: float) -> Span:
        return Span(value, value, value)


@dataclass(frozen=True)
class MachineEnergy:
    """What turns a function's time into energy and carbon beyond its per-class dynamic energy
    (cost_tables/energy_parts.json): the energy roofline's constant power π₀ (Choi et al., IPDPS
    2013), and the hardware's embodied carbon shared by time held (SCI's M)."""

    name: str
    cores: int  # cores (CPU) or SMs (GPU) the embodied carbon is shared among
    constant_power_w: Span  # per core / SM
    embodied_kg: Span  # per machine
    lifetime_years: Span
    dynamic_energy_factor: Span  # on the cost table's per-class energies (value 1)
    cu_factor: Span  # how far the table's CU may be off (value 1)


@dataclass(frozen=True)
class CostTable:
    arch: str
    version: str
    clock_hz: float
    classes: dict[str, ClassCost]
    cache: CacheModel
    vector_native_bits: int
    vector_multipliers: dict[int, tuple[float, float]]  # width bits -> (cu x, energy x)
    metadata: dict
    energy: MachineEnergy | None = None  # None: dynamic energy only (no constant power, no embodied)

    def lookup(self, cls: str) -> ClassCost | None:
        """Most specific cost for ``base[.qualifier...][@vW]``: the exact key; else the key
        without ``@vW`` scaled by the vector multiplier; else the key with trailing
        ``.qualifier`` parts removed one at a time; else None."""
        found = self.classes.get(cls)
        if found is not None:
            return found
        if "@v" in cls:
            scalar_key, _, width_text = cls.partition("@v")
            if not width_text.isdigit() or int(width_text) <= 0:
                return None
            scalar = self.lookup(scalar_key)
            if scalar is None:
                return None
            width = int(width_text)
            cu_x, energy_x = self.vector_multiplier(width)
            return ClassCost(cu=scalar.cu * cu_x, energy_joules=scalar.energy_joules * energy_x,
                             source=f"{scalar.source} (scaled x{cu_x:g} CU, x{energy_x:g} energy for {width}-bit vector)",
                             method=scalar.method)
        key = cls
        while "." in key:
            key = key.rsplit(".", 1)[0]
            found = self.classes.get(key)
            if found is not None:
                return found
        return None

    def vector_multiplier(self, width_bits: int) -> tuple[float, float]:
        """(CU x, energy x) for a vector of ``width_bits``: listed width; below the smallest, the
        smallest; between listed widths, the next larger; above the largest L, L's multipliers
        x width / L (the op is split into width / L native-width pieces)."""
        widths = sorted(self.vector_multipliers)
        if not widths:
            factor = max(1.0, width_bits / self.vector_native_bits)
            return factor, factor
        if width_bits in self.vector_multipliers:
            return self.vector_multipliers[width_bits]
        for w in widths:
            if width_bits < w:
                return self.vector_multipliers[w]
        largest = widths[-1]
        cu_x, energy_x = self.vector_multipliers[largest]
        factor = width_bits / largest
        return cu_x * factor, energy_x * factor


@dataclass(frozen=True)
class Region:
    id: str
    name: str
    carbon_kg_per_kwh: float
    price_usd_per_kwh: float
    instance_usd_per_core_hour: Span | None  # time's price: a cloud instance or an owned server
    source: str
    instance_kind: str = "none"  # "cloud", "on-premises", or "none" (no time price)
    carbon_factor: Span = Span(1.0, 1.0, 1.0)  # stated range of the intensity, as multipliers
    price_factor: Span = Span(1.0, 1.0, 1.0)  # stated range of the electricity price


@dataclass(frozen=True)
class Profile:
    name: str
    weights: tuple[float, float, float, float]  # CU, EU, CO2, USD


@dataclass(frozen=True)
class GradeScale:
    bands: tuple[tuple[float, str, str], ...]  # (min score, grade, rating), highest first


@dataclass(frozen=True)
class ReferenceRanges:
    """Log-scale ranges for absolute scoring: `low`/`high` per metric are the default (CPU and
    CPython, per call); `families` holds ranges for figures of another kind, keyed by
    `reference_family(arch)` (GPU code: per thread)."""

    low: dict[str, float]
    high: dict[str, float]
    families: dict[str, ReferenceRanges] = field(default_factory=dict)

    def for_arch(self, arch: str) -> ReferenceRanges:
        """The ranges for a function costed as `arch`: its family's, else the default."""
        return self.families.get(reference_family(arch), self)


@dataclass(frozen=True)
class Tables:
    cost: dict[str, CostTable]
    regions: dict[str, Region]
    profiles: dict[str, Profile]
    grades: GradeScale
    reference: ReferenceRanges
    version: str  # short hash over every file's bytes (and custom profiles): changes when any changes


def reference_family(arch: str) -> str:
    """What a function's figures measure, from its arch: "gpu-thread" for PTX/CUDA device code
    (nvptx tables cost one thread), else "default" (one call on a CPU core or in CPython)."""
    return GPU_THREAD_FAMILY if arch.startswith("nvptx") else DEFAULT_FAMILY
