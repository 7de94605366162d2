"""The call path of ``sd.step``: its fast path (exact argument types, the per-version tables
and per-thread scratch of ``soadyn.contact.step``) gives what the validated path gives, and
what it caches follows the model.

Truths: a model built with an edit from the start (its first step takes the validated path,
nothing cached) against a model edited after steps that filled the caches; steps of the
same state from several threads at once against the same steps in one thread; the
validated path (arguments of other types: lists, read-only arrays, ``dt`` an integer) against
the fast one; the errors of bad input after the fast path is primed, as on a fresh model."""
import dataclasses
import threading
import warnings

import numpy as np
import pytest

import soadyn as sd
from soadyn.geometry import Sphere

from test_step import legged_scene  # the same biped as the step tests

DT = 1e-3


def legged_state(model, seed=1):
    """The feet 3 mm into the ground, a random velocity and joint torques."""
    q = sd.neutral(model)
    q[2] = 0.447  # the feet's lowest points 0.4 + 0.02 below the hips, the hips 0.03 below the base
    rng = np.random.default_rng(seed)
    v = rng.normal(scale=0.2, size=model.nv)
    tau = rng.normal(scale=0.5, size=model.nv)
    tau[:6] = 0.0
    return q, v, tau


def trajectory(model, q, v, tau, steps):
    """``steps`` warm-started steps from (q, v) under τ: the list of StepResults."""
    out, r = [], None
    for _ in range(steps):
        r = sd.step(model, q, v, tau, DT, warm_start=r)
        q, v = r.q, r.v
        out.append(r)
    return out


def assert_same_step(a, b):
    np.testing.assert_array_equal(a.q, b.q)
    np.testing.assert_array_equal(a.v, b.v)
    np.testing.assert_array_equal(a.impulses, b.impulses)
    np.testing.assert_array_equal(a.solution.velocities, b.solution.velocities)
    assert a.solution.iterations == b.solution.iterations and a.converged == b.converged
    for field in ("objects", "bodies", "point", "normal", "depth", "friction", "frame"):
        np.testing.assert_array_equal(getattr(a.contacts, field), getattr(b.contacts, field))


# --------------------------------------------------------------------------- caches follow edits
def test_a_step_after_adding_a_collision_is_the_step_of_a_fresh_model():
    m = legged_scene()
    q, v, tau = legged_state(m)
    before = trajectory(m, q, v, tau, 3)  # the tables and this thread's scratch now cached
    assert len(before[0].contacts) == 2
    # a third foot under the base, 3 mm into the ground at q
    sphere = (Sphere(0.03), (np.eye(3), [0.0, 0.0, -0.42]))
    m.add_collision("base", *sphere, friction=0.8)
    fresh = legged_scene()
    fresh.add_collision("base", *sphere, friction=0.8)
    after, expected = trajectory(m, q, v, tau, 3), trajectory(fresh, q, v, tau, 3)
    assert len(after[0].contacts) == 3 and len(expected[0].contacts) == 3
    for a, b in zip(after, expected):
        assert_same_step(a, b)
    assert not np.array_equal(after[0].v, before[0].v)


def test_a_step_after_a_parameter_change_is_the_step_of_a_fresh_model():
    m = legged_scene()
    q, v, tau = legged_state(m)
    before = trajectory(m, q, v, tau, 3)
    m.set_inertia("base", 3.0, inertia=np.diag([0.03, 0.04, 0.04]))
    fresh = legged_scene()
    fresh.set_inertia("base", 3.0, inertia=np.diag([0.03, 0.04, 0.04]))
    after, expected = trajectory(m, q, v, tau, 3), trajectory(fresh, q, v, tau, 3)
    for a, b in zip(after, expected):
        assert_same_step(a, b)
    assert not np.array_equal(after[0].v, before[0].v)
    # the previous version's result is refused as a warm start, also by the primed fast path
    with pytest.raises(ValueError, match="warm_start: these contacts were made for version"):
        sd.step(m, q, v, tau, DT, warm_start=before[-1])


# --------------------------------------------------------------------------- threads
def test_threads_stepping_at_once_give_the_single_thread_results():
    """Each thread has its own scratch: four threads stepping four different trajectories
    of one model at the same time give the trajectories of one thread."""
    m = legged_scene()
    states = [legged_state(m, seed) for seed in range(4)]
    steps = 40
    expected = [trajectory(m, *s, steps) for s in states]
    results = [None] * len(states)
    start = threading.Barrier(len(states))

    def run(i):
        start.wait()
        results[i] = trajectory(m, *states[i], steps)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(states))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for got, want in zip(results, expected):
        for a, b in zip(got, want):
            assert_same_step(a, b)


# --------------------------------------------------------------------------- the two paths agree
def test_arguments_of_other_types_give_the_same_step():
    m = legged_scene()
    q, v, tau = legged_state(m)
    r = trajectory(m, q, v, tau, 2)
    ref = sd.step(m, r[0].q, r[0].v, tau, DT, warm_start=r[0])  # the fast path (primed above)
    assert_same_step(ref, r[1])
    ro = [x.copy() for x in (r[0].q, r[0].v, tau)]
    for x in ro:
        x.setflags(write=False)
    for args in ((list(r[0].q), list(r[0].v), list(tau), DT), (*ro, DT), (r[0].q, r[0].v, tau, np.float64(DT))):
        assert_same_step(sd.step(m, *args, warm_start=r[0]), ref)
    # no warm start, external forces given as zeros, settings given as the defaults
    cold = sd.step(m, r[0].q, r[0].v, tau, DT)
    assert_same_step(sd.step(m, r[0].q, r[0].v, tau, DT, np.zeros((m.nbodies, 6)), sd.ContactSettings()), cold)
    # a snapshot steps as its model, and its contacts count as the model's
    snap = sd.core.compile.snapshot(m)
    s = sd.step(snap, r[0].q, r[0].v, tau, DT, warm_start=r[0])
    assert_same_step(s, ref)
    s.contacts.check(m)


def test_contacts_of_a_step_are_read_only_and_complete():
    m = legged_scene()
    q, v, tau = legged_state(m)
    r = trajectory(m, q, v, tau, 2)[-1]
    c = r.contacts
    detected = sd.detect_contacts(m, trajectory(m, q, v, tau, 1)[0].q)
    assert len(c) == len(detected) == 2
    for field in ("objects", "bodies", "point", "normal", "depth", "friction", "frame"):
        a = getattr(c, field)
        np.testing.assert_allclose(a, getattr(detected, field), rtol=0, atol=1e-15)
        assert not a.flags.writeable
        with pytest.raises(ValueError):
            a[...] = 0
    for a in (r.impulses, r.solution.impulses, r.solution.velocities):
        assert not a.flags.writeable
    with pytest.raises(AttributeError, match="no attribute 'points'"):
        c.points
    # the solution (made on first use) is one object, and the result is a whole dataclass
    assert r.solution is r.solution and r.solution.impulses is r.impulses
    copy = dataclasses.replace(r)
    for field in dataclasses.fields(r):
        assert getattr(copy, field.name) is getattr(r, field.name)
    assert "StepResult(" in repr(r) and "2 points of 'biped'" in repr(c)
    with pytest.raises(AttributeError, match="no attribute 'solutions'"):
        r.solutions
    with pytest.raises(AttributeError):
        c.depth = np.zeros(2)  # frozen


def test_a_result_made_by_its_constructor_warm_starts_as_the_step_s_own():
    """The warm start a step reads from the previous step's result (its record) and the one
    made from the result's public fields (a StepResult built by the dataclass's constructor,
    as a user or another stepper makes one) are the same: the same next step, to the bit.
    Editing the result's q⁺, v⁺ in place (writeable, the caller's) changes neither."""
    m = legged_scene()
    q, v, tau = legged_state(m)
    r = trajectory(m, q, v, tau, 1)[0]  # (its impulses not zero: the next solve iterates from them)
    assert r.q.flags.writeable and r.v.flags.writeable
    q1, v1 = r.q.copy(), r.v.copy()
    own = sd.step(m, q1, v1, tau, DT, warm_start=r)
    made = sd.StepResult(r.q.copy(), r.v.copy(), r.contacts, r.impulses, r.solution, r.solver_scale,
                         r.solver_velocities)
    r.q[:] = 0.0
    r.v[:] = 1e3
    again = sd.step(m, q1, v1, tau, DT, warm_start=r)
    from_fields = sd.step(m, q1, v1, tau, DT, warm_start=made)
    assert own.solution.iterations > 0  # (a warm solve that iterates: the start matters)
    for other in (again, from_fields):
        np.testing.assert_array_equal(other.q, own.q)
        np.testing.assert_array_equal(other.v, own.v)
        np.testing.assert_array_equal(other.impulses, own.impulses)
        assert other.solution.iterations == own.solution.iterations
    # without σ (solver_velocities None) the solve starts its dual from the warm impulses:
    # still a converged step of the same NCP
    no_sigma = sd.step(m, q1, v1, tau, DT, warm_start=dataclasses.replace(made, solver_velocities=None))
    assert no_sigma.converged
    np.testing.assert_allclose(no_sigma.v, own.v, rtol=0, atol=1e-7)


# --------------------------------------------------------------------------- checks, after priming
def test_bad_input_after_fast_steps_names_the_argument():
    m = legged_scene()
    q, v, tau = legged_state(m)
    r = trajectory(m, q, v, tau, 2)[-1]  # the fast path primed
    for dt, error in ((0.0, ValueError), (-1e-3, ValueError), (np.inf, ValueError), (np.nan, ValueError),
                      ("0.001", TypeError), (None, TypeError)):
        with pytest.raises(error, match="dt"):
            sd.step(m, q, v, tau, dt, warm_start=r)
    with pytest.raises(ValueError, match="q: expected shape"):
        sd.step(m, q[:-1], v, tau, DT, warm_start=r)
    with pytest.raises(ValueError, match="v: expected shape"):
        sd.step(m, q, v[:-1], tau, DT, warm_start=r)
    with pytest.raises(ValueError, match="tau: expected shape"):
        sd.step(m, q, v, np.zeros(m.nv + 1), DT, warm_start=r)
    with pytest.raises(ValueError, match="f_ext: expected shape"):
        sd.step(m, q, v, tau, DT, f_ext=np.zeros((2, 6)), warm_start=r)
    with pytest.raises(ValueError, match="f_ext"):
        sd.step(m, q, v, tau, DT, f_ext=np.zeros((0, 6)), warm_start=r)
    for name in ("q", "v", "tau"):
        args = {"q": q.copy(), "v": v.copy(), "tau": tau.copy()}
        args[name][-1] = np.nan
        with pytest.raises(ValueError, match=name):
            sd.step(m, args["q"], args["v"], args["tau"], DT, warm_start=r)
    with pytest.raises(TypeError, match="settings"):
        sd.step(m, q, v, tau, DT, settings={"tol": 1e-8}, warm_start=r)
    with pytest.raises(TypeError, match="warm_start"):
        sd.step(m, q, v, tau, DT, warm_start=r.impulses)
    with pytest.raises(ValueError, match="warm_start: these contacts were made for another model"):
        sd.step(legged_scene(), q, v, tau, DT, warm_start=r)
    with pytest.raises(TypeError, match="model"):
        sd.step("biped", q, v, tau, DT)
    # a state whose step leaves the finite numbers raises, never returns NaN
    with pytest.raises(OverflowError):
        sd.step(m, q, np.full(m.nv, 1e300), np.full(m.nv, 1e308), 1e10, warm_start=r)
    # and the path still steps afterwards
    assert_same_step(sd.step(m, q, v, tau, DT, warm_start=r), sd.step(m, list(q), v, tau, DT, warm_start=r))


def test_non_convergence_after_fast_steps_warns_at_the_caller():
    m = legged_scene()
    q, v, tau = legged_state(m)
    trajectory(m, q, v, tau, 2)
    settings = sd.ContactSettings(max_iter=1, tol=1e-15)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r = sd.step(m, q, v, tau, DT, settings=settings)
    assert not r.converged and r.solution.iterations == 1
    assert [w.category for w in caught] == [sd.ContactSolverWarning]
    assert caught[0].filename == __file__ and "did not converge" in str(caught[0].message)


def test_the_common_call_takes_the_fast_path(monkeypatch):
    """(So that the tests above compare the fast path with the validated one.) After one
    step in this thread, a step of arrays, None or a StepResult of this version does not
    reach the validated path; a list does."""
    import importlib
    step_module = importlib.import_module("soadyn.contact.step")
    m = legged_scene()
    q, v, tau = legged_state(m)
    r = trajectory(m, q, v, tau, 1)[0]
    taken = []
    general = step_module._general_step
    monkeypatch.setattr(step_module, "_general_step", lambda *args: taken.append(args) or general(*args))
    sd.step(m, r.q, r.v, tau, DT, warm_start=r)
    sd.step(m, r.q, r.v, None, DT, np.zeros((m.nbodies, 6)), sd.ContactSettings(compliance=1e-3))
    gains = np.zeros(m.nv)
    gains[6:] = 2.0
    sd.step(m, r.q, r.v, tau, DT, warm_start=r, pd=(gains, 0.1 * gains, r.q.copy()))
    assert taken == []
    sd.step(m, list(r.q), r.v, tau, DT, warm_start=r)
    assert len(taken) == 1
