"""Cluster kinematics: the spanning state, the cluster transforms and the cluster motion
subspaces [Chignoli23, §V].

* cluster transforms ^kX_λ(k) [Chignoli23, eq. 17]: one nonzero block per row, the
  transform from the output body Λ(i) to body i, kept as the pose (Ro, to)[i] of i in
  Λ(i) (:func:`output_poses`);
* cluster motion subspace S_k = ^ΛX_λ · block(S_i) · G_k [Chignoli23, eq. 24] and its
  velocity product term c_k = Ṡ_k ẏ_k [Chignoli23, eq. 25–26, Alg. 1 l. 17–19], formed by
  a recursion inside the cluster instead of the dense remapping transform ^ΛX_λ: column j
  of S_k is the stack of body motions when q̇_k = G_k e_j and the output bodies are at
  rest (the lower-triangular ^ΛX_λ of eq. 20 is that recursion); c_k likewise with
  q̈_k = g_k, ÿ_k = 0 and the Coriolis terms of the tree joints
  (:func:`cluster_subspaces`).
"""
from __future__ import annotations


from ...core.jit import helper, kernel
from ...core.layout import model_tables, workspace_views
from ...core.status import BAD_FIRST, BAD_QUATERNION, BAD_SHAPE, OK
from ..kinematics import (forces_shape_ok, joint_sincos, nonfinite, place_body, quaternions_ok,
                          state_status, velocity_step)
from ..primitives import motion_to_child
from .explicit import apply_explicit_map
from .layout import (NONLINEAR, cluster_bodies, cluster_tables, cluster_workspace, constant_map, explicit_map,
                     motion_subspace, pair_rotor, velocity_product)


@helper(forceinline=True)
def cluster_state_status(mi, mf, ci, y, yd, third, fext, out_length):
    """Status of a cluster call's arguments: y (nyq,); ẏ and the third rate (ÿ or τ_ind)
    (nyv,); ``fext`` (nb, 6) or (0, 6); an output of ``out_length`` entries (nyv for ÿ
    and τ_ind); then their finiteness. The public fast path passes arrays unchecked, so
    the lengths are checked here: a short array would be read past its end, and an empty
    one is a caller's mistake (the public functions turn an absent rate into zeros before
    the kernel)."""
    m = model_tables(mi, mf)
    c = cluster_tables(ci)
    if (y.shape[0] != c.nyq or yd.shape[0] != c.nyv or third.shape[0] != c.nyv or not forces_shape_ok(m, fext)
            or out_length != c.nyv):
        return BAD_SHAPE
    return state_status(y, yd, third, fext)


@helper(forceinline=True)
def cluster_configuration_status(ci, y, out_length):
    """Status of a cluster call that takes y (nyq,) alone (C-CRBA, C-EFPA), with an
    output of ``out_length`` (nyv) rows: its length, then its finiteness."""
    c = cluster_tables(ci)
    if y.shape[0] != c.nyq or out_length != c.nyv:
        return BAD_SHAPE
    return BAD_FIRST if nonfinite(y) else OK


@helper
def output_poses(mi, mf, ws, ci, cws):
    """(Ro, to)[i]: the pose of body i in its output body Λ(i), composed along the tree
    path inside the cluster [Chignoli23, eq. 17–18]. Needs ``joint_placements``."""
    m = model_tables(mi, mf)
    t = workspace_views(ws, m)
    c = cluster_tables(ci)
    w = cluster_workspace(cws, c, m.nq, m.nv)
    Ro, to = w.Ro, w.to
    for i in range(m.nb):
        if c.parent_local[i] >= 0:
            p = m.parent[i]
            for a in range(3):
                acc = to[p, a]
                for k in range(3):
                    acc += Ro[p, a, k] * t.t[i, k]
                to[i, a] = acc
                for b in range(3):
                    acc = 0.0
                    for k in range(3):
                        acc += Ro[p, a, k] * t.R[i, k, b]
                    Ro[i, a, b] = acc
        else:
            for a in range(3):
                to[i, a] = t.t[i, a]
                for b in range(3):
                    Ro[i, a, b] = t.R[i, a, b]


@helper
def cluster_subspaces(mi, mf, ws, ci, cf, cws, with_bias, rotors_apart):
    """S_k [Chignoli23, eq. 24] and, with ``with_bias``, c_k = Ṡ_k ẏ_k (eq. 25–26) for every
    cluster. Needs ``joint_placements`` (and ``body_velocities`` for c_k). With
    ``rotors_apart`` a pair rotor's slots are left alone (:func:`positions_pass`)."""
    m = model_tables(mi, mf)
    t = workspace_views(ws, m)
    c = cluster_tables(ci)
    w = cluster_workspace(cws, c, m.nq, m.nv)
    for k in range(c.n):
        # a pair's rotor, a leaf of its cluster, skipped with rotors_apart
        skip = c.rotor_local[k] if rotors_apart and c.rotor_offset[k] >= 0 else -1
        if c.kind[k] == NONLINEAR:  # this call's G(q), g(q, q̇)
            G, g = explicit_map(c, cf, w, k)
            _cluster_subspace(m, t, c, w, k, G, g, True, with_bias, skip)
        else:  # constant G, g = 0 (a branch of its own: see constant_map)
            G, g = constant_map(c, cf, k)
            _cluster_subspace(m, t, c, w, k, G, g, False, with_bias, skip)


@helper(forceinline=True)  # (one function typed for both branches, inlined at each)
def _cluster_subspace(m, t, c, w, k, G, g, nonlinear, with_bias, skip):
    """S_k and (with ``with_bias``) c_k of cluster k by the recursion inside the cluster
    (module docstring), for its explicit map (G, g); not the slots of its body ``skip``
    (a local index; −1: none)."""
    S = motion_subspace(c, w, k)
    ck = velocity_product(c, w, k)
    for a, i in enumerate(cluster_bodies(c, k)):
        if a == skip:
            continue
        pl = c.parent_local[i]
        row = c.row_in_cluster[i]
        vi = m.v_index[i]
        for j in range(c.n_y[k]):
            if pl >= 0:  # the parent's motion carried to body i
                motion_to_child(t.R, t.t, i, S[j], pl, S[j], a)
            else:
                S[j, a, :] = 0.0
            for e in range(m.joint_nv[i]):  # plus body i's joint motion H*(i) q̇_i, q̇ = G e_j
                x = G[row + e, j]
                if x != 0.0:
                    for d in range(6):
                        S[j, a, d] += t.S[vi + e, d] * x
        if with_bias:
            if pl >= 0:
                motion_to_child(t.R, t.t, i, ck, pl, ck, a)
            else:
                ck[a, :] = 0.0
            for d in range(6):
                ck[a, d] += t.coriolis[i, d]
            if nonlinear:  # H*(i) q̈_i for q̈ = g
                for e in range(m.joint_nv[i]):
                    x = g[row + e]
                    for d in range(6):
                        ck[a, d] += t.S[vi + e, d] * x


@helper
def positions_pass(mi, mf, ws, ci, cf, cws, y, yd, with_velocity, with_bias, rotors_apart, placed):
    """The spanning state (q, q̇) = (γ(y), G ẏ), the joint placements, body velocities,
    output poses and S_k (and c_k). The positions and explicit form of the nonlinear
    clusters are the caller's, in the workspace (:func:`~.implicit.prepare_implicit`, or
    Python). With ``rotors_apart`` the rotors of link–rotor pairs are not placed: C-ABA
    takes them from their constants (:func:`~.aba.pair_step`): their entries of the tree
    workspace and their slots of S_k and c_k are not written, and what this pass derives
    from them (the rotor's pose in Λ) is not read by C-ABA. ``placed``: the tree's joint
    placements and body velocities are in the tree workspace already, at the spanning
    state the caller was given (the embedding method's rows, :func:`~.implicit.rows_place_the_tree`),
    so the tree pass is not run again. Returns a status."""
    m = model_tables(mi, mf)
    c = cluster_tables(ci)
    w = cluster_workspace(cws, c, m.nq, m.nv)
    apply_explicit_map(mi, mf, ci, cf, cws, y, w.q, True, False)
    if with_velocity:
        apply_explicit_map(mi, mf, ci, cf, cws, yd, w.qd, False, False)
    if not quaternions_ok(m, w.q):
        return BAD_QUATERNION
    t = workspace_views(ws, m)
    sc = t.sincos if placed else joint_sincos(t, w.q)
    for i in range(0 if placed else m.nb):  # the tree's joint placements and body velocities, parents first
        if rotors_apart and pair_rotor(c, i):
            continue
        place_body(m, t, i, w.q, sc)
        if with_velocity:
            velocity_step(m, t, i, w.qd)
    output_poses(mi, mf, ws, ci, cws)
    cluster_subspaces(mi, mf, ws, ci, cf, cws, with_bias, rotors_apart)
    return OK


@kernel
def cluster_subspaces_kernel(mi, mf, ws, ci, cf, cws, y, yd, with_velocity, k, S, c_k):
    """:func:`positions_pass`, then S_k into ``S`` (n_y, n_bodies, 6) and c_k into ``c_k``
    (n_bodies, 6) (when ``with_velocity``) for cluster k: the compiled quantities, for
    inspection from Python; returns a status."""
    st = positions_pass(mi, mf, ws, ci, cf, cws, y, yd, with_velocity, with_velocity, False, False)
    if st != OK:
        return st
    m = model_tables(mi, mf)
    c = cluster_tables(ci)
    w = cluster_workspace(cws, c, m.nq, m.nv)
    Sk = motion_subspace(c, w, k)
    for j in range(Sk.shape[0]):
        for a in range(Sk.shape[1]):
            for r in range(6):
                S[j, a, r] = Sk[j, a, r]
    if with_velocity:
        ck = velocity_product(c, w, k)
        for a in range(ck.shape[0]):
            for r in range(6):
                c_k[a, r] = ck[a, r]
    return OK
