"""C-RNEA: constrained inverse dynamics by the cluster-based recursive Newton–Euler
algorithm [Chignoli23, §VI]:

    τ_ind = Gᵀ (M(q)(G ÿ + g) + C(q, G ẏ)),   q = γ(y)   [Chignoli23, eq. 31, 35].

The cluster forward pass (eq. 33–34) gives each body the acceleration the spanning tree
gives it at q̈ = G ÿ + g — a cluster's transform chain is its bodies' tree transforms, and
S_k ÿ_k + c_k is their joints' motion — and the backward pass (eq. 35) followed by
τ_k = S_kᵀ f^J_k (eq. 31) is Gᵀ applied to the tree's joint forces. So the kernel runs
the explicit map, the tree RNEA at (γ(y), G ẏ, G ÿ + g) — the per-body steps of
:func:`~soadyn.kernels.rnea.rnea_passes`, the one RNEA recursion of the library, driven body
by body — and Gᵀ cluster by cluster: the same result without cluster subspaces S_k.

The rotor of a link–rotor pair (a geared motor: :func:`~.inertia.rotor_pair_constants`)
is not placed: its inertia I_r and joint axis h_r are constants in the frame of the body Λ
it sits on, so its velocity, acceleration and force follow in Λ's frame
(:func:`add_rotor_forces`) — unless an external force acts on a rotor (in its own frame).
"""
from __future__ import annotations


from ...core.jit import helper, kernel
from ...core.layout import borrow, carve, model_tables, workspace_size, workspace_views
from ...core.status import BAD_QUATERNION, BAD_SHAPE, OK
from ..kinematics import (acceleration_step, joint_sincos, place_body, quaternions_ok, result_status,
                          velocity_step)
from ..primitives import acceleration_entry
from ..rnea import force_step, gather_step
from .explicit import apply_explicit_map, apply_explicit_map_transpose
from .implicit import run_states
from .inertia import rotor_bias
from .kinematics import cluster_state_status
from .layout import (cluster_bodies, cluster_tables, cluster_workspace, no_rotor_forces, pair_rotor,
                     rotor_constants, split_plain_tables)


@kernel
def cluster_rnea_kernel(mi, mf, ws, y, yd, ydd, fext, ci, cf, cws, gravity, tau):
    """τ_ind from (y, ẏ, ÿ) into ``tau`` (the nonlinear clusters prepared in the
    workspace: their γ, G and g); returns a status."""
    return cluster_rnea_linked(mi, mf, ws, y, yd, ydd, fext, ci, cf, cws, gravity, tau)


# the algorithm without a Python entry, for the kernels that run it: an entry called from
# compiled code is optimized and turned into machine code on its own as well (its whole
# closure), a helper is linked into its callers only (soadyn.numba_patches.link_helpers_only;
# measured on C-ABA, :func:`~.aba.cluster_aba_linked`)
@helper
def cluster_rnea_linked(mi, mf, ws, y, yd, ydd, fext, ci, cf, cws, gravity, tau):
    """:func:`cluster_rnea_kernel`."""
    # borrowed views: the passes below then pass them on without reference counting
    mi, mf, ws, ci, cf, cws = borrow(mi), borrow(mf), borrow(ws), borrow(ci), borrow(cf), borrow(cws)
    y, yd, ydd, tau = borrow(y), borrow(yd), borrow(ydd), borrow(tau)
    st = cluster_state_status(mi, mf, ci, y, yd, ydd, fext, tau.shape[0])
    if st != OK:
        return st
    m = model_tables(mi, mf)
    w = cluster_workspace(cws, cluster_tables(ci), m.nq, m.nv)
    apply_explicit_map(mi, mf, ci, cf, cws, y, w.q, True, False)  # q = γ(y): rigid and linear clusters
    apply_explicit_map(mi, mf, ci, cf, cws, yd, w.qd, False, False)  # q̇ = G ẏ
    apply_explicit_map(mi, mf, ci, cf, cws, ydd, w.qdd, False, True)  # q̈ = G ÿ + g
    if not quaternions_ok(m, w.q):
        return BAD_QUATERNION
    if ws.shape[0] != workspace_size(m.nb, m.nv):
        return BAD_SHAPE
    # the steps of the tree RNEA (rnea_passes without its argument checks: q, q̇, q̈ come
    # from the checked y, ẏ, ÿ), the rotors of link–rotor pairs left to add_rotor_forces
    c = cluster_tables(ci)
    t = workspace_views(ws, m)
    rotors_apart = no_rotor_forces(c, fext)  # (an external force on a rotor acts in its own frame)
    sc = joint_sincos(t, w.q)
    for i in range(m.nb):  # base to tips
        if rotors_apart and pair_rotor(c, i):
            continue
        place_body(m, t, i, w.q, sc)
        velocity_step(m, t, i, w.qd)
        acceleration_step(m, t, i, w.qdd, gravity, True)
        force_step(m, t, i, fext, True)
    T = carve(w.flat, w.scratch_offsets[0], m.nv)  # the tree's joint forces, in a scratch area (≥ 6 nb rows)
    if rotors_apart:
        add_rotor_forces(m, t, c, cf, w, gravity, T)
    for i in range(m.nb - 1, -1, -1):  # tips to base
        if not (rotors_apart and pair_rotor(c, i)):
            gather_step(m, t, i, T)
    apply_explicit_map_transpose(mi, mf, ci, cf, cws, T, tau)  # τ_ind = Gᵀ T
    return result_status(tau)


@helper
def add_rotor_forces(m, t, c, cf, w, gravity, T):
    """Each pair rotor's force, in the frame of the body Λ it sits on, added to Λ's force
    in ``t.f``, and its joint force h_rᵀ f_r into ``T`` (its entry of the tree's joint
    forces). With V, α the velocity and acceleration of Λ (the world: 0 and −g), q̇_r, q̈_r
    the rotor's joint rates and I_r, h_r its constants (:func:`~.layout.rotor_constants`),
    the tree's step for the rotor [Jain12, eq. 11, 14–15] seen from Λ is

        v_r = V + h_r q̇_r,   a_r = α + h_r q̈_r + V × h_r q̇_r,   f_r = I_r a_r + v_r ×* I_r v_r

    (h_r q̇_r × h_r q̇_r = 0; c_r = V × h_r q̇_r and the bias force by
    :func:`~.inertia.rotor_bias`). Needs Λ's velocity and acceleration in the tree workspace."""
    a, c_r, p_r = w.vec[0], w.vec[1], w.vec[2]
    for k in range(c.n):
        if c.rotor_offset[k] < 0:
            continue
        r = cluster_bodies(c, k)[c.rotor_local[k]]
        lam = c.output_body[r]
        I_r, _, _, h = rotor_constants(c, cf, k)
        qdd = w.qdd[m.v_index[r]]
        rotor_bias(t.V, lam, I_r, h, w.qd[m.v_index[r]], c_r, p_r, w.vec[3:5])
        for e in range(6):  # a_r = α + h q̈ + c_r (the world: α = −g)
            a[e] = acceleration_entry(t.alpha, lam, e, m.gravity, gravity) + h[e] * qdd + c_r[e]
        f = w.vec[5]
        tau_r = 0.0
        for e in range(6):  # f_r = I_r a_r + p_r and the rotor's joint force h_rᵀ f_r
            acc = p_r[e]
            for b in range(6):
                acc += I_r[e, b] * a[b]
            f[e] = acc
            tau_r += h[e] * acc
        T[m.v_index[r]] = tau_r
        if lam >= 0:  # f_r is in Λ's frame: added as it is
            for e in range(6):
                t.f[lam, e] += f[e]


@kernel
def cluster_rnea_plain_kernel(tables, y, yd, ydd, gravity, tau):
    """:func:`cluster_rnea_kernel` for the plain call (no external forces) with all its
    tables in one array (:func:`~.layout.pack_plain_tables`). Returns a status."""
    ok, mi, mf, ws, ci, cf, cws, no_forces = split_plain_tables(tables)
    if not ok:
        return BAD_SHAPE
    return cluster_rnea_linked(mi, mf, ws, y, yd, ydd, no_forces, ci, cf, cws, gravity, tau)


@kernel(nogil=True)
def cluster_rnea_states(tables, Y, YD, YDD, FEXT, Q, gravity, mode, TAU, status, start, stop):
    """:func:`cluster_rnea_kernel` after :func:`~.implicit.prepare_implicit` on states
    ``start`` to ``stop − 1`` of flat arrays, as :func:`~.aba.cluster_aba_states` runs
    C-ABA (the same arguments, ÿ in place of τ_ind and τ_ind the output)."""
    return run_states(cluster_rnea_linked, tables, Y, YD, YDD, FEXT, Q, gravity, mode, TAU, status, start, stop)
