"""The mass matrix (soadyn.kernels.crba: the composite-rigid-body algorithm and the JᵀMJ sum) against
Pinocchio's crba on the bench robots, and symmetric positive definite, the two methods equal and ½vᵀMv the
kinetic energy on random trees (every joint type)."""
from __future__ import annotations

import numpy as np
from hypothesis import given

import soadyn as sd

from conftest import PINOCCHIO_TOL, PROPERTY_SETTINGS, build_tree, pinocchio, rel, robot_states, tree_params


def test_mass_matrix(pair):
    pin = pinocchio()
    m, pm, pd = pair.sd, pair.pm, pair.pd
    T = pair.v_permutation()
    for q, _, _, _ in robot_states(pair, seed=2):
        Mp = pin.crba(pm, pd, pair.q_to_pin(q)).copy()
        Mp = np.triu(Mp) + np.triu(Mp, 1).T  # Pinocchio fills the upper triangle
        ref = T.T @ Mp @ T
        assert rel(sd.mass_matrix(m, q), ref) < PINOCCHIO_TOL
        assert rel(sd.mass_matrix(m, q, method="jtmj"), ref) < PINOCCHIO_TOL


@PROPERTY_SETTINGS
@given(tree_params)
def test_mass_matrix_spd_and_methods_agree(params):
    model, q, v, a, rng = build_tree(params)
    M = sd.mass_matrix(model, q)
    assert np.allclose(M, M.T, atol=1e-12 * np.abs(M).max())
    assert np.linalg.eigvalsh(M).min() > 0
    assert np.allclose(sd.mass_matrix(model, q, method="jtmj"), M, rtol=1e-10, atol=1e-10 * np.abs(M).max())
    # kinetic energy is ½ vᵀ M v
    assert np.isclose(sd.kinetic_energy(model, q, v), 0.5 * v @ M @ v, rtol=1e-10)
