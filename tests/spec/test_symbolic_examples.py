"""Symbolic operator layer against the hand-derived mass matrices of [CDI18].

For each of [CDI18]'s four examples the model is built with sympy symbols for every
mass, length, centre-of-mass offset, rotational-inertia entry and joint coordinate;
``soadyn.operators.sko(...).mass_matrix`` (M = HφMφ*H*) must simplify to the seed's
closed-form expression, which is coded here independently from the seed text
(/work/shared/seeds/003_*.txt, examples 1–4: (M1)–(M5), (N6), (O7), (P7)). The seed
writes its vectors d_i, s_i, r_i, η_i and inertias I_i in inertial coordinates; the
models take them in body coordinates, so the test rotates them by the bodies'
orientations. As in (O2), e_x denotes the hinge axis in inertial coordinates.
"""
from __future__ import annotations

import numpy as np
import pytest

sympy = pytest.importorskip("sympy")

from soadyn import operators  # noqa: E402
from soadyn.models import examples  # noqa: E402


def rot_x(a):
    return sympy.Matrix([[1, 0, 0], [0, sympy.cos(a), -sympy.sin(a)], [0, sympy.sin(a), sympy.cos(a)]])


def rot_z(a):
    return sympy.Matrix([[sympy.cos(a), -sympy.sin(a), 0], [sympy.sin(a), sympy.cos(a), 0], [0, 0, 1]])


def tilde(a):
    """[CDI18]'s skew matrix ã."""
    return sympy.Matrix([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])


def inertia(name):
    """A general symmetric rotational inertia about the centre of mass (body axes)."""
    xx, yy, zz, xy, xz, yz = sympy.symbols(f"{name}xx {name}yy {name}zz {name}xy {name}xz {name}yz", real=True)
    return sympy.Matrix([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])


def vector(name):
    return sympy.Matrix(sympy.symbols(f"{name}x {name}y {name}z", real=True))


def as_array(A):
    return np.array(A.tolist(), dtype=object)


def assert_equal(computed, expected):
    """Exact equality as polynomials in the parameters and in sin/cos of each angle,
    modulo sin² + cos² = 1 (cheaper than ``sympy.simplify`` on these expressions)."""
    diff = (sympy.Matrix(computed.tolist()) - expected).applyfunc(sympy.expand_trig)
    trig = {f for f in diff.atoms(sympy.sin, sympy.cos)}
    angles = sorted({f.args[0] for f in trig}, key=str)
    assert all(a.is_Symbol for a in angles), angles
    s = [sympy.Dummy(f"s_{a}") for a in angles]
    c = [sympy.Dummy(f"c_{a}") for a in angles]
    to_poly = {}
    for a, sa, ca in zip(angles, s, c):
        to_poly[sympy.sin(a)] = sa
        to_poly[sympy.cos(a)] = ca
    circle = [sa**2 + ca**2 - 1 for sa, ca in zip(s, c)]  # a Gröbner basis (coprime leading terms)
    for entry in diff:
        num = sympy.expand(entry.xreplace(to_poly))
        if not num.is_polynomial():
            num = sympy.expand(sympy.numer(sympy.together(num)))
        if num == 0:
            continue
        _, remainder = sympy.reduced(num, circle, *s, *c) if circle else (None, num)
        assert sympy.expand(remainder) == 0, (entry, remainder)


E_X = sympy.Matrix([1, 0, 0])
E_Z = sympy.Matrix([0, 0, 1])


def test_example1_pendulum_on_moving_base():
    m1, m2, L, x, th = sympy.symbols("m1 m2 L x theta", real=True)
    I2 = inertia("I2")
    model = examples.pendulum_on_cart(m1, m2, L, as_array(I2))
    M = operators.sko(model, [x, th]).mass_matrix
    expected = sympy.Matrix([[m1 + m2, m2 * L * sympy.cos(th)],
                             [m2 * L * sympy.cos(th), I2[2, 2] + m2 * L**2]])
    assert_equal(M, expected)


def test_example2_double_pendulum():
    m1, m2, l1, c1, c2, t1, t2 = sympy.symbols("m1 m2 l1 c1 c2 theta1 theta2", real=True)
    I1, I2 = inertia("I1"), inertia("I2")
    model = examples.double_pendulum(m1, m2, l1, c1, c2, as_array(I1), as_array(I2))
    M = operators.sko(model, [t1, t2]).mass_matrix
    # inertial coordinates: link 1 turned by θ1, link 2 by θ1 + θ2 about x
    R1, R2 = rot_x(t1), rot_x(t1 + t2)
    I1w, I2w = R1 * I1 * R1.T, R2 * I2 * R2.T
    s1 = R1 * sympy.Matrix([0, 0, -c1])
    d2 = R1 * sympy.Matrix([0, 0, -l1])
    s2 = R2 * sympy.Matrix([0, 0, -c2])
    r1, r2 = s1, d2 + s2
    e = E_X
    expected = sympy.Matrix([
        [(e.T * (I1w + I2w - m1 * tilde(r1) * tilde(r1) - m2 * tilde(r2) * tilde(r2)) * e)[0],
         (e.T * (I2w - m2 * tilde(r2) * tilde(s2)) * e)[0]],
        [(e.T * (I2w - m2 * tilde(s2) * tilde(r2)) * e)[0],
         (e.T * (I2w - m2 * tilde(s2) * tilde(s2)) * e)[0]]])
    assert_equal(M, expected)


def test_example3_satellite_with_two_arrays():
    m1, m2, m3, yaw, t2, t3 = sympy.symbols("m1 m2 m3 psi theta2 theta3", real=True)
    I1, I2, I3 = inertia("I1"), inertia("I2"), inertia("I3")
    s1, d2, s2, d3, s3 = (vector(n) for n in ("s1", "d2", "s2", "d3", "s3"))
    model = examples.satellite_with_arrays(m1, as_array(I1), list(s1), m2, as_array(I2), list(d2), list(s2),
                                          m3, as_array(I3), list(d3), list(s3))
    p = sympy.symbols("px py pz", real=True)
    q = [*p, 0, 0, sympy.sin(yaw / 2), sympy.cos(yaw / 2), t2, t3]  # bus turned by ψ about z
    M = operators.sko(model, q).mass_matrix
    C1 = rot_z(yaw)
    R2, R3 = C1 * rot_x(t2), C1 * rot_x(t3)
    Iw = [C1 * I1 * C1.T, R2 * I2 * R2.T, R3 * I3 * R3.T]
    s = [C1 * s1, R2 * s2, R3 * s3]
    r = [s[0], C1 * d2 + s[1], C1 * d3 + s[2]]
    ms = [m1, m2, m3]
    e = C1 * E_X  # (O2)
    mbar = m1 + m2 + m3
    mbar_c = sum((mj * rj for mj, rj in zip(ms, r)), sympy.zeros(3, 1))  # m̄c, c = Σ m_j r_j / m̄
    top = sum((Iw[j] - ms[j] * tilde(r[j]) * tilde(r[j]) for j in range(3)), sympy.zeros(3, 3))
    seed = sympy.zeros(8, 8)
    seed[0:3, 0:3] = top
    seed[0:3, 3:6] = tilde(mbar_c)
    seed[0:3, 6] = (Iw[1] - m2 * tilde(r[1]) * tilde(s[1])) * e
    seed[0:3, 7] = (Iw[2] - m3 * tilde(r[2]) * tilde(s[2])) * e
    seed[3:6, 0:3] = -tilde(mbar_c)
    seed[3:6, 3:6] = mbar * sympy.eye(3)
    seed[3:6, 6] = -m2 * tilde(s[1]) * e
    seed[3:6, 7] = -m3 * tilde(s[2]) * e
    seed[6, 0:3] = e.T * (Iw[1] - m2 * tilde(s[1]) * tilde(r[1]))
    seed[6, 3:6] = e.T * m2 * tilde(s[1])
    seed[6, 6] = (e.T * (Iw[1] - m2 * tilde(s[1]) * tilde(s[1])) * e)[0]
    seed[7, 0:3] = e.T * (Iw[2] - m3 * tilde(s[2]) * tilde(r[2]))
    seed[7, 3:6] = e.T * m3 * tilde(s[2])
    seed[7, 7] = (e.T * (Iw[2] - m3 * tilde(s[2]) * tilde(s[2])) * e)[0]
    # the seed's rates are [ω; η̇] in inertial axes, soadyn's free joint [ω; v] in the bus axes
    T = sympy.diag(C1, C1, 1, 1)
    assert_equal(M, T.T * seed * T)


def test_example4_three_link_arm():
    t1, t2, t3 = sympy.symbols("theta1 theta2 theta3", real=True)
    ms = sympy.symbols("m1 m2 m3", real=True)
    Is = [inertia(f"I{k}") for k in (1, 2, 3)]
    d2, d3 = vector("d2"), vector("d3")
    ss = [vector(f"s{k}") for k in (1, 2, 3)]
    model = examples.three_link_arm(ms, [as_array(I) for I in Is], list(d2), list(d3), [list(s) for s in ss])
    M = operators.sko(model, [t1, t2, t3]).mass_matrix
    R1 = rot_z(t1)
    R2 = R1 * rot_x(t2)
    R3 = R2 * rot_x(t3)
    Rs = [R1, R2, R3]
    Iw = [R * I * R.T for R, I in zip(Rs, Is)]
    s = [R * sk for R, sk in zip(Rs, ss)]
    eta2 = R1 * d2
    eta3 = eta2 + R2 * d3
    r = [s[0], eta2 + s[1], eta3 + s[2]]
    m1, m2, m3 = ms
    T = tilde
    ez, ex = E_Z, R1 * E_X

    def sandwich(a, X, b):
        return (a.T * X * b)[0]

    e2 = T(eta2)
    expected = sympy.Matrix([
        [sandwich(ez, sum((Iw[j] - ms[j] * T(r[j]) * T(r[j]) for j in range(3)), sympy.zeros(3, 3)), ez),
         sandwich(ez, sum((Iw[j] - ms[j] * T(r[j]) * (T(r[j]) - e2) for j in (1, 2)), sympy.zeros(3, 3)), ex),
         sandwich(ez, Iw[2] - m3 * T(r[2]) * T(s[2]), ex)],
        [sandwich(ex, sum((Iw[j] - ms[j] * (T(r[j]) - e2) * T(r[j]) for j in (1, 2)), sympy.zeros(3, 3)), ez),
         sandwich(ex, sum((Iw[j] - ms[j] * (T(r[j]) - e2) * (T(r[j]) - e2) for j in (1, 2)), sympy.zeros(3, 3)), ex),
         sandwich(ex, Iw[2] - m3 * (T(r[2]) - e2) * T(s[2]), ex)],
        [sandwich(ex, Iw[2] - m3 * T(s[2]) * T(r[2]), ez),
         sandwich(ex, Iw[2] - m3 * T(s[2]) * (T(r[2]) - e2), ex),
         sandwich(ex, Iw[2] - m3 * T(s[2]) * T(s[2]), ex)]])
    assert_equal(M, expected)
