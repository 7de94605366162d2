"""RK4 of fourth order on the configuration manifold (free and spherical joints), in
``soadyn.simulate`` and ``soadyn.rollout``, against independent truths:

* the Euler equations of a rigid body, written here and integrated by scipy's DOP853 at
  tight tolerances (a torque-free free body; a heavy spherical pendulum, the top): the
  error of q (measured through ``difference``) and of v falls by 2⁴ = 16 per halving of dt;
* the conservation laws of a torque-free body without gravity: its world-frame linear and
  angular momentum and its energy, over 20 s at dt = 1 ms.
"""
import numpy as np
import pytest
from scipy.integrate import solve_ivp

import soadyn as sd
from soadyn import joints as jt
from soadyn.simulate import simulate

MASS = 2.0
COM = np.array([0.12, -0.05, 0.2])  # off the body origin: translation and rotation couple
INERTIA = np.array([[0.30, 0.02, 0.01], [0.02, 0.22, -0.03], [0.01, -0.03, 0.15]])  # about the com


def _cross_matrix(x):
    return np.array([[0.0, -x[2], x[1]], [x[2], 0.0, -x[0]], [-x[1], x[0], 0.0]])


def _rotation(quat):
    """Rotation matrices (..., 3, 3) of unit quaternions (..., 4) in (x, y, z, w) order."""
    x, y, z, w = np.moveaxis(np.asarray(quat), -1, 0)
    return np.stack([np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)], -1),
                     np.stack([2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)], -1),
                     np.stack([2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)], -1)], -2)


def _quaternion_rate(quat, omega):
    """d/dt of (x, y, z, w) for the body-frame angular velocity ω: ½ quat ⊗ (ω, 0)."""
    x, y, z, w = quat
    a, b, c = omega
    return 0.5 * np.array([w * a + y * c - z * b, w * b + z * a - x * c, w * c + x * b - y * a,
                           -x * a - y * b - z * c])


def _free_body(gravity=(0.0, 0.0, 0.0)):
    model = sd.Model("tumbling body", gravity=gravity)
    model.add_body("body", jt.Free(), mass=MASS, com=COM, inertia=INERTIA)
    return model


def _top():
    """A heavy asymmetric top: a spherical joint at the world origin, the com below it."""
    model = sd.Model("top")
    model.add_body("top", jt.Spherical(), mass=MASS, com=COM - [0.0, 0.0, 0.6], inertia=INERTIA)
    return model


def _free_body_reference(q0, v0, t):
    """(q, v) at t of the torque-free body by the Euler equations I_c ω̇ = −ω × I_c ω, the
    centre of mass moving on a straight line (DOP853, rtol = atol = 1e-13)."""
    R0 = _rotation(q0[3:])
    p_com0 = q0[:3] + R0 @ COM
    v_com0 = R0 @ (v0[3:] + np.cross(v0[:3], COM))
    Iinv = np.linalg.inv(INERTIA)

    def rhs(_, y):
        quat, omega = y[:4], y[4:]
        return np.concatenate([_quaternion_rate(quat, omega), -Iinv @ np.cross(omega, INERTIA @ omega)])

    y = solve_ivp(rhs, (0.0, t), np.concatenate([q0[3:], v0[:3]]), method="DOP853", rtol=1e-13, atol=1e-13).y[:, -1]
    quat, omega = y[:4] / np.linalg.norm(y[:4]), y[4:]
    R = _rotation(quat)
    p_com = p_com0 + t * v_com0
    return (np.concatenate([p_com - R @ COM, quat]),
            np.concatenate([omega, R.T @ v_com0 - np.cross(omega, COM)]))


def _top_reference(model, q0, v0, t):
    """(q, v) at t of the top by I_o ω̇ + ω × I_o ω = c × m Rᵀ g about the fixed point
    (I_o the inertia about it, c the com in the body frame), by DOP853."""
    body = model.bodies[0]
    c, m = np.asarray(body.com), body.mass
    I_o = INERTIA + m * (c @ c * np.eye(3) - np.outer(c, c))
    Iinv, g = np.linalg.inv(I_o), model.gravity

    def rhs(_, y):
        quat, omega = y[:4], y[4:]
        torque = np.cross(c, m * _rotation(quat / np.linalg.norm(quat)).T @ g)
        return np.concatenate([_quaternion_rate(quat, omega), Iinv @ (torque - np.cross(omega, I_o @ omega))])

    y = solve_ivp(rhs, (0.0, t), np.concatenate([q0, v0]), method="DOP853", rtol=1e-13, atol=1e-13).y[:, -1]
    return y[:4] / np.linalg.norm(y[:4]), y[4:]


def _initial_state(model):
    rng = np.random.default_rng(11)
    q0 = sd.random_configuration(model, rng)
    v0 = np.array([1.4, -2.1, 2.6, 0.4, -0.3, 0.5])[:model.nv]
    return q0, v0


def _integrators():
    def by_simulate(model, q0, v0, t, steps):
        res = simulate(model, q0, v0, t, t / steps, method="rk4")
        return res.q[-1], res.v[-1]

    def by_rollout(model, q0, v0, t, steps):
        qs, vs = sd.rollout(model, q0, v0, np.zeros((steps, model.nv)), t / steps, "rk4")
        return qs[-1], vs[-1]

    return {"simulate": by_simulate, "rollout": by_rollout}


@pytest.mark.parametrize("system", ["free body", "top"])
@pytest.mark.parametrize("integrator", ["simulate", "rollout"])
def test_rk4_is_of_fourth_order_in_q_and_v(system, integrator):
    model = _free_body() if system == "free body" else _top()
    q0, v0 = _initial_state(model)
    t = 1.0
    q_ref, v_ref = (_free_body_reference(q0, v0, t) if system == "free body" else _top_reference(model, q0, v0, t))
    run = _integrators()[integrator]
    q_err, v_err = [], []
    for steps in (25, 50, 100):
        q, v = run(model, q0, v0, t, steps)
        q_err.append(np.linalg.norm(sd.difference(model, q_ref, q)))
        v_err.append(np.linalg.norm(v - v_ref))
    q_ratio = np.array(q_err[:-1]) / q_err[1:]
    v_ratio = np.array(v_err[:-1]) / v_err[1:]
    # fourth order: 2⁴ = 16 per halving (the naive sum of the stages in one tangent space
    # gives 4 in q: second order)
    assert np.all(np.abs(np.log2(q_ratio) - 4.0) < 0.3), (q_err, q_ratio)
    assert np.all(np.abs(np.log2(v_ratio) - 4.0) < 0.3), (v_err, v_ratio)
    assert q_err[-1] > 1e-11 and v_err[-1] > 1e-11  # the ratios measure truncation, not round-off


def _world_momentum(qs, vs):
    """World-frame linear momentum m v_c and angular momentum about the world origin
    R I_c ω + p_c × m v_c, per row of a free body's trajectory."""
    R = _rotation(qs[:, 3:])
    omega, v = vs[:, :3], vs[:, 3:]
    p_com = qs[:, :3] + R @ COM
    v_com = np.einsum("kij,kj->ki", R, v + np.cross(omega, COM))
    linear = MASS * v_com
    angular = np.einsum("kij,kj->ki", R, omega @ INERTIA.T) + np.cross(p_com, linear)
    return linear, angular


def test_rk4_keeps_the_momentum_and_energy_of_a_tumbling_body():
    """20 s at dt = 1 ms (20 000 steps, in the compiled rollout): the world momentum of
    a torque-free body stays constant to 1e-9, its energy to 1e-10."""
    model = _free_body()
    q0, v0 = _initial_state(model)
    steps = 20000
    qs, vs = sd.rollout(model, q0, v0, np.zeros((steps, 6)), 1e-3, "rk4")
    linear, angular = _world_momentum(qs, vs)
    assert np.abs(linear - linear[0]).max() <= 1e-9, np.abs(linear - linear[0]).max()
    assert np.abs(angular - angular[0]).max() <= 1e-9, np.abs(angular - angular[0]).max()
    energy = np.array([sd.kinetic_energy(model, q, v) for q, v in zip(qs[::100], vs[::100])])
    assert np.abs(energy - energy[0]).max() <= 1e-10 * energy[0]
    assert np.linalg.norm(angular[0]) > 0.5 and np.linalg.norm(linear[0]) > 0.5  # a tumbling, moving body
