"""Shared cases for the operator-layer tests: random trees and tolerance checks."""
from __future__ import annotations

import numpy as np
from hypothesis import assume
from hypothesis import strategies as st

import soadyn as sd
from soadyn.models import random_tree

#: (number of bodies, seed, floating base) of a random tree (all joint types appear
#: once the tree has 8 or more bodies; see soadyn.models.random_tree)
trees = st.tuples(st.integers(1, 10), st.integers(0, 2**31 - 1), st.booleans())


#: identities are checked to 1e-10 (relative) on configurations whose mass matrix has at
#: most this condition number: near a gimbal or universal-joint singularity the
#: articulated quantities (D⁻¹, G, M⁻¹) are only as accurate as the conditioning allows
MAX_CONDITION = 1e5


def tree_state(case, with_velocity=False):
    n, seed, floating = case
    model = random_tree(n, seed, floating_base=floating)
    rng = np.random.default_rng(seed)
    for _ in range(20):
        q = sd.random_configuration(model, rng)
        if np.linalg.cond(mass_matrix(model, q)) <= MAX_CONDITION:
            break
    else:
        assume(False)
    if with_velocity:
        return model, q, rng.normal(size=model.nv)
    return model, q


def mass_matrix(model, q):
    """CRBA mass matrix into a zeroed buffer: the kernel writes only the blocks of related
    bodies (ancestor/descendant pairs) and leaves the others as found."""
    return sd.mass_matrix(model, q, out=np.zeros((model.nv, model.nv)))


def assert_close(actual, expected, tol=1e-10, what=""):
    """max |actual − expected| ≤ tol · max(1, max |expected|)."""
    actual = np.asarray(actual, dtype=float)
    expected = np.asarray(expected, dtype=float)
    assert actual.shape == expected.shape, (what, actual.shape, expected.shape)
    scale = max(1.0, float(np.abs(expected).max(initial=0.0)))
    err = float(np.abs(actual - expected).max(initial=0.0))
    assert err <= tol * scale, f"{what}: max error {err:.3e} (scale {scale:.3e})"


def body_block(X, k):
    return X[6 * k:6 * k + 6, 6 * k:6 * k + 6]
