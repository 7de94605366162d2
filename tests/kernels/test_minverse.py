"""The mass-matrix inverse (soadyn.kernels.minverse, the innovations recursion [I − HψK]* D⁻¹ [I − HψK];
soadyn.kernels.ltdl, the sparse LᵀDL factors) and log det M: M⁻¹M = I with M from the CRBA, the dense
operators, numpy's slogdet, batches, and Pinocchio's computeMinverse."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings

import soadyn as sd
from soadyn import operators
from soadyn.models import random_tree

from conftest import assert_close, load_pair, mass_matrix, pinocchio, tree_state, trees

SETTINGS = settings(max_examples=12, deadline=None)


@SETTINGS
@given(case=trees)
def test_mass_matrix_inverse_and_log_det(case):
    """M⁻¹ M = I with M from the CRBA, by both methods (the sparse LᵀDL factors and the
    innovations recursion); M⁻¹ = [I − HψK]* D⁻¹ [I − HψK] (the dense operators); log det M
    = Σ log det D(k)."""
    model, q = tree_state(case)
    M = mass_matrix(model, q)
    for method in ("ltdl", "innovations"):
        Minv = sd.mass_matrix_inverse(model, q, method=method)
        assert_close(Minv @ M, np.eye(model.nv), what=f"M^-1 M ({method})")
        assert np.array_equal(Minv, Minv.T)
        assert_close(Minv, operators.sko(model, q).mass_matrix_inverse(), tol=1e-9, what=f"operator M^-1 ({method})")
    sign, logdet = np.linalg.slogdet(M)
    assert sign > 0
    assert abs(sd.log_det_mass_matrix(model, q) - logdet) <= 1e-10 * max(1.0, abs(logdet))


def test_mass_matrix_inverse_batch():
    model = random_tree(9, 4, floating_base=True)
    rng = np.random.default_rng(4)
    Q = np.stack([sd.random_configuration(model, rng) for _ in range(5)])
    batch = sd.mass_matrix_inverse(model, Q)
    assert batch.shape == (5, model.nv, model.nv)
    for b in range(5):
        assert_close(batch[b], sd.mass_matrix_inverse(model, Q[b]), tol=1e-13)
    out = np.empty_like(batch)
    assert sd.mass_matrix_inverse(model, Q, out=out) is out


@pytest.mark.parametrize("robot", ["panda", "solo12"])
def test_mass_matrix_inverse_matches_pinocchio(robot):
    """M⁻¹ against Pinocchio's computeMinverse on example-robot-data models."""
    pin = pinocchio()
    pair = load_pair(robot)
    rng = np.random.default_rng(0)
    T = pair.v_permutation()
    for _ in range(3):
        q = sd.random_configuration(pair.sd, rng)
        Minv_pin = pin.computeMinverse(pair.pm, pair.pd, pair.q_to_pin(q))
        Minv_pin = np.triu(Minv_pin) + np.triu(Minv_pin, 1).T
        for method in ("ltdl", "innovations"):
            assert_close(sd.mass_matrix_inverse(pair.sd, q, method=method), T.T @ Minv_pin @ T, tol=1e-9,
                         what=f"{robot} ({method})")
