"""Mass-less body partitioning of multi-dof hinges, and its reverse ([Jain23p, §2]).

[Jain23p, §2] inserts a mass-less body k′ between a body k and its parent and gives it
some of the hinge's generalized velocities; the dynamics are unchanged when the
*mass-less body partitioning assumption* holds ([Jain23p, eq. 5]: φ(℘(k), k) =
φ(℘(k), k′)φ(k′, k), H(k) = [H(k″); H(k′)φ(k′, k)], a(k) = a(k) + φ*(k′, k)a(k′),
M(k′) = 0). Repeating it splits a multi-dof hinge into 1-dof *sub-hinges* joined by
mass-less *sub-bodies*, each sub-hinge with a constant joint map.

* :func:`partition_hinges` — every multi-dof hinge (spherical, free, universal, gimbal,
  planar) becomes a chain of 1-dof revolute and prismatic sub-hinges.
* :func:`merge_massless` — the reverse contraction of mass-less bodies into the
  multi-dof hinge types the library has (universal, gimbal, planar).
* :func:`partitioned_state` / :func:`unpartitioned_state` — the state maps between a
  model and its partitioned form (q, v, q̈ and the generalized forces τ).

Naming
------
A hinge ``J`` of ``n`` degrees of freedom on body ``B`` becomes the sub-hinges
``"J[0]" … "J[n-1]"`` (inboard to outboard) and the mass-less sub-bodies
``"B[0]" … "B[n-2]"``; sub-hinge ``J[s]`` moves sub-body ``B[s]`` (the last one, ``J[n-1]``,
moves ``B`` itself). Every other body, joint and frame keeps its name; the sub-bodies are
numbered just before their body (parent-first), so q and v keep their order. Frame
*indices* shift by the sub-bodies' own frames; look frames up by name.

Coordinates
-----------
Universal, gimbal and planar joints already *are* chains of 1-dof sub-hinges: their
partitioned coordinates are the same numbers (q, v, q̈, τ unchanged), and the two models
have equal mass matrices, bias forces and accelerations at equal states.

A spherical joint (quaternion) or a free joint (position + quaternion) cannot be a chain
of 1-dof hinges globally: three revolute sub-hinges are Euler angles, singular where the
middle angle is ±π/2. ``partition_hinges(model, q)`` therefore centres each such chart at
the *reference configuration* q (default: the neutral one): the reference rotation
R_ref (and, for a free joint, the reference position p_ref) moves into the placement of
the first sub-hinge, followed by revolute sub-hinges about x, y, z (R = R_ref Rx(θ₀)
Ry(θ₁) Rz(θ₂)) and, for a free joint, prismatic sub-hinges along the x, y, z axes of the
rotated (child) frame (p = p_ref + R d). At the reference configuration every sub-hinge
coordinate is zero, the sub-bodies coincide with body k and the sub-hinge maps are the
unit columns of H*(k) ([Jain23p, §2]: the joint map matrix is trivially partitioned),
so v is unchanged there; elsewhere v = T(q_p) v_p with T the Euler-rate map (see
:func:`partitioned_state`), and the chart is valid while the middle angle stays away
from ±π/2. The partitioned model is the same mechanical system in other coordinates:
M_p = Tᵀ M T, τ_p = Tᵀ τ, and aba/rnea agree through the state maps.

Models with couplings, transmissions, user constraints or declared clusters are refused
(their descriptions name joints and coordinates that partitioning changes); loops (cut
joints between named frames) are kept.
"""
from __future__ import annotations

import copy
import warnings
from collections import namedtuple

import numpy as np

from . import joints as jt
from . import spatial as sp
from . import validation as val
from .compile import snapshot
from .model import Model

__all__ = ["partition_hinges", "merge_massless", "partitioned_state", "unpartitioned_state", "PartitionState",
           "sub_hinge_name", "sub_body_name", "partitioned_body_names"]

#: axes of the sub-hinges that partition a spherical joint (rotations) and a free joint
#: (rotations, then translations along the rotated axes)
_XYZ = np.eye(3)
_EULER = jt.Gimbal(("x", "y", "z"))  # the kinematics of the rotation sub-hinges R_ref⁻¹R = Rx Ry Rz

PartitionState = namedtuple("PartitionState", ["q", "v", "a", "tau"])
PartitionState.__doc__ = """A state in the coordinates of the other model: ``q`` (nq,),
``v`` (nv,) velocity, ``a`` (nv,) acceleration q̈ and ``tau`` (nv,) generalized forces —
each None when the corresponding input was not given."""


def sub_hinge_name(joint, s):
    """Name of sub-hinge ``s`` of the hinge named ``joint`` after :func:`partition_hinges`."""
    return f"{joint}[{s}]"


def sub_body_name(body, s):
    """Name of the mass-less sub-body ``s`` (0 … n−2) inserted inboard of ``body``."""
    return f"{body}[{s}]"


def partitioned_body_names(model):
    """The body names of ``partition_hinges(model)``, in its body order: ``B[0] … B[n-2], B``
    for a body ``B`` on an n-dof hinge (n > 1), ``B`` otherwise."""
    names = []
    for b in model.bodies:
        names += [sub_body_name(b.name, s) for s in range(b.joint.nv - 1)] + [b.name]
    return names


# =========================================================================== checks
def _check_model(model, what):
    if not isinstance(model, Model):
        raise val.not_a_model(model)
    if model.symbolic:
        raise TypeError(f"{what}: model {model.name!r} has symbolic (sympy) parameters; partition a numeric model")
    extra = [kind for kind, items in (("couplings or transmissions", model.couplings),
                                      ("user constraints", model.user_constraints),
                                      ("declared clusters", model.declared_clusters)) if items]
    if extra:
        raise ValueError(f"{what}: model {model.name!r} has {' and '.join(extra)}, which name joints and "
                         "coordinates that partitioning changes; pass model.spanning_tree() (the open tree) instead")


def _fresh_joint(joint):
    """A copy of ``joint`` that belongs to no model (same type, axes, limits, flags)."""
    j = copy.copy(joint)
    j.__dict__.pop("_owner", None)  # setting attributes below must not edit the source model
    j.__dict__.update(name=None, q_index=None, v_index=None, body=None)
    return j


def _add_body(out, name, joint, parent, placement, joint_name, body=None):
    """``out.add_body`` with the inertia of the source ``body`` (None: mass-less). The
    source model already checked (or, loaded with ``strict_inertia=False``, warned about)
    its inertias: they are copied without a second check or warning."""
    inertia = {} if body is None else dict(mass=body.mass, com=body.com, inertia=body.inertia_com)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out.add_body(name, joint, parent, placement, joint_name=joint_name, strict_inertia=False, **inertia)


def _new_model(model, suffix):
    return Model(f"{model.name} ({suffix})", model.gravity)


def _copy_frames_and_loops(model, out):
    """The frames that are not body frames (by body name, same placement) and the loops."""
    bodies = set(model.body_names)
    for f in model.frames:
        if f.name in bodies:
            continue
        out.add_frame(f.name, "world" if f.body < 0 else model.bodies[f.body].name, (f.rotation, f.translation))
    for loop in model.loops:
        out.add_constraint(loop)  # (immutable: shared)


def _taken(model):
    return set(model.body_names) | set(model.frame_names) | {j.name for j in model.joints}


# =========================================================================== partition
def _reference_pose(joint, q_ref):
    """(R_ref, p_ref) of a spherical or free joint at its reference coordinates."""
    if q_ref is None:
        return np.eye(3), np.zeros(3)
    R, p = joint.pose(q_ref)
    return np.asarray(R, dtype=float), np.asarray(p, dtype=float)


def _sub_hinges(joint, q_ref):
    """[(sub-hinge joint, pose of its joint frame in the previous sub-frame)], or None when
    the hinge stays whole (0 or 1 degree of freedom)."""
    same = (np.eye(3), np.zeros(3))
    if isinstance(joint, (jt.Spherical, jt.Free)):
        R_ref, p_ref = _reference_pose(joint, q_ref)
        subs = [jt.Revolute(a) for a in _XYZ]
        if isinstance(joint, jt.Free):
            subs += [jt.Prismatic(a) for a in _XYZ]
        return [(j, (R_ref, p_ref) if s == 0 else same) for s, j in enumerate(subs)]
    if joint.nv > 1:  # universal, gimbal, planar: the sub-hinges they are made of
        axes, kinds = joint.axes()[:joint.nv], joint.subkinds()
        subs = [(jt.Revolute if kind == 0 else jt.Prismatic)(a, [lo], [hi])
                for a, kind, lo, hi in zip(axes, kinds, joint.lower, joint.upper)]
        return [(j, same) for j in subs]
    return None


def partition_hinges(model, q=None):
    """The equivalent model in which every multi-dof hinge is a chain of 1-dof sub-hinges
    joined by mass-less sub-bodies ([Jain23p, §2], the mass-less body partitioning of eq. 5).

    Parameters
    ----------
    model : Model (a tree, or a model with loops; not with couplings, transmissions, user
        constraints or declared clusters).
    q : optional (nq,) reference configuration: the chart centre of the spherical and free
        joints (their sub-hinge coordinates are zero there and the sub-bodies coincide
        with the body, see the module docstring). Default: the neutral configuration.
        Universal, gimbal and planar joints do not depend on it.

    Returns a new :class:`~soadyn.Model` named ``"<name> (partitioned)"``:

    =============  ===============================================================
    hinge          sub-hinges (inboard → outboard)
    =============  ===============================================================
    universal      revolute axis1, revolute axis2
    gimbal         revolute axes[0], axes[1], axes[2]
    planar         prismatic, prismatic (the two in-plane axes), revolute (normal)
    spherical      revolute x, y, z (after the reference rotation)
    free           revolute x, y, z, then prismatic x, y, z of the rotated frame
    =============  ===============================================================

    Sub-hinge ``s`` of joint ``J`` is named ``"J[s]"`` and moves the mass-less sub-body
    ``"B[s]"`` of body ``B`` (the last one moves ``B``); every other name is kept. The
    sub-hinges of a composite joint take its limits; those of spherical and free joints
    have none. Map states with :func:`partitioned_state`.
    """
    _check_model(model, "model")
    model = snapshot(model)
    q_ref = None if q is None else val.vector(q, model.nq, "q", batch_ok=False)
    taken = _taken(model)
    out = _new_model(model, "partitioned")
    for b in model.bodies:
        j = b.joint
        parent = None if b.parent < 0 else model.bodies[b.parent].name
        subs = _sub_hinges(j, None if q_ref is None else q_ref[j.q_index:j.q_index + j.nq])
        if subs is None:
            _add_body(out, b.name, _fresh_joint(j), parent, b.placement, j.name, b)
            continue
        n = len(subs)
        names = [sub_body_name(b.name, s) for s in range(n - 1)] + [b.name]
        jnames = [sub_hinge_name(j.name, s) for s in range(n)]
        clash = sorted(taken.intersection(names[:-1] + jnames))
        if clash:
            raise ValueError(f"model: the names {clash} of the sub-bodies/sub-hinges of the {j.kind} joint "
                             f"{j.name!r} are already used in model {model.name!r}; rename them first")
        for s, (sub, pose) in enumerate(subs):
            sub.independent = j.independent
            placement = sp.compose_poses(*b.placement, *pose) if s == 0 else pose
            _add_body(out, names[s], sub, parent, placement, jnames[s], b if s == n - 1 else None)
            parent = names[s]
    _copy_frames_and_loops(model, out)
    return out


# =========================================================================== merge
_MERGE_TOL = 1e-12


def _massless(b):
    return b.mass == 0.0 and not np.any(b.inertia_com)


def _identity_pose(pose):
    R, p = pose
    return np.abs(np.asarray(R) - np.eye(3)).max() <= _MERGE_TOL and np.abs(np.asarray(p)).max() <= _MERGE_TOL


def _axial(joint):
    """(kind, axis) of a revolute (0) or prismatic (1) joint, else None (helical: no)."""
    if isinstance(joint, jt.Revolute):
        return 0, joint.axis
    if isinstance(joint, jt.Prismatic):
        return 1, joint.axis
    return None


def _merged_joint(piece):
    """The library joint that is exactly the chain of 1-dof hinges of the bodies ``piece``
    (inboard first; limits concatenated), or None."""
    chain = [_axial(b.joint) for b in piece]
    kinds = tuple(k for k, _ in chain)
    axes = [a for _, a in chain]
    lower = np.concatenate([b.joint.lower for b in piece])
    upper = np.concatenate([b.joint.upper for b in piece])
    if kinds == (0, 0):
        joint = jt.Universal(*axes, lower=lower, upper=upper)
    elif kinds == (0, 0, 0):
        joint = jt.Gimbal(tuple(axes), lower=lower, upper=upper)
    elif kinds == (1, 1, 0) and np.abs(jt.Planar(axes[2]).axes() - np.array(axes)).max() <= _MERGE_TOL:
        joint = jt.Planar(axes[2], lower=lower, upper=upper)
    else:
        return None
    joint.independent = piece[0].joint.independent
    return joint


def _chains(model):
    """Maximal chains of bodies [c₀, …, c_m] joined by 1-dof revolute/prismatic hinges in
    which c₀ … c_{m−1} are mass-less, have one child each, carry no frame of their own
    (besides the body frame, which no loop names) and the next hinge's placement is the
    identity."""
    children = [[] for _ in model.bodies]
    for b in model.bodies:
        if b.parent >= 0:
            children[b.parent].append(b.index)
    own_frames = [0] * len(model.bodies)
    for f in model.frames:
        if f.body >= 0 and f.name != model.bodies[f.body].name:
            own_frames[f.body] += 1
    named = {name for lp in model.loops for name in (lp.predecessor, lp.successor)}

    def contractible(b):  # b can become part of the hinge below it
        if not (_massless(b) and len(children[b.index]) == 1 and _axial(b.joint) is not None):
            return False
        c = model.bodies[children[b.index][0]]
        return (not own_frames[b.index] and b.name not in named and _axial(c.joint) is not None
                and _identity_pose(c.placement) and c.joint.independent == b.joint.independent)

    chains = []
    for e in model.bodies:
        if _axial(e.joint) is None or contractible(e):
            continue
        chain = [e.index]
        while e.parent >= 0 and contractible(model.bodies[e.parent]):
            e = model.bodies[e.parent]
            chain.insert(0, e.index)
        if len(chain) > 1:
            chains.append(chain)
    return chains


def _merged_name(names, taken):
    """``J`` when ``names`` are all the sub-hinges ``J[0] … J[n-1]`` of a partitioned hinge
    (no ``J[n]`` in ``taken``), else the names joined by ``+``."""
    base = names[0][:-3] if names[0].endswith("[0]") else None
    n = len(names)
    if base and names == [sub_hinge_name(base, s) for s in range(n)] and sub_hinge_name(base, n) not in taken:
        return base
    return "+".join(names)


def merge_massless(model):
    """Contract mass-less bodies into multi-dof hinges: the reverse of :func:`partition_hinges`.

    A chain of 1-dof revolute/prismatic hinges through mass-less bodies (zero mass and
    rotational inertia, one child each, no frames of their own, identity placements
    between the sub-hinges) is cut, from its outboard end, into the longest pieces that
    are exactly a library joint:

    * revolute, revolute → :class:`~soadyn.joints.Universal`;
    * revolute ×3 → :class:`~soadyn.joints.Gimbal`;
    * prismatic, prismatic, revolute → :class:`~soadyn.joints.Planar` when the axes are the
      ones ``Planar(normal)`` builds for the revolute axis.

    Pieces that match none stay as they are (1-dof hinges with their mass-less bodies):
    for instance three prismatic sub-hinges (the library has no 3-dof translation joint),
    or a planar chain whose in-plane axes differ from ``Planar``'s choice. The
    quaternion joints are not rebuilt: the revolute x, y, z sub-hinges of a partitioned
    spherical joint merge into a gimbal (Euler angles), and those of a free joint into a
    gimbal followed by three prismatic hinges.

    The merged hinge sits on the outboard body of its piece and takes the placement of the
    piece's first sub-hinge, its limits and coordinates (q, v unchanged in value; each
    merged joint's coordinates move to its body's place in the order). Its name is ``J``
    for sub-hinges named ``J[0] … J[n-1]`` (as :func:`partition_hinges` names them), else
    the sub-hinge names joined by ``"+"``; the contracted mass-less bodies (and their body
    frames) disappear, every other name is kept. Models with couplings, transmissions, user
    constraints or declared clusters are refused. Returns a new model named
    ``"<name> (merged)"``; map states with :func:`unpartitioned_state`.
    """
    _check_model(model, "model")
    model = snapshot(model)
    joint_names = {j.name for j in model.joints}
    merged_into = {}  # body index -> (merged joint, name, placement) for a piece's outboard body
    removed = set()
    for chain in _chains(model):
        end = len(chain)  # chain[:end] is still to be cut
        while end > 1:
            for length in (3, 2):
                start = end - length
                piece = [model.bodies[i] for i in chain[max(start, 0):end]]
                joint = None if start < 0 else _merged_joint(piece)
                if joint is not None:
                    merged_into[piece[-1].index] = (joint, _merged_name([b.joint.name for b in piece], joint_names),
                                                    piece[0].placement)
                    removed.update(b.index for b in piece[:-1])
                    end = start
                    break
            else:
                end -= 1  # the outboard sub-hinge matches nothing: it stays a 1-dof hinge
    out = _new_model(model, "merged")
    for b in model.bodies:
        if b.index in removed:
            continue
        p = b.parent
        while p in removed:
            p = model.bodies[p].parent
        parent = None if p < 0 else model.bodies[p].name
        if b.index in merged_into:
            joint, name, placement = merged_into[b.index]
        else:
            joint, name, placement = _fresh_joint(b.joint), b.joint.name, b.placement
        _add_body(out, b.name, joint, parent, placement, name, b)
    _copy_frames_and_loops(model, out)
    return out


# =========================================================================== state maps
def _euler_xyz(R):
    """(θ₀, θ₁, θ₂) with R = Rx(θ₀) Ry(θ₁) Rz(θ₂), |θ₁| < π/2."""
    cb = float(np.hypot(R[0, 0], R[0, 1]))
    if cb < 1e-9:
        raise ValueError("q: the rotation is at the singularity of the partitioned chart (middle sub-hinge angle "
                         "±π/2 from the reference configuration); partition at a reference q closer to this state")
    return np.array([np.arctan2(-R[1, 2], R[2, 2]), np.arctan2(R[0, 2], cb), np.arctan2(-R[0, 1], R[0, 0])])


def _rate_map(kind, q_sub):
    """(T, c): the hinge's velocity v = T v_p and acceleration a = T a_p + c(v_p) in terms
    of its sub-hinges' (``c`` a function of v_p), for a spherical or free chart."""
    th = q_sub[:3]
    J = np.asarray(_EULER.motion_subspace(th), dtype=float)[:3]  # ω = J θ̇ (child frame)
    if kind == "spherical":
        return J, lambda vp: np.asarray(_EULER.bias(th, vp), dtype=float)[:3]
    d = q_sub[3:]
    # the rotation columns act at the child origin, offset by d from the rotation centre:
    # [g; g × d]; the translation columns are the child axes [0; e]
    T = np.zeros((6, 6))
    T[:3, :3] = J
    T[3:, :3] = -sp.skew(d) @ J
    T[3:, 3:] = np.eye(3)

    def bias(vp):  # Ḣ*v_p = [J̇θ̇; (J̇θ̇) × d + ω × ḋ] (the chain's Σ_{k<j} h_k v_k × h_j v_j)
        w_dot = np.asarray(_EULER.bias(th, vp[:3]), dtype=float)[:3]
        return np.concatenate([w_dot, np.cross(w_dot, d) + np.cross(J @ vp[:3], vp[3:])])
    return T, bias


def _correspondence(model, partitioned):
    """[(joint of ``model``, its sub-hinges in ``partitioned``, chart kind, (R_ref, p_ref))]."""
    if not isinstance(partitioned, Model):
        raise val.not_a_model(partitioned)
    by_name = {j.name: j for j in partitioned.joints}
    out = []
    for b in model.bodies:
        j = b.joint
        if j.nv == 0:
            continue
        same = by_name.get(j.name)
        if same is not None and same.kind == j.kind and same.nq == j.nq:
            out.append((j, [same], "same", None))
            continue
        names = j.name.split("+") if "+" in j.name else [sub_hinge_name(j.name, s) for s in range(j.nv)]
        subs = [by_name[n] for n in names if n in by_name]
        if len(subs) != len(names) or len(subs) != j.nv or any(s.nv != 1 for s in subs):
            raise ValueError(f"partitioned: model {partitioned.name!r} has no 1-dof sub-hinges {names} for the "
                             f"{j.kind} joint {j.name!r}: it is not partition_hinges(model) (nor a model that "
                             "merge_massless turns into model)")
        if isinstance(j, (jt.Spherical, jt.Free)):
            first = partitioned.bodies[subs[0].body]
            ref = sp.compose_poses(*sp.inverse_pose(*b.placement), *first.placement)
            out.append((j, subs, j.kind, ref))
        else:
            out.append((j, subs, "chain", None))
    return out


def _vectors(model, q, v, a, tau):
    q = val.vector(q, model.nq, "q", batch_ok=False)
    return (q,) + tuple(None if x is None else val.vector(x, model.nv, name, batch_ok=False)
                        for x, name in ((v, "v"), (a, "a"), (tau, "tau")))


def _state(q, v, a, tau):
    return PartitionState(q, v, a, tau)


def partitioned_state(model, partitioned, q, v=None, a=None, tau=None):
    """The state of ``partitioned`` that corresponds to the state (q, v, q̈ = a, τ) of ``model``.

    ``partitioned`` is ``partition_hinges(model, q_ref)``, or a model that
    :func:`merge_massless` turns into ``model``; sub-hinges are found by name. Universal,
    gimbal and planar hinges keep their numbers; a spherical or free joint's sub-hinges
    get the chart coordinates (θ = Euler x-y-z angles of R_ref⁻¹R; d = Rᵀ(p − p_ref)),
    v_p = T⁻¹ v, a_p = T⁻¹(a − Ṫ v_p) and τ_p = Tᵀ τ, with T the sub-hinge map of
    :mod:`the module docstring <soadyn.core.partition>` (power and kinetic energy are
    preserved). Raises ValueError at the chart's singularity (middle angle ±π/2).

    Returns :class:`PartitionState` (q, v, a, tau), None for arguments not given.
    """
    model = snapshot(model)
    q, v, a, tau = _vectors(model, q, v, a, tau)
    n_q, n_v = partitioned.nq, partitioned.nv
    qp = np.zeros(n_q)
    vp, ap, tp = (None if x is None else np.zeros(n_v) for x in (v, a, tau))
    for j, subs, kind, ref in _correspondence(model, partitioned):
        qs, vs = slice(j.q_index, j.q_index + j.nq), slice(j.v_index, j.v_index + j.nv)
        if kind in ("same", "chain"):
            qi = [s.q_index + k for s in subs for k in range(s.nq)]
            vi = [s.v_index + k for s in subs for k in range(s.nv)]
            qp[qi] = q[qs]
            for src, dst in ((v, vp), (a, ap), (tau, tp)):
                if src is not None:
                    dst[vi] = src[vs]
            continue
        R, p = j.pose(q[qs])
        Rc = ref[0].T @ np.asarray(R)
        chart = _euler_xyz(Rc)
        if kind == "free":
            chart = np.concatenate([chart, np.asarray(R).T @ (np.asarray(p) - ref[1])])
        vi = [s.v_index for s in subs]
        qp[[s.q_index for s in subs]] = chart
        T, bias = _rate_map(kind, chart)
        if v is not None:
            vp[vi] = np.linalg.solve(T, v[vs])
            if a is not None:
                ap[vi] = np.linalg.solve(T, a[vs] - bias(vp[vi]))
        elif a is not None:
            ap[vi] = np.linalg.solve(T, a[vs])
        if tau is not None:
            tp[vi] = T.T @ tau[vs]
    return _state(qp, vp, ap, tp)


def unpartitioned_state(model, partitioned, q, v=None, a=None, tau=None):
    """The inverse of :func:`partitioned_state`: the state of ``model`` that corresponds to
    the state (q, v, q̈ = a, τ) of ``partitioned`` (quaternions with w ≥ 0).

    With ``partitioned = partition_hinges(model)`` this maps the partitioned model's
    states back; with ``model = merge_massless(partitioned)`` it maps a model with
    mass-less bodies to its merged form. Returns :class:`PartitionState`.
    """
    model = snapshot(model)
    q, v, a, tau = _vectors(partitioned, q, v, a, tau)
    qm = np.zeros(model.nq)
    vm, am, tm = (None if x is None else np.zeros(model.nv) for x in (v, a, tau))
    for j, subs, kind, ref in _correspondence(model, partitioned):
        qs, vs = slice(j.q_index, j.q_index + j.nq), slice(j.v_index, j.v_index + j.nv)
        vi = [s.v_index + k for s in subs for k in range(s.nv)]
        if kind in ("same", "chain"):
            qm[qs] = q[[s.q_index + k for s in subs for k in range(s.nq)]]
            for src, dst in ((v, vm), (a, am), (tau, tm)):
                if src is not None:
                    dst[vs] = src[vi]
            continue
        chart = q[[s.q_index for s in subs]]
        R = ref[0] @ np.asarray(_EULER.pose(chart[:3])[0], dtype=float)
        quat = sp.matrix_to_quaternion(R)
        qm[qs] = quat if kind == "spherical" else np.concatenate([ref[1] + R @ chart[3:], quat])
        T, bias = _rate_map(kind, chart)
        if v is not None:
            vm[vs] = T @ v[vi]
        if a is not None:
            am[vs] = T @ a[vi] + (bias(v[vi]) if v is not None else 0.0)
        if tau is not None:
            tm[vs] = np.linalg.solve(T.T, tau[vi])
    return _state(qm, vm, am, tm)
