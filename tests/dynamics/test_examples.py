"""[CDI18]'s four hand-derived mass matrices, coded here from the document (inertial-frame
vectors r_j, s_j, d_j, η_j and inertias about the centres of mass), against the library's
CRBA and J^T M J methods."""
import numpy as np
import pytest

import soadyn as sd
from soadyn import models
from soadyn.core.spatial import rotation_x, rotation_z

from conftest import double_pendulum_closed_form, sk


EX, EY, EZ = np.eye(3)


def both_methods(model, q):
    return sd.mass_matrix(model, q), sd.mass_matrix(model, q, method="jtmj")


@pytest.mark.parametrize("seed", range(4))
def test_example1_pendulum_on_moving_base(seed):
    rng = np.random.default_rng(seed)
    m1, m2, L = rng.uniform(0.5, 3), rng.uniform(0.5, 3), rng.uniform(0.2, 2)
    I2 = rng.uniform(0.01, 0.2, 3)
    I2[2] = rng.uniform(abs(I2[0] - I2[1]), I2[0] + I2[1])  # a rigid body's moments
    model = models.pendulum_on_cart(m1, m2, L, I2)
    for _ in range(3):
        x, th = rng.uniform(-2, 2), rng.uniform(-np.pi, np.pi)
        expected = np.array([[m1 + m2, m2 * L * np.cos(th)],
                             [m2 * L * np.cos(th), I2[2] + m2 * L**2]])
        for M in both_methods(model, np.array([x, th])):
            assert np.allclose(M, expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_example2_double_pendulum(seed):
    rng = np.random.default_rng(10 + seed)
    m1, m2 = rng.uniform(0.5, 3, 2)
    l1, c1, c2 = rng.uniform(0.3, 1.5), rng.uniform(0.1, 0.7), rng.uniform(0.1, 0.7)
    I1b, I2b = np.diag([0.08, 0.07, 0.01]), np.diag([0.05, 0.06, 0.02])
    model = models.double_pendulum(m1, m2, l1, c1, c2, I1b, I2b)
    for _ in range(3):
        t1, t2 = rng.uniform(-np.pi, np.pi, 2)
        expected = double_pendulum_closed_form(m1, m2, l1, c1, c2, I1b, I2b, (t1, t2))[0]
        for M in both_methods(model, np.array([t1, t2])):
            assert np.allclose(M, expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_example3_satellite_with_two_arrays(seed):
    rng = np.random.default_rng(20 + seed)
    m = rng.uniform(5, 50, 3)
    Ib = [np.diag(v) for v in ([40.0, 35.0, 30.0], [2.0, 0.3, 2.2], [2.1, 0.25, 2.2])]
    s_b = [rng.normal(size=3) * 0.1, np.array([0, 1.5, 0.1]), np.array([0, -1.4, -0.05])]
    d_b = [None, np.array([0.1, 0.9, 0.0]), np.array([-0.1, -0.9, 0.05])]
    model = models.satellite_with_arrays(m[0], Ib[0], s_b[0], m[1], Ib[1], d_b[1], s_b[1], m[2], Ib[2], d_b[2], s_b[2])
    for _ in range(3):
        quat = rng.normal(size=4)
        quat /= np.linalg.norm(quat)
        q = np.concatenate([rng.normal(size=3), quat, rng.uniform(-np.pi, np.pi, 2)])
        R0 = sd.spatial.quaternion_to_matrix(quat)
        Rs = [R0, R0 @ rotation_x(q[7]), R0 @ rotation_x(q[8])]
        ex = R0 @ EX  # e_x = C_1^in [1, 0, 0]
        s = [Rs[j] @ s_b[j] for j in range(3)]
        d = [np.zeros(3), R0 @ d_b[1], R0 @ d_b[2]]
        r = [s[0], d[1] + s[1], d[2] + s[2]]
        I = [Rs[j] @ Ib[j] @ Rs[j].T for j in range(3)]
        mbar = m.sum()
        c = sum(m[j] * r[j] for j in range(3)) / mbar
        Ms = np.zeros((8, 8))
        Ms[:3, :3] = sum(I[j] - m[j] * sk(r[j]) @ sk(r[j]) for j in range(3))
        Ms[:3, 3:6] = mbar * sk(c)
        Ms[3:6, :3] = -mbar * sk(c)
        Ms[3:6, 3:6] = mbar * np.eye(3)
        for j, col in ((1, 6), (2, 7)):
            Ms[:3, col] = (I[j] - m[j] * sk(r[j]) @ sk(s[j])) @ ex
            Ms[3:6, col] = -m[j] * sk(s[j]) @ ex
            Ms[col, :3] = ex @ (I[j] - m[j] * sk(s[j]) @ sk(r[j]))
            Ms[col, 3:6] = ex @ (m[j] * sk(s[j]))
            Ms[col, col] = ex @ (I[j] - m[j] * sk(s[j]) @ sk(s[j])) @ ex
        # the seed's rates are [ω; η̇] in inertial axes; the library's are body-frame
        T = np.eye(8)
        T[:3, :3] = R0
        T[3:6, 3:6] = R0
        for M in both_methods(model, q):
            assert np.allclose(M, T.T @ Ms @ T, rtol=1e-11, atol=1e-10)


@pytest.mark.parametrize("seed", range(4))
def test_example4_three_link_arm(seed):
    rng = np.random.default_rng(30 + seed)
    m = rng.uniform(0.5, 4, 3)
    Ib = [np.diag(rng.uniform(0.01, 0.05, 3)) for _ in range(3)]
    for I in Ib:  # keep the triangle inequality of a rigid body
        I[2, 2] = min(I[2, 2], I[0, 0] + I[1, 1])
    d2, d3 = rng.normal(size=3) * 0.3, rng.normal(size=3) * 0.3
    s_b = [rng.normal(size=3) * 0.2 for _ in range(3)]
    model = models.three_link_arm(m, Ib, d2, d3, s_b)
    for _ in range(3):
        th = rng.uniform(-np.pi, np.pi, 3)
        R1 = rotation_z(th[0])
        R2 = R1 @ rotation_x(th[1])
        R3 = R2 @ rotation_x(th[2])
        ez, ex = EZ, R1 @ EX
        eta2 = R1 @ d2
        s = [R1 @ s_b[0], R2 @ s_b[1], R3 @ s_b[2]]
        r = [s[0], eta2 + s[1], eta2 + R2 @ d3 + s[2]]
        I = [R1 @ Ib[0] @ R1.T, R2 @ Ib[1] @ R2.T, R3 @ Ib[2] @ R3.T]
        e2 = sk(eta2)
        M = np.zeros((3, 3))
        M[0, 0] = ez @ sum(I[j] - m[j] * sk(r[j]) @ sk(r[j]) for j in range(3)) @ ez
        M[0, 1] = ez @ sum(I[j] - m[j] * sk(r[j]) @ (sk(r[j]) - e2) for j in (1, 2)) @ ex
        M[0, 2] = ez @ (I[2] - m[2] * sk(r[2]) @ sk(s[2])) @ ex
        M[1, 0] = ex @ sum(I[j] - m[j] * (sk(r[j]) - e2) @ sk(r[j]) for j in (1, 2)) @ ez
        M[1, 1] = ex @ sum(I[j] - m[j] * (sk(r[j]) - e2) @ (sk(r[j]) - e2) for j in (1, 2)) @ ex
        M[1, 2] = ex @ (I[2] - m[2] * (sk(r[2]) - e2) @ sk(s[2])) @ ex
        M[2, 0] = ex @ (I[2] - m[2] * sk(s[2]) @ sk(r[2])) @ ez
        M[2, 1] = ex @ (I[2] - m[2] * sk(s[2]) @ (sk(r[2]) - e2)) @ ex
        M[2, 2] = ex @ (I[2] - m[2] * sk(s[2]) @ sk(s[2])) @ ex
        for Mlib in both_methods(model, th):
            assert np.allclose(Mlib, M, rtol=1e-12, atol=1e-12)
