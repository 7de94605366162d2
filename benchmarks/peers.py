"""Matching Pinocchio models for soadyn models, for the benchmarks and the tests.

Pinocchio (PyPI ``pin``) orders spatial vectors linear-first and a free-flyer velocity
as [v; ω]; URDF continuous joints are (cos θ, sin θ) there. :class:`PinPair` holds a
soadyn model and the equivalent Pinocchio model and maps states and results between
them by joint name with the public :mod:`soadyn.interop.pinocchio`. Nothing here is
needed to use soadyn.
"""
from __future__ import annotations

import os
import sysconfig
import warnings

import numpy as np

from soadyn.interop import pinocchio as sdpin

__all__ = ["ROBOTS", "robots_dir", "robot_path", "swap_lin_ang", "coal_geometry", "PinPair", "load_pair",
           "pinocchio_model"]

#: example-robot-data models used for cross-checks: (path under robots/, floating base)
ROBOTS = {
    "panda": ("panda_description/urdf/panda.urdf", False),
    "ur5": ("ur_description/urdf/ur5_robot.urdf", False),
    "solo12": ("solo_description/robots/solo12.urdf", True),
    "hyq": ("hyq_description/robots/hyq_no_sensors.urdf", True),
    "talos": ("talos_data/robots/talos_reduced.urdf", True),
    "g1": ("g1_description/urdf/g1_29dof_rev_1_0.urdf", True),
}


def robots_dir():
    """The example-robot-data ``robots`` directory, or None when it is not installed."""
    for base in (sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]):
        d = os.path.join(base, "cmeel.prefix", "share", "example-robot-data", "robots")
        if os.path.isdir(d):
            return d
    return None


def robot_path(name):
    d = robots_dir()
    if d is None:
        raise FileNotFoundError("example-robot-data is not installed (pip install example-robot-data)")
    return os.path.join(d, ROBOTS[name][0])


def swap_lin_ang(x, axis=0):
    """Reorder 6-vectors (or 6-row blocks) between linear-first and angular-first."""
    return np.take(np.asarray(x), [3, 4, 5, 0, 1, 2], axis=axis)


def coal_geometry(coal, shape):
    """coal's geometry of a soadyn shape (:mod:`soadyn.core.shapes`): the same sizes (coal's
    are full lengths too), a plane as the half-space z ≤ 0, a convex mesh as coal's convex
    hull of the hull vertices soadyn made."""
    from soadyn.core.shapes import BOX, CAPSULE, CYLINDER, ELLIPSOID, PLANE, SPHERE
    k = shape.kind
    if k == PLANE:
        return coal.Halfspace(np.array([0.0, 0.0, 1.0]), 0.0)
    if k == SPHERE:
        return coal.Sphere(shape.radius)
    if k == CAPSULE:
        return coal.Capsule(shape.radius, shape.length)
    if k == CYLINDER:
        return coal.Cylinder(shape.radius, shape.length)
    if k == BOX:
        return coal.Box(*shape.size)
    if k == ELLIPSOID:
        return coal.Ellipsoid(*shape.radii)
    points = coal.StdVec_Vec3s()
    for v in shape.vertices:
        points.append(np.array(v, dtype=float))
    return coal.Convex.convexHull(points, False, None)


class PinPair:
    """A soadyn model and the matching Pinocchio model; the state maps are those of
    :mod:`soadyn.interop.pinocchio` (joints matched by name)."""

    def __init__(self, sd_model, pin_model):
        self.sd, self.pm = sd_model, pin_model
        self.pd = pin_model.createData()
        sdpin.v_to_pinocchio(sd_model, np.zeros(sd_model.nv), pin_model)  # raises for unmatched joints

    def q_to_pin(self, q):
        return sdpin.q_to_pinocchio(self.sd, q, self.pm)

    def v_to_pin(self, v):
        return sdpin.v_to_pinocchio(self.sd, v, self.pm)

    def v_from_pin(self, vp):
        return sdpin.v_from_pinocchio(self.sd, vp, self.pm)

    def v_permutation(self):
        """Matrix T with v_pin = T v_sd."""
        return self.v_to_pin(np.eye(self.sd.nv)).T

    def parameter_columns(self):
        """The columns of Pinocchio's regressors (10 per joint, its joint order) in the order of
        soadyn's (10 per body, body order): ``Y_pin[:, cols]`` has soadyn's columns. Needs every
        soadyn body to move with its own Pinocchio joint of the same name (as for a URDF both
        load: fixed links are merged into their parents in both); else a ValueError."""
        m, pm = self.sd, self.pm
        if m.nbodies != pm.njoints - 1 or not all(pm.existJointName(b.joint.name) for b in m.bodies):
            raise ValueError(f"{m.name!r}: its {m.nbodies} bodies do not match Pinocchio's {pm.njoints - 1} joints "
                             "one to one by joint name")
        return np.concatenate([10 * (pm.getJointId(b.joint.name) - 1) + np.arange(10) for b in m.bodies])


def load_pair(name, floating=None):
    """soadyn and Pinocchio models of the example-robot-data robot ``name`` (see ROBOTS)."""
    import pinocchio as pin

    import soadyn as sd
    rel, default_floating = ROBOTS[name]
    floating = default_floating if floating is None else floating
    path = robot_path(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # placeholder inertias in some description files
        # the tree, as Pinocchio's parser builds it without mimic=True (panda's finger mimic)
        m = sd.load_urdf(path, floating_base=floating, mimic="ignore", collisions=False)  # the dynamics only
    pm = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer()) if floating else pin.buildModelFromUrdf(path)
    return PinPair(m, pm)


def pinocchio_model(model):
    """A Pinocchio model equivalent to a soadyn ``model`` built in code, for generated
    models such as serial chains (:func:`soadyn.interop.pinocchio.to_pinocchio`; for a
    closed-chain model, of its spanning tree — see :func:`pinocchio_loop_constraints`)."""
    return PinPair(model, sdpin.to_pinocchio(model.spanning_tree()))


def pinocchio_loop_constraints(pair):
    """Pinocchio's constraint models for the loop joints of ``pair.sd``: one
    ``RigidConstraintModel`` CONTACT_3D per loop anchoring the loop's two node frames to
    each other (LOCAL reference, Baumgarte gains zero), and their datas, in Pinocchio's
    ``StdVec_`` containers. A 3-D anchor keeps only the translation rows of a loop joint:
    for a revolute loop of a planar mechanism the rotation rows are redundant, so the
    dynamics are the same — callers compare q̈ to check that this holds."""
    import pinocchio as pin
    model, pm = pair.sd, pair.pm
    cmodels = pin.StdVec_RigidConstraintModel()
    cdatas = pin.StdVec_RigidConstraintData()

    def anchor(frame_name):
        f = model.frame(frame_name)
        jid = 0 if f.body < 0 else pm.getJointId(model.bodies[f.body].joint.name)
        return jid, pin.SE3(np.asarray(f.rotation), np.asarray(f.translation))

    for lp in model.loops:
        if lp.kind not in ("revolute", "spherical"):
            raise ValueError(f"loop {lp.name!r}: a {lp.kind} loop joint is not a 3-D point anchor")
        j1, p1 = anchor(lp.predecessor)
        j2, p2 = anchor(lp.successor)
        cm = pin.RigidConstraintModel(pin.ContactType.CONTACT_3D, pm, j1, p1, j2, p2, pin.ReferenceFrame.LOCAL)
        cm.m_baumgarte_parameters.Kp = 0.0
        cm.m_baumgarte_parameters.Kd = 0.0
        cmodels.append(cm)
        cdatas.append(cm.createData())
    return cmodels, cdatas


def robot_contacts(pair, name, q, normals, friction=1.0):
    """Contacts on the world for a robot standing: solo12's four feet, talos's four sole
    corners per foot (±0.1 m, ±0.05 m in the sole frame), ur5's tool and a point of its
    forearm; unit world ``normals`` (k, 3). A :class:`soadyn.Contacts` at q."""
    import soadyn as sd
    m = pair.sd
    R, p = sd.body_placements(m, q)

    def at(frame, offset=np.zeros(3)):
        f = m.frame(frame)
        return f.body, R[f.body] @ (f.rotation @ offset + f.translation) + p[f.body]

    if name == "solo12":
        ends = [at(n) for n in ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")]
    elif name == "talos":
        corners = [np.array([sx * 0.1, sy * 0.05, 0.0]) for sx in (-1, 1) for sy in (-1, 1)]
        ends = [at(s, c) for s in ("left_sole_link", "right_sole_link") for c in corners]
    else:
        ends = [at(m.frames[-1].name), at(m.bodies[2].name, np.array([0.1, 0.02, 0.0]))]
    return sd.Contacts.from_points(m, [("world", b) for b, _ in ends], np.array([pt for _, pt in ends]),
                                   np.asarray(normals, dtype=float)[:len(ends)], friction=friction)


def pinocchio_cone_constraints(friction):
    """Pinocchio's constraint models for a bare contact problem (G, g, μ, R) of k = len(friction)
    contacts: one PointContactConstraintModel per contact (on a free body of its own, only
    to size the problem) with its Coulomb coefficient set by ``setFriction`` (what the
    solvers read; assigning ``.set`` does not change it), in StdVec containers."""
    import pinocchio as pin
    model = pin.Model()
    for i in range(len(friction)):
        j = model.addJoint(0, pin.JointModelFreeFlyer(), pin.SE3.Identity(), f"body{i}")
        model.appendBodyToJoint(j, pin.Inertia.FromBox(1.0, 1.0, 1.0, 1.0), pin.SE3.Identity())
    cms, cds = pin.StdVec_ConstraintModel(), pin.StdVec_ConstraintData()
    for i, mu in enumerate(friction):
        c = pin.PointContactConstraintModel(model, i + 1, pin.SE3.Identity(), 0, pin.SE3.Identity())
        c.setFriction(float(mu))
        cms.append(pin.ConstraintModel(c))
        cds.append(cms[-1].createData())
    return cms, cds


def robot_states(robots, seed=0):
    """The robots as pairs (:func:`load_pair`) and one random state of each, in both
    libraries' conventions: the namespace of a timing worker, {P, q, v, T, Q, V} each keyed
    by robot (q, v, τ soadyn's; Q, V Pinocchio's)."""
    import soadyn as sd

    rng = np.random.default_rng(seed)
    P, q, v, Q, V, T = {}, {}, {}, {}, {}, {}
    for robot in robots:
        pair = P[robot] = load_pair(robot)
        q[robot] = sd.random_configuration(pair.sd, rng)
        v[robot], T[robot] = rng.normal(size=(2, pair.sd.nv))
        Q[robot], V[robot] = pair.q_to_pin(q[robot]), pair.v_to_pin(v[robot])
    return dict(P=P, q=q, v=v, Q=Q, V=V, T=T)
