"""Checks of the real-programs benchmark's own machinery (not of ccls, and without the suites):
callgrind output parsing, the TSVC driver's generation and output, Embench's timing line and nm
parsing, statistics, worst-ratio ranking, caching keys and the --markdown table.
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
