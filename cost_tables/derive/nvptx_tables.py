"""Regenerate cost_tables/nvptx-sm80.json and cost_tables/nvptx-sm90.json.

    python3 cost_tables/derive/nvptx_tables.py

Costs are per thread, the unit of the PTX reader's counts: each warp instruction's cost is shared
by its 32 lanes, so CU per executed thread instruction = (SM cycles per warp instruction) / 32
= 1 / (results per clock cycle per SM), with the rates of the CUDA C++ Programming Guide, section
"Arithmetic Instructions", table "Throughput of Native Arithmetic Instructions (Operations per
Clock Cycle per Multiprocessor)", columns for compute capability 8.0 and 9.0. Instructions the
hardware emulates (integer division, IEEE division and square root, 64-bit integer ops) are
costed as the native instruction sequences nvcc emits for them (modelled). Memory classes are
bandwidth-bound costs of one coalesced warp access (32 lanes x 4 B = 128 B) from the GPU's
published bandwidths. Tensor-core mma.sync costs come from the datasheet dense tensor
throughput. Energies are modelled (see ENERGY below). Everything is derived per warp
instruction, as the sources state it, and divided by 32 when stored (`per_thread`).
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import energy_model as em  # noqa: E402
from envelope import envelope, write_table  # noqa: E402

OUT_DIR = Path(__file__).resolve().parent.parent
GUIDE = ("NVIDIA CUDA C++ Programming Guide, 'Arithmetic Instructions': Throughput of Native Arithmetic "
         "Instructions (operations per clock cycle per multiprocessor)")
WARP = 32
WARP_BYTES = WARP * 4  # one coalesced access of 4-byte lanes

# results per clock per SM from the guide's table, (cc 8.0, cc 9.0)
RATES = {
    "fp16": (256, 256),  # "16-bit floating-point add, multiply, multiply-add" (an f16x2 lane = 2 results)
    "fp32": (64, 128),
    "fp64": (32, 64),
    "mufu": (16, 16),  # 32-bit reciprocal, rsqrt, log2, exp2, sine, cosine
    "int_add": (64, 64),
    "int_mul": (64, 64),
    "int_shift": (64, 64),
    "int_cmp": (64, 64),  # compare, minimum, maximum
    "int_logic": (64, 64),
    "shuffle": (32, 32),  # warp shuffle
    "convert": (16, 16),  # "all other type conversions" and "from and to 64-bit types"
}

GPUS = {
    "nvptx-sm80": {
        "cc": 0, "name": "NVIDIA A100 SXM4 40 GB (GA100, compute capability 8.0, TSMC 7 nm)",
        "sms": 108, "clock_hz": 1.41e9, "dram_bytes_s": 1555e9, "dram_pj_per_bit": 4.0,
        "l1_bytes": 192 * 1024, "l2_bytes": 40 * 1024 * 1024,
        "spec_source": "NVIDIA A100 Tensor Core GPU Architecture whitepaper (2020): 108 SMs, 1410 MHz boost, "
                       "1555 GB/s HBM2, 40 MB L2, 192 KB L1/shared per SM (approximate: from the datasheet "
                       "as commonly cited, not re-read while writing this script)",
        # dense tensor throughput, FMA per clock per SM, from datasheet TFLOPS / (SMs * clock * 2)
        "tc_fma_clk": {"f16": 1024, "bf16": 1024, "tf32": 512, "f64": 64, "s8": 2048, "u8": 2048},
        "tc_source": "A100 datasheet dense tensor TFLOPS: FP16/BF16 312, TF32 156, FP64 19.5, INT8 624 TOPS "
                     "(approximate)",
        "bf16_rate": 128,  # non-tensor BF16 is half the FP16 rate on A100 (39 vs 78 TFLOPS)
    },
    "nvptx-sm90": {
        "cc": 1, "name": "NVIDIA H100 SXM5 80 GB (GH100, compute capability 9.0, TSMC 4N)",
        "sms": 132, "clock_hz": 1.98e9, "dram_bytes_s": 3.35e12, "dram_pj_per_bit": 4.0,
        "l1_bytes": 256 * 1024, "l2_bytes": 50 * 1024 * 1024,
        "spec_source": "NVIDIA H100 Tensor Core GPU Architecture whitepaper (2022): 132 SMs, 1980 MHz boost, "
                       "3.35 TB/s HBM3, 50 MB L2, 256 KB L1/shared per SM (approximate: datasheet values "
                       "as commonly cited, not re-read while writing this script)",
        "tc_fma_clk": {"f16": 2048, "bf16": 2048, "tf32": 1024, "f64": 128, "s8": 4096, "u8": 4096, "f8": 4096},
        "tc_source": "H100 SXM datasheet dense tensor TFLOPS: FP16/BF16 989, TF32 495, FP64 67, FP8 1979, INT8 1979 TOPS "
                     "(approximate); legacy mma.sync is reported to reach well below this wgmma peak, "
                     "which this table does not model",
        "bf16_rate": 256,
    },
}

# mma.sync shapes (FMA per warp instruction) per element type
MMA_SHAPES = {"f16": ("m16n8k16", 16 * 8 * 16), "bf16": ("m16n8k16", 16 * 8 * 16),
              "tf32": ("m16n8k8", 16 * 8 * 8), "f64": ("m8n8k4", 8 * 8 * 4), "s8": ("m16n8k32", 16 * 8 * 32),
              "u8": ("m16n8k32", 16 * 8 * 32), "f8": ("m16n8k32", 16 * 8 * 32)}

# --- ENERGY (modelled, pJ) -------------------------------------------------------------------------
BMC = ("Pérez-Serrano et al., BMC Bioinformatics 19 (2018), Table 7 'Energy budget on a 28 nm chip' "
       "(register file access 2 pJ, 256-bit 8 KB SRAM access 50 pJ)")
OCONNOR = "O'Connor et al., 'Fine-Grained DRAM', MICRO 2017: HBM2 ~3.9 pJ/bit (approximate)"
ISSUE_PJ = 40.0  # per warp instruction: fetch/decode/schedule/operand collection (modelled)
RF_PJ = 2.0  # per 32-bit register access per lane (BMC table, 28 nm)
SRAM_256B_PJ = 50.0  # one 256-bit access to an 8 KB SRAM bank (BMC table)
NOC_PJ_PER_256B = 310.0  # moving 256 bits ~10 mm across the die (Keckler et al., IEEE Micro 2011; approximate)
SFU_LANE_PJ = 4 * em.FP_MUL_PJ[32]  # table lookup + quadratic interpolation (modelled)


def warp_pj(lane_op_pj: float, operands: int = 3) -> float:
    return ISSUE_PJ + WARP * (lane_op_pj + operands * RF_PJ)


def smem_pj(nbytes: int) -> float:
    return nbytes / 32 * SRAM_256B_PJ


def l2_path_pj(nbytes: int) -> float:
    return nbytes / 32 * (NOC_PJ_PER_256B + SRAM_256B_PJ * 2)


def per_thread(warp_cu: float, warp_pj: float) -> dict:
    """A warp instruction's cost shared by its 32 lanes: the cost of one thread's instruction."""
    return {"cu": _significant(warp_cu / WARP), "energy_pj": _significant(warp_pj / WARP)}


def _significant(value: float) -> float:
    return float(f"{value:.6g}")  # six significant digits: 1/128 stays 0.0078125


def build(arch: str, gpu: dict) -> dict:
    cc = gpu["cc"]
    cc_name = ("8.0", "9.0")[cc]
    clock = gpu["clock_hz"]

    def rate_cu(row: str) -> float:
        return WARP / RATES[row][cc]

    guide = f"{GUIDE}, compute capability {cc_name}"
    e_src = f"{em.HOROWITZ} (per-lane ops); {BMC}; issue {ISSUE_PJ} pJ per warp instruction (modelled)"
    classes: dict[str, dict] = {}

    def put(name, cu, energy, source, method, notes=None, energy_method="modelled"):
        entry = {**per_thread(cu, energy), "source": source, "method": method,
                 "energy_source": e_src, "energy_method": energy_method}
        if notes:
            entry["notes"] = notes
        classes[name] = entry

    # floating point, per precision
    fp32, fp64 = rate_cu("fp32"), rate_cu("fp64")
    fp16 = WARP / (RATES["fp16"][cc] / 2)  # one warp instruction (scalar or x2) issues 32 lanes
    bf16 = WARP / (gpu["bf16_rate"] / 2)
    half_note = ("the guide counts an f16x2 lane as two results; a warp instruction (scalar or x2) is "
                 "charged 32 / (rate / 2) cycles")
    for op, e32, e64, e16 in (("fp_add", em.FP_ADD_PJ[32], em.FP_ADD_PJ[64], em.FP_ADD_PJ[16]),
                              ("fp_mul", em.FP_MUL_PJ[32], em.FP_MUL_PJ[64], em.FP_MUL_PJ[16]),
                              ("fp_fma", em.FP_ADD_PJ[32] + em.FP_MUL_PJ[32], em.FP_ADD_PJ[64] + em.FP_MUL_PJ[64],
                               em.FP_ADD_PJ[16] + em.FP_MUL_PJ[16])):
        ops = 4 if op == "fp_fma" else 3
        put(op, fp32, warp_pj(e32, ops), f"{guide}: 32-bit floating-point row", "literature",
            "unqualified = .f32")
        put(f"{op}.f32", fp32, warp_pj(e32, ops), f"{guide}: 32-bit floating-point row", "literature")
        put(f"{op}.f64", fp64, warp_pj(e64, 2 * ops), f"{guide}: 64-bit floating-point row", "literature")
        put(f"{op}.f16", fp16, warp_pj(e16, ops), f"{guide}: 16-bit floating-point row", "literature", half_note)
        put(f"{op}.f16x2", fp16, warp_pj(2 * e16, ops), f"{guide}: 16-bit floating-point row", "literature",
            half_note)
        bf_src = (f"{guide}: 16-bit floating-point row" if gpu["bf16_rate"] == RATES["fp16"][cc]
                  else f"{gpu['spec_source']}; non-tensor BF16 at half the FP16 rate on this part (approximate)")
        put(f"{op}.bf16", bf16, warp_pj(e16, ops), bf_src, "literature")
        put(f"{op}.bf16x2", bf16, warp_pj(2 * e16, ops), bf_src, "literature")

    mufu = rate_cu("mufu")
    seq = "modelled: cost of the native SASS sequence nvcc emits"
    # IEEE div.rn.f32: MUFU.RCP + ~4 FFMA + FCHK/branch fix-up; f64: MUFU.RCP64H + ~8 DFMA + fix-up.
    put("fp_div", mufu + 4 * fp32 + 1.0, warp_pj(SFU_LANE_PJ + 4 * (em.FP_ADD_PJ[32] + em.FP_MUL_PJ[32])) + 5 * ISSUE_PJ,
        f"{seq} for div.rn.f32 (MUFU.RCP + 4 FFMA + fix-up); rates from {guide}", "modelled",
        "unqualified = .f32; div.approx.f32 is cheaper (MUFU.RCP + FMUL)")
    classes["fp_div.f32"] = dict(classes["fp_div"])
    put("fp_div.f64", mufu + 8 * fp64 + 1.0,
        warp_pj(SFU_LANE_PJ + 8 * (em.FP_ADD_PJ[64] + em.FP_MUL_PJ[64])) + 9 * ISSUE_PJ,
        f"{seq} for div.rn.f64 (MUFU.RCP64H + ~8 DFMA + fix-up); rates from {guide}", "modelled")
    put("fp_sqrt", mufu + 4 * fp32 + 0.5, warp_pj(SFU_LANE_PJ + 4 * (em.FP_ADD_PJ[32] + em.FP_MUL_PJ[32])) + 5 * ISSUE_PJ,
        f"{seq} for sqrt.rn.f32 (MUFU.RSQ + ~4 FFMA); rates from {guide}", "modelled", "unqualified = .f32")
    classes["fp_sqrt.f32"] = dict(classes["fp_sqrt"])
    put("fp_sqrt.f64", mufu + 8 * fp64 + 1.0,
        warp_pj(SFU_LANE_PJ + 8 * (em.FP_ADD_PJ[64] + em.FP_MUL_PJ[64])) + 9 * ISSUE_PJ,
        f"{seq} for sqrt.rn.f64 (MUFU.RSQ64H + ~8 DFMA); rates from {guide}", "modelled")
    put("sfu", mufu, warp_pj(SFU_LANE_PJ, 2), f"{guide}: 32-bit reciprocal/rsqrt/log2/exp2/sin/cos row (MUFU)",
        "literature", "one MUFU instruction: rcp/rsqrt/sqrt/ex2/lg2/sin/cos .approx")
    put("fp_transcendental", 2 * mufu + 2 * fp32, warp_pj(2 * SFU_LANE_PJ + 2 * em.FP_MUL_PJ[32]) + 3 * ISSUE_PJ,
        f"{seq}: range reduction FMULs around a MUFU op; rates from {guide}", "modelled")

    # integer
    int_lane = em.INT_ADD_PJ[32]
    for name, row in (("int_add", "int_add"), ("int_logic", "int_logic"), ("int_shift", "int_shift"),
                      ("int_cmp", "int_cmp"), ("select", "int_cmp"), ("address", "int_add")):
        label = {"select": "compare/min/max row (selp)", "address": "32-bit integer add row (address arithmetic)"}
        put(name, rate_cu(row), warp_pj(int_lane), f"{guide}: {label.get(name, row.replace('_', ' ') + ' row')}",
            "literature")
    put("int_mul", rate_cu("int_mul"), warp_pj(em.INT_MUL_PJ[32]), f"{guide}: 32-bit integer multiply row",
        "literature")
    for t in ("s32", "u32"):
        classes[f"int_add.{t}"] = dict(classes["int_add"])
        classes[f"int_mul.{t}"] = dict(classes["int_mul"])
    for t in ("s64", "u64"):
        put(f"int_add.{t}", 2 * rate_cu("int_add"), 2 * warp_pj(int_lane), f"{seq}: IADD3 + IADD3.X; {guide}",
            "modelled")
        put(f"int_mul.{t}", 3 * rate_cu("int_mul"), 3 * warp_pj(em.INT_MUL_PJ[32]),
            f"{seq}: three IMAD for a 64-bit low product; {guide}", "modelled")
    # div.s32/u32: I2F.RP, MUFU.RCP, F2I, ~14 IMAD/IADD/ISETP/SEL for correction
    div32 = 2 * rate_cu("convert") + mufu + 14 * rate_cu("int_add")
    div32_e = 17 * ISSUE_PJ + WARP * (SFU_LANE_PJ + 2 * em.FP_ADD_PJ[32] + 14 * em.INT_MUL_PJ[32] / 2 + 17 * 3 * RF_PJ)
    put("int_div", div32, div32_e, f"{seq} for div/rem .s32/.u32 (I2F, MUFU.RCP, F2I, ~14 integer ops); "
        f"{guide}", "modelled", "unqualified = 32-bit; 64-bit division calls a ~70-instruction routine")
    for t in ("s32", "u32"):
        classes[f"int_div.{t}"] = dict(classes["int_div"])
    for t in ("s64", "u64"):
        put(f"int_div.{t}", 70 * rate_cu("int_add"), 70 * warp_pj(em.INT_MUL_PJ[32] / 2),
            f"{seq}: ~70-instruction 64-bit division routine; {guide}", "modelled")
    put("convert", rate_cu("convert"), warp_pj(em.FP_ADD_PJ[32], 2), f"{guide}: type conversion rows", "literature")
    put("vector_shuffle", rate_cu("shuffle"), warp_pj(1.0, 2), f"{guide}: warp shuffle row", "literature",
        "shfl.sync / prmt-like data movement")

    # tensor cores: one mma.sync per warp, dense rate per SM
    for dtype, (shape, fma) in MMA_SHAPES.items():
        if dtype not in gpu["tc_fma_clk"]:
            continue  # no tensor-core support for this type on this architecture
        cu = fma / gpu["tc_fma_clk"][dtype]
        lane_bits = {"f16": 16, "bf16": 16, "tf32": 32, "f64": 64, "s8": 8, "u8": 8, "f8": 8}[dtype]
        fma_pj = (em.FP_MUL_PJ[16] + em.FP_ADD_PJ[32]) * (lane_bits / 16) ** 2 if lane_bits > 8 \
            else em.INT_MUL_PJ[32] / 16 + em.INT_ADD_PJ[32]
        if dtype == "f64":
            fma_pj = em.FP_MUL_PJ[64] + em.FP_ADD_PJ[64]
        operands = 14  # A, B, C, D fragments: ~14 32-bit registers per lane
        energy = ISSUE_PJ + fma * fma_pj + WARP * operands * RF_PJ
        put(f"mma.{dtype}", cu, energy, f"{gpu['tc_source']}; mma.sync.{shape}: {fma} FMA per warp instruction "
            f"/ {gpu['tc_fma_clk'][dtype]} FMA per clock per SM", "literature",
            f"one warp-level mma.sync.aligned.{shape} with {dtype} inputs")
    classes["mma"] = dict(classes["mma.f16"])
    classes["mma"]["notes"] = "unqualified = mma.sync.m16n8k16 with f16 inputs"

    # memory: one coalesced warp access of 128 bytes
    dram_b_clk = gpu["dram_bytes_s"] / gpu["sms"] / clock
    dram_cu = WARP_BYTES / dram_b_clk
    dram_pj = WARP_BYTES * 8 * gpu["dram_pj_per_bit"]
    spec = gpu["spec_source"]
    bw_note = (f"bandwidth-bound: 128 B per warp access at {dram_b_clk:.1f} B per SM-clock "
               f"(DRAM bandwidth / SMs / clock); latency (~500 cycles) assumed hidden by other warps")
    mem_e_src = f"{OCONNOR}; {BMC}; modelled"
    l1_cu = 1.0  # 128 B per clock per SM for L1/shared
    l2_cu = 3.0
    rf_access = WARP * 2 * RF_PJ

    def mput(name, cu, energy, source, method, notes):
        classes[name] = {**per_thread(cu, energy), "source": source, "method": method,
                         "energy_source": mem_e_src, "energy_method": "modelled"}
        if notes:
            classes[name]["notes"] = notes

    smem = ISSUE_PJ + rf_access + smem_pj(WARP_BYTES)
    l2e = smem + l2_path_pj(WARP_BYTES)
    drame = l2e + dram_pj
    mput("load.shared", l1_cu, smem, "modelled: shared memory delivers 128 B per clock per SM "
         "(32 banks x 4 B), conflict-free", "modelled", "bank conflicts multiply this by the conflict degree")
    mput("load.global.L1", l1_cu, smem, "modelled: L1 hit, 128 B per clock per SM", "modelled", "coalesced")
    mput("load.global.L2", l2_cu, l2e, "modelled: L2 hit, ~3 SM-clocks per 128 B at the per-SM share of L2 "
         "bandwidth (approximate)", "modelled", "coalesced")
    mput("load.global.DRAM", dram_cu, drame, spec, "literature", bw_note)
    mput("load.global", dram_cu, drame, spec, "literature",
         bw_note + "; an untiered global load is assumed to stream from DRAM (each element read once)")
    mput("load", dram_cu, drame, spec, "literature", "generic load: treated as load.global")
    mput("load.local", l1_cu, smem, "modelled: local memory (register spills) assumed to hit in L1", "modelled",
         "spill traffic that misses L1 costs like load.global")
    mput("load.const", 0.5, ISSUE_PJ + rf_access / 2 + SRAM_256B_PJ, "modelled: constant cache broadcast of a "
         "warp-uniform address", "modelled", "divergent constant addresses serialise")
    mput("load.param", 0.5, ISSUE_PJ + rf_access / 2 + SRAM_256B_PJ, "modelled: kernel parameters live in a "
         "constant bank", "modelled", None)
    mput("store.shared", l1_cu, smem, "modelled: as load.shared", "modelled", "conflict-free")
    mput("store.local", l1_cu, smem, "modelled: as load.local", "modelled", None)
    mput("store.global", dram_cu, drame, spec, "literature", bw_note + "; written back to DRAM eventually")
    mput("store", dram_cu, drame, spec, "literature", "generic store: treated as store.global")
    mput("atomic.global", 32.0, ISSUE_PJ + WARP * (l2_path_pj(4) + 2 * RF_PJ + em.INT_ADD_PJ[32]),
         "modelled: L2 atomic units perform ~1 atomic per clock per slice (~0.75 slices per SM on these "
         "parts); 32 distinct addresses per warp (approximate)", "modelled",
         "same-address atomics serialise further; warp-aggregated atomics are cheaper")
    classes["atomic"] = dict(classes["atomic.global"])
    mput("atomic.shared", 4.0, smem + WARP * em.INT_ADD_PJ[32], "modelled: native shared-memory atomics, "
         "conflict-free (approximate)", "modelled", None)
    mput("barrier", 20.0, ISSUE_PJ, "modelled: bar.sync / __syncthreads, ~20 SM cycles when all warps arrive "
         "together (microbenchmark-style estimate, approximate)", "modelled",
         "waiting for the slowest warp is not modelled")
    mput("fence", 50.0, ISSUE_PJ, "modelled: membar.gl / fence.sc waits for outstanding memory operations "
         "(approximate)", "modelled", "membar.cta is much cheaper")
    ctl = "modelled: control flow issues like an integer op"
    put("branch", rate_cu("int_add"), warp_pj(int_lane, 1), ctl, "modelled", "divergence is not modelled")
    put("call", 10.0, 4 * warp_pj(int_lane), "modelled: CALL.REL + stack/ABI register moves (approximate)",
        "modelled", "excludes the callee's own instructions")
    put("call_indirect", 12.0, 5 * warp_pj(int_lane), "modelled: as call plus the target load", "modelled")
    put("return", 2.0, warp_pj(int_lane, 1), "modelled: RET", "modelled")
    put("other", rate_cu("int_add"), warp_pj(int_lane), f"modelled: one simple integer instruction; {guide}",
        "modelled")

    # PTX vectors are memory ops (ld/st .v2/.v4): bytes scale with width, issue does not.
    vector = {"native_bits": 32,
              "widths": {"32": {"cu": 1.0, "energy": 1.0}, "64": {"cu": 2.0, "energy": 1.9},
                         "128": {"cu": 4.0, "energy": 3.7}},
              "source": "modelled: .v2/.v4 accesses move 2x/4x the bytes of a 32-bit lane access; "
                        "bandwidth-bound costs scale with bytes, issue energy does not",
              "method": "modelled",
              "notes": "widths above 128 scale by width / 128"}
    data = {
        "arch": arch,
        "core": gpu["name"],
        "clock_hz": {"value": clock, "source": spec, "method": "literature"},
        "cache": {"l1d_bytes": gpu["l1_bytes"], "l2_bytes": gpu["l2_bytes"], "l3_bytes": None,
                  "line_bytes": 128, "source": spec, "method": "literature"},
        "vector": vector,
        "classes": dict(sorted(classes.items())),
    }
    return envelope(
        data,
        version="2.0.0",
        source=f"{GUIDE}; {spec}; {em.HOROWITZ}; {BMC}",
        hardware=gpu["name"],
        method="literature (CUDA guide rates, datasheet bandwidths), modelled (emulated sequences, "
               "memory tiers, energy)",
        units="cu: SM cycles per executed THREAD instruction = SM cycles per warp instruction / 32 "
              "(= 1 / results per clock per SM); energy_pj: picojoules per thread instruction (warp "
              "instruction / 32); clock_hz: SM boost clock; cache sizes: bytes (l1d = L1/shared per SM)",
        notes="Costs are per thread, like the PTX reader's counts (one thread's executed instructions): "
              "each warp instruction's cost, derived from per-SM rates and per-warp bandwidths, is shared "
              "by its 32 lanes. A whole launch costs the per-thread figure x its thread count (summed SM "
              "cycles over all SMs). CU is the issue/throughput cost on one SM, assuming enough resident "
              "warps to hide latency and full warps; divergence, partial warps, bank conflicts and "
              "occupancy limits are not modelled. Energy is modelled dynamic energy (45 nm ALU figures, "
              "28 nm register-file/SRAM figures, unscaled). Regenerate with cost_tables/derive/nvptx_tables.py.",
    )


def main() -> None:
    for arch, gpu in GPUS.items():
        write_table(OUT_DIR / f"{arch}.json", build(arch, gpu))


if __name__ == "__main__":
    main()
