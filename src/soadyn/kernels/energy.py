"""Kinetic and potential energy.

T = ½ Σ_k V(k)ᵀ M(k) V(k) = ½ θ̇ᵀ M θ̇ [CDI18, eq. 10–13]; U = −Σ_k m_k gᵀ c_k with c_k
the world position of body k's centre of mass. (The centre of mass itself and its rates:
:mod:`.centroidal_momentum`.)
"""
from __future__ import annotations


from ..core.jit import helper, kernel
from ..core.layout import borrow, model_tables, state_count, state_of, workspace_views
from ..core.status import BAD_SHAPE, OK
from .kinematics import absent, checked_motion, result_status


@kernel(nogil=True)
def energy_kernel(mi, mf, ws, q, v, out):
    """out = [T, U] per state (:func:`_energy_state`), for B = len(q) / nq states stored one after another
    (:func:`~soadyn.core.layout.state_of`: one state for a call, a block of a batch's rows).
    Returns the first status other than OK."""
    B = state_count(q.shape[0], model_tables(mi, mf).nq)
    for b in range(B):
        st = _energy_state(mi, mf, ws, state_of(q, b, B), state_of(v, b, B), state_of(out, b, B))
        if st != OK:
            return st
    return OK


@helper(inline="always")
def _energy_state(mi, mf, ws, q, v, out):
    """out = [T, U] (T needs v; an empty v means zero velocity)."""
    # borrowed views: the passes below then pass them on without reference counting
    mi, mf, ws, q, v = borrow(mi), borrow(mf), borrow(ws), borrow(q), borrow(v)
    st = checked_motion(mi, mf, ws, q, v, absent(ws), False, False)
    if st != OK:
        return st
    if out.shape[0] != 2:
        return BAD_SHAPE
    m = model_tables(mi, mf)
    w = workspace_views(ws, m)
    has_v = v.shape[0] > 0
    Rw, pw, V, com, g = w.Rw, w.pw, w.V, m.com, m.gravity
    out[0] = 0.0
    out[1] = 0.0
    for i in range(m.nb):
        mass = m.mass[i]
        for a in range(3):
            c = pw[i, a]
            for k in range(3):
                c += Rw[i, a, k] * com[i, k]
            out[1] -= mass * g[a] * c
        if has_v:
            e = 0.0
            for a in range(6):
                acc = 0.0
                for b in range(6):
                    acc += m.inertia[i, a, b] * V[i, b]
                e += V[i, a] * acc
            out[0] += 0.5 * e
    return result_status(out)
