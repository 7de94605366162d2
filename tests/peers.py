"""Helpers to compare soadyn with Pinocchio on example-robot-data models.

Pinocchio orders spatial vectors linear-first and its free-flyer velocity as [v; ω];
URDF continuous joints are (cos θ, sin θ) there. These helpers map states and results
between the two libraries by joint name.
"""
from __future__ import annotations

import os
import sysconfig

import numpy as np
import pytest

pin = pytest.importorskip("pinocchio")

ROBOTS = {
    "panda": ("panda_description/urdf/panda.urdf", False),
    "ur5": ("ur_description/urdf/ur5_robot.urdf", False),
    "solo12": ("solo_description/robots/solo12.urdf", True),
    "hyq": ("hyq_description/robots/hyq_no_sensors.urdf", True),
    "talos": ("talos_data/robots/talos_reduced.urdf", True),
    "g1": ("g1_description/urdf/g1_29dof_rev_1_0.urdf", True),
}


def robots_dir():
    for base in (sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]):
        d = os.path.join(base, "cmeel.prefix", "share", "example-robot-data", "robots")
        if os.path.isdir(d):
            return d
    pytest.skip("example-robot-data is not installed")


def robot_path(name):
    return os.path.join(robots_dir(), ROBOTS[name][0])


def swap_lin_ang(x, axis=0):
    """Reorder 6-vectors (or 6-row blocks) between linear-first and angular-first."""
    x = np.asarray(x)
    idx = [3, 4, 5, 0, 1, 2]
    return np.take(x, idx, axis=axis)


class PinPair:
    """A soadyn model and the matching Pinocchio model with index maps."""

    def __init__(self, sd_model, pin_model):
        self.sd, self.pm = sd_model, pin_model
        self.pd = pin_model.createData()
        self.joints = []  # (kind, sd_q, sd_v, pin_q, pin_v, nq_sd, nv)
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
    import soadyn as sd
    rel, default_floating = ROBOTS[name]
    floating = default_floating if floating is None else floating
    path = os.path.join(robots_dir(), rel)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = sd.load_urdf(path, floating_base=floating)
    pm = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer()) if floating else pin.buildModelFromUrdf(path)
    return PinPair(m, pm)
