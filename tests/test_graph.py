"""[Jain12, §3–6] graph lemmas on random trees (hypothesis)."""
from itertools import combinations

import pytest
from hypothesis import given, settings, strategies as st

from soadyn.graph import (AggregationError, Digraph, aggregation_subgraph, check_aggregation_condition,
                          contract, induced_subgraph, parent_nodes, partition, path_induced_subgraph,
                          related, satisfies_aggregation_condition, spanning_tree, unrelated)

SETTINGS = settings(max_examples=60, deadline=None)


@st.composite
def tree_and_subset(draw, max_nodes=9):
    n = draw(st.integers(1, max_nodes))
    parents = [draw(st.integers(-1, i - 1)) for i in range(n)]
    T = Digraph.from_parents(parents)
    nodes = draw(st.sets(st.integers(0, n - 1), min_size=1))
    return T, nodes


def brute_path_nodes(T, S):
    """Nodes k with i ⪯ k ⪯ j for some i, j in S, by direct enumeration."""
    out = set()
    for k in T.nodes:
        up = any(k == i or k in T.descendants(i) for i in S)
        down = any(k == j or j in T.descendants(k) for j in S)
        if up and down:
            out.add(k)
    return out


@SETTINGS
@given(tree_and_subset())
def test_containments_and_path_induced(data):
    """S ⊆ S_I ⊆ S_P (eq. 21); S_P holds exactly the nodes on paths between S's nodes."""
    T, nodes = data
    S = Digraph(nodes)
    SI, SP = induced_subgraph(T, S), path_induced_subgraph(T, S)
    assert S <= SI <= SP <= T
    assert SI.nodes == S.nodes
    assert SP.nodes == brute_path_nodes(T, nodes)
    assert path_induced_subgraph(T, SP) == SP


@SETTINGS
@given(tree_and_subset())
def test_lemma1_partition(data):
    """Lemma 1: S, C, P partition the nodes and C, P are path-induced; no edge from P into C."""
    T, nodes = data
    S, C, P = partition(T, path_induced_subgraph(T, nodes))
    assert S.nodes | C.nodes | P.nodes == T.nodes
    assert not (S.nodes & C.nodes or S.nodes & P.nodes or C.nodes & P.nodes)
    assert path_induced_subgraph(T, C) == C
    assert path_induced_subgraph(T, P) == P
    assert not any(u in P.nodes and v in C.nodes for u, v in T.edges)  # zero block of eq. 22


@SETTINGS
@given(tree_and_subset())
def test_lemma3_contracting_subgraph_or_induced_subgraph(data):
    T, nodes = data
    assert contract(T, Digraph(nodes)) == contract(T, induced_subgraph(T, nodes))


@SETTINGS
@given(tree_and_subset())
def test_lemma4_and_lemma5(data):
    """Lemma 4: the aggregation condition implies path-induced. Lemma 5: for an induced S,
    the contracted digraph is a tree exactly when S satisfies the condition."""
    T, nodes = data
    S = induced_subgraph(T, nodes)
    ok = satisfies_aggregation_condition(T, S)
    if ok:
        assert path_induced_subgraph(T, S) == S
    assert contract(T, S).is_tree() == ok


@SETTINGS
@given(tree_and_subset(max_nodes=7))
def test_lemma6_aggregation_subgraph(data):
    """Lemma 6: S ⊆ S_I ⊆ S_P ⊆ S_A, S_A satisfies the condition and is the smallest
    induced subgraph containing S that does (checked against every candidate)."""
    T, nodes = data
    SA = aggregation_subgraph(T, nodes)
    assert path_induced_subgraph(T, nodes) <= SA
    assert satisfies_aggregation_condition(T, SA)
    assert contract(T, SA).is_tree()
    others = sorted(T.nodes - {-1})
    best = min((len(c) for r in range(len(others) + 1) for c in combinations(others, r)
                if nodes <= set(c) and satisfies_aggregation_condition(T, induced_subgraph(T, c))))
    assert len(SA.nodes) == best
    # with its parent node added, S_A is a subtree (a connected tree)
    (p,) = parent_nodes(T, SA)
    assert induced_subgraph(T, SA.nodes | {p}).is_tree()


@SETTINGS
@given(tree_and_subset())
def test_relations(data):
    T, nodes = data
    a = min(nodes)
    for b in T.nodes:
        assert related(T, a, b) == (b not in unrelated(T, a))
        assert related(T, a, b) == related(T, b, a)


def test_known_examples():
    # world -> 0 -> {1, 2}; 1 -> 3
    T = Digraph.from_parents([-1, 0, 0, 1])
    assert satisfies_aggregation_condition(T, induced_subgraph(T, {1, 2}))  # siblings: rotor + link
    assert not satisfies_aggregation_condition(T, induced_subgraph(T, {2, 3}))  # two parents
    assert aggregation_subgraph(T, {2, 3}).nodes == {1, 2, 3}
    assert parent_nodes(T, {1, 3}) == {0}
    with pytest.raises(AggregationError, match=r"parent nodes \[0, 1\]"):
        check_aggregation_condition(T, induced_subgraph(T, {2, 3}), "cluster")


def test_spanning_tree_and_cut_edges():
    # a four-bar as a digraph: ground -> a -> b, ground -> c, and the loop edge b -> c
    G = Digraph(["g", "a", "b", "c"], [("g", "a"), ("a", "b"), ("g", "c"), ("b", "c")])
    tree, cut = spanning_tree(G, "g")
    assert tree.is_tree() and cut == [("b", "c")]
    with pytest.raises(ValueError, match="cannot be reached"):
        spanning_tree(Digraph(["g", "x"]), "g")
