"""The sticking solve: the NCP of a step whose contacts all stick, by one linear solve.

Where every contact sticks, its velocity is zero, σ = 0, and its impulse lies inside its
friction cone. The Coulomb NCP of :mod:`.cones` then reduces to the linear system

    (G + R) λ = −g,      λ ∈ K_μ,      σ = (G + R) λ + g = 0,

for σ = 0 is in K_μ*, De Saxcé's correction Γ(σ) = μ‖σ_T‖ e_n is zero and λ·σ̂ = 0: a λ
of the linear system that lies in the cones solves the NCP. A standing robot's feet stick
from step to step, and the solvers' iterations (:mod:`.admm`: a factorization, then two
iterations or more from the previous step's impulses) find this λ; one Cholesky
factorization of G + R and one solve give it directly.

The time stepper (:func:`~.step.solve_stage`) tries it where it can hold: G + R can be
positive definite only with no more contact rows than velocities (3k ≤ nv), and the start
of the solve (the previous step's impulses matched to the contacts, or none) shows every
contact sticking (:func:`sticking_start`). It takes λ when the three NCP residuals are at
most the tolerance — the solvers' own stopping test, so that what it returns is a solution
in the solvers' sense — and otherwise leaves the problem to the solver. Where G + R is
singular (several contacts on one rigid body: a foot's four corners give 12 rows of rank
6) the factorization stops at the first squared pivot below :data:`SINGULAR_PIVOT` times
its diagonal entry, before the solve.
"""
from __future__ import annotations

import math

from ...core.jit import helper
from .admm import cholesky_solve, shifted_cholesky
from .cones import compliant_product, ncp_residuals

__all__ = ["sticking_start", "sticking_solve", "SINGULAR_PIVOT", "STICKING_MARGIN"]

#: a squared pivot of the factorization of G + R (what is left of its diagonal entry once
#: the rows before it are taken out) at most this fraction of that diagonal entry is taken
#: for zero: the row depends on the rows before it to ~8 digits (a rank-deficient G), and a
#: solve through it would only fail the residual test after costing a full factorization
SINGULAR_PIVOT = 1e-8
#: a start's contact counts as sticking when its tangential impulse is at most this
#: fraction of μ λ_n (a sliding contact's impulse lies on its cone's boundary)
STICKING_MARGIN = 0.999


@helper(forceinline=True)
def sticking_start(mu, lam, warm):
    """Whether the start of a solve shows every contact sticking: without a warm start
    (``warm`` False: nothing known) yes; with one, each contact's impulse ``lam`` (3k,)
    pressing (λ_n > 0) and inside its cone by :data:`STICKING_MARGIN`."""
    if not warm:
        return True
    for i in range(mu.shape[0]):
        a, b, n = lam[3 * i], lam[3 * i + 1], lam[3 * i + 2]
        if not (n > 0.0 and math.sqrt(a * a + b * b) <= STICKING_MARGIN * mu[i] * n):
            return False
    return True


@helper
def sticking_solve(G, g, mu, R, tol, A, x, sigma, p, res):
    """Whether the sticking impulses solve the NCP of (G (n, n), g (n,), μ (k,), R (n,)):
    x (n,) ← (G + R)⁻¹(−g) by the Cholesky factor in ``A`` (n, n) (none when a squared
    pivot is below :data:`SINGULAR_PIVOT` of its diagonal entry: False), σ = (G + R)x + g into ``sigma``
    and the NCP residuals (primal, dual, complementarity) into ``res`` (3,) (``p`` (n,)
    scratch); True when all three are at most ``tol``."""
    n = g.shape[0]
    if shifted_cholesky(G, R, 0.0, A, SINGULAR_PIVOT) < n:
        return False
    for r in range(n):
        p[r] = -g[r]
    cholesky_solve(A, p, x)
    compliant_product(G, R, g, x, sigma)
    ncp_residuals(mu, x, sigma, p, res)
    return max(res[0], max(res[1], res[2])) <= tol
