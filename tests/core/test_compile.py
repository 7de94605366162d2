"""One cache of derived data per model version: an edited model never meets data derived
from its earlier state (compiled arrays, constraint set, cluster tree, frame sets, ...)."""
import gc
import weakref

import numpy as np

import soadyn as sd
from soadyn import joints as jt


def _arm(extra_body=False, mass2=1.0, loop=False):
    m = sd.Model("arm")
    m.add_body("a", jt.Revolute("z"), mass=1.0, com=(0.3, 0, 0), inertia=np.diag([0.01, 0.02, 0.03]))
    m.add_body("b", jt.Revolute("y"), "a", (np.eye(3), [0.6, 0, 0]), mass=mass2, com=(0.2, 0, 0),
               inertia=np.diag([0.01, 0.03, 0.02]))
    m.add_body("c", jt.Revolute("y"), "b", (np.eye(3), [0.4, 0, 0]), mass=0.5, com=(0.2, 0, 0),
               inertia=np.diag([0.01, 0.01, 0.01]))
    if extra_body:
        m.add_body("d", jt.Prismatic("x"), "c", (np.eye(3), [0.4, 0, 0]), mass=0.3, inertia=np.eye(3) * 0.01)
    if loop:
        m.add_loop("closure", "revolute", "c", "world", axis="y",
                   predecessor_placement=(np.eye(3), [0.4, 0, 0]), successor_placement=(np.eye(3), [1.0, 0, 0]))
    return m


def test_edits_after_calls_give_fresh_results():
    q = np.array([0.3, -0.4, 0.5])
    m = _arm()
    sd.mass_matrix(m, q)
    sd.frame_jacobian(m, q, "c")
    v0 = m.version
    # add a body: sizes change, every function sees the new model
    m.add_body("d", jt.Prismatic("x"), "c", (np.eye(3), [0.4, 0, 0]), mass=0.3, inertia=np.eye(3) * 0.01)
    assert m.version > v0
    q4 = np.append(q, 0.1)
    assert np.array_equal(sd.mass_matrix(m, q4), sd.mass_matrix(_arm(extra_body=True), q4))
    assert np.array_equal(sd.operational_space_compliance(m, q4, "d"),
                          sd.operational_space_compliance(_arm(extra_body=True), q4, "d"))
    # change an inertia: by the setter and by assignment
    m2 = _arm()
    sd.aba(m2, q, np.zeros(3), np.ones(3))
    m2.set_inertia("b", 2.5, (0.2, 0, 0), np.diag([0.01, 0.03, 0.02]))
    fresh = _arm(mass2=2.5)
    assert np.array_equal(sd.aba(m2, q, np.zeros(3), np.ones(3)), sd.aba(fresh, q, np.zeros(3), np.ones(3)))
    m2.bodies[1].mass = 1.0
    assert np.array_equal(sd.mass_matrix(m2, q), sd.mass_matrix(_arm(), q))
    # add a loop: the constraint set is rebuilt
    m3 = _arm()
    assert sd.constraint_jacobian(m3, q).shape == (0, 3)
    m3.add_loop("closure", "revolute", "c", "world", axis="y",
                predecessor_placement=(np.eye(3), [0.4, 0, 0]), successor_placement=(np.eye(3), [1.0, 0, 0]))
    assert np.array_equal(sd.constraint_jacobian(m3, q), sd.constraint_jacobian(_arm(loop=True), q))


def test_model_data_cannot_be_edited_in_place():
    m = _arm()
    for array in (m.bodies[0].com, m.bodies[0].inertia_com, m.bodies[1].placement[1], m.joints[0].axis):
        assert not array.flags.writeable


def test_the_cache_keeps_no_model_alive():
    m = _arm()
    sd.mass_matrix(m, np.zeros(3))
    sd.operational_space_compliance(m, np.zeros(3), "c")
    ref = weakref.ref(m)
    del m
    gc.collect()
    assert ref() is None


def test_an_edit_during_the_build_leaves_no_stale_store(monkeypatch):
    # the fast paths trust model._derived without comparing versions: a store built from
    # the state before an edit made while it was being built must not be installed
    m = _arm()
    check = type(m).check_compilable

    def edit_while_building(model):
        check(model)
        if model is m and model.bodies[1].mass == 1.0:
            model.bodies[1].mass = 2.5  # another thread's edit, in the middle of the build
    monkeypatch.setattr(type(m), "check_compilable", edit_while_building)
    from soadyn.core.compile import derived
    derived(m)
    assert m._derived is None
    monkeypatch.undo()
    q = np.array([0.3, -0.4, 0.5])
    assert np.array_equal(sd.mass_matrix(m, q), sd.mass_matrix(_arm(mass2=2.5), q))
