"""The counts on closed-chain results say what they are: ``constraint_rank`` is the rank of
G_c, ``degrees_of_freedom`` is nv − rank G_c, on every method's result (the compiled direct
result, one state and a batch, included) and on the inverse-dynamics result; the former
``n_independent`` (the rank, under a name that read like the degrees of freedom) raises an
AttributeError that names both."""
import numpy as np
import pytest

import soadyn as sd
from soadyn.closed.forward import METHODS, CompiledDirectResult, ConstrainedDynamicsResult, solve_constrained

from conftest import urdfplus


@pytest.fixture(scope="module")
def six_bar():
    model = urdfplus("six_bar.urdf")
    q, v = sd.close_loops(model, np.full(model.nq, 0.3), np.full(model.nv, 0.1))
    return model, q, v


def _check(r, nv=5):
    # six_bar.urdf: 5 joints, two planar loops (5 rows of G_c, rank 2), 3 degrees of freedom
    assert (r.n_constraints, r.constraint_rank, r.degrees_of_freedom) == (5, 2, 3)
    assert r.constraint_rank + r.degrees_of_freedom == nv
    with pytest.raises(AttributeError, match="n_independent: removed.*constraint_rank.*degrees_of_freedom"):
        r.n_independent
    assert "constraint_rank=2 degrees_of_freedom=3" in repr(r)


@pytest.mark.parametrize("method", [None, *METHODS])
def test_constraint_rank_and_degrees_of_freedom(six_bar, method):
    model, q, v = six_bar
    r = sd.constrained_forward_dynamics(model, q, v, method=method)
    assert isinstance(r, CompiledDirectResult if method in (None, "direct") else ConstrainedDynamicsResult)
    _check(r)
    assert sd.cluster_tree(model).nyv == r.degrees_of_freedom  # the independent coordinates of embedding


def test_python_direct_method_result(six_bar):
    model, q, v = six_bar
    r = solve_constrained(model, q, v, np.zeros(model.nv), "direct")  # the KKT solve in Python
    assert type(r) is ConstrainedDynamicsResult
    _check(r)


def test_batched_compiled_direct_result(six_bar):
    """A batch of B = 3 states (B ≠ nv): one rank and one count of dof per state."""
    model, q, v = six_bar
    r = sd.constrained_forward_dynamics(model, np.array([q] * 3), np.array([v] * 3))
    assert r.constraint_rank.tolist() == [2, 2, 2]
    assert np.asarray(r.degrees_of_freedom).tolist() == [3, 3, 3]
    with pytest.raises(AttributeError, match="constraint_rank"):
        r.n_independent


def test_inverse_dynamics_result(six_bar):
    model, q, v = six_bar
    qdd = sd.constrained_forward_dynamics(model, q, v).qdd
    r = sd.constrained_inverse_dynamics(model, q, v, qdd)
    assert (r.n_constraints, r.constraint_rank, r.degrees_of_freedom) == (5, 2, 3)
    with pytest.raises(AttributeError, match="constraint_rank.*degrees_of_freedom"):
        r.n_independent
