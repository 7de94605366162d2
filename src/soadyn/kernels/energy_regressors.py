"""The energy regressors: T(q, q̇) = y_T π and U(q) = y_U π, rows of 10 nb ([Atkeson86]).

π as in :mod:`.torque_regressor` (Pinocchio's order per body, the rotational inertia about
the body origin). Body k's kinetic energy ½ V(k)ᵀ M(k) V(k) [CDI18, eq. 10–13] with
V = [ω; v] (body frame) is

    T_k = ½ m |v|² + (m c) · (v × ω) + ½ ωᵀ I ω,

and its potential energy, with (R, p) its world pose and g the gravity (world),
U_k = −m gᵀ(p + R c) = −(gᵀp) m − (Rᵀg) · (m c): linear in the parameters, one pass over
the bodies after the velocities (body frames) and the world poses.
"""
from __future__ import annotations

from ..core.jit import helper, kernel
from ..core.layout import borrow, model_tables, state_count, state_of, workspace_views
from ..core.status import BAD_SHAPE, OK
from .kinematics import absent, checked_motion

#: rows of the kernel's output
KINETIC, POTENTIAL = 0, 1


@kernel(nogil=True)
def energy_regressors_kernel(mi, mf, ws, q, v, out):
    """The rows y_T (an empty ``v``: zero) and y_U into ``out`` (2, 10 nb), rows ``KINETIC``
    and ``POTENTIAL`` (:func:`_energy_regressors_state`), for B = len(q) / nq states stored
    one after another (:func:`~soadyn.core.layout.state_of`). Returns the first status
    other than OK."""
    B = state_count(q.shape[0], model_tables(mi, mf).nq)
    for b in range(B):
        st = _energy_regressors_state(mi, mf, ws, state_of(q, b, B), state_of(v, b, B), state_of(out, b, B))
        if st != OK:
            return st
    return OK


@helper(inline="always")
def _energy_regressors_state(mi, mf, ws, q, v, out):
    """y_T and y_U of one state (module docstring)."""
    # borrowed views: the passes below then pass them on without reference counting
    mi, mf, ws, q, v = borrow(mi), borrow(mf), borrow(ws), borrow(q), borrow(v)
    st = checked_motion(mi, mf, ws, q, v, absent(ws), False, False)
    if st != OK:
        return st
    m = model_tables(mi, mf)
    if out.shape[0] != 2 or out.shape[1] != 10 * m.nb:
        return BAD_SHAPE
    w = workspace_views(ws, m)
    has_v = v.shape[0] > 0
    T, U = out[KINETIC], out[POTENTIAL]
    g0, g1, g2 = m.gravity[0], m.gravity[1], m.gravity[2]
    Rw, pw = w.Rw, w.pw
    for k in range(m.nb):
        o = 10 * k
        U[o] = -(g0 * pw[k, 0] + g1 * pw[k, 1] + g2 * pw[k, 2])
        for a in range(3):
            U[o + 1 + a] = -(Rw[k, 0, a] * g0 + Rw[k, 1, a] * g1 + Rw[k, 2, a] * g2)
        for e in range(4, 10):
            U[o + e] = 0.0
        if not has_v:
            for e in range(10):
                T[o + e] = 0.0
            continue
        w0, w1, w2, u0, u1, u2 = w.V[k, 0], w.V[k, 1], w.V[k, 2], w.V[k, 3], w.V[k, 4], w.V[k, 5]
        T[o] = 0.5 * (u0 * u0 + u1 * u1 + u2 * u2)
        T[o + 1] = u1 * w2 - u2 * w1  # v × ω
        T[o + 2] = u2 * w0 - u0 * w2
        T[o + 3] = u0 * w1 - u1 * w0
        T[o + 4] = 0.5 * w0 * w0  # Pinocchio's order xx, xy, yy, xz, yz, zz
        T[o + 5] = w0 * w1
        T[o + 6] = 0.5 * w1 * w1
        T[o + 7] = w0 * w2
        T[o + 8] = w1 * w2
        T[o + 9] = 0.5 * w2 * w2
    return OK
