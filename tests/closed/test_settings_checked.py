"""The settings of the closed-chain forward dynamics are checked in every method: ``rank_tol``
(a relative tolerance in [ε, 1), honoured by the compiled direct method too), ``baumgarte``
(one shared check with ``simulate``), and a batch with one bad state names its entry."""
import re

import numpy as np
import pytest

import soadyn as sd
from soadyn.core import joints as jt
from soadyn.simulate import simulate

from conftest import urdfplus

METHODS = (None, "direct", "augmented", "projection", "embedding")


@pytest.fixture(scope="module")
def four_bar_state():
    model = urdfplus("four_bar.urdf", gravity=(0.0, -9.81, 0.0))
    rng = np.random.default_rng(3)
    q, v = sd.close_loops(model, rng.normal(size=model.nq), rng.normal(size=model.nv))
    return model, q, v


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("rank_tol", [np.nan, np.inf, -1.0, 0.0, 1.0, 10.0, 1e-20, "x", True, [1e-9]])
def test_rank_tol_is_refused_unless_a_relative_tolerance(four_bar_state, method, rank_tol):
    """NaN or 10 used to give the unconstrained q̈ (|G q̈ − 𝔘̊| = 7), −1 a wrong rank with
    projection; the direct method ignored rank_tol (even "x")."""
    model, q, v = four_bar_state
    with pytest.raises((TypeError, ValueError), match=r"rank_tol: expected a relative tolerance, a real number in "
                                                       r"\[2.22e-16, 1\), got " + re.escape(repr(rank_tol))):
        sd.constrained_forward_dynamics(model, q, v, None, method, rank_tol=rank_tol)


def _nearly_dependent_gears(ratio=6.0, mismatch=1e-2):
    """A link and a rotor on the world, both about z, tied by two gear rows of nearly the
    same ratio: q̇_rotor = N q̇_link and q̇_rotor = N (1 + mismatch) q̇_link. The rows'
    singular values differ by a factor ~1.6e-3: rank 2 (both joints locked) for rank_tol
    below that, rank 1 (one gear of a ratio between the two) above."""
    m = sd.Model("nearly_dependent_gears", gravity=(0.0, 0.0, -9.81))
    m.add_body("link", jt.Revolute([0, 0, 1]), None, mass=1.0, com=[0.3, 0.0, 0.0], inertia=np.diag([0.1, 0.1, 0.2]))
    m.add_body("rotor", jt.Revolute([0, 0, 1]), None, mass=0.1, inertia=np.diag([1e-3, 1e-3, 2e-3]))
    m.add_transmission("gear", ["rotor", "link"], [1.0, -ratio])
    m.add_transmission("gear_again", ["rotor", "link"], [1.0, -ratio * (1.0 + mismatch)])
    return m


@pytest.mark.parametrize("method", ["direct", "augmented", "projection"])
def test_every_cut_joint_method_honours_rank_tol(method):
    """The compiled direct method ignored rank_tol. Truth: rank 2 locks both joints
    (q̈ = 0); rank 1 is one gear, of a ratio N between 6 and 6.06 (which one depends on how
    the method picks the kept row): q̈_rotor = N q̈_link and, the gear's force doing no
    work, q̈_link = τ / (I_link + N² I_rotor) about the joint axis (I_link = 0.2 + 1·0.3²,
    I_rotor = 2e-3)."""
    model = _nearly_dependent_gears()
    q, v, tau = np.zeros(2), np.zeros(2), np.array([1.0, 0.0])
    locked = sd.constrained_forward_dynamics(model, q, v, tau, method)
    assert locked.constraint_rank == 2 and np.abs(locked.qdd).max() < 1e-8
    geared = sd.constrained_forward_dynamics(model, q, v, tau, method, rank_tol=1e-2)
    assert geared.constraint_rank == 1
    link, rotor = geared.qdd
    N = rotor / link
    assert 6.0 - 1e-9 <= N <= 6.06 + 1e-9
    assert abs(link - 1.0 / (0.2 + 0.09 + N * N * 2e-3)) < 1e-9


@pytest.mark.parametrize("method", [None, "direct", "augmented", "projection", "embedding"])
@pytest.mark.parametrize("baumgarte", [(np.nan, np.nan), (-1.0, 2.0), (1.0, np.inf), (1, 2, 3), "x", (True, 1.0),
                                       ("1", "2"), 3.0])
def test_baumgarte_is_refused_unless_two_finite_non_negative_gains(four_bar_state, method, baumgarte):
    """(nan, nan) used to give NaN q̈, negative gains were taken, (1, 2, 3) and "x" raised
    messages that did not name baumgarte; simulate shares the check."""
    model, q, v = four_bar_state
    match = r"baumgarte: expected two finite non-negative gains \(alpha, beta\) \[1/s\], got"
    with pytest.raises((TypeError, ValueError), match=match):
        sd.constrained_forward_dynamics(model, q, v, None, method, baumgarte=baumgarte)
    with pytest.raises((TypeError, ValueError), match=match):
        simulate(model, q, v, 0.01, dt=1e-3, baumgarte=baumgarte)


@pytest.mark.parametrize("method", ["direct", "embedding"])
def test_a_batch_with_one_bad_state_names_the_entry(four_bar_state, method):
    """Entry 2 of the batch is off the constraint manifold: the error names it (the
    embedding method did not)."""
    model, q, v = four_bar_state
    Q, V = np.tile(q, (4, 1)), np.tile(v, (4, 1))
    Q[2, 0] += 0.3
    with pytest.raises(sd.ConstraintError, match=r"^\(batch entry 2\) q: expected a state on the constraint manifold"):
        sd.constrained_forward_dynamics(model, Q, V, np.zeros((4, model.nv)), method)
