"""Forward kinematics: joint transforms, body poses, velocities and accelerations.

The base-to-tips scatter recursions of [Jain12, eq. 15] (V = φ*H*θ̇, α = φ*(H*θ̈ + a))
evaluated body by body:

    V(k) = φ*(℘(k), k) V(℘(k)) + H*(k) θ̇(k)
    α(k) = φ*(℘(k), k) α(℘(k)) + H*(k) θ̈(k) + a(k)

The passes here are shared by every algorithm (RNEA, ABA, CRBA, Jacobians, energy).
A pass takes the packed model and workspace (``mi, mf, ws``) and reads them through
named views, ``m = model_tables(mi, mf)`` and ``w = workspace_views(ws, m)``
(:mod:`soadyn.core.layout`); the per-body steps it runs, inlined, take ``m`` and ``w``.
(Passing the views themselves to a function that is not inlined costs more than carving
them again: ~2× on a 30-body ABA.)
"""
from __future__ import annotations

import math

from numba import njit

from ..core.joints import FREE, REVOLUTE, SPHERICAL, joint_pose_and_subspace
from ..core.layout import carve, model_tables, sizes_match, workspace_views
from ..core.status import BAD_FEXT, BAD_FIRST, BAD_QUATERNION, BAD_SECOND, BAD_SHAPE, BAD_THIRD, OK
from .primitives import axis_coriolis_term, compose_pose, coriolis_term, motion_to_child, parent_acceleration


# --------------------------------------------------------------------------- absent arguments
# Every kernel has one signature: an argument that may be absent (a velocity meaning zero,
# no external forces) is passed as an empty array rather than None, so that Numba compiles
# one version of each kernel (each version costs seconds of compile time).

@njit(forceinline=True, cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def absent(ws):
    """An empty vector (0,), the stand-in for an absent rate or force argument."""
    return carve(ws, 0, 0)


@njit(forceinline=True, cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def no_forces(ws):
    """An empty (0, 6) array: no external forces."""
    return carve(ws, 0, (0, 6))


# --------------------------------------------------------------------------- input checks
@njit(forceinline=True, cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def nonfinite(x):
    for k in range(x.shape[0]):
        if not math.isfinite(x[k]):
            return True
    return False


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def state_status(first, second, third, fext):
    """Status code of the first non-finite state argument, ``OK`` when all are finite.
    Absent arguments are empty arrays (``fext`` (0, 6)), which are finite."""
    if nonfinite(first):
        return BAD_FIRST
    if nonfinite(second):
        return BAD_SECOND
    if nonfinite(third):
        return BAD_THIRD
    for i in range(fext.shape[0]):
        if nonfinite(fext[i]):
            return BAD_FEXT
    return OK


@njit(forceinline=True, cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def quaternions_ok(m, q):
    """False when a free or spherical joint's quaternion is zero."""
    for i in range(m.nb):
        jt = m.joint_type[i]
        if jt == FREE or jt == SPHERICAL:
            o = m.q_index[i] + (3 if jt == FREE else 0)
            if q[o] == 0.0 and q[o + 1] == 0.0 and q[o + 2] == 0.0 and q[o + 3] == 0.0:
                return False
    return True


@njit(forceinline=True, cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def forces_shape_ok(m, fext):
    """``fext`` is an (nb, 6) array, or (0, 6) for no forces."""
    return (fext.shape[0] == 0 or fext.shape[0] == m.nb) and fext.shape[1] == 6


@njit(forceinline=True, cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def rates_shape_ok(m, x):
    """A velocity-sized argument: nv entries, or none (absent: zero)."""
    return x.shape[0] == m.nv or x.shape[0] == 0


@njit(forceinline=True, cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def configuration_status(m, q, ws):
    """Status of a configuration argument: length, finiteness, nonzero quaternions."""
    if not sizes_match(m, q, ws):
        return BAD_SHAPE
    if nonfinite(q):
        return BAD_FIRST
    if not quaternions_ok(m, q):
        return BAD_QUATERNION
    return OK


# --------------------------------------------------------------------------- passes
@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def joint_placements(mi, mf, ws, q):
    """Pose ``(w.R[k], w.t[k])`` of each body in its parent and the joint maps ``w.S``:
    (R, t) = (R_tree R_J(q), p_tree + R_tree p_J(q)), the joint placement followed by the
    joint transform, which defines φ(℘(k), k). Also fills ``w.Rj, w.pj`` (the joint
    transform alone). See :func:`place_body`."""
    m = model_tables(mi, mf)
    w = workspace_views(ws, m)
    for i in range(m.nb):
        place_body(m, w, i, q)


@njit(forceinline=True, cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def place_body(m, w, i, q):
    """Body i's part of :func:`joint_placements`. Revolute joints about a coordinate axis
    and placements without rotation take short paths (no general 3×3 products)."""
    code = m.axis_code[i]
    vi = m.v_index[i]
    R, t, Rj, pj, S = w.R, w.t, w.Rj, w.pj, w.S
    if code != 0 and m.joint_type[i] == REVOLUTE:
        # rotation by θ about ±e_k: only the (k1, k2) plane turns
        k = abs(code) - 1
        k1 = (k + 1) % 3
        k2 = (k + 2) % 3
        th = q[m.q_index[i]]
        c = math.cos(th)
        s = math.sin(th) if code > 0 else -math.sin(th)
        for a in range(3):
            pj[i, a] = 0.0
            for b in range(3):
                Rj[i, a, b] = 0.0
        Rj[i, k, k] = 1.0
        Rj[i, k1, k1] = c
        Rj[i, k2, k2] = c
        Rj[i, k1, k2] = -s
        Rj[i, k2, k1] = s
        for a in range(6):
            S[vi, a] = 0.0
        S[vi, k] = 1.0 if code > 0 else -1.0
        rot_tree = m.rot_tree
        if m.rotated[i]:
            for a in range(3):
                t[i, a] = m.pos_tree[i, a]
                R[i, a, k] = rot_tree[i, a, k]
                R[i, a, k1] = rot_tree[i, a, k1] * c + rot_tree[i, a, k2] * s
                R[i, a, k2] = rot_tree[i, a, k2] * c - rot_tree[i, a, k1] * s
        else:
            for a in range(3):
                t[i, a] = m.pos_tree[i, a]
                for b in range(3):
                    R[i, a, b] = Rj[i, a, b]
        return
    joint_pose_and_subspace(i, m.joint_type[i], m.n_sub[i], m.sub_kinds[i], m.axes, m.pitch, q, m.q_index[i],
                            S, vi, Rj, pj)
    if m.rotated[i]:
        compose_pose(m.rot_tree, m.pos_tree, i, Rj, pj, i, R, t, i)
    else:
        for a in range(3):
            t[i, a] = m.pos_tree[i, a] + pj[i, a]
            for b in range(3):
                R[i, a, b] = Rj[i, a, b]


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def world_poses(mi, mf, ws):
    """World pose of every body: (Rw, pw)[k] = (Rw, pw)[℘(k)] ∘ (R, t)[k]."""
    m = model_tables(mi, mf)
    w = workspace_views(ws, m)
    for i in range(m.nb):
        world_pose(m, w, i)


@njit(forceinline=True, cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def world_pose(m, w, i):
    """Body i's part of :func:`world_poses` (its parent's world pose must be known)."""
    p = m.parent[i]
    if p < 0:
        for a in range(3):
            w.pw[i, a] = w.t[i, a]
            for b in range(3):
                w.Rw[i, a, b] = w.R[i, a, b]
    else:
        compose_pose(w.Rw, w.pw, p, w.R, w.t, i, w.Rw, w.pw, i)


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def body_velocities(mi, mf, ws, v):
    """V(k) = φ*(℘(k), k) V(℘(k)) + H*(k)θ̇(k) into ``w.V`` and the Coriolis term
    a(k) = V(k) × H*(k)θ̇(k) + Ḣ*(k)θ̇(k) [Jain12, eq. 11] into ``w.coriolis``."""
    m = model_tables(mi, mf)
    w = workspace_views(ws, m)
    V, C, S = w.V, w.coriolis, w.S
    for i in range(m.nb):
        p = m.parent[i]
        vi = m.v_index[i]
        if p < 0:
            for a in range(6):
                V[i, a] = 0.0
        else:
            motion_to_child(w.R, w.t, i, V, p, V, i)
        code = m.axis_code[i]
        if code != 0:
            k = abs(code) - 1
            x = v[vi] if code > 0 else -v[vi]
            V[i, k] += x
            axis_coriolis_term(V, i, k, x, C)
            continue
        n = m.joint_nv[i]
        for c in range(n):
            x = v[vi + c]
            for a in range(6):
                V[i, a] += S[vi + c, a] * x
        coriolis_term(m.joint_type[i], i, S, vi, n, v, V, C)


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def body_accelerations(mi, mf, ws, qdd, gravity, has_v):
    """α(k) = φ*(℘(k), k) α(℘(k)) + H*(k) θ̈(k) + a(k) [Jain12, eq. 15] into ``w.alpha``.

    The base acceleration α(world) is −g when ``gravity`` (the fictitious acceleration
    that models gravity), else 0; an empty ``qdd`` means θ̈ = 0; without ``has_v`` the
    Coriolis terms a(k) are skipped (zero velocity).
    """
    m = model_tables(mi, mf)
    w = workspace_views(ws, m)
    A = w.alpha
    for i in range(m.nb):
        parent_acceleration(w.R, w.t, i, m.parent[i], m.gravity, gravity, A)
        if qdd.shape[0] > 0:
            vi = m.v_index[i]
            code = m.axis_code[i]
            if code != 0:
                A[i, abs(code) - 1] += qdd[vi] if code > 0 else -qdd[vi]
            else:
                for c in range(m.joint_nv[i]):
                    x = qdd[vi + c]
                    for k in range(6):
                        A[i, k] += w.S[vi + c, k] * x
        if has_v:
            for k in range(6):
                A[i, k] += w.coriolis[i, k]


# --------------------------------------------------------------------------- kernels
@njit(forceinline=True, cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def poses_into(mi, mf, ws, q, R_out, p_out):
    """World poses of every body for a checked ``q``, into ``R_out`` (nb, 3, 3) and
    ``p_out`` (nb, 3)."""
    m = model_tables(mi, mf)
    w = workspace_views(ws, m)
    joint_placements(mi, mf, ws, q)
    world_poses(mi, mf, ws)
    for i in range(m.nb):
        for k in range(3):
            p_out[i, k] = w.pw[i, k]
            for j in range(3):
                R_out[i, k, j] = w.Rw[i, k, j]


@njit(cache=True)
def poses_kernel(mi, mf, ws, q, R_out, p_out):
    """World poses only (:func:`kinematics_kernel` without rates): five arguments fewer
    through Numba's dispatcher (~0.1 µs each) for the most common kinematic call."""
    m = model_tables(mi, mf)
    st = configuration_status(m, q, ws)
    if st != OK:
        return st
    if R_out.shape[0] != m.nb or p_out.shape[0] != m.nb:
        return BAD_SHAPE
    poses_into(mi, mf, ws, q, R_out, p_out)
    return OK


@njit(nogil=True, cache=True)
def poses_batch(mi, mf, ws, Q, R_out, p_out, status, start, stop):
    """:func:`poses_kernel` on states ``start`` to ``stop − 1`` of a batch (a block of a
    batched call, see :func:`soadyn.core.call.run_blocks`)."""
    for b in range(start, stop):
        status[b] = poses_kernel(mi, mf, ws, Q[b], R_out[b], p_out[b])


@njit(cache=True)
def kinematics_kernel(mi, mf, ws, q, v, a, gravity, R_out, p_out, V_out, A_out):
    """World poses into ``R_out, p_out``; with ``v`` body velocities into ``V_out``; with
    ``a`` (and ``v``) body accelerations into ``A_out``. ``v``, ``a`` may be empty
    (absent), their outputs then (0, 6)."""
    m = model_tables(mi, mf)
    nb = m.nb
    st = configuration_status(m, q, ws)
    if st != OK:
        return st
    if R_out.shape[0] != nb or p_out.shape[0] != nb:
        return BAD_SHAPE
    has_v, has_a = v.shape[0] > 0, a.shape[0] > 0
    if not rates_shape_ok(m, v) or not rates_shape_ok(m, a) or V_out.shape[0] != (nb if has_v else 0) \
            or A_out.shape[0] != (nb if has_a else 0) or (has_a and not has_v):
        return BAD_SHAPE
    if nonfinite(v):
        return BAD_SECOND
    if nonfinite(a):
        return BAD_THIRD
    w = workspace_views(ws, m)
    poses_into(mi, mf, ws, q, R_out, p_out)
    if has_v:
        body_velocities(mi, mf, ws, v)
        for i in range(nb):
            for k in range(6):
                V_out[i, k] = w.V[i, k]
        if has_a:
            body_accelerations(mi, mf, ws, a, gravity, True)
            for i in range(nb):
                for k in range(6):
                    A_out[i, k] = w.alpha[i, k]
    return OK


@njit(nogil=True, cache=True)
def kinematics_batch(mi, mf, ws, Q, Vq, Aq, gravity, R_out, p_out, V_out, A_out, status, start, stop):
    """:func:`kinematics_kernel` on states ``start`` to ``stop − 1`` of a batch, with one workspace (a
    block of a batched call, see :func:`soadyn.core.call.run_blocks`)."""
    for b in range(start, stop):
        status[b] = kinematics_kernel(mi, mf, ws, Q[b], Vq[b], Aq[b], gravity, R_out[b], p_out[b], V_out[b],
                                      A_out[b])
