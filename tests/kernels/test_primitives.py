"""The kernels' inverse of a symmetric positive-definite matrix, in place (no scratch: the
kernels allocate nothing, and a cluster's D_k may have more than six freedoms), against
numpy's; and into an output block (the joint inertias D(k))."""
import numpy as np
import pytest
from numba import njit

from soadyn.kernels.primitives import spd_inverse, spd_inverse_in_place


@njit
def _in_place(A, n):
    return spd_inverse_in_place(A, n)


@njit
def _into(D, out, n):
    return spd_inverse(D, out, 0, n)


def _spd(rng, n):
    X = rng.normal(size=(n, n))
    return X @ X.T + 0.1 * np.eye(n)


@pytest.mark.parametrize("n", [1, 2, 3, 6, 7, 9, 14])
def test_in_place_inverse_is_numpys_and_leaves_the_rest(n):
    rng = np.random.default_rng(n)
    A = _spd(rng, n)
    B = np.full((n + 3, n + 2), 7.0)  # a larger array: only its leading n × n block changes
    B[:n, :n] = A
    assert _in_place(B, n)
    assert np.allclose(B[:n, :n], np.linalg.inv(A), rtol=1e-10, atol=1e-12 * np.abs(np.linalg.inv(A)).max())
    assert np.array_equal(B[:n, :n], B[:n, :n].T)
    assert (B[n:, :] == 7.0).all() and (B[:, n:] == 7.0).all()


@pytest.mark.parametrize("n", [2, 5, 6])
def test_inverse_into_an_output_equals_the_inverse_in_place(n):
    rng = np.random.default_rng(10 + n)
    A = _spd(rng, n)
    out = np.zeros((1, n, n))
    assert _into(A.copy(), out, n)
    B = A.copy()
    assert _in_place(B, n)
    assert np.allclose(B, out[0], rtol=1e-12, atol=1e-14 * np.abs(out[0]).max())


def test_in_place_inverse_refuses_an_indefinite_matrix():
    A = np.diag([1.0, -2.0, 3.0, 4.0, 5.0, 6.0, 7.0])
    assert not _in_place(A.copy(), 7)
