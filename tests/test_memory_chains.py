"""Loop-carried dependencies through memory: found in the IR, priced as a latency chain."""
from __future__ import annotations

import shutil

import pytest

from ccls.counting import count_function
from ccls.frontends import SourceFile
from ccls.frontends.c_family import analyze_with_clang
from ccls.options import AnalysisOptions
from ccls.tables import load_tables

pytestmark = pytest.mark.skipif(shutil.which("clang-19") is None, reason="clang-19 not installed")

# gesummv's inner loop: tmp and y may alias A, B and x, so each iteration loads tmp[i] and y[i]
# back from where the previous one stored them.
SUMS = """
void sums(int n, double *A, double *B, double *tmp, double *x, double *y) {
  for (int i = 0; i < n; i++) {
    tmp[i] = 0; y[i] = 0;
    for (int j = 0; j < n; j++) {
      tmp[i] = A[i * n + j] * x[j] + tmp[i];
      y[i] = B[i * n + j] * x[j] + y[i];
    }
  }
}
void local_sum(int n, const double *A, double *out) {
  for (int i = 0; i < n; i++) {
    double s = 0;
    for (int j = 0; j < n; j++)
      s += A[i * n + j];
    out[i] = s;
  }
}
void copy_and_count(long n, const long *a, long *o, long *count) {
  for (long i = 0; i < n; i++) {
    o[i] = a[i];
    if (a[i] > 0)
      *count = *count + 1;
  }
}
void copy_and_sum(long n, const long *a, long *o, long *sum) {
  for (long i = 0; i < n; i++) {
    o[i] = a[i];
    *sum = *sum + a[i];
  }
}
"""


def _functions(code: str, flags: list[str] | None = None):
    result = analyze_with_clang(SourceFile("/tmp/ccls-test/chains.c", code), AnalysisOptions(), "c", flags or ["-O3"])
    return {fn.name: fn for fn in result.functions}


def test_an_accumulator_kept_in_memory_is_a_chain_per_address_and_one_in_a_register_is_none():
    functions = _functions(SUMS)
    [inner] = [l for l in functions["sums"].loops.values() if l.memory_chains]
    assert len(inner.memory_chains) == 2  # tmp[i] and y[i], side by side
    assert sorted(chain.line for chain in inner.memory_chains) == [6, 7]
    for chain in inner.memory_chains:
        assert chain.floating_point
        assert all(classes == ("fp_fma",) for _, classes in chain.links)  # llvm.fmuladd between load and store
    assert not any(l.memory_chains for l in functions["local_sum"].loops.values())
    [counter] = [l for l in functions["copy_and_count"].loops.values() if l.memory_chains]
    [chain] = counter.memory_chains
    assert not chain.floating_point and chain.links  # unrolled copies: one link each
    assert all(block.startswith("if.then") and classes == ("int_add",) for block, classes in chain.links)


def test_the_chain_sets_the_pace_of_a_loop_whose_instructions_alone_would_run_faster():
    cache = load_tables().cost["x86_64"].cache
    forward_int, forward_fp = cache.store_forward_cycles
    latency = dict(cache.latencies)
    functions = _functions(SUMS)
    values = {"n": 500.0}
    sums = count_function(functions["sums"], cache, values.__getitem__)
    per_iteration = sums.machine_cycles.evaluate(values) / 500**2
    chain = forward_fp + latency["fp_fma"]
    assert chain == pytest.approx(12.0, abs=2)  # measured: 11 cycles per iteration of t[0] = t[0] + a[i]
    assert chain <= per_iteration < chain + 1.5
    assert any("a chain through memory" in a and "line 6" in a for a in sums.assumptions)
    local = count_function(functions["local_sum"], cache, values.__getitem__)
    assert local.machine_cycles.evaluate(values) / 500**2 < chain / 2  # a register chain, as simulated
    assert not any("chain through memory" in a for a in local.assumptions)


def test_a_link_on_one_arm_of_a_branch_counts_by_the_share_of_iterations_that_take_it():
    cache = load_tables().cost["x86_64"].cache
    functions = _functions(SUMS)
    [loop] = [l for l in functions["copy_and_count"].loops.values() if l.memory_chains]
    assert all(block != loop.id for block, _ in loop.memory_chains[0].links)  # on the branch's arm
    values = {"n": 1000.0}
    per_iteration = {name: count_function(functions[name], cache, values.__getitem__).machine_cycles.evaluate(values)
                     / 1000 for name in ("copy_and_count", "copy_and_sum")}
    forward_int = cache.store_forward_cycles[0]
    assert per_iteration["copy_and_sum"] >= forward_int + 1  # every iteration: forward + add
    # a branch on data is taken by half the iterations: half a round trip each, on average
    assert per_iteration["copy_and_count"] < per_iteration["copy_and_sum"] - 2
