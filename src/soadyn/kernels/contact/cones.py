"""Coulomb friction cones, their duals and the residuals of the Coulomb NCP [LeLidec24].

Contact i has the friction cone K_μ = {λ : ‖λ_T‖ ≤ μ λ_n} (λ = (λ_t1, λ_t2, λ_n), normal
last) and its dual K_μ* = {σ : μ‖σ_T‖ ≤ σ_n}. With De Saxcé's correction
Γ(σ) = (0, 0, μ‖σ_T‖) the Coulomb law with the Signorini condition is the NCP

    K_μ ∋ λ ⊥ σ̂ = σ + Γ(σ) ∈ K_μ*,   σ = (G + R) λ + g,

whose criteria are the distance of λ to K_μ (primal), of σ̂ to K_μ* (dual) and |λ·σ̂|
(complementarity), each the largest over the contacts [LeLidec24]. μ = 0 is allowed: K_0
is the normal ray, K_0* the half-space σ_n ≥ 0.
"""
from __future__ import annotations

import math

from ...core.jit import helper, kernel


@helper(forceinline=True)
def project_cone(mu, x, i, out):
    """out[3i:3i+3] ← the Euclidean projection of x[3i:3i+3] onto K_μ."""
    a, b, n = x[3 * i], x[3 * i + 1], x[3 * i + 2]
    t = math.sqrt(a * a + b * b)
    if t <= mu * n:
        out[3 * i], out[3 * i + 1], out[3 * i + 2] = a, b, n
    elif mu * t <= -n:  # in the polar cone −K_μ*
        out[3 * i], out[3 * i + 1], out[3 * i + 2] = 0.0, 0.0, 0.0
    else:  # onto the boundary ray through (μ x_T/‖x_T‖, 1)
        alpha = (mu * t + n) / (mu * mu + 1.0)
        scale = mu * alpha / t
        out[3 * i], out[3 * i + 1], out[3 * i + 2] = scale * a, scale * b, alpha


@helper(forceinline=True)
def project_dual_cone(mu, x, i, out):
    """out[3i:3i+3] ← the Euclidean projection of x[3i:3i+3] onto K_μ* = {μ‖σ_T‖ ≤ σ_n}."""
    a, b, n = x[3 * i], x[3 * i + 1], x[3 * i + 2]
    t = math.sqrt(a * a + b * b)
    if mu * t <= n:
        out[3 * i], out[3 * i + 1], out[3 * i + 2] = a, b, n
    elif t <= -mu * n:  # in the polar cone −K_μ
        out[3 * i], out[3 * i + 1], out[3 * i + 2] = 0.0, 0.0, 0.0
    else:  # onto the boundary ray through (x_T/‖x_T‖, μ)
        beta = (t + mu * n) / (mu * mu + 1.0)
        scale = beta / t
        out[3 * i], out[3 * i + 1], out[3 * i + 2] = scale * a, scale * b, mu * beta


@helper(forceinline=True)
def de_saxce(mu, sigma, i):
    """Γ(σ_i)_n = μ‖σ_T‖, the normal entry of De Saxcé's correction (the others are 0)."""
    return mu * math.sqrt(sigma[3 * i] ** 2 + sigma[3 * i + 1] ** 2)


@helper(forceinline=True)
def row_dot(a, b, n):
    """a[:n]·b[:n] with four partial sums (independent chains of fused multiply-adds:
    a single sum is bound by the latency of each addition)."""
    s0 = s1 = s2 = s3 = 0.0
    p = 0
    while p + 4 <= n:
        s0 += a[p] * b[p]
        s1 += a[p + 1] * b[p + 1]
        s2 += a[p + 2] * b[p + 2]
        s3 += a[p + 3] * b[p + 3]
        p += 4
    while p < n:
        s0 += a[p] * b[p]
        p += 1
    return (s0 + s1) + (s2 + s3)


@helper(forceinline=True)
def compliant_product(G, R, g, lam, sigma):
    """σ = (G + diag R) λ + g (3k,)."""
    n = g.shape[0]
    for r in range(n):
        sigma[r] = g[r] + R[r] * lam[r] + row_dot(G[r], lam, n)


@helper(forceinline=True)
def ncp_residuals(mu, lam, sigma, p, residuals):
    """``residuals`` (3,) ← (primal, dual, complementarity) of λ with velocities σ
    (module docstring); ``p`` (3k,) scratch."""
    primal = dual = comp = 0.0
    for i in range(mu.shape[0]):
        project_cone(mu[i], lam, i, p)
        d = math.sqrt((lam[3 * i] - p[3 * i]) ** 2 + (lam[3 * i + 1] - p[3 * i + 1]) ** 2
                      + (lam[3 * i + 2] - p[3 * i + 2]) ** 2)
        primal = max(primal, d)
        s0, s1 = sigma[3 * i], sigma[3 * i + 1]
        s2 = sigma[3 * i + 2] + de_saxce(mu[i], sigma, i)
        p[3 * i], p[3 * i + 1], p[3 * i + 2] = s0, s1, s2
        project_dual_cone(mu[i], p, i, p)
        d = math.sqrt((s0 - p[3 * i]) ** 2 + (s1 - p[3 * i + 1]) ** 2 + (s2 - p[3 * i + 2]) ** 2)
        dual = max(dual, d)
        comp = max(comp, abs(lam[3 * i] * s0 + lam[3 * i + 1] * s1 + lam[3 * i + 2] * s2))
    residuals[0], residuals[1], residuals[2] = primal, dual, comp


@kernel
def ncp_residuals_kernel(G, R, g, mu, lam, sigma, p, residuals):
    """σ = (G + diag R) λ + g into ``sigma`` and the NCP residuals of λ into ``residuals``
    (3,): primal, dual, complementarity (:func:`ncp_residuals`); ``p`` (3k,) scratch."""
    compliant_product(G, R, g, lam, sigma)
    ncp_residuals(mu, lam, sigma, p, residuals)
