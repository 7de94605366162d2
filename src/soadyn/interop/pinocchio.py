"""Pinocchio interop: models, states and results between soadyn and Pinocchio (PyPI ``pin``).

Pinocchio is an optional dependency: this module imports it only inside the functions
that build or read a Pinocchio model; the force converters, and the q, v and Jacobian
converters called without ``pin_model``, do not need it.

Use it as ``from soadyn.interop import pinocchio as sdpin`` (the name ``pinocchio`` would
hide the library itself)::

    pm = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer())
    model = sd.load_urdf(path, floating_base=True)       # the same joint order
    q_pin = sdpin.q_to_pinocchio(model, q)
    v_pin, a_pin = sdpin.v_to_pinocchio(model, v), sdpin.v_to_pinocchio(model, a)
    tau = sdpin.v_from_pinocchio(model, pin.rnea(pm, pm.createData(), q_pin, v_pin, a_pin))
    # tau == sd.rnea(model, q, v, a)

The two libraries describe the same things differently — same shapes, different meaning:

=====================  ====================================  =================================
quantity               soadyn                                Pinocchio
=====================  ====================================  =================================
spatial motion         [ω; v] (angular first)                [v; ω] (linear first)
spatial force          [n; f]                                [f; n]
free-flyer q           [p; quaternion (x, y, z, w)]          the same
free-flyer v, a, τ     [ω; v], [ω̇; v̇], [n; f], body frame     [v; ω], [v̇; ω̇], [f; n], body frame
spherical q, v         quaternion (x, y, z, w), ω            the same
continuous joint q     θ (one entry)                         (cos θ, sin θ) (two entries)
Jacobian rows          angular first                         linear first
joint order in q, v    soadyn's body order                   Pinocchio's joint order
=====================  ====================================  =================================

Joint order. The q, v and Jacobian converters take an optional last argument
``pin_model``:

* ``pin_model=None`` (the default; Pinocchio is not needed): Pinocchio's joint order is
  taken to be that of :func:`to_pinocchio` ``(model)``: the moving joints depth-first
  from the world (a body's whole subtree before its next sibling, a body's children in
  soadyn's body order, through bodies on fixed joints), every continuous joint
  (cos θ, sin θ). When soadyn's body order is depth-first this is soadyn's own joint
  order. :func:`soadyn.load_urdf` numbers bodies depth-first with a link's child joints
  in order of joint name, which is the order of Pinocchio's URDF parser (urdfdom keeps
  the joints in a ``std::map``): ``sd.load_urdf(path)`` and ``pin.buildModelFromUrdf(path)``
  have the same joints in the same order, and so have
  ``sd.load_urdf(path, floating_base=True)`` and
  ``pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer())`` (root joint
  ``"root_joint"`` first) — checked on every URDF of example-robot-data. So do a model
  from :func:`from_pinocchio` ``(pm)`` and ``pm`` when ``pm``'s joints are numbered
  depth-first (as Pinocchio's parsers number them). A model with a joint Pinocchio
  cannot represent (planar, gimbals other than z-y-x) raises a ValueError naming it.
* ``pin_model`` given (a ``pinocchio.Model``): its joint order, joints matched **by
  name**; every moving joint needs a partner of the same name and kind (else a
  ValueError). Use it for models built in code (bodies not numbered depth-first), for
  Pinocchio models built otherwise, or to check that two models match.

Accelerations ``a`` and joint forces ``τ`` have the layout of ``v``: convert them with
:func:`v_to_pinocchio` / :func:`v_from_pinocchio`.

A body frame is its joint's child frame in both libraries (Pinocchio's joint frame, where
``data.oMi``, ``data.v``, ``data.f`` and the LOCAL Jacobians live). So:

* external forces: soadyn's ``f_ext[k]`` (body ``k`` on a moving joint, body frame) is
  Pinocchio's ``fext[pm.getJointId(model.bodies[k].joint.name)] =
  pin.Force(force_to_pinocchio(f_ext[k]))``;
* (nv, nv) matrices (mass matrix, its inverse): convert rows and columns, e.g.
  ``M = v_from_pinocchio(model, v_from_pinocchio(model, M_pin).T).T``
  (fill Pinocchio's lower triangle first: ``pin.crba`` writes the upper one).

Units are SI throughout (m, rad, kg, s, N, N m); the converters change the order (and, for
continuous joints, the parametrization) of numbers, never their frame or units. All
functions are pure: they return new arrays or models and modify none of their arguments.
"""
from __future__ import annotations

import warnings

import numpy as np

from ..core import joints as jt
from ..core import spatial as sp
from ..core.model import Model

__all__ = ["from_pinocchio", "to_pinocchio", "q_to_pinocchio", "q_from_pinocchio", "v_to_pinocchio",
           "v_from_pinocchio", "force_to_pinocchio", "force_from_pinocchio", "jacobian_to_pinocchio",
           "jacobian_from_pinocchio"]

#: a 6-vector's entries in the other library's order (the same permutation both ways)
_SWAP = np.array([3, 4, 5, 0, 1, 2])

#: soadyn joint kind -> family of joints with the same q and v
_FAMILY = {"revolute": "revolute", "continuous": "revolute", "prismatic": "prismatic", "helical": "helical",
           "free": "free", "spherical": "spherical", "universal": "universal", "gimbal": "gimbal"}

#: Pinocchio joint model (shortname without "JointModel") -> family
_PIN_FAMILY = {
    "RX": "revolute", "RY": "revolute", "RZ": "revolute", "RevoluteUnaligned": "revolute",
    "RUBX": "revolute", "RUBY": "revolute", "RUBZ": "revolute", "RevoluteUnboundedUnaligned": "revolute",
    "PX": "prismatic", "PY": "prismatic", "PZ": "prismatic", "PrismaticUnaligned": "prismatic",
    "HX": "helical", "HY": "helical", "HZ": "helical", "HelicalUnaligned": "helical",
    "FreeFlyer": "free", "Spherical": "spherical", "Universal": "universal", "SphericalZYX": "gimbal",
}

#: Pinocchio joints whose q is (cos θ, sin θ)
_UNBOUNDED = ("RUBX", "RUBY", "RUBZ", "RevoluteUnboundedUnaligned")

_SUPPORTED = ("revolute (RX, RY, RZ, RevoluteUnaligned), continuous (RUBX, RUBY, RUBZ, "
              "RevoluteUnboundedUnaligned), prismatic (PX, PY, PZ, PrismaticUnaligned), helical (HX, HY, HZ, "
              "HelicalUnaligned), FreeFlyer, Spherical, Universal, SphericalZYX")

_UNIT = {"X": (1.0, 0.0, 0.0), "Y": (0.0, 1.0, 0.0), "Z": (0.0, 0.0, 1.0)}

#: Pinocchio's "no limit" (±numeric_limits<double>::max()) and anything beyond this
_NO_LIMIT = 1e300


# =========================================================================== checks
def _pinocchio():
    try:
        import pinocchio
    except ImportError as e:
        raise ImportError("soadyn.interop.pinocchio: this function needs Pinocchio (pip install pin)") from e
    return pinocchio


def _type_name(x):
    t = type(x)
    return t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"


def _check_model(model, name="model"):
    if not isinstance(model, Model):
        raise TypeError(f"{name}: expected a soadyn.Model, got {_type_name(model)}")


def _check_pin_model(pin_model, name="pin_model"):
    pin = _pinocchio()
    if not isinstance(pin_model, pin.Model):
        raise TypeError(f"{name}: expected a pinocchio.Model (not its Data), got {_type_name(pin_model)}")
    return pin


def _real_array(x, name):
    """``x`` as a float array (a copy only when a conversion is needed)."""
    if isinstance(x, np.ndarray) and x.dtype == np.float64:
        return x
    try:
        a = np.asarray(x)
    except (TypeError, ValueError) as e:
        raise TypeError(f"{name}: expected an array of real numbers ({e})") from None
    if a.dtype.kind not in "iuf":
        raise TypeError(f"{name}: expected an array of real numbers, got {_type_name(x)} of dtype {a.dtype}")
    return a.astype(np.float64)


def _vectors(x, n, name, what):
    """``x`` as a float array of shape (n,) or (..., n)."""
    a = _real_array(x, name)
    if a.ndim == 0 or a.shape[-1] != n:
        raise ValueError(f"{name}: expected shape ({n},) or (..., {n}) ({what}), got {a.shape}")
    return a


def _matrices(x, nv, name, what):
    """``x`` as a float array of shape (6, nv) or (..., 6, nv)."""
    a = _real_array(x, name)
    if a.ndim < 2 or a.shape[-2:] != (6, nv):
        raise ValueError(f"{name}: expected shape (6, {nv}) or (..., 6, {nv}) ({what}), got {a.shape}")
    return a


def _short(joint_model):
    return joint_model.shortname().removeprefix("JointModel")


# =========================================================================== layouts
def _depth_first(model):
    """soadyn body indices depth-first from the world (a body's whole subtree before its
    next sibling), a body's children in body order: the order of :func:`to_pinocchio`."""
    children = {-1: []}
    for b in model.bodies:
        children[b.index] = []
        children[b.parent].append(b.index)
    order, stack = [], list(reversed(children[-1]))
    while stack:
        i = stack.pop()
        order.append(i)
        stack.extend(reversed(children[i]))
    return order


def _check_convertible(joint):
    """ValueError naming ``joint`` when Pinocchio has no joint with its q and v."""
    if joint.kind in ("fixed", "revolute", "continuous", "prismatic", "helical", "free", "spherical",
                      "universal"):
        return
    if joint.kind == "gimbal" and np.array_equal(joint.axes(), [[0.0, 0.0, 1.0], [0.0, 1.0, 0.0],
                                                                [1.0, 0.0, 0.0]]):
        return
    why = {"gimbal": "only a gimbal about z, y, x has one (JointModelSphericalZYX)",
           "planar": "Pinocchio's JointModelPlanar has q = (x, y, cos θ, sin θ) and v in the body frame, soadyn's "
                     "q = (x, y, θ) and v = their rates"}.get(joint.kind, "")
    raise ValueError(f"model: joint {joint.name!r} is a {joint.kind} joint, for which Pinocchio has no joint with the "
                     f"same q and v{'; ' + why if why else ''}")


class _Layout:
    """Index maps between a soadyn model's q, v and Pinocchio's.

    ``entries``: for each moving soadyn joint, (joint, its first index in Pinocchio's q and
    in Pinocchio's v, whether Pinocchio's q of it is (cos θ, sin θ)). Then
    ``q_pin[q_pin_idx] = q[q_sd_idx]``; continuous joints: ``q_pin[cs_pin] = cos q[cs_sd]``,
    ``q_pin[cs_pin + 1] = sin q[cs_sd]``; ``v_pin = v[v_src]`` and ``v = v_pin[v_dst]``.
    ``v_src`` is -1 where no soadyn joint lands (the caller checks).
    """

    def __init__(self, model, entries, nq_pin, nv_pin):
        q_sd, q_pin, cs_sd, cs_pin = [], [], [], []
        v_src = np.full(nv_pin, -1, dtype=np.intp)
        for j, iq, iv, unbounded in entries:
            if unbounded:
                cs_sd.append(j.q_index)
                cs_pin.append(iq)
            else:
                q_sd.extend(range(j.q_index, j.q_index + j.nq))
                q_pin.extend(range(iq, iq + j.nq))
            if j.kind == "free":
                v_src[iv:iv + 6] = j.v_index + _SWAP
            else:
                v_src[iv:iv + j.nv] = np.arange(j.v_index, j.v_index + j.nv)
        self.nq, self.nv, self.nq_pin, self.nv_pin = model.nq, model.nv, nq_pin, nv_pin
        self.q_sd, self.q_pin = np.array(q_sd, dtype=np.intp), np.array(q_pin, dtype=np.intp)
        self.cs_sd, self.cs_pin = np.array(cs_sd, dtype=np.intp), np.array(cs_pin, dtype=np.intp)
        self.v_src = v_src
        self.v_dst = np.argsort(v_src)


def _depth_first_layout(model):
    """Pinocchio's q and v as :func:`to_pinocchio` lays them out (no Pinocchio needed):
    moving joints depth-first, continuous joints (cos θ, sin θ)."""
    entries, iq, iv = [], 0, 0
    for i in _depth_first(model):
        j = model.bodies[i].joint
        if j.nv == 0:
            continue
        _check_convertible(j)
        unbounded = j.kind == "continuous"
        entries.append((j, iq, iv, unbounded))
        iq += j.nq + unbounded
        iv += j.nv
    return _Layout(model, entries, iq, iv)


def _named_layout(model, pm):
    """Pinocchio's q and v as ``pm`` lays them out, joints matched by name."""
    names, shorts = list(pm.names), [_short(jm) for jm in pm.joints]
    idx_q, idx_v, nqs, nvs = list(pm.idx_qs), list(pm.idx_vs), list(pm.nqs), list(pm.nvs)
    jid_of = {name: jid for jid, name in enumerate(names) if jid > 0}
    entries, moving = [], set()
    for j in model.joints:
        if j.nv == 0:
            continue
        moving.add(j.name)
        jid = jid_of.get(j.name)
        if jid is None:
            raise ValueError(f"pin_model: has no joint named {j.name!r}, the {j.kind} joint of soadyn model "
                             f"{model.name!r} (joints are matched by name)")
        short = shorts[jid]
        if _PIN_FAMILY.get(short) is None or _PIN_FAMILY.get(short) != _FAMILY.get(j.kind) or nvs[jid] != j.nv:
            raise ValueError(f"pin_model: joint {j.name!r} is a JointModel{short} (nq = {nqs[jid]}, nv = "
                             f"{nvs[jid]}) in Pinocchio but a {j.kind} joint (nq = {j.nq}, nv = {j.nv}) in soadyn "
                             f"model {model.name!r}")
        entries.append((j, idx_q[jid], idx_v[jid], short in _UNBOUNDED))
    if pm.nv != model.nv:
        extra = [names[i] for i in range(1, len(names)) if nvs[i] and names[i] not in moving]
        raise ValueError(f"pin_model: nv = {pm.nv}, soadyn model {model.name!r} has nv = {model.nv}; Pinocchio "
                         f"joints without a moving soadyn joint of the same name: {extra}")
    return _Layout(model, entries, pm.nq, pm.nv)


def _layout(model, pin_model):
    _check_model(model)
    if pin_model is None:
        return _depth_first_layout(model)
    _check_pin_model(pin_model)
    return _named_layout(model, pin_model)


# =========================================================================== states
def q_to_pinocchio(model, q, pin_model=None):
    """Pinocchio's configuration for soadyn's ``q``.

    Parameters
    ----------
    model : soadyn.Model
    q : (nq,) or (..., nq) soadyn configuration(s) [m, rad; quaternions (x, y, z, w)].
    pin_model : pinocchio.Model or None
        None (default): Pinocchio's joints in the depth-first order of
        :func:`to_pinocchio`, which for a model from :func:`soadyn.load_urdf` is
        ``pin.buildModelFromUrdf``'s (see "Joint order" in the module docstring).
        A pinocchio.Model: its joint order, joints matched by name.

    Returns
    -------
    (nq_pin,) or (..., nq_pin) array, ``nq_pin`` Pinocchio's nq (``pin_model.nq``; for
    None, ``model.nq`` plus the number of continuous joints): entries copied to the
    joint's place in Pinocchio's q (free-flyer and spherical q are laid out alike,
    quaternions (x, y, z, w) in both), except that a joint which is a continuous
    (unbounded) revolute joint in Pinocchio (JointModelRUBX/Y/Z,
    RevoluteUnboundedUnaligned; for None, every soadyn continuous joint) gets
    (cos θ, sin θ) for soadyn's angle θ. Quaternions are copied as given (not normalised).
    """
    L = _layout(model, pin_model)
    q = _vectors(q, L.nq, "q", "soadyn configuration, nq = model.nq")
    out = np.empty(q.shape[:-1] + (L.nq_pin,))
    out[..., L.q_pin] = q[..., L.q_sd]
    theta = q[..., L.cs_sd]
    out[..., L.cs_pin] = np.cos(theta)
    out[..., L.cs_pin + 1] = np.sin(theta)
    return out


def q_from_pinocchio(model, q_pin, pin_model=None):
    """soadyn's configuration for Pinocchio's ``q_pin`` (the inverse of :func:`q_to_pinocchio`).

    Parameters
    ----------
    model : soadyn.Model
    q_pin : (nq_pin,) or (..., nq_pin) Pinocchio configuration(s) (``nq_pin`` as in
        :func:`q_to_pinocchio`).
    pin_model : pinocchio.Model or None
        None (default): Pinocchio's joints in the depth-first order of
        :func:`to_pinocchio`, which for a model from :func:`soadyn.load_urdf` is
        ``pin.buildModelFromUrdf``'s (see "Joint order" in the module docstring).
        A pinocchio.Model: its joint order, joints matched by name.

    Returns
    -------
    (nq,) or (..., nq) array. A Pinocchio continuous joint's (cos θ, sin θ) becomes the
    angle θ = atan2(sin θ, cos θ) ∈ (−π, π] [rad] (the pair need not be normalised), so
    ``q_from_pinocchio(q_to_pinocchio(q))`` returns such angles modulo 2π; every other
    entry is copied.
    """
    L = _layout(model, pin_model)
    q_pin = _vectors(q_pin, L.nq_pin, "q_pin", f"Pinocchio configuration, nq = {L.nq_pin}")
    out = np.empty(q_pin.shape[:-1] + (L.nq,))
    out[..., L.q_sd] = q_pin[..., L.q_pin]
    out[..., L.cs_sd] = np.arctan2(q_pin[..., L.cs_pin + 1], q_pin[..., L.cs_pin])
    return out


def v_to_pinocchio(model, v, pin_model=None):
    """Pinocchio's velocity for soadyn's ``v`` — also for accelerations and joint forces τ,
    which share v's layout.

    Parameters
    ----------
    model : soadyn.Model
    v : (nv,) or (..., nv) soadyn velocity [rad/s, m/s] (or acceleration [rad/s², m/s²],
        or joint forces [N m, N]).
    pin_model : pinocchio.Model or None
        None (default): Pinocchio's joints in the depth-first order of
        :func:`to_pinocchio`, which for a model from :func:`soadyn.load_urdf` is
        ``pin.buildModelFromUrdf``'s (see "Joint order" in the module docstring).
        A pinocchio.Model: its joint order, joints matched by name.

    Returns
    -------
    (nv,) or (..., nv) array in Pinocchio's joint order; a free joint's [ω; v] (body frame)
    becomes Pinocchio's [v; ω] (the same body frame), its τ = [n; f] becomes [f; n]; the
    other joints' entries are copied.
    """
    L = _layout(model, pin_model)
    v = _vectors(v, L.nv, "v", "soadyn velocity, nv = model.nv")
    return v[..., L.v_src]


def v_from_pinocchio(model, v_pin, pin_model=None):
    """soadyn's velocity (or acceleration, or joint forces τ) for Pinocchio's ``v_pin``:
    the inverse of :func:`v_to_pinocchio`.

    Parameters
    ----------
    model : soadyn.Model
    v_pin : (nv,) or (..., nv) Pinocchio velocity, acceleration or joint forces (e.g. the
        result of ``pin.rnea`` or ``pin.aba``).
    pin_model : pinocchio.Model or None
        None (default): Pinocchio's joints in the depth-first order of
        :func:`to_pinocchio`, which for a model from :func:`soadyn.load_urdf` is
        ``pin.buildModelFromUrdf``'s (see "Joint order" in the module docstring).
        A pinocchio.Model: its joint order, joints matched by name.

    Returns
    -------
    (nv,) or (..., nv) array in soadyn's joint order, free joints [ω; v] ([n; f] for τ).
    """
    L = _layout(model, pin_model)
    v_pin = _vectors(v_pin, L.nv_pin, "v_pin", f"Pinocchio velocity, nv = {L.nv_pin}")
    return v_pin[..., L.v_dst]


# =========================================================================== forces
def force_to_pinocchio(f):
    """Pinocchio's spatial force [f; n] for soadyn's [n; f] (the same frame and point).

    Parameters
    ----------
    f : (6,) or (..., 6) spatial force(s) [n (N m); f (N)], e.g. ``f_ext`` of shape
        (nbodies, 6).

    Returns
    -------
    (6,) or (..., 6) array [f; n] — ``pin.Force(force_to_pinocchio(f))`` is the Pinocchio
    object. Spatial motions (velocities, accelerations) swap the same way: ours [ω; v],
    Pinocchio's [v; ω]. Does not need Pinocchio. A pinocchio.Force or Motion is refused
    (TypeError): it is in Pinocchio's order already.
    """
    if hasattr(f, "linear") and hasattr(f, "angular"):
        raise TypeError(f"f: got a {_type_name(f)}, which is in Pinocchio's order [linear; angular] already; "
                        "force_to_pinocchio takes soadyn's [n; f]")
    return _vectors(f, 6, "f", "spatial force [n; f]")[..., _SWAP]


def force_from_pinocchio(f_pin):
    """soadyn's spatial force [n; f] for Pinocchio's [f; n] (e.g. ``data.f[i].vector``,
    in joint ``i``'s frame, which is soadyn's body frame).

    Parameters
    ----------
    f_pin : (6,) or (..., 6) spatial force(s) [f (N); n (N m)], or a pinocchio.Force (read
        as its ``.vector``).

    Returns
    -------
    (6,) or (..., 6) array [n; f]. Does not need Pinocchio.
    """
    return _vectors(f_pin, 6, "f_pin", "Pinocchio spatial force [f; n]")[..., _SWAP]


# =========================================================================== Jacobians
def jacobian_to_pinocchio(model, J, pin_model=None):
    """Pinocchio's Jacobian for a soadyn Jacobian: rows [ω; v] → [v; ω], columns in
    Pinocchio's v order (a free joint's columns [ω; v] → [v; ω]).

    The reference frame is not changed, and it is the same in both libraries for the same
    name: ``sd.frame_jacobian(model, q, frame, reference)`` with ``reference`` =
    ``"local"`` (the frame's axes, velocity of the frame origin), ``"local_world_aligned"``
    (world axes, frame origin) or ``"world"`` (world axes, velocity of the body point at
    the world origin) converts to ``pin.getFrameJacobian(pm, data, frame_id, ref)`` with
    ``ref`` = ``pin.LOCAL``, ``pin.LOCAL_WORLD_ALIGNED`` or ``pin.WORLD``; a body's frame
    is its joint's frame, so ``sd.frame_jacobian(model, q, body_name, "local")`` is
    ``pin.getJointJacobian(pm, data, joint_id, pin.LOCAL)``.

    Parameters
    ----------
    model : soadyn.Model
    J : (6, nv) or (..., 6, nv) Jacobian(s), ``J @ v`` a spatial velocity [ω; v]
        [rad/s, m/s] (any (6, nv) map from v to a spatial motion converts the same way).
    pin_model : pinocchio.Model or None
        None (default): Pinocchio's joints in the depth-first order of
        :func:`to_pinocchio`, which for a model from :func:`soadyn.load_urdf` is
        ``pin.buildModelFromUrdf``'s (see "Joint order" in the module docstring).
        A pinocchio.Model: its joint order, joints matched by name.

    Returns
    -------
    (6, nv) or (..., 6, nv) array ``J_pin`` with
    ``J_pin @ v_to_pinocchio(model, v, pin_model) = force_to_pinocchio(J @ v)``.
    """
    L = _layout(model, pin_model)
    J = _matrices(J, L.nv, "J", "soadyn Jacobian, nv = model.nv")
    return J[..., _SWAP, :][..., L.v_src]


def jacobian_from_pinocchio(model, J_pin, pin_model=None):
    """soadyn's Jacobian for a Pinocchio Jacobian: rows [v; ω] → [ω; v], columns in
    soadyn's v order; the inverse of :func:`jacobian_to_pinocchio` (which states the
    matching reference frames: pin.LOCAL is ``"local"``, pin.WORLD ``"world"``,
    pin.LOCAL_WORLD_ALIGNED ``"local_world_aligned"``).

    Parameters
    ----------
    model : soadyn.Model
    J_pin : (6, nv) or (..., 6, nv) Pinocchio Jacobian(s).
    pin_model : pinocchio.Model or None
        None (default): Pinocchio's joints in the depth-first order of
        :func:`to_pinocchio`, which for a model from :func:`soadyn.load_urdf` is
        ``pin.buildModelFromUrdf``'s (see "Joint order" in the module docstring).
        A pinocchio.Model: its joint order, joints matched by name.

    Returns
    -------
    (6, nv) or (..., 6, nv) array.
    """
    L = _layout(model, pin_model)
    J_pin = _matrices(J_pin, L.nv_pin, "J_pin", f"Pinocchio Jacobian, nv = {L.nv_pin}")
    return J_pin[..., _SWAP, :][..., L.v_dst]


# =========================================================================== models
def _limits(pm, jm):
    """Pinocchio's position limits of a joint whose q has one entry per velocity, as
    soadyn's (lower, upper) (None where both are unlimited)."""
    lo = np.array(pm.lowerPositionLimit[jm.idx_q:jm.idx_q + jm.nq], dtype=float)
    hi = np.array(pm.upperPositionLimit[jm.idx_q:jm.idx_q + jm.nq], dtype=float)
    lo[lo <= -_NO_LIMIT] = -np.inf
    hi[hi >= _NO_LIMIT] = np.inf
    if not (np.any(np.isfinite(lo)) or np.any(np.isfinite(hi))):
        return None, None
    return lo, hi


def _subspace_axis(jm):
    """Rotation axis of a 1-dof revolute joint model read from its motion subspace (for
    joint models whose Python binding does not expose the axis)."""
    data = jm.createData()
    q = np.zeros(jm.nq)
    q[0] = 1.0  # (cos 0, sin 0) for (cos, sin) joints, 1 rad otherwise
    jm.calc(data, q)
    return np.array(data.S, dtype=float).reshape(6)[3:]  # Pinocchio's S is [linear; angular]


def _joint_from_pinocchio(pm, jid):
    jm = pm.joints[jid]
    short, name = _short(jm), pm.names[jid]
    try:
        if short in ("RX", "RY", "RZ"):
            return jt.Revolute(_UNIT[short[1]], *_limits(pm, jm))
        if short == "RevoluteUnaligned":
            return jt.Revolute(np.array(jm.extract().axis), *_limits(pm, jm))
        if short in ("RUBX", "RUBY", "RUBZ"):
            return jt.Continuous(_UNIT[short[3]])
        if short == "RevoluteUnboundedUnaligned":
            return jt.Continuous(_subspace_axis(jm))
        if short in ("PX", "PY", "PZ"):
            return jt.Prismatic(_UNIT[short[1]], *_limits(pm, jm))
        if short == "PrismaticUnaligned":
            return jt.Prismatic(np.array(jm.extract().axis), *_limits(pm, jm))
        if short in ("HX", "HY", "HZ"):
            return jt.Helical(_UNIT[short[1]], jm.extract().pitch, *_limits(pm, jm))
        if short == "HelicalUnaligned":
            e = jm.extract()
            return jt.Helical(np.array(e.axis), e.pitch, *_limits(pm, jm))
        if short == "FreeFlyer":
            return jt.Free()
        if short == "Spherical":
            return jt.Spherical()
        if short == "Universal":
            e = jm.extract()
            return jt.Universal(np.array(e.axis1), np.array(e.axis2), *_limits(pm, jm))
        if short == "SphericalZYX":
            return jt.Gimbal(("z", "y", "x"), *_limits(pm, jm))
    except ValueError as e:
        raise ValueError(f"pin_model: joint {name!r} ({jm.shortname()}): {e}") from None
    raise ValueError(f"pin_model: joint {name!r} is a {jm.shortname()}, for which soadyn has no joint type with "
                     f"the same q and v; supported: {_SUPPORTED}")


def _body_names(pin, pm, frames):
    """soadyn body name of each Pinocchio joint: its body frame (a BODY frame at the joint
    frame, the one that follows the joint's JOINT frame first), else the joint's name."""
    joint_frame, body_frames = {}, {}
    for k, f in enumerate(frames):
        if f.type == pin.FrameType.JOINT:
            joint_frame.setdefault(f.parentJoint, k)
        elif f.type == pin.FrameType.BODY and f.placement.isIdentity():
            body_frames.setdefault(f.parentJoint, []).append(f)
    names, used = {}, set()
    for jid in range(1, pm.njoints):
        jf = joint_frame.get(jid)
        candidates = sorted(body_frames.get(jid, []), key=lambda f: f.parentFrame != jf)  # stable
        name = next((f.name for f in candidates if f.name not in used), pm.names[jid])
        if name in used:
            raise ValueError(f"pin_model: no unused name for the body of joint {pm.names[jid]!r} "
                             f"(tried its body frames and the joint name)")
        used.add(name)
        names[jid] = name
    return names


def from_pinocchio(pin_model):
    """A soadyn :class:`~soadyn.Model` with the bodies, joints, frames and gravity of a
    Pinocchio model.

    * One body per Pinocchio joint (universe excluded), in Pinocchio's joint order, so the
      soadyn q and v list the joints in that order. The body is named after the joint's
      body frame (for a URDF model, the child link), else after the joint; the joint keeps
      its name; the body frame is the joint frame (as in Pinocchio); its inertia is
      ``pin_model.inertias[i]`` (which already holds the links Pinocchio welded to the
      joint); its placement is ``pin_model.jointPlacements[i]``.
    * Joint types: RX/RY/RZ and RevoluteUnaligned → revolute; RUBX/RUBY/RUBZ and
      RevoluteUnboundedUnaligned → continuous (q = θ here, (cos θ, sin θ) there);
      PX/PY/PZ and PrismaticUnaligned → prismatic; HX/HY/HZ and HelicalUnaligned →
      helical (same pitch); FreeFlyer → free; Spherical → spherical; Universal →
      universal; SphericalZYX → gimbal about z, y, x. Any other joint (Planar,
      Translation, Composite, Mimic, ...) raises a ValueError naming it. Finite position
      limits of the 1-q-per-v joints are kept.
    * Every Pinocchio frame except ``universe`` becomes a soadyn frame of the same name
      and placement (JOINT, BODY, FIXED_JOINT, OP_FRAME and SENSOR frames; frames on the
      universe become frames on the world). soadyn keeps one frame per name: where
      Pinocchio has several frames of one name at different places, the body frame (else
      the first one) is kept and a warning names the others.
    * Gravity is ``pin_model.gravity.linear``. Pinocchio's armature (rotor inertia added
      to the mass-matrix diagonal) has no soadyn counterpart: a nonzero one is left out
      with a warning. Damping, friction, effort and velocity limits are not used by
      soadyn's algorithms and are not carried over.

    Physically impossible link inertias (found in published robot files) are accepted
    with a warning, as :func:`soadyn.load_urdf` does.

    Parameters
    ----------
    pin_model : pinocchio.Model

    Returns
    -------
    soadyn.Model (named ``pin_model.name``). Its bodies are in Pinocchio's joint order, so
    when ``pin_model``'s joints are numbered depth-first (as Pinocchio's parsers and
    :func:`to_pinocchio` number them; Pinocchio's ``crba`` needs it) the converters
    (:func:`q_to_pinocchio` and friends) need no ``pin_model`` for this model; for other
    joint numberings pass ``pin_model`` to them (joints matched by name).
    """
    pin = _check_pin_model(pin_model)
    pm = pin_model
    g = pm.gravity
    if np.any(np.asarray(g.angular) != 0.0):
        raise ValueError(f"pin_model: gravity has an angular part {np.asarray(g.angular).tolist()}; soadyn's "
                         "gravity is a linear acceleration")
    joints = [None] + [_joint_from_pinocchio(pm, jid) for jid in range(1, pm.njoints)]
    frames = list(pm.frames)
    names = _body_names(pin, pm, frames)
    model = Model(pm.name or "pinocchio_model", gravity=np.array(g.linear, dtype=float))
    body_of = {0: -1}
    for jid in range(1, pm.njoints):
        Y, X = pm.inertias[jid], pm.jointPlacements[jid]
        parent = body_of[pm.parents[jid]]
        body_of[jid] = model.add_body(
            names[jid], joints[jid], None if parent < 0 else parent,
            (np.array(X.rotation, dtype=float), np.array(X.translation, dtype=float)),
            mass=float(Y.mass), com=np.array(Y.lever, dtype=float), inertia=np.array(Y.inertia, dtype=float),
            joint_name=pm.names[jid], strict_inertia=False)
    conflicts = []
    for k, f in enumerate(frames):
        if k == 0 and f.name == "universe":
            continue  # the world itself
        body = body_of[f.parentJoint]
        R = np.array(f.placement.rotation, dtype=float)
        p = np.array(f.placement.translation, dtype=float)
        existing = model._frame_by_name.get(f.name)
        if existing is None:
            model.add_frame(f.name, body, (R, p))
        elif existing.body != body or not (np.allclose(existing.rotation, R, rtol=0.0, atol=1e-12)
                                           and np.allclose(existing.translation, p, rtol=0.0, atol=1e-12)):
            conflicts.append(f"{f.name!r} ({f.type.name})")
    if conflicts:
        warnings.warn(f"pin_model: Pinocchio frames that share a name with another frame at a different place "
                      f"were left out (soadyn keeps one frame per name): {conflicts}", stacklevel=2)
    armature = np.asarray(pm.armature, dtype=float)
    if np.any(armature != 0.0):
        named = sorted({pm.names[i] for i in range(1, pm.njoints)
                        if np.any(armature[pm.joints[i].idx_v:pm.joints[i].idx_v + pm.joints[i].nv] != 0.0)})
        warnings.warn(f"pin_model: the armature of joints {named} is left out (soadyn has no armature term): the "
                      "soadyn model's mass matrix lacks diag(armature)", stacklevel=2)
    return model


def _pin_joint(pin, joint):
    """The Pinocchio joint model with soadyn ``joint``'s q and v (a ValueError naming the
    joint for types Pinocchio has no such joint for)."""
    _check_convertible(joint)
    kind = joint.kind
    if kind in ("revolute", "continuous", "prismatic", "helical"):
        axis = np.array(joint.axis, dtype=float)
        xyz = next((c for c, e in _UNIT.items() if np.array_equal(axis, e)), None)
        if kind == "revolute":
            return getattr(pin, f"JointModelR{xyz}")() if xyz else pin.JointModelRevoluteUnaligned(axis)
        if kind == "continuous":
            return getattr(pin, f"JointModelRUB{xyz}")() if xyz else _revolute_unbounded_unaligned(pin, joint)
        if kind == "prismatic":
            return getattr(pin, f"JointModelP{xyz}")() if xyz else pin.JointModelPrismaticUnaligned(axis)
        return getattr(pin, f"JointModelH{xyz}")(joint.pitch) if xyz else \
            pin.JointModelHelicalUnaligned(axis, joint.pitch)
    if kind == "free":
        return pin.JointModelFreeFlyer()
    if kind == "spherical":
        return pin.JointModelSpherical()
    if kind == "universal":
        a = joint.axes()
        return pin.JointModelUniversal(np.array(a[0]), np.array(a[1]))
    return pin.JointModelSphericalZYX()  # the one convertible gimbal (_check_convertible)


def _revolute_unbounded_unaligned(pin, joint):
    """A JointModelRevoluteUnboundedUnaligned about ``joint.axis``, q = (cos θ, sin θ) as in
    ``pin.buildModelFromUrdf`` for a continuous joint with such an axis. Pinocchio's Python
    bindings cannot set this joint's axis: its URDF parser builds it from a one-joint file."""
    axis = np.array(joint.axis, dtype=float)
    xyz = " ".join(repr(float(x)) for x in axis)
    jm = pin.buildModelFromXML(
        f'<robot name="axis"><link name="a"/><link name="b"/><joint name="j" type="continuous"><parent link="a"/>'
        f'<child link="b"/><axis xyz="{xyz}"/></joint></robot>').joints[1]
    unit = axis / np.linalg.norm(axis)
    if _short(jm) != "RevoluteUnboundedUnaligned" or not np.allclose(_subspace_axis(jm), unit, rtol=0.0, atol=1e-14):
        raise RuntimeError(f"model: joint {joint.name!r}: Pinocchio built a {jm.shortname()} about "
                           f"{_subspace_axis(jm).tolist()} for a continuous joint about {unit.tolist()}")
    return jm


def _pin_inertia(pin, body):
    """``body``'s inertia as a pinocchio.Inertia, set field by field: the constructor refuses
    a rotational inertia with eigenvalues rounded just below zero (iCub's links have zero
    rotational inertia, which soadyn's frame changes leave at -1e-20), Pinocchio's URDF
    parser does not."""
    Y = pin.Inertia.Zero()
    Y.mass = float(body.mass)
    Y.lever = np.array(body.com, dtype=float)
    Y.inertia = np.array(body.inertia_com, dtype=float)
    return Y


def to_pinocchio(model):
    """A Pinocchio model with the bodies, joints, frames and gravity of a soadyn model.

    Built with ``pin.Model.addJoint``, ``appendBodyToJoint``, ``addJointFrame``,
    ``addBodyFrame`` and ``addFrame``:

    * joints are added depth-first (a body's whole subtree before its next sibling, as
      Pinocchio's own parsers do; a body's children in soadyn's body order, through bodies
      on fixed joints). This is the joint order the converters (:func:`q_to_pinocchio`
      and friends) assume when they are given no ``pin_model``; it is soadyn's body order
      itself when that is depth-first, as :func:`soadyn.load_urdf` numbers bodies (then
      the joints are also in ``pin.buildModelFromUrdf``'s order);
    * each moving soadyn joint becomes a Pinocchio joint of the same name (revolute →
      RX/RY/RZ or RevoluteUnaligned; continuous → RUBX/RUBY/RUBZ or
      RevoluteUnboundedUnaligned, q = (cos θ, sin θ), as Pinocchio's URDF parser makes
      them; prismatic → PX/PY/PZ or PrismaticUnaligned; helical → HX/HY/HZ or
      HelicalUnaligned; free → FreeFlyer;
      spherical → Spherical; universal → Universal; gimbal about z, y, x → SphericalZYX);
      other types (planar, other gimbals) raise a ValueError naming the joint;
    * each body gets a BODY frame (the body's name) and a JOINT frame (the joint's name,
      unless a soadyn frame has that name: Pinocchio's ``getFrameId`` refuses a name that
      several frames share) at the joint frame; a body on a fixed joint is welded to its
      moving ancestor's joint (its inertia appended there) with a BODY frame; every other
      soadyn frame becomes an OP_FRAME of the same name and placement — so every frame
      name is unique;
    * finite position limits of joints with one q per v are copied; other limits keep
      Pinocchio's defaults; gravity is ``model.gravity``.

    A model with loops, couplings or user constraints is refused (Pinocchio closes loops
    with ``pin.RigidConstraintModel``): pass ``model.spanning_tree()`` for its tree.

    Parameters
    ----------
    model : soadyn.Model (numeric; not symbolic)

    Returns
    -------
    pinocchio.Model (named ``model.name``).
    """
    pin = _pinocchio()
    _check_model(model)
    if model.symbolic:
        raise TypeError(f"model: {model.name!r} has symbolic (sympy) parameters; Pinocchio needs numbers")
    if model.has_constraints:
        names = [c.name for c in (*model.loops, *model.couplings, *model.user_constraints)]
        raise ValueError(f"model: {model.name!r} has constraints {names}; to_pinocchio converts trees: pass "
                         "model.spanning_tree() (and close the loops with pin.RigidConstraintModel)")
    pin_joints = {b.index: _pin_joint(pin, b.joint) for b in model.bodies if b.joint.nv}
    pm = pin.Model()
    pm.name = model.name
    pm.gravity = pin.Motion(model.gravity, np.zeros(3))
    # body -> (Pinocchio joint it moves with, pose of the body frame in that joint's frame)
    where = {-1: (0, np.eye(3), np.zeros(3))}
    frame_of = {-1: 0}  # body -> index of its BODY frame (the universe frame for the world)
    for i in _depth_first(model):  # the order the converters assume when given no pin_model
        b = model.bodies[i]
        jid, R0, p0 = where[b.parent]
        R, p = sp.compose_poses(R0, p0, *b.placement)
        inertia = _pin_inertia(pin, b)
        if b.joint.nv == 0:
            pm.appendBodyToJoint(jid, inertia, pin.SE3(R, p))
            frame_of[i] = pm.addBodyFrame(b.name, jid, pin.SE3(R, p), frame_of[b.parent])
            where[i] = (jid, R, p)
        else:
            jid = pm.addJoint(jid, pin_joints[i], pin.SE3(R, p), b.joint.name)
            pm.appendBodyToJoint(jid, inertia, pin.SE3.Identity())
            previous = frame_of[b.parent]
            if b.joint.name not in model._frame_by_name:  # else the name would match two frames
                previous = pm.addJointFrame(jid, previous)
            frame_of[i] = pm.addBodyFrame(b.name, jid, pin.SE3.Identity(), previous)
            where[i] = (jid, np.eye(3), np.zeros(3))
    for f in model.frames:
        if f.body >= 0 and model.bodies[f.body].name == f.name:
            continue  # a body's own frame: its BODY frame above
        jid, R0, p0 = where[f.body]
        R, p = sp.compose_poses(R0, p0, f.rotation, f.translation)
        pm.addFrame(pin.Frame(f.name, jid, frame_of[f.body], pin.SE3(R, p), pin.FrameType.OP_FRAME))
    lower, upper = np.array(pm.lowerPositionLimit), np.array(pm.upperPositionLimit)
    for b in model.bodies:
        j = b.joint
        if j.nv == 0 or j.kind in ("free", "spherical"):
            continue
        pj = pm.joints[pm.getJointId(j.name)]
        if pj.nq != j.nv:
            continue  # (cos θ, sin θ)
        s = slice(pj.idx_q, pj.idx_q + pj.nq)
        lower[s] = np.where(np.isfinite(j.lower), j.lower, lower[s])
        upper[s] = np.where(np.isfinite(j.upper), j.upper, upper[s])
    pm.lowerPositionLimit, pm.upperPositionLimit = lower, upper
    return pm
