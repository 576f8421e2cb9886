"""Dominance on inline graphs: the one implementation the LLVM, PTX and bytecode readers share."""
from ccls.readers.dominance import dominator_sets, immediate_dominators


def graph(edges: dict):
    return lambda node: edges.get(node, ())


def test_a_diamond_joins_at_the_entry():
    edges = {"entry": ["a", "b"], "a": ["join"], "b": ["join"]}
    assert immediate_dominators("entry", graph(edges)) == {"entry": "entry", "a": "entry", "b": "entry",
                                                           "join": "entry"}


def test_a_loop_body_is_dominated_by_its_header_and_unreachable_nodes_are_left_out():
    # 0 → 1 (header) → 2 → 3 → 1 (back edge); 1 → 4 (exit); 5 → 4 is never reached.
    edges = {0: [1], 1: [2, 4], 2: [3], 3: [1], 5: [4]}
    idom = immediate_dominators(0, graph(edges))
    assert idom == {0: 0, 1: 0, 2: 1, 3: 2, 4: 1}
    assert dominator_sets(idom) == {0: {0}, 1: {0, 1}, 2: {0, 1, 2}, 3: {0, 1, 2, 3}, 4: {0, 1, 4}}


def test_a_second_way_in_moves_the_dominator_up():
    # 0 → 1 → 3 and 0 → 2 → 3 → 4, plus 1 → 4: 4 is reached around 3, so only 0 dominates it.
    edges = {0: [1, 2], 1: [3, 4], 2: [3], 3: [4]}
    assert immediate_dominators(0, graph(edges)) == {0: 0, 1: 0, 2: 0, 3: 0, 4: 0}


def test_duplicate_edges_and_self_loops_change_nothing():
    edges = {"e": ["x", "x"], "x": ["x", "y"], "y": []}
    assert immediate_dominators("e", graph(edges)) == {"e": "e", "x": "e", "y": "x"}
