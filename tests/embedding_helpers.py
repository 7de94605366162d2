"""Shared helpers for the constraint-embedding tests: mechanisms and independent truths
computed from the spanning tree alone (seed 004 §II: projection method)."""
from __future__ import annotations

import functools
import os


import soadyn as sd
from soadyn.closed.clusters import cluster_tree, random_independent_state

URDFPLUS = os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared", "models", "urdfplus")
if not os.path.isdir(URDFPLUS):
    URDFPLUS = "/work/shared/models/urdfplus"


def urdfplus(name):
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the published rotor inertias violate the triangle inequality
        return sd.load_urdf(os.path.join(URDFPLUS, name + ".urdf"))


@functools.lru_cache(maxsize=None)
def mechanism(name):
    """Built-in robots (code) and URDF+ mechanisms by name (cached: models are not mutated)."""
    if name.startswith("urdf:"):
        return urdfplus(name[5:])
    if name == "geared_chain":
        return sd.models.geared_chain(5)
    if name == "belt_chain":
        return sd.models.belt_chain(6)
    if name == "crank_rocker":  # a Grashof four-bar: the crank turns fully, no change points
        return sd.models.four_bar_linkage()
    if name == "four_bar_chain":
        return sd.models.four_bar_chain(3, 2)
    if name == "rssr":
        return sd.models.rssr_linkage()
    return getattr(sd.models, name)()


MECHANISMS = ["urdf:revolute_rotor_chain", "urdf:four_bar", "urdf:six_bar", "crank_rocker", "four_bar_chain", "rssr",
              "mini_cheetah", "mit_humanoid", "tello", "jvrc1_humanoid", "geared_chain", "belt_chain",
              "mit_humanoid_leg"]


def tree_mass_matrix(model, q):
    """Spanning-tree mass matrix M(q) (nv, nv)."""
    return sd.mass_matrix(model, q)


def random_state(model, rng, scale=0.6):
    """(y, ẏ) with independent angles in ±scale rad and unit quaternions for free joints."""
    return random_independent_state(model, rng, scale)


def projection(model, y, yd):
    """(q, v, G, g, M, c, H) from the spanning tree: H = GᵀMG (seed 004 §II-D)."""
    tree = cluster_tree(model)
    q = tree.spanning_positions(y.copy())
    G = tree.explicit_jacobian(q)
    v = G @ yd
    g = tree.explicit_bias(q, v)
    M = tree_mass_matrix(model, q)
    c = sd.bias_forces(model, q, v)
    return q, v, G, g, M, c, G.T @ M @ G
