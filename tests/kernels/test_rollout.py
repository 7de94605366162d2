"""sd.rollout against independent truths: a step composed by hand from aba and integrate,
the closed-form pendulum (RK4's fourth order, energy conservation), soadyn.simulate's RK4,
and the single call for every member of a batch."""
import numpy as np
import pytest
from scipy.integrate import solve_ivp

import soadyn as sd
from soadyn.simulate import simulate
from soadyn import joints as jt

L, MASS, I_COM, G = 0.8, 1.3, 0.02, 9.81


def _pendulum():
    """A rod pendulum about y: J θ̈ = −m g l sin θ with J = I_c + m l² (θ = 0 hanging down)."""
    m = sd.Model("pendulum")
    m.add_body("rod", jt.Revolute("y"), mass=MASS, com=(0.0, 0.0, -L), inertia=np.eye(3) * I_COM)
    return m


def _pendulum_exact(theta0, omega0, t):
    J = I_COM + MASS * L * L
    sol = solve_ivp(lambda _, y: [y[1], -MASS * G * L * np.sin(y[0]) / J], (0.0, t), [theta0, omega0],
                    method="DOP853", rtol=1e-13, atol=1e-13)
    return sol.y[:, -1]


def _floating_tree():
    model = sd.models.random_tree(7, 5, floating_base=True)
    rng = np.random.default_rng(3)
    q = sd.random_configuration(model, rng)
    v = rng.normal(size=model.nv)
    tau = rng.normal(size=(4, model.nv))
    return model, q, v, tau


def test_one_euler_step_is_aba_then_integrate():
    model, q, v, tau = _floating_tree()
    dt = 0.01
    qs, vs = sd.rollout(model, q, v, tau[:1], dt)
    v1 = v + dt * sd.aba(model, q, v, tau[0])
    assert np.allclose(vs[1], v1, rtol=1e-13, atol=1e-13)
    assert np.allclose(qs[1], sd.integrate(model, q, v1, dt), rtol=1e-13, atol=1e-13)
    assert np.array_equal(qs[0], q) and np.array_equal(vs[0], v)


def _dexp_inverse(model, x, w):
    """dexp⁻¹_{−x}(w) = w + ½[x, w] + 1/12 [x, [x, w]] joint by joint, the brackets of
    so(3) (spherical) and se(3) (free, [ω; v]: [x_ω × w_ω; x_ω × w_v + x_v × w_ω])."""
    def bracket(kind, a, b):
        if kind == "spherical":
            return np.cross(a, b)
        return np.concatenate([np.cross(a[:3], b[:3]), np.cross(a[:3], b[3:]) + np.cross(a[3:], b[:3])])

    out = w.copy()
    for j in model.joints:
        if j.kind in ("free", "spherical"):
            s = slice(j.v_index, j.v_index + j.nv)
            c = bracket(j.kind, x[s], w[s])
            out[s] = w[s] + c / 2 + bracket(j.kind, x[s], c) / 12
    return out


def test_one_rk4_step_is_the_munthe_kaas_scheme():
    """Classical RK4 in the Runge–Kutta–Munthe-Kaas form: stages at q ⊕ u_i, the rates of
    the exponential coordinates dexp⁻¹_{−u_i}(v_i) summed (not the stage velocities)."""
    model, q, v, tau = _floating_tree()
    assert {"free", "spherical"} <= {j.kind for j in model.joints}
    dt, u = 0.02, tau[0]
    a1 = sd.aba(model, q, v, u)
    k1 = v
    v2 = v + dt / 2 * a1
    a2 = sd.aba(model, sd.integrate(model, q, dt / 2 * k1), v2, u)
    k2 = _dexp_inverse(model, dt / 2 * k1, v2)
    v3 = v + dt / 2 * a2
    a3 = sd.aba(model, sd.integrate(model, q, dt / 2 * k2), v3, u)
    k3 = _dexp_inverse(model, dt / 2 * k2, v3)
    v4 = v + dt * a3
    a4 = sd.aba(model, sd.integrate(model, q, dt * k3), v4, u)
    k4 = _dexp_inverse(model, dt * k3, v4)
    qs, vs = sd.rollout(model, q, v, tau[:1], dt, "rk4")
    assert np.allclose(vs[1], v + dt / 6 * (a1 + 2 * a2 + 2 * a3 + a4), rtol=1e-12, atol=1e-12)
    assert np.allclose(qs[1], sd.integrate(model, q, dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)), rtol=1e-12, atol=1e-12)


def test_rk4_matches_simulate_under_a_constant_torque():
    model, q, v, tau = _floating_tree()
    qs, vs = sd.rollout(model, q, v, np.tile(tau[0], (50, 1)), 0.004, "rk4")
    res = simulate(model, q, v, 0.2, 0.004, tau[0], method="rk4")
    assert np.allclose(qs, res.q, rtol=1e-11, atol=1e-11) and np.allclose(vs, res.v, rtol=1e-11, atol=1e-11)


@pytest.mark.parametrize("integrator, order", [("rk4", 4), ("semi-implicit-euler", 1)])
def test_convergence_order_on_the_pendulum(integrator, order):
    model = _pendulum()
    theta0, omega0, t = 1.2, 0.5, 1.0
    exact = _pendulum_exact(theta0, omega0, t)
    errors = []
    for steps in (50, 100, 200):
        qs, vs = sd.rollout(model, [theta0], [omega0], np.zeros((steps, 1)), t / steps, integrator)
        errors.append(np.hypot(qs[-1, 0] - exact[0], vs[-1, 0] - exact[1]))
    ratios = np.array(errors[:-1]) / np.array(errors[1:])
    assert np.all(np.abs(np.log2(ratios) - order) < 0.15), (errors, ratios)  # rk4: ratio ≈ 16 per halving


def test_rk4_conserves_the_energy_of_a_torque_free_pendulum():
    model = _pendulum()
    J = I_COM + MASS * L * L
    qs, vs = sd.rollout(model, [2.5], [0.0], np.zeros((2000, 1)), 1e-3, "rk4")
    energy = 0.5 * J * vs[:, 0] ** 2 - MASS * G * L * np.cos(qs[:, 0])
    assert np.abs(energy - energy[0]).max() < 1e-9 * abs(energy[0])
    assert np.ptp(qs[:, 0]) > 4.0  # it swung through a large arc


def test_a_batch_equals_its_single_rollouts():
    model = sd.models.random_tree(6, 2, floating_base=True)
    rng = np.random.default_rng(7)
    B, T = 37, 6  # three blocks of at least 16 rollouts on two threads
    q0 = np.stack([sd.random_configuration(model, rng) for _ in range(B)])
    v0, tau = rng.normal(size=(B, model.nv)), rng.normal(size=(B, T, model.nv))
    for integrator in ("semi-implicit-euler", "rk4"):
        qs, vs = sd.rollout(model, q0, v0, tau, 0.005, integrator)
        assert qs.shape == (B, T + 1, model.nq) and vs.shape == (B, T + 1, model.nv)
        for b in range(B):
            q1, v1 = sd.rollout(model, q0[b], v0[b], tau[b], 0.005, integrator)
            assert np.array_equal(qs[b], q1) and np.array_equal(vs[b], v1)


def test_a_diverging_trajectory_raises_or_continues_as_nan_on_request():
    model = _pendulum()
    with pytest.raises(OverflowError, match=r"q0, v0, tau, dt: the trajectory left the finite numbers \(its row 1"):
        sd.rollout(model, [0.1], [1e300], np.zeros((5, 1)), 1e10)
    qs, vs = sd.rollout(model, [0.1], [1e300], np.zeros((5, 1)), 1e10, on_divergence="nan")
    assert qs[0, 0] == 0.1 and vs[0, 0] == 1e300
    assert np.isnan(qs[1:]).all() and np.isnan(vs[1:]).all()


@pytest.mark.parametrize("integrator", ["rk4", "semi-implicit-euler"])
def test_an_overflow_in_one_rollout_of_a_batch_is_named(integrator):
    """A velocity of 1e300 (finite) squares to inf in the dynamics: the rollout that
    starts there raises, naming its batch entry; with on_divergence='nan' the others are
    their single rollouts."""
    model = sd.models.random_tree(4, 1, floating_base=True)
    rng = np.random.default_rng(5)
    B = 20
    q0 = np.stack([sd.random_configuration(model, rng) for _ in range(B)])
    v0, tau = rng.normal(size=(B, model.nv)), np.zeros((B, 3, model.nv))
    v0[13, 0] = 1e300
    with pytest.raises(OverflowError, match="trajectory of batch entry 13 left the finite numbers"):
        sd.rollout(model, q0, v0, tau, 0.01, integrator)
    qs, vs = sd.rollout(model, q0, v0, tau, 0.01, integrator, on_divergence="nan")
    assert np.isnan(qs[13, 1:]).all() and np.isnan(vs[13, 1:]).all()
    for b in (0, 12, 14):
        q1, v1 = sd.rollout(model, q0[b], v0[b], tau[b], 0.01, integrator)
        assert np.array_equal(qs[b], q1) and np.array_equal(vs[b], v1)


def test_closed_chains_and_bad_arguments_are_refused():
    with pytest.raises(sd.ClosedChainError, match="soadyn.rollout expected a tree.*soadyn.simulate"):
        m = sd.models.four_bar_linkage()
        sd.rollout(m, sd.neutral(m), None, np.zeros((3, m.nv)), 0.01)
    model = sd.models.serial_chain(3)
    q, tau = np.zeros(3), np.zeros((4, 3))
    with pytest.raises(ValueError, match=r"tau: expected an array of shape \(T, 3\) or \(B, T, 3\).*got shape \(4,\)"):
        sd.rollout(model, q, None, np.zeros(4), 0.01)
    with pytest.raises(ValueError, match=r"q0: expected shape \(2, 3\) for tau of shape \(2, 4, 3\), got \(3,\)"):
        sd.rollout(model, q, None, np.zeros((2, 4, 3)), 0.01)
    with pytest.raises(ValueError, match="dt: expected a positive time step"):
        sd.rollout(model, q, None, tau, 0.0)
    with pytest.raises(ValueError, match="integrator: expected one of"):
        sd.rollout(model, q, None, tau, 0.01, "euler")
    with pytest.raises(TypeError, match=r"dt: expected a real number, got '0.01' \(a str\)"):
        sd.rollout(model, q, None, tau, "0.01")
    with pytest.raises(ValueError, match="on_divergence: expected one of"):
        sd.rollout(model, q, None, tau, 0.01, on_divergence="ignore")
    with pytest.raises(ValueError, match="tau: expected finite values"):
        sd.rollout(model, q, None, np.full((4, 3), np.nan), 0.01)
    with pytest.raises(ValueError, match="q0: expected finite values"):
        sd.rollout(model, np.full(3, np.inf), None, tau, 0.01)
