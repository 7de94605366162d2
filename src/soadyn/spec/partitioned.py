"""Partitioned and aggregated SKO operators ([Jain12, §4 and §6]), dense, numeric or sympy.

Both act on the operators of an :class:`~soadyn.spec.operators.SKO` (``ops``) and return
new dense blocks; they reorder nothing in ``ops``.

**Partitioning** (:func:`partition`, [Jain12, §4]). A path-induced set S of bodies splits
the tree into S, its outboard part C (descendants of S not in S) and the rest P (Lemma 1).
With the library's parent-first numbering (E_φ has its block φ(℘(k), k) at block row
℘(k)) and the parts in the order (P, S, C), E_φ is block upper triangular — the transpose
of the paper's canonical-order picture (eq. 22):

    E_φ = ⎡E_P  E_PS  0   ⎤        φ = ⎡A_P  A_P E_PS A_S  A_P E_PS A_S E_SC A_C⎤
          ⎢0    E_S   E_SC⎥            ⎢0    A_S           A_S E_SC A_C         ⎥
          ⎣0    0     E_C ⎦            ⎣0    0             A_C                  ⎦

with A_X = (I − E_X)⁻¹ the SPO of each component subforest (Lemma 2, eq. 23–24) and the
connector blocks E_PS (edges from P into S, the paper's E_S) and E_SC (edges from S into C,
the paper's B_S). H and the spatial inertias M are block diagonal in the same split
(eq. 25). With C empty (Cor. 4.1, eq. 26–27) the mass-matrix block of the outer system S is
M_S = H_S A_S M_S A_S* H_S*: it depends on S alone, not on the inboard bodies P.

**Aggregation** (:func:`aggregate`, [Jain12, §6]). Groups of bodies that satisfy the
aggregation condition (Assumption 1: each group induced, with a single parent node that is
an ancestor of all of it; Lemma 5: contracting it leaves a tree) become single
variable-geometry bodies. With J_a = diag(I, A_S⁻¹, I) = diag(I, I − E_S, I) per group:

    E_a = I − (I − E_φ) J_a⁻¹   (Lemma 7, eq. 31: E_S → 0, E_PS → E_PS A_S)
    A_a = J_a φ = (I − E_a)⁻¹  (Lemma 8, eq. 35)
    H_a = H J_a⁻¹               (eq. 35, 37: H_S → H_S A_S)
    a_a = J_a⁻* a,   f_a = J_a f  (eq. 38–39)

with the equations of motion of the aggregated tree (eq. 38–39) V = A_a* H_a* θ̇,
α = A_a*(H_a* θ̈ + a_a), f_a = A_a(M α + b), T = H_a f_a,

and (H_a, A_a, M) is an SKO model of the aggregated tree (Lemma 9) with the same mass
matrix and Coriolis vector (Cor. 6.1, eq. 40–42):

    M = H_a A_a M A_a* H_a*,    C = H_a A_a (M A_a* a_a + b).
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np

from .. import graph

__all__ = ["Partition", "partition", "Aggregation", "aggregate"]

#: The S/C/P partition of the operators (:func:`partition`). ``P``, ``S``, ``C``: the body
#: indices of each part (increasing); ``v_P``, ``v_S``, ``v_C``: their velocity
#: coordinates; ``E``, ``A``, ``H``, ``M``: 3 × 3 nested tuples of blocks of E_φ, φ, H and
#: the spatial inertias, rows and columns in the order (P, S, C) (``E[0][1]`` = E_PS);
#: ``mass_matrix``: the 3 × 3 blocks of the mass matrix.
Partition = namedtuple("Partition", ["P", "S", "C", "v_P", "v_S", "v_C", "E", "A", "H", "M", "mass_matrix"])

#: The aggregated operators (:func:`aggregate`), in the body and coordinate order of ``ops``:
#: ``groups`` (tuples of body indices), ``J_a``, ``E_a``, ``A_a``, ``H_a`` (dense, same shapes
#: as E_φ, φ, H), ``a_a`` (the stacked Coriolis accelerations J_a⁻* a; None without a
#: velocity) and the mass matrix and Coriolis vector they give, ``mass_matrix`` =
#: H_a A_a M A_a* H_a* and ``coriolis`` = H_a A_a (M A_a* a_a + b) (None without a velocity).
Aggregation = namedtuple("Aggregation", ["groups", "J_a", "E_a", "A_a", "H_a", "a_a", "mass_matrix", "coriolis"])


def _body_set(ops, bodies, name):
    """Body indices from indices or names, checked."""
    names = [b.name for b in ops.model.bodies]
    out = []
    for b in bodies:
        if isinstance(b, str):
            if b not in names:
                raise ValueError(f"{name}: no body named {b!r} in model {ops.model.name!r}")
            out.append(names.index(b))
        elif isinstance(b, (int, np.integer)) and not isinstance(b, bool) and 0 <= b < ops.nb:
            out.append(int(b))
        else:
            raise ValueError(f"{name}: expected body indices in [0, {ops.nb}) or body names, got {b!r}")
    if not out:
        raise ValueError(f"{name}: expected at least one body, got none")
    if len(set(out)) != len(out):
        raise ValueError(f"{name}: bodies listed twice: {sorted({b for b in out if out.count(b) > 1})}")
    return tuple(sorted(out))


def _rows(ops, bodies):
    """The 6-rows of the stacked spatial vectors of ``bodies``."""
    return np.array([6 * k + a for k in bodies for a in range(6)], dtype=np.int64)


def _coordinates(ops, bodies):
    return np.array([r for k in bodies for r in range(ops.dofs[k].start, ops.dofs[k].stop)], dtype=np.int64)


def _block(X, rows, cols):
    return X[np.ix_(rows, cols)]


def partition(ops, S):
    """The S/C/P partition ([Jain12, Lemma 1, eq. 22–25]) of the SKO operators ``ops``
    (:func:`~soadyn.spec.operators.sko`) by the path-induced set of bodies ``S`` (indices or
    names). Returns :class:`Partition`; the module docstring gives the block structure.
    Raises ValueError when S is not path-induced."""
    S = _body_set(ops, S, "S")
    T = graph.model_digraph(ops.model)
    Sg, Cg, Pg = graph.partition(T, graph.Digraph(S, [(u, v) for u, v in T.edges if u in S and v in S]))
    C = tuple(sorted(Cg.nodes))
    P = tuple(sorted(n for n in Pg.nodes if n >= 0))  # node −1 is the inertial frame
    parts = (P, S, C)
    rows = [_rows(ops, x) for x in parts]
    coords = [_coordinates(ops, x) for x in parts]
    E = tuple(tuple(_block(ops.E_phi, r, c) for c in rows) for r in rows)
    A = tuple(tuple(_block(ops.phi, r, c) for c in rows) for r in rows)
    H = tuple(tuple(_block(ops.H, v, c) for c in rows) for v in coords)
    M = tuple(tuple(_block(ops.M, r, c) for c in rows) for r in rows)
    mm = tuple(tuple(_block(ops.mass_matrix, v, w) for w in coords) for v in coords)
    return Partition(P, S, C, *coords, E, A, H, M, mm)


def _identity(n, like):
    out = np.zeros((n, n), dtype=like.dtype)
    for k in range(n):
        out[k, k] = 1
    return out


def aggregate(ops, groups):
    """The operators of the aggregated tree ([Jain12, §6], Lemmas 7–9, Cor. 6.1): each
    group of bodies (indices or names; disjoint groups, each satisfying the aggregation
    condition of [Jain12, Assumption 1] in the model's tree) becomes one body. Returns
    :class:`Aggregation`; the module docstring gives the formulas. Raises
    :class:`~soadyn.graph.AggregationError` naming the group that violates the condition
    (and the smallest group containing it that does not)."""
    if isinstance(groups, (str, int, np.integer)) or not hasattr(groups, "__iter__"):
        raise ValueError(f"groups: expected a list of groups of bodies, got {groups!r}")
    groups = [_body_set(ops, g, f"groups[{k}]") for k, g in enumerate(groups)]
    seen = {}
    for k, g in enumerate(groups):
        for b in g:
            if b in seen:
                raise ValueError(f"groups: body {ops.model.bodies[b].name!r} is in groups {seen[b]} and {k}")
            seen[b] = k
    T = graph.model_digraph(ops.model)
    names = {b.index: b.name for b in ops.model.bodies}
    for k, g in enumerate(groups):
        graph.check_aggregation_condition(T, graph.induced_subgraph(T, set(g)), f"groups[{k}]", names)
    n = 6 * ops.nb
    J = _identity(n, ops.E_phi)
    J_inv = _identity(n, ops.E_phi)
    for g in groups:
        r = _rows(ops, g)
        E_S = _block(ops.E_phi, r, r)
        J[np.ix_(r, r)] = _identity(len(r), E_S) - E_S  # A_S⁻¹ = I − E_S: the group's SPO inverted
        J_inv[np.ix_(r, r)] = _block(ops.phi, r, r)  # A_S (S path-induced: φ restricted to S)
    E_a = _identity(n, ops.E_phi) - (_identity(n, ops.E_phi) - ops.E_phi) @ J_inv
    A_a = J @ ops.phi
    H_a = ops.H @ J_inv
    HA = H_a @ A_a
    mass_matrix = HA @ ops.M @ HA.T
    if ops.v is None:
        return Aggregation(tuple(groups), J, E_a, A_a, H_a, None, mass_matrix, None)
    a_a = J_inv.T @ ops.a
    coriolis = HA @ (ops.M @ (A_a.T @ a_a) + ops.b)
    return Aggregation(tuple(groups), J, E_a, A_a, H_a, a_a, mass_matrix, coriolis)
