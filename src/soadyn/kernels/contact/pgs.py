"""The Coulomb NCP by projected Gauss–Seidel over the contacts ([LeLidec24]: the PGS of
most simulators).

One sweep visits each contact i with its velocity σ_i = g_i + Σ_j (G + R)_ij λ_j kept
current: the normal impulse λ_n ← max(0, λ_n − σ_n / D_nn), σ_i updated, then the
tangential λ_T ← λ_T − σ_T / L_T (L_T the largest eigenvalue of the tangential 2 × 2 block
D_TT of D = (G + R)_ii) projected onto the disc ‖λ_T‖ ≤ μ λ_n. A fixed point satisfies
Signorini's condition on the normal and the maximal dissipation of the tangential
impulse, which is the NCP of :mod:`.cones` (with De Saxcé's correction). The residuals are
evaluated after each sweep.
"""
from __future__ import annotations

import math

from ...core.jit import helper, kernel
from .admm import write_info
from .cones import compliant_product, ncp_residuals, project_cone

#: diagonal entries below this count as zero (a contact that cannot move along that axis)
TINY = 1e-300


@helper(forceinline=True)
def _add_column(G, R, j, d, sigma):
    """σ += (G + R)[:, j] d."""
    for r in range(sigma.shape[0]):
        sigma[r] += G[r, j] * d
    sigma[j] += R[j] * d


@kernel(nogil=True)
def pgs_kernel(G, g, mu, R, tol, max_iter, warm, lam, sigma, info, V):
    """:func:`pgs_solve` from Python (:func:`soadyn.solve_contacts`); compiled code calls
    the helper (see :func:`soadyn.core.configuration.integrate_into` for why)."""
    return pgs_solve(G, g, mu, R, tol, max_iter, warm, lam, sigma, info, V)


@helper
def pgs_solve(G, g, mu, R, tol, max_iter, warm, lam, sigma, info, V):
    """Solve the NCP of (G, g, μ, R) by PGS: arguments and outputs as
    :func:`~.admm.admm_kernel` (``info``: ρ entry 0), scratch ``V`` (2, n). Returns 0."""
    n = g.shape[0]
    k = mu.shape[0]
    p, res = V[0], V[1]
    for i in range(k):
        if warm:
            project_cone(mu[i], lam, i, lam)
        else:
            lam[3 * i] = lam[3 * i + 1] = lam[3 * i + 2] = 0.0
    compliant_product(G, R, g, lam, sigma)
    ncp_residuals(mu, lam, sigma, p, res)
    it = 0
    converged = max(res[0], max(res[1], res[2])) <= tol
    while not converged and it < max_iter:
        it += 1
        for i in range(k):
            t1, t2, nn = 3 * i, 3 * i + 1, 3 * i + 2
            dn = G[nn, nn] + R[nn]
            if dn > TINY:
                new = max(0.0, lam[nn] - sigma[nn] / dn)
                _add_column(G, R, nn, new - lam[nn], sigma)
                lam[nn] = new
            a, b, c = G[t1, t1] + R[t1], G[t2, t2] + R[t2], G[t1, t2]
            LT = 0.5 * (a + b) + math.sqrt(0.25 * (a - b) ** 2 + c * c)
            if LT > TINY:
                u1 = lam[t1] - sigma[t1] / LT
                u2 = lam[t2] - sigma[t2] / LT
            else:
                u1, u2 = lam[t1], lam[t2]
            radius = mu[i] * lam[nn]
            norm = math.sqrt(u1 * u1 + u2 * u2)
            if norm > radius:
                scale = radius / norm
                u1 *= scale
                u2 *= scale
            _add_column(G, R, t1, u1 - lam[t1], sigma)
            _add_column(G, R, t2, u2 - lam[t2], sigma)
            lam[t1], lam[t2] = u1, u2
        compliant_product(G, R, g, lam, sigma)  # afresh: no drift of the running update
        ncp_residuals(mu, lam, sigma, p, res)
        converged = max(res[0], max(res[1], res[2])) <= tol
    write_info(info, it, converged, res, 0.0)
    return 0
