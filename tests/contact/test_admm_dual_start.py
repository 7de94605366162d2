"""The dual start of the contact ADMM (soadyn.kernels.contact.admm.admm_solve's ``dual``): a
time stepper passes the previous step's velocities σ as the start of z, the corrected
velocity.

Truths: the start only moves where the iterations begin, never what they converge to. With
compliance R > 0 the NCP has one solution, so a solve from any dual start (the σ of a nearby
problem, or a vector unrelated to the problem) ends at the cold solve's λ to the accuracy the
tolerance implies; without compliance (rank-deficient G, solutions not unique) the result
satisfies the NCP conditions, evaluated directly from (G, g, μ), to the tolerance. A dual
start equal to σ of the primal start is, by definition, the start the solver takes without
one: the two solves take the same iterations to the same λ (up to rounding)."""
import numpy as np
import pytest

from soadyn.core.jit import kernel  # soadyn's decorator: a kernel may call soadyn's helpers (link-only code)
from soadyn.kernels.contact.admm import INFO_SIZE, RHO_POWER, admm_kernel, admm_scratch_size, admm_solve

TOL = 1e-10


@kernel
def _solve(G, g, mu, R, tol, max_iter, warm, lam, sigma, info, A, V, L0, power0, dual):
    status, L, power = admm_solve(G, g, mu, R, tol, max_iter, warm, lam, sigma, info, A, V, L0, power0, dual)
    return status


def delassus_like(rng, k):
    """G = A Aᵀ of rank 2k < 3k (as contact Delassus matrices are rank deficient), g with most
    contacts approaching, μ in [0.2, 1.0]."""
    A = rng.normal(size=(3 * k, 2 * k))
    g = rng.normal(size=(k, 3))
    g[:, 2] = rng.uniform(-1.0, 0.3, size=k)
    return A @ A.T, g.reshape(-1), rng.uniform(0.2, 1.0, size=k)


def ncp_violation(G, g, mu, R, lam):
    """Largest violation of K_μ ∋ λ ⊥ σ + Γ(σ) ∈ K_μ*, σ = (G + R)λ + g (De Saxcé's
    correction Γ(σ) = (0, 0, μ‖σ_t‖)), evaluated directly."""
    sigma = ((G + np.diag(R)) @ lam + g).reshape(-1, 3)
    worst = 0.0
    for m, l, s in zip(mu, lam.reshape(-1, 3), sigma):
        shat = s + np.array([0.0, 0.0, m * np.linalg.norm(s[:2])])
        worst = max(worst, np.linalg.norm(l[:2]) - m * l[2], -l[2], m * np.linalg.norm(shat[:2]) - shat[2],
                    abs(l @ shat))
    return worst


def cold(G, g, mu, R):
    n = g.shape[0]
    lam, sigma, info = np.zeros(n), np.zeros(n), np.zeros(INFO_SIZE)
    assert admm_kernel(G, g, mu, R, TOL, 5000, False, lam, sigma, info, np.zeros((n, n)), np.zeros(admm_scratch_size.py_func(n))) == 0
    assert info[1] == 1.0
    return lam, sigma


def warm(G, g, mu, R, lam0, dual, L0=0.0, power0=RHO_POWER):
    n = g.shape[0]
    lam, sigma, info = lam0.copy(), np.zeros(n), np.zeros(INFO_SIZE)
    assert _solve(G, g, mu, R, TOL, 5000, True, lam, sigma, info, np.zeros((n, n)), np.zeros(admm_scratch_size.py_func(n)), L0,
                  power0, dual) == 0
    return lam, sigma, info


@pytest.mark.parametrize("seed", range(4))
def test_with_compliance_any_dual_start_gives_the_cold_solution(seed):
    rng = np.random.default_rng(seed)
    k = 6
    G, g, mu = delassus_like(rng, k)
    R = np.full(3 * k, 1e-2)  # R > 0: one solution
    lam_c, _ = cold(G, g, mu, R)
    # the previous step's solution of a nearby problem: its λ and σ as the start
    g_prev = g + 1e-3 * rng.normal(size=g.shape)
    lam_p, sigma_p = cold(G, g_prev, mu, R)
    for dual in (sigma_p, rng.normal(size=3 * k)):  # near, and unrelated to the problem
        lam, sigma, info = warm(G, g, mu, R, lam_p, dual)
        assert info[1] == 1.0
        assert max(info[2:5]) <= TOL
        # |Δλ| ≤ |Δσ residual| / min eig(G + R); the residuals are ≤ tol, min eig ≥ 1e-2
        np.testing.assert_allclose(lam, lam_c, rtol=0.0, atol=1e-7)
        np.testing.assert_allclose(sigma, (G + np.diag(R)) @ lam + g, rtol=0.0, atol=1e-12)


@pytest.mark.parametrize("power0", [-0.1, 0.25, 0.5])
def test_a_given_penalty_scale_gives_the_cold_solution(power0):
    """A time stepper's start: the previous step's (λ, σ) and penalty scale (L, p), the
    penalty capped at the balanced one (WARM_POWER) and held for the first iterations."""
    rng = np.random.default_rng(7)
    k = 6
    G, g, mu = delassus_like(rng, k)
    R = np.full(3 * k, 1e-2)
    lam_c, _ = cold(G, g, mu, R)
    lam_p, sigma_p = cold(G, g + 1e-3 * rng.normal(size=g.shape), mu, R)
    L = np.linalg.eigvalsh(G + np.diag(R))[-1]
    lam, _, info = warm(G, g, mu, R, lam_p, sigma_p, L, power0)
    assert info[1] == 1.0 and max(info[2:5]) <= TOL
    np.testing.assert_allclose(lam, lam_c, rtol=0.0, atol=1e-7)


@pytest.mark.parametrize("seed", range(4))
def test_rigid_solve_from_a_dual_start_satisfies_the_ncp(seed):
    rng = np.random.default_rng(10 + seed)
    k = 8
    G, g, mu = delassus_like(rng, k)
    R = np.zeros(3 * k)
    lam_p, sigma_p = cold(G, g + 1e-3 * rng.normal(size=g.shape), mu, R)
    lam, _, info = warm(G, g, mu, R, lam_p, sigma_p)
    assert info[1] == 1.0
    assert ncp_violation(G, g, mu, R, lam) <= 10 * TOL  # the solver's residuals are ≤ tol per contact


def test_dual_start_at_sigma_of_the_primal_start_is_the_default_start():
    rng = np.random.default_rng(3)
    k = 5
    G, g, mu = delassus_like(rng, k)
    R = np.zeros(3 * k)
    lam_p, _ = cold(G, g + 1e-3 * rng.normal(size=g.shape), mu, R)
    sigma0 = G @ lam_p + g  # σ of the primal start (numpy's rounding, not the kernel's)
    a = warm(G, g, mu, R, lam_p, np.zeros(0))
    b = warm(G, g, mu, R, lam_p, sigma0)
    assert a[2][0] > 0  # it iterates
    assert a[2][0] == b[2][0]
    np.testing.assert_allclose(a[0], b[0], rtol=0.0, atol=1e-9)
    # another dual start is taken: the iterations follow another path
    c = warm(G, g, mu, R, lam_p, sigma0 + 0.1 * rng.normal(size=sigma0.shape))
    assert not np.array_equal(a[0], c[0])
