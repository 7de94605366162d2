"""The explicit constraint map of constraint embedding, cluster by cluster [Chignoli23, eq. 3]:

    q = γ(y),    q̇ = G ẏ,    q̈ = G ÿ + g,

and its transpose, the independent generalized forces τ_ind = Gᵀτ (virtual work,
[Chignoli23, §V-D]).
"""
from __future__ import annotations


from ...core.jit import helper, kernel
from ...core.layout import carve, model_tables
from ...core.status import OK
from .layout import LINEAR, RIGID, cluster_bodies, cluster_tables, cluster_workspace, constant_map, explicit_map


@helper
def apply_explicit_map(mi, mf, ci, cf, cws, x, out, positions, with_bias):
    """out = G x (+ g with ``with_bias``), cluster by cluster: spanning velocities or
    accelerations from independent ones, q̇ = G ẏ, q̈ = G ÿ + g. With ``positions``, the
    configuration q = γ(y) = G y of rigid and linear clusters (vector joints, so positions
    map like velocities; nonlinear clusters are left alone)."""
    m = model_tables(mi, mf)
    c = cluster_tables(ci)
    w = cluster_workspace(cws, c, m.nq, m.nv)
    for k in range(c.n):
        kind = c.kind[k]
        y0 = c.yq_start[k] if positions else c.yv_start[k]
        if kind == RIGID:
            o = y0
            for i in cluster_bodies(c, k):
                n = m.joint_nq[i] if positions else m.joint_nv[i]
                start = m.q_index[i] if positions else m.v_index[i]
                for e in range(n):
                    out[start + e] = x[o + e]
                o += n
            continue
        rows = c.rows_q if positions else c.rows_v
        if kind == LINEAR:
            G, g = constant_map(c, cf, k)
            _map_rows(G, g, carve(rows, c.row_start[k], c.n_spanning[k]), x, y0, out, with_bias)
        elif not positions:  # nonlinear: this call's G(q), g(q, q̇)
            G, g = explicit_map(c, cf, w, k)
            _map_rows(G, g, carve(rows, c.row_start[k], c.n_spanning[k]), x, y0, out, with_bias)


@helper(forceinline=True)
def _map_rows(G, g, rows, x, y0, out, with_bias):
    """out[rows[r]] = (G x_k)[r] (+ g[r]) for a cluster's independent entries x_k = x[y0:]
    (called in a branch per kind of G: see :func:`~.layout.constant_map`). Inlined: as a
    call it cost more than the product itself on a geared rotor's 2 × 1 G (``benchmarks/results/design_notes.md``)."""
    for r in range(G.shape[0]):
        acc = g[r] if with_bias else 0.0
        for j in range(G.shape[1]):
            acc += G[r, j] * x[y0 + j]
        out[rows[r]] = acc


@helper(forceinline=True)
def _map_transpose(G, rows, f, y0, out):
    """out[y0 + j] = (G_kᵀ f_k)[j], f_k = f[rows] (see :func:`_map_rows`)."""
    for j in range(G.shape[1]):
        acc = 0.0
        for r in range(G.shape[0]):
            acc += G[r, j] * f[rows[r]]
        out[y0 + j] = acc


@kernel
def apply_explicit_map_transpose(mi, mf, ci, cf, cws, f, out):
    """out = Gᵀ f: independent generalized forces τ_ind = Gᵀτ from spanning-tree ones."""
    m = model_tables(mi, mf)
    c = cluster_tables(ci)
    w = cluster_workspace(cws, c, m.nq, m.nv)
    for k in range(c.n):
        y0, ny = c.yv_start[k], c.n_y[k]
        if c.kind[k] == RIGID:
            o = y0
            for i in cluster_bodies(c, k):
                for e in range(m.joint_nv[i]):
                    out[o + e] = f[m.v_index[i] + e]
                o += m.joint_nv[i]
            continue
        rows = carve(c.rows_v, c.row_start[k], c.n_spanning[k])
        if c.kind[k] == LINEAR:
            G, _ = constant_map(c, cf, k)
            _map_transpose(G, rows, f, y0, out)
        else:
            G, _ = explicit_map(c, cf, w, k)
            _map_transpose(G, rows, f, y0, out)


@kernel
def explicit_map_kernel(mi, mf, ci, cf, cws, x, out, positions, with_bias):
    """:func:`apply_explicit_map` called from Python (the helper itself has no Python
    entry point: see :mod:`soadyn.kernels`); returns OK."""
    apply_explicit_map(mi, mf, ci, cf, cws, x, out, positions, with_bias)
    return OK
