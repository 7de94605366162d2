"""The O(N) spatial-operator products of [CDI18] (soadyn.kernels.spo): φx, φ*x, ψx, ψ*x and Ψ_A x against
the dense operators of soadyn.operators."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings

from soadyn import operators
from soadyn.dynamics import spo
from soadyn.models import random_tree

from conftest import assert_close, tree_state, trees

SETTINGS = settings(max_examples=12, deadline=None)


@SETTINGS
@given(case=trees)
def test_spo_products(case):
    """φx, φ*x, ψx, ψ*x by [CDI18]'s O(N) algorithms equal the dense SPOs."""
    model, q = tree_state(case)
    S = operators.sko(model, q)
    x = np.random.default_rng(case[1]).normal(size=(model.nbodies, 6))
    for name in ("phi", "psi"):
        dense = getattr(S, name)
        assert_close(spo.spo_product(model, q, x, name).ravel(), dense @ x.ravel(), what=name)
        assert_close(spo.spo_product(model, q, x.ravel(), name, adjoint=True), dense.T @ x.ravel(),
                     what=name + "*")


@pytest.mark.parametrize("k", [1, 3, 6])
def test_influence_products(k):
    """[CDI18]'s z = Ψ_A x and z = Ψ_Aᵀ x for an arbitrary block-diagonal A."""
    model = random_tree(9, 7 + k)
    rng = np.random.default_rng(k)
    A = rng.normal(size=(model.nbodies, k, k))
    x = rng.normal(size=(model.nbodies, k))
    Psi = operators.influence_resolvent(model, A)
    assert_close(spo.influence_product(model, A, x).ravel(), Psi @ x.ravel())
    assert_close(spo.influence_product(model, A, x.ravel(), transpose=True), Psi.T @ x.ravel())
