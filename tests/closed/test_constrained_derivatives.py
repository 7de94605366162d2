"""Derivatives of the cut-joint closed-chain forward dynamics through the KKT system
(``sd.constrained_forward_dynamics_derivatives``; docs/kkt_derivatives.md): central finite
differences of ``constrained_forward_dynamics`` (q moved by ``integrate``, off the
constraint manifold too: the KKT θ̈ is a function of any (q, v)), physical laws of
∂θ̈/∂T, and Pinocchio's ``computeConstraintDynamicsDerivatives``."""
import numpy as np
import pytest

import soadyn as sd
from soadyn.closed import constraint_set
from soadyn.closed.cut_joint import RowSpace
from soadyn.closed.embedding.derivatives import constraint_rows_rate

from conftest import peers, pinocchio, random_state, urdfplus

#: central differences: step on q (truncation ~ε² dominates near singular configurations of
#: the planar leg, rounding ~1e-16/ε) and on v, τ (θ̈ is quadratic in v, linear in τ)
EPS_Q, EPS_V = 1e-6, 1e-5
#: agreement with the differences, relative to the block's largest entry
TOL = 1e-6

MODELS = {
    "four_bar_linkage": lambda: sd.models.four_bar_linkage(),
    "six_bar": lambda: urdfplus("six_bar"),
    "planar_leg_linkage": lambda: sd.models.planar_leg_linkage(),
    "rssr_linkage": lambda: sd.models.rssr_linkage(),
    "four_bar_chain_3": lambda: sd.models.four_bar_chain(3),
    "geared_chain": lambda: sd.models.geared_chain(),
    # floating bases: loops (MIT humanoid), rotors (mini cheetah), symbolic user constraints (Tello)
    "mit_humanoid": lambda: sd.models.get("mit_humanoid"),
    "mini_cheetah": lambda: sd.models.get("mini_cheetah"),
    "tello": lambda: sd.models.get("tello"),
}


def _state(model, seed):
    """A consistent (q, v) (the loops closed by the cluster tree) and a random τ."""
    rng = np.random.default_rng(seed)
    y, yd = random_state(model, rng, 0.4)
    q, v = sd.spanning_state(model, y, 2.0 * yd)
    return q, v, 2.0 * rng.normal(size=model.nv)


def _qdd(model, q, v, tau):
    return sd.constrained_forward_dynamics(model, q, v, tau, method="direct", check=False).qdd


def _differences(model, q, v, tau):
    n = model.nv
    out = [np.empty((n, n)) for _ in range(3)]
    for k in range(n):
        e = np.zeros(n)
        e[k] = 1.0
        out[0][:, k] = (_qdd(model, sd.integrate(model, q, EPS_Q * e), v, tau)
                        - _qdd(model, sd.integrate(model, q, -EPS_Q * e), v, tau)) / (2 * EPS_Q)
        out[1][:, k] = (_qdd(model, q, v + EPS_V * e, tau) - _qdd(model, q, v - EPS_V * e, tau)) / (2 * EPS_V)
        out[2][:, k] = (_qdd(model, q, v, tau + EPS_V * e) - _qdd(model, q, v, tau - EPS_V * e)) / (2 * EPS_V)
    return out


@pytest.mark.parametrize("name", sorted(MODELS))
@pytest.mark.parametrize("seed", [1, 2])
def test_derivatives_equal_central_differences(name, seed):
    model = MODELS[name]()
    q, v, tau = _state(model, seed)
    actual = sd.constrained_forward_dynamics_derivatives(model, q, v, tau)
    for a, e, what in zip(actual, _differences(model, q, v, tau), ("dqdd_dq", "dqdd_dv", "dqdd_dtau")):
        assert a.shape == (model.nv, model.nv)
        err = np.abs(a - e).max() / np.abs(e).max()
        assert err <= TOL, f"{name} {what}: relative error {err:.3g}"


@pytest.mark.parametrize("name", ["six_bar", "rssr_linkage", "geared_chain"])
def test_force_derivative_is_the_null_space_compliance(name):
    """∂θ̈/∂T = X_c (X_c* M X_c)⁻¹ X_c*: symmetric, G_c ∂θ̈/∂T = 0 (a force cannot violate
    the constraints) and M ∂θ̈/∂T = identity on the null space of G_c."""
    model = MODELS[name]()
    q, v, tau = _state(model, 3)
    dtau = sd.constrained_forward_dynamics_derivatives(model, q, v, tau)[2]
    G = sd.constraint_jacobian(model, q)
    X = RowSpace(G).null
    M = sd.mass_matrix(model.spanning_tree(), q)
    scale = np.abs(dtau).max()
    assert np.abs(dtau - dtau.T).max() <= 1e-12 * scale
    assert np.abs(G @ dtau).max() <= 1e-10 * scale * np.abs(G).max()
    assert np.allclose(X.T @ M @ dtau @ X, np.eye(X.shape[1]), atol=1e-10)


def test_off_manifold_state_with_check_false_and_the_check():
    model = sd.models.four_bar_linkage()
    q, v, tau = _state(model, 4)
    q_off = q + np.array([0.0, 0.01, 0.0])
    with pytest.raises(sd.ConstraintError):
        sd.constrained_forward_dynamics_derivatives(model, q_off, v, tau)
    actual = sd.constrained_forward_dynamics_derivatives(model, q_off, v, tau, check=False)
    expected = _differences(model, q_off, v, tau)
    for a, e in zip(actual, expected):
        assert np.abs(a - e).max() <= TOL * np.abs(e).max()


def test_invalid_inputs_are_named():
    model = sd.models.four_bar_linkage()
    q, v, tau = _state(model, 5)
    with pytest.raises(ValueError, match="tau"):
        sd.constrained_forward_dynamics_derivatives(model, q, v, tau[:2])
    with pytest.raises(ValueError, match="batches"):
        sd.constrained_forward_dynamics_derivatives(model, np.stack([q, q]), v, tau)
    arm = sd.models.serial_chain(3, axes="zyz")
    arm.add_constraint(sd.HolonomicConstraint("c", lambda x, t: np.array([x[0] + x[1] ** 2 - 0.1])))
    with pytest.raises(NotImplementedError, match="'c'.*numerically differentiated"):
        sd.constrained_forward_dynamics_derivatives(arm, np.zeros(3), np.zeros(3), np.zeros(3), check=False)
    timed = sd.models.serial_chain(3, axes="zyz")
    timed.add_constraint(sd.HolonomicConstraint("moving", lambda x, t: np.array([x[0] - 0.1 * t]),
                                                lambda x, t: np.array([[1.0, 0.0, 0.0]]), time_dependent=True,
                                                bias=lambda x, xd, t: np.zeros(1)))
    with pytest.raises(NotImplementedError, match="'moving'.*time dependence"):
        sd.constrained_forward_dynamics_derivatives(timed, np.zeros(3), np.zeros(3), np.zeros(3), check=False)
    disk = sd.models.rolling_disk()  # analytic Jacobians, numerical biases
    with pytest.raises(NotImplementedError, match="'contact'"):
        sd.constrained_forward_dynamics_derivatives(disk, sd.neutral(disk), np.zeros(6), np.zeros(6), check=False)


# ----------------------------------------------------------------------------- Pinocchio
def _pinocchio_derivatives(model, q, v, tau, reference=None):
    """Pinocchio's θ̈ and (ddq_dq, ddq_dv, ddq_dtau), the loops as CONTACT_3D anchors."""
    pin = pinocchio()
    pair = peers.pinocchio_model(model)
    cmodels, cdatas = peers.pinocchio_loop_constraints(pair)
    data = pair.pm.createData()
    pin.initConstraintDynamics(pair.pm, data, cmodels, cdatas)
    settings = pin.ProximalSettings(1e-14, 1e-10, 20)
    qdd = pin.constraintDynamics(pair.pm, data, pair.q_to_pin(q), pair.v_to_pin(v), pair.v_to_pin(tau),
                                 cmodels, cdatas, settings).copy()
    pin.computeConstraintDynamicsDerivatives(pair.pm, data, cmodels, cdatas, settings)
    return qdd, [np.array(x) for x in (data.ddq_dq, data.ddq_dv, data.ddq_dtau)]


def _anchored(case):
    """A serial chain whose tip is held by a loop joint to the world (Pinocchio: a CONTACT_3D
    on one joint); revolute joints only, so the tangent spaces of the two libraries are the
    same. ``"arm"``: a spatial 4-link arm, spherical loop (3 rows, full rank);
    ``"four_bar"``: 3 planar links pinned to the world by a revolute loop — a four-bar
    whose ground link is the world (5 rows of rank 2; Pinocchio's 3 rows have rank 2)."""
    axes, q0, kind = {"arm": ("zyzy", [0.3, 0.5, -0.4, 0.8], "spherical"),
                      "four_bar": ("y", [0.4, -1.2, -1.0], "revolute")}[case]
    model = sd.models.serial_chain(len(q0), axes=axes)
    q0 = np.array(q0)
    tip = np.array([0.05, 0.02, 0.3]) if kind == "spherical" else np.array([0.0, 0.0, 0.3])
    R, p = sd.body_placements(model, q0)
    model.add_loop("anchor", kind, model.bodies[-1].name, "world", axis=(0.0, 1.0, 0.0),
                   predecessor_placement=(np.eye(3), tip), successor_placement=(R[-1], R[-1] @ tip + p[-1]))
    rng = np.random.default_rng(8)
    q, v = sd.close_loops(model, q0, rng.normal(size=model.nv), independent=[])
    return model, q, v, rng.normal(size=model.nv)


@pytest.mark.parametrize("case", ["four_bar", "arm_anchored", "four_bar_anchored"])
def test_against_pinocchio(case):
    """The parts of the derivatives that do not depend on how the constraint rows are written
    (Pinocchio's rows are the anchor point's velocity, ours the loop joint's; off the
    constraint manifold the two KKT systems differ): ∂θ̈/∂T, ∂θ̈/∂θ̇ along the velocity
    constraints (X_c), and, where Pinocchio's ∂θ̈/∂θ agrees with its own finite differences
    (a world anchor; for anchors between two joints it does not, Pinocchio 4.1), the
    change of θ̈ along motions through consistent states, (δθ, δθ̇) = (t, w) with t ∈ null G_c
    and G_c w + ∂G_c[t] θ̇ = 0."""
    if case == "four_bar":
        model = sd.models.four_bar_linkage()
        q, v, tau = _state(model, 6)
    else:
        model, q, v, tau = _anchored(case.split("_anchored")[0])
    ours = sd.constrained_forward_dynamics_derivatives(model, q, v, tau)
    qdd, theirs = _pinocchio_derivatives(model, q, v, tau)
    assert np.abs(qdd - _qdd(model, q, v, tau)).max() <= 1e-9 * (1 + np.abs(qdd).max())
    G = sd.constraint_jacobian(model, q)
    X = RowSpace(G).null
    assert np.abs(ours[2] - theirs[2]).max() <= 1e-8 * np.abs(ours[2]).max()
    assert np.abs((ours[1] - theirs[1]) @ X).max() <= 1e-8 * np.abs(ours[1]).max()
    if case != "four_bar":
        for t in X.T:
            dG, _ = constraint_rows_rate(constraint_set(model), q, v, t)
            w = -np.linalg.pinv(G) @ (dG @ v)
            a, b = ours[0] @ t + ours[1] @ w, theirs[0] @ t + theirs[1] @ w
            assert np.abs(a - b).max() <= 1e-8 * np.abs(a).max()
