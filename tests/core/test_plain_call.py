"""The plain call of ``rnea`` and ``aba`` (:mod:`soadyn.kernels.plain`: one array of
tables, absent rates as None) against the closed-form dynamics of a double pendulum
([CDI18]'s example 2): the mass matrix from τ(q, 0, e_j) − τ(q, 0, 0), the gravity
torques from τ(q, 0, 0), q̈ from the ABA; then what must leave the plain kernel: an empty
rate, a model edited between calls, other threads."""
import threading

import numpy as np
import pytest

import soadyn as sd
from soadyn import models
from soadyn.dynamics.aba import _ABA
from soadyn.dynamics.rnea import _RNEA

from conftest import double_pendulum_closed_form

LENGTHS = (1.1, 0.4, 0.55)  # l1, c1, c2 [m]
I1B, I2B = np.diag([0.08, 0.07, 0.01]), np.diag([0.05, 0.06, 0.02])


def closed_form(m1, m2, q, gravity):
    """M (2, 2) and the gravity torques g (2,) of the double pendulum (joints about x)."""
    M, r1, r2, s2 = double_pendulum_closed_form(m1, m2, *LENGTHS, I1B, I2B, q)
    # g = ∂V/∂q with V = −Σ m_i g·r_i; a rotation about x moves a point r by e_x × r
    ex = np.eye(3)[0]
    g = -np.array([(m1 * np.cross(ex, r1) + m2 * np.cross(ex, r2)) @ gravity, m2 * np.cross(ex, s2) @ gravity])
    return M, g


@pytest.fixture
def pendulum():
    return models.double_pendulum(1.3, 0.7, LENGTHS[0], LENGTHS[1], LENGTHS[2], I1B, I2B)


def test_rnea_and_aba_by_the_plain_kernel_match_the_closed_form(pendulum):
    rng = np.random.default_rng(3)
    gravity = pendulum.gravity
    sd.rnea(pendulum, np.zeros(2), np.zeros(2), np.zeros(2))  # the first call: validated
    for _ in range(4):
        q = rng.uniform(-np.pi, np.pi, 2)
        M, g = closed_form(1.3, 0.7, q, gravity)
        assert np.allclose(sd.rnea(pendulum, q, None, None), g, rtol=1e-12, atol=1e-12)
        columns = [sd.rnea(pendulum, q, None, e) - sd.rnea(pendulum, q, np.zeros(2), np.zeros(2)) for e in np.eye(2)]
        assert np.allclose(np.array(columns).T, M, rtol=1e-12, atol=1e-12)
        tau = rng.normal(size=2)
        assert np.allclose(M @ sd.aba(pendulum, q, None, tau), tau - g, rtol=1e-11, atol=1e-11)
        assert np.allclose(M @ sd.aba(pendulum, q, np.zeros(2), tau), tau - g, rtol=1e-11, atol=1e-11)
    # the plain kernels ran, for the argument types given (None or an array per rate)
    kinds = {tuple(t.__class__.__name__ for t in sig[2:4]) for sig in _RNEA.plain.general.signatures}
    assert {("NoneType", "NoneType"), ("NoneType", "Array"), ("Array", "Array")} <= kinds, kinds
    assert any(sig[2].__class__.__name__ == "NoneType" for sig in _ABA.plain.general.signatures)


def test_the_plain_and_the_validated_kernels_agree_bit_for_bit(pendulum):
    rng = np.random.default_rng(4)
    ws = sd.Workspace(pendulum)
    for _ in range(3):
        q, v, a = rng.normal(size=(3, 2))
        sd.rnea(pendulum, q, v, a)
        assert np.array_equal(sd.rnea(pendulum, q, v, a), sd.rnea(pendulum, q, v, a, workspace=ws))
        assert np.array_equal(sd.aba(pendulum, q, v, a), sd.aba(pendulum, q, v, a, workspace=ws))
        out = np.empty(2)
        assert sd.rnea(pendulum, q, v, a, out=out) is out and np.array_equal(out, sd.rnea(pendulum, q, v, a))


def test_empty_rates_and_missing_forces_are_still_named(pendulum):
    q = np.array([0.3, -0.2])
    for _ in range(2):  # the second time on a thread whose plain kernels are ready
        sd.rnea(pendulum, q, np.ones(2), np.ones(2))
        sd.aba(pendulum, q, np.ones(2), np.ones(2))
        with pytest.raises(ValueError, match=r"v: expected shape \(2,\)"):
            sd.rnea(pendulum, q, np.zeros(0), np.ones(2))
        with pytest.raises(ValueError, match=r"a: expected shape \(2,\)"):
            sd.rnea(pendulum, q, np.ones(2), np.zeros(0))
        with pytest.raises(ValueError, match=r"v: expected shape \(2,\)"):
            sd.aba(pendulum, q, np.zeros(0), np.ones(2))
        with pytest.raises(TypeError, match=r"tau: expected an array of 2 real numbers, got None"):
            sd.aba(pendulum, q, None, None)
        with pytest.raises(ValueError, match=r"q: expected shape \(2,\)"):
            sd.rnea(pendulum, np.ones(3), np.ones(2), np.ones(2))
        with pytest.raises(ValueError, match=r"out"):
            sd.rnea(pendulum, q, np.ones(2), np.ones(2), out=np.empty(3))


def test_an_edited_model_is_read_afresh(pendulum):
    q = np.array([0.4, 1.1])
    for _ in range(2):
        sd.rnea(pendulum, q, None, None)
    pendulum.set_inertia(pendulum.bodies[1].name, 2.5, com=(0.0, 0.0, -LENGTHS[2]), inertia=I2B)
    _, g = closed_form(1.3, 2.5, q, pendulum.gravity)
    for _ in range(2):
        assert np.allclose(sd.rnea(pendulum, q, None, None), g, rtol=1e-12, atol=1e-12)


def test_each_thread_has_its_own_tables(pendulum):
    rng = np.random.default_rng(5)
    states = rng.normal(size=(6, 3, 2))
    expected = [sd.rnea(pendulum, *s) for s in states]
    failures = []

    def worker():
        for _ in range(300):
            for s, e in zip(states, expected):
                if not np.array_equal(sd.rnea(pendulum, *s), e):
                    failures.append(1)

    threads = [threading.Thread(target=worker) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures
