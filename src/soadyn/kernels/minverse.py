"""M⁻¹ by the innovations factorization applied to the identity, column-sparse, world axes.

    M⁻¹ = [I − HψK]* D⁻¹ [I − HψK]        [Jain24, topic 6]

The factors are the recursions of :mod:`.innovations` (:func:`~.innovations.factor_gather`,
:func:`~.innovations.factor_scatter`) applied to the N columns of the identity, with what
those columns make known in advance:

* **gather** [I − HψK] then D⁻¹, tips to base: column c (a unit generalized force at dof c)
  reaches body k only when c is one of k's subtree dofs, so body k runs over the columns
  c ∈ [v_k, end_k) only (its first dof to the last dof of its subtree). With y(k) the
  forces gathered from the children and e_k the identity's rows of k's dofs::

      r(k) = D⁻¹(k) (e_k − H(k) y(k))            (rows of k in the result)
      y(℘(k)) += y(k) + U(k) r(k)                 (U = P H*: G(k) r(k) before D⁻¹)

* **scatter** [I − HψK]*, base to tips: only the upper triangle is computed, the rows of
  body k over the columns c ≥ v_k, then mirrored. With a(k) the accelerations (the
  response of body k to the unit force of each column) and G*(k) = D⁻¹(k) Uᵀ(k)::

      x(k) ← x(k) − G*(k) a(℘(k)),     a(k) = a(℘(k)) + H*(k) x(k),     a(root parent) = 0

Every spatial vector is taken to world axes at the world origin once (H* and U per dof,
the D⁻¹-weighted G* rows), so φ(℘(k), k) is the identity there: passing a column to the
parent or to a child is a copy, not a 6×6 transformation. (Pinocchio's
``computeMinverse`` runs the same recursion, written as an ABA on unit forces; here it
is read off the innovations factors.) Neither M nor a dense factor is formed.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..core.layout import borrow, model_tables, workspace_views
from ..core.status import BAD_SHAPE, OK
from .innovations import atbi
from .kinematics import world_poses
from .primitives import force_to_world, joint_column_to_world


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def world_gains(mi, mf, ws, Uw, Gw):
    """``w.Sw`` = H*(k) columns, ``Uw`` = U(k) columns and ``Gw`` = G*(k) rows, each
    (nv, 6) in world axes at the world origin. Needs :func:`~.innovations.atbi` and the
    world poses."""
    m = model_tables(mi, mf)
    w = workspace_views(ws, m)
    for i in range(m.nb):
        for col in range(m.v_index[i], m.v_index[i] + m.joint_nv[i]):
            w.Sw[col, 0], w.Sw[col, 1], w.Sw[col, 2], w.Sw[col, 3], w.Sw[col, 4], w.Sw[col, 5] = \
                joint_column_to_world(m.axis_code[i], i, w.S, col, w.Rw, w.pw)
            U, G = w.U, w.Gt
            Uw[col, 0], Uw[col, 1], Uw[col, 2], Uw[col, 3], Uw[col, 4], Uw[col, 5] = force_to_world(
                w.Rw, w.pw, i, U[col, 0], U[col, 1], U[col, 2], U[col, 3], U[col, 4], U[col, 5])
            Gw[col, 0], Gw[col, 1], Gw[col, 2], Gw[col, 3], Gw[col, 4], Gw[col, 5] = force_to_world(
                w.Rw, w.pw, i, G[col, 0], G[col, 1], G[col, 2], G[col, 3], G[col, 4], G[col, 5])


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def subtree_ends(mi, mf, end):
    """``end[k]``: one past the last dof of body k's subtree (its dofs and its
    descendants' lie in [v_k, end[k]); every column there may be nonzero at k)."""
    m = model_tables(mi, mf)
    for k in range(m.nb):
        end[k] = m.v_index[k] + m.joint_nv[k]
    for k in range(m.nb - 1, -1, -1):  # children (larger indices) before their parent
        p = m.parent[k]
        if p >= 0 and end[k] > end[p]:
            end[p] = end[k]


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def inverse_gather(mi, mf, ws, Uw, end, Y, Minv):
    """D⁻¹[I − HψK] applied to the identity (module docstring): the rows of each body k
    over its subtree's columns into ``Minv``; ``Y`` (nb, nv, 6) the gathered forces y(k)
    (world axes)."""
    m = model_tables(mi, mf)
    w = workspace_views(ws, m)
    h = w.scratch[0, 0]
    for k in range(m.nb):  # y(k) = 0 on the columns the children will add to
        Y[k, m.v_index[k]:end[k], :] = 0.0
    for k in range(m.nb - 1, -1, -1):
        vi, n, p = m.v_index[k], m.joint_nv[k], m.parent[k]
        Dinv = w.Dinv[k]
        for c in range(vi, end[k]):
            y = Y[k, c]
            for r in range(n):  # e_k − H(k) y(k)
                acc = 1.0 if vi + r == c else 0.0
                for a in range(6):
                    acc -= w.Sw[vi + r, a] * y[a]
                h[r] = acc
            for r in range(n):
                acc = 0.0
                for r2 in range(n):
                    acc += Dinv[r, r2] * h[r2]
                Minv[vi + r, c] = acc
            if p >= 0:
                yp = Y[p, c]
                for a in range(6):
                    acc = y[a]
                    for r in range(n):
                        acc += Uw[vi + r, a] * Minv[vi + r, c]
                    yp[a] += acc


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def inverse_scatter(mi, mf, ws, Gw, A, Minv):
    """[I − HψK]* on the rows of :func:`inverse_gather`'s result, upper triangle: body k's
    rows over the columns c ≥ v_k (module docstring); ``A`` (nb, nv, 6) the accelerations
    a(k) (world axes)."""
    m = model_tables(mi, mf)
    w = workspace_views(ws, m)
    nv = m.nv
    for k in range(m.nb):
        vi, n, p = m.v_index[k], m.joint_nv[k], m.parent[k]
        for c in range(vi, nv):
            a_k = A[k, c]
            if p >= 0:
                a_p = A[p, c]
                for r in range(n):
                    acc = Minv[vi + r, c]
                    for e in range(6):
                        acc -= Gw[vi + r, e] * a_p[e]
                    Minv[vi + r, c] = acc
                for e in range(6):
                    a_k[e] = a_p[e]
            else:
                a_k[:] = 0.0
            for e in range(6):
                acc = a_k[e]
                for r in range(n):
                    acc += w.Sw[vi + r, e] * Minv[vi + r, c]
                a_k[e] = acc


@njit(cache=True)
def mass_matrix_inverse_kernel(mi, mf, ws, q, Minv):
    """M⁻¹(q) into ``Minv`` (nv, nv), both triangles, by the innovations factors applied
    to the identity (module docstring), O(N²)."""
    # borrowed views: the passes below then pass them on without reference counting
    mi, mf, ws, q = borrow(mi), borrow(mf), borrow(ws), borrow(q)
    st = atbi(mi, mf, ws, q)
    if st != OK:
        return st
    m = model_tables(mi, mf)
    nv = m.nv
    if Minv.shape[0] != nv or Minv.shape[1] != nv:
        return BAD_SHAPE
    world_poses(mi, mf, ws)
    # O(N²) scratch (the gathered forces, reused for the accelerations), not in the
    # workspace, whose size is O(N)
    Y = np.empty((m.nb, nv, 6))
    gains = np.empty((2, nv, 6))
    end = np.empty(m.nb, dtype=np.int64)
    world_gains(mi, mf, ws, gains[0], gains[1])
    subtree_ends(mi, mf, end)
    Minv[:, :] = 0.0  # the columns outside a body's subtree start at zero in its rows
    inverse_gather(mi, mf, ws, gains[0], end, Y, Minv)
    inverse_scatter(mi, mf, ws, gains[1], Y, Minv)
    for r in range(nv):  # the lower triangle from the upper
        for c in range(r + 1, nv):
            Minv[c, r] = Minv[r, c]
    return OK


@njit(nogil=True, cache=True)
def mass_matrix_inverse_batch(mi, mf, ws, Q, Minv, status, start, stop):
    """:func:`mass_matrix_inverse_kernel` on states ``start`` to ``stop − 1`` of a batch
    (a block of a batched call, see :func:`soadyn.core.call.run_blocks`)."""
    for b in range(start, stop):
        status[b] = mass_matrix_inverse_kernel(mi, mf, ws, Q[b], Minv[b])
