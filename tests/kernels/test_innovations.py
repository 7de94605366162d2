"""Compiled ATBI quantities, innovations factors, M⁻¹, log det M and SPO products against
the dense operators (soadyn.operators), numpy, and Pinocchio's computeMinverse."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings

import soadyn as sd
from soadyn import operators
from soadyn.dynamics import innovations, spo
from soadyn.models import random_tree, serial_chain

from conftest import assert_close, body_block, load_pair, mass_matrix, pinocchio, tree_state, trees

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


@SETTINGS
@given(case=trees)
def test_mass_matrix_inverse_and_log_det(case):
    """M⁻¹ M = I with M from the CRBA, by both methods (the sparse LᵀDL factors and the
    innovations recursion); M⁻¹ = [I − HψK]* D⁻¹ [I − HψK] (the dense operators); log det M
    = Σ log det D(k)."""
    model, q = tree_state(case)
    M = mass_matrix(model, q)
    for method in ("ltdl", "innovations"):
        Minv = sd.mass_matrix_inverse(model, q, method=method)
        assert_close(Minv @ M, np.eye(model.nv), what=f"M^-1 M ({method})")
        assert np.array_equal(Minv, Minv.T)
        assert_close(Minv, operators.sko(model, q).mass_matrix_inverse(), tol=1e-9, what=f"operator M^-1 ({method})")
    sign, logdet = np.linalg.slogdet(M)
    assert sign > 0
    assert abs(sd.log_det_mass_matrix(model, q) - logdet) <= 1e-10 * max(1.0, abs(logdet))


def test_mass_matrix_inverse_batch():
    model = random_tree(9, 4, floating_base=True)
    rng = np.random.default_rng(4)
    Q = np.stack([sd.random_configuration(model, rng) for _ in range(5)])
    batch = sd.mass_matrix_inverse(model, Q)
    assert batch.shape == (5, model.nv, model.nv)
    for b in range(5):
        assert_close(batch[b], sd.mass_matrix_inverse(model, Q[b]), tol=1e-13)
    out = np.empty_like(batch)
    assert sd.mass_matrix_inverse(model, Q, out=out) is out


@SETTINGS
@given(case=trees)
def test_spo_products(case):
    """φx, φ*x, ψx, ψ*x by [CDI18]'s O(N) algorithms equal the dense SPOs."""
    model, q = tree_state(case)
    S = operators.sko(model, q)
    x = np.random.default_rng(case[1]).normal(size=(model.nbodies, 6))
    for name in ("phi", "psi"):
        dense = getattr(S, name)
        assert_close(spo.spo_product(model, q, x, name).ravel(), dense @ x.ravel(), what=name)
        assert_close(spo.spo_product(model, q, x.ravel(), name, adjoint=True), dense.T @ x.ravel(),
                     what=name + "*")


@pytest.mark.parametrize("k", [1, 3, 6])
def test_influence_products(k):
    """[CDI18]'s z = Ψ_A x and z = Ψ_Aᵀ x for an arbitrary block-diagonal A."""
    model = random_tree(9, 7 + k)
    rng = np.random.default_rng(k)
    A = rng.normal(size=(model.nbodies, k, k))
    x = rng.normal(size=(model.nbodies, k))
    Psi = operators.influence_resolvent(model, A)
    assert_close(spo.influence_product(model, A, x).ravel(), Psi @ x.ravel())
    assert_close(spo.influence_product(model, A, x.ravel(), transpose=True), Psi.T @ x.ravel())


@pytest.mark.parametrize("robot", ["panda", "solo12"])
def test_mass_matrix_inverse_matches_pinocchio(robot):
    """M⁻¹ against Pinocchio's computeMinverse on example-robot-data models."""
    pin = pinocchio()
    pair = load_pair(robot)
    rng = np.random.default_rng(0)
    T = pair.v_permutation()
    for _ in range(3):
        q = sd.random_configuration(pair.sd, rng)
        Minv_pin = pin.computeMinverse(pair.pm, pair.pd, pair.q_to_pin(q))
        Minv_pin = np.triu(Minv_pin) + np.triu(Minv_pin, 1).T
        for method in ("ltdl", "innovations"):
            assert_close(sd.mass_matrix_inverse(pair.sd, q, method=method), T.T @ Minv_pin @ T, tol=1e-9,
                         what=f"{robot} ({method})")


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
