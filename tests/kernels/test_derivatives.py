"""Analytical derivatives of the dynamics (sd.rnea_derivatives, sd.aba_derivatives).

Held against Pinocchio's computeRNEADerivatives / computeABADerivatives on the six bench
robots, fixed and floating base (Pinocchio orders a free joint's velocity [v; ω] and so
its tangent space: the results are permuted with PinPair.v_permutation), and against
central finite differences through sd.integrate (the tangent-space convention) on random
trees with every joint type.
"""
import numpy as np
import pytest

import soadyn as sd
from conftest import random_states, rel, tree_state
from soadyn.interop import pinocchio as sdpin
from soadyn.models.trees import _ALL_KINDS

PIN_TOL = 1e-9
FD_TOL = 1e-6  # central differences with step 1e-6: truncation ~1e-12 × third derivatives, rounding ~1e-10


# =========================================================================== Pinocchio (conftest's ``pair``: every
# bench robot, fixed and floating base)


def _pinocchio_forces(pair, f):
    import pinocchio as pin
    pm = pair.pm
    fp = [pin.Force.Zero() for _ in range(pm.njoints)]
    for k, j in enumerate(pair.sd.joints):  # body frame = joint frame in both libraries
        fp[pm.getJointId(j.name)] = pin.Force(sdpin.force_to_pinocchio(f[k]))
    return pin.StdVec_Force(fp)


def _pin_states(pair):
    """Two states per robot: without and with external forces."""
    m = pair.sd
    rng = np.random.default_rng(7)
    for with_forces in (False, True):
        q = sd.random_configuration(m, rng)
        v, x = rng.normal(size=(2, m.nv))
        yield q, v, x, (rng.normal(size=(m.nbodies, 6)) if with_forces else None)


def test_rnea_derivatives_match_pinocchio(pair):
    import pinocchio as pin
    m, pm, pd = pair.sd, pair.pm, pair.pd
    T = pair.v_permutation()  # v_pin = T v_sd, and the same for tangent increments and τ
    for q, v, a, f in _pin_states(pair):
        args = (pm, pd, pair.q_to_pin(q), pair.v_to_pin(v), pair.v_to_pin(a))
        ref = pin.computeRNEADerivatives(*args) if f is None else \
            pin.computeRNEADerivatives(*args, _pinocchio_forces(pair, f))
        dq, dv, M = sd.rnea_derivatives(m, q, v, a, f)
        Mp = np.triu(ref[2]) + np.triu(ref[2], 1).T  # Pinocchio fills the upper triangle of M
        assert rel(dq, T.T @ ref[0] @ T) < PIN_TOL
        assert rel(dv, T.T @ ref[1] @ T) < PIN_TOL
        assert rel(M, T.T @ Mp @ T) < PIN_TOL


def test_aba_derivatives_match_pinocchio(pair):
    import pinocchio as pin
    m, pm, pd = pair.sd, pair.pm, pair.pd
    T = pair.v_permutation()
    for q, v, tau, f in _pin_states(pair):
        args = (pm, pd, pair.q_to_pin(q), pair.v_to_pin(v), pair.v_to_pin(tau))
        ref = pin.computeABADerivatives(*args) if f is None else \
            pin.computeABADerivatives(*args, _pinocchio_forces(pair, f))
        dq, dv, Minv = sd.aba_derivatives(m, q, v, tau, f)
        assert rel(dq, T.T @ ref[0] @ T) < PIN_TOL
        assert rel(dv, T.T @ ref[1] @ T) < PIN_TOL
        assert rel(Minv, T.T @ ref[2] @ T) < PIN_TOL


# =========================================================================== finite differences
def central_differences(model, fun, q, v, x, f, gravity=True, eps=1e-6):
    """(∂fun/∂q through sd.integrate, ∂fun/∂v, ∂fun/∂x) by central differences."""
    nv = model.nv
    D = np.empty((3, nv, nv))
    for j in range(nv):
        e = np.zeros(nv)
        e[j] = eps
        D[0, :, j] = fun(model, sd.integrate(model, q, e), v, x, f, gravity=gravity) \
            - fun(model, sd.integrate(model, q, -e), v, x, f, gravity=gravity)
        D[1, :, j] = fun(model, q, v + e, x, f, gravity=gravity) - fun(model, q, v - e, x, f, gravity=gravity)
        D[2, :, j] = fun(model, q, v, x + e, f, gravity=gravity) - fun(model, q, v, x - e, f, gravity=gravity)
    return D / (2 * eps)


#: random trees: (bodies, seed, floating base); every joint type of soadyn.models.random_tree
#: appears in each (8 kinds: 8 bodies, or 17 when the root's joint is made free)
TREES = [(8, 1, False), (12, 3, False), (17, 2, True), (17, 4, True)]


@pytest.mark.parametrize("case", TREES, ids=[f"n{n}-s{s}-{'floating' if f else 'fixed'}" for n, s, f in TREES])
def test_random_trees_every_joint_type_against_finite_differences(case):
    model, q, v = tree_state(case, with_velocity=True)
    kinds = {b.joint.kind for b in model.bodies}
    assert set(_ALL_KINDS) <= kinds, kinds
    rng = np.random.default_rng(case[1])
    x = rng.normal(size=model.nv)
    f = rng.normal(size=(model.nbodies, 6))
    # inverse dynamics: the third derivative, ∂τ/∂a, is M
    dq, dv, M = sd.rnea_derivatives(model, q, v, x, f)
    D = central_differences(model, sd.rnea, q, v, x, f)
    assert rel(dq, D[0]) < FD_TOL
    assert rel(dv, D[1]) < FD_TOL
    assert rel(M, D[2]) < FD_TOL
    # forward dynamics: ∂q̈/∂τ is M⁻¹
    dq, dv, Minv = sd.aba_derivatives(model, q, v, x, f)
    D = central_differences(model, sd.aba, q, v, x, f)
    assert rel(dq, D[0]) < FD_TOL
    assert rel(dv, D[1]) < FD_TOL
    assert rel(Minv, D[2]) < FD_TOL


def test_fixed_joints_without_gravity_against_finite_differences():
    """Bodies welded to their parents (no dofs: the LTDL's dof parents skip them) and
    ``gravity=False``."""
    model = sd.models.random_tree(10, 5, kinds=_ALL_KINDS + ("fixed", "fixed"), floating_base=True)
    assert any(b.joint.nv == 0 for b in model.bodies)
    rng = np.random.default_rng(5)
    q = sd.random_configuration(model, rng)
    v, x = rng.normal(size=(2, model.nv))
    for fun, deriv in ((sd.rnea, sd.rnea_derivatives), (sd.aba, sd.aba_derivatives)):
        D = central_differences(model, fun, q, v, x, None, gravity=False)
        for mine, ref in zip(deriv(model, q, v, x, gravity=False), D):
            assert rel(mine, ref) < FD_TOL


# =========================================================================== consistency
def test_second_outputs_are_the_mass_matrix_and_its_inverse():
    model = sd.models.random_tree(12, 8, floating_base=True)
    rng = np.random.default_rng(8)
    q = sd.random_configuration(model, rng)
    v, x = rng.normal(size=(2, model.nv))
    M = sd.mass_matrix(model, q)
    assert rel(sd.rnea_derivatives(model, q, v, x)[2], M) < 1e-12
    Minv = sd.aba_derivatives(model, q, v, x)[2]
    assert np.array_equal(Minv, Minv.T)
    assert rel(Minv @ M, np.eye(model.nv)) < 1e-10
    # dq̈/dq = −M⁻¹ ∂τ/∂q at a = q̈
    qdd = sd.aba(model, q, v, x)
    dtau = sd.rnea_derivatives(model, q, v, qdd)
    dqdd = sd.aba_derivatives(model, q, v, x)
    assert rel(dqdd[0], -Minv @ dtau[0]) < 1e-10
    assert rel(dqdd[1], -Minv @ dtau[1]) < 1e-10


def test_absent_rates_are_zero_and_out_is_filled():
    model = sd.models.random_tree(8, 9)
    q = sd.random_configuration(model, 9)
    zero = np.zeros(model.nv)
    ref = sd.rnea_derivatives(model, q, zero, zero)
    for got, want in zip(sd.rnea_derivatives(model, q, None, None), ref):
        assert np.array_equal(got, want)
    out = tuple(np.empty((model.nv, model.nv)) for _ in range(3))
    got = sd.aba_derivatives(model, q, None, zero, out=out, workspace=sd.Workspace(model))
    assert all(g is o for g, o in zip(got, out))
    for g, w in zip(got, sd.aba_derivatives(model, q, zero, zero)):
        assert np.array_equal(g, w)


def test_batches_equal_single_calls():
    model = sd.models.random_tree(9, 10, floating_base=True)
    rng = np.random.default_rng(10)
    B = 40  # more than one block of soadyn.core.batch.run_blocks
    Q, V, X = random_states(model, rng, B)
    F = rng.normal(size=(B, model.nbodies, 6))
    for fn in (sd.rnea_derivatives, sd.aba_derivatives):
        batched = fn(model, Q, V, X, F)
        assert all(b.shape == (B, model.nv, model.nv) for b in batched)
        for b in range(B):
            for got, want in zip(batched, fn(model, Q[b], V[b], X[b], F[b])):
                np.testing.assert_array_equal(got[b], want)


# =========================================================================== errors
def test_closed_chains_are_refused():
    model = sd.models.four_bar_linkage()
    q = np.zeros(model.nq)
    with pytest.raises(sd.ClosedChainError, match="rnea_derivatives"):
        sd.rnea_derivatives(model, q, None, None)
    with pytest.raises(sd.ClosedChainError, match="aba_derivatives"):
        sd.aba_derivatives(model, q, None, np.zeros(model.nv))
    tree = model.spanning_tree()
    assert sd.rnea_derivatives(tree, q, None, None)[0].shape == (model.nv, model.nv)


def test_bad_arguments_are_named():
    model = sd.models.random_tree(5, 11)
    q = sd.random_configuration(model, 11)
    v = np.zeros(model.nv)
    with pytest.raises(ValueError, match="v"):
        sd.rnea_derivatives(model, q, v[:-1], v)
    with pytest.raises(ValueError, match="tau"):
        sd.aba_derivatives(model, q, v, np.full(model.nv, np.nan))
    with pytest.raises(ValueError, match="f_ext"):
        sd.rnea_derivatives(model, q, v, v, np.zeros((model.nbodies + 1, 6)))
    for wrong in ((np.empty((model.nv, model.nv)),) * 2, np.empty((model.nv, model.nv))):
        with pytest.raises(TypeError, match="out: expected 3 output arrays, got"):
            sd.rnea_derivatives(model, q, v, v, out=wrong)
    with pytest.raises(ValueError, match=r"out\[1\]"):
        sd.aba_derivatives(model, q, v, v, out=(np.empty((model.nv, model.nv)), np.empty(model.nv),
                                               np.empty((model.nv, model.nv))))
