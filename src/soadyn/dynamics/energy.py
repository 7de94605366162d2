"""Kinetic and potential energy, centre of mass.

Kinetic energy T = ½ Σ_k V(k)ᵀ M(k) V(k) = ½ θ̇ᵀ M θ̇ (seed 003 eq. 10–13);
potential energy U = −Σ_k m_k gᵀ c_k with c_k the world position of body k's centre
of mass.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .. import _validation as val
from ._fastcall import ExactCall
from ._layout import model_views, sizes_match, workspace_views
from .kinematics import body_velocities, check_quaternions, joint_placements, nonfinite, world_poses

__all__ = ["kinetic_energy", "potential_energy", "center_of_mass"]


@njit(cache=True)
def energy_kernel(mi, mf, q, v, ws, nv, out):
    """out = [T, U, total mass, com (3), com velocity (3)] (velocity terms need v; v None
    means zero velocity)."""
    if not sizes_match(mi, q, nv, ws) or out.shape[0] != 9 or (v is not None and v.shape[0] != nv):
        return val.BAD_SHAPE
    if nonfinite(q):
        return val.BAD_FIRST
    if v is not None and nonfinite(v):
        return val.BAD_SECOND
    if not check_quaternions(mi, q):
        return val.BAD_QUATERNION
    nb = mi.shape[0]
    inertia, rot_tree, pos_tree, axes, pitch, mass, com, g = model_views(mf, nb)
    joint_placements(mi, mf, q, ws, nv)
    R, t, Rw, pw, Rj, pj, S, V, A, F, C, pb, P, Dinv, U, Y, u, scratch = workspace_views(ws, nb, nv)
    world_poses(mi, R, t, Rw, pw)
    has_v = v is not None
    if has_v:
        body_velocities(mi, S, v, R, t, V, C)
    out[:] = 0.0
    for i in range(nb):
        m = mass[i]
        for a in range(3):
            c = pw[i, a]
            for k in range(3):
                c += Rw[i, a, k] * com[i, k]
            out[1] -= m * g[a] * c
            out[3 + a] += m * c
        out[2] += m
        if has_v:
            e = 0.0
            for a in range(6):
                acc = 0.0
                for b in range(6):
                    acc += inertia[i, a, b] * V[i, b]
                e += V[i, a] * acc
            out[0] += 0.5 * e
            # velocity of the centre of mass: v + ω × c, in world axes
            w0, w1, w2 = V[i, 0], V[i, 1], V[i, 2]
            c0, c1, c2 = com[i, 0], com[i, 1], com[i, 2]
            l0 = V[i, 3] + w1 * c2 - w2 * c1
            l1 = V[i, 4] + w2 * c0 - w0 * c2
            l2 = V[i, 5] + w0 * c1 - w1 * c0
            for a in range(3):
                out[6 + a] += m * (Rw[i, a, 0] * l0 + Rw[i, a, 1] * l1 + Rw[i, a, 2] * l2)
    if out[2] > 0.0:
        for a in range(3):
            out[3 + a] /= out[2]
            out[6 + a] /= out[2]
    return val.OK


_ENERGY = ExactCall(energy_kernel)
_energy_fast = _ENERGY.fast


def _energy(model, q, v):
    c = model._compiled or model.compiled
    out = np.empty(9)
    try:
        if not _energy_fast(c.mi, c.mf, q, v, c.tls.buffer, c.nv, out):
            return out
    except (TypeError, AttributeError):
        pass
    q = val.vector(q, c.nq, "q", batch_ok=False)
    v = None if v is None else val.vector(v, c.nv, "v", batch_ok=False)
    st = _ENERGY(c.mi, c.mf, q, v, model.workspace().buffer, c.nv, out)
    if st:
        val.raise_status(st, ("q", "v"))
    return out


def kinetic_energy(model, q, v):
    """Kinetic energy T = ½ Σ V(k)ᵀ M(k) V(k) [J]."""
    return float(_energy(model, q, v)[0])


def potential_energy(model, q):
    """Gravitational potential energy U = −Σ m_k gᵀ c_k [J] (zero at the world origin)."""
    return float(_energy(model, q, None)[1])


def center_of_mass(model, q, v=None):
    """World position of the system's centre of mass (3,) [m]; with ``v`` also returns its
    velocity (3,) [m/s] as a second value. A mass-less system raises ValueError."""
    e = _energy(model, q, v)
    if e[2] <= 0:
        raise ValueError(f"model {model.name!r} has no mass: the centre of mass is undefined")
    return (e[3:6].copy(), e[6:9].copy()) if v is not None else e[3:6].copy()
