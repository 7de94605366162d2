"""Fuzz: random closed chains — loops of every kind (opened tree joints, fuzz_chains), geared
rotors (transmissions), redundant loops — solved by every method and held against two
truths: the tree's dynamics mapped to the closed coordinates, and the dense constrained
dynamics of the specification. The invariant of every call: a finite result that is
right, or an error."""
import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st

import soadyn as sd
from fuzz_chains import KINDS, LOOP_OF, build_chain, closed_state, dense_constrained_dynamics, tree_state

#: per property; the whole fuzz suite stays within seconds (see tests/fuzz/README.md)
#: the main property of the file: more examples
MAIN_SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])

METHODS = ("direct", "augmented", "projection", "embedding", None)


@st.composite
def chains(draw, rotors=True):
    n = draw(st.integers(1, 6))
    kinds = draw(st.lists(st.sampled_from(KINDS), min_size=n, max_size=n))
    open_mask = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    # at least one constraint: a joint with a loop kind opened, or a rotor
    n_rotors = draw(st.integers(0, 2)) if rotors else 0
    chain = build_chain(draw(st.integers(0, 2**31 - 1)), n, kinds, open_mask, n_rotors,
                        redundant=draw(st.booleans()))
    # (a tree of welds only has nv = 0: forward_kinematics then gives no velocities)
    assume(chain.closed.has_constraints and chain.tree.nv)
    return chain


def _close(actual, expected, tol):
    scale = 1.0 + np.abs(expected).max(initial=0.0)
    return np.all(np.isfinite(actual)) and np.abs(actual - expected).max(initial=0.0) <= tol * scale


@MAIN_SETTINGS
@given(chains(), st.integers(0, 2**31 - 1))
def test_every_closed_chain_method_gives_the_right_answer(chain, seed):
    rng = np.random.default_rng(seed)
    q, v, tau = tree_state(chain, rng)
    qc, vc, tauc, _ = closed_state(chain, q, v, tau)
    truth, cond = dense_constrained_dynamics(chain.closed, qc, vc, tauc)
    assume(cond < 1e7)
    tol = 1e-12 * cond + 1e-9
    if not chain.rotors:  # a tree: its own dynamics is a second truth
        tree_qdd = sd.aba(chain.tree, q, v, tau)
        assert _close(closed_state(chain, q, v, None, tree_qdd)[3], truth, tol)
    for method in METHODS:
        try:
            result = sd.constrained_forward_dynamics(chain.closed, qc, vc, tauc, method=method)
        except sd.ConstraintError as e:
            # constraint embedding cannot aggregate every closed chain (issue 45, item 8:
            # branch trust-closed): an error, never a wrong answer
            assert method == "embedding", f"{method}: {e}"
            continue
        if method == "embedding" and not _close(result.qdd, truth, tol):
            # the known error of constraint embedding, growing as |v|² (see
            # test_embedding_is_exact_with_partly_independent_free_joints): it must vanish at rest
            _embedding_right_at_rest(chain, q, v, tau, tol)
            continue
        assert _close(result.qdd, truth, tol), (method, result.qdd, truth)
        G = sd.constraint_jacobian(chain.closed, qc)
        # the multipliers balance: M θ̈ + C − τ = G_cᵀ λ (the least-norm λ is the same for all)
        force = result.generalized_constraint_force
        assert np.all(np.isfinite(result.multipliers)) and np.allclose(force, G.T @ result.multipliers,
                                                                       atol=1e-8 * (1 + np.abs(force).max()))


def _embedding_right_at_rest(chain, q, v, tau, tol):
    qc, vc, tauc, _ = closed_state(chain, q, 0 * v, tau)
    truth, _ = dense_constrained_dynamics(chain.closed, qc, vc, tauc)
    qdd = sd.constrained_forward_dynamics(chain.closed, qc, vc, tauc, method="embedding").qdd
    assert _close(qdd, truth, tol), ("embedding at rest", qdd, truth)


#: found by the fuzz suite (not in issue 45; reported, no branch fixes it yet): a chain whose
#: loops leave free joints partly independent (two spherical loops and a planar one on
#: free bodies, independent coordinates chosen by the pivoted QR): the embedding method's
#: q̈ is off by 6.5e-6 (1e-13 for the three cut-joint methods) at a state of unit
#: velocities, by 8e-8 at a tenth of them, 6e-9 at rest: a velocity term of the explicit
#: form of such clusters is not exact
PARTLY_INDEPENDENT = ((1, 5, ("revolute", "spherical", "spherical", "planar", "planar"),
                       (False, True, True, False, True), 0, False, (0.0, 0.0, -9.81)), 3060258)


@pytest.mark.xfail(strict=True, reason="found by the fuzz suite, not fixed on any branch yet (see the report of "
                                       "branch trust-model): constraint embedding's q̈ is off by ~|v|² 6e-6 on "
                                       "clusters with partly independent free joints")
def test_embedding_is_exact_with_partly_independent_free_joints():
    recipe, seed = PARTLY_INDEPENDENT
    chain = build_chain(*recipe)
    q, v, tau = tree_state(chain, np.random.default_rng(seed))
    qc, vc, tauc, _ = closed_state(chain, q, v, tau)
    truth, cond = dense_constrained_dynamics(chain.closed, qc, vc, tauc)
    for method in METHODS:
        qdd = sd.constrained_forward_dynamics(chain.closed, qc, vc, tauc, method=method).qdd
        assert _close(qdd, truth, 1e-12 * cond + 1e-9), method


@SETTINGS
@given(chains(), st.integers(0, 2**31 - 1))
def test_batches_and_the_inverse_dynamics_agree_with_single_calls(chain, seed):
    rng = np.random.default_rng(seed)
    states = [tree_state(chain, rng) for _ in range(3)]
    mapped = [closed_state(chain, q, v, tau)[:3] for q, v, tau in states]
    Q, V, T = (np.array(x) for x in zip(*mapped))
    cond = max(dense_constrained_dynamics(chain.closed, q, v, t)[1] for q, v, t in mapped)
    assume(cond < 1e7)
    for method in ("direct", "embedding"):
        try:
            batch = sd.constrained_forward_dynamics(chain.closed, Q, V, T, method=method).qdd
        except sd.ConstraintError:
            assert method == "embedding"  # (see the test above)
            continue
        for k, (q, v, t) in enumerate(mapped):
            single = sd.constrained_forward_dynamics(chain.closed, q, v, t, method=method).qdd
            assert np.allclose(batch[k], single, rtol=1e-12, atol=1e-12 * (1 + np.abs(single).max())), method
    # inverse dynamics of the forward solution: forces that give the same motion again
    q, v, t = mapped[0]
    qdd = sd.constrained_forward_dynamics(chain.closed, q, v, t, method="direct").qdd
    inverse = sd.constrained_inverse_dynamics(chain.closed, q, v, qdd, actuated=list(range(chain.closed.nv)))
    again = sd.constrained_forward_dynamics(chain.closed, q, v, inverse.tau, method="direct").qdd
    assert _close(again, qdd, 1e-12 * cond + 1e-9)


@SETTINGS
@given(chains(), st.integers(0, 2**31 - 1))
def test_constraint_rows_and_bias_are_the_derivatives_of_the_residual(chain, seed):
    """G_c v = d𝔡/dt and 𝔘̊ = −Ġ_c v (holonomic, time-invariant rows): central differences
    along the motion q(t) = integrate(q, v t)."""
    rng = np.random.default_rng(seed)
    q, v, tau = tree_state(chain, rng, scale=0.5)
    qc, vc, _, _ = closed_state(chain, q, v)
    m = chain.closed
    h = 1e-5
    qp, qm = sd.integrate(m, qc, vc, h), sd.integrate(m, qc, vc, -h)
    G = sd.constraint_jacobian(m, qc)
    assert np.allclose(G @ vc, (sd.constraint_residual(m, qp) - sd.constraint_residual(m, qm)) / (2 * h),
                       atol=1e-6 * (1 + np.abs(vc).max()))
    Gdot_v = (sd.constraint_jacobian(m, qp) - sd.constraint_jacobian(m, qm)) @ vc / (2 * h)
    assert np.allclose(sd.constraint_acceleration_bias(m, qc, vc), -Gdot_v, atol=1e-5 * (1 + np.abs(vc).max()) ** 2)


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 2**31 - 1), st.sampled_from(sorted(LOOP_OF)))
def test_closing_loops_recovers_a_state_on_the_constraints(seed, kind):
    """close_loops from a perturbed state returns a state whose residuals are within its
    tolerance (or raises LoopClosureError), and keeps the independent coordinates."""
    chain = build_chain(seed, 3, ("revolute", kind, "spherical"), (False, True, False))
    assume(chain.closed.has_constraints)
    rng = np.random.default_rng(seed)
    q, v, _ = tree_state(chain, rng)
    qc, vc, _, _ = closed_state(chain, q, v)
    guess = sd.integrate(chain.closed, qc, 1e-3 * rng.normal(size=chain.closed.nv))
    try:
        q1, v1 = sd.close_loops(chain.closed, guess, vc, independent=[])
    except sd.LoopClosureError:
        return
    assert np.abs(sd.constraint_residual(chain.closed, q1)).max(initial=0.0) <= 1e-9
    assert np.abs(sd.constraint_jacobian(chain.closed, q1) @ v1).max(initial=0.0) <= 1e-8 * (1 + np.abs(v1).max())


# =========================================================================== vacuous loops
def _vacuous_spherical_loop(seed):
    """A random chain with a spherical joint and a spherical loop joint at its centre: the
    loop adds rows that constrain nothing (G_c ≈ 1e-17), so the constrained dynamics is the
    unconstrained one (issue 45, item 3)."""
    chain = build_chain(seed, 3, ("revolute", "spherical", "revolute"), (False, False, False))
    m = chain.closed
    s = m.bodies[1]
    m.add_loop("vacuous", "spherical", "world" if s.parent < 0 else m.body_name(s.parent), s.name,
               predecessor_placement=s.placement)
    return chain


@pytest.mark.parametrize("seed", range(3))
def test_a_loop_that_constrains_nothing_gives_the_unconstrained_dynamics(seed):
    chain = _vacuous_spherical_loop(seed)
    rng = np.random.default_rng(seed)
    q, v, tau = tree_state(chain, rng)
    unconstrained = sd.aba(chain.tree, q, v, tau)
    for method in METHODS:
        qdd = sd.constrained_forward_dynamics(chain.closed, q, v, tau, method=method).qdd
        assert _close(qdd, unconstrained, 1e-8), method
