"""The Delassus operator G = J M⁻¹ Jᵀ of contact points and the contact Jacobian products,
against Pinocchio's ``computeDelassusMatrix`` (CONTACT_3D constraints at the same points,
placement rotations equal to the contact frames) on example-robot-data robots, and
against the dense specification J M⁻¹ Jᵀ (frame Jacobians, mass matrix; on cluster models
J G_y H⁻¹ G_yᵀ Jᵀ with the cluster mass matrix H) on random trees and loop robots."""
import numpy as np
import pytest

import soadyn as sd
from conftest import load_pair, peers
from soadyn.closed.embedding.clusters import cluster_tree

TOL = 1e-10


def rel(x, y):
    return np.abs(x - y).max() / max(1.0, np.abs(y).max())


def unit_vectors(rng, k):
    n = rng.normal(size=(k, 3))
    return n / np.linalg.norm(n, axis=1, keepdims=True)


def world_points(model, q, bodies, rng):
    """A point near each body's origin, world coordinates (−1: near the world origin)."""
    R, p = sd.body_placements(model, q)
    return np.array([(p[b] if b >= 0 else np.zeros(3)) + rng.normal(scale=0.1, size=3) for b in bodies])


def dense_jacobian(model, q, contacts):
    """J (3k, nv): rows C_iᵀ (v_second(p_i) − v_first(p_i)) from each body's world-aligned
    Jacobian [ω; v_o] at its origin o, v_p = v_o + ω × (p − o)."""
    R, p = sd.body_placements(model, q)
    J = np.zeros((3 * len(contacts), model.nv))
    for i, (pair, point, C) in enumerate(zip(contacts.bodies, contacts.point, contacts.frame)):
        for sign, b in zip((-1.0, 1.0), pair):
            if b < 0:
                continue
            Jb = sd.frame_jacobian(model, q, model.bodies[b].name, reference="local_world_aligned")
            r = point - p[b]
            Jp = Jb[3:] - np.cross(r, Jb[:3].T).T  # v_o + ω × r = v_o − r × ω
            J[3 * i:3 * i + 3] += sign * C.T @ Jp
    return J


# --------------------------------------------------------------------------- Pinocchio
def pinocchio_delassus(pair, q, contacts):
    """Pinocchio's computeDelassusMatrix of contacts on the world: one CONTACT_3D per
    contact, joint1 the body's joint with the placement (R_jᵀ C, R_jᵀ(p − o_j)), joint2 the
    universe; its rows are joint1's point velocity in placement1's axes = σ."""
    pin = pytest.importorskip("pinocchio")
    m, pm, pd = pair.sd, pair.pm, pair.pd
    qp = pair.q_to_pin(q)
    pin.forwardKinematics(pm, pd, qp)
    cms, cds = pin.StdVec_RigidConstraintModel(), pin.StdVec_RigidConstraintData()
    for (first, second), point, C in zip(contacts.bodies, contacts.point, contacts.frame):
        assert first == -1
        jid = pm.getJointId(m.bodies[second].joint.name)
        oMi = pd.oMi[jid]
        placement = pin.SE3(oMi.rotation.T @ C, oMi.rotation.T @ (point - oMi.translation))
        cm = pin.RigidConstraintModel(pin.ContactType.CONTACT_3D, pm, jid, placement, 0, pin.SE3.Identity(),
                                      pin.ReferenceFrame.LOCAL)
        cms.append(cm)
        cds.append(cm.createData())
    pin.initConstraintDynamics(pm, pd, cms, cds)
    return pin.computeDelassusMatrix(pm, pd, qp, cms, cds, 0.0)


def pinocchio_two_body_delassus(pair, q, contacts):
    """J M⁻¹ Jᵀ from Pinocchio's own kinematics and mass matrix: J_i = C_iᵀ (J_second − J_first),
    each Pinocchio's LOCAL_WORLD_ALIGNED frame Jacobian of an operational frame added at the
    point (linear rows), in soadyn's velocity order."""
    pin = pytest.importorskip("pinocchio")
    m, pm = pair.sd, pair.pm.copy()
    pm_frames = []
    qp = pair.q_to_pin(q)
    pd = pm.createData()
    pin.forwardKinematics(pm, pd, qp)
    for i, (pair_bodies, point) in enumerate(zip(contacts.bodies, contacts.point)):
        ids = []
        for side, b in enumerate(pair_bodies):
            if b < 0:
                ids.append(None)
                continue
            jid = pm.getJointId(m.bodies[b].joint.name)
            oMi = pd.oMi[jid]
            ids.append(pm.addFrame(pin.Frame(f"contact{i}_{side}", jid, pin.SE3(np.eye(3), oMi.rotation.T @ (
                point - oMi.translation)), pin.FrameType.OP_FRAME)))
        pm_frames.append(ids)
    pd = pm.createData()
    pin.computeJointJacobians(pm, pd, qp)
    pin.framesForwardKinematics(pm, pd, qp)
    T = pair.v_permutation()
    J = np.zeros((3 * len(contacts), m.nv))
    for i, (ids, C) in enumerate(zip(pm_frames, contacts.frame)):
        for sign, fid in zip((-1.0, 1.0), ids):
            if fid is not None:
                J[3 * i:3 * i + 3] += sign * C.T @ pin.getFrameJacobian(pm, pd, fid, pin.LOCAL_WORLD_ALIGNED)[:3] @ T
    M = pin.crba(pm, pd, qp)
    M = np.triu(M) + np.triu(M, 1).T
    M = T.T @ M @ T
    return J @ np.linalg.solve(M, J.T)


@pytest.mark.parametrize("name", ["solo12", "talos", "ur5"])
def test_delassus_matches_pinocchio(name):
    pair = load_pair(name)
    rng = np.random.default_rng(3)
    for _ in range(2):
        q = sd.random_configuration(pair.sd, rng)
        contacts = peers.robot_contacts(pair, name, q, unit_vectors(rng, 8), friction=0.7)
        G = sd.delassus(pair.sd, q, contacts)
        assert G.shape == (3 * len(contacts),) * 2
        assert rel(G, pinocchio_delassus(pair, q, contacts)) < TOL


@pytest.mark.parametrize("name", ["ur5", "solo12"])
def test_two_body_contacts_match_pinocchio_kinematics(name):
    """Contacts between two bodies (J_i = J_second − J_first), against J M⁻¹ Jᵀ from
    Pinocchio's frame Jacobians and mass matrix."""
    pair = load_pair(name)
    m = pair.sd
    rng = np.random.default_rng(4)
    q = sd.random_configuration(m, rng)
    nb = m.nbodies
    pairs = [(-1, nb - 1), (1, nb - 1), (nb - 1, 2), (0, nb // 2)]
    points = world_points(m, q, [b for _, b in pairs], rng)
    contacts = sd.Contacts.from_points(m, pairs, points, unit_vectors(rng, len(pairs)))
    assert rel(sd.delassus(m, q, contacts), pinocchio_two_body_delassus(pair, q, contacts)) < TOL


# --------------------------------------------------------------------------- dense specification
def random_contacts(model, q, rng, k):
    """k contacts: on the world, between two bodies, two on one body, one at a body's origin."""
    nb = model.nbodies
    pairs = []
    for i in range(k):
        a, b = rng.choice(np.arange(-1, nb), size=2, replace=False)
        pairs.append((int(a), int(b)))
    pairs[0] = (-1, nb - 1)
    pairs[1] = (-1, nb - 1)  # two contacts on one body
    points = world_points(model, q, [b for _, b in pairs], rng)
    return sd.Contacts.from_points(model, pairs, points, unit_vectors(rng, k))


@pytest.mark.parametrize("seed", range(4))
def test_delassus_and_jacobian_products_match_dense_on_random_trees(seed):
    rng = np.random.default_rng(seed)
    model = sd.models.random_tree(7, seed, floating_base=bool(seed % 2))
    q = sd.random_configuration(model, rng)
    contacts = random_contacts(model, q, rng, 5)
    J = dense_jacobian(model, q, contacts)
    M = sd.mass_matrix(model, q)
    dense = J @ np.linalg.solve(M, J.T)
    assert rel(sd.delassus(model, q, contacts), dense) < TOL
    v = rng.normal(size=model.nv)
    lam = rng.normal(size=(5, 3))
    assert rel(sd.contact.contact_velocities(model, q, v, contacts), (J @ v).reshape(5, 3)) < TOL
    assert rel(sd.contact.contact_impulse(model, q, contacts, lam), J.T @ lam.reshape(-1)) < TOL
    assert rel(sd.contact.impulse_response(model, q, contacts, lam), np.linalg.solve(M, J.T @ lam.reshape(-1))) < TOL


@pytest.mark.parametrize("robot", ["mini_cheetah", "mit_humanoid"])
def test_delassus_on_cluster_models_matches_the_embedded_dense_form(robot):
    """G = (J G_y) H⁻¹ (J G_y)ᵀ with H = G_yᵀ M G_y, by C-EFPA; and Δv = G_y H⁻¹ G_yᵀ Jᵀλ."""
    model = getattr(sd.models, robot)()
    rng = np.random.default_rng(5)
    tree = cluster_tree(model)
    y = 0.3 * rng.normal(size=tree.nyq)
    q, _ = sd.spanning_state(model, y, None)
    feet = [f for f in model.frames if "foot" in f.name.lower()][:4]
    assert feet
    R, p = sd.body_placements(model, q)
    points = np.array([R[f.body] @ f.translation + p[f.body] for f in feet])
    contacts = sd.Contacts.from_points(model, [("world", f.body) for f in feet], points, unit_vectors(rng, len(feet)))
    J = dense_jacobian(model, q, contacts) @ tree.explicit_jacobian(q)
    H = sd.cluster_mass_matrix(model, y, q=q)
    assert rel(sd.delassus(model, q, contacts), J @ np.linalg.solve(H, J.T)) < TOL
    lam = rng.normal(size=(len(feet), 3))
    dv = sd.contact.impulse_response(model, q, contacts, lam)
    assert rel(dv, tree.explicit_jacobian(q) @ np.linalg.solve(H, J.T @ lam.reshape(-1))) < TOL


def test_delassus_refuses_contacts_of_another_model_or_version():
    a, b = sd.models.random_tree(4, 0), sd.models.random_tree(4, 1)
    q = sd.neutral(a)
    contacts = sd.Contacts.from_points(a, [("world", 3)], [[0.0, 0.0, 0.1]], [[0.0, 0.0, 1.0]])
    with pytest.raises(ValueError, match="contacts"):
        sd.delassus(b, sd.neutral(b), contacts)
    with pytest.raises(TypeError, match="contacts"):
        sd.delassus(a, q, "feet")
    with pytest.raises(ValueError, match="impulses"):
        sd.contact.contact_impulse(a, q, contacts, np.zeros((2, 3)))
    a.gravity = (0.0, 0.0, -1.0)  # an edit: a new version
    with pytest.raises(ValueError, match="version"):
        sd.delassus(a, q, contacts)


def test_delassus_checks_its_arguments_after_a_first_call():
    # the second call takes the fast path (this thread's scratch exists): it must refuse
    # what the first call would have refused
    a, b = sd.models.random_tree(4, 0), sd.models.random_tree(4, 1)
    q = sd.neutral(a)
    contacts = sd.Contacts.from_points(a, [("world", 3)], [[0.0, 0.0, 0.1]], [[0.0, 0.0, 1.0]])
    G = sd.delassus(a, q, contacts)
    assert np.array_equal(sd.delassus(a, q, contacts), G)
    sd.delassus(b, sd.neutral(b), sd.Contacts.from_points(b, [("world", 3)], [[0.0, 0.0, 0.1]], [[0.0, 0.0, 1.0]]))
    with pytest.raises(ValueError, match="contacts"):
        sd.delassus(b, sd.neutral(b), contacts)
    with pytest.raises(ValueError, match="q"):
        sd.delassus(a, q[:-1], contacts)
    with pytest.raises(ValueError, match="q"):
        sd.delassus(a, np.full_like(q, np.nan), contacts)
    a.gravity = (0.0, 0.0, -1.0)  # an edit: a new version
    with pytest.raises(ValueError, match="version"):
        sd.delassus(a, q, contacts)


def test_delassus_on_two_separate_trees_far_from_the_origin():
    # two floating chains with no common body: the blocks between their contacts are zero;
    # the contacts 1 km from the world origin (the gather works about a contact point, so
    # moments stay of the robot's size), one contact between the two chains
    rng = np.random.default_rng(3)
    model = sd.Model("two chains")
    for c in ("a", "b"):
        model.add_body(f"{c}0", sd.joints.Free(), None, mass=1.0, inertia=np.eye(3))
        for k in (1, 2):
            model.add_body(f"{c}{k}", sd.joints.Revolute(rng.normal(size=3)), f"{c}{k - 1}",
                           np.array([[1, 0, 0, 0.2], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1.0]]),
                           mass=0.5, inertia=0.1 * np.eye(3))
    q = sd.random_configuration(model, rng)
    for c, base in (("a", 0), ("b", 3)):
        q[model.bodies[base].joint.q_index:][:3] = [1000.0, 0.0, 0.0] if c == "a" else [1000.0, 0.5, 0.0]
    pairs = [("world", "a2"), ("world", "b2"), ("a1", "b1")]
    idx = [(-1 if a == "world" else model.body_index(a), model.body_index(b)) for a, b in pairs]
    points = world_points(model, q, [b for _, b in idx], rng)
    contacts = sd.Contacts.from_points(model, pairs, points, unit_vectors(rng, 3))
    G = sd.delassus(model, q, contacts)
    J = dense_jacobian(model, q, contacts)
    dense = J @ np.linalg.solve(sd.mass_matrix(model, q), J.T)
    assert rel(G, dense) < TOL
    assert np.all(G[0:3, 3:6] == 0.0) and np.all(G[3:6, 0:3] == 0.0)
    assert np.array_equal(G, G.T)


def test_kernel_arrays_are_writeable_copies_equal_to_the_read_only_fields():
    # the fast path passes Contacts._kernel (Numba types a read-only array slowly): they must
    # equal the public arrays, which stay read-only, and share no memory with them
    a = sd.models.random_tree(4, 0)
    contacts = sd.Contacts.from_points(a, [("world", 3), (1, 2)], [[0.0, 0.0, 0.1], [0.1, 0.2, 0.3]],
                                       [[0.0, 0.0, 1.0], [0.0, 1.0, 0.0]])
    for public, copy in zip((contacts.bodies, contacts.point, contacts.frame), contacts._kernel):
        assert not public.flags.writeable and copy.flags.writeable and copy.flags.c_contiguous
        assert copy.dtype == public.dtype and np.array_equal(copy, public)
        assert not np.shares_memory(copy, public)
    assert contacts._kernel is contacts._kernel  # made once


def test_delassus_kernel_refuses_tables_of_another_layout():
    from soadyn.core.layout import pack_parts
    from soadyn.core.status import BAD_SHAPE
    from soadyn.kernels.contact.delassus import delassus_kernel
    a = sd.models.random_tree(4, 0)
    q = sd.neutral(a)
    contacts = sd.Contacts.from_points(a, [("world", 3)], [[0.0, 0.0, 0.1]], [[0.0, 0.0, 1.0]])
    G = np.empty((3, 3))
    cbody, cpoint, cframe = contacts._kernel
    assert delassus_kernel(np.zeros(3), q, cbody, cpoint, cframe, G) == BAD_SHAPE
    sd.delassus(a, q, contacts)  # builds the store
    c = a._derived.compiled
    small = pack_parts((c.mi, np.zeros(1, dtype=np.int64)), (c.mf, np.zeros(a._derived.workspace_size), np.zeros(1)))
    assert delassus_kernel(small, q, cbody, cpoint, cframe, G) == BAD_SHAPE  # scratch too short for k = 1
