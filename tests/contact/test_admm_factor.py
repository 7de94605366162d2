"""The linear system of the contact ADMM (soadyn.kernels.contact.admm): the Cholesky factor of
G + diag R + shift I and its solves.

Truths: the defining identity L Lᵀ = G + diag R + shift I, L lower triangular with a positive
diagonal (hence numpy's Cholesky factor, which is unique); the solve against numpy's dense
solve; a matrix that is not positive definite is refused at its first non-positive pivot, and
with a pivot floor a rank-deficient one at the first row that depends on those before it.
The Delassus matrices are rank deficient as the contact ones are (3k rows, rank ≤ 6 per
body), the shift that of the ADMM, η + ρ ≥ 1e-6."""
import numpy as np
import pytest

from soadyn.core.jit import kernel  # soadyn's decorator: a kernel may call soadyn's helpers (link-only code)
from soadyn.kernels.contact.admm import cholesky_solve, shifted_cholesky


@kernel
def _factor(G, R, shift, A, floor=0.0):
    return shifted_cholesky(G, R, shift, A, floor)


@kernel
def _solve(A, b, x):
    cholesky_solve(A, b, x)


def _delassus_like(rng, n, rank):
    J = rng.normal(size=(n, rank))
    return J @ J.T


@pytest.mark.parametrize("n, rank, shift", [(3, 3, 1e-3), (12, 6, 1e-6), (24, 12, 0.05), (57, 30, 1e-6),
                                            (60, 30, 2.0)])
def test_factor_is_the_cholesky_factor(n, rank, shift):
    rng = np.random.default_rng(n)
    G = _delassus_like(rng, n, rank)
    R = rng.uniform(0.0, 1e-3, size=n)
    A = np.full((n, n), np.nan)  # the strict upper triangle is left alone, never read
    assert _factor(G, R, shift, A) == n
    L = np.tril(A)
    M = G + np.diag(R) + shift * np.eye(n)
    np.testing.assert_allclose(L @ L.T, M, rtol=0, atol=1e-13 * np.abs(M).max())
    np.testing.assert_allclose(L, np.linalg.cholesky(M), rtol=0, atol=1e-9 * np.sqrt(np.abs(M).max()))
    b = rng.normal(size=n)
    x = np.empty(n)
    _solve(A, b, x)
    np.testing.assert_allclose(M @ x, b, rtol=0, atol=1e-10 * np.abs(b).max() * np.abs(M).max() / shift)
    y = b.copy()
    _solve(A, y, y)  # in place
    np.testing.assert_array_equal(y, x)


def test_not_positive_definite_is_refused_at_its_pivot():
    G = np.diag([1.0, 2.0, -0.5, 3.0])
    A = np.zeros((4, 4))
    assert _factor(G, np.zeros(4), 0.1, A) == 2
    assert _factor(G, np.zeros(4), 0.6, A) == 4


@pytest.mark.parametrize("n, rank", [(12, 6), (24, 12), (9, 8)])
def test_pivot_floor_stops_at_the_first_dependent_row(n, rank):
    # G = J Jᵀ with J (n, rank) generic: its first `rank` rows are independent and row `rank`
    # is a combination of them; with no shift the factorization stops there given a floor,
    # and goes on through round-off pivots without one
    rng = np.random.default_rng(rank)
    G = _delassus_like(rng, n, rank)
    A = np.zeros((n, n))
    assert _factor(G, np.zeros(n), 0.0, A, 1e-8) == rank
    # a positive definite matrix passes the floor whole, with the same factor as without it
    M = G + np.eye(n)
    B = np.zeros((n, n))
    assert _factor(M, np.zeros(n), 0.0, A, 1e-8) == n
    assert _factor(M, np.zeros(n), 0.0, B) == n
    np.testing.assert_array_equal(np.tril(A), np.tril(B))
