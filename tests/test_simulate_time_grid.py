"""soadyn.simulate's time grid: t_final reached exactly (the last step shortened), a cap on
the number of steps checked before any work, ``record_every`` for long runs, and clear
errors for meaningless settings. The truths: the closed-form pendulum (DOP853 on
J θ̈ = −m g l sin θ at rtol = 1e-13), a torque function that counts its calls (no work
done before an error), and the every-step record of the same run."""
import numpy as np
import pytest
from scipy.integrate import solve_ivp

import soadyn as sd
from soadyn import joints as jt
from soadyn.simulate import MAX_STEPS, simulate

L, MASS, I_COM, G = 0.7, 1.1, 0.01, 9.81
J = I_COM + MASS * L * L
THETA0 = 1.0


def _pendulum():
    m = sd.Model("pendulum")
    m.add_body("rod", jt.Revolute("y"), mass=MASS, com=(0.0, 0.0, -L), inertia=np.eye(3) * I_COM)
    return m


def _exact(t):
    """(θ, θ̇) of the pendulum released at rest from THETA0, at time t."""
    sol = solve_ivp(lambda _, y: [y[1], -MASS * G * L * np.sin(y[0]) / J], (0.0, t), [THETA0, 0.0],
                    method="DOP853", rtol=1e-13, atol=1e-13)
    return sol.y[:, -1]


class _CountingTorque:
    """A zero torque that counts how often the dynamics were evaluated."""

    def __init__(self):
        self.calls = 0

    def __call__(self, t, q, v):
        self.calls += 1
        return np.zeros(1)


@pytest.mark.parametrize("method", ["rk4", "DOP853"])
def test_t_final_is_reached_when_dt_does_not_divide_it(method):
    """t_final = 10.5 dt: ten steps of dt and a last one of dt/2, ending at t_final (before:
    RK4 stopped at 10 dt, the adaptive output spaced 1.05 dt)."""
    res = simulate(_pendulum(), [THETA0], [0.0], 0.0105, dt=1e-3, method=method)
    assert res.t[-1] == 0.0105
    assert np.allclose(res.t[:11], np.arange(11) * 1e-3, rtol=0, atol=1e-15)
    assert res.t.shape == (12,)
    theta, omega = _exact(0.0105)
    assert abs(res.q[-1, 0] - theta) < 1e-10 and abs(res.v[-1, 0] - omega) < 1e-9


def test_a_step_longer_than_t_final_is_one_step_of_t_final():
    """dt = 1 s for t_final = 10 ms (before: only t = [0] came back)."""
    res = simulate(_pendulum(), [THETA0], [0.0], 0.01, dt=1.0)
    assert np.array_equal(res.t, [0.0, 0.01])
    one = simulate(_pendulum(), [THETA0], [0.0], 0.01, dt=0.01)
    assert np.array_equal(res.q, one.q) and np.array_equal(res.v, one.v)
    theta, omega = _exact(0.01)
    assert abs(res.q[-1, 0] - theta) < 1e-10 and abs(res.v[-1, 0] - omega) < 1e-8


def test_the_rounding_of_t_final_over_dt_adds_no_step():
    """0.3 / 0.1 = 2.9999999999999996 in floating point: three steps, not four."""
    res = simulate(_pendulum(), [THETA0], [0.0], 0.3, dt=0.1)
    assert res.t.shape == (4,) and res.t[-1] == 0.3 and res.info["steps"] == 3


@pytest.mark.parametrize("method", ["rk4", "RK45"])
def test_a_request_beyond_the_step_cap_is_refused_before_any_work(method):
    torque = _CountingTorque()
    with pytest.raises(ValueError, match=r"t_final, dt: 1e\+12 s at dt = 0.001 s is 1e\+15 .*more than max_steps = "
                                         f"{MAX_STEPS}.*pass max_steps=N"):
        simulate(_pendulum(), [THETA0], [0.0], 1e12, tau=torque, method=method)
    with pytest.raises(ValueError, match="is 5 .*more than max_steps = 4"):
        simulate(_pendulum(), [THETA0], [0.0], 0.05, dt=0.01, tau=torque, method=method, max_steps=4)
    assert torque.calls == 0
    res = simulate(_pendulum(), [THETA0], [0.0], 0.05, dt=0.01, tau=torque, method=method, max_steps=5)
    assert res.t[-1] == 0.05 and torque.calls > 0


@pytest.mark.parametrize("method", ["rk4", "DOP853"])
def test_record_every_keeps_every_kth_state_and_the_last(method):
    model = _pendulum()
    full = simulate(model, [THETA0], [0.0], 0.105, dt=1e-3, method=method)
    sparse = simulate(model, [THETA0], [0.0], 0.105, dt=1e-3, method=method, record_every=10)
    assert sparse.t.shape == (12,) and sparse.t[-1] == 0.105
    keep = list(range(0, 106, 10)) + [105]
    assert np.array_equal(sparse.t, full.t[keep])
    tol = 0.0 if method == "rk4" else 1e-9  # the adaptive solver's dense output at other times
    assert np.allclose(sparse.q, full.q[keep], rtol=0, atol=tol) and np.allclose(sparse.v, full.v[keep], rtol=0, atol=tol)


@pytest.mark.parametrize("value, error, message", [
    (0, ValueError, "record_every: expected a positive integer, got 0"),
    (-1, ValueError, "record_every: expected a positive integer, got -1"),
    (2.5, TypeError, "record_every: expected a positive integer, got float 2.5"),
    ("2", TypeError, "record_every: expected a positive integer, got str '2'"),
    (True, TypeError, "record_every: expected a positive integer, got bool True"),
])
def test_record_every_must_be_a_positive_integer(value, error, message):
    with pytest.raises(error, match=message):
        simulate(_pendulum(), [THETA0], [0.0], 0.01, record_every=value)


@pytest.mark.parametrize("kwargs, error, message", [
    ({"dt": "0.1"}, TypeError, r"dt: expected a real number, got '0.1' \(a str\)"),
    ({"dt": -1e-3}, ValueError, "dt: expected a positive step"),
    ({"dt": np.nan}, ValueError, "dt: expected a finite number"),
    ({"t_final": "1"}, TypeError, r"t_final: expected a real number, got '1' \(a str\)"),
    ({"t_final": 0.0}, ValueError, "t_final: expected a positive duration"),
    ({"max_steps": 0}, ValueError, "max_steps: expected a positive integer, got 0"),
    ({"max_steps": 1e6}, TypeError, "max_steps: expected a positive integer, got float"),
])
def test_meaningless_times_are_refused(kwargs, error, message):
    args = {"t_final": 0.01, **kwargs}
    with pytest.raises(error, match=message):
        simulate(_pendulum(), [THETA0], [0.0], **args)


def test_a_diverging_simulation_raises_naming_the_time():
    """v0 = 1e300 rad/s is finite, but its square in the dynamics is not: an OverflowError,
    never a trajectory of inf or NaN."""
    free = sd.Model("free body", gravity=(0.0, 0.0, 0.0))
    free.add_body("body", jt.Free(), mass=1.0, com=(0.1, 0.0, 0.0), inertia=np.eye(3) * 0.1)
    with pytest.raises(OverflowError, match=r"simulate, the step from t = 0 s: the acceleration at t = 0 s is not finite"):
        simulate(free, sd.neutral(free), np.full(6, 1e300), 0.01)


def test_simulate_is_exported_at_the_package_level():
    """``sd.simulate(...)``, as the package docstring and the viewer's say (before:
    ``soadyn.simulate`` was the module, the function one attribute further)."""
    import sys
    module = sys.modules["soadyn.simulate"]
    assert sd.simulate is module.simulate and sd.SimulationResult is module.SimulationResult
    assert {"simulate", "SimulationResult"} <= set(sd.__all__)
    res = sd.simulate(_pendulum(), [THETA0], [0.0], 0.002)
    assert isinstance(res, sd.SimulationResult) and res.t[-1] == 0.002
