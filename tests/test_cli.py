"""`ccls analyze` end to end: real clang, the bundled tables, the JSON contract, bad input."""
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(shutil.which("clang-19") is None, reason="clang-19 is not installed")


@pytest.fixture(autouse=True)
def _own_cache(tmp_path, monkeypatch):
    """Each test's count cache in its own folder: never the user's, never another test's."""
    monkeypatch.setenv("CCLS_CACHE_DIR", str(tmp_path / "ccls-cache"))


def run(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "ccls", *args], capture_output=True, text=True, timeout=300, cwd=cwd)


def test_json_contract_on_a_file_with_a_call(tmp_path):
    src = tmp_path / "calls.c"
    src.write_text("__attribute__((noinline)) double leaf(const double *a, long n) { double s = 0; for (long i = 0; i < n; i++) s += a[i] / 3.0; return s; }\n"
                   "double root(const double *a, long n) { return leaf(a, n) + leaf(a, n / 2) + puts_like(); }\n"
                   "double puts_like(void);\n".replace("double root", "double puts_like(void);\ndouble root"))
    done = run("analyze", str(src), "--format", "json", "--param", "n=2000", "--profile", "HPC")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["schema"] == "ccls.analysis/1" and doc["profile"] == "HPC" and doc["table_version"]
    by_name = {f["name"]: f for f in doc["functions"]}
    leaf, root = by_name["leaf"], by_name["root"]
    for key in ("name", "file", "line", "end_line", "language", "static_counts", "counts", "instructions",
                "metrics", "cost_expression", "big_o", "score", "grade", "findings", "assumptions"):
        assert key in leaf
    assert leaf["big_o"] == "O(n)" and "n=2000" in " ".join(leaf["assumptions"])
    assert set(leaf["metrics"]) == {"CU", "EU", "CO2", "USD"} and leaf["metrics"]["CU"] > 0
    assert [f["kind"] for f in leaf["findings"]] == ["division-in-loop"]
    # root calls leaf (inclusive cost) and an unknown external function
    assert root["inclusive_metrics"]["CU"] > root["metrics"]["CU"] + leaf["metrics"]["CU"]
    assert root["unknown_callees"] == ["puts_like"]
    assert leaf["compile_flags"] == ["--target=x86_64-unknown-linux-gnu", "-O2"]  # no compile database here


def test_json_names_the_compile_databases_flags(tmp_path):
    (tmp_path / "compile_flags.txt").write_text("-O3\n-DSCALE=3\n")
    src = tmp_path / "k.c"
    src.write_text("long k(const long *a, long n) { long s = 0; for (long i = 0; i < n; i++) s += a[i] * SCALE; return s; }\n")
    done = run("analyze", str(src), "--format", "json")
    assert done.returncode == 0, done.stderr
    [fn] = json.loads(done.stdout)["functions"]
    # The program is built at -O3: that is the level analysed, not ccls's default -O2.
    assert "-DSCALE=3" in fn["compile_flags"] and fn["compile_flags"][-1] == "-O3"
    assert " -O3; flags from compile_flags.txt" in fn["assumptions"][0]


def test_bad_inputs_give_clear_errors_and_exit_codes(tmp_path):
    broken = tmp_path / "broken.c"
    broken.write_text("int f( {\n")
    binary = tmp_path / "blob.c"
    binary.write_bytes(b"\x00\x01\x02ELF")
    done = run("analyze", str(broken), str(binary), str(tmp_path / "missing.c"), "--format", "json")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    errors = {e["file"].rsplit("/", 1)[-1]: e for e in json.loads(done.stdout)["errors"]}
    assert errors["broken.c"]["line"] == 1 and "error" in errors["broken.c"]["message"]
    assert "binary" in errors["blob.c"]["message"]
    assert "no such file" in errors["missing.c"]["message"]
    bad_profile = run("analyze", str(broken), "--profile", "NOPE")
    assert bad_profile.returncode == 2 and "unknown profile" in bad_profile.stderr and "Traceback" not in bad_profile.stderr


@pytest.mark.parametrize("option,words", [
    (["--default-trip-count=-5"], "expected a whole number from 1 to"),
    (["--default-trip-count", "2.5"], "expected a whole number from 1 to"),
    (["--param", "n=abc"], "expected NAME=NUMBER, got 'n=abc'"),
    (["--param", "n=nan"], "expected NAME=NUMBER"),
    (["--param", "=5"], "expected NAME=NUMBER"),
    (["--timeout", "0"], "expected a number from 0.001 to 86400, got 0"),
])
def test_bad_option_values_are_usage_errors(tmp_path, option, words):
    source = tmp_path / "k.c"
    source.write_text("int k(int n) { return n; }\n")
    done = run("analyze", str(source), *option)
    assert done.returncode == 2 and words in done.stderr and "Traceback" not in done.stderr


def test_table_output_lists_functions_with_grades():
    done = run("analyze", "examples/kernels.c", cwd=str(__import__("pathlib").Path(__file__).parents[1]))
    assert done.returncode == 0, done.stderr
    assert "sum_cols" in done.stdout and "miss-heavy-loop" in done.stdout and "grade" in done.stdout


def test_tiny_parameter_values_cost_what_runs_and_say_so():
    # A vector loop's count n/4 - 3/4 is below zero at n = 1: the code does not run, it is not negative.
    done = run("analyze", "examples/kernels.c", "--format", "json", "--param", "n=1",
               cwd=Path(__file__).parents[1])
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    functions = json.loads(done.stdout)["functions"]
    assert all(v >= 0 for f in functions for v in list(f["counts"].values()) + list(f["metrics"].values()))
    assert any("is below zero at these values, so it does not run here" in a
               for f in functions for a in f["assumptions"])


def test_a_loop_that_does_not_run_at_the_evaluation_point_leaves_the_rest_of_the_function_costed(tmp_path):
    # adler32's shape: blocks of 5552 bytes, then a byte-at-a-time tail. At len = 1000 the blocks'
    # loop does not run (its count 0.00018·len − 0.5 is below zero there); it used to cancel the
    # tail's cost to CU 0. Now the tail alone is counted, and the assumption names the loop.
    (tmp_path / "adler.c").write_text("""
unsigned long sum_blocks(const unsigned char *buf, unsigned long len) {
    unsigned long a = 1, b = 0;
    while (len >= 5552) {
        len -= 5552;
        for (unsigned n = 0; n < 5552; n++) { a += *buf++; b += a; }
        a %= 65521; b %= 65521;
    }
    while (len--) { a += *buf++; b += a; }
    return a | (b << 16);
}
""")
    done = run("analyze", str(tmp_path / "adler.c"), "--format", "json", "--param", "len=1000", "--no-cache")
    assert done.returncode == 0, done.stderr
    [fn] = json.loads(done.stdout)["functions"]
    assert fn["metrics"]["CU"] > 100 and fn["instructions"] > 500 and fn["big_o"] == "O(len)"
    assert any(a.startswith(("loop at line 4:", "loop at line 5:")) and "does not run here" in a
               for a in fn["assumptions"])
    assert not any("fall below zero" in a for a in fn["assumptions"])


def test_relative_include_paths_in_flags_are_read_from_the_working_directory(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "k.h").write_text("#define K 3\n")
    (tmp_path / "src" / "main.c").write_text('#include "k.h"\nint f(int n) { return n * K; }\n')
    done = run("analyze", "src/main.c", "--flags=-Iinc", cwd=str(tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_single_header_implementation_file_analyses_the_header_it_brings_into_existence(tmp_path):
    (tmp_path / "lib.h").write_text("long lib_sum(const long *a, long n);\nstatic inline long twice(long x) { return 2 * x; }\n"
                                    "#ifdef LIB_IMPLEMENTATION\nlong lib_sum(const long *a, long n) { long s = 0;\n"
                                    " for (long i = 0; i < n; i++) s += twice(a[i]);\n return s; }\n#endif\n")
    (tmp_path / "impl.c").write_text('#define LIB_IMPLEMENTATION\n#include "lib.h"\n')
    (tmp_path / "user.c").write_text('#include "lib.h"\nlong use(long x) { return twice(x) + 1; }\n')
    done = run("analyze", "impl.c", "user.c", "--format", "json", "--no-cache", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    functions = {(Path(f["file"]).name, f["name"]) for f in json.loads(done.stdout)["functions"]}
    # The implementation's function, where it is written; a file with functions of its own keeps
    # only those (the header's inline helpers are costed where they are used).
    assert ("lib.h", "lib_sum") in functions and ("user.c", "use") in functions
    assert not [name for file, name in functions if file == "impl.c"]
    assert [name for file, name in functions if file == "user.c"] == ["use"]


@pytest.mark.parametrize("arch", ["x86_64", "aarch64"])
def test_inline_assembly_is_analysed_not_a_crash(tmp_path, arch):
    """LLVM parses inline assembly when it lowers a module; without the target's assembly
    parser it aborted the whole process. The native one is set up; another target's inline
    assembly is not lowered (counts still come from the IR)."""
    source = tmp_path / "asm.c"
    source.write_text("static inline unsigned long rotl(unsigned long x) { __asm__(\"rolq $3, %0\" : \"+r\"(x)); "
                      "return x; }\nunsigned long mix(const unsigned long *a, long n) {\n  unsigned long h = 0;\n"
                      "  for (long i = 0; i < n; i++)\n    h = rotl(h ^ a[i]);\n  return h;\n}\n")
    result = run("analyze", str(source), "--arch", arch, "--format", "json", "--no-cache")
    assert result.returncode == 0, result.stderr
    [mix] = [f for f in json.loads(result.stdout)["functions"] if f["name"] == "mix"]
    assert "·n" in mix["cost_expression"]  # the loop counted


def test_inclusive_costs_of_a_recursive_cycle_do_not_depend_on_the_order_of_functions(tmp_path):
    # is_even and is_odd call each other; each also calls a costly leaf. Each one's inclusive cost
    # is its own and its leaf's (the cycle cut: the recursion's depth is unknown), whichever comes
    # first in the file; a caller outside the cycle includes both.
    leaf = ("__attribute__((noinline)) double leaf(const double *a, int n) "
            "{ double s = 0; for (int i = 0; i < n; i++) s += a[i] / 3.0; return s; }\n")
    even = ("__attribute__((noinline)) double is_even(const double *a, int n) "
            "{ return n <= 0 ? 1.0 : leaf(a, 64) + is_odd(a, n - 1); }\n")
    odd = ("__attribute__((noinline)) double is_odd(const double *a, int n) "
           "{ return n <= 0 ? 0.0 : leaf(a, 32) + is_even(a, n - 1); }\n")
    head = "double is_odd(const double *a, int n);\ndouble is_even(const double *a, int n);\n"
    inclusive = []
    for name, order in (("one.c", (leaf, even, odd)), ("two.c", (leaf, odd, even))):
        src = tmp_path / name
        src.write_text(head + "".join(order))
        done = run("analyze", str(src), "--format", "json")
        assert done.returncode == 0, done.stderr
        by_name = {f["name"]: f for f in json.loads(done.stdout)["functions"]}
        inclusive.append({fn: by_name[fn]["inclusive_metrics"]["CU"] for fn in ("is_even", "is_odd")})
        for fn in ("is_even", "is_odd"):
            assert by_name[fn]["inclusive_metrics"]["CU"] == pytest.approx(
                by_name[fn]["metrics"]["CU"] + by_name["leaf"]["metrics"]["CU"])
    assert inclusive[0] == pytest.approx(inclusive[1])


def test_the_command_line_and_its_workers_collect_garbage_less_often_than_the_default():
    import gc

    from ccls.cli import main
    from ccls.collection import THRESHOLDS
    from ccls.service.batch import _start_worker

    before = gc.get_threshold()
    try:
        with pytest.raises(SystemExit):
            main(["--version"])
        assert gc.get_threshold() == THRESHOLDS and THRESHOLDS[0] > 700  # CPython's default: 700
        gc.set_threshold(*before)
        _start_worker(None)  # a spawned worker
        assert gc.get_threshold() == THRESHOLDS
    finally:
        gc.set_threshold(*before)
