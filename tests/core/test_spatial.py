"""Spatial algebra: each routine against a definition or an independent identity."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

from soadyn import spatial as sp

vec3 = st.lists(st.floats(-3, 3), min_size=3, max_size=3).map(np.array)


def rand_rot(rng):
    q = rng.normal(size=4)
    return sp.quaternion_to_matrix(q / np.linalg.norm(q))


@given(vec3, vec3)
def test_skew_is_cross_product(a, b):
    assert np.allclose(sp.skew(a) @ b, np.cross(a, b))
    assert np.allclose(sp.unskew(sp.skew(a)), a)


@given(st.floats(-7, 7))
def test_elementary_rotations_match_rodrigues(angle):
    for R, axis in ((sp.rotation_x, [1, 0, 0]), (sp.rotation_y, [0, 1, 0]), (sp.rotation_z, [0, 0, 1])):
        assert np.allclose(R(angle), sp.axis_angle_to_matrix(np.array(axis, float), angle))


def test_rpy_follows_urdf_convention():
    r, p, y = 0.3, -0.7, 1.9
    R = sp.rpy_to_matrix([r, p, y])
    # URDF: fixed-axis roll about x, then pitch about y, then yaw about z
    assert np.allclose(R, sp.rotation_z(y) @ sp.rotation_y(p) @ sp.rotation_x(r))
    assert np.allclose(sp.matrix_to_rpy(R), [r, p, y])


@given(vec3)
def test_exp_log_roundtrip_and_orthonormality(w):
    R = sp.exp3(w)
    assert np.allclose(R.T @ R, np.eye(3), atol=1e-12)
    assert np.isclose(np.linalg.det(R), 1.0)
    th = np.linalg.norm(w)
    if th < np.pi - 1e-6:
        assert np.allclose(sp.log3(R), w, atol=1e-9)
    # exp of a rotation vector equals Rodrigues about its axis
    if th > 1e-9:
        assert np.allclose(R, sp.axis_angle_to_matrix(w / th, th))


def test_quaternion_matrix_roundtrip_and_product():
    rng = np.random.default_rng(3)
    for _ in range(50):
        a = rng.normal(size=4)
        a /= np.linalg.norm(a)
        b = rng.normal(size=4)
        b /= np.linalg.norm(b)
        Ra, Rb = sp.quaternion_to_matrix(a), sp.quaternion_to_matrix(b)
        back = sp.matrix_to_quaternion(Ra)
        assert np.allclose(back, a if a[3] >= 0 else -a)
        assert np.allclose(sp.quaternion_to_matrix(sp.quaternion_multiply(a, b)), Ra @ Rb)
        w = sp.quaternion_to_rotation_vector(a)
        assert np.allclose(sp.exp3(w), Ra)
        assert np.allclose(sp.quaternion_to_matrix(sp.quaternion_from_rotation_vector(w)), Ra)
    with pytest.raises(ValueError, match="zero quaternion"):
        sp.quaternion_to_matrix(np.zeros(4))


def test_quaternion_is_xyzw():
    # 90 degrees about z: (0, 0, sin 45°, cos 45°)
    q = np.array([0, 0, np.sin(np.pi / 4), np.cos(np.pi / 4)])
    assert np.allclose(sp.quaternion_to_matrix(q), sp.rotation_z(np.pi / 2))


def test_motion_and_force_transforms():
    rng = np.random.default_rng(0)
    R, p = rand_rot(rng), rng.normal(size=3)
    X = sp.motion_transform(R, p)
    m, f = rng.normal(size=6), rng.normal(size=6)
    assert np.allclose(sp.transform_motion(R, p, m), X @ m)
    assert np.allclose(sp.transform_force(R, p, f), X.T @ f)
    assert np.allclose(sp.force_transform(R, p), X.T)
    assert np.allclose(sp.inverse_transform_motion(R, p, X @ m), m)
    assert np.allclose(sp.inverse_transform_force(R, p, X.T @ f), f)
    # power is frame-invariant: (X m)·f_child = m·(Xᵀ f_child)
    assert np.isclose((X @ m) @ f, m @ (X.T @ f))
    # composition: X(a∘b) = X(b) X(a)
    R2, p2 = rand_rot(rng), rng.normal(size=3)
    Rc, pc = sp.compose_poses(R, p, R2, p2)
    assert np.allclose(sp.motion_transform(Rc, pc), sp.motion_transform(R2, p2) @ X)
    Ri, pi = sp.inverse_pose(R, p)
    assert np.allclose(sp.motion_transform(Ri, pi) @ X, np.eye(6))


def test_motion_transform_gives_point_velocity():
    """A body rotating about the parent origin: the child origin at p moves with ω × p."""
    w = np.array([0.1, -0.4, 0.9])
    p = np.array([0.5, 0.2, -0.3])
    V_child = sp.transform_motion(np.eye(3), p, np.concatenate([w, np.zeros(3)]))
    assert np.allclose(V_child[3:], np.cross(w, p))


def test_spatial_inertia_roundtrip_and_kinetic_energy():
    rng = np.random.default_rng(1)
    m, c = 2.5, rng.normal(size=3)
    A = rng.normal(size=(3, 3))
    Ic = A @ A.T
    M = sp.spatial_inertia(m, c, Ic)
    m2, c2, I2 = sp.inertia_parameters(M)
    assert np.isclose(m2, m) and np.allclose(c2, c) and np.allclose(I2, Ic)
    # kinetic energy about the origin equals ½ m |v_c|² + ½ ωᵀ I_c ω
    V = rng.normal(size=6)
    vc = V[3:] + np.cross(V[:3], c)
    assert np.isclose(0.5 * V @ M @ V, 0.5 * m * vc @ vc + 0.5 * V[:3] @ Ic @ V[:3])
    # parallel-axis theorem matches the rotational block about the origin
    assert np.allclose(sp.parallel_axis(m, Ic, c), M[:3, :3])


def test_transform_inertia_is_congruence():
    rng = np.random.default_rng(2)
    R, p = rand_rot(rng), rng.normal(size=3)
    M = sp.spatial_inertia(1.3, rng.normal(size=3), np.diag([0.1, 0.2, 0.25]))
    Mp = sp.transform_inertia(R, p, M)
    # same body: the inertia in the parent frame is that of the moved centre of mass
    m, c, Ic = sp.inertia_parameters(M)
    assert np.allclose(Mp, sp.spatial_inertia(m, R @ c + p, R @ Ic @ R.T))


def test_cross_products():
    rng = np.random.default_rng(4)
    V, m, f = rng.normal(size=6), rng.normal(size=6), rng.normal(size=6)
    assert np.allclose(sp.cross_motion(V, m), sp.motion_cross_matrix(V) @ m)
    assert np.allclose(sp.cross_force(V, f), sp.force_cross_matrix(V) @ f)
    assert np.allclose(sp.force_cross_matrix(V), -sp.motion_cross_matrix(V).T)
    assert np.allclose(sp.cross_motion(V, V), 0)
    # duality: (V × m)·f = −m·(V ×* f)
    assert np.isclose(sp.cross_motion(V, m) @ f, -m @ sp.cross_force(V, f))
    # the derivative of a motion transform: d/dt X(exp(t V)) = −(V×) X at t = 0
    h = 1e-6
    R = sp.exp3(V[:3] * h)
    # for a small motion (R, p) ≈ (I + h[ω]×, h v), X ≈ I − h (V×)
    p = h * V[3:]
    X = sp.motion_transform(R, p)
    assert np.allclose((X - np.eye(6)) / h, -sp.motion_cross_matrix(V), atol=1e-5)


def test_symbolic_inputs():
    sympy = pytest.importorskip("sympy")
    th, m, l = sympy.symbols("theta m l")
    R = sp.rotation_z(th)
    assert sympy.simplify(R[0, 0] - sympy.cos(th)) == 0
    M = sp.spatial_inertia(m, np.array([l, 0, 0], dtype=object), np.zeros((3, 3)))
    # f = m(v + ω × c): for ω = e_y and c = l e_x, f_z = −m l
    assert sympy.simplify(M[5, 1] + m * l) == 0
