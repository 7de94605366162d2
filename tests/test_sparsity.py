"""The mass-matrix pattern predicted from the topology ([Jain12, §7], sd.mass_matrix_sparsity):
every entry it calls zero is exactly zero at random configurations (random trees and
real robots), and on generic random trees it is exactly the numeric pattern."""
import numpy as np
import pytest

import soadyn as sd
from conftest import ROBOTS, load_pair
from soadyn import spatial as sp
from soadyn.models import random_rigid_inertia


def generic_tree(n, seed):
    """A tree of n bodies with random parents, 1-dof joints (revolute or prismatic) about
    random axes, random placements and random inertias: no zero of M beyond the topology's."""
    rng = np.random.default_rng(seed)
    m = sd.Model(f"generic-{seed}")
    for i in range(n):
        parent = None if i == 0 else f"b{rng.integers(0, i)}"
        axis = rng.normal(size=3)
        axis /= np.linalg.norm(axis)
        joint = sd.joints.Revolute(axis) if rng.random() < 0.7 else sd.joints.Prismatic(axis)
        mass, com, inertia = random_rigid_inertia(rng)
        m.add_body(f"b{i}", joint, parent, (sp.exp3(rng.normal(size=3)), rng.normal(size=3)), mass=mass, com=com,
                   inertia=inertia)
    return m


@pytest.mark.parametrize("seed", range(4))
def test_prediction_is_the_numeric_pattern_of_generic_trees(seed):
    m = generic_tree(10, seed)
    pattern = sd.mass_matrix_sparsity(m)
    assert not pattern.all()  # some branches
    rng = np.random.default_rng(seed)
    for _ in range(3):
        M = sd.mass_matrix(m, sd.random_configuration(m, rng))
        assert np.array_equal(M != 0.0, pattern)


def test_multi_dof_joints_have_zeros_the_topology_cannot_see():
    """A free joint's own block (the composite inertia of everything it carries, [ω; v]
    coordinates) has physical zeros — m·1 in its linear part, m[c]× with a zero diagonal in
    its coupling part — that the topology cannot predict: they are marked possible."""
    m = sd.models.random_tree(9, 0)
    assert m.bodies[0].joint.kind == "free" and m.bodies[0].joint.v_index == 0
    pattern = sd.mass_matrix_sparsity(m)
    M = sd.mass_matrix(m, sd.random_configuration(m, np.random.default_rng(0)))
    assert np.all(M[~pattern] == 0.0)
    for r, c in ((3, 4), (3, 5), (4, 5), (0, 3), (1, 4), (2, 5)):  # zero up to rounding
        assert abs(M[r, c]) <= 1e-12 * np.abs(M).max() and pattern[r, c]


@pytest.mark.parametrize("name", sorted(ROBOTS))
def test_predicted_zeros_are_zero_on_robots(name):
    m = load_pair(name).sd
    pattern = sd.mass_matrix_sparsity(m)
    assert pattern.shape == (m.nv, m.nv) and np.array_equal(pattern, pattern.T) and pattern.diagonal().all()
    rng = np.random.default_rng(1)
    for _ in range(3):
        M = sd.mass_matrix(m, sd.random_configuration(m, rng))
        assert np.all(M[~pattern] == 0.0)


def test_branches_are_unrelated():
    """Two legs of a floating robot: their joints do not couple, each couples with the base."""
    m = load_pair("solo12").sd
    pattern = sd.mass_matrix_sparsity(m)
    legs = [[b.joint.v_index for b in m.bodies if b.joint.nv == 1 and b.name.startswith(p)] for p in ("FL", "FR")]
    assert legs[0] and legs[1]
    assert not pattern[np.ix_(legs[0], legs[1])].any()
    assert pattern[np.ix_(legs[0], range(6))].all()
