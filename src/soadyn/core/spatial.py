"""Spatial (6D) algebra: rotations, rigid-body transforms, inertias, cross products.

Conventions (see ``docs/notation.md``):

* Spatial vectors are **angular first**: a motion vector (spatial velocity) is
  ``V = [ω; v]`` and a force vector is ``f = [n; f]``, both expressed in some
  frame and taken at that frame's origin.
* A *pose* ``(R, p)`` of a frame B in a frame A is the rotation ``R`` whose
  columns are B's axes in A's coordinates and the position ``p`` of B's origin
  in A's coordinates (``x_A = R x_B + p``).
* For the pose of a child frame in its parent, the motion transform
  ``X = motion_transform(R, p)`` maps a parent motion vector to the child and is
  the SOA operator φ*(parent, child) (Featherstone's ``^iX_λ``); its transpose
  ``force_transform(R, p) = Xᵀ`` maps a child force vector to the parent and is
  φ(parent, child) ([Jain12, eq. 1], [Jain24, topic 1]).
* Quaternions are stored ``(x, y, z, w)``.

Every function here works on numpy arrays and, for the operator layer's
symbolic mode, on arrays of sympy expressions (object dtype): trigonometric
functions are taken from sympy when an argument is symbolic.
"""
from __future__ import annotations

import math

import numpy as np

__all__ = [
    "skew", "unskew", "rotation_x", "rotation_y", "rotation_z",
    "rpy_to_matrix", "matrix_to_rpy", "axis_angle_to_matrix", "exp3", "log3",
    "quaternion_to_matrix", "matrix_to_quaternion", "quaternion_multiply",
    "quaternion_conjugate", "quaternion_from_rotation_vector", "quaternion_to_rotation_vector",
    "motion_transform", "force_transform", "inverse_pose", "compose_poses",
    "transform_motion", "transform_force", "inverse_transform_motion", "inverse_transform_force",
    "homogeneous", "spatial_inertia", "inertia_parameters", "parallel_axis",
    "transform_inertia", "cross_motion", "cross_force", "motion_cross_matrix",
    "force_cross_matrix", "is_symbolic",
]


# --------------------------------------------------------------------------- helpers
def is_symbolic(*xs) -> bool:
    """True when any argument holds sympy expressions (object arrays or sympy objects)."""
    for x in xs:
        if isinstance(x, np.ndarray):
            if x.dtype == object:
                return True
        elif isinstance(x, (list, tuple)):
            if is_symbolic(*x):
                return True
        elif hasattr(x, "free_symbols"):
            return True
    return False


def _array(rows, symbolic: bool):
    return np.array(rows, dtype=object if symbolic else float)


def _trig(x):
    if is_symbolic(x):
        import sympy  # optional (extra 'symbolic'): imported only for symbolic input
        return sympy.cos(x), sympy.sin(x)
    return np.cos(x), np.sin(x)


def _vec3(a, name="a"):
    a = np.asarray(a)
    if a.shape != (3,):
        raise ValueError(f"{name}: expected shape (3,), got {a.shape}")
    return a


# --------------------------------------------------------------------------- rotations
def skew(a):
    """Skew-symmetric matrix ``[a]×`` with ``[a]× b = a × b`` ([CDI18] notation ``ã``).

    Parameters: a (3,). Returns (3, 3).
    """
    a = _vec3(a)
    return _array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]], is_symbolic(a))


def unskew(S):
    """Vector ``a`` of a skew-symmetric matrix ``S = [a]×`` (averaging its two halves)."""
    S = np.asarray(S)
    if S.shape != (3, 3):
        raise ValueError(f"S: expected shape (3, 3), got {S.shape}")
    return np.array([(S[2, 1] - S[1, 2]) / 2, (S[0, 2] - S[2, 0]) / 2, (S[1, 0] - S[0, 1]) / 2])


def rotation_x(angle):
    """Rotation by ``angle`` [rad] about x (columns: rotated axes in the original frame)."""
    c, s = _trig(angle)
    return _array([[1, 0, 0], [0, c, -s], [0, s, c]], is_symbolic(angle))


def rotation_y(angle):
    """Rotation by ``angle`` [rad] about y."""
    c, s = _trig(angle)
    return _array([[c, 0, s], [0, 1, 0], [-s, 0, c]], is_symbolic(angle))


def rotation_z(angle):
    """Rotation by ``angle`` [rad] about z."""
    c, s = _trig(angle)
    return _array([[c, -s, 0], [s, c, 0], [0, 0, 1]], is_symbolic(angle))


def rpy_to_matrix(rpy):
    """URDF roll-pitch-yaw [rad] to rotation: ``R = Rz(yaw) Ry(pitch) Rx(roll)``."""
    r, p, y = rpy
    return rotation_z(y) @ rotation_y(p) @ rotation_x(r)


def matrix_to_rpy(R):
    """Inverse of :func:`rpy_to_matrix`; pitch in [-π/2, π/2] (yaw = 0 at gimbal lock)."""
    R = np.asarray(R, dtype=float)
    sp = -R[2, 0]
    if abs(sp) >= 1.0 - 1e-12:
        pitch = np.copysign(np.pi / 2, sp)
        roll = np.arctan2(-R[1, 2], R[1, 1])
        return np.array([roll, pitch, 0.0])
    return np.array([np.arctan2(R[2, 1], R[2, 2]), np.arcsin(sp), np.arctan2(R[1, 0], R[0, 0])])


def axis_angle_to_matrix(axis, angle):
    """Rotation by ``angle`` [rad] about the unit vector ``axis`` (Rodrigues' formula)."""
    axis = _vec3(axis, "axis")
    c, s = _trig(angle)
    K = skew(axis)
    return np.eye(3, dtype=K.dtype) + s * K + (1 - c) * (K @ K)


def exp3(w):
    """Exponential map of so(3): rotation vector ``w`` (axis × angle, rad) to a matrix."""
    w = np.asarray(w, dtype=float)
    th = float(np.linalg.norm(w))
    K = skew(w)
    if th < 1e-8:  # second-order Taylor expansion keeps full accuracy here
        return np.eye(3) + K + 0.5 * (K @ K)
    return np.eye(3) + (np.sin(th) / th) * K + ((1 - np.cos(th)) / th**2) * (K @ K)


def log3(R):
    """Logarithm of a rotation matrix: the rotation vector ``w`` with ``exp3(w) = R``, |w| ≤ π."""
    R = np.asarray(R, dtype=float)
    return quaternion_to_rotation_vector(matrix_to_quaternion(R))


def quaternion_to_matrix(quat):
    """Rotation matrix of the quaternion ``(x, y, z, w)``; the quaternion is normalised first."""
    quat = np.asarray(quat)
    if quat.shape != (4,):
        raise ValueError(f"quat: expected shape (4,), got {quat.shape}")
    sym = is_symbolic(quat)
    x, y, z, w = quat
    if not sym:
        n = math.hypot(x, y, z, w)  # without overflow or underflow: a quaternion of norm 1e-200 is a rotation
        if not n > 0:
            raise ValueError("quat: the zero quaternion is not a rotation")
        x, y, z, w = x / n, y / n, z / n, w / n
    return _array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ], sym)


def matrix_to_quaternion(R):
    """Unit quaternion ``(x, y, z, w)`` with ``w ≥ 0`` of a rotation matrix (Shepperd's method)."""
    R = np.asarray(R, dtype=float)
    tr = R[0, 0] + R[1, 1] + R[2, 2]
    if tr > 0:
        s = 2.0 * np.sqrt(tr + 1.0)
        q = [(R[2, 1] - R[1, 2]) / s, (R[0, 2] - R[2, 0]) / s, (R[1, 0] - R[0, 1]) / s, 0.25 * s]
    elif R[0, 0] > R[1, 1] and R[0, 0] > R[2, 2]:
        s = 2.0 * np.sqrt(1.0 + R[0, 0] - R[1, 1] - R[2, 2])
        q = [0.25 * s, (R[0, 1] + R[1, 0]) / s, (R[0, 2] + R[2, 0]) / s, (R[2, 1] - R[1, 2]) / s]
    elif R[1, 1] > R[2, 2]:
        s = 2.0 * np.sqrt(1.0 + R[1, 1] - R[0, 0] - R[2, 2])
        q = [(R[0, 1] + R[1, 0]) / s, 0.25 * s, (R[1, 2] + R[2, 1]) / s, (R[0, 2] - R[2, 0]) / s]
    else:
        s = 2.0 * np.sqrt(1.0 + R[2, 2] - R[0, 0] - R[1, 1])
        q = [(R[0, 2] + R[2, 0]) / s, (R[1, 2] + R[2, 1]) / s, 0.25 * s, (R[1, 0] - R[0, 1]) / s]
    q = np.array(q)
    q /= np.linalg.norm(q)
    return -q if q[3] < 0 else q


def quaternion_multiply(a, b):
    """Hamilton product ``a ⊗ b`` of quaternions ``(x, y, z, w)``; R(a⊗b) = R(a) R(b)."""
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return np.array([
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
        aw * bw - ax * bx - ay * by - az * bz,
    ])


def quaternion_conjugate(q):
    """Conjugate (inverse for unit quaternions) of ``(x, y, z, w)``."""
    return np.array([-q[0], -q[1], -q[2], q[3]])


def quaternion_from_rotation_vector(w):
    """Unit quaternion of the rotation vector ``w`` (rad): exp map of SO(3) in quaternion form."""
    w = np.asarray(w, dtype=float)
    th = float(np.linalg.norm(w))
    if th < 1e-8:
        s = 0.5 - th * th / 48.0  # sin(th/2)/th to second order
        return np.array([s * w[0], s * w[1], s * w[2], 1.0 - th * th / 8.0])
    s = np.sin(th / 2) / th
    return np.array([s * w[0], s * w[1], s * w[2], np.cos(th / 2)])


def quaternion_to_rotation_vector(q):
    """Rotation vector (|w| ≤ π) of a quaternion ``(x, y, z, w)``; inverse of the exp map."""
    q = np.asarray(q, dtype=float)
    q = q / math.hypot(*q)  # (np.linalg.norm squares first: 1e-200 would underflow to 0)
    if q[3] < 0:
        q = -q
    v = q[:3]
    sn = float(np.linalg.norm(v))
    if sn < 1e-8:
        return 2.0 * v / q[3]
    th = 2.0 * np.arctan2(sn, q[3])
    return th * v / sn


# --------------------------------------------------------------------------- poses and transforms
def homogeneous(R, p):
    """4×4 homogeneous matrix of the pose ``(R, p)``."""
    T = np.eye(4, dtype=object if is_symbolic(R, p) else float)
    T[:3, :3] = R
    T[:3, 3] = p
    return T


def inverse_pose(R, p):
    """Pose of A in B given the pose ``(R, p)`` of B in A."""
    R = np.asarray(R)
    Rt = R.T
    return Rt, -(Rt @ np.asarray(p))


def compose_poses(R1, p1, R2, p2):
    """Pose of C in A from the pose of B in A ``(R1, p1)`` and of C in B ``(R2, p2)``."""
    return R1 @ R2, p1 + R1 @ p2


def motion_transform(R, p):
    """6×6 motion transform parent→child for the child pose ``(R, p)`` in the parent.

    ``X = [[Rᵀ, 0], [-Rᵀ[p]×, Rᵀ]]``: this is φ*(parent, child), Featherstone's ^iX_λ.
    """
    R = np.asarray(R)
    Rt = R.T
    sym = is_symbolic(R, p)
    X = np.zeros((6, 6), dtype=object if sym else float)
    X[:3, :3] = Rt
    X[3:, 3:] = Rt
    X[3:, :3] = -(Rt @ skew(np.asarray(p)))
    return X


def force_transform(R, p):
    """6×6 force transform child→parent for the child pose ``(R, p)``: φ(parent, child) = Xᵀ."""
    return motion_transform(R, p).T


def transform_motion(R, p, m):
    """``motion_transform(R, p) @ m`` without forming the 6×6 matrix: parent motion → child."""
    m = np.asarray(m)
    Rt = np.asarray(R).T
    w = m[:3]
    v = m[3:]
    return np.concatenate([Rt @ w, Rt @ (v - np.cross(p, w))])


def inverse_transform_motion(R, p, m):
    """Child motion vector → parent: inverse of :func:`transform_motion`."""
    m = np.asarray(m)
    R = np.asarray(R)
    w = R @ m[:3]
    return np.concatenate([w, R @ m[3:] + np.cross(p, w)])


def transform_force(R, p, f):
    """``force_transform(R, p) @ f`` without forming the 6×6 matrix: child force → parent."""
    f = np.asarray(f)
    R = np.asarray(R)
    lin = R @ f[3:]
    return np.concatenate([R @ f[:3] + np.cross(p, lin), lin])


def inverse_transform_force(R, p, f):
    """Parent force vector → child: inverse of :func:`transform_force`."""
    f = np.asarray(f)
    Rt = np.asarray(R).T
    return np.concatenate([Rt @ (f[:3] - np.cross(p, f[3:])), Rt @ f[3:]])


# --------------------------------------------------------------------------- inertia
def spatial_inertia(mass, com, inertia_com):
    """6×6 spatial inertia about the frame origin (angular first).

    ``M = [[I_c − m[c]×[c]×, m[c]×], [−m[c]×, m·1]]`` ([CDI18], M_i below eq. 12), for
    mass ``m`` [kg], centre of mass ``c`` [m] and rotational inertia ``I_c`` about the
    centre of mass [kg m²], all in the frame's coordinates.
    """
    com = np.asarray(com)
    Ic = np.asarray(inertia_com)
    if Ic.shape != (3, 3):
        raise ValueError(f"inertia_com: expected shape (3, 3), got {Ic.shape}")
    sym = is_symbolic(mass, com, Ic)
    C = skew(com)
    M = np.zeros((6, 6), dtype=object if sym else float)
    M[:3, :3] = Ic - mass * (C @ C)
    M[:3, 3:] = mass * C
    M[3:, :3] = -mass * C
    M[3:, 3:] = mass * np.eye(3, dtype=M.dtype)
    return M


def inertia_parameters(M):
    """Inverse of :func:`spatial_inertia`: ``(mass, com, inertia_com)`` of a rigid-body inertia.

    For a mass-less body the centre of mass is undefined and returned as zeros (a
    symbolic mass is taken to be nonzero).
    """
    sym = is_symbolic(M)
    M = np.asarray(M, dtype=object if sym else float)
    m = M[3, 3]
    if sym:
        com = unskew(M[:3, 3:]) / m
    elif m > 0:
        com = unskew(M[:3, 3:]) / m
    else:
        com = np.zeros(3)
    C = skew(com)
    return m, com, M[:3, :3] + m * (C @ C)


def parallel_axis(mass, inertia_com, offset):
    """Rotational inertia about a point at ``offset`` from the centre of mass.

    ``I_o = I_c + m(|d|²·1 − d dᵀ)`` [kg m²] (parallel-axis theorem, [Jain24, topic 1]).
    """
    dtype = object if is_symbolic(mass, inertia_com, offset) else float
    d = np.asarray(offset, dtype=dtype)
    return np.asarray(inertia_com, dtype=dtype) + mass * (d @ d * np.eye(3) - np.outer(d, d))


def transform_inertia(R, p, M):
    """Spatial inertia of a body expressed in the parent frame.

    Given the body frame's pose ``(R, p)`` in the parent and its inertia ``M`` about the
    body origin, returns ``φ M φ*`` = Xᵀ M X, the inertia about the parent origin.
    """
    X = motion_transform(R, p)
    return X.T @ M @ X


# --------------------------------------------------------------------------- cross products
def motion_cross_matrix(V):
    """6×6 matrix of ``V ×`` acting on motion vectors: [[ω×, 0], [v×, ω×]] (Featherstone crm)."""
    V = np.asarray(V)
    sym = is_symbolic(V)
    W = skew(V[:3])
    X = np.zeros((6, 6), dtype=object if sym else float)
    X[:3, :3] = W
    X[3:, 3:] = W
    X[3:, :3] = skew(V[3:])
    return X


def force_cross_matrix(V):
    """6×6 matrix of ``V ×*`` acting on force vectors: −(V×)ᵀ (Featherstone crf)."""
    return -motion_cross_matrix(V).T


def cross_motion(V, m):
    """Spatial cross product ``V × m`` of motion vectors."""
    V = np.asarray(V)
    m = np.asarray(m)
    w, v = V[:3], V[3:]
    return np.concatenate([np.cross(w, m[:3]), np.cross(w, m[3:]) + np.cross(v, m[:3])])


def cross_force(V, f):
    """Spatial cross product ``V ×* f`` of a motion and a force vector."""
    V = np.asarray(V)
    f = np.asarray(f)
    w, v = V[:3], V[3:]
    return np.concatenate([np.cross(w, f[:3]) + np.cross(v, f[3:]), np.cross(w, f[3:])])
