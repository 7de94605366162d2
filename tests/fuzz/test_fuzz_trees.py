"""Fuzz: random trees (every joint type, floating or fixed base, with and without gravity)
— every tree method against every other and against the dense specification
(soadyn.spec: M = HφMφ*H*, the Coriolis forces, M⁻¹ = [I − HψK]* D⁻¹ [I − HψK], J = ℬ*φ*H*,
Λ = ℬ*Ωℬ), single calls against batches, and a finite result or an error for every
state."""
import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st

import soadyn as sd
from fuzz_chains import KINDS

#: the main property of the file: more examples
MAIN_SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
SETTINGS = settings(max_examples=100, deadline=None)

TREE_KINDS = tuple(k for k in KINDS if k not in ("fixed", "cylindrical"))


@st.composite
def trees(draw):
    n = draw(st.integers(1, 8))
    kinds = tuple(draw(st.lists(st.sampled_from(TREE_KINDS), min_size=1, max_size=4, unique=True)))
    seed = draw(st.integers(0, 2**31 - 1))
    gravity = draw(st.sampled_from([(0.0, 0.0, -9.81), (0.0, 0.0, 0.0), (1.0, -2.0, 3.0)]))
    model = sd.models.random_tree(n, seed, kinds=kinds, floating_base=draw(st.booleans()), gravity=gravity)
    rng = np.random.default_rng(seed)
    q = sd.random_configuration(model, rng)
    v, a = rng.normal(size=(2, model.nv))
    return model, q, v, a, rng


def _close(x, y, tol):
    return np.allclose(x, y, rtol=tol, atol=tol * (1 + np.abs(y).max(initial=0.0)))


@MAIN_SETTINGS
@given(trees())
def test_tree_methods_agree_with_the_dense_specification(case):
    model, q, v, a, rng = case
    ops = sd.operators.sko(model, q, v)
    M = ops.mass_matrix
    cond = np.linalg.cond(M)
    assume(cond < 1e8)  # forward dynamics loses about log10 cond(M) digits
    tol = 1e-13 * cond + 1e-10
    g = sd.generalized_gravity(model, q)
    C = ops.coriolis + g
    # M by both methods, the inverse by both factorizations and by the operator expression
    assert _close(sd.mass_matrix(model, q), M, 1e-10)
    assert _close(sd.mass_matrix(model, q, "jtmj"), M, 1e-10)
    Minv = ops.mass_matrix_inverse()
    assert _close(Minv @ M, np.eye(model.nv), tol)
    for method in ("innovations", "ltdl"):
        assert _close(sd.mass_matrix_inverse(model, q, method=method), Minv, tol)
    assert np.isclose(sd.log_det_mass_matrix(model, q), np.linalg.slogdet(M)[1], rtol=1e-9, atol=1e-9)
    # inverse and forward dynamics: M a + C, and its inverse by the ABA and by the cluster
    # recursion of a tree without constraints (each body its own cluster)
    tau = sd.rnea(model, q, v, a)
    assert _close(tau, M @ a + C, 1e-10)
    assert _close(sd.rnea(model, q, v, a, gravity=False), M @ a + ops.coriolis, 1e-10)
    assert _close(sd.aba(model, q, v, tau), a, tol)
    assert _close(sd.aba(model, q, v, tau, gravity=False), np.linalg.solve(M, tau - ops.coriolis), tol)
    f = rng.normal(size=(model.nbodies, 6))
    frames = [fr.name for fr in model.frames[:: max(1, len(model.frames) // 3)]]
    J = ops.jacobian(frames)  # the frames' own axes, stacked
    for k, name in enumerate(frames):
        assert _close(sd.frame_jacobian(model, q, name), J[6 * k:6 * k + 6], 1e-10)
    bodies = [b.name for b in model.bodies]
    Jb = ops.jacobian(bodies)
    assert _close(sd.rnea(model, q, v, a, f), M @ a + C - Jb.T @ f.ravel(), 1e-10)
    assert _close(sd.aba(model, q, v, tau, f), np.linalg.solve(M, tau - C + Jb.T @ f.ravel()), tol)
    assert _close(sd.operational_space_compliance(model, q, frames), ops.Lambda(frames), tol)
    y, yd = sd.independent_state(model, q, v)
    assert _close(sd.cluster_aba(model, y, yd, tau), a, tol)
    assert _close(sd.cluster_rnea(model, y, yd, a), tau, 1e-10)


@SETTINGS
@given(trees(), st.integers(2, 5))
def test_batches_equal_single_calls(case, B):
    model, q, v, a, rng = case
    Q = np.array([sd.random_configuration(model, rng) for _ in range(B)])
    V, A = rng.normal(size=(2, B, model.nv))
    for name, call in (("aba", lambda *x: sd.aba(model, *x)), ("rnea", lambda *x: sd.rnea(model, *x))):
        batch = call(Q, V, A)
        assert all(np.array_equal(batch[k], call(Q[k], V[k], A[k])) for k in range(B)), name
    M = sd.mass_matrix(model, Q)
    assert all(np.array_equal(M[k], sd.mass_matrix(model, Q[k])) for k in range(B))
    frame = model.frames[-1].name
    Jb = sd.frame_jacobian(model, Q, frame)
    assert all(np.array_equal(Jb[k], sd.frame_jacobian(model, Q[k], frame)) for k in range(B))


BAD_STATES = [pytest.param(where, bad, id=f"{where}-{bad}")
              for where in ("q", "v", "tau") for bad in ("nan", "inf", "huge")] + \
             [pytest.param("q", f"scaled {s:g}", id=f"q-scaled-{s:g}") for s in (1e-200, 1e-160, 1e-20, 1e20, 1e155)]


@pytest.mark.parametrize("where, bad", BAD_STATES)
def test_a_finite_result_is_right_or_there_is_an_error(where, bad):
    """One entry of the state made NaN, inf or 1e300, or q scaled whole (its quaternions
    with it) on random trees of every joint type: aba raises ValueError or LinAlgError, or
    returns a finite result that the dense specification confirms for the same
    (normalized) state; an entry of 1e300 that overflows the recursion raises
    OverflowError (issue 45, item 7)."""
    for seed in range(8):
        model = sd.models.random_tree(1 + seed % 8, seed, floating_base=seed % 2 == 0)
        rng = np.random.default_rng(seed)
        state = {"q": sd.random_configuration(model, rng), "v": rng.normal(size=model.nv),
                 "tau": rng.normal(size=model.nv)}
        x = state[where]
        if bad.startswith("scaled"):
            x *= float(bad.split()[1])
        else:
            x[int(rng.integers(x.size))] = {"nan": np.nan, "inf": np.inf, "huge": 1e300}[bad]
        try:
            with np.errstate(all="ignore"):
                qdd = sd.aba(model, state["q"], state["v"], state["tau"])
        except (ValueError, OverflowError, np.linalg.LinAlgError):
            continue
        assert np.all(np.isfinite(qdd)), f"aba returned {qdd} for {where} {bad} (seed {seed})"
        qn = sd.normalize(model, state["q"])
        ops = sd.operators.sko(model, qn, state["v"])
        cond = np.linalg.cond(ops.mass_matrix)
        if cond > 1e8:
            continue  # (no digits left to compare)
        expected = np.linalg.solve(ops.mass_matrix, state["tau"] - ops.coriolis - sd.generalized_gravity(model, qn))
        assert _close(qdd, expected, 1e-13 * cond + 1e-10), (where, bad, seed)


@pytest.mark.parametrize("function", ["aba", "rnea"])
def test_an_overflow_names_the_function_and_the_argument(function):
    """v = 1e300 makes the Coriolis terms V × V ~ 1e600: OverflowError naming the function
    and v, for a single state and for the entry of a batch (issue 45, item 7)."""
    model = sd.models.random_tree(4, 1, floating_base=True)
    rng = np.random.default_rng(0)
    q, v, x = sd.random_configuration(model, rng), rng.normal(size=model.nv), rng.normal(size=model.nv)
    call = getattr(sd, function)
    huge = v.copy()
    huge[2] = 1e300
    with pytest.raises(OverflowError, match=rf"soadyn\.{function}: .*v \(max \|v\| = 1e\+300\) is too large"):
        call(model, q, huge, x)
    V = np.array([v, huge, v])
    with pytest.raises(OverflowError, match=rf"soadyn\.{function}: .*\(batch entry 1\): v \(max"):
        call(model, np.array([q] * 3), V, np.array([x] * 3))
    assert np.all(np.isfinite(call(model, q, v * 1e100, x)))  # large but within range: a result


def test_an_overflow_of_integrate_names_the_time_step():
    """dt = 1e300 with unit velocities: the position p + R v dt is beyond the range, and the
    error names integrate and dt (a parameter, not a state array)."""
    model = sd.models.random_tree(3, 0, floating_base=True)
    q, v = sd.neutral(model), np.ones(model.nv)
    with pytest.raises(OverflowError, match=r"soadyn\.integrate: q, v, dt: .*dt \(max \|dt\| = 1e\+300\) is too large"):
        sd.integrate(model, q, v, 1e300)


def test_an_overflow_of_the_cluster_functions_and_the_energy_is_an_error():
    """The same velocity of 1e300 through C-ABA and C-RNEA (in independent coordinates) and
    the kinetic energy ½ vᵀMv: OverflowError naming the velocity argument."""
    model = sd.models.random_tree(4, 1, floating_base=True)
    rng = np.random.default_rng(0)
    q, v = sd.random_configuration(model, rng), rng.normal(size=model.nv)
    v[2] = 1e300
    y, yd = sd.independent_state(model, q, v)
    with pytest.raises(OverflowError, match=r"soadyn\.cluster_aba: .*yd \(max \|yd\| = 1e\+300\) is too large"):
        sd.cluster_aba(model, y, yd, np.zeros(model.nv))
    with pytest.raises(OverflowError, match=r"soadyn\.cluster_rnea: .*yd \(max \|yd\| = 1e\+300\) is too large"):
        sd.cluster_rnea(model, y, yd, np.zeros(model.nv))
    with pytest.raises(OverflowError, match=r"v \(max \|v\| = 1e\+300\) is too large"):
        sd.kinetic_energy(model, q, v)
