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

from ..core.jit import helper, kernel
from ..core.layout import borrow, carve, model_tables, state_count, state_of, workspace_views
from ..core.status import BAD_SHAPE, NO_MASS, OK
from .kinematics import checked_motion, no_forces
from .primitives import add_rigid_inertia_to_parent, force_to_world, rigid_times_motion, sym_param
from .rnea import force_step

#: entries of the kernel's output per state: total mass [kg], centre of mass c (3) [m], ċ
#: (3) [m/s], c̈ (3) [m/s²], h_G = [k_G; l_G] (6), ḣ_G (6), I_G (6 × 6, row by row)
MASS, COM, COM_VELOCITY, COM_ACCELERATION, MOMENTUM, MOMENTUM_RATE, INERTIA, SIZE = 0, 1, 4, 7, 10, 16, 22, 58


@kernel(nogil=True)
def centroidal_momentum_kernel(mi, mf, ws, q, v, a, rate, out):
    """The ``SIZE`` entries of the module's quantities per state into ``out``
    (:func:`_centroidal_momentum_state`; an empty ``v`` or ``a`` means zero; without ``rate``
    the rates c̈ and ḣ_G are left zero, the accelerations not computed), for B =
    len(q) / nq states stored one after another (:func:`~soadyn.core.layout.state_of`).
    Returns the first status other than OK."""
    B = state_count(q.shape[0], model_tables(mi, mf).nq)
    for b in range(B):
        st = _centroidal_momentum_state(mi, mf, ws, state_of(q, b, B), state_of(v, b, B), state_of(a, b, B), rate,
                                        state_of(out, b, B))
        if st != OK:
            return st
    return OK


@helper(inline="always")
def _centroidal_momentum_state(mi, mf, ws, q, v, a, rate, out):
    """The quantities of one state (module docstring); NO_MASS for a system without mass."""
    # borrowed views: the passes below then pass them on without reference counting
    mi, mf, ws, q, v, a = borrow(mi), borrow(mf), borrow(ws), borrow(q), borrow(v), borrow(a)
    st = checked_motion(mi, mf, ws, q, v, a, rate, False)  # α without gravity: zero without v and a
    if st != OK:
        return st
    if out.shape[0] != SIZE:
        return BAD_SHAPE
    m = model_tables(mi, mf)
    w = workspace_views(ws, m)
    has_v = v.shape[0] > 0
    total = carve(w.scratch, 0, (1, 10))  # the system's inertia, world axes about O
    for k in range(10):
        total[0, k] = 0.0
    for k in range(SIZE):
        out[k] = 0.0
    none = no_forces(ws)
    for i in range(m.nb):
        add_rigid_inertia_to_parent(w.Rw, w.pw, i, m.rigid, total, 0)
        if rate:
            force_step(m, w, i, none, has_v)  # w.f[i] = M(i)α(i) + V(i) ×* M(i)V(i)
            _add_in_world(w, i, w.f, out, MOMENTUM_RATE)
        if has_v:
            rigid_times_motion(m.rigid, i, w.V, i, w.z, i)  # the body's momentum M(i)V(i)
            _add_in_world(w, i, w.z, out, MOMENTUM)
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


@helper(forceinline=True)
def _add_in_world(w, i, F, out, o):
    """out[o:o + 6] += the force F[i] on body i (body axes, about its origin) in world axes
    about the world origin."""
    f0, f1, f2, f3, f4, f5 = force_to_world(w.Rw, w.pw, i, F[i, 0], F[i, 1], F[i, 2], F[i, 3], F[i, 4], F[i, 5])
    out[o] += f0
    out[o + 1] += f1
    out[o + 2] += f2
    out[o + 3] += f3
    out[o + 4] += f4
    out[o + 5] += f5
