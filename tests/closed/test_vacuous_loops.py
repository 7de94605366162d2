"""Loops that constrain nothing, or part of what their rows say: rank decisions relative to
the scale of each row of G_c, in every method, and nothing printed by LAPACK or Numba.

A spherical loop placed at the centre of a spherical joint, between the joint's two bodies,
adds no constraint (its three rows of G_c are rounding, ~1e-17): the answer is the tree's
ABA. A revolute loop there removes two of the joint's three freedoms: the answer is the tree
with a revolute joint in place of the spherical one."""
import numpy as np
import pytest

import soadyn as sd
from soadyn import spatial as sp
from soadyn.core import joints as jt

from conftest import assert_close

METHODS = (None, "direct", "projection", "augmented", "embedding")
PLACE = (sp.exp3(np.array([0.3, -0.2, 0.5])), np.array([0.5, 0.1, 0.0]))  # the joint's placement in A
AXIS = np.array([0.0, 0.0, 1.0])  # the revolute loop's axis, in the joint frame


def _arm(second_joint):
    """world —revolute (y)— A —``second_joint`` at PLACE— B."""
    m = sd.Model("arm", gravity=(0.0, 0.0, -9.81))
    m.add_body("A", jt.Revolute([0, 1, 0]), None, mass=1.0, com=[0.2, 0.0, 0.0], inertia=np.diag([0.1, 0.2, 0.3]))
    m.add_body("B", second_joint, "A", PLACE, mass=2.0, com=[0.1, 0.2, -0.3], inertia=np.diag([0.3, 0.2, 0.25]))
    return m


def _looped(kind):
    m = _arm(jt.Spherical())
    m.add_loop("vacuous" if kind == "spherical" else "partial", kind, "A", "B", AXIS, predecessor_placement=PLACE)
    return m


def _only_compile_notices(err):
    """The lines of ``err`` other than soadyn's first-use compile notice (kernels not yet
    in Numba's cache print one; ``make test`` precompiles them)."""
    return [line for line in err.splitlines() if line.strip() and not line.startswith("soadyn: compiling kernels")]


@pytest.mark.parametrize("method", METHODS)
def test_a_loop_that_constrains_nothing_gives_the_tree_dynamics(method, capfd):
    """Every method used to count the rounding rows as rank 3 (q̈ 28.6 from the tree's,
    projection 50; augmented failed), and embedding printed LAPACK's "DGESDD parameter
    number 10 had an illegal value" (an SVD of the empty ∂φ/∂q_d)."""
    model = _looped("spherical")
    rng = np.random.default_rng(7)
    q, v, tau = sd.random_configuration(model, rng), rng.normal(size=model.nv), rng.normal(size=model.nv)
    capfd.readouterr()
    res = sd.constrained_forward_dynamics(model, q, v, tau, method)
    assert res.constraint_rank == 0 and res.degrees_of_freedom == model.nv
    assert_close(res.qdd, sd.aba(model.spanning_tree(), q, v, tau), 1e-10, f"{method} q̈")
    assert_close(res.multipliers, np.zeros(3), 1e-10, f"{method} λ")
    out, err = capfd.readouterr()
    assert not _only_compile_notices(out + err), out + err


@pytest.mark.parametrize("method", METHODS)
def test_a_partly_vacuous_loop_gives_the_constraints_it_makes(method):
    """A revolute loop at the spherical joint's centre: its three translation rows are
    rounding, its two rotation rows leave the rotation about AXIS. Truth: the tree with a
    revolute joint about AXIS at PLACE (ABA), at the matching state."""
    model, tree = _looped("revolute"), _arm(jt.Revolute(AXIS))
    theta, rates, tau = np.array([0.4, -0.7]), np.array([0.3, 1.1]), np.array([0.2, -0.5])
    q = np.concatenate([[theta[0]], sp.quaternion_from_rotation_vector(theta[1] * AXIS)])
    v = np.concatenate([[rates[0]], rates[1] * AXIS])
    res = sd.constrained_forward_dynamics(model, q, v, np.concatenate([[tau[0]], tau[1] * AXIS]), method)
    a = sd.aba(tree, theta, rates, tau)
    assert res.constraint_rank == 2
    assert_close(res.qdd, np.concatenate([[a[0]], a[1] * AXIS]), 1e-9, f"{method} q̈")


@pytest.mark.parametrize("method", METHODS)
def test_a_vacuous_loop_beside_a_real_one_changes_nothing(method):
    """A four-bar with a spherical loop on its crank joint's axis (between the crank and
    the world: rows that are rounding) has the four-bar's dynamics: every row of G_c of
    the vacuous loop is dropped and the four-bar's are ranked among themselves."""
    plain = sd.models.four_bar_linkage()
    looped = sd.models.four_bar_linkage()
    on_axis = (np.eye(3), np.array([0.0, 0.2, 0.0]))  # the crank hinges about y at the origin
    looped.add_loop("vacuous", "spherical", "world", "crank", predecessor_placement=on_axis,
                    successor_placement=on_axis)
    rng = np.random.default_rng(2)
    q, v = sd.close_loops(plain, sd.neutral(plain) + 0.3, rng.normal(size=plain.nv))
    tau = rng.normal(size=plain.nv)
    expected = sd.constrained_forward_dynamics(plain, q, v, tau, "projection")
    res = sd.constrained_forward_dynamics(looped, q, v, tau, method)
    assert res.constraint_rank == expected.constraint_rank
    assert_close(res.qdd, expected.qdd, 1e-9, f"{method} q̈")
