"""The dense SOA operator layer (soadyn.operators) against independent truths.

Identities of [Jain12, §2.3–2.4], 001 (topics 6, 10) and 003 on random trees with every
joint type, fixed and floating base: the operators must reproduce the compiled core's
mass matrix (CRBA) and bias forces (RNEA), the frame Jacobians, and numpy's inverses and
determinants.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings

import soadyn as sd
from soadyn import joints, operators
from soadyn.models import random_tree, serial_chain

from conftest import assert_close, mass_matrix, tree_state, trees

SETTINGS = settings(max_examples=12, deadline=None)


@SETTINGS
@given(case=trees)
def test_newton_euler_factorization(case):
    """M = HφMφ*H* and C = Hφ(Mφ*a + b) ([Jain12, eq. 17]) equal the CRBA and the RNEA."""
    model, q, v = tree_state(case, with_velocity=True)
    S = operators.sko(model, q, v)
    assert_close(S.mass_matrix, mass_matrix(model, q), what="M")
    assert_close(S.coriolis, sd.bias_forces(model, q, v, gravity=False), what="C")
    assert_close(S.V.reshape(-1, 6), sd.forward_kinematics(model, q, v).velocities, what="V")


@SETTINGS
@given(case=trees)
def test_structure_and_resolvents(case):
    """E_φ has blocks only at (℘(k), k); φ = (I − E_φ)⁻¹ and ψ = (I − E_ψ)⁻¹; H, M, P, τ̄ are
    block diagonal."""
    model, q = tree_state(case)
    S = operators.sko(model, q)
    n = model.nbodies
    mask = np.zeros((n, n), dtype=bool)
    for k, p in enumerate(model.parents):
        if p >= 0:
            mask[p, k] = True
    blocks = np.abs(S.E_phi).reshape(n, 6, n, 6).max(axis=(1, 3)) > 0
    assert not np.any(blocks & ~mask)
    assert np.all(blocks[mask])
    eye = np.eye(6 * n)
    assert_close(S.phi, np.linalg.inv(eye - S.E_phi), what="phi")
    assert_close(S.psi, np.linalg.inv(eye - S.E_psi), what="psi")
    for X in (S.M, S.P, S.tau_bar):
        off = X.copy()
        for k in range(n):
            off[6 * k:6 * k + 6, 6 * k:6 * k + 6] = 0.0
        assert not np.any(off)


@SETTINGS
@given(case=trees)
def test_innovations_factorization_and_inverse(case):
    """M = [I + HφK] D [I + HφK]*, [I + HφK]⁻¹ = I − HψK, M⁻¹ = [I − HψK]* D⁻¹ [I − HψK],
    det M = Π det D(k) ([Jain24, topic 6]), and [I − HψK]Hφ = Hψ ([Jain24], used for
    G_c M⁻¹ G_c*)."""
    model, q = tree_state(case)
    S = operators.sko(model, q)
    M = mass_matrix(model, q)
    F = S.innovations_factor()
    Finv = S.innovations_factor_inverse()
    assert_close(F @ S.D @ F.T, M, what="innovations factorization")
    assert_close(Finv @ F, np.eye(model.nv), what="inverse factor")
    assert_close(S.mass_matrix_inverse(), np.linalg.inv(M), tol=1e-9, what="M^-1")
    logdet = sum(np.linalg.slogdet(S.D[d, d])[1] for d in S.dofs)
    assert abs(logdet - np.linalg.slogdet(M)[1]) <= 1e-10 * max(1.0, abs(logdet))
    assert_close(Finv @ S.H @ S.phi, S.H @ S.psi, what="[I - HpsiK]Hphi = Hpsi")
    assert_close(S.K, S.E_phi @ S.G, what="K")


@SETTINGS
@given(case=trees)
def test_jacobian_and_operational_space_compliance(case):
    """𝒥 = ℬ*φ*H* equals the stacked local frame Jacobians and Λ = ℬ*Ωℬ = 𝒥M⁻¹𝒥*."""
    model, q = tree_state(case)
    S = operators.sko(model, q)
    frames = model.frame_names[::2] + [model.frame_names[-1]]
    J = np.vstack([sd.frame_jacobian(model, q, f, "local") for f in frames])
    assert_close(S.jacobian(frames), J, what="J")
    M = mass_matrix(model, q)
    assert_close(S.Lambda(frames), J @ np.linalg.solve(M, J.T), tol=1e-9, what="Lambda")
    assert_close(S.Omega, S.psi.T @ S.H.T @ S.Dinv @ S.H @ S.psi, what="Omega")


def test_pick_off_operator_of_world_frame_is_zero():
    model = serial_chain(3)
    model.add_frame("ground", "world", (np.eye(3), np.array([1.0, 0.0, 0.0])))
    S = operators.sko(model, sd.random_configuration(model, 0))
    B = S.B(["ground", "tip"])
    assert B.shape == (18, 12)
    assert not np.any(B[:, :6])
    assert np.any(B[:, 6:])


@pytest.mark.parametrize("k", [2, 6])
def test_influence_matrices(k):
    """[CDI18]: Φ_A strictly lower triangular with A_i at (i, ℘(i)), Ψ_A = (e − Φ_A)⁻¹, and
    with A_i = φ*(℘(i), i): Φ_A = E_φ*, Ψ_A = φ*."""
    rng = np.random.default_rng(k)
    model = random_tree(7, k)
    n = model.nbodies
    A = rng.normal(size=(n, k, k))
    Phi = operators.influence_matrix(model, A)
    assert not np.any(np.triu(Phi))
    for i, p in enumerate(model.parents):
        if p >= 0:
            assert np.array_equal(Phi[i * k:(i + 1) * k, p * k:(p + 1) * k], A[i])
    assert_close(operators.influence_resolvent(model, A), np.linalg.inv(np.eye(n * k) - Phi), what="Psi_A")
    S = operators.sko(model, sd.random_configuration(model, rng))
    phi_star = [np.zeros((6, 6)) if p < 0 else S.E_phi.T[6 * i:6 * i + 6, 6 * p:6 * p + 6]
                for i, p in enumerate(model.parents)]
    if k == 6:
        assert_close(operators.influence_matrix(model, phi_star), S.E_phi.T, what="Phi_D = E_phi*")
        assert_close(operators.influence_resolvent(model, phi_star), S.phi.T, what="Psi_D = phi*")


def test_influence_matrix_errors():
    model = serial_chain(3)
    with pytest.raises(ValueError, match="A: expected 3 blocks"):
        operators.influence_matrix(model, np.zeros((2, 6, 6)))
    with pytest.raises(ValueError, match="parent-first"):
        operators.influence_matrix([-1, 2, 0], np.zeros((3, 2, 2)))


@pytest.mark.parametrize("kind", ["revolute", "prismatic", "helical", "spherical", "free", "universal",
                                  "gimbal", "planar"])
def test_symbolic_coordinates_agree_with_numeric(kind):
    """Symbolic q and v through each joint type (pose, joint map and Ḣ*v in sympy), then
    substituted, give the numeric operators."""
    sympy = pytest.importorskip("sympy")
    rng = np.random.default_rng(3)
    model = sd.Model(kind)
    model.add_body("base", joints.Revolute("z"), None, (np.eye(3), np.array([0.1, 0.0, 0.2])),
                   mass=2.0, com=(0.1, 0.2, 0.0), inertia=np.diag([0.1, 0.2, 0.3]))
    axis = np.array([0.6, 0.0, 0.8])
    joint = {"revolute": joints.Revolute(axis), "prismatic": joints.Prismatic(axis),
             "helical": joints.Helical(axis, pitch=0.1), "spherical": joints.Spherical(),
             "free": joints.Free(), "universal": joints.Universal("x", "z"),
             "gimbal": joints.Gimbal(("z", "y", "x")), "planar": joints.Planar(axis)}[kind]
    model.add_body("link", joint, "base", (np.eye(3), np.array([0.0, 0.5, 0.0])), mass=1.5,
                   com=(0.0, 0.25, 0.1), inertia=np.diag([0.05, 0.02, 0.04]))
    q_num = sd.random_configuration(model, rng)
    v_num = rng.normal(size=model.nv)
    qs = sympy.symbols(f"q0:{model.nq}", real=True)
    vs = sympy.symbols(f"v0:{model.nv}", real=True)
    S = operators.sko(model, qs, vs)
    assert S.symbolic and S.mass_matrix.dtype == object
    values = dict(zip(qs, q_num)) | dict(zip(vs, v_num))

    def evaluate(X):
        f = sympy.lambdify(list(values), sympy.Matrix(np.atleast_2d(X).tolist()), "numpy")
        return np.array(f(*values.values()), dtype=float).reshape(np.shape(X))

    N = operators.sko(model, q_num, v_num)
    assert_close(evaluate(S.mass_matrix), N.mass_matrix, what="symbolic M")
    assert_close(evaluate(S.coriolis), N.coriolis, what="symbolic C")


def test_sko_argument_errors():
    model = serial_chain(3)
    with pytest.raises(ValueError, match=r"q: expected shape \(3,\)"):
        operators.sko(model, np.zeros(4))
    S = operators.sko(model, np.zeros(3))
    with pytest.raises(ValueError, match="needs the velocity"):
        S.a
    with pytest.raises(ValueError, match="unknown frame"):
        S.B(["nope"])


def test_spatial_functions_accept_sympy():
    """Every spatial function the operator layer may use evaluates on sympy object arrays and,
    with the symbols substituted, agrees with its numeric result."""
    sympy = pytest.importorskip("sympy")
    from soadyn import spatial as sp

    syms = sympy.symbols("x0:9", real=True)
    rng = np.random.default_rng(7)
    vals = rng.uniform(0.2, 1.0, size=9)
    subs = dict(zip(syms, vals))

    def args(symbolic):
        x = np.array(syms, dtype=object) if symbolic else vals
        R = sp.rotation_z(x[0]) @ sp.rotation_x(x[1])
        inertia = sp.spatial_inertia(x[2], x[3:6], np.diag(x[6:9]))
        return x, R, inertia

    calls = {
        "skew": lambda x, R, I: sp.skew(x[:3]),
        "unskew": lambda x, R, I: sp.unskew(sp.skew(x[:3])),
        "rpy_to_matrix": lambda x, R, I: sp.rpy_to_matrix(x[:3]),
        "axis_angle_to_matrix": lambda x, R, I: sp.axis_angle_to_matrix([0.0, 0.6, 0.8], x[0]),
        "quaternion_to_matrix": lambda x, R, I: sp.quaternion_to_matrix(x[:4] / np.sqrt(np.sum(vals[:4] ** 2))),
        "quaternion_multiply": lambda x, R, I: sp.quaternion_multiply(x[:4], x[4:8]),
        "quaternion_conjugate": lambda x, R, I: sp.quaternion_conjugate(x[:4]),
        "motion_transform": lambda x, R, I: sp.motion_transform(R, x[3:6]),
        "force_transform": lambda x, R, I: sp.force_transform(R, x[3:6]),
        "inverse_pose": lambda x, R, I: np.concatenate([a.ravel() for a in sp.inverse_pose(R, x[3:6])]),
        "compose_poses": lambda x, R, I: np.concatenate(
            [a.ravel() for a in sp.compose_poses(R, x[3:6], R.T, x[:3])]),
        "transform_motion": lambda x, R, I: sp.transform_motion(R, x[:3], x[3:9]),
        "inverse_transform_motion": lambda x, R, I: sp.inverse_transform_motion(R, x[:3], x[3:9]),
        "transform_force": lambda x, R, I: sp.transform_force(R, x[:3], x[3:9]),
        "inverse_transform_force": lambda x, R, I: sp.inverse_transform_force(R, x[:3], x[3:9]),
        "homogeneous": lambda x, R, I: sp.homogeneous(R, x[:3]),
        "spatial_inertia": lambda x, R, I: I,
        "inertia_parameters": lambda x, R, I: np.concatenate([np.ravel(a) for a in sp.inertia_parameters(I)]),
        "parallel_axis": lambda x, R, I: sp.parallel_axis(x[0], np.diag(x[1:4]), x[4:7]),
        "transform_inertia": lambda x, R, I: sp.transform_inertia(R, x[:3], I),
        "motion_cross_matrix": lambda x, R, I: sp.motion_cross_matrix(x[:6]),
        "force_cross_matrix": lambda x, R, I: sp.force_cross_matrix(x[:6]),
        "cross_motion": lambda x, R, I: sp.cross_motion(x[:6], x[3:9]),
        "cross_force": lambda x, R, I: sp.cross_force(x[:6], x[3:9]),
    }
    for name, f in calls.items():
        symbolic = np.asarray(f(*args(True)), dtype=object)
        assert sp.is_symbolic(symbolic), name
        value = np.array([sympy.sympify(e).xreplace(subs) for e in symbolic.ravel()], dtype=float)
        assert_close(value.reshape(symbolic.shape), f(*args(False)), tol=1e-12, what=name)
