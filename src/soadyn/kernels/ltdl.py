"""Sparse LTDL factorization of the mass matrix and solves with it [Featherstone05].

The mass matrix of a tree has the branch-induced sparsity of the tree: M(i, j) = 0 unless
dof j is an ancestor of dof i or the reverse (dofs numbered parent-first, the dofs of one
multi-dof joint chained one after the other). Factored as M = Lᵀ D L with L unit lower
triangular and D diagonal, L keeps that pattern (no fill-in), so the factorization costs
Σ_k d_k² and a solve 2 Σ_k d_k per right-hand side (d_k: the number of ancestors of dof k),
against O(N³) and O(N²) for a dense Cholesky factorization.

``lam`` (nv,) is the dof parent array λ: λ(k) the nearest dof above k (−1 for none).
"""
from __future__ import annotations

import numpy as np

from ..core.jit import helper, kernel
from ..core.layout import borrow, model_tables
from ..core.status import BAD_SHAPE, OK, SINGULAR
from .crba import mass_matrix_kernel
from .primitives import copy_upper_to_lower


@helper
def dof_parents(mi, mf, lam):
    """λ into ``lam`` (nv,): the previous dof of the same joint, else the last dof of the
    nearest ancestor body that has dofs, else −1."""
    m = model_tables(mi, mf)
    for i in range(m.nb):
        vi = m.v_index[i]
        n = m.joint_nv[i]
        if n == 0:
            continue
        j = m.parent[i]
        while j >= 0 and m.joint_nv[j] == 0:
            j = m.parent[j]
        lam[vi] = -1 if j < 0 else m.v_index[j] + m.joint_nv[j] - 1
        for c in range(1, n):
            lam[vi + c] = vi + c - 1


@helper
def ltdl_factor(H, lam):
    """H ← its LTDL factors in place ([Featherstone05]'s LTDL algorithm): D(k) = H[k, k] and,
    below the diagonal, L[k, i] = H[k, i] (zero unless i is an ancestor of k); the upper triangle
    is left as it was. Returns False when a pivot D(k) is not positive (M not positive
    definite).

    The update H(i, j) −= a H(k, j) of the table runs over the ancestors j of i; it is
    done here over the whole row j < i, where H(k, j) is zero for the other j (an ancestor
    of k below i is an ancestor of i), so that it is a contiguous row operation."""
    for k in range(H.shape[0] - 1, -1, -1):
        d = H[k, k]
        if not d > 0.0:
            return False
        i = lam[k]
        while i >= 0:
            a = H[k, i] / d
            for j in range(i + 1):
                H[i, j] -= a * H[k, j]
            H[k, i] = a
            i = lam[i]
    return True


@helper
def ltdl_solve(LD, lam, X, last):
    """X ← M⁻¹X in place for the factors ``LD`` of :func:`ltdl_factor` and X (nv, ncols):
    Lᵀy = x from the tips (each row y(k) is subtracted from its ancestors' rows), then
    D⁻¹, then Lz = y from the root [Featherstone05] — whole rows at a time.

    ``last`` (nv,) bounds the columns of row k in the first sweep: X(k, j) = 0 for j >
    ``last[k]`` (after the rows of k's descendants were subtracted from it). For a general X
    it is nv − 1 everywhere; for X = the identity or a matrix with the sparsity of M it is the
    last dof of k's subtree (:func:`subtree_ends`)."""
    n = X.shape[0]
    ncols = X.shape[1]
    for k in range(n - 1, -1, -1):
        i = lam[k]
        end = last[k] + 1
        while i >= 0:
            a = LD[k, i]
            for c in range(end):
                X[i, c] -= a * X[k, c]
            i = lam[i]
    for k in range(n):
        dinv = 1.0 / LD[k, k]
        for c in range(ncols):
            X[k, c] *= dinv
    for k in range(n):
        i = lam[k]
        while i >= 0:
            a = LD[k, i]
            for c in range(ncols):
                X[k, c] -= a * X[i, c]
            i = lam[i]


@helper
def subtree_ends(lam, last):
    """``last[k]`` = the largest dof of the subtree of dof k (k itself for a leaf): the
    columns of M's row k, and of the rows of M⁻¹'s first sweep, end there."""
    n = lam.shape[0]
    for k in range(n):
        last[k] = k
    for k in range(n - 1, -1, -1):
        i = lam[k]
        if i >= 0 and last[k] > last[i]:
            last[i] = last[k]


@helper
def ltdl_inverse(LD, lam, last, Minv):
    """M⁻¹ into ``Minv`` (nv, nv) from the factors ``LD``: the solve of :func:`ltdl_solve`
    on the identity, with each row's first sweep bounded by ``last`` and its last sweep
    kept to the upper triangle (row k of Lz = y needs z(i, c) for i < k ≤ c only), then
    mirrored."""
    n = Minv.shape[0]
    Minv[:, :] = 0.0
    for k in range(n):
        Minv[k, k] = 1.0
    for k in range(n - 1, -1, -1):
        i = lam[k]
        end = last[k] + 1
        while i >= 0:
            a = LD[k, i]
            for c in range(k, end):  # row k of L⁻ᵀ is zero left of k
                Minv[i, c] -= a * Minv[k, c]
            i = lam[i]
    for k in range(n):
        dinv = 1.0 / LD[k, k]
        for c in range(k, n):
            Minv[k, c] *= dinv
    for k in range(n):
        i = lam[k]
        while i >= 0:
            a = LD[k, i]
            for c in range(k, n):
                Minv[k, c] -= a * Minv[i, c]
            i = lam[i]
    copy_upper_to_lower(Minv)


# with reference counting (_nrt=True), as soadyn.kernels.derivatives.aba_derivatives_kernel:
# it allocates the (nv, nv) factors of M
@kernel(_nrt=True)
def mass_matrix_inverse_ltdl_kernel(mi, mf, ws, q, Minv):
    """M⁻¹(q) into ``Minv`` (nv, nv): M by composite rigid bodies
    (:func:`~soadyn.kernels.crba.mass_matrix_kernel`), its sparse factors M = LᵀDL and the
    inverse from them (:func:`ltdl_inverse`); returns a status (SINGULAR when some
    D(k) ≤ 0). O(N d²) for a tree of depth d, against O(N²) for the innovations factors'
    recursion (:func:`~soadyn.kernels.minverse.mass_matrix_inverse_kernel`), the default,
    which measured as fast on the small arms and faster on the humanoids (``benchmarks/results/design_notes.md``)."""
    # borrowed views: the passes below then pass them on without reference counting
    mi, mf, ws, q = borrow(mi), borrow(mf), borrow(ws), borrow(q)
    nv = Minv.shape[0]
    LD = np.empty((nv, nv))
    st = mass_matrix_kernel(mi, mf, ws, q, LD)
    if st != OK:
        return st
    if Minv.shape[1] != nv:
        return BAD_SHAPE
    lam = np.empty((2, nv), dtype=np.int64)
    return OK if factor_and_invert(mi, mf, LD, lam, Minv) else SINGULAR


@helper(inline="always")
def factor_and_invert(mi, mf, LD, lam, Minv):
    """M (in ``LD``) ← its factors LᵀDL, and M⁻¹ into ``Minv``; ``lam`` (2, nv) receives the
    dof parents λ and the subtree ends (for further solves with :func:`ltdl_solve`).
    Returns False when some D(k) ≤ 0. Inlined into each caller by Numba (as
    :func:`soadyn.kernels.innovations.atbi`: a wrapper of passes compiled on its own
    re-optimises them all once more)."""
    dof_parents(mi, mf, lam[0])
    if not ltdl_factor(LD, lam[0]):
        return False
    subtree_ends(lam[0], lam[1])
    ltdl_inverse(LD, lam[0], lam[1], Minv)
    return True


@kernel(nogil=True)
def mass_matrix_inverse_ltdl_batch(mi, mf, ws, Q, Minv, status, start, stop):
    """:func:`mass_matrix_inverse_ltdl_kernel` on states ``start`` to ``stop − 1`` of a batch,
    with one workspace (a block of a batched call, see :func:`soadyn.core.batch.run_blocks`)."""
    for b in range(start, stop):
        status[b] = mass_matrix_inverse_ltdl_kernel(mi, mf, ws, Q[b], Minv[b])
