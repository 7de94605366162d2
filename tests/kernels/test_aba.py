"""Forward dynamics by the partitioned ATBI recursion ([Jain23p, eq. 8]; soadyn.kernels.aba):
articulated_inertias(..., partitioned=True) against the dense operators of the explicitly
partitioned model, P⁺ of the unpartitioned recursion, aba (which runs the partitioned
recursion) against the operators' M⁻¹(τ − C) and against Pinocchio's aba on the bench
robots, and the kinetic energy conserved by a torque-free simulation without gravity.
(aba as the inverse of the RNEA: test_rnea.py.)"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import soadyn as sd
from soadyn import operators
from soadyn.models import random_tree
from soadyn.simulate import simulate

from conftest import (PINOCCHIO_TOL, assert_close, body_block, build_tree, pinocchio, rel, robot_states, tree_params,
                      tree_state)

SETTINGS = settings(max_examples=12, deadline=None)
all_kinds = st.tuples(st.integers(8, 12), st.integers(0, 2**31 - 1), st.booleans())


@SETTINGS
@given(case=all_kinds)
def test_partitioned_inertias_equal_operators_of_the_partitioned_model(case):
    """P, P⁺ = τ̄P, D and G of every body and sub-body equal the Riccati solution of
    partition_hinges(model, q) at the corresponding state (sub-bodies in their own frames;
    the spherical and free charts centred at q)."""
    model, q = tree_state(case)
    part = sd.partition_hinges(model, q)
    Sp = operators.sko(part, sd.partitioned_state(model, part, q).q)
    r = sd.articulated_inertias(model, q, partitioned=True)
    assert r.bodies == tuple(part.body_names)
    assert r.P.shape == (part.nbodies, 6, 6) and r.D.shape == (model.nv, model.nv) and r.G.shape == (6, model.nv)
    for k in range(part.nbodies):
        Pk = body_block(Sp.P, k)
        assert_close(r.P[k], Pk, what=f"P({part.body_names[k]})")
        assert_close(r.P_plus[k], body_block(Sp.tau_bar, k) @ Pk, what=f"P⁺({part.body_names[k]})")
    assert_close(r.D, Sp.D, what="D")
    assert np.count_nonzero(r.D - np.diag(np.diag(r.D))) == 0
    assert_close(r.G * np.diag(r.D), Sp.G.reshape(part.nbodies, 6, -1).sum(axis=0) * np.diag(Sp.D), what="G D")


@SETTINGS
@given(case=all_kinds)
def test_unpartitioned_P_plus(case):
    """articulated_inertias(model, q).P_plus = τ̄(k)P(k) of the operators; unpacking is P, D, G."""
    model, q = tree_state(case)
    S = operators.sko(model, q)
    P, D, G = r = sd.articulated_inertias(model, q)
    assert r.bodies == tuple(model.body_names)
    for k in range(model.nbodies):
        assert_close(r.P_plus[k], body_block(S.tau_bar, k) @ body_block(S.P, k), what=f"P⁺({k})")


@SETTINGS
@given(case=all_kinds)
def test_aba_equals_operator_solve(case):
    """q̈ = M⁻¹(τ − C) with M = HφMφ*H* and C = Hφ(Mφ*a + b) ([Jain12, eq. 17]), gravity off."""
    model, q, v = tree_state(case, with_velocity=True)
    S = operators.sko(model, q, v)
    tau = np.random.default_rng(case[1]).normal(size=model.nv)
    expected = np.linalg.solve(S.mass_matrix, tau - S.coriolis)
    assert_close(sd.aba(model, q, v, tau, gravity=False), expected, 1e-15 * np.linalg.cond(S.mass_matrix) + 1e-12)


def test_partitioned_inertias_batch_equals_loop():
    model = random_tree(9, 4, floating_base=True)
    rng = np.random.default_rng(1)
    Q = np.stack([sd.random_configuration(model, rng) for _ in range(5)])
    r = sd.articulated_inertias(model, Q, partitioned=True)
    for b in range(len(Q)):
        one = sd.articulated_inertias(model, Q[b], partitioned=True)
        for x, y in ((r.P, one.P), (r.P_plus, one.P_plus), (r.D, one.D), (r.G, one.G)):
            assert np.array_equal(x[b], y)
    assert np.array_equal(sd.articulated_inertias(model, Q).P_plus[2], sd.articulated_inertias(model, Q[2]).P_plus)


def test_partitioned_argument_is_checked():
    model = random_tree(3, 0)
    with pytest.raises(TypeError, match="partitioned: expected True or False"):
        sd.articulated_inertias(model, sd.neutral(model), partitioned="yes")


def test_aba(pair):
    pin = pinocchio()
    m, pm, pd = pair.sd, pair.pm, pair.pd
    for q, v, tau, rng in robot_states(pair, seed=1):
        qdd = sd.aba(m, q, v, tau)
        ref = pair.v_from_pin(pin.aba(pm, pd, pair.q_to_pin(q), pair.v_to_pin(v), pair.v_to_pin(tau)))
        assert rel(qdd, ref) < PINOCCHIO_TOL


@settings(max_examples=8, deadline=None)
@given(tree_params)
def test_kinetic_energy_conserved_without_gravity_and_torque(params):
    model, q, v, a, rng = build_tree(params, gravity=(0.0, 0.0, 0.0))
    # keep away from gimbal/universal-joint singularities, where M itself turns singular
    assume(np.linalg.cond(sd.mass_matrix(model, q)) < 1e4)
    v = v / max(1.0, np.linalg.norm(v))
    res = simulate(model, q, v, 0.05, dt=5e-4)
    T0 = sd.kinetic_energy(model, q, v)
    T = np.array([sd.kinetic_energy(model, qq, vv) for qq, vv in zip(res.q, res.v)])
    assert np.abs(T - T0).max() < 1e-8 * max(T0, 1.0)
