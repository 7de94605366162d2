"""One model state per call: a call works on one snapshot of the model's derived data, so
that an edit made by another thread meanwhile gives the call's result of the state
before the edit or after it, never a mix (see soadyn.core.compile).

The truth each threaded test states: every result equals, bit for bit, the result of the
same call on one of two separate models, one in each state (reference results computed
before the threads start)."""
import threading
import time

import numpy as np
import pytest

import soadyn as sd
from soadyn.closed.embedding.clusters import random_independent_state

#: how long the readers and the editor run in each threaded test [s]
RUN_SECONDS = 1.0


def _inertias(model, body, rng):
    """Two different sets of inertial parameters (mass, com, I_com) of ``body``: its own and
    another, every one of the three changed."""
    b = model.bodies[body]
    mass, com, inertia = sd.models.random_rigid_inertia(rng)
    return (b.mass, b.com.copy(), b.inertia_com.copy()), (b.mass + mass, b.com + com, b.inertia_com + inertia)


def _readers_and_an_editor(make, body, calls, seed=0):
    """Run ``calls`` (name -> function of the model returning a list of results, one per
    public call it makes: an array or a tuple of arrays) on one model from one thread each
    while another thread sets the inertia of ``body`` back and forth between two states;
    returns (results of neither state by name, public calls made by name)."""
    rng = np.random.default_rng(seed)
    model = make()
    states = _inertias(model, body, rng)
    reference = []
    for state in states:
        m = make()
        m.set_inertia(body, *state)
        reference.append({name: call(m) for name, call in calls.items()})
    for name in calls:  # the edit changes every result: a mix cannot pass for either state
        assert not any(_same(a, b) for a, b in zip(reference[0][name], reference[1][name])), name
    stop = threading.Event()
    mixed = {name: 0 for name in calls}
    made = {name: 0 for name in calls}
    errors = []

    def reader(name, call):
        try:
            while not stop.is_set():
                for k, result in enumerate(call(model)):
                    made[name] += 1
                    if not (_same(result, reference[0][name][k]) or _same(result, reference[1][name][k])):
                        mixed[name] += 1
        except Exception as e:  # noqa: BLE001 (reported by the test)
            errors.append(f"{name}: {type(e).__name__}: {e}")

    def editor():
        k = 0
        while not stop.is_set():
            k ^= 1
            model.set_inertia(body, *states[k])

    threads = [threading.Thread(target=reader, args=item) for item in calls.items()] + \
        [threading.Thread(target=editor)]
    for t in threads:
        t.start()
    time.sleep(RUN_SECONDS)
    stop.set()
    for t in threads:
        t.join()
    assert not errors, errors
    return {name: n for name, n in mixed.items() if n}, made


def _same(a, b):
    if isinstance(a, tuple):
        return all(_same(x, y) for x, y in zip(a, b))
    return np.array_equal(a, b)


def test_tree_calls_see_one_model_state_while_another_thread_sets_an_inertia():
    def make():
        return sd.models.random_tree(8, 4, floating_base=True)

    rng = np.random.default_rng(1)
    m = make()
    Q = np.array([sd.random_configuration(m, rng) for _ in range(64)])
    V, T = rng.normal(size=(2, 64, m.nv))
    calls = {
        "aba": lambda model: [sd.aba(model, q, v, t) for q, v, t in zip(Q[:8], V[:8], T[:8])],
        "aba batch": lambda model: [sd.aba(model, Q, V, T)],
        "rnea": lambda model: [sd.rnea(model, q, v, t) for q, v, t in zip(Q[:8], V[:8], T[:8])],
        "mass_matrix batch": lambda model: [sd.mass_matrix(model, Q)],
        "operational_space_compliance": lambda model: [sd.operational_space_compliance(model, Q[0], "b7")],
    }
    mixed, made = _readers_and_an_editor(make, 5, calls)
    assert not mixed, f"results of neither state (of {made} calls): {mixed}"


def test_closed_chain_calls_see_one_model_state_while_another_thread_sets_an_inertia():
    make = sd.models.four_bar_linkage
    m = make()
    rng = np.random.default_rng(2)
    states = [random_independent_state(m, rng, 0.6) for _ in range(8)]
    qv = [sd.spanning_state(m, y, yd) for y, yd in states]
    Q, V = np.array([q for q, _ in qv]), np.array([v for _, v in qv])
    T = rng.normal(size=(len(qv), m.nv))
    Y = np.array([y for y, _ in states])
    Yd = np.array([yd for _, yd in states])
    Ti = rng.normal(size=Yd.shape)

    def each(method):
        def call(model):
            results = [sd.constrained_forward_dynamics(model, q, v, t, method=method) for q, v, t in zip(Q, V, T)]
            # the multipliers are computed when read: from the state of the call, too
            return [(r.qdd, r.multipliers) for r in results]
        return call

    calls = {
        "direct (default)": each(None),
        "augmented": each("augmented"),
        "embedding": each("embedding"),
        "direct batch": lambda model: [sd.constrained_forward_dynamics(model, Q, V, T, method="direct").qdd],
        "cluster_aba batch": lambda model: [sd.cluster_aba(model, Y, Yd, Ti)],
    }
    mixed, made = _readers_and_an_editor(make, 1, calls)
    assert not mixed, f"results of neither state (of {made} calls): {mixed}"


def _arm():
    m = sd.Model("arm")
    m.add_body("a", sd.joints.Revolute("z"), mass=1.0, com=(0.3, 0, 0), inertia=np.diag([0.01, 0.02, 0.03]))
    m.add_body("b", sd.joints.Revolute("y"), "a", (np.eye(3), [0.6, 0, 0]), mass=1.0, com=(0.2, 0, 0),
               inertia=np.diag([0.01, 0.03, 0.02]))
    return m


@pytest.mark.parametrize("edit", [
    lambda m: m.set_inertia("b", 2.0, (0.1, 0.0, 0.0), np.diag([0.02, 0.02, 0.03])),
    lambda m: m.add_inertia("b", 0.5, (0.1, 0.1, 0.0), np.diag([0.01, 0.01, 0.01])),
    lambda m: m.add_loop("closure", "revolute", "b", "world", axis="y",
                         predecessor_placement=(np.eye(3), [0.4, 0, 0]), successor_placement=(np.eye(3), [1.0, 0, 0])),
    lambda m: m.add_rotor("rotor", "a", "y", np.eye(3) * 1e-4, 5.0, drives="b"),
], ids=["set_inertia", "add_inertia", "add_loop", "add_rotor"])
def test_a_multi_part_edit_is_one_edit(edit):
    """An edit that changes several parts (mass, centre of mass and rotational inertia; a
    body and its transmission; two frames and a loop) is one edit: no build of the model's
    derived data can see it halfway."""
    m = _arm()
    before = m.version
    edit(m)
    assert m.version == before + 1


def test_a_build_waits_for_the_edit_in_progress():
    """A thread that needs the derived data while another thread is in the middle of an edit
    waits for the edit to end, and then sees all of it."""
    m = _arm()
    q = np.array([0.3, -0.4])
    sd.mass_matrix(m, q)
    reference = _arm()
    reference.set_inertia("b", 2.0, (0.1, 0.0, 0.0), np.diag([0.02, 0.02, 0.03]))
    results = []
    with m._editing():  # the first part of an edit made by "another thread": this one
        m.bodies[1].mass = 2.0
        reader = threading.Thread(target=lambda: results.append(sd.mass_matrix(m, q)))
        reader.start()
        reader.join(0.2)
        assert reader.is_alive()  # waiting for the edit to end
        m.bodies[1].com = np.array([0.1, 0.0, 0.0])
        m.bodies[1].inertia_com = np.diag([0.02, 0.02, 0.03])
    reader.join()
    assert np.array_equal(results[0], sd.mass_matrix(reference, q))


def test_results_read_later_keep_the_state_of_their_call():
    """The parts of a closed-chain result computed when first read (multipliers, constraint
    forces, ranks) come from the model state of the call, whatever edits come after it."""
    m = sd.models.four_bar_linkage()
    reference = sd.models.four_bar_linkage()
    rng = np.random.default_rng(5)
    y, yd = random_independent_state(m, rng, 0.6)
    q, v = sd.spanning_state(m, y, yd)
    tau = rng.normal(size=m.nv)
    for method in (None, "augmented", "embedding"):
        result = sd.constrained_forward_dynamics(m, q, v, tau, method=method)
        m.set_inertia(1, 5.0, (0.1, 0.0, 0.0), np.eye(3) * 0.05)
        expected = sd.constrained_forward_dynamics(reference, q, v, tau, method=method)
        assert np.array_equal(result.qdd, expected.qdd)
        assert np.array_equal(result.multipliers, expected.multipliers), method
        assert np.array_equal(result.generalized_constraint_force, expected.generalized_constraint_force)
        m = sd.models.four_bar_linkage()


def test_a_snapshot_cannot_be_edited():
    from soadyn.core.compile import snapshot
    m = _arm()
    s = snapshot(m)
    assert s is snapshot(s) and s.version == m.version
    for edit in (lambda: s.set_inertia("b", 2.0), lambda: s.add_frame("f", "b"),
                 lambda: setattr(s.bodies[1], "mass", 3.0), lambda: setattr(s, "gravity", (0, 0, -1))):
        with pytest.raises(TypeError, match="read-only snapshot"):
            edit()
    assert s.bodies[1].mass == 1.0 and m.bodies[1].mass == 1.0
    m.set_inertia("b", 2.0)  # the model itself: edited, and the snapshot keeps its state
    assert s.bodies[1].mass == 1.0 and snapshot(m).bodies[1].mass == 2.0
