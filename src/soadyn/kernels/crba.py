"""The mass matrix M(θ) by two methods.

* Composite rigid bodies (:func:`mass_matrix_kernel`): the tips-to-base gather of the
  composite inertias R(k) = Σ_{j ∈ children(k)} φ(k, j) R(j) φ*(k, j) + M(k) (the
  solution of the forward Lyapunov equation, [Jain24, topic 4]) and the decomposition of
  M = HφMφ*H* [Jain12, eq. 17] into  M(i, j) = H(i) φ(i, j) R(j) H*(j)  for i ⪯ j.
* J ᵀ M J (:func:`mass_matrix_jtmj_kernel`): [CDI18, eq. 14, "Computing System Mass
  Matrix"]: M = Gᵀ Ψ_Dᵀ M Ψ_D G column by column with the O(N) algorithms for Ψ_D x and
  Ψ_Dᵀ x, with body-frame operators, O(N²); kept as an independent second method.
"""
from __future__ import annotations


from ..core.jit import helper, kernel
from ..core.layout import borrow, model_tables, workspace_views
from ..core.status import BAD_SHAPE, OK
from .kinematics import configuration_status, joint_placements, matrix_result_status, world_poses
from .primitives import (add_force_to_parent, add_rigid_inertia_to_parent, add_rigid_inertia_to_parent_about_axis,
                         copy_upper_to_lower, force_to_world, joint_column_to_world, motion_to_child,
                         rigid_inertia_matrix, rigid_inertia_times_joint_column)


@helper
def composite_rigid_inertias(mi, mf, ws):
    """``w.crb[k]`` = R(k), the composite rigid-body inertia of the subtree at k in
    10-parameter form (m, h, I_o; body frame).

    A composite of rigid bodies is a rigid body, so each step of the gather is the
    parallel-axis theorem rather than a general 6×6 congruence. Needs
    ``joint_placements`` first.
    """
    m = model_tables(mi, mf)
    w = workspace_views(ws, m)
    crb = w.crb
    for i in range(m.nb):
        for k in range(10):
            crb[i, k] = m.rigid[i, k]
    for i in range(m.nb - 1, -1, -1):
        p = m.parent[i]
        if p < 0:
            continue
        code = m.axis_code[i]
        if 0 < abs(code) <= 3 and not m.rotated[i]:  # R = R_J, a turn about e_k
            add_rigid_inertia_to_parent_about_axis(w.R, w.t, i, abs(code) - 1, crb, crb, p)
        else:
            add_rigid_inertia_to_parent(w.R, w.t, i, crb, crb, p)


@helper
def composite_inertias(mi, mf, ws):
    """``w.P[k]`` = R(k), the composite rigid-body inertia of the subtree at k (body
    frame, 6×6); ``w.crb`` keeps the same in 10-parameter form."""
    composite_rigid_inertias(mi, mf, ws)
    m = model_tables(mi, mf)
    w = workspace_views(ws, m)
    for i in range(m.nb):
        rigid_inertia_matrix(w.crb, i, w.P, i)


@kernel
def mass_matrix_kernel(mi, mf, ws, q, M):
    """M(q) into ``M`` (nv, nv), both triangles (:func:`mass_matrix_pass`)."""
    mi, mf, ws, q = borrow(mi), borrow(mf), borrow(ws), borrow(q)
    m = model_tables(mi, mf)
    st = configuration_status(m, q, ws)
    if st != OK:
        return st
    if M.shape[0] != m.nv or M.shape[1] != m.nv:
        return BAD_SHAPE
    joint_placements(mi, mf, ws, q)
    world_poses(mi, mf, ws)
    mass_matrix_pass(mi, mf, ws, M)
    return matrix_result_status(M)


@helper
def mass_matrix_pass(mi, mf, ws, M):
    """M(j, i) = H(j) φ(j, i) R(i) H*(i) for every ancestor j of i (both triangles), given
    the body poses (``joint_placements`` and ``world_poses`` first).

    The pairing of a joint-map column with a force does not depend on the frame, so
    both are taken to world axes at the world origin once (``w.Sw``: the columns of H*;
    R(i)H*(i) as 6 scalars) and each entry is a 6-term dot product.
    """
    m = model_tables(mi, mf)
    w = workspace_views(ws, m)
    composite_rigid_inertias(mi, mf, ws)
    Sw = w.Sw
    M[:, :] = 0.0  # entries of dofs on different branches stay zero
    for i in range(m.nb):
        vi = m.v_index[i]
        for c in range(vi, vi + m.joint_nv[i]):
            Sw[c, 0], Sw[c, 1], Sw[c, 2], Sw[c, 3], Sw[c, 4], Sw[c, 5] = joint_column_to_world(
                m.axis_code[i], i, w.S, c, w.Rw, w.pw)
    for i in range(m.nb):
        vi = m.v_index[i]
        for c in range(m.joint_nv[i]):
            col = vi + c
            # f = R(i) H*(i) column c, in world axes at the world origin
            f0, f1, f2, f3, f4, f5 = rigid_inertia_times_joint_column(m.axis_code[i], i, w.crb, w.S, col)
            f0, f1, f2, f3, f4, f5 = force_to_world(w.Rw, w.pw, i, f0, f1, f2, f3, f4, f5)
            for c2 in range(c + 1):  # the joint's own block, upper triangle
                x = (Sw[vi + c2, 0] * f0 + Sw[vi + c2, 1] * f1 + Sw[vi + c2, 2] * f2
                     + Sw[vi + c2, 3] * f3 + Sw[vi + c2, 4] * f4 + Sw[vi + c2, 5] * f5)
                M[vi + c2, col] = x
                M[col, vi + c2] = x
            j = m.parent[i]
            while j >= 0:
                vj = m.v_index[j]
                for d in range(vj, vj + m.joint_nv[j]):
                    x = (Sw[d, 0] * f0 + Sw[d, 1] * f1 + Sw[d, 2] * f2
                         + Sw[d, 3] * f3 + Sw[d, 4] * f4 + Sw[d, 5] * f5)
                    M[d, col] = x
                    M[col, d] = x
                j = m.parent[j]


@kernel(nogil=True)
def mass_matrix_batch(mi, mf, ws, Q, M, status, start, stop):
    """:func:`mass_matrix_kernel` on states ``start`` to ``stop − 1`` of a batch, with one workspace (a
    block of a batched call, see :func:`soadyn.core.batch.run_blocks`)."""
    for b in range(start, stop):
        status[b] = mass_matrix_kernel(mi, mf, ws, Q[b], M[b])


@kernel
def mass_matrix_jtmj_kernel(mi, mf, ws, q, M):
    """M = Gᵀ Ψ_Dᵀ M Ψ_D G [CDI18, eq. 14], one column c at a time by the O(N) operator
    products of [CDI18, "O(N) Recursive Operators"]:

    1. J(:, c) = Ψ_D G(:, c): z_i = φ*(℘(i), i) z_℘(i) + H*(i) G(i, c), base to tips;
    2. Q(:, c) = M J(:, c): Q_i = M(i) J_i(:, c), body by body;
    3. M(:, c) = Gᵀ Ψ_Dᵀ Q(:, c): y_i = Q_i + Σ_{j ∈ children(i)} φ(i, j) y_j, tips to base,
       and M(r, c) = H(i) y_i for the coordinates r of body i.

    Each step is O(N) per column, so M costs O(N²) — the order [CDI18] gives for the
    procedure "J, then Q = MJ, then JᵀQ", which holds when step 3 is the Ψ_Dᵀ recursion
    rather than a dense product (O(N³) on a chain)."""
    # borrowed views: the passes below then pass them on without reference counting
    mi, mf, ws, q = borrow(mi), borrow(mf), borrow(ws), borrow(q)
    m = model_tables(mi, mf)
    st = configuration_status(m, q, ws)
    if st != OK:
        return st
    nb, nv = m.nb, m.nv
    if M.shape[0] != nv or M.shape[1] != nv:
        return BAD_SHAPE
    w = workspace_views(ws, m)
    joint_placements(mi, mf, ws, q)
    J, Q = w.V, w.f  # one column at a time: J_i(:, c), then Q_i (gathered in place into y_i)
    for c in range(nv):
        for i in range(nb):  # 1. and 2.
            p = m.parent[i]
            if p >= 0:
                motion_to_child(w.R, w.t, i, J, p, J, i)
            else:
                for a in range(6):
                    J[i, a] = 0.0
            vi = m.v_index[i]
            if vi <= c < vi + m.joint_nv[i]:
                for a in range(6):
                    J[i, a] += w.S[c, a]
            for a in range(6):
                acc = 0.0
                for b in range(6):
                    acc += m.inertia[i, a, b] * J[i, b]
                Q[i, a] = acc
        for i in range(nb - 1, -1, -1):  # 3.
            vi = m.v_index[i]
            for r in range(vi, vi + m.joint_nv[i]):
                acc = 0.0
                for a in range(6):
                    acc += w.S[r, a] * Q[i, a]
                M[r, c] = acc
            p = m.parent[i]
            if p >= 0:
                add_force_to_parent(w.R, w.t, i, Q, i, Q, p)
    copy_upper_to_lower(M)  # exactly symmetric: the upper triangle (r ≤ c) mirrored
    return OK
