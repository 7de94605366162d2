"""Closed-chain forward dynamics by constraint embedding from a spanning-tree state
[Chignoli23, eq. 3, Alg. 1, §V-D], in one kernel:

    y, ẏ taken from (q, q̇);  G(q), g(q, q̇) of the implicit clusters at the given q;
    τ_ind = Gᵀ τ;  ÿ by C-ABA;  q̈ = G ÿ + g,

with the worst constraint residuals of (q, q̇) for the caller's consistency check.
"""
from __future__ import annotations

import math

from ...core.jit import helper, kernel
from ...core.layout import borrow, carve, model_tables
from ...core.status import BAD_SHAPE, OK, SINGULAR
from ..kinematics import state_status
from .aba import articulated_cluster_pass, cluster_acceleration_pass
from .explicit import apply_explicit_map, apply_explicit_map_transpose
from .inertia import init_cluster_inertias
from .implicit import (GIVEN, explicit_form, given_configuration, implicit_tables, implicit_workspace,
                       rows_place_the_tree)
from .kinematics import positions_pass
from .layout import LINEAR, cluster_tables, cluster_workspace, explicit_map, no_rotor_forces, split_plain_tables


@helper
def worst_residuals(mi, mf, ci, cf, cws, q, v, y, yd):
    """(max |φ|, max |K q̇|) over the constraint rows of the implicit clusters (as the
    preparation at q left them) and (max |q_c − G y_c|, max |q̇_c − G ẏ_c|) over the linear
    clusters: how far (q, q̇) is from the constraint manifold and its tangent space."""
    m = model_tables(mi, mf)
    c = cluster_tables(ci)
    w = cluster_workspace(cws, c, m.nq, m.nv)
    x = implicit_tables(ci, cf)
    iw = implicit_workspace(cws, x, m.nv)
    worst_q, worst_v = 0.0, 0.0
    for i in range(x.n):
        k = x.cluster[i]
        col0 = c.row_start[k]
        for a in range(x.n_rows[i]):
            r = x.rows[x.rows_start[i] + a]
            worst_q = max(worst_q, abs(iw.resid[r]))
            acc = 0.0
            for e in range(c.n_spanning[k]):
                col = c.rows_v[col0 + e]
                acc += iw.G[r, col] * v[col]
            worst_v = max(worst_v, abs(acc))
    for k in range(c.n):
        if c.kind[k] != LINEAR:
            continue
        G, _ = explicit_map(c, cf, w, k)
        r0 = c.row_start[k]
        for r in range(c.n_spanning[k]):
            pos, vel = 0.0, 0.0
            for j in range(c.n_y[k]):
                pos += G[r, j] * y[c.yq_start[k] + j]
                vel += G[r, j] * yd[c.yv_start[k] + j]
            worst_q = max(worst_q, abs(q[c.rows_q[r0 + r]] - pos))
            worst_v = max(worst_v, abs(v[c.rows_v[r0 + r]] - vel))
    return worst_q, worst_v


@kernel(forceinline=True)
def input_copies_size(nq, nv):
    """Length of :func:`embedding_kernel`'s output with copies of its inputs:
    [q̈ (nv) | worst residuals (2) | q (nq) | q̇ (nv) | τ (nv)]."""
    return nq + 3 * nv + 2


@kernel(nogil=True)
def embedding_kernel(tables, q, v, tau, fext, gravity, mode, out):
    """q̈ from (q, q̇, τ) (module docstring) into ``out[:nv]``, and into ``out[nv:nv + 2]``
    the worst residuals of (q, q̇) (:func:`worst_residuals`; NaN in mode PREPARED); an
    ``out`` of ``input_copies_size(nq, nv)`` entries also takes copies of q, q̇, τ after
    them (:func:`input_copies_size`: the result of the plain call keeps its inputs so,
    without three more allocations). ``tables``: the model's and the clusters' tables and
    a workspace of each in one array (:func:`~.layout.pack_plain_tables`: eight arguments
    through Numba's dispatcher instead of thirteen, a measurably cheaper call; its workspaces
    are written per call). ``mode``: GIVEN (the implicit clusters are prepared at q, which
    must satisfy the constraints to MANIFOLD_TOL) or PREPARED (by the caller, in the
    cluster workspace of ``tables``). Returns a status.

    B states stored one after another are B = len(q) / nq states: q (B·nq,), q̇, τ
    (B·nv,), f_ext (B·nb, 6) or (0, 6), out B outputs of one of the two lengths above —
    one state for a call, a block of states for a batch (:func:`~soadyn.closed.embedding.
    algorithms.embedding_batch`, which gives each block its own copy of ``tables``). One
    compiled kernel for both: a batched twin recompiled the whole method (~4 s of a cold
    compile, the time Numba takes to optimise and compile the linked closure of each entry
    point). Returns the first status other than OK (each state is evaluated)."""
    ok, mi, mf, ws, ci, cf, cws, _ = split_plain_tables(tables)
    if not ok:
        return BAD_SHAPE
    m = model_tables(mi, mf)
    B = q.shape[0] // m.nq if m.nq > 0 else 0
    n_out = out.shape[0] // B if B > 0 else 0
    if (B == 0 or q.shape[0] != B * m.nq or v.shape[0] != B * m.nv or tau.shape[0] != B * m.nv
            or (fext.shape[0] != 0 and fext.shape[0] != B * m.nb) or out.shape[0] != B * n_out
            or (n_out != m.nv + 2 and n_out != input_copies_size(m.nq, m.nv))):
        return BAD_SHAPE
    # borrowed views: the passes below then pass them on without reference counting
    q, v, tau, out = borrow(q), borrow(v), borrow(tau), borrow(out)
    nf = m.nb if fext.shape[0] > 0 else 0
    # the forces of state b are rows of fext: carved from a flat view when there are
    # several states (one state, the common call, takes fext as it is: no reshape)
    forces = fext.reshape(fext.size) if B > 1 and nf > 0 else carve(q, 0, 0)
    first = OK
    for b in range(B):
        fb = fext if B == 1 or nf == 0 else carve(forces, b * nf * 6, (nf, 6))
        st = _one_state(mi, mf, ws, ci, cf, cws, carve(q, b * m.nq, m.nq), carve(v, b * m.nv, m.nv),
                        carve(tau, b * m.nv, m.nv), fb, gravity, mode, carve(out, b * n_out, n_out))
        if first == OK:
            first = st
    return first


# inlined by Numba into the kernel (compiled on its own it would be one more library holding
# the whole method, see embedding_kernel)
@helper(inline="always")
def _one_state(mi, mf, ws, ci, cf, cws, q, v, tau, fext, gravity, mode, out):
    """:func:`embedding_kernel` on one state (its views of the flat arrays)."""
    st = state_status(q, v, tau, fext)
    if st != OK:
        return st
    m = model_tables(mi, mf)
    copies = out.shape[0] == input_copies_size(m.nq, m.nv)
    qdd = carve(out, 0, m.nv)
    c = cluster_tables(ci)
    w = cluster_workspace(cws, c, m.nq, m.nv)
    y, yd = w.y, w.yd
    for a in range(c.nyq):
        y[a] = q[c.y_positions[a]]
    for a in range(c.nyv):
        yd[a] = v[c.yv_positions[a]]
    if mode == GIVEN:  # G and g at the given q, checked on the manifold (no position solve)
        st = given_configuration(mi, mf, ci, cf, cws, y, q)
        if st == OK:
            st = explicit_form(mi, mf, ws, ci, cf, cws, yd, True, True, v)
        if st != OK:
            return st
    rotors_apart = no_rotor_forces(c, fext)  # pair rotors from their constants (C-ABA's pair step)
    # the rows at (q, q̇) placed the tree already when they ran the loop kinematics
    placed = mode == GIVEN and rows_place_the_tree(ci, cf)
    st = positions_pass(mi, mf, ws, ci, cf, cws, y, yd, True, True, rotors_apart, placed)
    if st != OK:
        return st
    tau_ind = w.tau_ind
    apply_explicit_map_transpose(mi, mf, ci, cf, cws, tau, tau_ind)
    init_cluster_inertias(mi, mf, ws, ci, cws, True, fext, rotors_apart)
    if not articulated_cluster_pass(mi, mf, ws, ci, cf, cws, tau_ind, True, rotors_apart):
        return SINGULAR
    ydd = w.ydd
    cluster_acceleration_pass(mi, mf, ws, ci, cws, gravity, ydd, rotors_apart)
    apply_explicit_map(mi, mf, ci, cf, cws, ydd, qdd, False, True)
    if mode == GIVEN:
        out[m.nv], out[m.nv + 1] = worst_residuals(mi, mf, ci, cf, cws, q, v, y, yd)
    else:
        out[m.nv], out[m.nv + 1] = math.nan, math.nan
    if copies:
        o = m.nv + 2
        for e in range(m.nq):
            out[o + e] = q[e]
        o += m.nq
        for e in range(m.nv):
            out[o + e] = v[e]
            out[o + m.nv + e] = tau[e]
    return OK
