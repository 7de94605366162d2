"""Centre of mass, centroidal momentum and its rate, centroidal composite inertia: sums over
the bodies ([Orin13]).

In world axes about the world origin O, the system's momentum is h_O = Σ_k X_{O,k}* M(k)V(k),
its rate ḣ_O = Σ_k X_{O,k}* f(k) with f(k) = M(k)α(k) + V(k) ×* M(k)V(k) the RNEA's body
forces [Jain12, eq. 14] without gravity (the rate of the momentum, which the external
forces, gravity's m g included, balance), and its inertia the sum of the bodies'. With m
the total mass, g = Σ m_k c_k its first moment and h_O = [k_O; l]:

    c = g / m,   ċ = l / m,   c̈ = l̇ / m,
    h_G = [k_O − c × l; l],   ḣ_G = [k̇_O − c × l̇; l̇]   (ċ × l = 0),
    I_G = [[I_O − m(|c|² 1 − c cᵀ), 0], [0, m 1]]

(angular first; I_G is the composite rigid-body inertia about c in world axes, block
diagonal about the centre of mass). One pass over the bodies after the kinematics: O(N).
"""
from __future__ import annotations

from ..core.jit import njit
from ..core.layout import borrow, carve, model_tables, state_count, state_of, workspace_views
from ..core.status import BAD_SECOND, BAD_SHAPE, BAD_THIRD, NO_MASS, OK
from .kinematics import (body_accelerations, body_velocities, configuration_status, joint_placements, no_forces,
                         nonfinite, rates_shape_ok, world_poses)
from .primitives import add_rigid_inertia_to_parent, force_to_world, rigid_inertia_times, sym_param
from .rnea import force_step

#: entries of the kernel's output per state: total mass [kg], centre of mass c (3) [m], ċ
#: (3) [m/s], c̈ (3) [m/s²], h_G = [k_G; l_G] (6), ḣ_G (6), I_G (6 × 6, row by row)
MASS, COM, COM_VELOCITY, COM_ACCELERATION, MOMENTUM, MOMENTUM_RATE, INERTIA, SIZE = 0, 1, 4, 7, 10, 16, 22, 58


@njit(nogil=True, cache=True)
def centroidal_momentum_kernel(mi, mf, ws, q, v, a, out):
    """The ``SIZE`` entries of the module's quantities per state into ``out``
    (:func:`_centroidal_momentum_state`; an empty ``v`` or ``a`` means zero), for B =
    len(q) / nq states stored one after another (:func:`~soadyn.core.layout.state_of`).
    Returns the first status other than OK."""
    B = state_count(q.shape[0], model_tables(mi, mf).nq)
    for b in range(B):
        st = _centroidal_momentum_state(mi, mf, ws, state_of(q, b, B), state_of(v, b, B), state_of(a, b, B),
                                        state_of(out, b, B))
        if st != OK:
            return st
    return OK


@njit(inline="always", cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _centroidal_momentum_state(mi, mf, ws, q, v, a, out):
    """The quantities of one state (module docstring); NO_MASS for a system without mass."""
    # borrowed views: the passes below then pass them on without reference counting
    mi, mf, ws, q, v, a = borrow(mi), borrow(mf), borrow(ws), borrow(q), borrow(v), borrow(a)
    m = model_tables(mi, mf)
    st = configuration_status(m, q, ws)
    if st != OK:
        return st
    if not rates_shape_ok(m, v) or not rates_shape_ok(m, a) or out.shape[0] != SIZE:
        return BAD_SHAPE
    if nonfinite(v):
        return BAD_SECOND
    if nonfinite(a):
        return BAD_THIRD
    w = workspace_views(ws, m)
    joint_placements(mi, mf, ws, q)
    world_poses(mi, mf, ws)
    has_v = v.shape[0] > 0
    if has_v:
        body_velocities(mi, mf, ws, v)
    body_accelerations(mi, mf, ws, a, False, has_v)  # zero without v and a
    total = carve(w.scratch_vector, 0, (1, 10))  # the system's inertia, world axes about O
    for k in range(10):
        total[0, k] = 0.0
    for k in range(SIZE):
        out[k] = 0.0
    none = no_forces(ws)
    for i in range(m.nb):
        add_rigid_inertia_to_parent(w.Rw, w.pw, i, m.rigid, total, 0)
        force_step(m, w, i, none, has_v)  # w.f[i] = M(i)α(i) + V(i) ×* M(i)V(i)
        f0, f1, f2, f3, f4, f5 = force_to_world(w.Rw, w.pw, i, w.f[i, 0], w.f[i, 1], w.f[i, 2], w.f[i, 3],
                                                w.f[i, 4], w.f[i, 5])
        out[MOMENTUM_RATE] += f0
        out[MOMENTUM_RATE + 1] += f1
        out[MOMENTUM_RATE + 2] += f2
        out[MOMENTUM_RATE + 3] += f3
        out[MOMENTUM_RATE + 4] += f4
        out[MOMENTUM_RATE + 5] += f5
        if has_v:
            n0, n1, n2, l0, l1, l2 = rigid_inertia_times(m.rigid, i, w.V[i, 0], w.V[i, 1], w.V[i, 2], w.V[i, 3],
                                                         w.V[i, 4], w.V[i, 5])
            h0, h1, h2, h3, h4, h5 = force_to_world(w.Rw, w.pw, i, n0, n1, n2, l0, l1, l2)
            out[MOMENTUM] += h0
            out[MOMENTUM + 1] += h1
            out[MOMENTUM + 2] += h2
            out[MOMENTUM + 3] += h3
            out[MOMENTUM + 4] += h4
            out[MOMENTUM + 5] += h5
    mass = total[0, 0]
    if not mass > 0.0:
        return NO_MASS
    out[MASS] = mass
    c0, c1, c2 = total[0, 1] / mass, total[0, 2] / mass, total[0, 3] / mass
    out[COM], out[COM + 1], out[COM + 2] = c0, c1, c2
    for k in range(3):
        out[COM_VELOCITY + k] = out[MOMENTUM + 3 + k] / mass
        out[COM_ACCELERATION + k] = out[MOMENTUM_RATE + 3 + k] / mass
    # the angular parts about c: k_G = k_O − c × l (and the same for the rate)
    for o in (MOMENTUM, MOMENTUM_RATE):
        l0, l1, l2 = out[o + 3], out[o + 4], out[o + 5]
        out[o] -= c1 * l2 - c2 * l1
        out[o + 1] -= c2 * l0 - c0 * l2
        out[o + 2] -= c0 * l1 - c1 * l0
    # I_G: the rotational inertia moved from O to c (parallel axes), the mass on the diagonal
    cc = c0 * c0 + c1 * c1 + c2 * c2
    c = (c0, c1, c2)
    I = carve(out, INERTIA, (6, 6))
    for r in range(3):
        for s in range(3):
            I[r, s] = total[0, sym_param(r, s)] - mass * ((cc if r == s else 0.0) - c[r] * c[s])
        I[3 + r, 3 + r] = mass
    return OK

