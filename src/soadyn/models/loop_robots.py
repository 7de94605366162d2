"""The benchmark robots of [Chignoli23] (§IX, Fig. 8) with their actuation sub-mechanisms.

Parameters are the published ones of the generalized_rbda project (ROAM Lab, MIT
License, Copyright (c) 2023 MatthewChignoli; the same numbers as the URDF+ files in
``../shared/models/urdfplus/``), built here in code:

* :func:`mini_cheetah` — MIT Mini Cheetah, every joint driven by a geared rotor
  (12 geared-rotor clusters, 18 DoF);
* :func:`mit_humanoid` — MIT Humanoid, geared rotors and the knee–ankle parallel belt
  transmission (a 4-body cluster per leg, 24 DoF); :func:`mit_humanoid_leg` one leg;
* :func:`tello` — UIUC Tello with the MIT Humanoid's arms, hip and knee–ankle
  differentials given as implicit constraints φ(q) = 0 on their joints (24 DoF);
* :func:`jvrc1_humanoid` — JVRC-1 with geared transmissions (38 DoF);
* :func:`geared_chain` and :func:`belt_chain` — the uniform n-link chains actuated by
  geared transmissions (GT) and by parallel belt transmissions (PBT).

Four-bar linkages are in :mod:`soadyn.models.closed_chains`.

Rotor joints are marked ``independent = False`` (the link joints are the independent
coordinates, as in URDF+); couplings follow the URDF+ rule (:class:`soadyn.core.constraints.Coupling`): ratio × (rates
from the common ancestor to the driven link) = (rates from it to the rotor).
"""
from __future__ import annotations

import warnings

import numpy as np

from ..core import joints as jt
from ..core import spatial as sp
from ..core.constraints import symbolic_constraint
from ..core.model import Model

__all__ = ["mini_cheetah", "mit_humanoid", "mit_humanoid_leg", "tello", "jvrc1_humanoid", "geared_chain",
           "belt_chain"]

_AXES = {"x": (1.0, 0.0, 0.0), "y": (0.0, 1.0, 0.0), "z": (0.0, 0.0, 1.0)}


def _inertia(ixx, iyy, izz, ixy=0.0, ixz=0.0, iyz=0.0):
    return np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])


def _flip_y(com, I):
    """Mirror a body's inertial parameters through the xz plane (left ↔ right)."""
    com = np.array(com, dtype=float) * (1.0, -1.0, 1.0)
    F = np.diag([1.0, -1.0, 1.0])
    return com, F @ I @ F


def _add(m, name, parent, axis, xyz, rpy, mass, com, inertia, joint_name, independent=True):
    j = jt.Revolute(_AXES.get(axis, axis))
    j.independent = independent
    with warnings.catch_warnings():
        # some published rotor inertias (JVRC-1: 2, 2, 5 ·10⁻⁵ kg m²) violate the triangle
        # inequality; they are kept as published so the results compare with [Chignoli23]
        warnings.simplefilter("ignore", UserWarning)
        m.add_body(name, j, parent, (sp.rpy_to_matrix(rpy), np.asarray(xyz, dtype=float)), mass=mass,
                   com=com, inertia=inertia, joint_name=joint_name, strict_inertia=False)


def _rotor(m, name, parent, axis, xyz, rpy, mass, inertia, joint_name, drives, ratio, couple=True):
    """A rotor body and (``couple``: now; else once the link ``drives`` is added) its coupling."""
    _add(m, name, parent, axis, xyz, rpy, mass, (0.0, 0.0, 0.0), inertia, joint_name, independent=False)
    if couple:
        m.add_coupling(f"{drives}_transmission", drives, name, float(ratio))


# --------------------------------------------------------------------------- Mini Cheetah
def mini_cheetah():
    """MIT Mini Cheetah with its 12 rotors (Katz et al. 2019; [Chignoli23, Fig. 8c]).

    Floating body, 4 legs × (abduction, hip, knee), each joint driven through a geared
    rotor (ratios 6, 6, 9.33); 25 bodies, 13 clusters, 18 independent velocities.
    """
    m = Model("mini_cheetah")
    m.add_body("Floating Base", jt.Free(), None, mass=3.3, inertia=_inertia(0.011253, 0.036203, 0.042673),
               joint_name="base_to_floating_base")
    abad_I = _inertia(381e-6, 560e-6, 444e-6, 58e-6, 0.45e-6, 0.95e-6)
    hip_I = _inertia(1983e-6, 2103e-6, 408e-6, 245e-6, 13e-6, 1.5e-6)
    knee_I = _inertia(6e-6, 248e-6, 245e-6)
    rotor_x, rotor_y = _inertia(63e-6, 33e-6, 33e-6), _inertia(33e-6, 63e-6, 33e-6)
    legs = (("FR", 1, -1), ("FL", 1, 1), ("HR", -1, -1), ("HL", -1, 1))
    flip = (0.0, 0.0, np.pi)
    for leg, fx, sy in legs:
        abad_com, abad_in = (0.0, 0.036, 0.0), abad_I
        hip_com, hip_in = (0.0, 0.016, -0.02), hip_I
        if sy < 0:
            abad_com, abad_in = _flip_y(abad_com, abad_I)
            hip_com, hip_in = _flip_y(hip_com, hip_I)
        a, h, k = f"{leg}_abad_link", f"{leg}_hip_link", f"{leg}_knee_link"
        _add(m, a, "Floating Base", "x", (0.19 * fx, 0.049 * sy, 0.0), (0, 0, 0), 0.54, abad_com, abad_in,
             f"torso_to_{leg}_abad_j")
        _rotor(m, f"{leg}_abad_rotor", "Floating Base", "x", (0.125 * fx, 0.049 * sy, 0.0), (0, 0, 0), 0.055,
               rotor_x, f"torso_to_{leg}_abad_rotor_j", a, 6.0)
        _add(m, h, a, "y", (0.0, 0.062 * sy, 0.0), flip, 0.634, hip_com, hip_in, f"{leg}_abad_to_hip_j")
        _rotor(m, f"{leg}_hip_rotor", a, "y", (0.0, 0.04 * sy, 0.0), flip, 0.055, rotor_y,
               f"{leg}_abad_to_hip_rotor_j", h, 6.0)
        _add(m, k, h, "y", (0.0, 0.0, -0.209), (0, 0, 0), 0.064, (0.0, 0.0, -0.061), knee_I, f"{leg}_hip_to_knee_j")
        _rotor(m, f"{leg}_knee_rotor", h, "y", (0.0, 0.0, 0.0), (0, 0, 0), 0.055, rotor_y,
               f"{leg}_hip_to_knee_rotor_j", k, 9.33)
        m.add_frame(f"{leg}_foot", k, (np.eye(3), np.array([0.0, 0.0, -0.195])))
    return m


# --------------------------------------------------------------------------- MIT Humanoid
# right side: (link, parent, axis, xyz, rpy, mass, com, (ixx, iyy, izz, ixy, ixz, iyz), joint)
_MIT_RIGHT_LEG = [
    ("right_hip_rz_link", "Floating Base", "z", (-0.00565, -0.082, -0.05735), (0, -0.174533, 0), 0.84563,
     (-0.064842, 3.6e-05, -0.063090), (0.0015373, 0.0014252, 0.0012028, -1.1e-06, 0.0005578, -2.4e-06),
     "base_to_right_hipz_link"),
    ("right_hip_rx_link", "right_hip_rz_link", "x", (-0.06435, 0.0, -0.07499), (0, 0.436332, 0), 1.20868,
     (0.067232, 0.013018, 0.0001831), (0.0017535, 0.003338, 0.0019927, 6.3e-06, -8e-05, 1.3e-05),
     "right_hipz_to_hipx_link"),
    ("right_hip_ry_link", "right_hip_rx_link", "y", (0.071, 0.0018375, 0.0), (0, -0.261799, 0), 2.64093,
     (0.0132054, -0.0269864, -0.096021), (0.0243761, 0.0259015, 0.0038929, -9.96e-05, 0.0006548, -0.0026713),
     "right_hipx_to_hipy_link"),
    ("right_knee_link", "right_hip_ry_link", "y", (0.0, 0.0, -0.267), (0, 0, 0), 0.35435,
     (0.00528, -0.0014762, -0.13201), (0.003051, 0.003033, 0.0002529, 0.0, 8.73e-05, -3.93e-05),
     "right_hipy_to_knee_link"),
    ("right_ankle_link", "right_knee_link", "y", (0.0, 0.0, -0.2785), (0, 0, 0), 0.280951,
     (0.022623, 0.0, -0.012826), (8.42e-05, 0.0007959, 0.0007681, 0.0, -4.88e-05, 0.0), "right_knee_to_ankle"),
]
_MIT_RIGHT_ARM = [
    ("right_shoulder_ry_link", "Floating Base", "y", (0.01346, -0.17608, 0.24657), (0, 0, 0), 0.788506,
     (0.009265, -0.052623, -0.0001249), (0.0013678, 0.0007392, 0.000884, -2.66e-05, 2.1e-06, 1.2e-06),
     "base_to_right_shouldery_link"),
    ("right_shoulder_rx_link", "right_shoulder_ry_link", "x", (0.0, -0.0575, 0.0), (0, 0, 0), 0.80125,
     (0.0006041, -0.0001221, -0.082361), (0.0011524, 0.0011921, 0.0012386, -7e-07, 3.96e-05, -1.4e-06),
     "right_shouldery_shoulderx_link"),
    ("right_shoulder_rz_link", "right_shoulder_rx_link", "z", (0.0, 0.0, -0.10250), (0, 0, 0), 0.905588,
     (0.0001703, 0.016797, -0.060), (0.0012713, 0.0017477, 0.0008191, -1e-06, -8e-06, 2.25e-05),
     "right_shoulderx_shoulderz_link"),
    ("right_elbow_link", "right_shoulder_rz_link", "y", (0.0, 0.0, -0.1455), (0, 0, 0), 0.34839,
     (-0.0059578, -0.000111, -0.0426735), (0.00157, 0.0016167, 6.19e-05, -2e-07, 3.35e-05, -3e-06),
     "right_shoulderz_elbow_link"),
]
# right side rotors: (rotor, parent, axis, xyz, rpy, mass, (ixx, iyy, izz), joint, driven link, ratio)
_ROTOR_S = 1.084e-4, 1.6841e-4  # small rotor: transverse and axial inertia
_ROTOR_L = 3.443e-4, 5.548e-4  # large rotor
_MIT_RIGHT_ROTORS = [
    ("right_hip_rz_rotor", "Floating Base", "z", (-0.00842837, -0.082, -0.041593), (0, -0.174533, 0), 0.05,
     "z", _ROTOR_S, "right_base_to_hipz_rotor", "right_hip_rz_link", 6.0),
    ("right_hip_rx_rotor", "right_hip_rz_link", "x", (-0.0827, 0.0, -0.066436), (0, 0.436332, 0), 0.05,
     "x", _ROTOR_S, "right_hipz_to_hipx_rotor", "right_hip_rx_link", 6.0),
    ("right_hip_ry_rotor", "right_hip_rx_link", "y", (0.071, 0.024, 0.0), (0, -0.261799, 0), 0.1,
     "y", _ROTOR_L, "right_hipx_to_hipy_rotor", "right_hip_ry_link", 6.0),
    ("right_knee_rotor", "right_hip_ry_link", "y", (0.013, -0.0497, -0.0178), (0, 0, 0), 0.1,
     "y", _ROTOR_L, "right_hipy_to_knee_rotor", "right_knee_link", 12.0),
    ("right_ankle_rotor", "right_hip_ry_link", "y", (0.01563, -0.0454, -0.13354), (0, 0, 0), 0.05,
     "y", _ROTOR_S, "right_hipy_to_ankle_rotor", "right_ankle_link", 12.0),
]
_MIT_RIGHT_ARM_ROTORS = [
    ("right_shoulder_ry_rotor", "Floating Base", "y", (0.01346, -0.16, 0.24657), (0, 0, 0), 0.05,
     "y", _ROTOR_S, "base_to_right_shouldery_rotor", "right_shoulder_ry_link", 6.0),
    ("right_shoulder_rx_rotor", "right_shoulder_ry_link", "x", (0.0, -0.0575, 0.0), (0, 0, 0), 0.05,
     "x", _ROTOR_S, "right_shouldery_to_shoulderx_rotor", "right_shoulder_rx_link", 6.0),
    ("right_shoulder_rz_rotor", "right_shoulder_rx_link", "z", (0.0, 0.0, -0.10250), (0, 0, 0), 0.05,
     "z", _ROTOR_S, "right_shoulderx_to_shoulderz_rotor", "right_shoulder_rz_link", 6.0),
    ("right_elbow_rotor", "right_shoulder_rz_link", "y", (0.0, 0.0325, -0.06), (0, 0, 0), 0.05,
     "y", _ROTOR_S, "right_shoulderz_to_elbow_rotor", "right_elbow_link", 9.0),
]


def _rotor_inertia(axis, transverse_axial):
    t, a = transverse_axial
    d = [t, t, t]
    d["xyz".index(axis)] = a
    return np.diag(d)


def _mirror(name):
    return name.replace("right", "left")


def _mit_side(m, side, links, rotors):
    """Add one side's links and rotors; the left side mirrors the right through xz."""
    order = []
    for row in links:
        order.append(("link", row))
        order.extend(("rotor", r) for r in rotors if r[9] == row[0])
    for kind, row in order:
        if kind == "link":
            name, parent, axis, xyz, rpy, mass, com, I6, joint = row
            I = _inertia(*I6)
            if side == "left":
                com, I = _flip_y(com, I)
                xyz = (xyz[0], -xyz[1], xyz[2])
                name, parent, joint = _mirror(name), _mirror(parent), _mirror(joint)
            _add(m, name, parent, axis, xyz, rpy, mass, com, I, joint)
        else:
            name, parent, axis, xyz, rpy, mass, iax, tr, joint, drives, ratio = row
            if side == "left":
                xyz = (xyz[0], -xyz[1], xyz[2])
                name, parent, joint, drives = _mirror(name), _mirror(parent), _mirror(joint), _mirror(drives)
            _rotor(m, name, parent, axis, xyz, rpy, mass, _rotor_inertia(iax, tr), joint, drives, ratio)


def mit_humanoid():
    """MIT Humanoid (Chignoli et al. 2021; [Chignoli23, Fig. 8a]): floating base, legs with
    geared hip rotors and the knee–ankle parallel belt transmission (ankle rotor on the
    thigh: 12·(q̇_knee + q̇_ankle) = q̇_rotor), arms with geared rotors. 37 bodies,
    17 clusters, 24 independent velocities."""
    m = Model("mit_humanoid")
    m.add_body("Floating Base", jt.Free(), None, mass=8.52, com=(0.009896, 0.004771, 0.100522),
               inertia=_inertia(0.172699, 0.105949, 0.091906, 0.001419, 0.004023, -0.001672),
               joint_name="world_to_base")
    for side in ("right", "left"):
        _mit_side(m, side, _MIT_RIGHT_LEG, _MIT_RIGHT_ROTORS)
    for side in ("right", "left"):
        _mit_side(m, side, _MIT_RIGHT_ARM, _MIT_RIGHT_ARM_ROTORS)
    for side in ("right", "left"):
        m.add_frame(f"{side}_foot", f"{side}_ankle_link", (np.eye(3), np.array([0.0, 0.0, -0.04])))
        m.add_frame(f"{side}_hand", f"{side}_elbow_link", (np.eye(3), np.array([0.0, 0.0, -0.27])))
    return m


def mit_humanoid_leg(gravity=(0.0, 0.0, -9.81)):
    """One leg of the MIT Humanoid on a fixed hip ([Chignoli23, §IX-B], Fig. 14): hip yaw, roll
    and pitch with geared rotors and the knee–ankle belt transmission (5 DoF)."""
    m = Model("mit_humanoid_leg", gravity=gravity)
    rows = [list(r) for r in _MIT_RIGHT_LEG]
    rotors = [list(r) for r in _MIT_RIGHT_ROTORS]
    rows[0][1] = None
    rotors[0][1] = None
    for row in rows:
        name = row[0]
        _add(m, name, row[1], row[2], row[3], row[4], row[5], row[6], _inertia(*row[7]), row[8])
        for r in rotors:
            if r[9] == name:
                _rotor(m, r[0], r[1], r[2], r[3], r[4], r[5], _rotor_inertia(r[6], r[7]), r[8], r[9], r[10])
    m.add_frame("foot", "right_ankle_link", (np.eye(3), np.array([0.0, 0.0, -0.04])))
    return m


# --------------------------------------------------------------------------- Tello
def _tello_hip_differential():
    """φ of Tello's hip differential (generalized_rbda, Tello.cpp): q = [gimbal, thigh,
    rotor 1, rotor 2], rotor angles through the gearbox (÷6)."""
    import sympy as s  # optional (extra 'symbolic'): only this robot needs it
    q1, q2, r1, r2 = s.symbols("q1 q2 r1 r2", real=True)
    y1, y2 = r1 / 6, r2 / 6
    R = s.Rational
    phi = [R(57, 2500) * s.sin(y1) - R(49, 5000) * s.cos(q1) - R(399, 20000) * s.sin(q1)
           - R(8, 625) * s.cos(y1) * s.cos(q2) - R(57, 2500) * s.cos(q1) * s.sin(q2)
           - R(7, 625) * s.sin(y1) * s.sin(q1) + R(7, 625) * s.sin(q1) * s.sin(q2)
           - R(8, 625) * s.cos(q1) * s.sin(y1) * s.sin(q2) + R(3021, 160000),
           R(57, 2500) * s.sin(y2) - R(49, 5000) * s.cos(q1) + R(399, 20000) * s.sin(q1)
           - R(8, 625) * s.cos(y2) * s.cos(q2) - R(57, 2500) * s.cos(q1) * s.sin(q2)
           + R(7, 625) * s.sin(y2) * s.sin(q1) - R(7, 625) * s.sin(q1) * s.sin(q2)
           - R(8, 625) * s.cos(q1) * s.sin(y2) * s.sin(q2) + R(3021, 160000)]
    return phi, (q1, q2, r1, r2)


def _tello_knee_ankle_differential():
    """φ of Tello's knee–ankle differential: q = [shin, foot, rotor 1, rotor 2]."""
    import sympy as s  # optional (extra 'symbolic'): only this robot needs it
    q1, q2, r1, r2 = s.symbols("q1 q2 r1 r2", real=True)
    y1, y2 = r1 / 6, r2 / 6
    R = s.Rational
    pi = 3.1415  # the published expressions use this truncated value of π
    phi = [R(21, 6250) * s.cos(y1 / 2 - y2 / 2 + 1979 * pi / 4500) - R(13, 625) * s.cos(y1 / 2 - y2 / 2 + 493 * pi / 1500)
           - R(273, 12500) * s.cos(pi / 9) - R(7, 2500) * s.sin(y1 / 2 - y2 / 2 + q2 + 231 * pi / 500)
           + R(91, 5000) * s.sin(q2 + 2 * pi / 15) - R(147, 50000) * s.sin(q2 + pi / 45) + R(163349, 6250000),
           q1 - y2 / 2 - y1 / 2]
    return phi, (q1, q2, r1, r2)


def tello(arms=True, floating_base=True):
    """UIUC Tello humanoid (Sim and Ramos 2022; [Chignoli23, Fig. 8b]) with the MIT Humanoid's
    arms as in generalized_rbda's TelloWithArms.

    Per leg: hip clamp (yaw) with a geared rotor; the hip differential (gimbal roll and
    thigh pitch driven by two rotors) and the knee–ankle differential (shin and foot
    driven by two rotors), each a 4-body cluster with the published implicit constraint
    φ(q) = 0 (two equations; the link angles are the independent coordinates). 24 DoF
    with arms and floating base. Needs sympy to derive the constraint Jacobians.
    """
    m = Model("tello")
    if floating_base:
        m.add_body("torso", jt.Free(), None, mass=2.3008, com=(0.0073, -0.0013, -0.0023),
                   inertia=_inertia(0.0366, 0.0142, 0.0291, 0.0, -0.0006, -0.0002), joint_name="torso_joint")
        base = "torso"
    else:
        base = None
    R_down = np.diag([1.0, -1.0, -1.0])
    R_left = np.array([[-1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, 1.0, 0.0]])
    R_right = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, -1.0, 0.0]])
    rotor_I = _inertia(2.5984e-5, 2.5984e-5, 5.1512e-5)
    hip_phi, hip_syms = _tello_hip_differential()
    ka_phi, ka_syms = _tello_knee_ankle_differential()

    def body(name, parent, axis, R, p, mass, com, I, independent=True):
        j = jt.Revolute(_AXES[axis])
        j.independent = independent
        m.add_body(name, j, parent, (R, np.asarray(p, dtype=float)), mass=mass, com=com, inertia=I,
                   joint_name=f"{name}_joint", strict_inertia=False)

    for side, sy in (("left", 1.0), ("right", -1.0)):
        clamp = f"{side}-hip-clamp"
        body(clamp, base, "z", np.eye(3), (0.0, 0.126 * sy, -0.087), 1.3289, (-0.0010, 0.0, -0.0069),
             _inertia(0.0032, 0.0033, 0.0027, 0.0, 0.0001, 0.0))
        body(f"{clamp}-rotor", base, "z", R_down, (0.0, 0.126 * sy, -0.026), 0.07, (0, 0, 0), rotor_I, False)
        m.add_coupling(f"{side}-hip-clamp-transmission", clamp, f"{clamp}-rotor", 6.0)
        body(f"{side}-hip-rotor-1", clamp, "z", R_left, (0.0, 0.04, 0.0), 0.07, (0, 0, 0), rotor_I, False)
        body(f"{side}-hip-rotor-2", clamp, "z", R_right, (0.0, -0.04, 0.0), 0.07, (0, 0, 0), rotor_I, False)
        body(f"{side}-gimbal", clamp, "x", np.eye(3), (0.0, 0.0, -0.1425), 0.4433, (-0.0027, 0.0, 0.0258),
             _inertia(0.0018, 0.0017, 0.0015))
        body(f"{side}-thigh", f"{side}-gimbal", "y", np.eye(3), (0.0, 0.0, 0.0), 1.5424, (0.003, -0.0001, -0.0323),
             _inertia(0.0103, 0.0097, 0.0027, 0.0, -0.0005, 0.0))
        m.add_constraint(symbolic_constraint(
            f"{side}-hip-differential",
            [f"{side}-gimbal_joint", f"{side}-thigh_joint", f"{side}-hip-rotor-1_joint", f"{side}-hip-rotor-2_joint"],
            hip_phi, hip_syms))
        body(f"{side}-knee-ankle-rotor-1", f"{side}-thigh", "z", R_right, (0.0, 0.02655, 0.0), 0.07, (0, 0, 0),
             rotor_I, False)
        body(f"{side}-knee-ankle-rotor-2", f"{side}-thigh", "z", R_left, (0.0, -0.02655, 0.0), 0.07, (0, 0, 0),
             rotor_I, False)
        body(f"{side}-shin", f"{side}-thigh", "y", np.eye(3), (0.0, 0.0, -0.2268), 0.3072, (0.0047, -0.0003, -0.1043),
             _inertia(0.0054, 0.0054, 0.0001, 0.0, -0.0002, 0.0))
        body(f"{side}-foot", f"{side}-shin", "y", np.eye(3), (0.0, 0.0, -0.26), 0.1025, (0.0042, 0.0, -0.0251),
             _inertia(0.094e-3, 0.1773e-3, 0.0901e-3, 0.0, -0.0038e-3, 0.0))
        m.add_constraint(symbolic_constraint(
            f"{side}-knee-ankle-differential",
            [f"{side}-shin_joint", f"{side}-foot_joint", f"{side}-knee-ankle-rotor-1_joint",
             f"{side}-knee-ankle-rotor-2_joint"],
            ka_phi, ka_syms))
        m.add_frame(f"{side}-toe", f"{side}-foot", (np.eye(3), np.array([0.1, 0.0, -0.041])))
        m.add_frame(f"{side}-heel", f"{side}-foot", (np.eye(3), np.array([-0.05, 0.0, -0.041])))
    if arms and floating_base:
        for side in ("left", "right"):
            # the MIT Humanoid's arms (TelloWithArms); names get Tello's "side-" prefix
            rows = [[side + "-" + r[0].replace("right_", "")] + list(r[1:]) for r in _MIT_RIGHT_ARM]
            for r in rows:
                r[1] = "torso" if r[1] == "Floating Base" else side + "-" + r[1].replace("right_", "")
            for r in rows:
                name, parent, axis, xyz, rpy, mass, com, I6, _ = r
                I = _inertia(*I6)
                if side == "left":
                    com, I = _flip_y(com, I)
                    xyz = (xyz[0], -xyz[1], xyz[2])
                _add(m, name, parent, axis, xyz, rpy, mass, com, I, f"{name}_joint")
                for rr in _MIT_RIGHT_ARM_ROTORS:
                    if side + "-" + rr[9].replace("right_", "") != name:
                        continue
                    rname = side + "-" + rr[0].replace("right_", "")
                    rparent = "torso" if rr[1] == "Floating Base" else side + "-" + rr[1].replace("right_", "")
                    xyz_r = rr[3] if side == "right" else (rr[3][0], -rr[3][1], rr[3][2])
                    _rotor(m, rname, rparent, rr[2], xyz_r, rr[4], rr[5], _rotor_inertia(rr[6], rr[7]),
                           f"{rname}_joint", name, rr[10])
    return m


# --------------------------------------------------------------------------- JVRC-1
# left side and trunk of JVRC-1 as in the URDF+ set: (link, parent, axis, xyz, mass, com, (ixx, iyy, izz))
_JVRC_TRUNK = [
    ("waist-yaw", "pelvis", "z", (0.0, 0.0, 0.192), 1.0, (0.0, 0.0, -0.07), (0.00173, 0.00173, 0.0032)),
    ("waist-pitch", "waist-yaw", "y", (0.0, 0.0, 0.0), 1.0, (0.0, 0.0, 0.0), (0.002425, 0.002425, 0.002425)),
    ("waist-roll", "waist-pitch", "x", (0.0, 0.0, 0.0), 10.0, (0.02, 0.0, 0.24), (0.157083, 0.101083, 0.1367)),
    ("neck-yaw", "waist-roll", "z", (-0.003, 0.0, 0.453), 0.5, (0.0, 0.0, -0.05), (0.000729167, 0.000729167, 0.000625)),
    ("neck-roll", "neck-yaw", "x", (0.0, 0.0, 0.0), 0.5, (0.0, 0.0, 0.0), (0.0005, 0.0005, 0.0005)),
    ("neck-pitch", "neck-roll", "y", (0.0, 0.0, 0.0), 2.0, (0.01, 0.0, 0.11), (0.00968, 0.00968, 0.00968)),
]
_JVRC_LEFT_LEG = [
    ("left-hip-pitch", "pelvis", "y", (0.0, 0.096, 0.0), 1.0, (0.0, 0.0, 0.0), (0.00196, 0.00196, 0.00196)),
    ("left-hip-roll", "left-hip-pitch", "x", (0.0, 0.0, 0.0), 1.0, (0.0, 0.0, 0.0), (0.00196, 0.00196, 0.00196)),
    ("left-hip-yaw", "left-hip-roll", "z", (0.0, 0.0, 0.0), 3.0, (0.01, 0.0, -0.22), (0.031925, 0.034525, 0.00865)),
    ("left-knee", "left-hip-yaw", "y", (-0.02, 0.0, -0.389), 3.0, (0.04, 0.0, -0.16), (0.031925, 0.034525, 0.00865)),
    ("left-ankle-roll", "left-knee", "x", (0.04, 0.0, -0.357), 1.0, (0.0, 0.0, 0.0), (0.00064, 0.00064, 0.00064)),
    ("left-ankle-pitch", "left-ankle-roll", "y", (0.0, 0.0, 0.0), 1.5, (0.03, 0.0, -0.07), (0.001417, 0.005617, 0.006217)),
]
_JVRC_LEFT_ARM = [
    ("left-shoulder-pitch", "waist-roll", "y", (0.0, 0.24, 0.33), 1.0, (0.0, 0.0, 0.0), (0.00196, 0.00196, 0.00196)),
    ("left-shoulder-roll", "left-shoulder-pitch", "x", (0.0, 0.0, 0.0), 1.0, (0.0, 0.0, 0.0), (0.00196, 0.00196, 0.00196)),
    ("left-shoulder-yaw", "left-shoulder-roll", "z", (0.0, 0.0, 0.0), 2.0, (-0.01, 0.0, -0.19), (0.01365, 0.0146, 0.00635)),
    ("left-elbow-pitch", "left-shoulder-yaw", "y", (0.004, 0.0, -0.305), 1.0, (-0.02, 0.0, -0.1), (0.010675, 0.010675, 0.0027)),
    ("left-elbow-yaw", "left-elbow-pitch", "z", (-0.004, 0.0, -0.239), 1.0, (0.0, 0.0, 0.0), (0.00064, 0.00064, 0.00064)),
    ("left-wrist-roll", "left-elbow-yaw", "x", (0.0, 0.0, 0.0), 0.5, (0.0, 0.0, 0.0), (0.00032, 0.00032, 0.00032)),
    ("left-wrist-yaw", "left-wrist-roll", "z", (0.0, 0.0, 0.0), 0.5, (0.0, -0.01, -0.06), (0.0004625, 0.0007625, 0.0004625)),
]
_JVRC_UNGEARED = {"neck-yaw", "neck-roll", "neck-pitch", "left-wrist-roll", "left-wrist-yaw"}


def jvrc1_humanoid():
    """JVRC-1 humanoid (AIST; [Chignoli23, Fig. 8d]) modified with geared transmissions (rotor
    mass 0.07 kg, ratio 6) on its waist, leg, shoulder and elbow joints, as in the URDF+
    set: 58 bodies, 33 clusters, 38 independent velocities. The right hip sits 87 mm
    lower than the left one, as published."""
    m = Model("jvrc1_humanoid")
    m.add_body("pelvis", jt.Free(), None, mass=10.0, com=(-0.01, 0.0, 0.034),
               inertia=_inertia(0.089583, 0.089583, 0.1125), joint_name="base_to_pelvis")
    rotor_I = _inertia(2e-05, 2e-05, 5e-05)

    def add(rows, side=None):
        for name, parent, axis, xyz, mass, com, I3 in rows:
            com, I = np.asarray(com, dtype=float), _inertia(*I3)
            if side == "right":
                name, parent = name.replace("left", "right"), parent.replace("left", "right")
                xyz = (xyz[0], -xyz[1], -0.087 if name == "right-hip-pitch" else xyz[2])
                com, I = _flip_y(com, I)
            joint = f"{parent}-to-{name}"
            _add(m, name, parent, axis, xyz, (0, 0, 0), mass, com, I, joint)
            if name.replace("right", "left") not in _JVRC_UNGEARED:
                _rotor(m, f"{name}-rotor", parent, axis, xyz, (0, 0, 0), 0.07, rotor_I, f"{joint}-rotor", name, 6.0)

    add(_JVRC_TRUNK)
    add(_JVRC_LEFT_LEG)
    add(_JVRC_LEFT_LEG, "right")
    add(_JVRC_LEFT_ARM)
    add(_JVRC_LEFT_ARM, "right")
    for side in ("left", "right"):
        m.add_frame(f"{side}-foot", f"{side}-ankle-pitch", (np.eye(3), np.array([0.0, 0.0, -0.1])))
        m.add_frame(f"{side}-hand", f"{side}-wrist-yaw", (np.eye(3), np.array([0.0, 0.0, -0.1])))
    return m


# --------------------------------------------------------------------------- chains
_LINK_I = _inertia(0.5, 0.5, 1.0)  # rotational inertia about z of 1 kg m² (planar chains)
_ROTOR_CHAIN_I = _inertia(0.5e-4, 0.5e-4, 1e-4)


def geared_chain(n=12, ratio=6.0, gravity=(9.81, 0.0, 0.0)):
    """The n-link planar chain actuated by geared transmissions ([Chignoli23, Fig. 3a], 8e;
    generalized_rbda's uniform RevoluteChainWithRotor): unit links (m = 1 kg, length
    1 m, centre of mass at 0.5 m, I_zz = 1 kg m²), each driven by a rotor
    (I_zz = 10⁻⁴ kg m², mass-less) on the previous link with gear ratio ``ratio``
    (2 × 3 = 6 there). n clusters of two bodies, n independent velocities."""
    if int(n) < 1:
        raise ValueError(f"n: expected a positive number of links, got {n!r}")
    m = Model(f"geared_chain{n}", gravity=gravity)
    parent = None
    for k in range(int(n)):
        xyz = (0.0, 0.0, 0.0) if k == 0 else (1.0, 0.0, 0.0)
        _add(m, f"link-{k}", parent, "z", xyz, (0, 0, 0), 1.0, (0.5, 0.0, 0.0), _LINK_I, f"joint-{k}")
        _rotor(m, f"rotor-{k}", parent, "z", xyz, (0, 0, 0), 0.0, _ROTOR_CHAIN_I, f"rotor-joint-{k}",
               f"link-{k}", ratio)
        parent = f"link-{k}"
    m.add_frame("tip", parent, (np.eye(3), np.array([1.0, 0.0, 0.0])))
    return m


def belt_chain(n=12, ratio=6.0, gravity=(9.81, 0.0, 0.0)):
    """The n-link planar chain actuated by parallel belt transmissions ([Chignoli23, Fig. 8f];
    generalized_rbda's RevolutePairChainWithRotor): links in pairs A–B, both rotors of a
    pair on the pair's parent; rotor A drives link A (q̇_rA = N q̇_A), rotor B drives
    link B through a belt keeping its absolute angle (q̇_rB = N (q̇_A + q̇_B)). n/2
    clusters of four bodies, n independent velocities (n even)."""
    if int(n) < 2 or int(n) % 2:
        raise ValueError(f"n: expected an even number of links ≥ 2, got {n!r}")
    m = Model(f"belt_chain{n}", gravity=gravity)
    parent = None
    for k in range(int(n) // 2):
        xyz = (0.0, 0.0, 0.0) if k == 0 else (1.0, 0.0, 0.0)
        a, b = f"link-A-{k}", f"link-B-{k}"
        _add(m, a, parent, "z", xyz, (0, 0, 0), 1.0, (0.5, 0.0, 0.0), _LINK_I, f"joint-A-{k}")
        _rotor(m, f"rotor-A-{k}", parent, "z", xyz, (0, 0, 0), 0.0, _ROTOR_CHAIN_I, f"rotor-joint-A-{k}", a, ratio)
        _rotor(m, f"rotor-B-{k}", parent, "z", xyz, (0, 0, 0), 0.0, _ROTOR_CHAIN_I, f"rotor-joint-B-{k}", b, ratio,
               couple=False)
        _add(m, b, a, "z", (1.0, 0.0, 0.0), (0, 0, 0), 1.0, (0.5, 0.0, 0.0), _LINK_I, f"joint-B-{k}")
        m.add_coupling(f"{b}_transmission", b, f"rotor-B-{k}", float(ratio))
        parent = b
    m.add_frame("tip", parent, (np.eye(3), np.array([1.0, 0.0, 0.0])))
    return m
