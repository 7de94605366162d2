"""Partitioned and aggregated SKO operators ([Jain12, §4, §6]; soadyn.spec.partitioned):
the block structure of eq. 22–25, Lemma 2's SPO blocks from the component SKOs, Cor. 4.1
(the outer system's mass-matrix block depends on it alone: checked against the recursive
CRBA at moved inboard coordinates), the aggregated operators of Lemmas 7–8 and Cor. 6.1
(M and C of the aggregated model equal the recursive CRBA's and RNEA's), numerically on
random trees with random admissible groups and symbolically on a small chain."""
from __future__ import annotations

import numpy as np
import pytest

import soadyn as sd
from soadyn import graph, operators
from soadyn.models import random_tree, serial_chain

from conftest import assert_close

SEEDS = range(6)


def _state(seed, n=7, floating=False):
    model = random_tree(n, seed, floating_base=floating)
    rng = np.random.default_rng(seed)
    return model, sd.random_configuration(model, rng), rng.normal(size=model.nv), rng


def _random_path_induced(model, rng):
    T = graph.model_digraph(model)
    picks = set(rng.choice(model.nbodies, size=int(rng.integers(1, 4)), replace=False).tolist())
    return sorted(n for n in graph.path_induced_subgraph(T, graph.induced_subgraph(T, picks)).nodes if n >= 0)


def _inv(X):
    return np.linalg.inv(np.eye(len(X)) - X)


@pytest.mark.parametrize("seed", SEEDS)
def test_partition_blocks_and_lemma_2(seed):
    model, q, v, rng = _state(seed, floating=seed % 2 == 1)
    ops = operators.sko(model, q, v)
    S = _random_path_induced(model, rng)
    p = operators.partition(ops, S)
    assert sorted(p.P + p.S + p.C) == list(range(model.nbodies)) and p.S == tuple(S)
    for c in p.C:  # C: the descendants of S outside it (Lemma 1)
        assert any(s in model.ancestors(c) for s in S)
    (E_P, E_PS, E_PC), (E_SP, E_S, E_SC), (E_CP, E_CS, E_C) = p.E
    for zero in (E_PC, E_SP, E_CP, E_CS):  # eq. 22 in parent-first order
        assert not np.any(zero)
    for i in range(3):  # eq. 25: H and M block diagonal
        for j in range(3):
            if i != j:
                assert not np.any(p.H[i][j]) and not np.any(p.M[i][j])
    A_P, A_S, A_C = _inv(E_P), _inv(E_S), _inv(E_C)  # the component SPOs
    expected = ((A_P, A_P @ E_PS @ A_S, A_P @ E_PS @ A_S @ E_SC @ A_C),
                (None, A_S, A_S @ E_SC @ A_C),
                (None, None, A_C))  # Lemma 2 (eq. 24)
    for i in range(3):
        for j in range(3):
            if j < i:
                assert not np.any(p.A[i][j])
            else:
                assert_close(p.A[i][j], expected[i][j], what=f"A block {i}{j}")


@pytest.mark.parametrize("seed", SEEDS)
def test_corollary_4_1_outer_mass_matrix_depends_on_the_outer_system_alone(seed):
    model, q, v, rng = _state(seed, n=8)
    k = int(rng.integers(1, model.nbodies))
    S = sorted({k} | {b for b in range(model.nbodies) if k in model.ancestors(b)})  # a subtree: C empty
    p = operators.partition(operators.sko(model, q), S)
    assert p.C == ()
    H_S, A_S, M_S = p.H[1][1], p.A[1][1], p.M[1][1]
    assert_close(p.mass_matrix[1][1], H_S @ A_S @ M_S @ A_S.T @ H_S.T, what="eq. 26-27")
    # the inboard coordinates moved: the recursive CRBA's S block does not change
    moved = sd.random_configuration(model, rng)
    for b in p.S:
        j = model.bodies[b].joint
        moved[j.q_index:j.q_index + j.nq] = q[j.q_index:j.q_index + j.nq]
    assert_close(sd.mass_matrix(model, moved)[np.ix_(p.v_S, p.v_S)], p.mass_matrix[1][1], what="inboard-free")


def _admissible_groups(model, rng, count):
    """Disjoint aggregation subgraphs S_A of random body sets ([Jain12, Lemma 6])."""
    T = graph.model_digraph(model)
    groups, used = [], set()
    for _ in range(20):
        picks = set(rng.choice(model.nbodies, size=int(rng.integers(1, 3)), replace=False).tolist())
        g = {n for n in graph.aggregation_subgraph(T, picks).nodes if n >= 0}
        if g and not g & used and -1 not in graph.aggregation_subgraph(T, picks).nodes:
            groups.append(sorted(g))
            used |= g
        if len(groups) == count:
            break
    return groups


@pytest.mark.parametrize("seed", SEEDS)
def test_aggregated_operators_lemmas_7_8_and_corollary_6_1(seed):
    model, q, v, rng = _state(seed, n=8, floating=seed % 3 == 0)
    ops = operators.sko(model, q, v)
    groups = _admissible_groups(model, rng, 1 + seed % 2)
    assert groups
    agg = operators.aggregate(ops, groups)
    n = 6 * model.nbodies
    group_of = {b: k for k, g in enumerate(groups) for b in g}
    node = lambda b: ("group", group_of[b]) if b in group_of else b  # noqa: E731  (node of the aggregated tree)
    for g in groups:  # Lemma 7: the group's own block of E_a vanishes
        r = [6 * b + a for b in g for a in range(6)]
        assert_close(agg.E_a[np.ix_(r, r)], np.zeros((len(r), len(r))), what="E_S -> 0")
    for j in range(model.nbodies):  # ... and each column has one nonzero block: its aggregated parent
        col = agg.E_a[:, 6 * j:6 * j + 6]
        rows = {node(int(i) // 6) for i in np.flatnonzero(np.abs(col).max(axis=1) > 1e-12)}
        if j in group_of:
            outside = [model.bodies[b].parent for b in groups[group_of[j]] if model.bodies[b].parent not in group_of
                       or group_of[model.bodies[b].parent] != group_of[j]]
            parent = outside[0]  # the group's single parent node (aggregation condition)
        else:
            parent = model.bodies[j].parent
        assert rows == (set() if parent < 0 else {node(parent)}), j
    assert_close((np.eye(n) - agg.E_a) @ agg.A_a, np.eye(n), what="Lemma 8")
    # Lemma 8 (eq. 35), the group's block row from the SKO blocks alone: [0, I, E_SC A_C]
    p = operators.partition(ops, groups[0])
    rows = [6 * b + a for b in p.S for a in range(6)]
    cols_P = [6 * b + a for b in p.P for a in range(6)]
    cols_C = [6 * b + a for b in p.C for a in range(6)]
    assert_close(agg.A_a[np.ix_(rows, rows)], np.eye(len(rows)), what="A_a[S, S] = I")
    assert not np.any(agg.A_a[np.ix_(rows, cols_P)])
    if p.C:
        E_SC, E_C = p.E[1][2], p.E[2][2]
        expected = E_SC @ np.linalg.inv(np.eye(len(cols_C)) - E_C)  # J_a acts on rows: other groups leave it
        assert_close(agg.A_a[np.ix_(rows, cols_C)], expected, what="A_a[S, C] = E_SC A_C")
    # Lemma 9: H_a block diagonal in the aggregated tree, and its equations of motion (eq. 38)
    for b in range(model.nbodies):
        for r in range(ops.dofs[b].start, ops.dofs[b].stop):
            cols = {node(int(c) // 6) for c in np.flatnonzero(np.abs(agg.H_a[r]) > 1e-12)}
            assert cols <= {node(b)}, (b, cols)
    qdd = rng.normal(size=model.nv)
    alpha = agg.A_a.T @ (agg.H_a.T @ qdd + agg.a_a)
    f_a = agg.A_a @ (ops.M @ alpha + ops.b)
    assert_close(agg.H_a @ f_a, sd.rnea(model, q, v, qdd, gravity=False), what="T = H_a f_a (eq. 38-39)")
    # Cor. 6.1 against the recursive algorithms
    assert_close(agg.mass_matrix, sd.mass_matrix(model, q), what="M")
    assert_close(agg.coriolis, sd.bias_forces(model, q, v, gravity=False), what="C")


def test_aggregation_symbolically_leaves_m_and_c_unchanged():
    sympy = pytest.importorskip("sympy")
    model = serial_chain(3)
    qs = sympy.symbols("q0:3", real=True)
    vs = sympy.symbols("v0:3", real=True)
    ops = operators.sko(model, qs, vs)
    agg = operators.aggregate(ops, [[1, 2]])
    for got, want in ((agg.mass_matrix, ops.mass_matrix), (agg.coriolis, ops.coriolis)):
        diff = sympy.Matrix(np.atleast_2d(got).tolist()) - sympy.Matrix(np.atleast_2d(want).tolist())
        assert sympy.simplify(diff) == sympy.zeros(*diff.shape)


def test_bad_groups_are_named():
    model = serial_chain(4)
    ops = operators.sko(model, np.zeros(4))
    with pytest.raises(graph.AggregationError, match=r"groups\[0\].*violates the aggregation condition.*2 parent"):
        operators.aggregate(ops, [[0, 2]])  # parents: the world and body 1
    with pytest.raises(ValueError, match="is in groups 0 and 1"):
        operators.aggregate(ops, [[3], [3]])
    with pytest.raises(ValueError, match="no body named 'nope'"):
        operators.partition(ops, ["nope"])
    with pytest.raises(ValueError, match="path-induced"):
        operators.partition(ops, [0, 2])  # body 1 lies between them
