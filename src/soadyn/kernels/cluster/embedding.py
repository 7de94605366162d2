"""Closed-chain forward dynamics by constraint embedding from a spanning-tree state
[Chignoli23, eq. 3, Alg. 1, §V-D], in one kernel:

    y, ẏ taken from (q, q̇);  G(q), g(q, q̇) of the implicit clusters at the given q;
    τ_ind = Gᵀ τ;  ÿ by C-ABA;  q̈ = G ÿ + g.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ...core.layout import model_tables
from ...core.status import OK, SINGULAR
from ..kinematics import state_status
from .aba import articulated_cluster_pass, cluster_acceleration_pass
from .explicit import apply_explicit_map, apply_explicit_map_transpose
from .inertia import init_cluster_inertias
from .kinematics import positions_pass
from .layout import cluster_tables


@njit(cache=True)
def embedding_forward_kernel(mi, mf, ws, q, v, tau, fext, ci, cf, cws, gravity, mode, qdd):
    """q̈ (nv,) from (q, q̇, τ) (module docstring). ``mode``: GIVEN (the implicit clusters
    are prepared at q, which must satisfy the constraints) or PREPARED (by the caller).
    Returns a status."""
    st = state_status(q, v, tau, fext)
    if st != OK:
        return st
    c = cluster_tables(ci)
    y = np.empty(c.nyq)
    yd = np.empty(c.nyv)
    for a in range(c.nyq):
        y[a] = q[c.y_positions[a]]
    for a in range(c.nyv):
        yd[a] = v[c.yv_positions[a]]
    st = positions_pass(mi, mf, ws, ci, cf, cws, y, yd, q, mode, True, True)
    if st != OK:
        return st
    tau_ind = np.empty(c.nyv)
    apply_explicit_map_transpose(mi, mf, ci, cf, cws, tau, tau_ind)
    init_cluster_inertias(mi, mf, ws, ci, cws, True, fext)
    if not articulated_cluster_pass(mi, mf, ci, cf, cws, tau_ind, True):
        return SINGULAR
    ydd = np.empty(c.nyv)
    cluster_acceleration_pass(mi, mf, ws, ci, cws, gravity, ydd, True)
    apply_explicit_map(mi, mf, ci, cf, cws, ydd, qdd, False, True)
    return OK


@njit(nogil=True, cache=True)
def embedding_forward_batch(mi, mf, ws, Q, V, T, Fext, ci, cf, cws, gravity, mode, QDD, status, start, stop):
    """:func:`embedding_forward_kernel` on states ``start`` to ``stop − 1`` of a batch, with
    this block's own copy of the cluster workspace (see :func:`soadyn.core.call.run_blocks`)."""
    local = cws.copy()
    for b in range(start, stop):
        status[b] = embedding_forward_kernel(mi, mf, ws, Q[b], V[b], T[b], Fext[b], ci, cf, local, gravity, mode,
                                             QDD[b])
