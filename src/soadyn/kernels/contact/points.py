"""The contact Jacobian J of k contact points without forming it: its pick-offs, J v and Jᵀλ.

Contact i is between the bodies ``cbody[i]`` = (first, second) (−1: the world) at the world
point p_i with the frame C_i = ``cframe[i]`` (columns t1, t2, n). Its contact velocity is
σ_i = C_iᵀ (v_second(p_i) − v_first(p_i)), the world velocity of the second body's
material point at p_i relative to the first's, in the contact frame; an impulse λ_i (in
the contact frame) acts on the second body and −λ_i on the first
(:mod:`soadyn.geometry.contacts`). So J_i = J_second(p_i) − J_first(p_i), each side a
pick-off X (6 × 3) from the body frame to the contact point: the spatial force [n; f] on
body b (body frame, at its origin) of a contact force λ is X λ, and σ's part from body b is
Xᵀ V_b ([Jain24]: the pick-off operator ℬ restricted to the three linear directions).
"""
from __future__ import annotations

from ...core.jit import helper, kernel
from ...core.layout import model_tables, workspace_views
from ...core.status import BAD_SHAPE, OK
from ..kinematics import body_velocities, configuration_status, joint_placements, world_poses
from ..rnea import generalized_forces_pass


@helper(forceinline=True)
def point_pickoff(Rw, pw, b, cpoint, cframe, i, sign, X):
    """X (6, 3) ← sign · [[r]× C; C], C = R_bᵀ C_i, r = R_bᵀ(p_i − p_b): the pick-off of
    contact i on body b (world pose ``Rw[b]``, ``pw[b]``), the spatial force on b of a unit
    contact force along each contact axis. ``sign`` −1 for the first body, +1 for the second."""
    d0 = cpoint[i, 0] - pw[b, 0]
    d1 = cpoint[i, 1] - pw[b, 1]
    d2 = cpoint[i, 2] - pw[b, 2]
    r0 = Rw[b, 0, 0] * d0 + Rw[b, 1, 0] * d1 + Rw[b, 2, 0] * d2
    r1 = Rw[b, 0, 1] * d0 + Rw[b, 1, 1] * d1 + Rw[b, 2, 1] * d2
    r2 = Rw[b, 0, 2] * d0 + Rw[b, 1, 2] * d1 + Rw[b, 2, 2] * d2
    for c in range(3):
        e0 = cframe[i, 0, c]
        e1 = cframe[i, 1, c]
        e2 = cframe[i, 2, c]
        c0 = sign * (Rw[b, 0, 0] * e0 + Rw[b, 1, 0] * e1 + Rw[b, 2, 0] * e2)
        c1 = sign * (Rw[b, 0, 1] * e0 + Rw[b, 1, 1] * e1 + Rw[b, 2, 1] * e2)
        c2 = sign * (Rw[b, 0, 2] * e0 + Rw[b, 1, 2] * e1 + Rw[b, 2, 2] * e2)
        X[0, c] = r1 * c2 - r2 * c1
        X[1, c] = r2 * c0 - r0 * c2
        X[2, c] = r0 * c1 - r1 * c0
        X[3, c] = c0
        X[4, c] = c1
        X[5, c] = c2


@helper(forceinline=True)
def contacts_shape_ok(m, cbody, cpoint, cframe):
    """True when the contact arrays agree in length and name bodies of the model."""
    k = cbody.shape[0]
    if cbody.shape[1] != 2 or cpoint.shape[0] != k or cpoint.shape[1] != 3 or cframe.shape[0] != k:
        return False
    if cframe.shape[1] != 3 or cframe.shape[2] != 3:
        return False
    for i in range(k):
        for s in range(2):
            if not -1 <= cbody[i, s] < m.nb:
                return False
    return True


@helper(forceinline=True)
def contact_velocities_pass(w, cbody, cpoint, cframe, X, sigma):
    """σ_i = Σ_sides X_sideᵀ V_b (:func:`point_pickoff`) from the world poses and body
    velocities in the workspace views ``w``; ``X`` a (6, 3) scratch."""
    for i in range(cbody.shape[0]):
        for c in range(3):
            sigma[i, c] = 0.0
        for s in range(2):
            b = cbody[i, s]
            if b < 0:
                continue
            point_pickoff(w.Rw, w.pw, b, cpoint, cframe, i, 2.0 * s - 1.0, X)
            for c in range(3):
                acc = 0.0
                for a in range(6):
                    acc += X[a, c] * w.V[b, a]
                sigma[i, c] += acc


@helper(forceinline=True)
def contact_forces_pass(w, cbody, cpoint, cframe, lam, X, F):
    """F (nb, 6) ← the spatial forces [n; f] (body frames, at the body origins) of the
    impulses ``lam`` (k, 3) on the bodies: Σ over the contacts on b of X λ_i. Needs the
    world poses in ``w``; ``X`` a (6, 3) scratch."""
    F[:] = 0.0
    for i in range(cbody.shape[0]):
        for s in range(2):
            b = cbody[i, s]
            if b < 0:
                continue
            point_pickoff(w.Rw, w.pw, b, cpoint, cframe, i, 2.0 * s - 1.0, X)
            for a in range(6):
                F[b, a] += X[a, 0] * lam[i, 0] + X[a, 1] * lam[i, 1] + X[a, 2] * lam[i, 2]


@kernel(nogil=True)
def contact_velocities_kernel(mi, mf, ws, q, v, cbody, cpoint, cframe, sigma):
    """σ = J v (k, 3) at (q, v), each row in its contact frame. Returns a status."""
    m = model_tables(mi, mf)
    st = configuration_status(m, q, ws)
    if st != OK:
        return st
    if v.shape[0] != m.nv or not contacts_shape_ok(m, cbody, cpoint, cframe) or sigma.shape[0] != cbody.shape[0]:
        return BAD_SHAPE
    w = workspace_views(ws, m)
    joint_placements(mi, mf, ws, q)
    world_poses(mi, mf, ws)
    body_velocities(mi, mf, ws, v)
    contact_velocities_pass(w, cbody, cpoint, cframe, w.scratch[0], sigma)
    return OK


@kernel(nogil=True)
def contact_impulse_kernel(mi, mf, ws, q, cbody, cpoint, cframe, lam, F, tau):
    """The generalized impulse Jᵀλ (nv,) into ``tau`` and the bodies' spatial impulses
    (nb, 6) into ``F``, for the contact impulses ``lam`` (k, 3), by one gather
    ([Jain12, eq. 12]). Returns a status."""
    m = model_tables(mi, mf)
    st = configuration_status(m, q, ws)
    if st != OK:
        return st
    if (not contacts_shape_ok(m, cbody, cpoint, cframe) or lam.shape[0] != cbody.shape[0] or lam.shape[1] != 3
            or F.shape[0] != m.nb or F.shape[1] != 6 or tau.shape[0] != m.nv):
        return BAD_SHAPE
    w = workspace_views(ws, m)
    joint_placements(mi, mf, ws, q)
    world_poses(mi, mf, ws)
    contact_forces_pass(w, cbody, cpoint, cframe, lam, w.scratch[0], F)
    for b in range(m.nb):
        for a in range(6):
            w.f[b, a] = F[b, a]
    generalized_forces_pass(mi, mf, ws, tau)
    return OK
