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


def _readers_and_an_editor(make, body, calls, seed=0, edit=None):
    """Run ``calls`` (name -> function of the model returning a list of results, one per
    public call it makes: an array or a tuple of arrays) on one model from one thread each
    while another thread sets the inertia of ``body`` back and forth between two states
    (or, with ``edit`` = (apply, states), calls ``apply(model, state)`` for the two
    ``states`` in turn); returns (results of neither state by name, public calls made by
    name)."""
    rng = np.random.default_rng(seed)
    model = make()
    if edit is None:
        states = _inertias(model, body, rng)

        def apply(m, state):
            m.set_inertia(body, *state)
    else:
        apply, states = edit
    reference = []
    for state in states:
        m = make()
        apply(m, state)
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
            apply(model, states[k])

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
        "centroidal_momentum_matrix": lambda model: [sd.centroidal_momentum_matrix(model, q) for q in Q[:4]],
        "centroidal_momentum": lambda model: [sd.centroidal_momentum(model, Q, V)],
        "kinetic_energy": lambda model: [np.array(sd.kinetic_energy(model, q, v)) for q, v in zip(Q[:4], V[:4])],
        "coriolis_matrix": lambda model: [sd.coriolis_matrix(model, Q[0], V[0])],
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


def _robot_on_the_ground():
    """A floating three-body chain with a sphere on each body, over the ground."""
    m = sd.Model("spheres")
    m.add_body("base", sd.joints.Free(), mass=2.0, inertia=np.diag([0.02, 0.03, 0.04]))
    m.add_body("upper", sd.joints.Revolute("y"), "base", (np.eye(3), [0.3, 0, 0]), mass=1.0, com=(0.2, 0, 0),
               inertia=np.diag([0.01, 0.02, 0.03]))
    m.add_body("lower", sd.joints.Revolute("x"), "upper", (np.eye(3), [0.4, 0, 0]), mass=0.5, com=(0.1, 0, 0),
               inertia=np.diag([0.01, 0.01, 0.02]))
    for body in ("base", "upper", "lower"):
        m.add_collision(body, sd.geometry.Sphere(0.15))
    m.add_ground()
    return m


#: two placements of the joint of body "upper" in "base", the model's own first: contacts,
#: Delassus operator and centroidal map differ between them
UPPER_PLACEMENTS = ((np.eye(3), np.array([0.3, 0.0, 0.0])), (np.eye(3), np.array([0.35, 0.05, -0.08])))


def _place_upper(model, placement):
    model.bodies[1].placement = placement


def test_contact_and_centroidal_calls_see_one_model_state_while_another_thread_moves_a_joint():
    """detect_contacts, delassus (on one snapshot with the contacts it detected, and on the
    model itself), contact_velocities and centroidal_momentum_matrix, while another thread
    moves a joint's placement back and forth."""
    from soadyn.core.compile import snapshot
    m = _robot_on_the_ground()
    q = sd.neutral(m)
    q[2] = 0.1  # the base's sphere in the ground, the others near it
    v = np.random.default_rng(3).normal(size=m.nv)
    stale = []

    def contacts_and_delassus(model):
        s = snapshot(model)  # the contacts are valid for the snapshot of their version
        c = sd.detect_contacts(s, q, margin=0.2)
        return [(c.point, c.depth, c.normal), sd.delassus(s, q, c), sd.contact.contact_velocities(s, q, v, c)]

    def on_the_model(model):
        c = sd.detect_contacts(model, q, margin=0.2)
        try:
            return [(c.point, c.depth), sd.delassus(model, q, c)]
        except ValueError as e:  # edited between the two calls: refused, never a mix
            assert "edited since" in str(e)
            stale.append(1)
            return []

    calls = {"detect_contacts + delassus on a snapshot": contacts_and_delassus,
             "detect_contacts + delassus on the model": on_the_model,
             "centroidal_momentum_matrix": lambda model: [sd.centroidal_momentum_matrix(model, q)],
             "collision_placements": lambda model: [sd.collision_placements(model, q)]}
    mixed, made = _readers_and_an_editor(_robot_on_the_ground, 1, calls, edit=(_place_upper, UPPER_PLACEMENTS))
    assert not mixed, f"results of neither state (of {made} calls): {mixed}"
    assert made["detect_contacts + delassus on a snapshot"] > 0 and made["centroidal_momentum_matrix"] > 0


def test_contacts_of_a_model_are_valid_for_its_snapshot_of_the_same_version():
    """Contacts.check compares by model identity and version: a snapshot stands for its
    model at the snapshot's version, both ways; after an edit both are refused."""
    from soadyn.core.compile import snapshot
    m = _robot_on_the_ground()
    q = sd.neutral(m)
    q[2] = 0.1
    c = sd.detect_contacts(m, q)
    s = snapshot(m)
    assert len(c) and np.array_equal(sd.delassus(s, q, c), sd.delassus(m, q, c))
    c_s = sd.detect_contacts(s, q)
    assert np.array_equal(sd.delassus(m, q, c_s), sd.delassus(m, q, c))
    other = _robot_on_the_ground()
    with pytest.raises(ValueError, match="another model"):
        sd.delassus(other, q, c)
    with pytest.raises(ValueError, match="another model"):
        sd.delassus(snapshot(other), q, c_s)
    _place_upper(m, UPPER_PLACEMENTS[1])
    for contacts in (c, c_s):
        with pytest.raises(ValueError, match="edited since"):
            sd.delassus(m, q, contacts)
        with pytest.raises(ValueError, match="edited since"):
            sd.delassus(snapshot(m), q, contacts)
    with pytest.raises(ValueError, match="edited since"):  # the old snapshot is of the old version
        sd.delassus(s, q, sd.detect_contacts(m, q))


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
