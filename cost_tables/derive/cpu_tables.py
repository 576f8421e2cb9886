"""Regenerate cost_tables/x86_64.json, aarch64.json, x86_64-zen3.json and x86_64-zen4.json.

    python3 cost_tables/derive/cpu_tables.py          # needs llvm-mca-19 on PATH

CU (compute units) are core cycles. For every ALU/FP class the script asks LLVM's own
scheduling model (llvm-mca-19, one representative instruction per class) for latency and
reciprocal throughput, and uses the reciprocal throughput as CU: in an out-of-order core
independent work overlaps, so the steady-state issue cost is what a count of executed
instructions adds up to. Latency is kept beside it (``latency_cycles``). Memory tiers below L1
come from published latencies/bandwidths (literature; "approximate" where the number was not
checked against a source read while writing this script). Energies come from energy_model.py.
x86_64-zen3 and x86_64-zen4 describe the machines the accuracy benchmark has run on: their clock,
divider, cache and DRAM latencies, memory-level parallelism and bandwidth are measured there
(measure_host.py writes host-measurements/<arch>.json; this script only reads them). The
literature x86_64 (Zen 4) table takes its divider from the Zen 4 measurement.
The raw llvm-mca output is written next to this script (llvm-mca/<cpu>.txt) for audit.
"""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import energy_model as em  # noqa: E402
from envelope import envelope, write_table  # noqa: E402

HERE = Path(__file__).resolve().parent
OUT_DIR = HERE.parent
MCA = "llvm-mca-19"
LINE = 64

# class -> (assembly line, energy rule, operand width); one probe per class.
X86_PROBES: dict[str, tuple[str, str, int]] = {
    "int_add": ("addq %rax, %rbx", "int_add", 64),
    "int_add.i32": ("addl %eax, %ebx", "int_add", 32),
    "int_logic": ("andq %rax, %rbx", "int_add", 64),
    "int_shift": ("shlq $3, %rax", "int_add", 64),
    "int_cmp": ("cmpq %rax, %rbx", "int_add", 64),
    "int_mul": ("imulq %rax, %rbx", "int_mul", 64),
    "int_mul.i32": ("imull %eax, %ebx", "int_mul", 32),
    "int_div": ("idivl %ecx", "int_div", 32),
    "int_div.i32": ("idivl %ecx", "int_div", 32),
    "int_div.i64": ("idivq %rcx", "int_div", 64),
    "fp_add": ("addsd %xmm1, %xmm0", "fp_add", 64),
    "fp_add.f64": ("addsd %xmm1, %xmm0", "fp_add", 64),
    "fp_add.f32": ("addss %xmm1, %xmm0", "fp_add", 32),
    "fp_mul": ("mulsd %xmm1, %xmm0", "fp_mul", 64),
    "fp_mul.f64": ("mulsd %xmm1, %xmm0", "fp_mul", 64),
    "fp_mul.f32": ("mulss %xmm1, %xmm0", "fp_mul", 32),
    "fp_fma": ("vfmadd231sd %xmm1, %xmm2, %xmm0", "fp_fma", 64),
    "fp_fma.f64": ("vfmadd231sd %xmm1, %xmm2, %xmm0", "fp_fma", 64),
    "fp_fma.f32": ("vfmadd231ss %xmm1, %xmm2, %xmm0", "fp_fma", 32),
    "fp_div": ("divsd %xmm1, %xmm0", "fp_div", 64),
    "fp_div.f64": ("divsd %xmm1, %xmm0", "fp_div", 64),
    "fp_div.f32": ("divss %xmm1, %xmm0", "fp_div", 32),
    "fp_sqrt": ("sqrtsd %xmm1, %xmm0", "fp_div", 64),
    "fp_sqrt.f64": ("sqrtsd %xmm1, %xmm0", "fp_div", 64),
    "fp_sqrt.f32": ("sqrtss %xmm1, %xmm0", "fp_div", 32),
    "convert": ("cvtsi2sdq %rax, %xmm0", "convert", 64),
    "select": ("cmovneq %rax, %rbx", "int_add", 64),
    "address": ("leaq 8(%rdi,%rsi,8), %rax", "int_add", 64),
    "vector_shuffle": ("shufpd $1, %xmm1, %xmm0", "shuffle", 128),
    "load": ("movq (%rdi), %rax", "load", 64),
    "store": ("movq %rax, (%rdi)", "store", 64),
    "branch": ("jne .Ltarget", "int_add", 64),
    "fence": ("mfence", "fence", 64),
}
# (scalar, 128, 256, 512) probes for the vector multipliers: fp add and fp fma families.
X86_VECTOR_PROBES = {
    "add": ("addsd %xmm1, %xmm0", {128: "vaddpd %xmm1, %xmm2, %xmm0", 256: "vaddpd %ymm1, %ymm2, %ymm0",
                                    512: "vaddpd %zmm1, %zmm2, %zmm0"}),
    "fma": ("vfmadd231sd %xmm1, %xmm2, %xmm0", {128: "vfmadd231pd %xmm1, %xmm2, %xmm0",
                                                 256: "vfmadd231pd %ymm1, %ymm2, %ymm0",
                                                 512: "vfmadd231pd %zmm1, %zmm2, %zmm0"}),
}

AARCH64_PROBES: dict[str, tuple[str, str, int]] = {
    "int_add": ("add x0, x1, x2", "int_add", 64),
    "int_add.i32": ("add w0, w1, w2", "int_add", 32),
    "int_logic": ("and x0, x1, x2", "int_add", 64),
    "int_shift": ("lsl x0, x1, #3", "int_add", 64),
    "int_cmp": ("cmp x0, x1", "int_add", 64),
    "int_mul": ("mul x0, x1, x2", "int_mul", 64),
    "int_mul.i32": ("mul w0, w1, w2", "int_mul", 32),
    "int_div": ("sdiv w0, w1, w2", "int_div", 32),
    "int_div.i32": ("sdiv w0, w1, w2", "int_div", 32),
    "int_div.i64": ("sdiv x0, x1, x2", "int_div", 64),
    "fp_add": ("fadd d0, d1, d2", "fp_add", 64),
    "fp_add.f64": ("fadd d0, d1, d2", "fp_add", 64),
    "fp_add.f32": ("fadd s0, s1, s2", "fp_add", 32),
    "fp_mul": ("fmul d0, d1, d2", "fp_mul", 64),
    "fp_mul.f64": ("fmul d0, d1, d2", "fp_mul", 64),
    "fp_mul.f32": ("fmul s0, s1, s2", "fp_mul", 32),
    "fp_fma": ("fmadd d0, d1, d2, d3", "fp_fma", 64),
    "fp_fma.f64": ("fmadd d0, d1, d2, d3", "fp_fma", 64),
    "fp_fma.f32": ("fmadd s0, s1, s2, s3", "fp_fma", 32),
    "fp_div": ("fdiv d0, d1, d2", "fp_div", 64),
    "fp_div.f64": ("fdiv d0, d1, d2", "fp_div", 64),
    "fp_div.f32": ("fdiv s0, s1, s2", "fp_div", 32),
    "fp_sqrt": ("fsqrt d0, d1", "fp_div", 64),
    "fp_sqrt.f64": ("fsqrt d0, d1", "fp_div", 64),
    "fp_sqrt.f32": ("fsqrt s0, s1", "fp_div", 32),
    "convert": ("scvtf d0, x1", "convert", 64),
    "select": ("csel x0, x1, x2, eq", "int_add", 64),
    "address": ("add x0, x1, x2, lsl #3", "int_add", 64),
    "vector_shuffle": ("zip1 v0.2d, v1.2d, v2.2d", "shuffle", 128),
    "load": ("ldr x0, [x1]", "load", 64),
    "store": ("str x0, [x1]", "store", 64),
    "branch": ("b.ne .Ltarget", "int_add", 64),
}
AARCH64_VECTOR_PROBES = {
    "add": ("fadd d0, d1, d2", {128: "fadd v0.2d, v1.2d, v2.2d"}),
    "fma": ("fmadd d0, d1, d2, d3", {128: "fmla v0.2d, v1.2d, v2.2d"}),
}

ZEN4_SOG = "AMD, Software Optimization Guide for the AMD Zen4 Microarchitecture (pub. 57647)"
C_AND_C_ZEN4 = "Chips and Cheese, 'AMD's Zen 4, Part 2: Memory Subsystem and Conclusion' (2022)"
ARM_LEARN = ("Arm Learning Paths, 'Memory subsystem' (learn.arm.com/learning-paths/servers-and-cloud-computing/"
             "memory-subsystem), AWS Graviton4 c8g measurements with ASCT")

# Associativity and TLB reach (where a strided walk's lines and pages can stay; counting._set_capacity):
# from the vendors' guides, as recalled, not re-read.
GEOMETRY = {
    "x86_64": {
        "l1d_ways": 8,
        "l2_ways": 8,
        "tlb_entries": 3072,
        "page_bytes": 4096,
        "geometry_source": "AMD, Software Optimization Guide for the AMD Zen4 Microarchitecture (pub. 57647), as recalled, not re-read: L1d 32 KiB 8-way, L2 1 MiB 8-way, L2 DTLB 3072 entries for 4 KiB pages; modelled use: a stride that is a multiple of k lines uses 1/gcd(k, 64) of a cache's sets (sets above the 4 KiB page offset come from physical pages)"
    },
    "x86_64-zen3": {
        "l1d_ways": 8,
        "l2_ways": 8,
        "tlb_entries": 2048,
        "page_bytes": 4096,
        "geometry_source": "AMD, Software Optimization Guide for AMD EPYC 7003 Processors (Zen 3, pub. 56665), as recalled, not re-read: L1d 32 KiB 8-way, L2 512 KiB 8-way, L2 DTLB 2048 entries for 4 KiB pages; modelled use: a stride that is a multiple of k lines uses 1/gcd(k, 64) of a cache's sets (sets above the 4 KiB page offset come from physical pages)"
    },
    "x86_64-zen4": {
        "l1d_ways": 8,
        "l2_ways": 8,
        "tlb_entries": 3072,
        "page_bytes": 4096,
        "geometry_source": "AMD, Software Optimization Guide for the AMD Zen4 Microarchitecture (pub. 57647), as recalled, not re-read: L1d 32 KiB 8-way, L2 1 MiB 8-way, L2 DTLB 3072 entries for 4 KiB pages (the measured sizes above are unchanged); modelled use: a stride that is a multiple of k lines uses 1/gcd(k, 64) of a cache's sets (sets above the 4 KiB page offset come from physical pages)"
    },
    "aarch64": {
        "l1d_ways": 4,
        "l2_ways": 8,
        "tlb_entries": 2048,
        "page_bytes": 4096,
        "geometry_source": "Arm Neoverse V2 Technical Reference Manual, as recalled, not re-read: L1d 64 KiB 4-way, L2 8-way, L2 unified TLB 2048 entries; modelled use: a stride that is a multiple of k lines uses 1/gcd(k, 64) of a cache's sets (sets above the 4 KiB page offset come from physical pages)"
    }
}

CORES = {
    "x86_64": {
        "triple": "x86_64", "mcpu": "znver4", "probes": X86_PROBES, "vector_probes": X86_VECTOR_PROBES,
        "hardware": "AMD Zen 4 core (LLVM -mcpu=znver4) as in AMD EPYC 9654 'Genoa' (TSMC 5 nm)",
        "clock_hz": 3.55e9,
        "clock_source": "AMD EPYC 9654 product specification: all-core boost 3.55 GHz (approximate: "
                        "from the vendor's published spec, not re-read while writing this table)",
        "cache": {"l1d_bytes": 32 * 1024, "l2_bytes": 1024 * 1024, "l3_bytes": 32 * 1024 * 1024},
        "cache_source": f"{ZEN4_SOG}: 32 KB L1D, 1 MB private L2, 32 MB L3 per 8-core CCD (approximate)",
        "l1_pj": em.SRAM_32KB_PJ, "l2_pj": em.SRAM_1MB_PJ,
        # load-to-use latencies in core cycles, DRAM in ns, single-core stream bandwidth in GB/s
        "lat": {"L1": 4, "L2": 14, "L3": 50}, "dram_ns": 100.0, "stream_gb_s": 40.0,
        "fill_bytes_per_cycle": {"L2": 64.0, "L3": 32.0},
        "fill_source": f"{ZEN4_SOG}: L2 to L1 64 B/cycle, L3 to L2 32 B/cycle (approximate)",
        "mispredict_cycles": 13.0,
        "mispredict_source": f"{ZEN4_SOG}: branch misprediction penalty ~11-18 cycles, typically ~13 (approximate)",
        "lat_source": f"{ZEN4_SOG}; {C_AND_C_ZEN4}: L1 4, L2 14, L3 ~50 cycles (approximate: values as "
                      "published for Zen 4, not re-checked against a stored copy)",
        "dram_source": "random-access DRAM latency ~100 ns for a DDR5 server platform (approximate, "
                       "literature range 80-120 ns for Genoa-class parts)",
        "stream_source": "single-core sequential read bandwidth ~40 GB/s on Zen 4 (approximate; one "
                         "CCD-to-IO-die Infinity Fabric link is 32 B/cycle read at ~2 GHz)",
        "atomic_cu": 8.0, "atomic_source": "uncontended lock-prefixed RMW on Zen 4 ~8 cycles (approximate, "
                                           "uops.info-style measurements); LLVM's model gives 0.67, too low",
        "fence_from_mca": True,
        "reorder_buffer": 320,
        "window_source": "AMD Zen 4 (Hot Chips 34, 2022, and the Zen 4 Software Optimization Guide): "
                         "320-entry reorder buffer, up from 256 in Zen 3 (approximate: as published, not "
                         "re-read while writing this table)",
        "native_bits": 256,
        "native_note": "Zen 4 implements AVX-512 on 256-bit datapaths (512-bit ops issue as two halves)",
    },
    "aarch64": {
        "triple": "aarch64", "mcpu": "neoverse-v2", "probes": AARCH64_PROBES,
        "vector_probes": AARCH64_VECTOR_PROBES,
        "hardware": "Arm Neoverse V2 core (LLVM -mcpu=neoverse-v2) as in AWS Graviton4 (c8g)",
        "clock_hz": 2.8e9,
        "clock_source": "AWS Graviton4 2.8 GHz (approximate: AWS instance documentation, not re-read "
                        "while writing this table)",
        "cache": {"l1d_bytes": 64 * 1024, "l2_bytes": 2 * 1024 * 1024, "l3_bytes": 36 * 1024 * 1024},
        "cache_source": f"{ARM_LEARN}: 64 KB 4-way L1D, 2 MB 8-way private L2, 36 MB shared L3, 64-byte lines",
        # Horowitz SRAM energy grows ~x1.4 per 2x capacity between his 8 KB, 32 KB and 1 MB points.
        "l1_pj": em.SRAM_32KB_PJ * 1.4, "l2_pj": em.SRAM_1MB_PJ * 1.4,
        "lat": {"L1": 4, "L2": 11, "L3": 84}, "dram_ns": 110.0, "stream_gb_s": 37.0,
        "fill_bytes_per_cycle": {"L2": 95.1e9 / 2.8e9, "L3": 78.0e9 / 2.8e9},
        "fill_source": f"{ARM_LEARN}: single-core bandwidth from L2 95.1 GB/s, from the system-level cache "
                       "78.0 GB/s, at 2.8 GHz",
        "mispredict_cycles": 11.0,
        "mispredict_source": "Arm Neoverse V2 Software Optimization Guide: branch misprediction penalty "
                             "~11 cycles or more (approximate)",
        "lat_source": "Neoverse V2: L1 4, L2 ~11 cycles (Arm Neoverse V2 TRM figures as commonly cited), "
                      "CMN-700 system-level cache ~30 ns = 84 cycles at 2.8 GHz (approximate: not "
                      "re-checked against a stored copy)",
        "dram_source": "Graviton4 DDR5-5600 random-access latency ~110 ns (approximate)",
        "stream_source": f"{ARM_LEARN}: single-core DRAM bandwidth 37.0 GB/s (ASCT bandwidth-sweep, 544 MB)",
        "atomic_cu": 8.0, "atomic_source": "uncontended LSE atomic (ldadd/cas) ~8 cycles (approximate); "
                                           "LLVM 19 has no scheduling data for LSE atomics on neoverse-v2",
        "fence_from_mca": False, "fence_cu": 20.0,
        "fence_source": "dmb ish drains the store buffer, ~20 cycles (modelled); LLVM's model says 0.06",
        "reorder_buffer": 320,
        "window_source": "Arm Neoverse V2 (Hot Chips 2023): 320-entry reorder buffer (approximate: as "
                         "commonly cited from Arm's disclosure, not re-read while writing this table)",
        "native_bits": 128,
        "native_note": "Neoverse V2 has 4x128-bit SVE2/NEON pipes; wider vectors issue as several ops",
    },
}


def _host_record(arch: str) -> tuple[dict, str]:
    """measure_host.py's record for `arch` and the provenance sentence its figures carry."""
    record = json.loads((HERE / "host-measurements" / f"{arch}.json").read_text())
    cpu = record["cpu"]
    where = (f"measured on {cpu.get('model name', '?')} (family {cpu.get('cpu family')}, model "
             f"{cpu.get('model')}{', virtualised' if cpu.get('virtualised') else ''}) on {record['date']} with "
             f"{record['method']}; raw figures in host-measurements/{arch}.json")
    return record, where


def measured_beyond_mca() -> dict | None:
    """measure_beyond_mca.py's record (None where it was never run)."""
    path = HERE / "beyond-mca-measurements.json"
    return json.loads(path.read_text()) if path.exists() else None


def _measured_on(cpu: dict) -> str:
    return (f"measured on {cpu.get('model name', '?')} (family {cpu.get('cpu family')}, model {cpu.get('model')}"
            f"{', virtualised' if cpu.get('virtualised') else ''})")


def _beyond_mca_source(record: dict) -> str:
    return (f"{_measured_on(record['cpu'])}, {record['libc']}, on "
            f"{record['date']} with {record['method']}; raw figures in beyond-mca-measurements.json")


def _measured_variant(base: dict, cycles: float, source: str, notes: str) -> dict:
    """A measured class that costs `cycles` and keeps its base class's latency and energy."""
    return {**{key: base[key] for key in ("latency_cycles", "energy_pj", "energy_source", "energy_method")
               if key in base},
            "cu": cycles, "source": source, "method": "measured", "notes": notes}


def libm_classes(record: dict, generic: dict) -> dict[str, dict]:
    """One `fp_transcendental.<function>` class per measured C library function: its measured
    cycles per call (the call and the function's body; llvm-mca sees only the call, so
    ccls.costing adds the rest), energy as the generic libm call's scaled by those cycles."""
    return {f"fp_transcendental.{name}": {
        "cu": cycles, "energy_pj": round(generic["energy_pj"] * cycles / generic["cu"], 3),
        "source": _beyond_mca_source(record), "method": "measured",
        "notes": "throughput of independent calls, on the measuring machine's core: the same library code "
                 "takes a similar number of cycles on other x86-64 cores with the same FP latencies (approximate)",
        "energy_source": generic["energy_source"], "energy_method": "modelled"}
        for name, cycles in sorted(record["cycles_per_call"].items())}


def crowded_classes(record: dict, classes: dict) -> dict[str, dict]:
    """`load/store.L2/L3.crowded`: one access of a walk that takes a new line every time in the
    few L1 sets its stride can use (a column of a matrix with power-of-two rows), from the
    tier named: each line brought in evicts one of the walk's own, written back first for stores,
    so the accesses wait for each other more than independent misses do. Measured cycles."""
    update = record.get("column_update") or {}
    if "column_walk_cycles_per_access" in update:  # the walks of the current probe (256 rows from L2)
        walks = update["column_walk_cycles_per_access"]
        source = (f"{_measured_on(update.get('cpu', record['cpu']))} on {update.get('date', record['date'])} with "
                  f"{update.get('method', record['method'])}; raw figures in beyond-mca-measurements.json "
                  f"(column_update): a column walk, rows 1 KiB apart")
        rows = 256
    else:
        walks, source, rows = record["column_walk_cycles_per_access"], \
            f"{_beyond_mca_source(record)}: a column walk, rows 1 KiB apart", 64
    notes = ("measured on the measuring machine's core (approximate for others): per access of a walk whose "
             f"stride confines it to 1/16 of the L1 sets, over {rows} rows (L2) and 4096 rows (L3)")
    return {f"{name}.crowded": _measured_variant(classes[name], cycles, source, notes)
            for name, cycles in sorted(walks.items())}


def aliased_classes(record: dict, classes: dict) -> dict[str, dict]:
    """`load.L2/L3.crowded.aliased`: the load of a crowded column walk that also stores its rows
    (`a[j][i] *= c`, rows 1 KiB apart): row j+4's load sits at the same address modulo the 4 KiB
    page as row j's store, still in flight, and waits for it, so its miss overlaps less than a
    load-only walk's. Measured cycles per row of that walk less its store-only walk's."""
    update = record.get("column_update")
    if not update:
        return {}
    date, method = update.get("date", record["date"]), update.get("method", record["method"])
    source = (f"{_measured_on(update.get('cpu', record['cpu']))} on {date} with {method}; raw "
              f"figures in beyond-mca-measurements.json (column_update): a column walk, rows 1 KiB apart, that "
              f"loads and stores each element")
    rows = 256 if "column_walk_cycles_per_access" in update else 64
    notes = ("measured on the measuring machine's core (approximate for others): per row, the update walk's "
             f"time less the store-only walk's, over {rows} rows (L2) and 4096 rows (L3), and no less than an L1 "
             "hit (a core whose update walk outruns its store-only walk hides the load under the stores); x86 "
             "cores match a load against older stores on the address's page offset first")
    return {f"{name}.crowded.aliased": _measured_variant(classes[name], max(cycles, classes["load"]["cu"]), source,
                                                         notes)
            for name, cycles in sorted(update["aliased_load_cycles"].items())}


def memory_chain(record: dict, classes: dict) -> dict:
    """Store-to-load forwarding, general and vector registers: a measured chain's cycles per
    iteration less the latency of the add in it (this table's)."""
    chain = record["chain_cycles_per_iteration"]
    return {"store_forward_cycles": {"int": round(chain["int64"] - classes["int_add"]["latency_cycles"], 2),
                                     "fp": round(chain["double"] - classes["fp_add.f64"]["latency_cycles"], 2)},
            "source": f"{_beyond_mca_source(record)}: `t[0] = t[0] + a[i]` kept in memory, per iteration, less "
                      "the add's latency",
            "method": "measured",
            "notes": "measured on the measuring machine's core (a Zen 1 guest for the bundled figures): store-to-"
                     "load forwarding differs by a cycle or two between x86-64 cores (approximate)"}


def measured_divider(arch: str, host: tuple[dict, str] | None = None) -> dict:
    """The divider measured on `arch`'s machine (`host`: its record, if already read)."""
    record, where = host or _host_record(arch)
    return {"cycles": record["derived"]["divide_cycles"],
            "source": f"{where}: independent div r32 / div r64 with 20-30-bit quotients"}


def host_core(arch: str, base: dict, mcpu: str, hardware: str, core_figures: dict | None = None,
              host: tuple[dict, str] | None = None) -> dict:
    """A core described by measurements of the machine itself (measure_host.py), on top of
    `base`'s probes and literature figures for what cannot be measured from user space
    (`core_figures` replaces those where the measured core is not `base`'s). `host`: the record
    and its provenance sentence (default: host-measurements/<arch>.json; ccls calibrate passes its own)."""
    record, where = host = host or _host_record(arch)
    d, cpu = record["derived"], record["cpu"]
    caches = cpu["caches"]
    l1, l2 = (_bytes(caches["L1"]), _bytes(caches["L2"]))
    return {
        **base, "mcpu": mcpu, "hardware": hardware, "measured": True,
        "clock_hz": d["clock_hz"], "clock_source": f"{where}: a chain of dependent 1-cycle adds "
                                                    "(the clock the core actually runs at, boost included)",
        "cache": {"l1d_bytes": l1, "l2_bytes": l2, "l3_bytes": d["effective_l3_bytes"],
                  **({"stream_reuse_bytes": d["stream_reuse_bytes"]} if d.get("stream_reuse_bytes") is not None
                     else {})},
        "cache_source": f"L1d and L2 per core from /sys/devices/system/cpu (L3 reported {caches.get('L3')}); "
                        f"l3_bytes is the effective share: {where}: the largest pointer-chase footprint still "
                        "served at L3 latency (beyond it latency approaches DRAM's: other cores and guests "
                        "share the L3)"
                        + ("; stream_reuse_bytes: how far behind its leading access a re-read of a stream from "
                           "DRAM still finds its lines (s += a[j] + a[j - d] over 256 MiB, d = 1 KiB and 128 KiB, "
                           "against one and two streams)" if d.get("stream_reuse_bytes") is not None else ""),
        "lat": d["latency_cycles"], "dram_ns": d["dram_ns"],
        "stream_gb_s": d["stream_read_gb_s"],
        # A copy moves a read line and a written one: the written line's share is the copy's time
        # per line pair less a read line's.
        "store_stream_gb_s": round(1 / (2 / d["stream_copy_gb_s"] - 1 / d["stream_read_gb_s"]), 2),
        "store_stream_source": f"{where}: single-core copy of 512 MiB (time per line pair less a read line's)",
        "lat_source": f"{where}: pointer chase, one node per 64-byte line, 16 KiB (L1), 256 KiB (L2), "
                      "median of the L3 sweep (L3)",
        "dram_source": f"{where}: pointer chase over 64 MiB (page walks included, as in a real chase)",
        "stream_source": f"{where}: single-core sequential read of 512 MiB",
        "mlp": d["memory_level_parallelism"],
        "mlp_source": f"{where}: DRAM chase latency / time per independent random load (s += a[idx[i]]) "
                      "over 64 MiB",
        "divider": measured_divider(arch, host),
        **({"strided_ns": d["strided_miss_ns"],
            "strided_source": f"{where}: loads a fixed stride apart over 512 MiB (s += a[i * stride]), each a "
                              "line of its own: the median over strides of 128 B, 256 B, 512 B, 1 KiB, "
                              "4 KiB + 64 B and 16 KiB + 64 B"} if "strided_miss_ns" in d else {}),
        **(core_figures or {}),
    }


ZEN3_FIGURES = {
    "window_source": "AMD Zen 3: 256-entry reorder buffer (AMD Zen 3 disclosures, 2020; approximate: "
                     "as published, not re-read while writing this table)",
    "reorder_buffer": 256,
    "mispredict_source": "AMD Zen 3 branch misprediction penalty ~13 cycles (approximate, as for Zen 4)",
    "fill_bytes_per_cycle": {"L2": 32.0, "L3": 32.0},
    "fill_source": "AMD Zen 3: L2 to L1 and L3 to L2 32 B/cycle each (approximate: AMD Zen 3 disclosures "
                   "as commonly cited, not re-read while writing this table)",
    "vector_probes": {family: (scalar, {w: asm for w, asm in by_width.items() if w <= 256})
                      for family, (scalar, by_width) in CORES["x86_64"]["vector_probes"].items()},
    "native_bits": 256,
    "native_note": "Zen 3 has 256-bit AVX2 datapaths and no AVX-512",
}


def _bytes(size: str) -> int:
    """'32K' / '512K' / '32768K' / '32M' (sysfs cache sizes) -> bytes."""
    units = {"K": 1024, "M": 1024 * 1024}
    return int(size[:-1]) * units[size[-1]] if size[-1] in units else int(size)


# Effective misses in flight per core for independent misses. Zen 4 tracks 24 L1D misses and
# Neoverse V2 similar numbers; prefetch, TLB walks and queueing keep the effective figure lower.
MEMORY_LEVEL_PARALLELISM = 10
MLP_SOURCE = ("~10 effective outstanding misses per core (approximate; hardware miss buffers hold 20-24, "
              "e.g. AMD Zen 4 Software Optimization Guide; effective parallelism is lower)")


def run_mca(triple: str, mcpu: str, lines: list[str], mca: str = MCA) -> tuple[list[tuple[float, float]], str]:
    """(latency, reciprocal throughput) per input line, in order, plus the raw report."""
    asm = "\n".join(lines) + "\n.Ltarget:\n"
    proc = subprocess.run([mca, f"-mtriple={triple}", f"-mcpu={mcpu}", "-instruction-info",
                           "-iterations=1", "-resource-pressure=false"],
                          input=asm, capture_output=True, text=True, check=True)
    report = proc.stdout
    rows: list[tuple[float, float]] = []
    in_table = False
    for line in report.splitlines():
        if line.strip().startswith("[1]") and "Instructions:" in line:
            in_table = True
            continue
        if in_table:
            m = re.match(r"^\s*(\d+)\s+(\d+)\s+([\d.]+)\s", line)
            if not m:
                break
            rows.append((float(m.group(2)), float(m.group(3))))
    if len(rows) != len(lines):
        raise SystemExit(f"llvm-mca returned {len(rows)} rows for {len(lines)} probes ({mcpu})")
    return rows, report


def op_energy_pj(rule: str, width: int, latency: float, core: dict) -> float:
    if rule == "int_add":
        return em.INT_ADD_PJ[width]
    if rule == "int_mul":
        return em.INT_MUL_PJ[width]
    if rule == "int_div":
        return em.iterative_unit_pj(latency, em.INT_MUL_PJ[width])
    if rule == "fp_add":
        return em.FP_ADD_PJ[width]
    if rule == "fp_mul":
        return em.FP_MUL_PJ[width]
    if rule == "fp_fma":
        return em.FP_ADD_PJ[width] + em.FP_MUL_PJ[width]
    if rule == "fp_div":
        return em.iterative_unit_pj(latency, em.FP_MUL_PJ[width])
    if rule == "convert":
        return em.FP_ADD_PJ[64]  # normalisation is an adder-like datapath
    if rule == "shuffle":
        return 1.0  # crossbar, modelled
    if rule in ("load", "store"):
        return core["l1_pj"]
    if rule == "fence":
        return 0.0
    raise ValueError(rule)


def build(arch: str, core: dict, audit: bool = True, mca: str = MCA) -> dict:
    """The table of `core`; `audit`: keep llvm-mca's reports next to this script (ccls calibrate
    does not write here); `mca`: the llvm-mca 19 to run."""
    probes = core["probes"]
    names = list(probes)
    rows, report = run_mca(core["triple"], core["mcpu"], [probes[n][0] for n in names], mca)
    if audit:
        (HERE / "llvm-mca").mkdir(exist_ok=True)
        (HERE / "llvm-mca" / f"{core['mcpu']}.txt").write_text(report)
    mca_src = f"llvm-mca-19 (LLVM 19.1.7) -mtriple={core['triple']} -mcpu={core['mcpu']} scheduling model"
    overhead = em.INSTRUCTION_OVERHEAD_PJ
    e_src = f"{em.HOROWITZ}; energy_model.py (45 nm, unscaled)"
    classes: dict[str, dict] = {}
    for name, (latency, rthru) in zip(names, rows):
        asm, rule, width = probes[name]
        if name == "fence" and not core["fence_from_mca"]:
            continue
        classes[name] = {
            "cu": rthru, "latency_cycles": latency,
            "energy_pj": round(overhead + op_energy_pj(rule, width, latency, core), 3),
            "source": f"{mca_src}: `{asm}` reciprocal throughput", "method": "llvm-sched-model",
            "energy_source": e_src, "energy_method": "modelled",
        }
    for name, note in (("int_div", "unqualified = 32-bit (C int); int_div.i64 for 64-bit"),
                       ("int_add", "unqualified = 64-bit"), ("int_mul", "unqualified = 64-bit"),
                       ("fp_add", "unqualified = f64 (C double)"), ("fp_mul", "unqualified = f64 (C double)"),
                       ("fp_div", "unqualified = f64 (C double)"), ("fp_sqrt", "unqualified = f64 (C double)")):
        classes[name]["notes"] = note
    for name in ("fp_fma", "fp_fma.f64", "fp_fma.f32"):
        if classes[name]["cu"] > classes["fp_mul"]["cu"]:
            classes[name]["notes"] = ("LLVM 19's model gives scalar FMA a lower throughput than packed FMA "
                                      "and than FP multiply on this core; kept as the model says")
    l1, l2, l3 = core["l1_pj"], core["l2_pj"], em.SRAM_32MB_PJ
    clock = core["clock_hz"]
    dram_cycles = core["dram_ns"] * 1e-9 * clock
    stream_cycles = LINE / (core["stream_gb_s"] * 1e9) * clock
    lat = core["lat"]
    load_l1 = classes["load"]
    store_l1 = classes["store"]
    classes["load"]["latency_cycles"] = lat["L1"]
    classes["load"]["notes"] = "plain load = L1 hit; CU is the L1 load-port reciprocal throughput"
    classes["load.L1"] = dict(load_l1)
    classes["store.L1"] = dict(store_l1)
    classes["store"]["notes"] = "plain store = L1 hit"

    def mem(cu, latency, energy, source, method, notes):
        return {"cu": round(cu, 3), "latency_cycles": round(latency, 1), "energy_pj": round(energy, 3),
                "source": source, "method": method, "energy_source": e_src, "energy_method": "modelled",
                "notes": notes}

    # A miss whose address does not depend on the previous miss (a[idx[i]], a column walk)
    # overlaps with others: out-of-order cores keep several in flight, so each costs about
    # latency / MLP, or the line's transfer time if that is longer. A dependent miss (p = p->next)
    # cannot overlap: it costs the whole latency (".chase").
    mlp = core.get("mlp", MEMORY_LEVEL_PARALLELISM)
    mlp_note = (f"modelled: independent miss, CU = max(load-to-use latency / {mlp} misses in flight, "
                f"64 B / that level's bandwidth); {core.get('mlp_source', MLP_SOURCE)}; bandwidth: "
                f"{core['fill_source']}")
    lat_note = "dependent miss (pointer chase): CU = load-to-use latency, not hidden by out-of-order execution"
    # a core measured on the machine itself (host_core) vs one from published figures
    memory_method = "measured" if core.get("measured") else "literature"
    l2_bw, l3_bw = core["fill_bytes_per_cycle"]["L2"], core["fill_bytes_per_cycle"]["L3"]
    levels = (("L2", lat["L2"], overhead + l1 + l2, core["lat_source"], LINE / l2_bw),
              ("L3", lat["L3"], overhead + l1 + l2 + l3, core["lat_source"], LINE / l3_bw),
              ("DRAM", dram_cycles, overhead + l1 + l2 + l3 + em.DRAM_RANDOM_PJ, core["dram_source"], stream_cycles))
    for level, latency, energy, source, transfer in levels:
        classes[f"load.{level}"] = mem(max(latency / mlp, transfer), latency, energy, source, "modelled", mlp_note)
        classes[f"load.{level}.chase"] = mem(latency, latency, energy, source, memory_method,
                                             lat_note + (f"; {core['dram_ns']} ns x {clock / 1e9} GHz"
                                                         if level == "DRAM" else ""))
    if "strided_ns" in core:
        # Lines at a regular stride of two lines or more: each a miss of its own, but at addresses
        # the prefetchers can predict and on pages walked in order; on the Zen 4 guest as cheap as
        # a random miss on a quiet day (7.0 vs 7.25 ns) and cheaper on a busy one (6.3-7.1 vs 9.9).
        classes["load.DRAM.strided"] = mem(
            max(core["strided_ns"] * 1e-9 * clock, stream_cycles), dram_cycles,
            overhead + l1 + l2 + l3 + em.DRAM_RANDOM_PJ, core["strided_source"], "measured",
            "one load that takes a new line at a regular stride of two lines or more (a[16 * i], a column "
            "walk): CU = measured time per such load")
    classes["branch.mispredict"] = {
        "cu": core["mispredict_cycles"], "latency_cycles": core["mispredict_cycles"],
        "energy_pj": round(core["mispredict_cycles"] * 2 * overhead, 3),
        "source": core["mispredict_source"], "method": "literature",
        "energy_source": e_src, "energy_method": "modelled",
        "notes": "one misprediction (charged in addition to the branch): the refill penalty in cycles; "
                 "energy modelled as the per-instruction overhead of ~2 squashed instructions per penalty cycle"}
    classes["load.stream"] = mem(stream_cycles, dram_cycles, overhead + l1 + l2 + em.DRAM_STREAM_LINE_PJ,
                                 core["stream_source"], memory_method,
                                 "one load execution that brings in a new 64-byte line of a prefetched "
                                 "sequential stream (ccls.counting charges one such execution per line, "
                                 "the others as load.L1); bandwidth-bound: 64 B / single-core bandwidth")
    # Stores retire into the store buffer; a miss costs the line's transfer (read-for-ownership and
    # eventual write-back) at that level's bandwidth rather than its latency. Modelled.
    store_note = "modelled: stores do not stall retirement; CU = moving the line twice (RFO + write-back)"
    classes["store.L2"] = mem(2 * LINE / l2_bw, lat["L2"], overhead + l1 + l2, core["lat_source"], "modelled",
                              store_note)
    classes["store.L3"] = mem(2 * LINE / l3_bw, lat["L3"], overhead + l1 + l2 + l3, core["lat_source"],
                              "modelled", store_note)
    classes["store.DRAM"] = mem(max(2 * stream_cycles, dram_cycles / mlp), dram_cycles,
                                overhead + l1 + l2 + l3 + em.DRAM_RANDOM_PJ + em.DRAM_STREAM_LINE_PJ,
                                core["dram_source"], "modelled",
                                store_note + f"; random store misses are limited by ~{mlp} outstanding "
                                             f"misses, so at least latency/{mlp}")
    if "store_stream_gb_s" in core:
        classes["store.stream"] = mem(LINE / (core["store_stream_gb_s"] * 1e9) * clock, dram_cycles,
                                      overhead + l1 + l2 + 2 * em.DRAM_STREAM_LINE_PJ, core["store_stream_source"],
                                      "measured", "one store execution that starts a new 64-byte line of a "
                                      "sequential stream: its share of a measured copy")
    else:
        classes["store.stream"] = mem(2 * stream_cycles, dram_cycles,
                                      overhead + l1 + l2 + 2 * em.DRAM_STREAM_LINE_PJ, core["stream_source"],
                                      "modelled", "one store execution that starts a new 64-byte line of a "
                                      "sequential stream: write-allocate read + write-back at stream bandwidth")
    classes["atomic"] = {"cu": core["atomic_cu"], "latency_cycles": core["atomic_cu"],
                         "energy_pj": round(2 * overhead + l1 + em.INT_ADD_PJ[64], 3),
                         "source": core["atomic_source"], "method": "literature",
                         "energy_source": e_src, "energy_method": "modelled"}
    if not core["fence_from_mca"]:
        classes["fence"] = {"cu": core["fence_cu"], "energy_pj": overhead, "source": core["fence_source"],
                            "method": "modelled", "energy_source": e_src, "energy_method": "modelled"}
    ctrl = "modelled: a correctly predicted taken control transfer plus the return-address stack access; " \
           "excludes the callee's own work and any misprediction"
    classes["call"] = {"cu": 2.0, "energy_pj": 2 * overhead + l1, "source": ctrl, "method": "modelled",
                       "energy_source": e_src, "energy_method": "modelled"}
    classes["call_indirect"] = {"cu": 3.0, "energy_pj": 2 * overhead + 2 * l1, "source": ctrl + "; plus the "
                                "load of the target", "method": "modelled", "energy_source": e_src,
                                "energy_method": "modelled"}
    classes["return"] = {"cu": 1.0, "energy_pj": overhead + l1, "source": ctrl, "method": "modelled",
                         "energy_source": e_src, "energy_method": "modelled"}
    libm_instr = 25
    classes["fp_transcendental"] = {
        "cu": 40.0, "energy_pj": round(libm_instr * overhead + 8 * (em.FP_ADD_PJ[64] + em.FP_MUL_PJ[64]), 3),
        "source": "modelled: a libm exp/log/sin call of ~25 instructions, ~40 cycles on a current core "
                  "(glibc double-precision fast paths; approximate)",
        "method": "modelled", "energy_source": e_src, "energy_method": "modelled"}
    if "beyond_mca" in core:
        classes.update(libm_classes(core["beyond_mca"], classes["fp_transcendental"]))
        classes.update(crowded_classes(core["beyond_mca"], classes))
        classes.update(aliased_classes(core["beyond_mca"], classes))
    classes["other"] = {**{k: classes["int_add"][k] for k in ("cu", "latency_cycles", "energy_pj")},
                        "source": "modelled: assumed to cost one simple ALU instruction (= int_add)",
                        "method": "modelled", "energy_source": e_src, "energy_method": "modelled"}

    # Vector multipliers: CU from llvm-mca as the packed W-bit reciprocal throughput over the
    # packed 128-bit one (mean of the add and fma families): scalar and 128-bit packed ops share
    # the same pipes on both cores, so 128 bits cost 1x; energy from vector_energy_multiplier.
    widths = sorted({w for _, by_w in core["vector_probes"].values() for w in by_w})
    vec_lines: list[str] = []
    for scalar, by_w in core["vector_probes"].values():
        vec_lines.append(scalar)
        vec_lines.extend(by_w[w] for w in widths)
    vrows, vreport = run_mca(core["triple"], core["mcpu"], vec_lines, mca)
    if audit:
        (HERE / "llvm-mca" / f"{core['mcpu']}-vector.txt").write_text(vreport)
    ratios: dict[int, list[float]] = {w: [] for w in widths}
    i = 0
    for _ in core["vector_probes"]:
        packed_128 = vrows[i + 1 + widths.index(128)][1]
        for k, w in enumerate(widths):
            ratios[w].append(vrows[i + 1 + k][1] / packed_128)
        i += 1 + len(widths)
    divider = None
    if "divider" in core:
        # llvm-mca's divider model vs the measured one: classes take the measured cycles, and
        # ccls.counting corrects llvm-mca's block cycles by the difference.
        measured = core["divider"]["cycles"]
        divider = {width: {"mca_cycles": classes[f"int_div.{width}"]["cu"], "cycles": measured[width]}
                   for width in ("i32", "i64")}
        divider.update(source=core["divider"]["source"], method="measured",
                       notes="mca_cycles: llvm-mca's reciprocal throughput for the same divide on this core")
        for name, width in (("int_div", "i32"), ("int_div.i32", "i32"), ("int_div.i64", "i64")):
            before = classes[name].get("notes")
            classes[name].update(cu=measured[width], source=core["divider"]["source"], method="measured",
                                 notes=(f"{before}; " if before else "")
                                 + f"llvm-mca's model says {classes[name]['cu']} cycles; measured instead")
    vector = {
        "native_bits": core["native_bits"],
        "widths": {str(w): {"cu": round(sum(r) / len(r), 3), "energy": round(em.vector_energy_multiplier(w), 4)}
                   for w, r in ratios.items()},
        "source": f"{mca_src}: packed W-bit vs packed 128-bit add/fma reciprocal throughput; energy: energy_model."
                  f"vector_energy_multiplier; {core['native_note']}",
        "method": "llvm-sched-model",
        "notes": "multipliers apply to the scalar class cost; widths above the largest listed scale by "
                 "width / largest listed; below the smallest use the smallest",
    }
    data = {
        "arch": arch,
        "core": core["hardware"],
        "clock_hz": {"value": clock, "source": core["clock_source"], "method": memory_method},
        "cache": {**core["cache"], "line_bytes": LINE, "source": core["cache_source"],
                  "method": memory_method, **GEOMETRY.get(arch, {})},
        "window": {"reorder_buffer": core["reorder_buffer"], "source": core["window_source"],
                   "method": "literature"},
        **({"divider": divider} if divider else {}),
        **({"memory_chain": memory_chain(core["beyond_mca"], classes)} if "beyond_mca" in core else {}),
        "vector": vector,
        "classes": dict(sorted(classes.items())),
    }
    return envelope(
        data,
        version="1.5.0",
        source=f"{mca_src}; {em.HOROWITZ}; memory: see per-class sources",
        hardware=core["hardware"],
        method=("llvm-sched-model (ALU/FP CU), measured on this machine (clock, divider, memory tiers, "
                "effective L3), modelled (energy, calls, stores below L1)" if core.get("measured") else
                "llvm-sched-model (ALU/FP CU), literature (memory tiers, clock, caches), "
                + ("measured on a machine with this core (integer divider), " if divider else "")
                + "modelled (energy, calls, stores below L1)"),
        units="cu: core cycles per executed instruction (reciprocal throughput); latency_cycles: cycles; "
              "energy_pj: picojoules per executed instruction; "
              "clock_hz: Hz; cache sizes: bytes; reorder_buffer: instructions in flight",
        notes="CU = reciprocal throughput because independent work overlaps in an out-of-order core; "
              "dependency chains are not modelled. Energy is dynamic switching energy only (Horowitz "
              "45 nm, unscaled): it excludes static/leakage and uncore power, which on a loaded server "
              "core is of the same order or larger, so joules are a lower bound useful for ranking. "
              "Regenerate with cost_tables/derive/cpu_tables.py.",
    )


def main() -> None:
    if shutil.which(MCA) is None:
        raise SystemExit(f"{MCA} not found on PATH")
    # The literature Zen 4 core takes its divider from a Zen 4 measured here: LLVM 19's znver4
    # model charges twice what the divider takes.
    cores = {**CORES, "x86_64": {**CORES["x86_64"], "divider": measured_divider("x86_64-zen4")},
             "x86_64-zen3": host_core(
                 "x86_64-zen3", CORES["x86_64"], "znver3",
                 "an accuracy-benchmark machine: AMD EPYC 'Milan' (Zen 3, LLVM -mcpu=znver3), a 2-vCPU KVM guest",
                 ZEN3_FIGURES),
             "x86_64-zen4": host_core(
                 "x86_64-zen4", CORES["x86_64"], "znver4",
                 "an accuracy-benchmark machine: AMD EPYC 'Genoa' (Zen 4, LLVM -mcpu=znver4), a 2-vCPU KVM guest")}
    beyond_mca = measured_beyond_mca()
    for arch, core in cores.items():
        if beyond_mca is not None and core["triple"] == "x86_64":
            core = {**core, "beyond_mca": beyond_mca}
        write_table(OUT_DIR / f"{arch}.json", build(arch, core))


if __name__ == "__main__":
    main()
