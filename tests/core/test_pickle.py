"""A model pickles (so Dask and multiprocessing can ship it): the description travels, what
is derived from it (compiled arrays, workspaces, constraint sets, cluster trees) is dropped
and rebuilt by the unpickled model, which gives the same results as the original."""
import pickle

import cloudpickle
import numpy as np
import pytest

import soadyn as sd
from soadyn.core.compile import derived


def _roundtrip(model):
    copy = pickle.loads(pickle.dumps(model))
    assert copy is not model and copy._derived is None
    return copy


def test_a_used_tree_pickles_without_its_caches_and_gives_the_same_results():
    model = sd.models.random_tree(8, 3, floating_base=True)
    rng = np.random.default_rng(0)
    q = sd.random_configuration(model, rng)
    v, tau = rng.normal(size=(2, model.nv))
    expected = (sd.aba(model, q, v, tau), sd.rnea(model, q, v, tau), sd.mass_matrix(model, q),
                sd.frame_jacobian(model, q, model.frames[-1].name), sd.integrate(model, q, v, 0.1))
    assert model._derived is not None  # the calls built the cache; pickling leaves it behind
    copy = _roundtrip(model)
    got = (sd.aba(copy, q, v, tau), sd.rnea(copy, q, v, tau), sd.mass_matrix(copy, q),
           sd.frame_jacobian(copy, q, copy.frames[-1].name), sd.integrate(copy, q, v, 0.1))
    for e, g in zip(expected, got):
        assert np.array_equal(e, g)
    assert model._derived is not None  # the original keeps its cache


def test_the_unpickled_model_owns_its_parts_and_keeps_them_read_only():
    model = _roundtrip(sd.models.double_pendulum())
    q = np.array([0.3, -0.2])
    before = sd.mass_matrix(model, q)
    version = model.version
    for array in (model.bodies[0].com, model.bodies[0].inertia_com, model.bodies[1].placement[1],
                  model.joints[0].axis, model.frames[0].rotation):
        assert not array.flags.writeable
    model.bodies[1].mass = 2 * model.bodies[1].mass  # an edit of a part reaches its (new) model
    assert model.version > version
    assert not np.array_equal(sd.mass_matrix(model, q), before)


@pytest.mark.parametrize("factory", [sd.models.four_bar_linkage, sd.models.mini_cheetah, sd.models.tello])
def test_closed_chains_pickle_with_constraints_and_clusters(factory):
    model = factory()
    rng = np.random.default_rng(1)
    y, yd = sd.closed.embedding.random_independent_state(model, rng, 0.3)
    q, v = sd.spanning_state(model, y, yd)
    tau = rng.normal(size=model.nv)
    tau_ind = rng.normal(size=len(yd))
    expected = (sd.constrained_forward_dynamics(model, q, v, tau).qdd, sd.cluster_aba(model, y, yd, tau_ind),
                sd.constraint_jacobian(model, q), sd.aba(model.spanning_tree(), q, v, tau))
    assert {"constraint_set", "cluster_tree"} <= set(derived(model)._memo)
    copy = _roundtrip(model)
    got = (sd.constrained_forward_dynamics(copy, q, v, tau).qdd, sd.cluster_aba(copy, y, yd, tau_ind),
           sd.constraint_jacobian(copy, q), sd.aba(copy.spanning_tree(), q, v, tau))
    for e, g in zip(expected, got):
        assert np.array_equal(e, g)
    assert copy.spanning_tree() is not model.spanning_tree()


def test_a_pickled_spanning_tree_is_a_model_of_its_own():
    model = sd.models.four_bar_linkage()
    tree = _roundtrip(model.spanning_tree())
    assert not tree.has_constraints and tree.nv == model.nv
    q = sd.neutral(model)
    assert np.array_equal(sd.mass_matrix(tree, q), sd.mass_matrix(model.spanning_tree(), q))
    version = model.version
    tree.bodies[0].mass = 3.0  # editing the copy leaves the original model alone
    assert model.version == version


def test_user_constraints_with_lambdas_pickle_through_cloudpickle():
    model = sd.models.double_pendulum()
    model.add_constraint(sd.HolonomicConstraint(
        "sum", lambda q, t: np.array([q[0] + q[1]]), jacobian=lambda q, t: np.array([[1.0, 1.0]]),
        bias=lambda q, v, t: np.zeros(1)))
    copy = cloudpickle.loads(cloudpickle.dumps(model))
    q, v = np.array([0.3, -0.3]), np.array([0.2, -0.2])
    assert np.array_equal(sd.constraint_jacobian(copy, q), sd.constraint_jacobian(model, q))
    assert np.array_equal(sd.constrained_forward_dynamics(copy, q, v).qdd,
                          sd.constrained_forward_dynamics(model, q, v).qdd)
