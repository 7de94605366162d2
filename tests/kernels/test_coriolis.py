"""The Coriolis matrix on random trees (every joint type) against identities it must satisfy
and that other code computes: C q̇ is the RNEA's velocity-product force, Ṁ − 2C is
skew-symmetric (Ṁ by central differences of the CRBA along q̇), and where q̇ are coordinate
rates (1-dof joints) C is the Christoffel one: C = ½ ∂τ/∂q̇ (the analytical RNEA derivatives)
and C(q, u) w = C(q, w) u. Pinocchio's values on the bench robots at the end."""
import numpy as np
import pytest

import soadyn as sd
from conftest import PINOCCHIO_TOL, assert_close, pinocchio, rel, robot_pin_states, tree_motion

CASES = [(10, seed, floating) for seed in range(5) for floating in (False, True)]


@pytest.mark.parametrize("case", CASES)
def test_coriolis_times_velocity_is_the_velocity_product_force(case):
    model, q, v, _, _ = tree_motion(*case)
    assert_close(sd.coriolis_matrix(model, q, v) @ v, sd.rnea(model, q, v, None, gravity=False), what="C q̇")


@pytest.mark.parametrize("case", CASES)
def test_mass_matrix_rate_minus_twice_coriolis_is_skew(case):
    model, q, v, _, _ = tree_motion(*case)
    h = 1e-3

    def M(t):
        return sd.mass_matrix(model, sd.integrate(model, q, v, t))
    Mdot = (-M(2 * h) + 8 * M(h) - 8 * M(-h) + M(-2 * h)) / (12 * h)  # five-point central difference, O(h⁴)
    N = Mdot - 2 * sd.coriolis_matrix(model, q, v)
    assert_close(N + N.T, np.zeros_like(N), 1e-9 * max(1.0, np.abs(Mdot).max()), "Ṁ − 2C + (Ṁ − 2C)ᵀ")


@pytest.mark.parametrize("seed", range(4))
def test_christoffel_consistent_for_coordinate_rates(seed):
    """A fixed-base tree of revolute, prismatic and helical joints: q̇ are the rates of q, and
    the Christoffel symbols Γ_ijk (symmetric in j, k) give C_ij = Σ_k Γ_ijk q̇_k, so
    ∂(C q̇)/∂q̇ = 2C and C(u) w = C(w) u."""
    model = sd.Model("chain")
    rng = np.random.default_rng(seed)
    parent = None
    for k in range(7):
        kind = ("revolute", "prismatic", "helical")[rng.integers(3)]
        axis = rng.normal(size=3)
        joint = {"revolute": sd.joints.Revolute(axis), "prismatic": sd.joints.Prismatic(axis),
                 "helical": sd.joints.Helical(axis, pitch=0.1)}[kind]
        mass, com, inertia = sd.models.random_rigid_inertia(rng)
        parent = model.add_body(f"b{k}", joint, parent if rng.random() < 0.7 or parent is None else rng.integers(k),
                                (np.eye(3), rng.normal(size=3) * 0.3), mass=mass, com=com, inertia=inertia)
    q, u, w = sd.random_configuration(model, rng), rng.normal(size=model.nv), rng.normal(size=model.nv)
    _, dtau_dv, _ = sd.rnea_derivatives(model, q, u, np.zeros(model.nv))
    assert_close(sd.coriolis_matrix(model, q, u), 0.5 * dtau_dv, what="C = ½ ∂τ/∂q̇")
    assert_close(sd.coriolis_matrix(model, q, u) @ w, sd.coriolis_matrix(model, q, w) @ u, what="C(u) w = C(w) u")


def test_zero_velocity_batches_and_guard_rail():
    model, q, v, _, _ = tree_motion(8, 1, True)
    assert np.array_equal(sd.coriolis_matrix(model, q, None), np.zeros((model.nv, model.nv)))
    rng = np.random.default_rng(2)
    Q = np.stack([sd.random_configuration(model, rng) for _ in range(40)])
    V = rng.normal(size=(40, model.nv))
    C = sd.coriolis_matrix(model, Q, V)
    for b in range(40):
        assert np.array_equal(C[b], sd.coriolis_matrix(model, Q[b], V[b]))
    closed = sd.models.four_bar_linkage()
    with pytest.raises(sd.ClosedChainError, match="coriolis_matrix"):
        sd.coriolis_matrix(closed, sd.neutral(closed), np.zeros(closed.nv))


def test_coriolis_matrix(pair):
    pin = pinocchio()
    m, pm, pd = pair.sd, pair.pm, pair.pd
    T = pair.v_permutation()  # v_pin = T v
    for q, v, _, qp, vp, _ in robot_pin_states(pair, seed=2):
        Cp = pin.computeCoriolisMatrix(pm, pd, qp, vp)
        assert rel(sd.coriolis_matrix(m, q, v), T.T @ Cp @ T) < PINOCCHIO_TOL
