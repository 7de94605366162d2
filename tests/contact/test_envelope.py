"""The envelope of a Delassus matrix (soadyn.kernels.contact.envelope) and the contact ADMM
that iterates on it.

Truths: Delassus-like matrices G = J M⁻¹ Jᵀ of contacts between free bodies, whose zero
blocks (contacts that share no body) are known from the contact list; the envelope's first
columns found here in numpy from those blocks; numpy's dense Cholesky factor (unique: L
lower triangular with a positive diagonal), zero before each row's first column (George &
Liu's envelope theorem); numpy's dense solve and product; the ADMM's solution on such a G
equal to PGS's (another algorithm) where it is unique (R > 0), and the NCP residuals,
evaluated in numpy, within the tolerance when R = 0."""
import numpy as np
import pytest

from soadyn.core.jit import kernel  # soadyn's decorator: a kernel may call soadyn's helpers (link-only code)
from soadyn.kernels.contact.admm import INFO_SIZE, admm_kernel, admm_scratch_size
from soadyn.kernels.contact.envelope import envelope_cholesky, envelope_product, envelope_solve, find_envelope
from soadyn.kernels.contact.pgs import pgs_kernel
from test_step import ncp_residuals  # the NCP residuals of [LeLidec24] in numpy


@kernel
def _find(G, first):
    return find_envelope(G, first)


@kernel
def _factor(G, R, shift, A, first):
    return envelope_cholesky(G, R, shift, A, first)


@kernel
def _solve(A, b, x, first):
    envelope_solve(A, b, x, first)


@kernel
def _product(G, R, g, lam, sigma, first):
    envelope_product(G, R, g, lam, sigma, first)


def stack_delassus(rng, bodies=5, per_pair=4, order=None):
    """(G (3k, 3k), the contacts' body pairs (k, 2)) of a stack of free bodies: ``per_pair``
    contacts between the ground (−1) and body 0 and between each body and the next, rows
    J_i = C_iᵀ(J_second − J_first) of random 3 × 6 blocks on the two bodies' dofs, M
    block diagonal with random SPD 6 × 6 blocks; contacts listed in ``order``."""
    pairs = [(b - 1, b) for b in range(bodies) for _ in range(per_pair)]
    if order is not None:
        pairs = [pairs[i] for i in order]
    k = len(pairs)
    J = np.zeros((3 * k, 6 * bodies))
    for i, (a, b) in enumerate(pairs):
        for body, sign in ((a, -1.0), (b, 1.0)):
            if body >= 0:
                J[3 * i:3 * i + 3, 6 * body:6 * body + 6] = sign * rng.normal(size=(3, 6))
    Minv = np.zeros((6 * bodies, 6 * bodies))
    for b in range(bodies):
        X = rng.normal(size=(6, 6))
        Minv[6 * b:6 * b + 6, 6 * b:6 * b + 6] = np.linalg.inv(X @ X.T + 0.5 * np.eye(6))
    G = J @ Minv @ J.T
    # the exact zeros of contacts that share no body (the Delassus kernel writes none there)
    for i, (a, b) in enumerate(pairs):
        for j, (c, d) in enumerate(pairs):
            if not ({a, b} - {-1}) & ({c, d} - {-1}):
                G[3 * i:3 * i + 3, 3 * j:3 * j + 3] = 0.0
    return 0.5 * (G + G.T), np.array(pairs)


def expected_first(pairs):
    """Per row, the first row of a contact sharing a body with its contact, lowered to the
    least over the rows from it on (the documented nondecreasing envelope)."""
    k = len(pairs)
    f = np.zeros(3 * k, dtype=int)
    for i, (a, b) in enumerate(pairs):
        j = next(j for j, (c, d) in enumerate(pairs) if ({a, b} - {-1}) & ({c, d} - {-1}))
        f[3 * i:3 * i + 3] = min(3 * j, 3 * i)
    for r in range(3 * k - 2, -1, -1):
        f[r] = min(f[r], f[r + 1])
    return f


#: the stack's contacts in their order (a band: the ADMM takes the envelope) and shuffled
#: (the lowered envelope nearly dense: the ADMM takes the dense algorithms)
ORDERS = [None, "shuffled"]


def problem(seed, order):
    rng = np.random.default_rng(seed)
    perm = rng.permutation(20) if order == "shuffled" else None
    G, pairs = stack_delassus(rng, order=perm)
    first = np.empty(G.shape[0])
    _find(G, first)
    return rng, G, pairs, first


@pytest.mark.parametrize("order", ORDERS)
def test_envelope_is_the_first_coupled_contact(order):
    _, G, pairs, first = problem(1, order)
    np.testing.assert_array_equal(first, expected_first(pairs))
    n = G.shape[0]
    size = _find(G, first)
    assert size == sum(r - int(first[r]) + 1 for r in range(n))
    if order is None:  # the stack in its order: a band (rows of an interface start at the one below)
        assert first[-1] == 3 * 12 and first[3 * 4] == 0
        assert size < 0.75 * n * (n + 1) // 2  # the ADMM iterates on the envelope (admm_solve's rule)
    for r in range(G.shape[0]):  # nothing nonzero left of the envelope
        assert not G[r, :int(first[r])].any()


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("shift", [1e-6, 0.3])
def test_factor_is_numpys_cholesky_factor_on_the_envelope(order, shift):
    rng, G, pairs, first = problem(2, order)
    n = G.shape[0]
    R = rng.uniform(0.0, 1e-3, size=n)
    A = np.full((n, n), np.nan)  # entries off the envelope are left alone, never read
    assert _factor(G, R, shift, A, first) == n
    L_np = np.linalg.cholesky(G + np.diag(R) + shift * np.eye(n))
    scale = np.abs(L_np).max()
    for r in range(n):
        f = int(first[r])
        assert not L_np[r, :f].any() or np.abs(L_np[r, :f]).max() <= 1e-12 * scale  # no fill before f_r
        np.testing.assert_allclose(A[r, f:r + 1], L_np[r, f:r + 1], rtol=0, atol=1e-9 * scale)
    b = rng.normal(size=n)
    x = np.empty(n)
    _solve(A, b, x, first)
    M = G + np.diag(R) + shift * np.eye(n)
    np.testing.assert_allclose(x, np.linalg.solve(M, b), rtol=1e-8, atol=1e-8 * np.abs(np.linalg.solve(M, b)).max())
    y = b.copy()
    _solve(A, y, y, first)  # in place
    np.testing.assert_array_equal(y, x)


@pytest.mark.parametrize("order", ORDERS)
def test_product_is_the_dense_product(order):
    rng, G, pairs, first = problem(3, order)
    n = G.shape[0]
    R, g, lam = rng.uniform(0.0, 1e-3, size=n), rng.normal(size=n), rng.normal(size=n)
    sigma = np.full(n, np.nan)
    _product(G, R, g, lam, sigma, first)
    np.testing.assert_allclose(sigma, G @ lam + R * lam + g, rtol=0, atol=1e-13 * np.abs(G).max() * np.abs(lam).sum())
    dense = np.zeros(0)  # no envelope: the dense product
    _product(G, R, g, lam, sigma, dense)
    np.testing.assert_allclose(sigma, G @ lam + R * lam + g, rtol=0, atol=1e-13 * np.abs(G).max() * np.abs(lam).sum())


def _solve_ncp(solver, G, g, mu, R, tol, max_iter):
    n = g.shape[0]
    lam, sigma, info = np.zeros(n), np.zeros(n), np.zeros(INFO_SIZE)
    if solver == "admm":
        assert admm_kernel(G, g, mu, R, tol, max_iter, False, lam, sigma, info, np.empty((n, n)),
                           np.empty(admm_scratch_size.py_func(n))) == 0
    else:
        pgs_kernel(G, g, mu, R, tol, max_iter, False, lam, sigma, info, np.empty((2, n)))
    return lam, sigma, info


def stack_ncp(seed, order, R, sliding=True):
    """A banded contact problem with a known solution: the stack's G, friction μ in
    0.3–1, and g = σ* − (G + R)λ* for impulses λ* and velocities σ* that satisfy the NCP
    contact by contact — sticking (λ* inside its cone, σ* = 0), separating (λ* = 0,
    σ*_n > 0) and, with ``sliding``, sliding (λ*_T = −μ λ*_n σ*_T/‖σ*_T‖, σ*_n = 0). (λ*, σ*) solves it; with
    R > 0 it is the only solution."""
    rng, G, pairs, first = problem(seed, order)
    k = len(pairs)
    mu = rng.uniform(0.3, 1.0, size=k)
    lam, sig = np.zeros((k, 3)), np.zeros((k, 3))
    for i in range(k):
        kind = i % 5  # 3 sticking, 1 separating, 1 sliding in 5
        if kind == 3:
            sig[i] = rng.normal(scale=0.01, size=3)
            sig[i, 2] = abs(sig[i, 2]) + 1e-3
        elif kind == 4 and sliding:
            lam[i, 2] = rng.uniform(0.5, 2.0)
            d = rng.normal(size=2)
            d /= np.linalg.norm(d)
            sig[i, :2] = -rng.uniform(0.005, 0.02) * d
            lam[i, :2] = mu[i] * lam[i, 2] * d
        else:
            lam[i, 2] = rng.uniform(0.5, 2.0)
            lam[i, :2] = rng.uniform(0.0, 0.8) * mu[i] * lam[i, 2] * rng.normal(size=2) / np.sqrt(2.0)
            lam[i, :2] *= min(1.0, 0.8 * mu[i] * lam[i, 2] / max(np.linalg.norm(lam[i, :2]), 1e-300))
    lam, sig = lam.reshape(-1), sig.reshape(-1)
    g = sig - (G + np.diag(R)) @ lam
    assert max(ncp_residuals(lam.reshape(-1, 3), sig.reshape(-1, 3), mu)) <= 1e-12  # (λ*, σ*) solves it
    return G, g, mu, lam


@pytest.mark.parametrize("order", ORDERS)
def test_admm_on_a_banded_problem_finds_the_unique_solution(order):
    R = np.full(60, 0.05)  # compliance: a unique solution
    G, g, mu, lam_star = stack_ncp(4, order, R)
    lam, _, info = _solve_ncp("admm", G, g, mu, R, 1e-13, 5000)
    assert info[1] == 1.0
    np.testing.assert_allclose(lam, lam_star, rtol=0, atol=1e-8)
    lam_p, _, info_p = _solve_ncp("pgs", G, g, mu, R, 1e-13, 200000)  # another algorithm, the same solution
    assert info_p[1] == 1.0
    np.testing.assert_allclose(lam_p, lam_star, rtol=0, atol=1e-8)


@pytest.mark.parametrize("order", ORDERS)
def test_admm_on_a_banded_rigid_problem_satisfies_the_ncp(order):
    G, g, mu, _ = stack_ncp(5, order, np.zeros(60), sliding=False)  # rigid: solved by ADMM in a few hundred
    tol = 1e-10
    lam, sigma, info = _solve_ncp("admm", G, g, mu, np.zeros(g.shape[0]), tol, 5000)
    assert info[1] == 1.0
    sig = (G @ lam + g).reshape(-1, 3)
    np.testing.assert_allclose(sigma.reshape(-1, 3), sig, rtol=0, atol=1e-12)
    assert max(ncp_residuals(lam.reshape(-1, 3), sig, mu)) <= tol * 1.0001
