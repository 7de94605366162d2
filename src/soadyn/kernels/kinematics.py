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


from ..core.jit import helper, kernel
from ..core.joints import FREE, REVOLUTE, SPHERICAL, joint_pose_and_subspace
from ..core.layout import borrow, carve, model_tables, sizes_match, state_count, state_of, workspace_views
from ..core.status import BAD_FEXT, BAD_FIRST, BAD_QUATERNION, BAD_SECOND, BAD_SHAPE, BAD_THIRD, OK, OVERFLOW
from .primitives import axis_coriolis_term, compose_pose, coriolis_term, motion_to_child, parent_acceleration
from .trig import sincos, sincos_into


# --------------------------------------------------------------------------- absent arguments
# Every kernel has one signature: an argument that may be absent (a velocity meaning zero,
# no external forces) is passed as an empty array rather than None, so that Numba compiles
# one version of each kernel (each version costs seconds of compile time).

@helper(forceinline=True)
def absent(ws):
    """An empty vector (0,), the stand-in for an absent rate or force argument."""
    return carve(ws, 0, 0)


@helper(forceinline=True)
def no_forces(ws):
    """An empty (0, 6) array: no external forces."""
    return carve(ws, 0, (0, 6))


# --------------------------------------------------------------------------- input checks
@helper(forceinline=True)
def nonfinite(x):
    for k in range(x.shape[0]):
        if not math.isfinite(x[k]):
            return True
    return False


@helper(forceinline=True)
def result_status(out):
    """OK, or OVERFLOW when the result ``out`` (1-D) of finite arguments (the kernels check
    them first) holds inf or NaN: an entry such as a velocity of 1e300 overflowed the
    recursion (v × v beyond the float64 range). One pass over the output (nv entries)."""
    return OVERFLOW if nonfinite(out) else OK


@helper(forceinline=True)
def matrix_result_status(out):
    """:func:`result_status` of a 2-D result."""
    return OVERFLOW if nonfinite_matrix(out) else OK


@helper
def nonfinite_matrix(X):
    """:func:`nonfinite` of a 2-D array (``X.ravel()`` is a call that returns an array,
    which code compiled without reference counting may not make: soadyn.core.jit)."""
    for i in range(X.shape[0]):
        for k in range(X.shape[1]):
            if not math.isfinite(X[i, k]):
                return True
    return False


@helper
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


@helper(forceinline=True)
def quaternions_ok(m, q):
    """False when a free or spherical joint's quaternion is zero."""
    for i in range(m.nb):
        jt = m.joint_type[i]
        if jt == FREE or jt == SPHERICAL:
            o = m.q_index[i] + (3 if jt == FREE else 0)
            if q[o] == 0.0 and q[o + 1] == 0.0 and q[o + 2] == 0.0 and q[o + 3] == 0.0:
                return False
    return True


@helper(forceinline=True)
def forces_shape_ok(m, fext):
    """``fext`` is an (nb, 6) array, or (0, 6) for no forces."""
    return (fext.shape[0] == 0 or fext.shape[0] == m.nb) and fext.shape[1] == 6


@helper(forceinline=True)
def rates_shape_ok(m, x):
    """A velocity-sized argument: nv entries, or none (absent: zero)."""
    return x.shape[0] == m.nv or x.shape[0] == 0


@helper(forceinline=True)
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
@helper(forceinline=True)
def other_axes(k):
    """(k + 1, k + 2) mod 3: the plane a rotation about e_k turns."""
    if k == 0:
        return 1, 2
    if k == 1:
        return 2, 0
    return 0, 1


@helper(forceinline=True)
def joint_sincos(w, q):
    """``w.sincos``: sin and cos of every entry of q, in one vectorized pass
    (:func:`~.trig.sincos_into`; an entry that is not a revolute joint's angle is computed
    and left unread), for the body loops that place every body (:func:`place_body`,
    :func:`world_pose_step`): faster than the sines and cosines evaluated one joint at a
    time inside the loop (``benchmarks/results/design_notes.md``). Returns the (2, nb + nv) view, column k < nq for q[k]."""
    sincos_into(q, w.sincos)
    return w.sincos


@helper
def joint_placements(mi, mf, ws, q):
    """Pose ``(w.R[k], w.t[k])`` of each body in its parent and the joint maps ``w.S``:
    (R, t) = (R_tree R_J(q), p_tree + R_tree p_J(q)), the joint placement followed by the
    joint transform, which defines φ(℘(k), k). Also fills ``w.Rj, w.pj`` (the joint
    transform alone) and ``w.sincos``. See :func:`place_body`."""
    m = model_tables(mi, mf)
    w = workspace_views(ws, m)
    sc = joint_sincos(w, q)
    for i in range(m.nb):
        place_body(m, w, i, q, sc)


@helper(forceinline=True)
def place_body(m, w, i, q, sc):
    """Body i's part of :func:`joint_placements`, ``sc`` the sines and cosines of q
    (:func:`joint_sincos`). Revolute joints about a coordinate axis and placements without
    rotation take short paths (no general 3×3 products)."""
    code = m.axis_code[i]
    vi = m.v_index[i]
    R, t, Rj, pj, S = w.R, w.t, w.Rj, w.pj, w.S
    if code != 0 and m.joint_type[i] == REVOLUTE:
        # rotation by θ about ±e_k: only the (k1, k2) plane turns
        k = abs(code) - 1
        k1, k2 = other_axes(k)
        s, c = sc[0, m.q_index[i]], sc[1, m.q_index[i]]
        if code < 0:
            s = -s
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


@helper(forceinline=True)
def joint_transform(m, w, i, q):
    """The joint transform ``(w.Rj[i], w.pj[i])`` and joint map (rows of ``w.S``) of body
    i (:func:`~soadyn.core.joints.joint_pose_and_subspace`): the general path of the
    one-step pose updates below, for joints without a unit axis (``m.axis_code`` 0)."""
    joint_pose_and_subspace(i, m.joint_type[i], m.n_sub[i], m.sub_kinds[i], m.axes, m.pitch, q, m.q_index[i],
                            w.S, m.v_index[i], w.Rj, w.pj)


@helper(forceinline=True)
def world_pose_step(m, w, i, q, sc, Rw, pw):
    """(Rw, pw)[i] = (Rw, pw)[℘(i)] ∘ (R_tree, p_tree)[i] ∘ (R_J(q), p_J(q))[i]: the world
    pose of body i from its parent's (the world: identity) in one step, into any (nb, 3, 3),
    (nb, 3) pair; ``sc`` the sines and cosines of q (:func:`joint_sincos`). The joint
    placement is applied only when it rotates (``m.rotated``); a joint about or along a
    coordinate axis (``m.axis_code``) then turns two columns (12 products) or moves the
    origin, instead of a general 3×3 product; other joints go through
    :func:`joint_transform` (which writes ``w.Rj[i], w.pj[i]`` and rows of ``w.S``)."""
    p = m.parent[i]
    rot_tree, pos_tree = m.rot_tree, m.pos_tree
    if p < 0:
        for a in range(3):
            pw[i, a] = pos_tree[i, a]
            for b in range(3):
                Rw[i, a, b] = rot_tree[i, a, b]
    elif m.rotated[i]:
        compose_pose(Rw, pw, p, rot_tree, pos_tree, i, Rw, pw, i)
    else:
        x0, x1, x2 = pos_tree[i, 0], pos_tree[i, 1], pos_tree[i, 2]
        for a in range(3):
            pw[i, a] = pw[p, a] + Rw[p, a, 0] * x0 + Rw[p, a, 1] * x1 + Rw[p, a, 2] * x2
            for b in range(3):
                Rw[i, a, b] = Rw[p, a, b]
    code = m.axis_code[i]
    if code == 0:
        joint_transform(m, w, i, q)
        compose_pose(Rw, pw, i, w.Rj, w.pj, i, Rw, pw, i)
        return
    x = q[m.q_index[i]] if code > 0 else -q[m.q_index[i]]
    k = abs(code) - 1
    if k < 3:  # R_J: rotation by x about e_k, which turns columns k1, k2 of the product
        k1, k2 = other_axes(k)
        s, c = sc[0, m.q_index[i]], sc[1, m.q_index[i]]
        if code < 0:  # sin(−θ) = −sin θ (also for sincos, bit for bit)
            s = -s
        for a in range(3):
            r1, r2 = Rw[i, a, k1], Rw[i, a, k2]
            Rw[i, a, k1] = r1 * c + r2 * s
            Rw[i, a, k2] = r2 * c - r1 * s
    else:  # p_J = x e_k
        k -= 3
        for a in range(3):
            pw[i, a] += x * Rw[i, a, k]


@helper(forceinline=True)
def pose_to_parent(m, w, i, q, X):
    """X ← (R_tree, p_tree)[i] ∘ (R_J(q), p_J(q))[i] ∘ X: a pose given in body i's frame
    (``X[:3, :3]`` rotation, ``X[:3, 3]`` origin) re-expressed in its parent's, the step
    of a walk from a body towards the root (poses of frames on the support path only).
    The same short paths as :func:`world_pose_step`; a joint without a unit axis needs
    :func:`joint_transform` first."""
    code = m.axis_code[i]
    if code == 0:
        pose_times(w.Rj, w.pj, i, X)
    else:
        x = q[m.q_index[i]] if code > 0 else -q[m.q_index[i]]
        k = abs(code) - 1
        if k < 3:  # rows k1, k2 turn
            k1, k2 = other_axes(k)
            s, c = sincos(x)
            for b in range(4):
                r1, r2 = X[k1, b], X[k2, b]
                X[k1, b] = c * r1 - s * r2
                X[k2, b] = s * r1 + c * r2
        else:
            X[k - 3, 3] += x
    if m.rotated[i]:
        pose_times(m.rot_tree, m.pos_tree, i, X)
    else:
        for a in range(3):
            X[a, 3] += m.pos_tree[i, a]


@helper(forceinline=True)
def pose_times(R, p, i, X):
    """X ← (R[i], p[i]) ∘ X for a pose X (``X[:3, :3]``, ``X[:3, 3]``)."""
    for b in range(4):
        x0, x1, x2 = X[0, b], X[1, b], X[2, b]
        o0, o1, o2 = (p[i, 0], p[i, 1], p[i, 2]) if b == 3 else (0.0, 0.0, 0.0)
        X[0, b] = o0 + R[i, 0, 0] * x0 + R[i, 0, 1] * x1 + R[i, 0, 2] * x2
        X[1, b] = o1 + R[i, 1, 0] * x0 + R[i, 1, 1] * x1 + R[i, 1, 2] * x2
        X[2, b] = o2 + R[i, 2, 0] * x0 + R[i, 2, 1] * x1 + R[i, 2, 2] * x2


@helper(forceinline=True)
def frame_pose_in_body(X, fR, fp):
    """X ← (fR, fp), the pose of a frame in its body: the start of a walk to the root
    (:func:`pose_to_parent`)."""
    for a in range(3):
        X[a, 3] = fp[a]
        for b in range(3):
            X[a, b] = fR[a, b]


@helper
def world_poses(mi, mf, ws):
    """World pose of every body: (Rw, pw)[k] = (Rw, pw)[℘(k)] ∘ (R, t)[k]."""
    m = model_tables(mi, mf)
    w = workspace_views(ws, m)
    for i in range(m.nb):
        world_pose(m, w, i, w.Rw, w.pw)


@helper(forceinline=True)
def world_pose(m, w, i, Rw, pw):
    """Body i's part of :func:`world_poses`, into any (nb, 3, 3), (nb, 3) pair ``Rw, pw``
    that holds its parent's world pose: (Rw, pw)[i] = (Rw, pw)[℘(i)] ∘ (w.R, w.t)[i]."""
    p = m.parent[i]
    if p < 0:
        for a in range(3):
            pw[i, a] = w.t[i, a]
            for b in range(3):
                Rw[i, a, b] = w.R[i, a, b]
    else:
        compose_pose(Rw, pw, p, w.R, w.t, i, Rw, pw, i)


@helper
def body_velocities(mi, mf, ws, v):
    """V(k) = φ*(℘(k), k) V(℘(k)) + H*(k)θ̇(k) into ``w.V`` and the Coriolis term
    a(k) = V(k) × H*(k)θ̇(k) + Ḣ*(k)θ̇(k) [Jain12, eq. 11] into ``w.coriolis``."""
    m = model_tables(mi, mf)
    w = workspace_views(ws, m)
    for i in range(m.nb):
        velocity_step(m, w, i, v)


@helper(forceinline=True)
def velocity_step(m, w, i, v):
    """Body i's step of :func:`body_velocities` (its parent's V already final)."""
    V, C, S = w.V, w.coriolis, w.S
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
        return
    n = m.joint_nv[i]
    for c in range(n):
        x = v[vi + c]
        for a in range(6):
            V[i, a] += S[vi + c, a] * x
    coriolis_term(m.joint_type[i], i, S, vi, n, v, V, C)


@helper
def body_accelerations(mi, mf, ws, qdd, gravity, has_v):
    """α(k) = φ*(℘(k), k) α(℘(k)) + H*(k) θ̈(k) + a(k) [Jain12, eq. 15] into ``w.alpha``.

    The base acceleration α(world) is −g when ``gravity`` (the fictitious acceleration
    that models gravity), else 0; an empty ``qdd`` means θ̈ = 0; without ``has_v`` the
    Coriolis terms a(k) are skipped (zero velocity).
    """
    m = model_tables(mi, mf)
    w = workspace_views(ws, m)
    for i in range(m.nb):
        acceleration_step(m, w, i, qdd, gravity, has_v)


@helper(forceinline=True)
def acceleration_step(m, w, i, qdd, gravity, has_v):
    """Body i's step of :func:`body_accelerations` (its parent's α already final)."""
    A = w.alpha
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


@helper
def checked_motion(mi, mf, ws, q, v, a, accelerations, gravity):
    """The checks of a state (q: :func:`configuration_status`; v, a: nv entries or empty,
    finite) and the kinematics the body-by-body sums and regressors read: the placements
    (``w.R, w.t``, ``w.S``), the world poses (``w.Rw, w.pw``), the body velocities
    (``w.V``, ``w.coriolis``: :func:`body_velocities`; ``w.V`` zero for an empty v) and,
    with ``accelerations``, the accelerations ``w.alpha`` (:func:`body_accelerations`,
    α(world) = −g when ``gravity``). Returns a status."""
    m = model_tables(mi, mf)
    st = configuration_status(m, q, ws)
    if st != OK:
        return st
    if not rates_shape_ok(m, v) or not rates_shape_ok(m, a):
        return BAD_SHAPE
    if nonfinite(v):
        return BAD_SECOND
    if nonfinite(a):
        return BAD_THIRD
    joint_placements(mi, mf, ws, q)
    world_poses(mi, mf, ws)
    has_v = v.shape[0] > 0
    if has_v:
        body_velocities(mi, mf, ws, v)
    else:
        V = workspace_views(ws, m).V
        for i in range(m.nb):
            for k in range(6):
                V[i, k] = 0.0
    if accelerations:
        body_accelerations(mi, mf, ws, a, gravity, has_v)
    return OK


# --------------------------------------------------------------------------- kernels
@helper(forceinline=True)
def poses_into(mi, mf, ws, q, R_out, p_out):
    """World poses of every body for a checked ``q``, into ``R_out`` (nb, 3, 3) and
    ``p_out`` (nb, 3) (:func:`world_pose_step`). (The steps write the workspace, then the
    poses are copied: composing in the outputs themselves, arrays the compiler cannot
    prove apart from the model tables, took 1.5× as long.)"""
    m = model_tables(mi, mf)
    w = workspace_views(ws, m)
    Rw, pw = w.Rw, w.pw
    sc = joint_sincos(w, q)
    for i in range(m.nb):
        world_pose_step(m, w, i, q, sc, Rw, pw)
    for i in range(m.nb):
        for a in range(3):
            p_out[i, a] = pw[i, a]
            for b in range(3):
                R_out[i, a, b] = Rw[i, a, b]


@kernel
def poses_kernel(mi, mf, ws, q, R_out, p_out):
    """World poses only (:func:`kinematics_kernel` without rates): five arguments fewer
    through Numba's dispatcher (each costs the call) for the most common kinematic call."""
    # borrowed views: the passes below then pass them on without reference counting
    mi, mf, ws, q = borrow(mi), borrow(mf), borrow(ws), borrow(q)
    m = model_tables(mi, mf)
    st = configuration_status(m, q, ws)
    if st != OK:
        return st
    if R_out.shape[0] != m.nb or p_out.shape[0] != m.nb:
        return BAD_SHAPE
    poses_into(mi, mf, ws, q, R_out, p_out)
    return OK


@kernel(nogil=True)
def poses_batch(mi, mf, ws, Q, R_out, p_out, status, start, stop):
    """:func:`poses_kernel` on states ``start`` to ``stop − 1`` of a batch (a block of a
    batched call, see :func:`soadyn.core.batch.run_blocks`)."""
    for b in range(start, stop):
        status[b] = poses_kernel(mi, mf, ws, Q[b], R_out[b], p_out[b])


@kernel(nogil=True)
def kinematics_kernel(mi, mf, ws, q, v, a, gravity, R_out, p_out, V_out, A_out):
    """World poses, body velocities and accelerations (:func:`_kinematics_state`) for B =
    len(q) / nq states stored one after another (:func:`~soadyn.core.layout.state_of`: one
    state for a call, a block of a batch's rows). Returns the first status other than OK."""
    B = state_count(q.shape[0], model_tables(mi, mf).nq)
    for b in range(B):
        st = _kinematics_state(mi, mf, ws, state_of(q, b, B), state_of(v, b, B), state_of(a, b, B), gravity,
                               state_of(R_out, b, B), state_of(p_out, b, B), state_of(V_out, b, B),
                               state_of(A_out, b, B))
        if st != OK:
            return st
    return OK


@helper(inline="always")
def _kinematics_state(mi, mf, ws, q, v, a, gravity, R_out, p_out, V_out, A_out):
    """World poses into ``R_out, p_out``; with ``v`` body velocities into ``V_out``; with
    ``a`` (and ``v``) body accelerations into ``A_out``. ``v``, ``a`` may be empty
    (absent), their outputs then (0, 6)."""
    # borrowed views: the passes below then pass them on without reference counting
    mi, mf, ws, q, v, a = borrow(mi), borrow(mf), borrow(ws), borrow(q), borrow(v), borrow(a)
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
    joint_placements(mi, mf, ws, q)
    for i in range(nb):  # the world poses from the placements (R, t), into the outputs
        world_pose(m, w, i, R_out, p_out)
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
