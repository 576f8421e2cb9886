"""Loops that descend a tree (one level a pass, from one of two children chosen by data) run
about log2 of its node count; a counter a loop of constant count steps up is bounded by that
count; a loop that leaves where the data decides mispredicts its exit once per entry. Inline C,
compiled by clang-19 as the C front end does."""
import shutil

import pytest

from ccls.counting import count_function
from ccls.polynomial import Polynomial
from tests.test_data_loops import analyse as analyse_c

pytestmark = pytest.mark.skipif(shutil.which("clang-19") is None and shutil.which("clang") is None,
                                reason="clang-19 is not installed (apt-get install clang-19)")

CODE = """
struct node { int key; struct node *left, *right; };
struct node *find(struct node *root, int key) {
  struct node *s = root;
  while (s != 0) {
    if (key < s->key) s = s->left;
    else if (key > s->key) s = s->right;
    else break;
  }
  return s;
}
unsigned char left_of[256], right_of[256], feature[256], threshold[256];
int classify(const unsigned char *x) {
  unsigned char id = 0;
  while (!(id & 0x80)) id = x[feature[id]] < threshold[id] ? left_of[id] : right_of[id];
  return id & 0x7f;
}
struct node *small_keys, *large_keys;
struct node *lookup(int key) {
  struct node *s = key < 0 ? small_keys : large_keys;
  while (s != 0) {
    if (key < s->key) s = s->left;
    else if (key > s->key) s = s->right;
    else break;
  }
  return s;
}
int next_of[256];
int chain(int i) { int n = 0; while (i >= 0) { i = next_of[i]; n++; } return n; }
long distinct(const long *freq, long *heap) {
  long n = 0;
  for (int i = 0; i < 256; ++i) if (freq[i]) heap[n++] = i;
  long t = 0;
  for (long j = 0; j < n; j++) t += heap[j];
  return t;
}
"""


@pytest.fixture(scope="module")
def functions():
    return analyse_c(CODE, "/tmp/ccls-test/tree_descents.c")


def trips(fn) -> list:
    return [(loop.trip_count.kind, loop.trip_count.iterations) for loop in fn.loops.values()]


def test_a_search_of_a_binary_tree_runs_log2_of_its_size(functions):
    assert trips(functions["find"]) == [("expected", Polynomial.symbol("log2(len(root))"))]
    assert any("descends the tree at root" in a for a in functions["find"].assumptions)


def test_a_decision_tree_in_index_tables_runs_the_bits_of_its_index(functions):
    assert trips(functions["classify"]) == [("expected", Polynomial.constant(8))]


def test_a_chain_through_one_table_is_a_list_not_a_tree(functions):
    assert [kind for kind, _ in trips(functions["chain"])] == ["unknown"]


def test_a_counter_stepped_up_in_a_loop_of_constant_count_is_bounded_by_it(functions):
    ceilings = functions["distinct"].value_ceilings
    assert ceilings["n"][0] == 256 and "at most 128 passes" in ceilings["n"][1]


def test_a_tree_descent_mispredicts_its_exit_once_per_entry(functions):
    counted = count_function(functions["classify"], None, lambda s: 1000.0)
    assert counted.counts["branch.mispredict"].constant_value() == pytest.approx(1.0)


def test_a_loop_whose_exit_is_missed_each_entry_overlaps_no_entries(functions):
    # the next tree's walk is fetched only once this one's mispredicted exit resolves
    from ccls.counting import _entry_overlap
    fn = functions["classify"]
    assert all(loop.id not in _entry_overlap(fn, {b.name: 1.0 for b in fn.blocks}, 320) for loop in fn.loops.values())


def test_the_nodes_of_a_tree_of_the_default_size_bound_its_chased_loads(functions):
    # an unnamed root: a tree of the default 100 nodes, log2(100) levels, 100 lines at most
    fn = functions["lookup"]
    [(kind, levels)] = trips(fn)
    assert kind == "expected" and float(levels.constant_value()) == pytest.approx(6.644, abs=1e-3)
    chased = [i.access for b in fn.blocks if b.loop for i in b.instructions
              if i.access is not None and i.access.pattern == "pointer-chase"]
    assert chased and all(a.span_bytes == 100 * 64 for a in chased)
