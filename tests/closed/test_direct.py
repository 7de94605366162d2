"""The compiled direct method (:mod:`soadyn.kernels.direct`, :mod:`soadyn.closed.direct`):
its rank-revealing factorization against NumPy, its accelerations against the SVD-based projection
method and the closed-chain equations of motion, batches against single calls."""
import numpy as np
import pytest

import soadyn as sd
from soadyn import models
from soadyn.closed.direct import (NOT_THE_DEFAULT, compiled_constraints, direct_fast, direct_outputs, direct_solve,
                                  direct_tables)
from soadyn.kernels.direct import ROW_TOL, independent_rows, pivoted_cholesky, pivoted_solve

from conftest import CLOSED_CHAINS

CASES = dict(CLOSED_CHAINS, geared_chain=lambda rng: (models.geared_chain(2), None))  # direct by default


def _state(case, seed=0):
    rng = np.random.default_rng(seed)
    model, guess = CASES[case](rng)
    if guess is None:
        guess = sd.random_configuration(model, rng)
    q, v = sd.close_loops(model, guess, rng.normal(size=model.nv))
    return model, q, v, rng


def test_pivoted_cholesky_finds_the_rank_and_solves_consistent_systems():
    rng = np.random.default_rng(2)
    for m, r in ((1, 1), (5, 5), (7, 4), (9, 2), (4, 0)):
        B = rng.normal(size=(m, r))
        A = B @ B.T
        b = A @ rng.normal(size=m)  # consistent right-hand side
        F = A.copy()
        perm = np.empty(m, dtype=np.int64)
        rank = pivoted_cholesky(F, perm, 1e-12)
        assert rank == np.linalg.matrix_rank(A)
        x = np.empty(m)
        pivoted_solve(F, perm, rank, b, x, np.empty(m))
        assert np.allclose(A @ x, b, rtol=0, atol=1e-9 * (1 + np.abs(b).max()))


def test_independent_rows_span_the_row_space():
    rng = np.random.default_rng(4)
    for m, r, nv in ((5, 2, 3), (40, 16, 24), (6, 6, 9), (3, 0, 4)):
        G = rng.normal(size=(m, r)) @ rng.normal(size=(r, nv))
        if m == 6:
            G[2] = 0.0
            r = np.linalg.matrix_rank(G)
        rows = np.empty(m, dtype=np.int64)
        n = independent_rows(G, rows, np.empty((m, nv)), np.zeros(0), ROW_TOL)
        kept = G[rows[:n]]
        assert n == r == np.linalg.matrix_rank(kept)
        # every row of G is a combination of the kept ones
        if n:
            coef = np.linalg.lstsq(kept.T, G.T, rcond=None)[0]
            assert np.allclose(kept.T @ coef, G.T, atol=1e-10 * np.abs(G).max())


def test_independent_rows_never_keep_rows_at_rounding_of_their_scale():
    """Rows whose norm is rounding of their scale (a loop that constrains nothing) are not
    kept, even when every row is such rounding; the others are ranked among themselves."""
    rng = np.random.default_rng(5)
    G = rng.normal(size=(5, 6))
    scale = np.abs(G).sum(axis=1)
    G[[1, 3]] *= 1e-16  # at rounding level of their scale
    rows = np.empty(5, dtype=np.int64)
    n = independent_rows(G, rows, np.empty((5, 6)), scale, ROW_TOL)
    assert n == 3 and sorted(rows[:n]) == [0, 2, 4]
    n = independent_rows(G[[1, 3]].copy(), rows, np.empty((2, 6)), scale[[1, 3]], ROW_TOL)
    assert n == 0


@pytest.mark.parametrize("case", sorted(CASES))
def test_compiled_direct_agrees_with_projection_and_the_equations_of_motion(case):
    model, q, v, rng = _state(case)
    assert compiled_constraints(model)
    tau = rng.normal(size=model.nv)
    f_ext = rng.normal(size=(model.nbodies, 6))
    out = direct_solve(model, q, v, tau, f_ext)
    o = direct_outputs(out, model.nv, direct_tables(model))
    ref = sd.constrained_forward_dynamics(model, q, v, tau, method="projection", f_ext=f_ext)
    scale = 1 + np.abs(ref.qdd).max()
    assert int(o.rank[0]) == ref.constraint_rank
    assert np.allclose(o.qdd, ref.qdd, rtol=0, atol=1e-9 * scale)
    # the constraint evaluation it returns is the Python one
    st = sd.closed.evaluate_constraints(model, q, v)
    assert np.array_equal(o.G, st.G)
    assert np.allclose(o.ubias, st.acceleration_bias, rtol=0, atol=1e-12 * (1 + np.abs(st.acceleration_bias).max()))
    assert np.allclose(o.resid, st.residual, rtol=0, atol=1e-14)
    # G_c q̈ = 𝔘̊ and M q̈ + C − G_c*λ = T with its (particular) λ
    assert np.abs(st.G @ o.qdd - st.acceleration_bias).max() < 1e-9 * scale
    tree = model.spanning_tree()
    M = sd.mass_matrix(tree, q)
    C = sd.rnea(tree, q, v, np.zeros(model.nv), f_ext)
    assert np.allclose(M @ o.qdd + C - st.G.T @ o.lam, tau, rtol=0, atol=1e-9 * (1 + np.abs(C).max()))


def test_compiled_direct_baumgarte_and_gravity_match_the_python_method():
    model, q, v, rng = _state("four_bar.urdf")
    q = q + 1e-3 * rng.normal(size=model.nq)  # off the manifold: the stabilization terms matter
    tau = rng.normal(size=model.nv)
    gains = (3.0, 5.0)
    o = direct_outputs(direct_solve(model, q, v, tau, baumgarte=gains), model.nv, direct_tables(model))
    ref = sd.constrained_forward_dynamics(model, q, v, tau, method="projection", baumgarte=gains, check=False)
    assert np.allclose(o.qdd, ref.qdd, rtol=0, atol=1e-9 * (1 + np.abs(ref.qdd).max()))
    plain = direct_outputs(direct_solve(model, q, v, tau), model.nv, direct_tables(model)).qdd
    assert np.abs(plain - o.qdd).max() > 1e-6


def test_compiled_direct_batches_equal_single_calls():
    model, q, v, rng = _state("four_bar_chain")
    B = 37
    Q = np.tile(q, (B, 1)) + 1e-4 * rng.normal(size=(B, model.nq))
    V = rng.normal(size=(B, model.nv))
    T = rng.normal(size=(B, model.nv))
    out = direct_solve(model, Q, V, T)
    assert out.shape == (B, direct_tables(model).output_size)
    for b in range(B):
        assert np.array_equal(out[b], direct_solve(model, Q[b], V[b], T[b]))


def test_compiled_direct_errors_name_the_argument():
    model, q, v, rng = _state("four_bar.urdf")
    tau = np.zeros(model.nv)
    with pytest.raises(ValueError, match="tau"):
        direct_solve(model, q, v, np.zeros(model.nv + 1))
    bad = v.copy()
    bad[0] = np.nan
    with pytest.raises(ValueError, match="v: expected finite"):
        direct_solve(model, q, bad, tau)


@pytest.mark.parametrize("case", sorted(CASES))
def test_default_method_is_a_compiled_one_and_the_direct_method_reports_what_projection_does(case):
    """The default is the compiled direct method on these small mechanisms (the rotor
    chain's three couplings on six bodies included: 3.4 against 3.5 µs for embedding);
    its accelerations, rank, multipliers and constraint forces are the projection
    method's."""
    model, q, v, rng = _state(case)
    tau = rng.normal(size=model.nv)
    default = sd.constrained_forward_dynamics(model, q, v, tau)
    assert default.method == "direct" and sd.closed.default_method(model) == "direct"
    res = sd.constrained_forward_dynamics(model, q, v, tau, method="direct")
    ref = sd.constrained_forward_dynamics(model, q, v, tau, method="projection")
    assert np.allclose(default.qdd, ref.qdd, rtol=0, atol=1e-9 * (1 + np.abs(ref.qdd).max()))
    assert res.constraint_rank == ref.constraint_rank and res.n_constraints == ref.n_constraints
    assert np.allclose(res.qdd, ref.qdd, rtol=0, atol=1e-9 * (1 + np.abs(ref.qdd).max()))
    lam_scale = 1 + np.abs(ref.multipliers).max()
    assert np.allclose(res.multipliers, ref.multipliers, rtol=0, atol=1e-8 * lam_scale)  # least norm, both
    for name, f in ref.constraint_forces.items():
        assert np.allclose(res.constraint_forces[name], f, rtol=0, atol=1e-8 * (1 + np.abs(f).max()))
    assert np.array_equal(res.state.G, ref.state.G)


def test_batched_constrained_forward_dynamics_equals_single_calls():
    model, q, v, rng = _state("six_bar.urdf")
    B = 9
    Q, V = [], []
    for b in range(B):
        qb, vb = sd.close_loops(model, q + 0.05 * rng.normal(size=model.nq), rng.normal(size=model.nv))
        Q.append(qb)
        V.append(vb)
    Q, V, T = np.array(Q), np.array(V), rng.normal(size=(B, model.nv))
    res = sd.constrained_forward_dynamics(model, Q, V, T)
    assert res.qdd.shape == (B, model.nv) and res.multipliers.shape == (B, res.n_constraints)
    for b in range(B):
        one = sd.constrained_forward_dynamics(model, Q[b], V[b], T[b])
        assert np.array_equal(res.qdd[b], one.qdd)
        assert np.array_equal(res.multipliers[b], one.multipliers)
        assert res.constraint_rank[b] == one.constraint_rank
        assert np.array_equal(res.generalized_constraint_force[b], one.generalized_constraint_force)


def test_compiled_path_checks_the_residuals():
    model, q, v, rng = _state("four_bar.urdf")
    tau = np.zeros(model.nv)
    with pytest.raises(sd.ConstraintError, match="q: expected a state on the constraint manifold"):
        sd.constrained_forward_dynamics(model, q + 0.01, v, tau)
    with pytest.raises(sd.ConstraintError, match="v: expected"):
        sd.constrained_forward_dynamics(model, q, v + 0.1, tau)
    # the same state passes with a loose tolerance or without the check, and agrees with projection
    loose = sd.constrained_forward_dynamics(model, q + 0.01, v, tau, residual_tol=0.1)
    ref = sd.constrained_forward_dynamics(model, q + 0.01, v, tau, method="projection", check=False)
    assert np.allclose(loose.qdd, ref.qdd, rtol=0, atol=1e-9 * (1 + np.abs(ref.qdd).max()))
    Q = np.array([q, q + 0.01])
    with pytest.raises(sd.ConstraintError, match="batch entry 1"):
        sd.constrained_forward_dynamics(model, Q, np.array([v, v]), np.zeros((2, model.nv)))
    with pytest.raises(ValueError, match="residual_tol"):
        sd.constrained_forward_dynamics(model, q, v, tau, residual_tol=-1.0)


def test_plain_call_after_a_valid_call_checks_what_the_first_call_checks():
    """From the second call on, the common call runs one compiled kernel with the state's
    consistency check inside (:func:`soadyn.kernels.direct.direct_plain_kernel`): it must
    refuse and accept exactly what the validated first call does, and give its result."""
    model, q, v, rng = _state("four_bar.urdf", seed=5)
    tau = rng.normal(size=model.nv)
    first = sd.constrained_forward_dynamics(model, q, v, tau)
    again = sd.constrained_forward_dynamics(model, q, v, tau)
    validated = sd.constrained_forward_dynamics(model, q, v, tau, f_ext=np.zeros((model.nbodies, 6)))
    assert np.array_equal(again.qdd, first.qdd) and np.array_equal(again.qdd, validated.qdd)
    assert np.array_equal(again.multipliers, validated.multipliers)
    with pytest.raises(sd.ConstraintError, match="q: expected a state on the constraint manifold"):
        sd.constrained_forward_dynamics(model, q + 0.01, v, tau)
    with pytest.raises(sd.ConstraintError, match="v: expected"):
        sd.constrained_forward_dynamics(model, q, v + 0.1, tau)
    with pytest.raises(sd.ConstraintError, match="v: expected"):
        sd.constrained_forward_dynamics(model, q, v + 0.1, tau, residual_tol=1e-3)
    with pytest.raises(ValueError, match="q: expected finite"):
        sd.constrained_forward_dynamics(model, np.full(model.nq, np.nan), v, tau)
    with pytest.raises(ValueError, match="tau"):
        sd.constrained_forward_dynamics(model, q, v, tau[:-1])
    # without the check, or with a loose tolerance, the off-manifold state is solved
    ref = sd.constrained_forward_dynamics(model, q, v + 0.1, tau, method="projection", check=False).qdd
    for res in (sd.constrained_forward_dynamics(model, q, v + 0.1, tau, check=False),
                sd.constrained_forward_dynamics(model, q, v + 0.1, tau, residual_tol=1.0)):
        assert np.allclose(res.qdd, ref, rtol=0, atol=1e-9 * (1 + np.abs(ref).max()))
    # other argument types take the validated path and give the same numbers
    assert np.array_equal(sd.constrained_forward_dynamics(model, list(q), v, tau).qdd, first.qdd)


def test_user_constraints_fall_back_to_a_python_method():
    model = models.rolling_disk()
    assert not compiled_constraints(model)
    assert sd.closed.default_method(model) == "augmented"
    with pytest.raises(ValueError, match="user constraints"):
        direct_solve(model, sd.neutral(model), np.zeros(model.nv), np.zeros(model.nv))


@pytest.mark.parametrize("case", sorted(CASES))
def test_rows_selected_once_per_model_or_found_per_state_give_the_same_motion(case):
    """The kernel solves on the rows of G_c chosen once per model and checks the result
    against every row; rows that do not span G_c at a state (here: deliberately too few,
    or none given) make it find the state's own rows. All give the projection method's
    θ̈ (an SVD of G_c, independent of the row selection)."""
    from soadyn.closed.constraint_set import constraint_set
    from soadyn.closed.direct import _DIRECT
    from soadyn.kernels.direct import pack_direct_tables

    model, q, v, rng = _state(case, seed=3)
    tau = rng.normal(size=model.nv)
    expected = sd.constrained_forward_dynamics(model, q, v, tau, method="projection").qdd
    cs = constraint_set(model)
    tables = direct_tables(model)
    assert 0 < tables.ints[5] <= cs.m  # the model's generic rows are known
    for selection in (np.zeros(0, dtype=np.int64), np.array([0]), np.arange(cs.m)):
        ints, floats = pack_direct_tables(cs.loop_int, cs.loop_float, cs.coupling_v, cs.coupling_q,
                                          np.asarray(cs.coupling_offset, dtype=float), cs.m_loop, selection, True,
                                          0.0, 0.0, 1e-12, ROW_TOL)
        out = _DIRECT(model, (q, v, tau, None), (ints, floats), np.empty(tables.output_size))
        o = direct_outputs(out, model.nv, tables)
        assert np.allclose(o.qdd, expected, rtol=0, atol=1e-8 * (1 + np.abs(expected).max())), selection
        assert np.allclose(o.G @ o.qdd, o.ubias, rtol=0, atol=1e-8 * (1 + np.abs(o.ubias).max()))


@pytest.mark.parametrize("case", sorted(CASES))
def test_plain_call_is_bitwise_the_validated_call(case):
    """The common call (one kernel with the state check inside, from the second call on)
    and the validated call (here: taken for the explicit zero external forces) run the
    same arithmetic: θ̈, λ and the rank agree exactly."""
    model, q, v, rng = _state(case, seed=7)
    tau = rng.normal(size=model.nv)
    sd.constrained_forward_dynamics(model, q, v, tau, method="direct")
    first, again = direct_fast(model, q, v, tau, 1e-6, False), direct_fast(model, q, v, tau, 1e-6, False)
    assert first is not None  # (the plain call is taken, with this thread's tables made once, though the
    assert first[1] is again[1]  # default method is not known yet: no call has left method= out)
    plain = sd.constrained_forward_dynamics(model, q, v, tau, method="direct")
    validated = sd.constrained_forward_dynamics(model, q, v, tau, method="direct",
                                                f_ext=np.zeros((model.nbodies, 6)))
    assert np.array_equal(plain.qdd, validated.qdd)
    assert np.array_equal(plain.multipliers, validated.multipliers)
    assert plain.constraint_rank == validated.constraint_rank
    assert plain.degrees_of_freedom == model.nv - plain.constraint_rank


def test_plain_call_results_own_their_memory():
    """Each result keeps its own θ̈ and reads its constraint forces from its own state,
    whatever later calls compute."""
    model, q, v, rng = _state("four_bar_chain", seed=2)
    tau1, tau2 = rng.normal(size=model.nv), rng.normal(size=model.nv)
    sd.constrained_forward_dynamics(model, q, v, tau1)
    first = sd.constrained_forward_dynamics(model, q, v, tau1)
    qdd1 = first.qdd.copy()
    second = sd.constrained_forward_dynamics(model, q, v, tau2)
    assert not np.shares_memory(first.qdd, second.qdd)
    assert np.array_equal(first.qdd, qdd1) and not np.array_equal(second.qdd, qdd1)
    ref = sd.constrained_forward_dynamics(model, q, v, tau1, method="projection")
    scale = 1 + np.abs(ref.generalized_constraint_force).max()
    assert np.allclose(first.generalized_constraint_force, ref.generalized_constraint_force, rtol=0,
                       atol=1e-8 * scale)


def test_plain_call_of_the_named_direct_method_where_it_is_not_the_default():
    """A chain of 16 four-bar loops (80 rows) defaults to embedding; ``method="direct"``
    still takes the direct method's plain call, and agrees with its validated call and
    with projection."""
    model = models.four_bar_chain(16, 0)
    assert sd.closed.default_method(model) == "embedding"
    rng = np.random.default_rng(4)
    single = models.four_bar_linkage()
    q1, _ = sd.close_loops(single, [0.7, 1.0, 1.6])
    q, v = sd.close_loops(model, np.tile(q1, 16), rng.normal(size=model.nv))
    tau = rng.normal(size=model.nv)
    sd.constrained_forward_dynamics(model, q, v, tau, method="direct")
    # asked for the default, the direct method's plain call says the default is the other one
    assert direct_fast(model, q, v, tau, 1e-6, False) and direct_fast(model, q, v, tau, 1e-6, True) is NOT_THE_DEFAULT
    plain = sd.constrained_forward_dynamics(model, q, v, tau, method="direct")
    assert plain.method == "direct"
    validated = sd.constrained_forward_dynamics(model, q, v, tau, method="direct", f_ext=np.zeros((model.nbodies, 6)))
    assert np.array_equal(plain.qdd, validated.qdd)
    ref = sd.constrained_forward_dynamics(model, q, v, tau, method="projection").qdd
    assert np.allclose(plain.qdd, ref, rtol=0, atol=1e-8 * (1 + np.abs(ref).max()))
    assert sd.constrained_forward_dynamics(model, q, v, tau).method == "embedding"
