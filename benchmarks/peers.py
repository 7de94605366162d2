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
