"""Operational-space compliance: the Υ recursion, the backward Lyapunov decomposition of
the EOSCM and Λ = 𝒥M⁻¹𝒥* for sets of frames ([Jain24]; [Jain23p, eq. 21–22])."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import soadyn as sd
from soadyn import operators
from soadyn.dynamics.oscm import eoscm_diagonal
from soadyn.models import random_tree, serial_chain

from conftest import assert_close, body_block, mass_matrix, tree_state, trees

SETTINGS = settings(max_examples=12, deadline=None)


def nearest_common_ancestor(parents, i, j):
    path = set()
    while i >= 0:
        path.add(i)
        i = parents[i]
    while j >= 0 and j not in path:
        j = parents[j]
    return j


def backward_lyapunov_terms(S, Ups):
    """Υ (block diagonal) and R of Ω = Υ + ψ̃*Υ + Υψ̃ + R, with R(i, j) = ψ*(k, i)Υ(k)ψ(k, j)
    for unrelated i, j and k their nearest common ancestor ([Jain24])."""
    n = S.nb
    Y = np.zeros((6 * n, 6 * n))
    R = np.zeros((6 * n, 6 * n))
    for k in range(n):
        Y[6 * k:6 * k + 6, 6 * k:6 * k + 6] = Ups[k]
    for i in range(n):
        for j in range(n):
            k = nearest_common_ancestor(S.parents, i, j)
            if k < 0 or k in (i, j):
                continue
            pki = S.psi[6 * k:6 * k + 6, 6 * i:6 * i + 6]
            pkj = S.psi[6 * k:6 * k + 6, 6 * j:6 * j + 6]
            R[6 * i:6 * i + 6, 6 * j:6 * j + 6] = pki.T @ Ups[k] @ pkj
    return Y, R


@SETTINGS
@given(case=trees)
def test_eoscm_backward_lyapunov_decomposition(case):
    """Υ from the O(N) scatter gives Ω = Υ + ψ̃*Υ + Υψ̃ + R and H*D⁻¹H = Υ − diagOf{E_ψ*ΥE_ψ}."""
    model, q = tree_state(case)
    S = operators.sko(model, q)
    Ups = eoscm_diagonal(model, q)
    Y, R = backward_lyapunov_terms(S, Ups)
    psi_tilde = S.psi - np.eye(6 * model.nbodies)
    assert_close(Y + psi_tilde.T @ Y + Y @ psi_tilde + R, S.Omega, what="Omega decomposition")
    lhs = S.H.T @ S.Dinv @ S.H
    rhs = Y - S.E_psi.T @ Y @ S.E_psi
    for k in range(model.nbodies):
        assert_close(body_block(lhs, k), body_block(rhs, k), what=f"diagOf at {k}")
        assert_close(Ups[k], body_block(S.Omega, k), what=f"Upsilon({k}) = Omega(k, k)")


def test_serial_chain_has_no_R_term():
    """All bodies of a serial chain are related: Ω = Υ + ψ̃*Υ + Υψ̃ ([Jain24])."""
    model = serial_chain(7, floating_base=True)
    q = sd.random_configuration(model, 2)
    S = operators.sko(model, q)
    Ups = eoscm_diagonal(model, q)
    Y, R = backward_lyapunov_terms(S, Ups)
    assert not np.any(R)
    psi_tilde = S.psi - np.eye(6 * model.nbodies)
    assert_close(Y + psi_tilde.T @ Y + Y @ psi_tilde, S.Omega)


def stacked_local_jacobian(model, q, frames):
    return np.vstack([sd.frame_jacobian(model, q, f, "local") for f in frames])


@SETTINGS
@given(case=trees, picks=st.lists(st.integers(0, 10**6), min_size=1, max_size=7))
def test_compliance_equals_jacobian_form(case, picks):
    """Λ = 𝒥M⁻¹𝒥* for any frames: repeats, several on one body, unrelated branches."""
    model, q = tree_state(case)
    names = model.frame_names
    frames = [names[p % len(names)] for p in picks]
    J = stacked_local_jacobian(model, q, frames)
    expected = J @ np.linalg.solve(mass_matrix(model, q), J.T)
    Lam = sd.operational_space_compliance(model, q, frames)
    assert_close(Lam, expected, tol=1e-9, what=str(frames))
    assert np.array_equal(Lam, Lam.T)


def test_compliance_all_frames_and_world_frame():
    model = random_tree(10, 21, floating_base=True)
    model.add_frame("ground", "world", (np.eye(3), np.array([0.0, 1.0, 0.0])))
    q = sd.random_configuration(model, 5)
    frames = list(reversed(model.frame_names))
    Lam = sd.operational_space_compliance(model, q, frames)
    J = stacked_local_jacobian(model, q, frames)
    assert_close(Lam, J @ np.linalg.solve(mass_matrix(model, q), J.T), tol=1e-9)
    assert not np.any(Lam[:6]) and not np.any(Lam[:, :6])  # "ground" comes first


def test_single_frame_and_reuse():
    model = serial_chain(8)
    q = sd.random_configuration(model, 1)
    J = sd.frame_jacobian(model, q, "tip", "local")
    expected = J @ np.linalg.solve(mass_matrix(model, q), J.T)
    assert_close(sd.operational_space_compliance(model, q, "tip"), expected)
    out = np.empty((6, 6))
    assert sd.operational_space_compliance(model, q, ["tip"], out=out) is out
    assert_close(out, expected)
    index = model.frame("tip").index
    assert_close(sd.operational_space_compliance(model, q, (index,)), expected)
    # a changed model is recompiled and gets fresh frame data
    model.add_body("extra", sd.joints.Revolute("x"), "link7", (np.eye(3), np.array([0.0, 0.0, 0.3])),
                   mass=1.0, inertia=np.diag([0.1, 0.1, 0.1]))
    q2 = np.concatenate([q, [0.3]])
    J2 = sd.frame_jacobian(model, q2, "tip", "local")
    assert_close(sd.operational_space_compliance(model, q2, "tip"),
                 J2 @ np.linalg.solve(mass_matrix(model, q2), J2.T))


def test_operational_space_inertia():
    """Λ⁻¹ for a frame with six independent directions; clear errors where Λ is singular."""
    model = serial_chain(7, floating_base=True)
    q = sd.random_configuration(model, 3)
    frames = ["tip", "link0"]  # the base and the tip six revolute joints away
    Lam = sd.operational_space_compliance(model, q, frames)
    inertia = sd.operational_space_inertia(model, q, frames)
    assert_close(inertia @ Lam, np.eye(12), tol=1e-8)
    assert_close(inertia, inertia.T, tol=1e-12)
    with pytest.raises(np.linalg.LinAlgError, match=r"singular \(rank 6 of 12\)"):
        sd.operational_space_inertia(model, q, ["tip", "tip"])
    arm = serial_chain(3)
    with pytest.raises(np.linalg.LinAlgError, match="rank 3 of 6"):
        sd.operational_space_inertia(arm, sd.random_configuration(arm, 0), "tip")


def test_argument_errors():
    model = serial_chain(3)
    q = np.zeros(3)
    with pytest.raises(ValueError, match="unknown frame"):
        sd.operational_space_compliance(model, q, ["tip", "nope"])
    with pytest.raises(ValueError, match="at least one frame"):
        sd.operational_space_compliance(model, q, [])
    with pytest.raises(ValueError, match=r"q: expected shape \(3,\) or \(B, 3\)"):
        sd.operational_space_compliance(model, np.zeros(4), "tip")
    with pytest.raises(ValueError, match=r"out: expected"):
        sd.operational_space_compliance(model, q, "tip", out=np.empty((5, 5)))
