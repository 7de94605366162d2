"""MJCF (MuJoCo) loader, through MuJoCo's own parser and compiler.

:func:`load_mjcf` compiles the file with ``mujoco.MjModel`` (PyPI ``mujoco``, the optional
extra ``mjcf``) and builds a :class:`~soadyn.Model` from the compiled model: the body tree,
the joints, the inertias, the sites (as frames), the gravity, the ``<equality>``
constraints and the collision geoms. Everything MuJoCo's compiler settles (defaults classes, ``<include>``,
inertias from geoms, angles in degrees, ``ref`` positions) is read already settled.

What a MuJoCo model becomes
---------------------------
* **Bodies and joints.** One soadyn body per MuJoCo joint, in MuJoCo's body and joint
  order, so that q and v list the joints as MuJoCo's ``qpos`` and ``qvel`` do. A MuJoCo body
  with several joints (MuJoCo applies them in turn, each about its own anchor) becomes a
  chain of mass-less bodies, one per joint, the last one carrying the body's inertia. A
  joint rotating about an anchor away from the body origin puts the soadyn body frame on
  the anchor: the frame named after the MuJoCo body is then a frame of that soadyn body at
  MuJoCo's body frame (the soadyn body is named ``"<body>:<joint>"``), so body and site
  frames are MuJoCo's ``xpos``/``xmat``, ``site_xpos``/``site_xmat``. MuJoCo bodies without
  joints are merged into their parent (the frame stays), as fixed URDF links are; bodies
  welded to the world become frames of the world.
* **Joint types.** ``hinge`` → :class:`~soadyn.joints.Revolute`, ``slide`` →
  :class:`~soadyn.joints.Prismatic`, ``ball`` → :class:`~soadyn.joints.Spherical`,
  ``free`` → :class:`~soadyn.joints.Free`. Hinge and slide coordinates are MuJoCo's
  ``qpos`` itself: the joint's ``ref`` (the position at which the file draws the body) is
  folded into the joint placement. Limits (``range`` of limited hinge and slide joints) are
  kept as the joint's ``lower``/``upper``.
* **Inertia.** ``body_mass``, ``body_ipos`` and the full rotational inertia
  R(iquat) diag(body_inertia) R(iquat)ᵀ.
* **Collision geoms.** Every geom that can collide (all but MuJoCo's visual geoms, those
  with ``contype`` and ``conaffinity`` both 0) becomes a collision object
  (:meth:`~soadyn.Model.add_collision`) in MuJoCo's geom order, named by the geom's name
  (unnamed geoms ``"geom<id>"``), fixed to the frame of its MuJoCo body at ``geom_pos``,
  ``geom_quat``, with its ``contype``, ``conaffinity`` and sliding friction
  (``geom_friction[:, 0]``). Sizes are MuJoCo's compiled ``geom_size`` converted to full
  lengths: plane → :class:`~soadyn.geometry.Plane` (infinite, as MuJoCo collides it), sphere
  → ``Sphere(size[0])``, capsule and cylinder → ``Capsule``/``Cylinder(size[0], 2 size[1])``
  (``fromto`` already settled by MuJoCo's compiler), box → ``Box(2 size)``, ellipsoid →
  ``Ellipsoid(size)``, mesh → :class:`~soadyn.geometry.ConvexMesh` of the compiled mesh's
  vertices (MuJoCo's ``mesh_vert``, scaled and in the mesh frame its ``geom_pos``/``quat``
  place), whose hull is what MuJoCo collides. ``<contact><exclude body1 body2>`` disables the
  pairs of the two bodies' geoms, and MuJoCo's parent filter is kept where soadyn's own
  (parent–child bodies) differs from it: the geoms of a MuJoCo body with several joints
  (whose soadyn parent is a mass-less joint body) and those of its MuJoCo parent are
  disabled as pairs (and so are those of a base fixed by ``floating_base=False`` and its
  children), so that :meth:`~soadyn.Model.collision_pairs` are the geom pairs MuJoCo's
  filters allow — but for such a fixed base, which is one rigid body with the world and
  touches none of its geoms. ``model.mjcf.geom_collisions`` maps MuJoCo's geom ids to indices
  into ``model.collisions``. ``collisions=False`` skips them all.
* **Gravity.** ``opt.gravity`` (zero when the gravity flag is disabled) unless ``gravity=``
  is given.
* **Equality constraints.** ``connect`` → a spherical loop joint, ``weld`` → a weld loop
  joint (the MuJoCo frames of both objects, or both sites, with the ``relpose`` MuJoCo
  compiled); ``joint`` with a linear ``polycoef`` (only ``polycoef[0:2]`` nonzero) between
  two joints → a :class:`~soadyn.core.constraints.Transmission` (the first joint
  dependent); any other ``joint`` equality (a polynomial, or one joint held at a value) →
  a :class:`~soadyn.HolonomicConstraint` on the declared joints. Equalities that are
  inactive at start (``active="false"``) are left out. MuJoCo's constraints are soft
  (``solref``/``solimp``); soadyn's are exact.

Conventions (MuJoCo → soadyn)
-----------------------------
MuJoCo's quaternions are (w, x, y, z), soadyn's (x, y, z, w). A free joint's ``qpos`` is
[p (3, world); quaternion (w, x, y, z)], its ``qvel`` [v (3, **world** frame, of the body
origin); ω (3, body frame)]; soadyn's free joint has q = [p; quaternion (x, y, z, w)] and
v = [ω; v] both in the body frame. A ball joint's ``qvel`` is ω in the child frame, as in
soadyn. The generalized forces and accelerations of a free joint follow: :func:`q_from_mujoco`,
:func:`v_from_mujoco`, :func:`a_from_mujoco`, :func:`tau_from_mujoco` and their inverses
(``*_to_mujoco``) convert states, accelerations and forces (single states or batches).
They need only the loaded model (the layout is kept in ``model.mjcf``).

What is left out (one warning names what a file had)
----------------------------------------------------
Height fields and SDF geoms (skipped, named in the warning), explicit ``<contact><pair>``
elements (their geoms collide as the filters allow), the contact parameters (``margin``,
``gap``, ``condim``, ``solref``, ``solimp``, ``priority``, the torsional and rolling
friction), ``<flag filterparent="disable">`` (soadyn keeps parent–child bodies apart) and,
when the file disables contacts (``<flag contact="disable">``), every collision geom;
actuators, tendons, joint springs (``stiffness``),
friction loss, gravity compensation, fluid forces, flexes, plugins, mocap motion (mocap
bodies are fixed), and tendon or flex equalities. **Armature and damping** are not part of
the dynamics: MuJoCo adds the armature to the diagonal of its mass matrix and the damping
as the passive force −damping·qvel. Both are kept per velocity coordinate (soadyn's v
order) in ``model.mjcf.armature`` and ``model.mjcf.damping``: MuJoCo's mass matrix is
``M + diag(armature)`` in soadyn's coordinates, and its equations of motion add
``armature * a + damping * v`` to ``sd.rnea`` (a free joint's armature is the same on its
six coordinates, which the conversion leaves as it is).
"""
from __future__ import annotations

import os
import warnings
from dataclasses import dataclass

import numpy as np

from ..core import joints as jt
from ..core import spatial as sp
from ..core import validation as val
from ..core.constraints import HolonomicConstraint
from ..core.model import Model
from ..core.shapes import Box, Capsule, ConvexMesh, Cylinder, Ellipsoid, Plane, Sphere

__all__ = ["load_mjcf", "MJCFError", "MjcfInfo", "q_from_mujoco", "q_to_mujoco", "v_from_mujoco",
           "v_to_mujoco", "a_from_mujoco", "a_to_mujoco", "tau_from_mujoco", "tau_to_mujoco"]

# MuJoCo's enumerations (mjtJoint, mjtEq, mjtObj), fixed by its C API
_FREE, _BALL, _SLIDE, _HINGE = 0, 1, 2, 3
_CONNECT, _WELD, _JOINT_EQ = 0, 1, 2
_OBJ_SITE = 6
_KINDS = {_FREE: "free", _BALL: "ball", _SLIDE: "slide", _HINGE: "hinge"}


class MJCFError(ValueError):
    """An MJCF file MuJoCo cannot compile, or one soadyn cannot represent."""


@dataclass(frozen=True)
class JointMap:
    """One soadyn joint and the MuJoCo joint it stands for.

    ``kind``: "free", "ball", "slide" or "hinge"; ``q_index``/``v_index``: its place in
    soadyn's q and v; ``qposadr``/``dofadr``: its place in MuJoCo's qpos and qvel, −1 for a
    joint MuJoCo does not have (``floating_base=True``), whose configuration is then
    ``fill`` (the body's fixed pose in MuJoCo) and its velocity zero."""

    name: str
    kind: str
    q_index: int
    v_index: int
    qposadr: int
    dofadr: int
    fill: tuple = ()


@dataclass(frozen=True)
class MjcfInfo:
    """What :func:`load_mjcf` keeps beside the model (``model.mjcf``).

    joints : the :class:`JointMap` of every soadyn joint with degrees of freedom, in order.
    nq_mujoco, nv_mujoco : MuJoCo's ``nq``, ``nv``.
    qpos0 : MuJoCo's default ``qpos`` (fills the coordinates of joints soadyn left out).
    armature, damping : (nv,) per soadyn velocity coordinate [kg m² or kg; N m s/rad or N s/m].
    ignored : the descriptions of what the loader left out (the warning's list).
    nq, nv : soadyn's sizes when loaded (the converters refuse an edited model).
    geom_collisions : (ngeom,) the index in ``model.collisions`` of each MuJoCo geom, −1 for
        a geom not loaded (``collisions=False``, a visual geom, a height field, ...).
    """

    joints: tuple
    nq_mujoco: int
    nv_mujoco: int
    qpos0: np.ndarray
    armature: np.ndarray
    damping: np.ndarray
    ignored: tuple
    nq: int
    nv: int
    geom_collisions: tuple = ()


def _import_mujoco():
    try:
        import mujoco
    except ImportError:
        raise ImportError("load_mjcf needs MuJoCo's Python package to parse and compile MJCF files: "
                          "pip install mujoco (or pip install soadyn[mjcf])") from None
    return mujoco


def _compile(path_or_xml, mujoco):
    """The compiled ``MjModel`` and a short name of its source."""
    if isinstance(path_or_xml, mujoco.MjModel):
        return path_or_xml, "MjModel"
    try:
        text = os.fspath(path_or_xml)
    except TypeError:
        raise TypeError(f"path_or_xml: expected a file path, the MJCF text or a mujoco.MjModel, got "
                        f"{type(path_or_xml).__name__}") from None
    if isinstance(text, bytes):
        text = text.decode("utf-8") if text.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"<") else os.fsdecode(text)
    text = text.lstrip("\ufeff")
    is_xml = text.lstrip().startswith("<")
    try:
        if is_xml:
            return mujoco.MjModel.from_xml_string(text), "MJCF string"
        if not os.path.isfile(text):
            raise MJCFError(f"path_or_xml: no such file {text!r} (MJCF text must start with '<')")
        return mujoco.MjModel.from_xml_path(text), text
    except ValueError as e:
        if isinstance(e, MJCFError):
            raise
        raise MJCFError(f"{'MJCF string' if is_xml else text}: MuJoCo cannot compile it: {e}") from None


def _rotation_wxyz(q):
    """Rotation matrix of a MuJoCo quaternion (w, x, y, z)."""
    return sp.quaternion_to_matrix(np.array([q[1], q[2], q[3], q[0]], dtype=float))


def _fresh(name, taken):
    """``name``, or ``name_2``, ``name_3``, ... when taken."""
    out, k = name, 2
    while out in taken:
        out, k = f"{name}_{k}", k + 1
    return out


def _name(m, mujoco, obj, i, fallback):
    return mujoco.mj_id2name(m, obj, i) or fallback


def load_mjcf(path_or_xml, *, floating_base=None, gravity=None, name=None, strict_inertia=False, collisions=True):
    """Load an MJCF file (or XML string, or a compiled ``mujoco.MjModel``) into a
    :class:`~soadyn.Model`, through MuJoCo's parser and compiler (``pip install mujoco``).

    Parameters
    ----------
    path_or_xml : str, bytes, os.PathLike or mujoco.MjModel
        File path (``<include>`` and asset paths resolve from it), the XML text itself
        (text that starts with ``<``), or an already compiled model.
    floating_base : None, True or False
        None (default): the joints as the file has them. True: every top-level body
        (a child of the world) without joints and with mass in its subtree gets a free joint
        (named ``"root_joint"``, as in :func:`soadyn.load_urdf`); MuJoCo has no coordinates
        for it (the converters put it at the body's pose in the file). False: the free
        joints of top-level bodies are removed (the body is fixed at its ``qpos0`` pose).
    gravity : (3,) world-frame gravity [m/s²]; default MuJoCo's ``opt.gravity`` (zero
        when the model disables gravity).
    name : model name (default: the MuJoCo model's name).
    strict_inertia : raise on physically impossible body inertias (default: warn).
    collisions : read the geoms into collision objects (default True; see the module
        docstring). False leaves them out.

    Returns the :class:`~soadyn.Model`, with ``model.mjcf`` (:class:`MjcfInfo`): the joint
    layout the converters (:func:`q_from_mujoco`, ...) use, armature and damping. See the
    module docstring for what becomes what, the conventions and what is left out (one
    ``UserWarning`` lists what a file had of it).

    Raises :class:`MJCFError` when MuJoCo cannot compile the file, and ImportError without
    the ``mujoco`` package.
    """
    mujoco = _import_mujoco()
    if floating_base not in (None, True, False):
        raise ValueError(f"floating_base: expected None, True or False, got {floating_base!r}")
    m, source = _compile(path_or_xml, mujoco)
    if gravity is None:
        off = int(m.opt.disableflags) & int(mujoco.mjtDisableBit.mjDSBL_GRAVITY)
        gravity = np.zeros(3) if off else np.array(m.opt.gravity, dtype=float)
    model_name = bytes(m.names).split(b"\0", 1)[0].decode("utf-8", "replace")  # names[0:] is the model's
    model = Model(name or model_name or "mjcf", gravity=gravity)
    build = _Builder(m, mujoco, model, floating_base, strict_inertia)
    build.bodies()
    build.sites()
    build.equalities()
    geom_collisions = build.collisions() if collisions else (-1,) * int(m.ngeom)
    ignored = build.ignored + _left_out(m, mujoco, collisions)
    nv = model.nv
    armature, damping = np.zeros(nv), np.zeros(nv)
    for jm in build.joint_maps:
        if jm.dofadr >= 0:
            n = _NV[jm.kind]
            armature[jm.v_index:jm.v_index + n] = m.dof_armature[jm.dofadr:jm.dofadr + n]
            damping[jm.v_index:jm.v_index + n] = m.dof_damping[jm.dofadr:jm.dofadr + n]
    for what, values in (("armature", armature), ("damping", damping)):
        if np.any(values):
            ignored.append(f"{what} on {np.count_nonzero(values)} velocity coordinates (kept in "
                           f"model.mjcf.{what})")
    for a in (armature, damping):
        a.flags.writeable = False
    qpos0 = np.array(m.qpos0, dtype=float)
    qpos0.flags.writeable = False
    model.mjcf = MjcfInfo(tuple(build.joint_maps), int(m.nq), int(m.nv), qpos0, armature, damping,
                          tuple(ignored), model.nq, model.nv, tuple(geom_collisions))
    if ignored:
        warnings.warn(f"{source}: soadyn left out {'; '.join(ignored)}", stacklevel=2)
    return model


_NQ = {"free": 7, "ball": 4, "slide": 1, "hinge": 1}
_NV = {"free": 6, "ball": 3, "slide": 1, "hinge": 1}


class _Builder:
    """The MuJoCo model read body by body into ``model`` (one call of :func:`load_mjcf`).

    ``where[b]`` = (soadyn body index or −1, R, p): the pose of MuJoCo body b's frame in
    that soadyn body's frame (identity when they coincide)."""

    def __init__(self, m, mujoco, model, floating_base, strict_inertia):
        self.m, self.mj, self.model = m, mujoco, model
        self.floating_base, self.strict = floating_base, strict_inertia
        self.where = {0: (-1, np.eye(3), np.zeros(3))}
        self.joint_of = {}  # MuJoCo joint id -> soadyn joint name
        self.joint_maps = []
        self.ignored = []
        self.frame_of = {0: "world"}  # MuJoCo body -> the model frame at its pose, when there is one
        self.taken = set()  # body and frame names
        self.joint_names = set()

    def body_name(self, b):
        return _name(self.m, self.mj, self.mj.mjtObj.mjOBJ_BODY, b, f"body{b}")

    def subtree_mass(self):
        m = self.m
        mass = np.array(m.body_mass, dtype=float)
        for b in range(m.nbody - 1, 0, -1):
            mass[m.body_parentid[b]] += mass[b]
        return mass

    def bodies(self):
        m, model = self.m, self.model
        subtree_mass = self.subtree_mass()
        free_added = 0
        for b in range(1, m.nbody):
            bname = self.body_name(b)
            parent = int(m.body_parentid[b])
            pb, Rp, pp = self.where[parent]
            R, p = sp.compose_poses(Rp, pp, _rotation_wxyz(m.body_quat[b]), m.body_pos[b])
            cur = pb
            jids = list(range(m.body_jntadr[b], m.body_jntadr[b] + m.body_jntnum[b]))
            top = parent == 0
            if top and self.floating_base is False and jids and m.jnt_type[jids[0]] == _FREE:
                jids = []  # fixed at the body pose of the file, qpos0's
            if m.body_mocapid[b] >= 0:
                self.ignored.append(f"the motion of mocap body {bname!r} (fixed)")
            if top and self.floating_base is True and not jids and subtree_mass[b] > 0:
                jname = _fresh("root_joint", self.joint_names)
                q_fill = tuple(p) + tuple(sp.matrix_to_quaternion(R))
                cur = self.add(bname, jt.Free(), cur, (np.eye(3), np.zeros(3)), jname, -1, "free", q_fill)
                R, p = np.eye(3), np.zeros(3)
                free_added += 1
            for k, j in enumerate(jids):
                kind = _KINDS[int(m.jnt_type[j])]
                jname = _fresh(_name(m, self.mj, self.mj.mjtObj.mjOBJ_JOINT, j, f"{bname}_joint{k}"),
                               self.joint_names)
                last = k == len(jids) - 1
                a, c = np.array(m.jnt_axis[j], dtype=float), np.array(m.jnt_pos[j], dtype=float)
                ref = float(m.qpos0[m.jnt_qposadr[j]])
                lower, upper = (m.jnt_range[j][:1], m.jnt_range[j][1:]) if m.jnt_limited[j] else (None, None)
                if kind == "free":  # MuJoCo: top-level bodies only; qpos is the world pose
                    joint, placement, after = jt.Free(), (np.eye(3), np.zeros(3)), (np.eye(3), np.zeros(3))
                elif kind == "slide":  # x_B ← x_B + a (qpos − ref): the body frame moves with the joint
                    joint = jt.Prismatic(a, lower, upper)
                    placement = sp.compose_poses(R, p, np.eye(3), -ref * a / np.linalg.norm(a))
                    after = (np.eye(3), np.zeros(3))
                else:  # rotation about the anchor c: x_B ← x_B T(c) Rot(qpos − ref) T(−c)
                    joint = jt.Revolute(a, lower, upper) if kind == "hinge" else jt.Spherical()
                    turn = sp.axis_angle_to_matrix(joint.axis, -ref) if kind == "hinge" else np.eye(3)
                    placement = sp.compose_poses(R, p + R @ c, turn, np.zeros(3))
                    after = (np.eye(3), -c)
                coincide = not np.any(after[1])
                body = bname if last and coincide else f"{bname}:{jname}"
                cur = self.add(body, joint, cur, placement, jname, j, kind)
                R, p = after
            if cur >= 0:
                Ri = R @ _rotation_wxyz(m.body_iquat[b])
                model.add_inertia(cur, float(m.body_mass[b]), R @ m.body_ipos[b] + p,
                                  Ri @ np.diag(m.body_inertia[b]) @ Ri.T, self.strict)
            if bname not in self.taken:  # MuJoCo's body frame, when no soadyn body carries its name
                self.taken.add(bname)
                model.add_frame(bname, cur if cur >= 0 else "world", (R, p))
                self.frame_of[b] = bname
            elif cur >= 0 and model.bodies[cur].name == bname:  # the soadyn body made for b, at its frame
                self.frame_of[b] = bname
            self.where[b] = (cur, R, p)
        if self.floating_base is True and not free_added:
            raise MJCFError("floating_base=True: no top-level body without joints and with mass to float "
                            "(the file's top-level bodies already have joints)")

    def add(self, body, joint, parent, placement, jname, j, kind, fill=()):
        """Add a soadyn body on ``joint`` for MuJoCo joint j (−1: none); returns its index."""
        model = self.model
        body = _fresh(body, self.taken)
        self.taken.add(body)
        self.joint_names.add(jname)
        idx = model.add_body(body, joint, parent if parent >= 0 else None, placement, joint_name=jname,
                             strict_inertia=self.strict)
        m = self.m
        self.joint_maps.append(JointMap(jname, kind, joint.q_index, joint.v_index,
                                        int(m.jnt_qposadr[j]) if j >= 0 else -1,
                                        int(m.jnt_dofadr[j]) if j >= 0 else -1, tuple(fill)))
        if j >= 0:
            self.joint_of[j] = jname
        return idx

    def frame_on(self, b, R, p):
        """(soadyn body or "world", placement) of a pose (R, p) given in MuJoCo body b's frame."""
        cur, Rb, pb = self.where[b]
        return (cur if cur >= 0 else "world"), sp.compose_poses(Rb, pb, R, p)

    def sites(self):
        m, OBJ = self.m, self.mj.mjtObj
        for s in range(m.nsite):
            sname = self.mj.mj_id2name(m, OBJ.mjOBJ_SITE, s)
            if not sname:
                continue  # unnamed sites: nothing to call them by
            fname = _fresh(sname, self.taken)
            self.taken.add(fname)
            body, placement = self.frame_on(int(m.site_bodyid[s]), _rotation_wxyz(m.site_quat[s]), m.site_pos[s])
            self.model.add_frame(fname, body, placement)

    def site_or_body(self, i, obj_id, end):
        """(soadyn body, placement) of side ``end`` (0 or 1) of a connect/weld equality i,
        with the MuJoCo pose (R, p) on that object."""
        m = self.m
        if m.eq_objtype[i] == _OBJ_SITE:
            return self.frame_on(int(m.site_bodyid[obj_id]), _rotation_wxyz(m.site_quat[obj_id]), m.site_pos[obj_id])
        data = m.eq_data[i]
        if m.eq_type[i] == _CONNECT:  # anchor of body 1 in data[0:3], of body 2 in data[3:6]
            return self.frame_on(obj_id, np.eye(3), data[3 * end:3 * end + 3])
        # weld: body 1 carries data[3:6] and the relative pose relpose = data[6:10] (w, x, y, z),
        # body 2 the anchor data[0:3]; MuJoCo drives x1 + R1 data[3:6] = x2 + R2 data[0:3]
        # and R1 R(relpose) = R2
        if end == 0:
            return self.frame_on(obj_id, _rotation_wxyz(data[6:10]), data[3:6])
        return self.frame_on(obj_id, np.eye(3), data[0:3])

    def equalities(self):
        m, OBJ, model = self.m, self.mj.mjtObj, self.model
        names = set()
        for i in range(m.neq):
            ename = _fresh(_name(m, self.mj, OBJ.mjOBJ_EQUALITY, i, f"equality{i}"), names)
            names.add(ename)
            kind = int(m.eq_type[i])
            if not m.eq_active0[i]:
                self.ignored.append(f"equality {ename!r} (inactive at start)")
                continue
            ids = int(m.eq_obj1id[i]), int(m.eq_obj2id[i])
            if kind == _JOINT_EQ:
                self.joint_equality(ename, ids, m.eq_data[i][:5])
                continue
            if kind not in (_CONNECT, _WELD):  # tendon, flex, ... equalities
                what = self.mj.mjtEq(kind).name.removeprefix("mjEQ_").lower()
                self.ignored.append(f"{what} equality {ename!r}")
                continue
            ends = [self.site_or_body(i, ids[e], e) for e in (0, 1)]
            if ends[0][0] == ends[1][0]:
                self.ignored.append(f"equality {ename!r} (both ends on one rigid body)")
                continue
            lname, k = ename, 2
            while f"{lname}_predecessor" in self.taken or f"{lname}_successor" in self.taken:
                lname, k = f"{ename}_{k}", k + 1
            self.taken.update({f"{lname}_predecessor", f"{lname}_successor"})
            model.add_loop(lname, "spherical" if kind == _CONNECT else "weld", ends[0][0], ends[1][0],
                           predecessor_placement=ends[0][1], successor_placement=ends[1][1])

    def joint_equality(self, ename, ids, coef):
        """(q1 − ref1) = c0 + c1 (q2 − ref2) + c2 (q2 − ref2)² + ... (MuJoCo's joint equality)."""
        m, model = self.m, self.model
        j1 = self.joint_of[ids[0]]
        ref1 = float(m.qpos0[m.jnt_qposadr[ids[0]]])
        if ids[1] >= 0 and not np.any(coef[2:]):
            j2 = self.joint_of[ids[1]]
            ref2 = float(m.qpos0[m.jnt_qposadr[ids[1]]])
            model.add_transmission(ename, [j1, j2], [1.0, -float(coef[1])],
                                   offset=float(coef[0]) + ref1 - float(coef[1]) * ref2)
            return
        joints = [j1] if ids[1] < 0 else [j1, self.joint_of[ids[1]]]
        ref2 = float(m.qpos0[m.jnt_qposadr[ids[1]]]) if ids[1] >= 0 else 0.0
        f = _JointPolynomial(np.array(coef, dtype=float), ref1, ref2)
        model.add_constraint(HolonomicConstraint(ename, f.residual, f.jacobian, joints=joints, bias=f.bias))


    def collisions(self):
        """Add a collision object per geom (module docstring); returns each geom's index in
        ``model.collisions`` (−1: not loaded)."""
        m, mj, model = self.m, self.mj, self.model
        disabled = int(m.opt.disableflags)
        if disabled & int(mj.mjtDisableBit.mjDSBL_CONTACT):
            if m.ngeom:
                self.ignored.append(f"the {m.ngeom} geoms (the file disables contacts)")
            return (-1,) * int(m.ngeom)
        index, skipped, names = [], [], set()
        for g in range(m.ngeom):
            if m.geom_contype[g] == 0 and m.geom_conaffinity[g] == 0:  # a visual geom: it collides with nothing
                index.append(-1)
                continue
            gname = _fresh(_name(m, mj, mj.mjtObj.mjOBJ_GEOM, g, f"geom{g}"), names)
            try:
                shape = self.geom_shape(g)
            except ValueError as e:  # a size no shape accepts
                shape = str(e)
            if isinstance(shape, str):
                skipped.append(f"{gname} ({shape})")
                index.append(-1)
                continue
            names.add(gname)
            b, R, p = int(m.geom_bodyid[g]), _rotation_wxyz(m.geom_quat[g]), np.array(m.geom_pos[g], dtype=float)
            frame = self.frame_of.get(b)
            if frame is None:  # no model frame at the MuJoCo body's pose: on its soadyn body
                frame, (R, p) = self.frame_on(b, R, p)
                frame = frame if frame == "world" else model.bodies[frame].name
            index.append(model.add_collision(frame, shape, (R, p), name=gname, friction=float(m.geom_friction[g, 0]),
                                             contype=int(m.geom_contype[g]), conaffinity=int(m.geom_conaffinity[g])))
        if skipped:
            self.ignored.append(f"{len(skipped)} geoms that soadyn cannot collide: {', '.join(skipped)}")
        if m.npair:
            self.ignored.append(f"{m.npair} explicit contact pairs (<contact><pair>)")
        if disabled & int(mj.mjtDisableBit.mjDSBL_FILTERPARENT):
            self.ignored.append("filterparent='disable' (soadyn keeps parent and child bodies apart)")
        self.exclusions(index)
        return tuple(index)

    def geom_shape(self, g):
        """The Shape of geom g, or the reason it has none (a str)."""
        m, T = self.m, self.mj.mjtGeom
        kind, size = int(m.geom_type[g]), np.array(m.geom_size[g], dtype=float)
        if kind == T.mjGEOM_PLANE:
            return Plane()
        if kind == T.mjGEOM_SPHERE:
            return Sphere(size[0])
        if kind == T.mjGEOM_CAPSULE:
            return Capsule(size[0], 2.0 * size[1])
        if kind == T.mjGEOM_CYLINDER:
            return Cylinder(size[0], 2.0 * size[1])
        if kind == T.mjGEOM_BOX:
            return Box(2.0 * size)
        if kind == T.mjGEOM_ELLIPSOID:
            return Ellipsoid(size)
        if kind == T.mjGEOM_MESH:
            mesh = int(m.geom_dataid[g])
            start = int(m.mesh_vertadr[mesh])
            return ConvexMesh(m.mesh_vert[start:start + int(m.mesh_vertnum[mesh])])
        return f"a {T(kind).name.removeprefix('mjGEOM_').lower()} geom"

    def exclusions(self, index):
        """Disable the geom pairs of ``<contact><exclude>`` and those MuJoCo's parent filter
        drops but soadyn's parent–child filter keeps (module docstring). ``index``: each
        geom's collision object, −1 when not loaded."""
        m, model = self.m, self.model
        geoms_of = {}  # MuJoCo body -> its loaded geoms' object names
        for g, k in enumerate(index):
            if k >= 0:
                geoms_of.setdefault(int(m.geom_bodyid[g]), []).append(model.collisions[k].name)
        pairs = [(s >> 16, s & 0xFFFF) for s in map(int, m.exclude_signature[:m.nexclude])]
        if not int(m.opt.disableflags) & int(self.mj.mjtDisableBit.mjDSBL_FILTERPARENT):
            weld = m.body_weldid
            soadyn_parent = [-1] + [body.parent for body in model.bodies]
            for w in range(1, m.nbody):
                pw = int(weld[m.body_parentid[w]])
                if weld[w] != w or pw == 0:  # not a weld group's root; or the world, which MuJoCo exempts
                    continue
                sw, spw = self.where[w][0], self.where[pw][0]
                if sw != spw and not (sw >= 0 and spw >= 0 and (soadyn_parent[sw + 1] == spw or
                                                                soadyn_parent[spw + 1] == sw)):
                    group = [b for b in range(m.nbody) if weld[b] == w]
                    parents = [b for b in range(m.nbody) if weld[b] == pw]
                    pairs += [(b1, b2) for b1 in group for b2 in parents]
        for b1, b2 in pairs:
            for a in geoms_of.get(b1, ()):
                for b in geoms_of.get(b2, ()):
                    model.disable_collision(a, b)


class _JointPolynomial:
    """MuJoCo's joint equality 𝔡 = (q₁ − r₁) − c₀ − Σ_{k≥1} c_k (q₂ − r₂)^k as a holonomic
    constraint on the joints (q₁) or (q₁, q₂): Jacobian [1, −P′(d)], acceleration bias
    𝔘̊ = P″(d) q̇₂² (with 𝔡̈ = G_c q̈ − 𝔘̊), d = q₂ − r₂. A class rather than closures so that
    models pickle."""

    def __init__(self, coef, ref1, ref2):
        self.coef, self.ref1, self.ref2 = coef, ref1, ref2

    def _poly(self, q, order):
        if q.shape[0] == 1:
            return 0.0
        d = q[1] - self.ref2
        c = self.coef
        if order == 0:
            return c[1] * d + c[2] * d**2 + c[3] * d**3 + c[4] * d**4
        if order == 1:
            return c[1] + 2 * c[2] * d + 3 * c[3] * d**2 + 4 * c[4] * d**3
        return 2 * c[2] + 6 * c[3] * d + 12 * c[4] * d**2

    def residual(self, q, t):
        q = np.asarray(q, dtype=float)
        return np.array([q[0] - self.ref1 - self.coef[0] - self._poly(q, 0)])

    def jacobian(self, q, t):
        q = np.asarray(q, dtype=float)
        return np.array([[1.0, -self._poly(q, 1)]]) if q.shape[0] == 2 else np.ones((1, 1))

    def bias(self, q, v, t):
        q, v = np.asarray(q, dtype=float), np.asarray(v, dtype=float)
        return np.array([self._poly(q, 2) * v[1] ** 2 if q.shape[0] == 2 else 0.0])


def _left_out(m, mujoco, collisions):
    """Descriptions of the parts of MuJoCo model ``m`` that the loader does not represent
    (``collisions``: whether the geoms were read)."""
    out = []
    contact_off = int(m.opt.disableflags) & int(mujoco.mjtDisableBit.mjDSBL_CONTACT)
    colliding = int(np.count_nonzero((m.geom_contype != 0) | (m.geom_conaffinity != 0))) if m.ngeom else 0
    if colliding and not contact_off and not collisions:
        out.append(f"contacts of {colliding} colliding geoms (collisions=False)")
    for count, what in ((m.nu, "actuators"), (m.ntendon, "tendons"), (m.nflex, "flexes"), (m.nplugin, "plugins")):
        if count:
            out.append(f"{count} {what}")
    for values, what in ((m.jnt_stiffness, "joint springs (stiffness)"), (m.dof_frictionloss, "friction loss"),
                         (m.body_gravcomp, "gravity compensation")):
        if np.any(values):
            out.append(what)
    if m.opt.density or m.opt.viscosity or np.any(m.opt.wind):
        out.append("fluid forces (density, viscosity, wind)")
    return out


# =========================================================================== state converters
def _info(model):
    """``model.mjcf``, checked against the model's current sizes."""
    val.model_argument(model)
    info = getattr(model, "mjcf", None)
    source = model.__dict__.get("_spanning_tree_of")
    if info is None and source is not None and source() is not None:
        info = getattr(source(), "mjcf", None)  # a spanning tree has the same q and v
    if not isinstance(info, MjcfInfo):
        raise ValueError(f"model: {model.name!r} was not loaded by soadyn.load_mjcf (no model.mjcf)")
    if (model.nq, model.nv) != (info.nq, info.nv):
        raise ValueError(f"model: {model.name!r} was edited after load_mjcf (nq, nv = {model.nq}, {model.nv}; "
                         f"loaded with {info.nq}, {info.nv}): the MuJoCo layout no longer applies")
    return info


def _rotations(quat_xyzw):
    """Rotation matrices (..., 3, 3) of quaternions (..., 4) (x, y, z, w)."""
    flat = [sp.quaternion_to_matrix(x) for x in quat_xyzw.reshape(-1, 4)]
    return np.array(flat).reshape(quat_xyzw.shape[:-1] + (3, 3))


def _mv(R, x, transpose=False):
    return np.einsum("...ji,...j->...i" if transpose else "...ij,...j->...i", R, x)


def _free_rotation(jm, config, from_mujoco):
    """Rotation (..., 3, 3) of free joint ``jm``'s body, from MuJoCo's qpos or soadyn's q."""
    if from_mujoco:
        return _rotations(config[..., [jm.qposadr + 4, jm.qposadr + 5, jm.qposadr + 6, jm.qposadr + 3]])
    return _rotations(config[..., jm.q_index + 3:jm.q_index + 7])


def q_from_mujoco(model, qpos):
    """soadyn's q (nq,) or (B, nq) from MuJoCo's ``qpos`` (nq_mujoco,) or (B, nq_mujoco):
    quaternions reordered (w, x, y, z) → (x, y, z, w); hinge and slide coordinates equal."""
    info = _info(model)
    qpos = val.vector(qpos, info.nq_mujoco, "qpos")
    q = np.empty(qpos.shape[:-1] + (model.nq,))
    for jm in info.joints:
        i, a = jm.q_index, jm.qposadr
        if a < 0:
            q[..., i:i + _NQ[jm.kind]] = jm.fill
        elif jm.kind == "free":
            q[..., i:i + 3] = qpos[..., a:a + 3]
            q[..., i + 3:i + 7] = qpos[..., [a + 4, a + 5, a + 6, a + 3]]
        elif jm.kind == "ball":
            q[..., i:i + 4] = qpos[..., [a + 1, a + 2, a + 3, a]]
        else:
            q[..., i] = qpos[..., a]
    return q


def q_to_mujoco(model, q):
    """MuJoCo's ``qpos`` from soadyn's q (inverse of :func:`q_from_mujoco`); coordinates of
    MuJoCo joints soadyn left out (``floating_base=False``) are MuJoCo's ``qpos0``."""
    info = _info(model)
    q = val.vector(q, model.nq, "q")
    qpos = np.empty(q.shape[:-1] + (info.nq_mujoco,))
    qpos[...] = info.qpos0
    for jm in info.joints:
        i, a = jm.q_index, jm.qposadr
        if a < 0:
            continue
        if jm.kind == "free":
            qpos[..., a:a + 3] = q[..., i:i + 3]
            qpos[..., [a + 4, a + 5, a + 6, a + 3]] = q[..., i + 3:i + 7]
        elif jm.kind == "ball":
            qpos[..., [a + 1, a + 2, a + 3, a]] = q[..., i:i + 4]
        else:
            qpos[..., a] = q[..., i]
    return qpos


def _convert(model, q_or_qpos, x, from_mujoco, name, free_rule):
    """Shared loop of the velocity, acceleration and force converters: every coordinate is
    copied, except a free joint's, which ``free_rule(R, ang, lin)`` maps (R the body's
    rotation, ``ang``/``lin`` the angular and linear parts of the input)."""
    info = _info(model)
    n_in, n_out = (info.nv_mujoco, model.nv) if from_mujoco else (model.nv, info.nv_mujoco)
    nq_in = info.nq_mujoco if from_mujoco else model.nq
    config = val.vector(q_or_qpos, nq_in, "qpos" if from_mujoco else "q")
    x = val.vector(x, n_in, name)
    if config.ndim == 2 and config.shape[:-1] != x.shape[:-1]:  # one configuration serves a batch
        raise ValueError(f"{name}: expected {config.shape[0]} rows, one per configuration, got shape {x.shape}")
    out = np.zeros(x.shape[:-1] + (n_out,))
    for jm in info.joints:
        if jm.dofadr < 0:
            continue  # a joint MuJoCo does not have: zero velocity, no force
        src, dst = (jm.dofadr, jm.v_index) if from_mujoco else (jm.v_index, jm.dofadr)
        n = _NV[jm.kind]
        if jm.kind != "free":
            out[..., dst:dst + n] = x[..., src:src + n]
            continue
        R = _free_rotation(jm, config, from_mujoco)
        # MuJoCo: [linear (world); angular (body)]; soadyn: [angular; linear], body frame
        ang = x[..., src + 3:src + 6] if from_mujoco else x[..., src:src + 3]
        lin = x[..., src:src + 3] if from_mujoco else x[..., src + 3:src + 6]
        ang_out, lin_out = free_rule(R, ang, lin)
        if from_mujoco:
            out[..., dst:dst + 3], out[..., dst + 3:dst + 6] = ang_out, lin_out
        else:
            out[..., dst:dst + 3], out[..., dst + 3:dst + 6] = lin_out, ang_out
    return out


def v_from_mujoco(model, qpos, qvel):
    """soadyn's v from MuJoCo's ``qpos``, ``qvel`` (single states or batches): a free joint's
    v = [ω; Rᵀ ṗ] from MuJoCo's [ṗ (world); ω (body)], R its body's rotation."""
    return _convert(model, qpos, qvel, True, "qvel", lambda R, w, v: (w, _mv(R, v, True)))


def v_to_mujoco(model, q, v):
    """MuJoCo's ``qvel`` from soadyn's q, v (inverse of :func:`v_from_mujoco`; MuJoCo
    joints soadyn left out get zero velocity)."""
    return _convert(model, q, v, False, "v", lambda R, w, v_: (w, _mv(R, v_)))


def a_from_mujoco(model, qpos, qvel, qacc):
    """soadyn's v̇ from MuJoCo's ``qacc`` at (``qpos``, ``qvel``): for a free joint
    v̇ = [ω̇; Rᵀ p̈ − ω × Rᵀ ṗ] (the derivative of the body-frame velocity Rᵀ ṗ)."""
    vb = v_from_mujoco(model, qpos, qvel)
    info = _info(model)
    a = _convert(model, qpos, qacc, True, "qacc", lambda R, dw, a_world: (dw, _mv(R, a_world, True)))
    for jm in info.joints:
        if jm.kind == "free" and jm.dofadr >= 0:
            i = jm.v_index
            a[..., i + 3:i + 6] -= np.cross(vb[..., i:i + 3], vb[..., i + 3:i + 6])
    return a


def a_to_mujoco(model, q, v, a):
    """MuJoCo's ``qacc`` from soadyn's q, v, v̇ (inverse of :func:`a_from_mujoco`): for a free
    joint p̈ = R (v̇_lin + ω × v_lin)."""
    info = _info(model)
    v = val.vector(v, model.nv, "v")
    a = np.array(val.vector(a, model.nv, "a"))
    v = np.broadcast_to(v, a.shape)
    for jm in info.joints:
        if jm.kind == "free" and jm.dofadr >= 0:
            i = jm.v_index
            a[..., i + 3:i + 6] += np.cross(v[..., i:i + 3], v[..., i + 3:i + 6])
    return _convert(model, q, a, False, "a", lambda R, dw, al: (dw, _mv(R, al)))


def tau_from_mujoco(model, qpos, qfrc):
    """soadyn's generalized forces τ from MuJoCo's (``qfrc_applied``, ``mj_rne``'s result, ...)
    at ``qpos``: a free joint's τ = [n; Rᵀ f] from MuJoCo's [f (world); n (body)] (the same
    power τ·v as MuJoCo's qfrc·qvel)."""
    return _convert(model, qpos, qfrc, True, "qfrc", lambda R, n, f: (n, _mv(R, f, True)))


def tau_to_mujoco(model, q, tau):
    """MuJoCo's generalized forces from soadyn's τ at q (inverse of :func:`tau_from_mujoco`)."""
    return _convert(model, q, tau, False, "tau", lambda R, n, f: (n, _mv(R, f)))
