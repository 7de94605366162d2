"""The configuration space at the limits of float64: a quaternion is a rotation at any
nonzero scale (1e-200, whose squares underflow, or 1e155, whose squares overflow), a zero
quaternion is an error naming its joint, a result that would overflow is an error
naming the arguments, and a time step is a number, not text."""
import numpy as np
import pytest

import soadyn as sd
from soadyn import joints as jt


def _ball_on_a_free_body():
    m = sd.Model("ball on a free body")
    m.add_body("base", jt.Free(), mass=2.0, com=(0.1, 0.0, 0.05), inertia=np.diag([0.1, 0.2, 0.25]),
               joint_name="root")
    m.add_body("arm", jt.Spherical(), parent="base", placement=(np.eye(3), [0.0, 0.0, 0.3]), mass=1.0,
               com=(0.0, 0.0, -0.4), inertia=np.diag([0.02, 0.03, 0.04]), joint_name="shoulder")
    return m


def _state():
    model = _ball_on_a_free_body()
    rng = np.random.default_rng(2)
    q = sd.random_configuration(model, rng)
    return model, q, rng.normal(size=model.nv), rng.normal(size=model.nv)


def _scaled(q, scale):
    """q with both quaternions (entries 3:7 and 7:11) multiplied by ``scale``."""
    q = q.copy()
    q[3:11] *= scale
    return q


@pytest.mark.parametrize("scale", [1e-200, 1e-160, 1e155, 1e300])
def test_a_quaternion_is_a_rotation_at_any_scale(scale):
    """Every function gives the result of the unit quaternion (before: ZeroDivisionError
    at 1e-200, NaN at 1e-160 and 1e155)."""
    model, q, v, a = _state()
    s = _scaled(q, scale)
    for f in (lambda x: sd.integrate(model, x, v, 0.1), lambda x: sd.normalize(model, x),
              lambda x: sd.difference(model, q, x), lambda x: sd.difference(model, x, q),
              lambda x: sd.aba(model, x, v, a), lambda x: sd.rnea(model, x, v, a),
              lambda x: sd.mass_matrix(model, x), lambda x: sd.kinetic_energy(model, x, v),
              lambda x: sd.body_placements(model, x)[1]):
        expected, got = f(q), f(s)
        assert np.all(np.isfinite(got)), got
        assert np.allclose(got, expected, rtol=1e-12, atol=1e-12), (got, expected)
    R = sd.spatial.quaternion_to_matrix(q[7:11] * scale)  # the operator layer's rotation
    assert np.allclose(R, sd.spatial.quaternion_to_matrix(q[7:11]), rtol=0, atol=1e-14)


def test_a_zero_quaternion_is_named_by_its_joint():
    model, q, v, a = _state()
    z = q.copy()
    z[7:11] = 0.0
    message = r"q\[7:11\], the quaternion of the spherical joint 'shoulder': expected a nonzero quaternion"
    for f in (lambda: sd.integrate(model, z, v, 0.1), lambda: sd.aba(model, z, v, a), lambda: sd.normalize(model, z),
              lambda: sd.mass_matrix(model, z)):
        with pytest.raises(ValueError, match=message):
            f()
    with pytest.raises(ValueError, match=r"q1\[7:11\], the quaternion of the spherical joint 'shoulder'"):
        sd.difference(model, q, z)
    batch = np.stack([q, q, z])
    z[3:7] = 0.0
    with pytest.raises(ValueError, match=r"q\[3:7\], the quaternion of the free joint 'root'.*\(batch entry 2\)"):
        sd.aba(model, np.stack([q, q, z]), np.stack([v] * 3), np.stack([a] * 3))
    with pytest.raises(ValueError, match=r"q\[7:11\].*\(batch entry 2\)"):
        sd.integrate(model, batch, np.stack([v] * 3), 0.1)


@pytest.mark.parametrize("v_scale, dt", [(1e300, 1.0), (1.0, 1e300), (1e155, 1.0)])
def test_an_overflowing_step_is_an_error_not_inf_or_nan(v_scale, dt):
    """q ⊕ v·dt with finite v and dt whose result is beyond float64 (before: NaN and inf
    returned)."""
    model, q, v, _ = _state()
    with pytest.raises(OverflowError, match="q, v, dt: finite values whose result is beyond the floating-point range"):
        sd.integrate(model, q, v * v_scale, dt)


def test_an_overflowing_vector_joint_step_is_an_error():
    pendulum = sd.models.serial_chain(1)  # a revolute joint: q + v dt = 1e310, beyond float64
    with pytest.raises(OverflowError, match="q, v, dt: finite values"):
        sd.integrate(pendulum, [0.3], [1e300], 1e10)


def test_a_difference_that_overflows_is_an_error():
    slider = sd.Model("slider")
    slider.add_body("block", jt.Prismatic("x"), mass=1.0)
    with pytest.raises(OverflowError, match="q0, q1: finite values whose result"):
        sd.difference(slider, [-1e308], [1e308])


@pytest.mark.parametrize("dt", ["0.1", b"0.1", True, np.array("0.1")])
def test_a_time_step_is_a_real_number(dt):
    model, q, v, _ = _state()
    with pytest.raises(TypeError, match="dt: expected a real number, got"):
        sd.integrate(model, q, v, dt)
    assert np.allclose(sd.integrate(model, q, v, np.float32(0.1)), sd.integrate(model, q, v, 0.1), atol=1e-8)
    assert np.array_equal(sd.integrate(model, q, v, 1), sd.integrate(model, q, v, 1.0))
