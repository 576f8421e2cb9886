"""Checks of the real-programs benchmark's own machinery (not of ccls, and without the suites):
callgrind output parsing, the TSVC driver's generation and output, Embench's timing line and nm
parsing, PolyBench's kernel list, timed call, timer patch and compile database, statistics, worst-ratio ranking, caching keys and the --markdown table.
Run: python3 -m pytest bench/realprograms/test_bench_realprograms.py -q
"""
from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import embench  # noqa: E402
import harness as H  # noqa: E402
import polybench  # noqa: E402
import run  # noqa: E402
import tsvc  # noqa: E402

# A callgrind output file as callgrind 3.19 writes it (name compression, a call whose cost line is
# inclusive, a subposition, a client-request dump description).
CALLGRIND_OUT = """# callgrind format
version: 1
creator: callgrind-3.19.0
pid: 4242
cmd:  ./tsvc_driver s000
part: 1

desc: I1 cache:
desc: Timerange: Basic block 10 - 20
desc: Trigger: Client Request: s000

positions: line
events: Ir
summary: 1130

ob=(1) /tmp/tsvc_driver
fl=(1) ???
fn=(1) s000
0 100
+2 900
cfl=(1)
cfn=(2) dummy
calls=10 0
0 40
* 50
fn=(2)
0 40
fn=(3) gettimeofday
0 20
cfn=(1)
calls=1 0
0 1
"""

TSVC_MAIN = """
real_t s000(struct args_t * func_args) { return 0; }

int main(int argc, char ** argv){
    int n1 = 1;
    int n3 = 1;
    int* ip;
    real_t s1,s2;
    init(&ip, &s1, &s2);
    printf("Loop \\tTime(sec) \\tChecksum\\n");

    time_function(&s000, NULL);
    time_function(&s122, &(struct{int a;int b;}){n1, n3});
    time_function(&s491, ip);

    return EXIT_SUCCESS;
}
"""


def test_parse_callgrind_self_cost_calls_and_names():
    prof = H.parse_callgrind(CALLGRIND_OUT)
    # s000's self cost: 100 + 900 + 50; the 40 after `calls=` is the call's inclusive cost.
    assert prof.self_ir == {"s000": 1050, "dummy": 40, "gettimeofday": 20}
    assert prof.calls == {"dummy": 10, "s000": 1}
    assert prof.description == "Client Request: s000"
    assert prof.totals == 1130


def test_tsvc_main_is_replayed():
    kernels, prelude = tsvc.kernels_and_prelude(TSVC_MAIN)
    assert kernels == [("s000", "NULL"), ("s122", "&(struct{int a;int b;}){n1, n3}"), ("s491", "ip")]
    assert any("init(&ip, &s1, &s2);" in line for line in prelude)
    assert not any("printf" in line for line in prelude)
    source = tsvc.driver_source(kernels, prelude)
    assert 'if (!strcmp(k, "s000")) run("s000", &s000, NULL);' in source
    assert 'else if (!strcmp(k, "s491")) run("s491", &s491, ip);' in source
    assert "int gettimeofday(" in source and "CALLGRIND_DUMP_STATS_AT(current)" in source


def test_tsvc_sample_lines():
    text = "noise\n s000\ttsvc s000 2 10052668 2027492 5.12067e+08\ntsvc s176 2 2244 961 32000\ntsvc bad line\n"
    assert tsvc.parse_samples(text) == [("s000", 2, 10052668, 2027492), ("s176", 2, 2244, 961)]


@pytest.mark.skipif(not shutil.which(H.CLANG), reason="needs clang-19")
def test_tsvc_driver_compiles_and_times_the_region(tmp_path):
    # A two-kernel stand-in for tsvc.c: the driver's gettimeofday must see exactly two calls.
    (tmp_path / "common.h").write_text(
        "#include <sys/time.h>\nstruct args_t { struct timeval t1; struct timeval t2; void * __restrict__ arg_info; };\n"
        "typedef float real_t;\nvoid init(int** ip, real_t* s1, real_t* s2);\n")
    (tmp_path / "k.c").write_text(
        "#include \"common.h\"\nvolatile float sink;\n"
        "void init(int** ip, real_t* s1, real_t* s2) { static int x[4]; *ip = x; *s1 = *s2 = 1; }\n"
        "real_t s000(struct args_t *a) { gettimeofday(&a->t1, 0); for (int i = 0; i < 100000; i++) sink += i;"
        " gettimeofday(&a->t2, 0); return 0; }\n"
        "real_t s491(struct args_t *a) { int *ip = a->arg_info; gettimeofday(&a->t1, 0); sink = ip[0];"
        " gettimeofday(&a->t2, 0); return 1; }\n")
    kernels, prelude = tsvc.kernels_and_prelude(
        "int main(){\n int* ip;\n real_t s1,s2;\n init(&ip, &s1, &s2);\n"
        " time_function(&s000, NULL);\n time_function(&s491, ip);\n return 0;\n}\n")
    (tmp_path / "driver.c").write_text(tsvc.driver_source(kernels, prelude))
    exe = tmp_path / "d"
    subprocess.run([H.CLANG, "-std=c99", "-O1", "-I", str(tmp_path), str(tmp_path / "driver.c"), str(tmp_path / "k.c"),
                    "-o", str(exe)], check=True)
    out = subprocess.run([str(exe), "s000", "s491", "s000"], capture_output=True, text=True, check=True).stdout
    samples = tsvc.parse_samples(out)
    assert [s[0] for s in samples] == ["s000", "s491", "s000"]
    assert all(s[1] == 2 and s[2] >= 0 and s[3] >= 0 for s in samples)


def test_embench_timing_and_nm_parsing():
    assert embench.parse_timing("embench 5800123 5790000\n") == (5800123, 5790000)
    assert embench.parse_timing("nothing\n") is None
    nm = ("\n/x/crc_32.o:\n0000000000000000 T benchmark\n0000000000000010 t benchmark_body\n"
          "                 U rand_beebs\n0000000000000000 D crc_32_tab\n0000000000000020 W weak_fn\n")
    assert embench.parse_nm(nm) == ["benchmark", "benchmark_body", "weak_fn"]


def test_summaries_ratio_and_baselines():
    s = H.summarize_pairs({"m": [2, 4, 6, None], "half": [0.5, 1, 1.5, 2]}, [1, 2, 3, 4])
    assert s["m"]["n"] == 3 and s["m"]["median_ratio"] == pytest.approx(2.0)
    assert s["m"]["best_scale"] == pytest.approx(0.5) and s["m"]["median_abs_rel_err_scaled"] == pytest.approx(0)
    assert s["half"]["spearman_rho"] == pytest.approx(1.0) and s["half"]["median_abs_rel_err"] == pytest.approx(0.5)
    record = H.ccls_record({"instructions": 10, "metrics": {"CU": 20}, "inclusive_metrics": None,
                            "counts": {"load.L1": 2, "int_add": 3}})
    assert record["baselines"]["B1 uniform"] == 5 and record["baselines"]["B2 mem×10"] == 23
    assert record["CU_inclusive"] is None


def test_worst_by_ratio_is_symmetric_in_log():
    rows = [{"name": "a", "p": 10, "m": 1}, {"name": "b", "p": 1, "m": 20}, {"name": "c", "p": 1, "m": 1},
            {"name": "d", "p": 0, "m": 1}]
    worst = H.worst_by_ratio(rows, lambda r: r["p"], lambda r: r["m"], count=2)
    assert [w[0] for w in worst] == ["b", "a"] and worst[0][3] == pytest.approx(0.05)


def test_targets():
    good = {"ccls": {"n": 10, "spearman_rho": 0.99, "median_abs_rel_err": 0.05}}
    assert H.target_verdict("instructions", good).startswith("MET")
    time_block = {"ccls CU": {"n": 10, "spearman_rho": 0.96}, H.B4: {"spearman_rho": 0.95}}
    assert H.target_verdict("time", time_block).startswith("NOT MET")  # not 0.02 above B4
    time_block[H.B4]["spearman_rho"] = 0.90
    assert H.target_verdict("time", time_block).startswith("MET")


def test_cache_key_follows_content_and_config(tmp_path):
    f = tmp_path / "a.c"
    f.write_text("int x;")
    k1 = H.tree_digest([f], {"flags": ["-O3"]})
    assert k1 == H.tree_digest([f], {"flags": ["-O3"]})
    assert k1 != H.tree_digest([f], {"flags": ["-O2"]})
    f.write_text("int y;")
    assert k1 != H.tree_digest([f], {"flags": ["-O3"]})


def test_compile_db_shape(tmp_path):
    db = H.write_compile_db(tmp_path / "build", [(tmp_path / "src" / "k.c", ["-O3"])])
    entry = json.loads(db.read_text())[0]
    assert entry["file"].endswith("k.c") and entry["arguments"][1] == "-O3" and "-c" in entry["arguments"]


def test_markdown_and_suite_skip(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(run, "RESULTS", tmp_path)
    block = {"n": 5, "spearman_rho": 0.9, "kendall_tau": 0.8, "median_abs_rel_err": 0.1, "median_ratio": 1.1,
             "median_abs_rel_err_scaled": 0.05, "best_scale": 1.0}
    result = {"suite": "x", "measured": {"environment": {"date": "2026-11-24T00:00:00"}},
              "summary": {"instructions": {"ccls": block, "B1 uniform": block, "B2 mem×10": block,
                                           "B3 gas-like": block}}}
    (tmp_path / "x.json").write_text(json.dumps(result))
    text = run.markdown()
    assert "| x (ccls ?) | instructions vs callgrind Ir | 5 | 0.900 |" in text
    assert run.main(["--suite", "tsvc", "--path", str(tmp_path / "absent"), "--work", str(tmp_path / "w")]) == 0
    assert "suite not found" in capsys.readouterr().out
    assert math.isnan(H.summarize_pairs({"m": [1]}, [1])["m"]["spearman_rho"])


# PolyBench/C 4.2.1's utilities/benchmark_list (abridged) and a kernel's main, as shipped.
POLYBENCH_LIST = """./datamining/correlation/correlation.c
./linear-algebra/blas/gemm/gemm.c

./stencils/jacobi-1d/jacobi-1d.c
"""

POLYBENCH_MAIN = """
static
void kernel_jacobi_1d(int tsteps, int n, DATA_TYPE POLYBENCH_1D(A,N,n), DATA_TYPE POLYBENCH_1D(B,N,n))
{ /* ... */ }

int main(int argc, char** argv)
{
  int n = N;
  init_array (n, POLYBENCH_ARRAY(A), POLYBENCH_ARRAY(B));

  /* Start timer. */
  polybench_start_instruments;

  /* Run kernel. */
  kernel_jacobi_1d(tsteps, n, POLYBENCH_ARRAY(A), POLYBENCH_ARRAY(B));

  /* Stop and print timer. */
  polybench_stop_instruments;
  polybench_print_instruments;
  return 0;
}
"""

# The timer functions of utilities/polybench.c as shipped, with stand-ins for what they call.
POLYBENCH_C = """#include <stdio.h>
#include <time.h>
#include <sys/time.h>
double polybench_t_start, polybench_t_end;
static double rtclock() { struct timeval Tp; gettimeofday (&Tp, NULL); return (Tp.tv_sec + Tp.tv_usec * 1.0e-6); }
void polybench_prepare_instruments() {}

void polybench_timer_start()
{
  polybench_prepare_instruments ();
#ifndef POLYBENCH_CYCLE_ACCURATE_TIMER
  polybench_t_start = rtclock ();
#else
  polybench_c_start = rdtsc ();
#endif
}


void polybench_timer_stop()
{
#ifndef POLYBENCH_CYCLE_ACCURATE_TIMER
  polybench_t_end = rtclock ();
#else
  polybench_c_end = rdtsc ();
#endif
}


void polybench_timer_print()
{
  printf ("%0.6lf\\n", polybench_t_end - polybench_t_start);
}
"""


def test_polybench_kernel_list_and_timed_call():
    assert polybench.parse_benchmark_list(POLYBENCH_LIST) == [
        "datamining/correlation/correlation.c", "linear-algebra/blas/gemm/gemm.c", "stencils/jacobi-1d/jacobi-1d.c"]
    # The comment between the markers (`/* Run kernel. */`) names no function.
    assert polybench.timed_function(POLYBENCH_MAIN) == "kernel_jacobi_1d"
    with pytest.raises(H.BenchError):
        polybench.timed_function("int main() { kernel_x(); }")


def test_polybench_timer_patch_opens_after_the_flush_and_closes_before_the_clock():
    patched = polybench.patch_polybench_c(POLYBENCH_C)
    start = patched[patched.index("void polybench_timer_start()"):]
    start = start[:start.index("\n}\n")]
    assert start.rstrip().endswith("#endif\n  ccls_region_start ();")  # after prepare (cache flush) and rtclock
    stop = patched[patched.index("void polybench_timer_stop()"):]
    assert stop.startswith("void polybench_timer_stop()\n{\n  ccls_region_stop ();\n#ifndef")
    assert patched.index("static void ccls_region_stop") < patched.index("void polybench_timer_start()")
    assert polybench.REGION in patched and patched.count("CALLGRIND_TOGGLE_COLLECT;") == 2
    with pytest.raises(H.BenchError):
        polybench.patch_polybench_c("void polybench_timer_print() {}")


def test_polybench_timing_output():
    out = "polybench-region 2210045 1893020\n0.002215\n"
    assert polybench.parse_timing(out) == (2210045, 1893020, 0.002215)
    assert polybench.parse_timing("0.002215\n") is None
    assert polybench.parse_timing("polybench-region 5 4\n") == (5, 4, None)


@pytest.mark.skipif(not shutil.which(H.CLANG), reason="needs clang-19")
def test_polybench_patched_timer_compiles_and_times_the_region(tmp_path):
    (tmp_path / "polybench_timed.c").write_text(polybench.patch_polybench_c(POLYBENCH_C))
    (tmp_path / "k.c").write_text(
        "void polybench_timer_start(); void polybench_timer_stop(); void polybench_timer_print();\n"
        "volatile double sink;\nint main() { polybench_timer_start();\n"
        "for (int i = 0; i < 100000; i++) sink += i;\npolybench_timer_stop(); polybench_timer_print(); return 0; }\n")
    exe = tmp_path / "k"
    subprocess.run([H.CLANG, "-O2", str(tmp_path / "k.c"), str(tmp_path / "polybench_timed.c"), "-o", str(exe)],
                   check=True)
    out = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout
    wall_ns, cpu_ns, seconds = polybench.parse_timing(out)
    assert wall_ns > 0 and cpu_ns > 0 and seconds is not None


def test_polybench_compile_db_entries(tmp_path):
    kernels = polybench.parse_benchmark_list(POLYBENCH_LIST)
    entries = polybench.compile_entries(tmp_path, kernels, "MEDIUM_DATASET")
    gemm_source, gemm_flags = entries[1]
    assert gemm_source == tmp_path / "linear-algebra/blas/gemm/gemm.c"
    assert gemm_flags == ["-O2", "-DPOLYBENCH_USE_C99_PROTO", "-DPOLYBENCH_TIME", "-DMEDIUM_DATASET",
                          f"-I{tmp_path / 'utilities'}", f"-I{tmp_path / 'linear-algebra/blas/gemm'}"]
    assert entries[-1][0] == tmp_path / "utilities" / "polybench.c"
    assert not any("gemm" in flag for flag in entries[-1][1])
    db = json.loads(H.write_compile_db(tmp_path / "build", entries).read_text())
    assert len(db) == 4 and db[1]["arguments"][:7] == [H.CLANG, *gemm_flags]
    assert db[1]["arguments"][-3:-1] == [str(gemm_source), "-o"]


def test_polybench_absent_is_skipped(tmp_path, capsys):
    assert run.main(["--suite", "polybench", "--path", str(tmp_path / "absent"), "--work", str(tmp_path / "w")]) == 0
    assert "polybench: suite not found" in capsys.readouterr().out
    # --suite all looks for a `polybench` folder under --suites-dir.
    assert run.REGISTRY["polybench"][0] == "polybench"


def test_llvm_copies_of_a_function_count_as_the_function():
    measured = {"WikiSort": {"self_ir": 10, "calls": 1}, "WikiSort.specialized.1": {"self_ir": 90, "calls": 2},
                "Rotate": {"self_ir": 5, "calls": 5}}
    assert H.by_source_function(measured) == {"WikiSort": {"self_ir": 100, "calls": 3},
                                              "Rotate": {"self_ir": 5, "calls": 5}}
