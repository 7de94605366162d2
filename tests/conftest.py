"""Suite-wide settings, shared test cases and helpers (import them with
``from conftest import ...``).

Hypothesis runs derandomized so that CI and every developer see the same examples and
``main`` stays green for reasons the code controls; set ``SOADYN_HYPOTHESIS=explore`` to
draw fresh examples instead (new failures found that way become regression tests).

Tests are laid out like the package (tests/README.md): ``tests/core/`` tests ``soadyn.core``,
``tests/kernels/test_X.py`` the tree algorithm of ``soadyn/kernels/X.py``, ``tests/dynamics/``
what cuts across them, ``tests/closed/`` the closed-chain methods (``tests/closed/embedding/``
constraint embedding), ``tests/spec/`` the operator layer.
Independent truths come from closed forms, peer libraries (Pinocchio, when installed),
the dense operators of ``soadyn.spec`` and physical laws.
"""
from __future__ import annotations

import functools
import importlib.util
import os
import warnings

import numpy as np
import pytest
from hypothesis import assume, settings
from hypothesis import strategies as st

import soadyn as sd
from soadyn.closed.embedding.clusters import cluster_tree, random_independent_state
from soadyn.core import joints as jt
from soadyn.core import spatial as sp
from soadyn.models import random_rigid_inertia, random_tree

settings.register_profile("ci", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("SOADYN_HYPOTHESIS", "ci"))

HERE = os.path.dirname(os.path.abspath(__file__))

# =========================================================================== peers
_spec = importlib.util.spec_from_file_location("soadyn_benchmark_peers",
                                               os.path.join(HERE, "..", "benchmarks", "peers.py"))
peers = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(peers)
ROBOTS, swap_lin_ang = peers.ROBOTS, peers.swap_lin_ang


def pinocchio():
    """The pinocchio module, or skip the test when it is not installed."""
    return pytest.importorskip("pinocchio")


def robot_path(name):
    """Path of the example-robot-data robot ``name`` (skips when not installed)."""
    if peers.robots_dir() is None:
        pytest.skip("example-robot-data is not installed")
    return peers.robot_path(name)


def load_pair(name, floating=None):
    """(soadyn, Pinocchio) models of an example-robot-data robot (see ``ROBOTS``)."""
    pinocchio()
    robot_path(name)
    return peers.load_pair(name, floating)


def pinocchio_model(model):
    """The Pinocchio twin of a soadyn model built in code."""
    pinocchio()
    return peers.pinocchio_model(model)


# =========================================================================== URDF+ models
URDFPLUS = os.path.join(HERE, "..", "..", "shared", "models", "urdfplus")
if not os.path.isdir(URDFPLUS):
    URDFPLUS = "/work/shared/models/urdfplus"


def urdfplus(name, **kw):
    """A URDF+ model of ``../shared/models/urdfplus`` (``name`` with or without ``.urdf``)."""
    if not name.endswith(".urdf"):
        name += ".urdf"
    path = os.path.join(URDFPLUS, name)
    if not os.path.isfile(path):
        pytest.skip(f"{path} is not available")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the published rotor inertias violate the triangle inequality
        return sd.load_urdf(path, **kw)


#: closed chains with a guess of their closed configuration (None: a random one), shared by
#: the cut-joint and direct-method tests: ``CLOSED_CHAINS[name](rng) -> (model, guess)``
CLOSED_CHAINS = {
    "four_bar.urdf": lambda rng: (urdfplus("four_bar.urdf", gravity=(0.0, -9.81, 0.0)), rng.normal(size=3)),
    "six_bar.urdf": lambda rng: (urdfplus("six_bar.urdf", gravity=(0.0, -9.81, 0.0)), rng.normal(size=5)),
    "revolute_rotor_chain.urdf": lambda rng: (urdfplus("revolute_rotor_chain.urdf", gravity=(0.0, -9.81, 0.0)),
                                              rng.normal(size=6)),
    "rssr": lambda rng: (sd.models.rssr_linkage(), np.concatenate([[0.3], [0, 0, 0, 1], [0.2]])),
    "four_bar_chain": lambda rng: (sd.models.four_bar_chain(3, 2), rng.normal(size=11)),
}


# =========================================================================== closed forms
def sk(a):
    """The cross-product matrix of a 3-vector: sk(a) @ b = a × b."""
    return np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])


def double_pendulum_closed_form(m1, m2, l1, c1, c2, I1b, I2b, q):
    """[CDI18]'s example 2, coded from the document: the double pendulum of
    ``soadyn.models.double_pendulum`` (joints about x) at q = (θ1, θ2). Returns ``(M, r1, r2,
    s2)``: the mass matrix (2, 2) and, in world axes, the centres of mass r1, r2 from the
    first joint and s2 from the second."""
    ex = np.eye(3)[0]
    R1, R2 = sp.rotation_x(q[0]), sp.rotation_x(q[0] + q[1])
    s1, d2, s2 = R1 @ [0, 0, -c1], R1 @ [0, 0, -l1], R2 @ [0, 0, -c2]
    r1, r2 = s1, d2 + s2
    I1, I2 = R1 @ I1b @ R1.T, R2 @ I2b @ R2.T
    M = np.array([
        [ex @ (I1 + I2 - m1 * sk(r1) @ sk(r1) - m2 * sk(r2) @ sk(r2)) @ ex, ex @ (I2 - m2 * sk(r2) @ sk(s2)) @ ex],
        [ex @ (I2 - m2 * sk(s2) @ sk(r2)) @ ex, ex @ (I2 - m2 * sk(s2) @ sk(s2)) @ ex],
    ])
    return M, r1, r2, s2


# =========================================================================== random trees
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


def tree_motion(n, seed, floating):
    """(model, q, v, a, rng): the random tree ``random_tree(n, seed, floating_base=floating)``
    at a random configuration, velocity and acceleration (``rng`` continues the draws)."""
    model = random_tree(n, seed, floating_base=floating)
    rng = np.random.default_rng(seed)
    q = sd.random_configuration(model, rng)
    v, a = rng.normal(size=(2, model.nv))
    return model, q, v, a, rng


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


# =========================================================================== cut-joint pairs
# ``cut_joint_pair(kind, rng)`` builds the same two-body mechanism twice:
#
# * ``tree``: world —revolute— link1 —<joint of type kind>— link2 (a plain tree);
# * ``closed``: world —revolute— link1, world —free— link2, and a loop joint of type
#   ``kind`` between link1 (at the tree joint's placement) and link2.
#
# Both describe one physical system, so the closed chain's forward dynamics must reproduce
# the tree's (ABA) accelerations, and the loop's constraint force on link2 must be the force
# the tree joint transmits to link2 (Newton–Euler on the leaf body).

KINDS = ("weld", "revolute", "prismatic", "spherical", "universal", "cylindrical", "planar")


def random_rotation(rng):
    return sp.quaternion_to_matrix(sp.quaternion_from_rotation_vector(rng.normal(size=3)))


def unit(rng):
    a = rng.normal(size=3)
    return a / np.linalg.norm(a)


def _perpendicular(a, rng):
    b = np.cross(a, unit(rng))
    return b / np.linalg.norm(b)


def _inertia(rng):
    mass, com, inertia = random_rigid_inertia(rng)
    return dict(mass=mass, com=com, inertia=inertia)


def cut_joint_pair(kind, rng, gravity=(0.0, 0.0, -9.81)):
    """(tree, closed, joint_names_of_kind_in_tree)."""
    axis = unit(rng)
    axis2 = _perpendicular(axis, rng)
    place1 = (random_rotation(rng), rng.normal(size=3) * 0.3)
    placeK = (random_rotation(rng), rng.normal(size=3) * 0.3)
    in1, in2 = _inertia(rng), _inertia(rng)
    j1axis = unit(rng)

    tree = sd.Model(f"tree_{kind}", gravity=gravity)
    tree.add_body("link1", jt.Revolute(j1axis), None, place1, **in1)
    parent = "link1"
    if kind == "cylindrical":  # prismatic then revolute through a mass-less body
        tree.add_body("slider", jt.Prismatic(axis), parent, placeK)
        joint, parent, place = jt.Revolute(axis), "slider", None
    else:
        joint = {"weld": lambda: jt.Fixed(), "revolute": lambda: jt.Revolute(axis),
                 "prismatic": lambda: jt.Prismatic(axis), "spherical": lambda: jt.Spherical(),
                 "universal": lambda: jt.Universal(axis, axis2), "planar": lambda: jt.Planar(axis)}[kind]()
        place = placeK
    tree.add_body("link2", joint, parent, place, **in2)

    closed = sd.Model(f"closed_{kind}", gravity=gravity)
    closed.add_body("link1", jt.Revolute(j1axis), None, place1, **in1)
    closed.add_body("link2", jt.Free(), None, **in2)
    closed.add_loop("cut", kind, "link1", "link2", axis, predecessor_placement=placeK,
                    axis2=axis2 if kind == "universal" else None)
    return tree, closed


def map_state(tree, closed, q, v):
    """The closed model's state for the tree state (q, v)."""
    kin = sd.forward_kinematics(tree, q, v)
    b2 = tree.body_index("link2")
    qc = np.concatenate([q[:1], kin.positions[b2], sp.matrix_to_quaternion(kin.rotations[b2])])
    vc = np.concatenate([v[:1], kin.velocities[b2]])
    return qc, vc


def leaf_joint_force(tree, q, v, qdd, body):
    """Spatial force [n; f] the joint of leaf ``body`` transmits to it (body frame):
    Newton–Euler, f = M α + V ×* M V with α including the base acceleration −g."""
    kin = sd.forward_kinematics(tree, q, v, qdd, gravity=True)
    M = tree.bodies[body].inertia
    V = kin.velocities[body]
    return M @ kin.accelerations[body] + sp.cross_force(V, M @ V)


# =========================================================================== mechanisms
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
              "mit_humanoid_leg", "planar_leg_linkage"]


def tree_mass_matrix(model, q):
    """Spanning-tree mass matrix M(q) (nv, nv)."""
    return sd.mass_matrix(model.spanning_tree(), q)


def random_state(model, rng, scale=0.6):
    """(y, ẏ) with independent angles in ±scale rad and unit quaternions for free joints."""
    return random_independent_state(model, rng, scale)


def projection(model, y, yd):
    """(q, v, G, g, M, c, H) from the spanning tree: H = GᵀMG ([Chignoli23, §II-D])."""
    tree = cluster_tree(model)
    q = tree.spanning_positions(y.copy())
    G = tree.explicit_jacobian(q)
    v = G @ yd
    g = tree.explicit_bias(q, v)
    M = tree_mass_matrix(model, q)
    c = sd.bias_forces(model.spanning_tree(), q, v)
    return q, v, G, g, M, c, G.T @ M @ G


def random_states(model, rng, B):
    """B random states of a tree: Q (B, nq) from ``sd.random_configuration`` and V, A
    (B, nv) standard normal, drawn from ``rng`` in that order."""
    Q = np.array([sd.random_configuration(model, rng) for _ in range(B)])
    V, A = rng.normal(size=(2, B, model.nv))
    return Q, V, A


# =========================================================================== the bench robots against Pinocchio
#: (robot, floating base) of every bench robot (``ROBOTS``), fixed and floating base
PAIR_CASES = [(name, floating) for name in ROBOTS for floating in (False, True)]
PAIR_IDS = [f"{n}-{'floating' if f else 'fixed'}" for n, f in PAIR_CASES]
#: the agreement required of the bench robots with Pinocchio, relative (:func:`rel`)
PINOCCHIO_TOL = 1e-10


@pytest.fixture(scope="module", params=PAIR_CASES, ids=PAIR_IDS)
def pair(request):
    """The (soadyn, Pinocchio) models of one of ``PAIR_CASES`` (a ``PinPair`` of
    benchmarks/peers.py): Pinocchio is linear-first and its free-flyer velocity is [v; ω];
    states, forces and Jacobians are converted with soadyn.interop.pinocchio, joints
    matched by name."""
    name, floating = request.param
    return load_pair(name, floating)


def rel(x, y):
    """max |x − y| relative to max(1, max |y|)."""
    return np.abs(x - y).max() / max(1.0, np.abs(y).max())


def robot_states(pair, count=3, seed=0):
    """``count`` random (q, v, a, rng) of the pair's soadyn model, v and a standard normal."""
    rng = np.random.default_rng(seed)
    for _ in range(count):
        q = sd.random_configuration(pair.sd, rng)
        yield q, rng.normal(size=pair.sd.nv), rng.normal(size=pair.sd.nv), rng


def robot_pin_states(pair, count=3, seed=0):
    """(q, v, a) of :func:`robot_states` and their Pinocchio counterparts."""
    for q, v, a, _ in robot_states(pair, count, seed):
        yield q, v, a, pair.q_to_pin(q), pair.v_to_pin(v), pair.v_to_pin(a)


# =========================================================================== property checks on random trees
#: (n bodies, seed, floating base) of the hypothesis property checks: trees of 1 to 12 bodies mixing every
#: joint type
tree_params = st.tuples(st.integers(1, 12), st.integers(0, 2**31 - 1), st.booleans())
PROPERTY_SETTINGS = settings(max_examples=25, deadline=None)


def build_tree(params, gravity=(0.0, 0.0, -9.81)):
    """(model, q, v, a, rng) of one of ``tree_params``: a random tree, a random
    configuration and standard normal v and a."""
    n, seed, floating = params
    rng = np.random.default_rng(seed)
    model = random_tree(n, rng, floating_base=floating, gravity=gravity)
    q = sd.random_configuration(model, rng)
    v = rng.normal(size=model.nv)
    a = rng.normal(size=model.nv)
    return model, q, v, a, rng


def assume_well_conditioned(model, q, limit=1e8):
    """Forward dynamics loses about log10 cond(M) digits; random gimbal axes can put a state
    next to a coordinate singularity, where no 1e-9 agreement is possible for any solver."""
    assume(np.linalg.cond(sd.mass_matrix(model, q)) < limit)
