"""None for a velocity or an acceleration means zero wherever the function also takes a
state without it (``rnea``'s convention), and gives the same result as explicit zeros."""
import numpy as np
import pytest

import soadyn as sd


@pytest.fixture(scope="module")
def arm():
    m = sd.models.three_link_arm()
    return m, np.array([0.3, -0.5, 0.8])


def _same(a, b):
    for x, y in zip(a if isinstance(a, tuple) else (a,), b if isinstance(b, tuple) else (b,)):
        assert np.array_equal(x, y)


CALLS = {
    "aba v": (lambda m, q, z, t: sd.aba(m, q, None, t), lambda m, q, z, t: sd.aba(m, q, z, t)),
    "aba v batch": (lambda m, q, z, t: sd.aba(m, np.stack([q, q]), None, np.stack([t, t])),
                    lambda m, q, z, t: sd.aba(m, np.stack([q, q]), np.stack([z, z]), np.stack([t, t]))),
    "rnea v, a": (lambda m, q, z, t: sd.rnea(m, q, None, None), lambda m, q, z, t: sd.rnea(m, q, z, z)),
    "bias_forces v": (lambda m, q, z, t: sd.bias_forces(m, q, None), lambda m, q, z, t: sd.bias_forces(m, q, z)),
    "kinetic_energy v": (lambda m, q, z, t: sd.kinetic_energy(m, q, None),
                         lambda m, q, z, t: sd.kinetic_energy(m, q, z)),
    "forward_kinematics a without v": (lambda m, q, z, t: sd.forward_kinematics(m, q, None, t).accelerations,
                                       lambda m, q, z, t: sd.forward_kinematics(m, q, z, t).accelerations),
    "forward_kinematics batch a without v": (
        lambda m, q, z, t: sd.forward_kinematics(m, np.stack([q, q]), None, np.stack([t, t])).accelerations,
        lambda m, q, z, t: sd.forward_kinematics(m, np.stack([q, q]), np.stack([z, z]), np.stack([t, t])).accelerations),
    "frame_velocity v": (lambda m, q, z, t: sd.frame_velocity(m, q, None, "tool"),
                         lambda m, q, z, t: sd.frame_velocity(m, q, z, "tool")),
    "frame_acceleration v": (lambda m, q, z, t: sd.frame_acceleration(m, q, None, t, "tool"),
                             lambda m, q, z, t: sd.frame_acceleration(m, q, z, t, "tool")),
    "frame_acceleration a": (lambda m, q, z, t: sd.frame_acceleration(m, q, t, None, "tool"),
                             lambda m, q, z, t: sd.frame_acceleration(m, q, t, z, "tool")),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_none_rates_mean_zero(arm, name):
    m, q = arm
    absent, zeros = CALLS[name]
    _same(absent(m, q, np.zeros(m.nv), np.array([0.4, -1.0, 2.0])), zeros(m, q, np.zeros(m.nv), np.array([0.4, -1.0, 2.0])))


def test_forward_kinematics_without_v_reports_no_velocities(arm):
    m, q = arm
    r = sd.forward_kinematics(m, q, None, np.ones(m.nv))
    assert r.velocities is None and r.accelerations.shape == (m.nbodies, 6)
    with pytest.raises(ValueError, match=r"a: expected shape \(3,\) or \(B, 3\), got \(2,\)"):
        sd.forward_kinematics(m, q, None, np.ones(2))


@pytest.mark.parametrize("call, name", [
    (lambda m, q: sd.aba(m, q, np.zeros(3), None), "tau"),
    (lambda m, q: sd.integrate(m, q, None), "v"),
    (lambda m, q: sd.configuration_rate(m, q, None), "v"),
    (lambda m, q: sd.difference(m, q, None), "q1"),
])
def test_required_arguments_say_so(arm, call, name):
    m, q = arm
    with pytest.raises(TypeError, match=rf"{name}: expected an array of 3 real numbers, got None"):
        call(m, q)
