"""URDF and URDF+ loader.

Standard URDF (links, joints of type revolute, continuous, prismatic, fixed,
floating and planar) plus the URDF+ extensions used for closed chains:

* ``<joint ... independent="false">``: a spanning-tree joint that is not an
  independent coordinate (kept as ``joint.independent``);
* ``<loop name type>`` with ``<predecessor link><origin/></predecessor>``,
  ``<successor link><origin/></successor>`` and ``<axis/>``: a cut joint, kept in
  ``model.loops``; its two end frames are added to the model as
  ``"<loop>_predecessor"`` and ``"<loop>_successor"``;
* ``<coupling name type>`` with ``<predecessor link/>``, ``<successor link/>`` and
  ``<ratio value/>``: a gear or belt transmission (``type="rolling"``, the default; other
  types are refused), kept in ``model.couplings``.

Every number the reader takes (origins, axes, inertias, limits, ratios, mimic multipliers
and offsets, visual sizes) must be finite: ``nan`` and ``inf``, which Python's ``float``
reads, are refused with a :class:`URDFError` naming the element and the attribute.

Standard ``<mimic joint multiplier offset/>`` (q_follower = multiplier · q_joint + offset)
becomes a :class:`~soadyn.core.constraints.Transmission` per master joint (``mimic="couple"``,
see :func:`load_urdf`).

Each link's ``<collision>`` elements become the model's collision objects
(:meth:`~soadyn.Model.add_collision`, fixed to the link's frame at the element's origin),
named ``"<link>_<i>"`` for the i-th ``<collision>`` of the link and listed in Pinocchio's order
(``pin.buildGeomFromUrdf(..., pin.GeometryType.COLLISION)``: the links depth-first as the
bodies, each link's elements in file order): ``<box size>`` → :class:`~soadyn.geometry.Box`,
``<cylinder radius length>`` → :class:`~soadyn.geometry.Cylinder`, or
:class:`~soadyn.geometry.Capsule` when the link's ``<collision_checking>`` lists the element's
name as ``<capsule name=.../>`` (Pinocchio's extension), ``<sphere radius>`` →
:class:`~soadyn.geometry.Sphere`, ``<mesh filename scale>`` → :class:`~soadyn.geometry.Mesh`
(the convex hull of the file's vertices, read by trimesh; the reference resolved as the
visuals' are), and a ``<capsule radius length>`` element (not URDF: urdfdom rejects it, and
Pinocchio then loses every collision element of the link) → a Capsule. Friction is 1 (URDF
has none; Gazebo's ``<gazebo><mu1>`` is not read). What cannot be read — a mesh file not
found or unreadable, another shape, a malformed or non-positive size — is skipped, and one
warning per load names every skipped element.

Each link's ``<visual>`` elements (box, cylinder, sphere, mesh; origin; material colour)
are kept in ``model.visuals`` (:class:`~soadyn.core.visuals.Visual`, fixed to the link's
frame) for :mod:`soadyn.viewer`; they do not change the dynamics. A mesh reference
``package://PKG/rest`` is the first existing ``DIR/PKG/rest`` for DIR in ``package_dirs``,
then in ``ROS_PACKAGE_PATH`` (Pinocchio's search), then in the folders above the file (which
finds example-robot-data's meshes with no argument); a relative reference is taken from the
file's folder (from the current folder for XML text); a mesh not found keeps
``filename=None`` (the viewer warns and skips it).

Fixed joints are merged: the child link's inertia is added to its parent body and
the link stays addressable as a frame. Every link is a frame of the model.

Body order (hence the order of the joints in q and v) is Pinocchio's for the same file
(``pin.buildModelFromUrdf``): depth-first from the root link, a link's whole subtree
before its next sibling, the child joints of a link in order of joint name (code-point
order: for UTF-8 names, the byte order of urdfdom's ``std::map`` of joints; not the
order in the file), descending through fixed joints in the same way. Depth-first
numbering is parent-first. With ``floating_base=True`` the free joint ``"root_joint"``
comes first, as Pinocchio's ``JointModelFreeFlyer`` root joint does. Checked on every
URDF of example-robot-data 6.0 with Pinocchio 4.1 (tests/interop/test_pinocchio.py).
"""
from __future__ import annotations

import os
import warnings
import xml.etree.ElementTree as ET

import numpy as np

from ..core import joints as jt
from ..core import spatial as sp
from ..core import validation as val
from ..core.constraints import Coupling, Loop
from ..core.model import Model
from ..core.shapes import Box, Capsule, Cylinder, Mesh, Sphere
from ..core.visuals import Visual

__all__ = ["load_urdf", "URDFError"]


class URDFError(ValueError):
    """A malformed URDF file; the message names the offending element."""


def _floats(text, n, where, default=None):
    if text is None:
        if default is None:
            raise URDFError(f"{where}: missing value")
        return np.array(default, dtype=float)
    try:
        vals = np.array([float(x) for x in text.split()])
    except ValueError:
        raise URDFError(f"{where}: expected {n} numbers, got {text!r}") from None
    if vals.shape != (n,) or not np.all(np.isfinite(vals)):
        raise URDFError(f"{where}: expected {n} finite numbers, got {text!r}")
    return vals


def _origin(elem, where):
    """(R, p) of an ``<origin xyz rpy>`` child of ``elem`` (identity when absent)."""
    o = elem.find("origin")
    if o is None:
        return np.eye(3), np.zeros(3)
    p = _floats(o.get("xyz"), 3, f"{where}/origin@xyz", (0.0, 0.0, 0.0))
    rpy = _floats(o.get("rpy"), 3, f"{where}/origin@rpy", (0.0, 0.0, 0.0))
    return sp.rpy_to_matrix(rpy), p


def _scalar(elem, attr, where, default=None):
    text = elem.get(attr)
    if text is None:
        if default is None:
            raise URDFError(f"{where}: missing attribute {attr!r}")
        return default
    try:
        value = float(text)
    except ValueError:
        raise URDFError(f"{where}@{attr}: expected a number, got {text!r}") from None
    if not np.isfinite(value):  # float() reads "nan" and "inf": no URDF quantity takes them
        raise URDFError(f"{where}@{attr}: expected a finite number, got {text!r}")
    return value


def _link_inertia(link):
    """(mass, com, I_c) of a ``<link>`` in the link frame."""
    name = link.get("name")
    where = f"<link name={name!r}>/inertial"
    inertial = link.find("inertial")
    if inertial is None:
        return 0.0, np.zeros(3), np.zeros((3, 3))
    R, p = _origin(inertial, where)
    m = inertial.find("mass")
    mass = 0.0 if m is None else _scalar(m, "value", f"{where}/mass")
    i = inertial.find("inertia")
    if i is None:
        Ic = np.zeros((3, 3))
    else:
        w = f"{where}/inertia"
        ixx, iyy, izz = (_scalar(i, k, w, 0.0) for k in ("ixx", "iyy", "izz"))
        ixy, ixz, iyz = (_scalar(i, k, w, 0.0) for k in ("ixy", "ixz", "iyz"))
        Ic = R @ np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]]) @ R.T
    return mass, p, Ic


def _make_joint(elem, where):
    kind = elem.get("type")
    axis_el = elem.find("axis")
    axis = _floats(axis_el.get("xyz") if axis_el is not None else None, 3, f"{where}/axis@xyz", (1.0, 0.0, 0.0))
    if kind != "fixed" and np.linalg.norm(axis) < 1e-12:
        raise URDFError(f"{where}/axis: the joint axis must be nonzero")
    lim = elem.find("limit")
    lower = upper = None
    if lim is not None and kind in ("revolute", "prismatic"):
        if lim.get("lower") is not None or lim.get("upper") is not None:
            lower = [_scalar(lim, "lower", f"{where}/limit", 0.0)]
            upper = [_scalar(lim, "upper", f"{where}/limit", 0.0)]
            if lower[0] > upper[0]:
                raise URDFError(f"{where}/limit: lower {lower[0]} exceeds upper {upper[0]}")
    if kind == "revolute":
        return jt.Revolute(axis, lower, upper)
    if kind == "continuous":
        return jt.Continuous(axis)
    if kind == "prismatic":
        return jt.Prismatic(axis, lower, upper)
    if kind == "floating":
        return jt.Free()
    if kind == "planar":
        return jt.Planar(axis)
    if kind == "fixed":
        return None
    raise URDFError(f"{where}@type: unsupported joint type {kind!r} (expected revolute, continuous, "
                    "prismatic, fixed, floating or planar)")


#: values of ``load_urdf(..., mimic=)``
MIMIC_MODES = ("couple", "ignore")


def load_urdf(path, floating_base=False, gravity=(0.0, 0.0, -9.81), name=None, strict_inertia=False,
              mimic="couple", package_dirs=None, collisions=True):
    """Load a URDF or URDF+ file (or XML string) into a :class:`~soadyn.Model`.

    Parameters
    ----------
    path : str, bytes or os.PathLike
        File path, or the XML text itself (text that starts with ``<``).
    floating_base : bool (True or False; text such as ``"yes"`` raises TypeError)
        Connect the root link to the world with a free joint (q = [p; quaternion]).
        Refused (:class:`URDFError`) when the root link has no mass or inertia and
        already has a ``floating`` joint to a child (the URDF floats by itself: load it
        with ``floating_base=False``); a warning when a mass-less root would make the
        mass matrix singular otherwise.
    gravity : (3,) world-frame gravity [m/s²].
    name : model name (default: the robot's name).
    strict_inertia : bool, raise on physically impossible link inertias (default: warn, as
        placeholder inertias are common in published files).
    mimic : ``"couple"`` (default) or ``"ignore"``: what becomes of ``<mimic joint=i
        multiplier=m offset=c/>`` on a joint j, the relation q_j = m·q_i + c (m
        dimensionless or in the ratio of the joints' units, c [rad or m]; URDF defaults
        m = 1, c = 0). ``"couple"``: the relation is a constraint — one
        :class:`~soadyn.core.constraints.Transmission` ``"<master>_mimic"`` per master
        joint, with the row q_j − m·q_master = c for each joint j that follows it, the
        followers marked dependent (``independent = False``). A chain of mimics (j mimics
        i, which mimics k) is resolved to the master k: q_j = (m_j m_i)·q_k + (m_j c_i + c_j).
        The model is then a closed-chain system (constant G: no position solve when every
        offset is zero): use :func:`soadyn.constrained_forward_dynamics` or the cluster
        functions, or ``model.spanning_tree()`` for the tree. A mimic on a ``fixed`` joint
        is dropped (the joint is merged and cannot move). ``"ignore"``: the mimicking joints
        are independent joints (the tree), with a warning.
    package_dirs : folders that hold the packages of ``package://PKG/...`` mesh references
        (searched first; see the module docstring), for the visuals and collision meshes.
    collisions : read the ``<collision>`` elements into collision objects (default True;
        see the module docstring). False skips them (and never reads a mesh file for them).

    Raises :class:`URDFError` for malformed files, and for a mimic whose master joint is
    missing, fixed, or not a 1-dof joint (revolute, continuous, prismatic), whose follower
    is a floating or planar joint, or whose chain closes on itself.

    Bodies are numbered depth-first from the root link, a link's child joints in order
    of joint name, so that q and v list the joints in the order of
    ``pin.buildModelFromUrdf(path)`` (``floating_base=True``: of
    ``pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer())``, root joint first); see
    the module docstring.
    """
    if not (isinstance(mimic, str) and mimic in MIMIC_MODES):
        raise ValueError(f"mimic: expected one of {list(MIMIC_MODES)}, got {mimic!r}")
    floating_base = val.flag("floating_base")(floating_base)  # bool("no") would be True
    strict_inertia = val.flag("strict_inertia")(strict_inertia)
    try:
        text = os.fspath(path)
    except TypeError:
        raise TypeError(f"path: expected a file path or the URDF text (str, bytes or os.PathLike), "
                        f"got {type(path).__name__}") from None
    if isinstance(text, bytes):
        is_xml = text.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"<")  # the parser reads the encoding
        if not is_xml:
            text = os.fsdecode(text)
    else:
        text = text.lstrip("\ufeff")  # a byte-order mark left by a decoder
        is_xml = text.lstrip().startswith("<")
    try:
        root = ET.fromstring(text) if is_xml else ET.parse(text).getroot()
    except ET.ParseError as e:
        shown = (text.decode("utf-8", "replace") if isinstance(text, bytes) else text) if is_xml else None
        raise URDFError(_parse_error(e, shown, "URDF string" if is_xml else text)) from None
    except OSError as e:
        shown = text if len(text) <= 200 and "\n" not in text else \
            f"{text[:60]!r}... ({len(text)} characters; XML text must start with '<')"
        raise URDFError(f"{shown}: cannot read ({e.strerror})") from None
    if root.tag != "robot":
        raise URDFError(f"<{root.tag}>: expected a <robot> root element")

    links = {}
    for link in root.findall("link"):
        lname = link.get("name")
        if not lname:
            raise URDFError("<link>: missing attribute 'name'")
        if lname in links:
            raise URDFError(f"<link name={lname!r}>: duplicate link name")
        links[lname] = link
    if not links:
        raise URDFError("<robot>: no <link> elements")

    joints_by_child = {}
    children = {n: [] for n in links}
    joint_names = set()
    mimics = []
    for j in root.findall("joint"):
        jname = j.get("name")
        where = f"<joint name={jname!r}>"
        if not jname:
            raise URDFError("<joint>: missing attribute 'name'")
        if jname in joint_names:
            raise URDFError(f"{where}: duplicate joint name")
        joint_names.add(jname)
        pe, ce = j.find("parent"), j.find("child")
        if pe is None or ce is None:
            raise URDFError(f"{where}: needs <parent link=...> and <child link=...>")
        parent, child = pe.get("link"), ce.get("link")
        for role, lk in (("parent", parent), ("child", child)):
            if lk not in links:
                raise URDFError(f"{where}/{role}: unknown link {lk!r}")
        if child in joints_by_child:
            raise URDFError(f"{where}: link {child!r} is already the child of joint "
                            f"{joints_by_child[child].get('name')!r} (use <loop> for closed chains)")
        if j.get("type") is None:
            raise URDFError(f"{where}: missing attribute 'type'")
        if j.find("mimic") is not None:
            mimics.append(j)
        joints_by_child[child] = j
        children[parent].append(j)

    moving_mimics = [j.get("name") for j in mimics if j.get("type") != "fixed"]
    if moving_mimics and mimic == "ignore":
        warnings.warn(f"{path if len(str(path)) < 200 else 'URDF'}: mimic='ignore': the <mimic> joints "
                      f"{moving_mimics} are loaded as independent joints", stacklevel=2)
    roots = [n for n in links if n not in joints_by_child]
    if len(roots) != 1:
        raise URDFError(f"<robot name={root.get('name')!r}>: expected exactly one root link, "
                        f"found {roots or 'none (the joints form a cycle)'}")

    model = Model(name or root.get("name") or "robot", gravity=gravity)
    # link -> (body index, pose of the link frame in that body's frame)
    where_is = {}
    root_link = roots[0]
    m, c, Ic = _link_inertia(links[root_link])
    if floating_base:
        _check_floating_root(root, root_link, links, children)
        model.add_body(root_link, jt.Free(), None, None, mass=m, com=c, inertia=Ic, joint_name="root_joint",
                       strict_inertia=strict_inertia)
        where_is[root_link] = (0, np.eye(3), np.zeros(3))
    else:
        model.add_frame(root_link, "world")
        where_is[root_link] = (-1, np.eye(3), np.zeros(3))

    # depth-first, a link's child joints by name: Pinocchio's URDF joint order (module docstring)
    for js in children.values():
        js.sort(key=lambda j: j.get("name"))
    stack = list(reversed(children[root_link]))
    visited = {root_link}
    link_order = [root_link]  # depth-first, children by joint name: Pinocchio's geometry order
    while stack:
        j = stack.pop()
        jname = j.get("name")
        where = f"<joint name={jname!r}>"
        parent = j.find("parent").get("link")
        child = j.find("child").get("link")
        if child in visited:
            raise URDFError(f"{where}: link {child!r} is reached twice (cycle)")
        visited.add(child)
        link_order.append(child)
        body, Rl, pl = where_is[parent]
        Ro, po = _origin(j, where)
        R, p = sp.compose_poses(Rl, pl, Ro, po)  # joint frame in the parent body
        joint = _make_joint(j, where)
        m, c, Ic = _link_inertia(links[child])
        if joint is None:  # fixed: merge the child link into the parent body
            if body >= 0:
                com_in_body = p + R @ c
                model.add_inertia(body, m, com_in_body, R @ Ic @ R.T, strict_inertia)
            model.add_frame(child, body if body >= 0 else "world", (R, p))
            where_is[child] = (body, R, p)
        else:
            indep = j.get("independent")
            if indep is not None and indep not in ("true", "false"):
                raise URDFError(f"{where}@independent: expected 'true' or 'false', got {indep!r}")
            joint.independent = indep != "false"
            idx = model.add_body(child, joint, body if body >= 0 else None, (R, p),
                                 mass=m, com=c, inertia=Ic, joint_name=jname, strict_inertia=strict_inertia)
            where_is[child] = (idx, np.eye(3), np.zeros(3))
        stack.extend(reversed(children[child]))

    for lp in root.findall("loop"):
        model.loops.append(_parse_loop(lp, model, where_is))
    for cp in root.findall("coupling"):
        model.couplings.append(_parse_coupling(cp, links))
    if mimics and mimic == "couple":
        _add_mimics(model, mimics, {j.get("name"): j.get("type") for j in root.findall("joint")})
    base = os.path.dirname(os.path.abspath(text)) if not is_xml else os.getcwd()
    resolve = _mesh_resolver(base, package_dirs)
    model.visuals.extend(_visuals(root, links, resolve))
    if collisions:
        skipped = _add_collisions(model, [links[n] for n in link_order], resolve)
        if skipped:
            warnings.warn(f"{path if len(str(path)) < 200 else 'URDF'}: {len(skipped)} <collision> element(s) "
                          f"skipped: {'; '.join(skipped)}", stacklevel=2)
    if floating_base:
        b = model.bodies[0]
        if b.mass == 0 and not np.any(b.inertia_com):
            causes = [cause for cause in model.singular_mass_matrix_causes() if cause.startswith(f"body {b.name!r}")]
            if causes:
                warnings.warn(f"floating_base=True: the root link {root_link!r} has no mass or inertia, so the "
                              f"mass matrix is singular: {causes[0]}", stacklevel=2)
    return model


def _parse_error(e, text, source):
    """The message for an XML syntax error: the parser's message (with line and column,
    counted from 0) and the offending line with a caret, never the whole document.
    ``text``: the XML string, or None to read the line from the file ``source``."""
    line, column = getattr(e, "position", (0, 0))
    try:
        if text is None:
            with open(source, encoding="utf-8", errors="replace") as f:
                lines = f.read().splitlines()
        else:
            lines = text.splitlines()
        snippet = lines[line - 1].expandtabs(1) if 0 < line <= len(lines) else ""
    except OSError:
        snippet = ""
    head = f"{source}: not well-formed XML ({e})"
    if not snippet.strip():
        return head
    start = max(0, min(column - 40, len(snippet) - 80))
    excerpt = snippet[start:start + 80]
    prefix, suffix = ("..." if start > 0 else ""), ("..." if start + 80 < len(snippet) else "")
    caret = " " * (len(prefix) + column - start) + "^"
    return f"{head}\n    {prefix}{excerpt}{suffix}\n    {caret}"


def _check_floating_root(root, root_link, links, children):
    """Refuse ``floating_base=True`` when the root link (with the links fixed to it, which
    form the body the added free joint moves) has no mass or inertia and already has a
    floating joint to a child: the added free joint and the URDF's would move the robot the
    same way, and the mass matrix would be singular."""
    group, stack = [root_link], list(children[root_link])
    floating = []
    while stack:
        j = stack.pop()
        if j.get("type") == "fixed":
            child = j.find("child").get("link")
            group.append(child)
            stack.extend(children[child])
        elif j.get("type") == "floating":
            floating.append(j)
    if not floating:
        return
    inertias = [_link_inertia(links[n]) for n in group]
    if all(mass == 0 and not np.any(Ic) for mass, _, Ic in inertias):
        j = floating[0]
        raise URDFError(
            f"<robot name={root.get('name')!r}>: floating_base=True adds a free joint above the root link "
            f"{root_link!r}, but that link has no mass or inertia and already connects to "
            f"{j.find('child').get('link')!r} through the floating joint {j.get('name')!r}: the two free joints "
            "would move the robot the same way and the mass matrix would be singular. Load it with "
            "floating_base=False; the URDF's own floating joint already makes the robot free-floating")


def _end(elem, tag, where, links):
    e = elem.find(tag)
    if e is None:
        raise URDFError(f"{where}: missing <{tag} link=...>")
    link = e.get("link")
    if link not in links:
        raise URDFError(f"{where}/{tag}: unknown link {link!r}")
    return e, link


def _parse_loop(lp, model, where_is):
    name = lp.get("name")
    where = f"<loop name={name!r}>"
    if not name:
        raise URDFError("<loop>: missing attribute 'name'")
    kind = lp.get("type")
    if kind is None:
        raise URDFError(f"{where}: missing attribute 'type'")
    frames = []
    for tag in ("predecessor", "successor"):
        e, link = _end(lp, tag, where, where_is)
        R, p = _origin(e, f"{where}/{tag}")
        fname = f"{name}_{tag}"
        model.add_frame(fname, link, (R, p))
        frames.append(fname)
    axis_el = lp.find("axis")
    axis = _floats(axis_el.get("xyz") if axis_el is not None else None, 3, f"{where}/axis@xyz", (0.0, 0.0, 1.0))
    if np.linalg.norm(axis) < 1e-12:
        raise URDFError(f"{where}/axis: the loop joint axis must be nonzero")
    try:
        return Loop(name, kind, frames[0], frames[1], axis / np.linalg.norm(axis))
    except ValueError as e:
        raise URDFError(f"{where}@type: {e}") from None


#: the URDF+ ``<coupling type>`` values: ``rolling``, a gear or belt (ratio × the predecessor's
#: rates = the successor's; the default when ``type`` is absent)
COUPLING_TYPES = ("rolling",)


def _parse_coupling(cp, links):
    name = cp.get("name")
    where = f"<coupling name={name!r}>"
    if not name:
        raise URDFError("<coupling>: missing attribute 'name'")
    _, pred = _end(cp, "predecessor", where, links)
    _, succ = _end(cp, "successor", where, links)
    r = cp.find("ratio")
    if r is None:
        raise URDFError(f"{where}: missing <ratio value=...>")
    ratio = _scalar(r, "value", f"{where}/ratio")
    kind = cp.get("type", "rolling")
    if kind not in COUPLING_TYPES:
        raise URDFError(f"{where}@type: expected one of {list(COUPLING_TYPES)} (a gear or belt transmission), "
                        f"got {kind!r}")
    return Coupling(name, pred, succ, ratio, kind)


def _parse_mimic(j):
    """(master joint name, multiplier, offset [rad or m]) of the ``<mimic>`` of joint ``j``."""
    where = f"<joint name={j.get('name')!r}>/mimic"
    e = j.find("mimic")
    master = e.get("joint")
    if not master:
        raise URDFError(f"{where}: missing attribute 'joint'")
    return master, _scalar(e, "multiplier", where, 1.0), _scalar(e, "offset", where, 0.0)


_ONE_DOF = ("revolute", "continuous", "prismatic")


def _add_mimics(model, mimic_joints, types):
    """Add one Transmission per master joint for the ``<mimic>`` relations q_j = m q_i + c
    of ``mimic_joints`` (the ``<joint>`` elements), chains resolved to the master;
    ``types``: joint name -> URDF joint type. See :func:`load_urdf` (``mimic="couple"``)."""
    relation = {j.get("name"): _parse_mimic(j) for j in mimic_joints}
    groups = {}  # master -> [(follower, multiplier, offset)]
    for follower, (master, _, _) in relation.items():
        where = f"<joint name={follower!r}>/mimic"
        kind = types[follower]
        if kind == "fixed":
            continue  # merged into its parent body: nothing moves, nothing to couple
        if kind not in _ONE_DOF:
            raise URDFError(f"{where}: the mimicking joint is a {kind} joint; a mimic relates 1-dof joints "
                            f"({', '.join(_ONE_DOF)}). Load with mimic='ignore' to keep it independent")
        # q_follower = mult · q_current + off, walked up the chain to the master
        mult, off, current, chain = 1.0, 0.0, follower, [follower]
        while current in relation:
            nxt, m, c = relation[current]
            if nxt not in types:
                raise URDFError(f"<joint name={current!r}>/mimic@joint: unknown joint {nxt!r}. Load with "
                                "mimic='ignore' to keep the mimicking joints independent")
            if nxt in chain:
                raise URDFError(f"{where}: the mimic relations form a cycle: {' -> '.join(chain + [nxt])}")
            chain.append(nxt)
            if types[nxt] not in _ONE_DOF:
                raise URDFError(f"{where}: {current!r} mimics {nxt!r} (chain {' -> '.join(chain)}), a "
                                f"{types[nxt]} joint; a mimic follows a 1-dof joint ({', '.join(_ONE_DOF)})")
            mult, off, current = mult * m, mult * c + off, nxt
        groups.setdefault(current, []).append((follower, mult, off))
    for master, followers in groups.items():
        followers.sort(key=lambda f: model.joint(f[0]).v_index)  # in the order of v
        k = len(followers)
        ratios = np.zeros((k, k + 1))
        ratios[:, :k] = np.eye(k)
        ratios[:, k] = [-m for _, m, _ in followers]
        try:
            model.add_transmission(f"{master}_mimic", [f for f, _, _ in followers] + [master], ratios,
                                   offset=[c for _, _, c in followers])
        except ValueError as e:
            raise URDFError(f"<joint name={followers[0][0]!r}>/mimic: {e}") from None


def _collision_shape(elem, where, capsules, resolve, meshes):
    """The :class:`~soadyn.core.shapes.Shape` of a ``<collision>`` element (module
    docstring); raises URDFError, ValueError or OSError with the reason it cannot be read.
    ``meshes`` holds the meshes already read in this load, by (path, scale)."""
    g = elem.find("geometry")
    shape = None if g is None else next(iter(g), None)
    if shape is None:
        raise URDFError("no <geometry> with a shape")
    tag = shape.tag
    if tag == "box":
        return Box(_floats(shape.get("size"), 3, f"{where}/box@size"))
    if tag in ("cylinder", "capsule"):
        r, length = (_scalar(shape, k, f"{where}/{tag}") for k in ("radius", "length"))
        is_capsule = tag == "capsule" or (elem.get("name") is not None and elem.get("name") in capsules)
        return Capsule(r, length) if is_capsule else Cylinder(r, length)
    if tag == "sphere":
        return Sphere(_scalar(shape, "radius", f"{where}/sphere"))
    if tag == "mesh":
        uri = shape.get("filename")
        if not uri:
            raise URDFError("<mesh> without a filename")
        scale = tuple(_floats(shape.get("scale"), 3, f"{where}/mesh@scale", (1.0, 1.0, 1.0)))
        filename = resolve(uri)
        if filename is None:
            raise FileNotFoundError(f"mesh {uri!r} not found (pass package_dirs=)")
        key = (filename, scale)
        if key not in meshes:  # a file several links share is read once
            meshes[key] = Mesh(filename, scale)
        return meshes[key]
    raise URDFError(f"unsupported shape <{tag}> (expected box, cylinder, sphere, mesh or capsule)")


def _add_collisions(model, links, resolve):
    """Add the collision objects of the ``<link>`` elements ``links`` (in Pinocchio's
    order) to ``model``; returns the descriptions of the elements skipped."""
    skipped, meshes = [], {}
    for link in links:
        lname = link.get("name")
        capsules = {c.get("name") for cc in link.findall("collision_checking") for c in cc.findall("capsule")}
        for i, elem in enumerate(link.findall("collision")):
            where = f"<link name={lname!r}>/collision[{i}]"
            try:
                shape = _collision_shape(elem, where, capsules, resolve, meshes)
                T = np.eye(4)
                T[:3, :3], T[:3, 3] = _origin(elem, where)
            except (URDFError, ValueError, TypeError, OSError, ImportError) as e:
                skipped.append(f"{lname}_{i} ({e})")
                continue
            model.add_collision(lname, shape, T, name=f"{lname}_{i}")
    return skipped


def _materials(root):
    """Colours of the robot-level ``<material name><color rgba/></material>`` elements."""
    colors = {}
    for m in root.findall("material"):
        c = m.find("color")
        if m.get("name") and c is not None:
            colors[m.get("name")] = tuple(_floats(c.get("rgba"), 4, f"<material name={m.get('name')!r}>/color@rgba"))
    return colors


def _visuals(root, links, resolve):
    """The :class:`Visual` of every ``<link><visual>`` (named ``"<link>_<i>"``)."""
    colors = _materials(root)
    out = []
    for lname, link in links.items():
        for i, v in enumerate(link.findall("visual")):
            where = f"<link name={lname!r}>/visual[{i}]"
            g = v.find("geometry")
            shape = None if g is None else next(iter(g), None)
            if shape is None:
                raise URDFError(f"{where}: missing <geometry> with a shape")
            T = np.eye(4)
            T[:3, :3], T[:3, 3] = _origin(v, where)
            kw = {}
            if shape.tag == "box":
                kind, size = "box", _floats(shape.get("size"), 3, f"{where}/box@size")
            elif shape.tag == "cylinder":
                kind = "cylinder"
                size = [_scalar(shape, "radius", f"{where}/cylinder"), _scalar(shape, "length", f"{where}/cylinder")]
            elif shape.tag == "sphere":
                kind, size = "sphere", [_scalar(shape, "radius", f"{where}/sphere")]
            elif shape.tag == "mesh":
                uri = shape.get("filename")
                if not uri:
                    raise URDFError(f"{where}/mesh: missing attribute 'filename'")
                kind, size = "mesh", _floats(shape.get("scale"), 3, f"{where}/mesh@scale", (1.0, 1.0, 1.0))
                kw = {"uri": uri, "filename": resolve(uri)}
            else:  # not URDF (some files carry <capsule>): the dynamics need no visual
                warnings.warn(f"{where}/geometry: unsupported shape <{shape.tag}> (expected box, cylinder, "
                              "sphere or mesh): not drawn", stacklevel=3)
                continue
            m = v.find("material")
            rgba = None
            if m is not None:
                c = m.find("color")
                rgba = tuple(_floats(c.get("rgba"), 4, f"{where}/material/color@rgba")) if c is not None \
                    else colors.get(m.get("name"))
            try:
                out.append(Visual(f"{lname}_{i}", lname, kind, size, T, rgba=rgba, **kw))
            except ValueError as e:
                raise URDFError(f"{where}: {e}") from None
    return out


def _mesh_resolver(base, package_dirs):
    """``resolve(uri)``: the absolute path of a mesh reference, or None when no file is
    found (see the module docstring for the search order)."""
    if isinstance(package_dirs, (str, os.PathLike)):
        package_dirs = [package_dirs]
    dirs = [os.fspath(d) for d in (package_dirs or ())]
    dirs += [d for d in os.environ.get("ROS_PACKAGE_PATH", "").split(os.pathsep) if d]
    up = base
    while True:  # the folders above the file: a package beside one of them
        dirs.append(up)
        parent = os.path.dirname(up)
        if parent == up:
            break
        up = parent

    def resolve(uri):
        if uri.startswith("package://"):
            pkg, _, rest = uri[len("package://"):].partition("/")
            candidates = [os.path.join(d, pkg, rest) for d in dirs]
        elif uri.startswith("file://"):
            candidates = [uri[len("file://"):]]
        else:
            candidates = [os.path.join(base, uri)]
        return next((os.path.abspath(c) for c in candidates if os.path.isfile(c)), None)

    return resolve
