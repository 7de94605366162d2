"""The velocity change Δv = M⁻¹ Jᵀλ of contact impulses, on an ATBI already computed.

A time step has the articulated-body quantities of its configuration in the workspace
(the block ABA's gather, :func:`~soadyn.kernels.aba.articulated_body_pass`: P⁺, U = PH*,
G* = D⁻¹Uᵀ, D⁻¹ per body). The response to spatial impulses F(k) on the bodies is the
ABA with F as the only external forces, no velocity, no joint forces and no gravity
([Jain23p, eq. 7]); P does not depend on them, so only the force half of the recursion
runs — O(N) with 6-vectors, no 6 × 6 congruence:

tips-to-base gather (:func:`impulse_gather`)::

    z(k) = Σ_{j ∈ children(k)} φ(k, j) z⁺(j) − F(k)
    ε(k) = −H(k) z(k),      z⁺(k) = z(k) + G(k) ε(k)

base-to-tips scatter (:func:`~soadyn.kernels.aba.acceleration_pass` without gravity and
velocity terms)::

    α⁺(k) = φ*(℘(k), k) α(℘(k)),   Δθ̇(k) = D⁻¹(k)ε(k) − G*(k) α⁺(k),   α(k) = α⁺(k) + H*(k) Δθ̇(k)
"""
from __future__ import annotations

from ...core.jit import helper
from ...core.layout import model_tables, workspace_views
from ..articulated_blocks import acceleration_pass
from ..primitives import add_force_to_parent


@helper
def impulse_gather(mi, mf, ws, F):
    """ε (``w.eps``) and z⁺ (``w.z``) of the spatial impulses ``F`` (nb, 6) [N m s, N s]
    (body frames, at the body origins) on the ATBI in the workspace (module docstring)."""
    m = model_tables(mi, mf)
    w = workspace_views(ws, m)
    z, S, Gt, eps = w.z, w.S, w.Gt, w.eps
    for i in range(m.nb):
        for a in range(6):
            z[i, a] = -F[i, a]
    for i in range(m.nb - 1, -1, -1):
        vi = m.v_index[i]
        n = m.joint_nv[i]
        for c in range(n):
            acc = 0.0
            for a in range(6):
                acc -= S[vi + c, a] * z[i, a]
            eps[vi + c] = acc
        p = m.parent[i]
        if p < 0:  # a root's z⁺ goes nowhere (and its G* is not formed by the gather)
            continue
        for a in range(6):
            acc = 0.0
            for c in range(n):
                acc += Gt[vi + c, a] * eps[vi + c]
            z[i, a] += acc
        add_force_to_parent(w.R, w.t, i, z, i, z, p)


@helper
def impulse_response(mi, mf, ws, F, dv):
    """Δv = M⁻¹ Jᵀλ (nv,) into ``dv`` for the bodies' spatial impulses ``F`` (nb, 6) of
    the contact impulses λ (:func:`~soadyn.kernels.contact.points.contact_forces_pass`),
    on the ATBI in the workspace (module docstring). Overwrites ``w.z``, ``w.eps`` and
    ``w.alpha``."""
    impulse_gather(mi, mf, ws, F)
    acceleration_pass(mi, mf, ws, False, False, dv)
