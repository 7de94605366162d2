"""Matching Pinocchio models for soadyn models, for the benchmarks and the tests.

Pinocchio (PyPI ``pin``) orders spatial vectors linear-first and a free-flyer velocity
as [v; ω]; URDF continuous joints are (cos θ, sin θ) there. :class:`PinPair` holds a
soadyn model and the equivalent Pinocchio model and maps states and results between
them by joint name. Nothing here is needed to use soadyn.
"""
from __future__ import annotations

import os
import sysconfig
import warnings

import numpy as np

__all__ = ["ROBOTS", "robots_dir", "robot_path", "swap_lin_ang", "PinPair", "load_pair",
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


class PinPair:
    """A soadyn model and the matching Pinocchio model with index maps."""

    def __init__(self, sd_model, pin_model):
        self.sd, self.pm = sd_model, pin_model
        self.pd = pin_model.createData()
        self.joints = []  # (kind, sd_q, sd_v, pin_q, pin_v, nq_sd, nv, nq_pin)
        for j in sd_model.joints:
            if j.nv == 0:
                continue
            jid = pin_model.getJointId(j.name)
            if jid >= pin_model.njoints:
                raise KeyError(f"joint {j.name} not in the Pinocchio model")
            pj = pin_model.joints[jid]
            self.joints.append((j.kind, j.q_index, j.v_index, pj.idx_q, pj.idx_v, j.nq, j.nv, pj.nq))

    def q_to_pin(self, q):
        out = np.zeros(self.pm.nq)
        for kind, sq, sv, pq, pv, nq, nv, pnq in self.joints:
            if pnq == 2 and nq == 1:  # continuous: (cos, sin)
                out[pq], out[pq + 1] = np.cos(q[sq]), np.sin(q[sq])
            else:
                out[pq:pq + pnq] = q[sq:sq + nq]
        return out

    def v_to_pin(self, v):
        out = np.zeros(self.pm.nv)
        for kind, sq, sv, pq, pv, nq, nv, pnq in self.joints:
            blk = v[sv:sv + nv]
            out[pv:pv + nv] = np.concatenate([blk[3:], blk[:3]]) if kind == "free" else blk
        return out

    def v_from_pin(self, vp):
        out = np.zeros(self.sd.nv)
        for kind, sq, sv, pq, pv, nq, nv, pnq in self.joints:
            blk = vp[pv:pv + nv]
            out[sv:sv + nv] = np.concatenate([blk[3:], blk[:3]]) if kind == "free" else blk
        return out

    def v_permutation(self):
        """Matrix T with v_pin = T v_sd."""
        T = np.zeros((self.pm.nv, self.sd.nv))
        for k in range(self.sd.nv):
            e = np.zeros(self.sd.nv)
            e[k] = 1.0
            T[:, k] = self.v_to_pin(e)
        return T


def load_pair(name, floating=None):
    """soadyn and Pinocchio models of the example-robot-data robot ``name`` (see ROBOTS)."""
    import pinocchio as pin

    import soadyn as sd
    rel, default_floating = ROBOTS[name]
    floating = default_floating if floating is None else floating
    path = robot_path(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # placeholder inertias in some description files
        m = sd.load_urdf(path, floating_base=floating)
    pm = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer()) if floating else pin.buildModelFromUrdf(path)
    return PinPair(m, pm)


def pinocchio_model(model):
    """A Pinocchio model equivalent to a soadyn ``model`` built in code (revolute,
    prismatic and free joints), for generated models such as serial chains."""
    import pinocchio as pin
    pm = pin.Model()
    pm.gravity = pin.Motion(np.asarray(model.gravity), np.zeros(3))
    joint_ids = {}
    for b in model.bodies:
        j = b.joint
        if j.kind in ("revolute", "continuous"):
            jm = pin.JointModelRevoluteUnaligned(*j.axis)
        elif j.kind == "prismatic":
            jm = pin.JointModelPrismaticUnaligned(*j.axis)
        elif j.kind == "free":
            jm = pin.JointModelFreeFlyer()
        else:
            raise ValueError(f"model: no Pinocchio joint for a {j.kind} joint ({j.name!r})")
        parent = 0 if b.parent < 0 else joint_ids[b.parent]
        jid = pm.addJoint(parent, jm, pin.SE3(b.placement[0], b.placement[1]), j.name)
        pm.appendBodyToJoint(jid, pin.Inertia(b.mass, b.com, b.inertia_com), pin.SE3.Identity())
        joint_ids[b.index] = jid
    return PinPair(model, pm)


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
