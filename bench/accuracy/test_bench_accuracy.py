"""Checks of the accuracy benchmark's own machinery (not of ccls): statistics, baselines, driver
generation, callgrind parsing and timing. Run: python3 -m pytest bench/accuracy/test_bench_accuracy.py -q
"""
from __future__ import annotations

import math
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import run  # noqa: E402
from baselines import b1_uniform, b2_memory_x10, b3_gas, base_of  # noqa: E402
from gen_driver import generate, prototype  # noqa: E402
from manifest import KERNELS, by_name  # noqa: E402
from stats import agreement  # noqa: E402

HERE = Path(__file__).resolve().parent
needs_tools = pytest.mark.skipif(not all(shutil.which(t) for t in (run.CLANG, "valgrind", "callgrind_annotate")),
                                 reason="needs clang-19 and valgrind")


def test_agreement_perfect_ranks_and_scale():
    a = agreement([1, 2, 3, 4], [10, 20, 30, 40])
    assert a.spearman_rho == pytest.approx(1.0) and a.kendall_tau == pytest.approx(1.0)
    assert a.median_abs_rel_err == pytest.approx(0.9)
    assert a.best_scale == pytest.approx(10.0) and a.median_abs_rel_err_scaled == pytest.approx(0.0)


def test_agreement_reversed_and_too_few():
    assert agreement([4, 3, 2, 1], [1, 2, 3, 4]).spearman_rho == pytest.approx(-1.0)
    assert math.isnan(agreement([1, 2], [1, 2]).spearman_rho)
    assert agreement([1, None, 3, 0, 5], [1, 2, 3, 4, 5]).n == 3  # missing and zero predictions dropped


def test_baselines_price_classes():
    counts = {"load.L1@v128": 10, "store.DRAM": 2, "int_add": 5, "branch": 1, "fp_div": 1}
    assert base_of("load.DRAM@v256") == "load" and base_of("fp_fma.f16") == "fp_fma"
    assert b1_uniform(counts) == 19
    assert b2_memory_x10(counts) == 10 * 10 + 2 * 10 + 5 + 1 + 1
    assert b3_gas(counts) == 10 * 3 + 2 * 20 + 5 * 3 + 8 + 5


def test_manifest_kernels_are_distinct_and_enough():
    names = [k.name for k in KERNELS]
    assert len(names) == len(set(names)) >= 20
    assert by_name("k_matmul").params == {"n": 200}


def test_prototype_extraction_every_kernel():
    for kernel in KERNELS:
        decl, ret = prototype((HERE / "kernels" / kernel.file).read_text(), kernel.name)
        assert decl.endswith(");") and kernel.name in decl and ret


def test_every_kernel_is_noinline_and_alone_in_its_file():
    for kernel in KERNELS:
        text = (HERE / "kernels" / kernel.file).read_text()
        assert text.count("__attribute__((noinline))") == 1, kernel.file


def test_codegen_flags_drop_io_and_emission():
    flags = ["/usr/bin/clang-19", "-O2", "-gline-tables-only", "-S", "-emit-llvm", "-o", "-", "-x", "c", "k.c"]
    assert run.codegen_flags(flags) == ["-O2", "-gline-tables-only"]


def test_reported_flags_found_at_either_level():
    assert run.reported_flags({"compile_flags": ["-O3"]}) == ["-O3"]
    assert run.reported_flags({"functions": [{"name": "f", "compile_flags": ["-O1"]}]}) == ["-O1"]
    assert run.reported_flags({"functions": [{"name": "f"}]}) is None


@needs_tools
def test_callgrind_ir_is_linear_in_n_and_timing_gives_samples(tmp_path, monkeypatch):
    monkeypatch.setattr(run, "BUILD", tmp_path)
    driver = run.build(run.DEFAULT_KERNEL_FLAGS)
    base = by_name("k_sum_n")
    irs = []
    for n in (40_000, 80_000, 160_000):
        kernel = type(base)(**{**base.__dict__, "params": {"n": n}})
        ir, callees = run.callgrind_ir(driver, kernel)
        assert callees == {}
        irs.append(ir)
    # A loop's Ir grows by the same amount per element, whatever the compiler's constant overhead.
    assert irs[2] - irs[1] == 2 * (irs[1] - irs[0]) and irs[1] > irs[0] > 0
    small = type(base)(**{**base.__dict__, "params": {"n": 10_000}})
    samples = run.time_ns(driver, small, 7)
    assert len(samples) == 7 and all(wall > 0 and cpu > 0 for wall, cpu in samples)


def test_render_with_a_synthetic_ccls_row():
    rows = []
    for i, kernel in enumerate(KERNELS[:4]):
        counts = {"int_add": 100.0 * (i + 1), "load.L1": 50.0 * (i + 1)}
        rows.append({"kernel": kernel.name, "shape": kernel.shape, "actual_trip": "", "callees": {},
                     "ir": 160 * (i + 1), "time_ms": 0.1 * (i + 1), "cycles": 2.5e5 * (i + 1), "cycles_wall": 3e5 * (i + 1),
                     "cycles_fastest": 2e5 * (4 - i),
                     "ccls": {"instructions": 150.0 * (i + 1), "CU": 300.0 * (i + 1), "assumptions": ["a"]},
                     "baselines": {label: fn(counts) for label, fn in run.BASELINES.items()}})
    summary = run.summarize(rows)
    assert summary["kernels"] == 4
    assert summary["instructions"]["ccls"]["median_abs_rel_err"] == pytest.approx(10 / 160)
    assert summary["time"]["ccls CU"]["spearman_rho"] == pytest.approx(1.0)
    assert summary["time_fastest"]["ccls CU"]["spearman_rho"] == pytest.approx(-1.0)  # each view its own truth
    assert summary["time_actual_trips"]["ccls CU"] == summary["time"]["ccls CU"]  # nothing to tell here
    rows[0]["ccls"]["CU_actual_trips"] = 1e9  # told a trip count, the first kernel becomes the costliest
    assert run.summarize(rows)["time_actual_trips"]["ccls CU"]["spearman_rho"] < 1.0
    rows[3]["actual_trip"], rows[3]["ccls"]["CU"] = "exits on data", 1.0  # mispredicted, and left out
    partial = run.summarize(rows)
    assert partial["time"]["ccls CU"]["spearman_rho"] < 1.0
    static = partial["time_static_trips"]["ccls CU"]
    assert (static["n"], static["spearman_rho"]) == (3, pytest.approx(1.0))
    rows[3]["actual_trip"], rows[3]["ccls"]["CU"] = "", 1200.0
    env = {"date": "d", "cpu_model": "cpu", "cpu_count": 2, "clang": "clang", "valgrind": "vg", "note": "shared VM"}
    text = run.render(rows, summary, env, ["-O2"], "test")
    assert "shared VM" in text and "B3 gas-like" in text and "-6.2%" in text
    assert "against the fastest repeat (thread CPU time) instead: ccls CU ρ -1" in text


def test_generated_driver_mentions_every_kernel():
    source = generate(HERE / "kernels")
    for kernel in KERNELS:
        assert f"run_{kernel.name}(" in source
