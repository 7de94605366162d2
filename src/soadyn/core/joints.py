"""Hinge (joint) types: motion subspace H*, joint transform, sizes, configuration spaces.

A joint connects a parent body to its child. Its configuration ``q`` (size ``nq``)
gives the pose of the child body frame relative to the *joint frame* fixed in the
parent (the joint placement), and its velocity ``v`` (size ``nv``) gives the
relative spatial velocity of the child, expressed in the child frame,
``V_rel = H*(q) v`` ([Jain12, eq. 7]; ``H*`` is the SOA joint map, Featherstone's S).

Supported types and coordinates:

==============  ====  ====  ===========================================================
type            nq    nv    coordinates
==============  ====  ====  ===========================================================
Revolute        1     1     angle about ``axis`` [rad]
Continuous      1     1     as Revolute, without limits
Prismatic       1     1     displacement along ``axis`` [m]
Helical         1     1     angle [rad]; translation ``pitch``·angle along ``axis``
Fixed           0     0     —
Free            7     6     q = [p (3, parent frame); quaternion (x, y, z, w)],
                            v = [ω; v] of the child in the child frame
Spherical       4     3     q = quaternion (x, y, z, w), v = ω in the child frame
Universal       2     2     angles about ``axis1`` then the moved ``axis2``
Gimbal          3     3     Euler angles about ``axes[0]``, ``axes[1]``, ``axes[2]`` in turn
Planar          3     3     translations along two in-plane axes, then the angle about
                            the plane ``normal``
==============  ====  ====  ===========================================================

Universal, Gimbal and Planar joints move as sequences of 1-dof sub-hinges (the
kinematics of [Jain23p, §2]'s mass-less body partitioning). The ABA eliminates every
multi-dof hinge one sub-hinge at a time (the partitioned recursion of [Jain23p, eq. 8],
``soadyn.kernels.aba``); the other recursions treat each as one multi-dof hinge;
``soadyn.partition_hinges`` builds the model with explicit mass-less sub-bodies. Their joint map is ``H*(q) = [X(k+1..n) h_k]`` and the velocity-dependent term of the
joint acceleration is ``Ḣ* v = Σ_{k<j} (h_k v_k) × (h_j v_j)`` in the child frame.

The compiled kernels at the bottom of this module are used by every recursive
algorithm; the Python methods of the joint classes (``pose``, ``motion_subspace``,
``bias``) serve the operator layer and accept sympy symbols.
"""
from __future__ import annotations

import math

import numpy as np

from .jit import helper
from . import spatial as sp

# joint type codes shared by the model compiler and the kernels
FIXED, REVOLUTE, PRISMATIC, HELICAL, SPHERICAL, FREE, COMPOSITE = range(7)

__all__ = [
    "Joint", "Revolute", "Continuous", "Prismatic", "Helical", "Fixed", "Free",
    "Spherical", "Universal", "Gimbal", "Planar", "joint_from_name",
]


def _unit_axis(axis, name="axis"):
    a = np.asarray(axis, dtype=float)
    if a.shape != (3,) or not np.all(np.isfinite(a)):
        raise ValueError(f"{name}: expected 3 finite numbers, got {axis!r}")
    n = float(np.linalg.norm(a))
    if n < 1e-12:
        raise ValueError(f"{name}: the joint axis must be nonzero, got {axis!r}")
    return a / n


def _readonly(a):
    a.flags.writeable = False
    return a


_NAMED_AXES = {"x": (1.0, 0.0, 0.0), "y": (0.0, 1.0, 0.0), "z": (0.0, 0.0, 1.0)}


def axis_argument(a, name):
    """A unit axis from 'x', 'y', 'z' or a nonzero 3-vector (normalised)."""
    if isinstance(a, str):
        if a.lower() not in _NAMED_AXES:
            raise ValueError(f"{name}: expected 'x', 'y', 'z' or a 3-vector, got {a!r}")
        return np.array(_NAMED_AXES[a.lower()])
    return _unit_axis(a, name)


def owned_state(item):
    """The pickled state of a model part (joint, body, frame): its attributes without the
    weak reference to its model (the unpickled model owns it again, see
    :meth:`soadyn.Model.__setstate__`), with the names of its read-only arrays (model data
    are never edited in place; pickle would thaw them)."""
    state = {k: x for k, x in item.__dict__.items() if k != "_owner"}
    frozen = []
    for k, x in state.items():  # arrays, and arrays in tuples (a body's placement (R, p))
        for i, a in enumerate(x if isinstance(x, tuple) else (x,)):
            if isinstance(a, np.ndarray) and not a.flags.writeable:
                frozen.append((k, i if isinstance(x, tuple) else None))
    state["_read_only"] = frozen
    return state


def restore_owned_state(item, state):
    """Inverse of :func:`owned_state` (without an owner: the model sets it)."""
    state = dict(state)
    for k, i in state.pop("_read_only", ()):
        (state[k] if i is None else state[k][i]).flags.writeable = False
    item.__dict__.update(state)


class Joint:
    """Base class of hinge types. Subclasses set ``nq``, ``nv`` and ``code``.

    When a joint is added to a :class:`~soadyn.Model` it receives its ``name``,
    ``q_index`` and ``v_index`` (offsets into the model's q and v) and the ``body``
    index of its child body.
    """

    nq = 0
    nv = 0
    code = FIXED
    kind = "fixed"

    def __init__(self, lower=None, upper=None):
        self.name = None
        self.q_index = None
        self.v_index = None
        self.body = None
        self.independent = True  # URDF+: False for spanning-tree joints that are not coordinates
        lo = -np.inf * np.ones(self.nv) if lower is None else np.asarray(lower, dtype=float).reshape(-1)
        hi = np.inf * np.ones(self.nv) if upper is None else np.asarray(upper, dtype=float).reshape(-1)
        if lo.shape != (self.nv,) or hi.shape != (self.nv,):
            raise ValueError(f"lower, upper: a {self.kind} joint expected {self.nv} limits each, got "
                             f"{lo.size} and {hi.size}")
        if np.any(lo > hi):
            raise ValueError(f"lower, upper: the lower limit {lo} exceeds the upper limit {hi}")
        lo.flags.writeable = hi.flags.writeable = False  # edit a joint by assignment, never in place
        self.lower, self.upper = lo, hi

    def __setattr__(self, name, value):
        # an edit of a joint that belongs to a model invalidates what was derived from it
        object.__setattr__(self, name, value)
        owner = self.__dict__.get("_owner")
        if owner is not None and owner() is not None:
            owner()._edited()

    def __getstate__(self):
        return owned_state(self)

    def __setstate__(self, state):
        restore_owned_state(self, state)

    # -- compiled-model description
    def axes(self):
        """Up to three axes (3, 3) used by the kernels (rows)."""
        return np.zeros((3, 3))

    def subkinds(self):
        """Sub-hinge kinds for composite joints (0 = rotation, 1 = translation)."""
        return ()

    pitch = 0.0

    # -- configuration space
    def neutral(self):
        """Neutral configuration (zero angles, identity quaternions)."""
        return np.zeros(self.nq)

    def random(self, rng):
        """A random configuration: uniform within finite limits, else in [-π, π] (angles)
        or [-1, 1] m (translations); uniform random unit quaternions."""
        out = np.empty(self.nq)
        for k in range(self.nq):
            lo, hi = self.lower[k], self.upper[k]
            if not (np.isfinite(lo) and np.isfinite(hi)):
                lo, hi = (-np.pi, np.pi) if self._is_angle(k) else (-1.0, 1.0)
            out[k] = rng.uniform(lo, hi)
        return out

    def _is_angle(self, k):
        return True

    # -- joint kinematics (numpy or sympy; the kernels use the compiled versions)
    def pose(self, q):
        """Pose ``(R, p)`` of the child frame in the joint frame at configuration ``q``."""
        return np.eye(3), np.zeros(3)

    def motion_subspace(self, q):
        """Joint map H*(q), (6, nv), in the child frame, angular rows first."""
        return np.zeros((6, 0))

    def bias(self, q, v):
        """Velocity-dependent joint acceleration ``Ḣ*(q, v) v`` in the child frame, (6,)."""
        q = np.asarray(q)
        return np.zeros(6, dtype=object if sp.is_symbolic(q, v) else float)

    def __repr__(self):
        return f"{type(self).__name__}(name={self.name!r})"


class Fixed(Joint):
    """Rigid connection (no degrees of freedom)."""


class _Axial(Joint):
    nq = nv = 1

    def __init__(self, axis=(0.0, 0.0, 1.0), lower=None, upper=None):
        super().__init__(lower, upper)
        self.axis = _readonly(axis_argument(axis, "axis"))

    def axes(self):
        a = np.zeros((3, 3))
        a[0] = self.axis
        return a


class Revolute(_Axial):
    """Rotation about a fixed unit ``axis`` of the joint frame; q = angle [rad]."""

    code = REVOLUTE
    kind = "revolute"

    def pose(self, q):
        return sp.axis_angle_to_matrix(self.axis, q[0]), np.zeros(3)

    def motion_subspace(self, q):
        return np.concatenate([self.axis, np.zeros(3)]).reshape(6, 1)


class Continuous(Revolute):
    """Unlimited revolute joint (URDF ``continuous``)."""

    kind = "continuous"

    def __init__(self, axis=(0.0, 0.0, 1.0)):
        super().__init__(axis)


class Prismatic(_Axial):
    """Translation along a fixed unit ``axis``; q = displacement [m]."""

    code = PRISMATIC
    kind = "prismatic"

    def _is_angle(self, k):
        return False

    def pose(self, q):
        return np.eye(3), self.axis * q[0]

    def motion_subspace(self, q):
        return np.concatenate([np.zeros(3), self.axis]).reshape(6, 1)


class Helical(_Axial):
    """Screw joint: rotation by q [rad] about ``axis`` and translation ``pitch``·q [m]
    along it (``pitch`` in m/rad)."""

    code = HELICAL
    kind = "helical"

    def __init__(self, axis=(0.0, 0.0, 1.0), pitch=0.0, lower=None, upper=None):
        super().__init__(axis, lower, upper)
        if not np.isfinite(pitch):
            raise ValueError(f"pitch: expected a finite number, got {pitch!r}")
        self.pitch = float(pitch)

    def pose(self, q):
        return sp.axis_angle_to_matrix(self.axis, q[0]), self.axis * (self.pitch * q[0])

    def motion_subspace(self, q):
        return np.concatenate([self.axis, self.pitch * self.axis]).reshape(6, 1)


def _random_quaternion(rng):
    u = rng.normal(size=4)
    return u / np.linalg.norm(u)


class Spherical(Joint):
    """Ball joint; q = quaternion (x, y, z, w), v = ω [rad/s] in the child frame."""

    nq, nv = 4, 3
    code = SPHERICAL
    kind = "spherical"

    def neutral(self):
        return np.array([0.0, 0.0, 0.0, 1.0])

    def random(self, rng):
        return _random_quaternion(rng)

    def pose(self, q):
        return sp.quaternion_to_matrix(np.asarray(q)), np.zeros(3)

    def motion_subspace(self, q):
        return np.vstack([np.eye(3), np.zeros((3, 3))])


class Free(Joint):
    """Floating (6-dof) joint; q = [p; quaternion (x, y, z, w)], v = [ω; v] of the child
    body in the child frame (p in the joint frame, metres)."""

    nq, nv = 7, 6
    code = FREE
    kind = "free"

    def neutral(self):
        return np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0])

    def random(self, rng):
        return np.concatenate([rng.uniform(-1.0, 1.0, 3), _random_quaternion(rng)])

    def pose(self, q):
        q = np.asarray(q)
        return sp.quaternion_to_matrix(q[3:7]), q[:3]

    def motion_subspace(self, q):
        return np.eye(6)


class _Composite(Joint):
    """Sequence of 1-dof sub-hinges separated by mass-less bodies ([Jain23p, §2])."""

    code = COMPOSITE

    def __init__(self, axes, kinds, lower=None, upper=None):
        self.nq = self.nv = len(axes)
        super().__init__(lower, upper)
        self._axes = _readonly(np.array(axes, dtype=float))
        self._kinds = tuple(kinds)

    def axes(self):
        a = np.zeros((3, 3))
        a[: self.nv] = self._axes
        return a

    def subkinds(self):
        return self._kinds

    def _is_angle(self, k):
        return self._kinds[k] == 0

    def _sub_poses(self, q):
        poses = []
        for a, kind, qk in zip(self._axes, self._kinds, q):
            if kind == 0:
                poses.append((sp.axis_angle_to_matrix(a, qk), np.zeros(3)))
            else:
                poses.append((np.eye(3), a * qk))
        return poses

    def pose(self, q):
        R, p = np.eye(3), np.zeros(3)
        for Rk, pk in self._sub_poses(q):
            R, p = sp.compose_poses(R, p, Rk, pk)
        return R, p

    def motion_subspace(self, q):
        poses = self._sub_poses(q)
        sym = sp.is_symbolic(np.asarray(q))
        S = np.zeros((6, self.nv), dtype=object if sym else float)
        # X(k+1..n): pose of the child in sub-frame k, accumulated from the tip
        R, p = np.eye(3), np.zeros(3)
        for k in reversed(range(self.nv)):
            h = np.zeros(6)
            if self._kinds[k] == 0:
                h[:3] = self._axes[k]
            else:
                h[3:] = self._axes[k]
            S[:, k] = sp.transform_motion(R, p, h)
            R, p = sp.compose_poses(*poses[k], R, p)
        return S

    def bias(self, q, v):
        S = self.motion_subspace(q)
        c = np.zeros(6, dtype=S.dtype)
        for k in range(self.nv):
            for j in range(k + 1, self.nv):
                c = c + sp.cross_motion(S[:, k] * v[k], S[:, j] * v[j])
        return c


class Universal(_Composite):
    """Two rotations: about ``axis1`` of the joint frame, then about ``axis2`` of the
    intermediate frame (defaults x then y)."""

    kind = "universal"

    def __init__(self, axis1="x", axis2="y", lower=None, upper=None):
        super().__init__([axis_argument(axis1, "axis1"), axis_argument(axis2, "axis2")], (0, 0), lower, upper)


class Gimbal(_Composite):
    """Three successive rotations (intrinsic Euler angles) about ``axes`` (default z, y, x:
    yaw, pitch, roll). Singular where two axes align."""

    kind = "gimbal"

    def __init__(self, axes=("z", "y", "x"), lower=None, upper=None):
        if len(axes) != 3:
            raise ValueError(f"axes: a gimbal joint needs 3 axes, got {len(axes)}")
        super().__init__([axis_argument(a, f"axes[{k}]") for k, a in enumerate(axes)], (0, 0, 0), lower, upper)


class Planar(_Composite):
    """Motion in the plane normal to ``normal``: translations along two orthonormal
    in-plane axes (x and y of the joint frame for the default normal z), then rotation
    about the normal. q = [x, y, θ]."""

    kind = "planar"

    def __init__(self, normal="z", lower=None, upper=None):
        n = axis_argument(normal, "normal")
        helper = np.array([1.0, 0.0, 0.0]) if abs(n[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
        u = helper - n * (helper @ n)
        u /= np.linalg.norm(u)
        w = np.cross(n, u)
        super().__init__([u, w, n], (1, 1, 0), lower, upper)


_BY_NAME = {
    "revolute": Revolute, "continuous": Continuous, "prismatic": Prismatic,
    "helical": Helical, "fixed": Fixed, "free": Free, "floating": Free,
    "spherical": Spherical, "universal": Universal, "gimbal": Gimbal, "planar": Planar,
}


def joint_from_name(kind, **kwargs):
    """Create a joint from its type name (``"revolute"``, ``"free"``, ...)."""
    try:
        cls = _BY_NAME[kind]
    except KeyError:
        raise ValueError(f"joint type: expected one of {sorted(_BY_NAME)}, got {kind!r}") from None
    return cls(**kwargs)


# =========================================================================== kernels
# These compiled helpers take and return scalars/tuples or write into caller-owned
# arrays: small array-returning helpers inside the body loops cost more in reference
# counting than the arithmetic they do.

@helper(forceinline=True)
def axis_rotation(ax, ay, az, angle):
    """Rodrigues: rotation matrix (row-major 9-tuple) of ``angle`` about unit (ax, ay, az)."""
    c = math.cos(angle)
    s = math.sin(angle)
    vers = 1.0 - c  # the versine
    return (c + vers * ax * ax, vers * ax * ay - s * az, vers * ax * az + s * ay,
            vers * ax * ay + s * az, c + vers * ay * ay, vers * ay * az - s * ax,
            vers * ax * az - s * ay, vers * ay * az + s * ax, c + vers * az * az)


#: the range of |quaternion|² in which the sum of the squares neither underflows nor
#: overflows to a wrong norm; outside it the components are scaled first (:func:`unit_quaternion`)
_SAFE_NORM2 = (1e-150, 1e150)


@helper(forceinline=True)
def unit_quaternion(x, y, z, w):
    """The quaternion (x, y, z, w) divided by its norm; all zeros for the zero quaternion.

    A quaternion is a rotation at any scale: one of norm 1e-200 or 1e155 (whose squares
    underflow to 0 or overflow to inf) is divided by its largest component before the
    squares are summed, so its norm is exact to rounding."""
    n2 = x * x + y * y + z * z + w * w
    if not (_SAFE_NORM2[0] < n2 < _SAFE_NORM2[1]):
        s = max(abs(x), abs(y), abs(z), abs(w))
        if s == 0.0:
            return 0.0, 0.0, 0.0, 0.0
        x, y, z, w = x / s, y / s, z / s, w / s
        n2 = x * x + y * y + z * z + w * w
    n = math.sqrt(n2)
    return x / n, y / n, z / n, w / n


@helper(forceinline=True)
def quaternion_rotation(x, y, z, w):
    """Rotation matrix (row-major 9-tuple) of the quaternion (x, y, z, w), normalised
    (at any scale, :func:`unit_quaternion`; the callers refuse the zero quaternion)."""
    n2 = x * x + y * y + z * z + w * w
    if not (_SAFE_NORM2[0] < n2 < _SAFE_NORM2[1]):
        x, y, z, w = unit_quaternion(x, y, z, w)
        n2 = 1.0
    s = 2.0 / n2
    return (1.0 - s * (y * y + z * z), s * (x * y - z * w), s * (x * z + y * w),
            s * (x * y + z * w), 1.0 - s * (x * x + z * z), s * (y * z - x * w),
            s * (x * z - y * w), s * (y * z + x * w), 1.0 - s * (x * x + y * y))


@helper(forceinline=True)
def joint_pose_and_subspace(i, jtype, nsub, subkinds, axes, pitch, q, qi, S, vi, Rj, pj):
    """Joint transform and joint map of body ``i``'s hinge at configuration ``q``.

    Writes the pose of the child frame in the joint frame into ``Rj[i]`` (3×3) and
    ``pj[i]`` (3,) and the columns of H*(q) (child frame) into rows ``vi..vi+nv`` of ``S``.
    """
    if jtype == REVOLUTE or jtype == HELICAL:
        ax, ay, az = axes[i, 0, 0], axes[i, 0, 1], axes[i, 0, 2]
        th = q[qi]
        r = axis_rotation(ax, ay, az, th)
        for k in range(9):
            Rj[i, k // 3, k % 3] = r[k]
        h = pitch[i]
        pj[i, 0] = ax * h * th
        pj[i, 1] = ay * h * th
        pj[i, 2] = az * h * th
        S[vi, 0] = ax
        S[vi, 1] = ay
        S[vi, 2] = az
        S[vi, 3] = h * ax
        S[vi, 4] = h * ay
        S[vi, 5] = h * az
    elif jtype == PRISMATIC:
        ax, ay, az = axes[i, 0, 0], axes[i, 0, 1], axes[i, 0, 2]
        d = q[qi]
        for a in range(3):
            for b in range(3):
                Rj[i, a, b] = 1.0 if a == b else 0.0
        pj[i, 0] = ax * d
        pj[i, 1] = ay * d
        pj[i, 2] = az * d
        S[vi, 0] = 0.0
        S[vi, 1] = 0.0
        S[vi, 2] = 0.0
        S[vi, 3] = ax
        S[vi, 4] = ay
        S[vi, 5] = az
    elif jtype == SPHERICAL or jtype == FREE:
        o = 3 if jtype == FREE else 0
        r = quaternion_rotation(q[qi + o], q[qi + o + 1], q[qi + o + 2], q[qi + o + 3])
        for k in range(9):
            Rj[i, k // 3, k % 3] = r[k]
        for a in range(3):
            pj[i, a] = q[qi + a] if jtype == FREE else 0.0
        n = 6 if jtype == FREE else 3
        for c in range(n):
            for a in range(6):
                S[vi + c, a] = 1.0 if a == c else 0.0
    elif jtype == COMPOSITE:
        _composite_pose_and_subspace(i, nsub, subkinds, axes, q, qi, S, vi, Rj, pj)
    else:  # FIXED
        for a in range(3):
            pj[i, a] = 0.0
            for b in range(3):
                Rj[i, a, b] = 1.0 if a == b else 0.0


@helper(forceinline=True)
def _composite_pose_and_subspace(i, nsub, subkinds, axes, q, qi, S, vi, Rj, pj):
    # Tip-to-base accumulation of the pose (R, p) of the child in sub-frame k, which
    # both maps sub-hinge k's axis into the child frame and yields the joint pose.
    r00, r01, r02, r10, r11, r12, r20, r21, r22 = 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0
    p0, p1, p2 = 0.0, 0.0, 0.0
    for k in range(nsub - 1, -1, -1):
        ax, ay, az = axes[i, k, 0], axes[i, k, 1], axes[i, k, 2]
        prismatic = (subkinds >> k) & 1
        # column k of H*: the sub-hinge axis seen from the child, h_c = X(R, p) h_k
        #   rotation:    [Rᵀa; Rᵀ(−p × a)]      translation: [0; Rᵀa]
        wa0 = r00 * ax + r10 * ay + r20 * az
        wa1 = r01 * ax + r11 * ay + r21 * az
        wa2 = r02 * ax + r12 * ay + r22 * az
        if prismatic:
            S[vi + k, 0] = 0.0
            S[vi + k, 1] = 0.0
            S[vi + k, 2] = 0.0
            S[vi + k, 3] = wa0
            S[vi + k, 4] = wa1
            S[vi + k, 5] = wa2
        else:
            c0 = -(p1 * az - p2 * ay)
            c1 = -(p2 * ax - p0 * az)
            c2 = -(p0 * ay - p1 * ax)
            S[vi + k, 0] = wa0
            S[vi + k, 1] = wa1
            S[vi + k, 2] = wa2
            S[vi + k, 3] = r00 * c0 + r10 * c1 + r20 * c2
            S[vi + k, 4] = r01 * c0 + r11 * c1 + r21 * c2
            S[vi + k, 5] = r02 * c0 + r12 * c1 + r22 * c2
        # pose of the child in sub-frame k-1: (Rk, pk) ∘ (R, p)
        if prismatic:
            d = q[qi + k]
            p0 += ax * d
            p1 += ay * d
            p2 += az * d
        else:
            k00, k01, k02, k10, k11, k12, k20, k21, k22 = axis_rotation(ax, ay, az, q[qi + k])
            n0 = k00 * p0 + k01 * p1 + k02 * p2
            n1 = k10 * p0 + k11 * p1 + k12 * p2
            n2 = k20 * p0 + k21 * p1 + k22 * p2
            p0, p1, p2 = n0, n1, n2
            (r00, r01, r02, r10, r11, r12, r20, r21, r22) = (
                k00 * r00 + k01 * r10 + k02 * r20, k00 * r01 + k01 * r11 + k02 * r21,
                k00 * r02 + k01 * r12 + k02 * r22, k10 * r00 + k11 * r10 + k12 * r20,
                k10 * r01 + k11 * r11 + k12 * r21, k10 * r02 + k11 * r12 + k12 * r22,
                k20 * r00 + k21 * r10 + k22 * r20, k20 * r01 + k21 * r11 + k22 * r21,
                k20 * r02 + k21 * r12 + k22 * r22)
    Rj[i, 0, 0], Rj[i, 0, 1], Rj[i, 0, 2] = r00, r01, r02
    Rj[i, 1, 0], Rj[i, 1, 1], Rj[i, 1, 2] = r10, r11, r12
    Rj[i, 2, 0], Rj[i, 2, 1], Rj[i, 2, 2] = r20, r21, r22
    pj[i, 0], pj[i, 1], pj[i, 2] = p0, p1, p2


@helper(forceinline=True)
def composite_bias(S, vi, nsub, v, k6):
    """Component ``k6`` of Ḣ* v = Σ_{k<j} (h_k v_k) × (h_j v_j) for a composite joint."""
    out = 0.0
    for k in range(nsub):
        for j in range(k + 1, nsub):
            vk = v[vi + k]
            vj = v[vi + j]
            a0, a1, a2 = S[vi + k, 0] * vk, S[vi + k, 1] * vk, S[vi + k, 2] * vk
            l0, l1, l2 = S[vi + k, 3] * vk, S[vi + k, 4] * vk, S[vi + k, 5] * vk
            b0, b1, b2 = S[vi + j, 0] * vj, S[vi + j, 1] * vj, S[vi + j, 2] * vj
            m0, m1, m2 = S[vi + j, 3] * vj, S[vi + j, 4] * vj, S[vi + j, 5] * vj
            # motion cross product [a; l] × [b; m] = [a × b; a × m + l × b]
            if k6 == 0:
                out += a1 * b2 - a2 * b1
            elif k6 == 1:
                out += a2 * b0 - a0 * b2
            elif k6 == 2:
                out += a0 * b1 - a1 * b0
            elif k6 == 3:
                out += a1 * m2 - a2 * m1 + l1 * b2 - l2 * b1
            elif k6 == 4:
                out += a2 * m0 - a0 * m2 + l2 * b0 - l0 * b2
            else:
                out += a0 * m1 - a1 * m0 + l0 * b1 - l1 * b0
    return out
