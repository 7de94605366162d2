"""The innovations factorization (soadyn.kernels.innovations): compiled ATBI quantities and innovations
factors against the dense operators (soadyn.operators), fixed joints, argument errors. (M⁻¹ and log det M:
test_minverse.py; the SPO products: test_spo.py.)"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings

import soadyn as sd
from soadyn import operators
from soadyn.dynamics import innovations, spo
from soadyn.models import random_tree, serial_chain

from conftest import assert_close, body_block, mass_matrix, tree_state, trees

SETTINGS = settings(max_examples=12, deadline=None)


@SETTINGS
@given(case=trees)
def test_articulated_inertias_equal_riccati_solution(case):
    """P(k) and D(k) of the O(N) recursion equal the operator Riccati solution ([Jain23p]
    eq. 7), and G(k)D(k) = P(k)H*(k) (G itself is as ill-conditioned as D(k))."""
    model, q = tree_state(case)
    S = operators.sko(model, q)
    P, D, G = sd.articulated_inertias(model, q)
    for k in range(model.nbodies):
        dk = S.dofs[k]
        assert_close(P[k], body_block(S.P, k), what=f"P({k})")
        assert_close(G[:, dk] @ D[dk, dk], P[k] @ S.H[dk, 6 * k:6 * k + 6].T, what=f"G({k})D({k})")
    assert_close(D, S.D, what="D")


@SETTINGS
@given(case=trees)
def test_innovations_factor_products(case):
    """The O(N) gather/scatter products with [I + HφK], [I − HψK] and their adjoints."""
    model, q = tree_state(case)
    S = operators.sko(model, q)
    F, Finv = S.innovations_factor(), S.innovations_factor_inverse()
    rng = np.random.default_rng(case[1])
    X = rng.normal(size=(model.nv, 3))
    for inverse, dense in ((False, F), (True, Finv)):
        for adjoint in (False, True):
            expected = dense.T if adjoint else dense
            got = innovations.apply_innovations_factor(model, q, X, inverse=inverse, adjoint=adjoint)
            assert_close(got, expected @ X, what=f"inverse={inverse} adjoint={adjoint}")
    x = X[:, 0]
    y = innovations.apply_innovations_factor(model, q, x)
    assert y.shape == x.shape
    assert_close(y, F @ x)


def test_argument_errors():
    model = serial_chain(3)
    with pytest.raises(ValueError, match=r"q: expected shape \(3,\)"):
        sd.mass_matrix_inverse(model, np.zeros(2))
    with pytest.raises(ValueError, match=r"method: expected one of \['ltdl', 'innovations'\], got 'lu'"):
        sd.mass_matrix_inverse(model, np.zeros(3), method="lu")
    with pytest.raises(ValueError, match="q: expected finite"):
        sd.log_det_mass_matrix(model, np.array([0.0, np.nan, 0.0]))
    with pytest.raises(ValueError, match="x: expected shape"):
        innovations.apply_innovations_factor(model, np.zeros(3), np.zeros(4))
    with pytest.raises(ValueError, match="x: expected finite"):
        innovations.apply_innovations_factor(model, np.zeros(3), np.array([0.0, np.inf, 0.0]))
    with pytest.raises(ValueError, match="operator: expected one of"):
        spo.spo_product(model, np.zeros(3), np.zeros((3, 6)), "chi")
    with pytest.raises(ValueError, match=r"A: expected shape \(3, k, k\)"):
        spo.influence_product(model, np.zeros((3, 2, 3)), np.zeros((3, 2)))


def test_fixed_joints():
    """Bodies welded by fixed joints (no dofs, empty D(k)) in the ATBI, M⁻¹, log det and Λ."""
    kinds = ("revolute", "fixed", "spherical", "prismatic", "fixed", "universal")
    model = random_tree(9, 2, kinds=kinds)
    assert sum(j.kind == "fixed" for j in model.joints) >= 2
    q = sd.random_configuration(model, 1)
    M = mass_matrix(model, q)
    S = operators.sko(model, q)
    assert_close(sd.mass_matrix_inverse(model, q) @ M, np.eye(model.nv))
    assert abs(sd.log_det_mass_matrix(model, q) - np.linalg.slogdet(M)[1]) < 1e-10
    P = sd.articulated_inertias(model, q).P
    for k in range(model.nbodies):
        assert_close(P[k], body_block(S.P, k), what=f"P({k})")
    frames = model.frame_names
    J = np.vstack([sd.frame_jacobian(model, q, f, "local") for f in frames])
    assert_close(sd.operational_space_compliance(model, q, frames), J @ np.linalg.solve(M, J.T), tol=1e-9)
