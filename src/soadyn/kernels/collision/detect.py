"""The detection kernels: packed collision tables and body poses in, contacts or distances out.

:func:`detect_contacts_kernel` is one compiled function from the packed tables
(:mod:`.layout`), the world poses of the bodies (``Rb`` (nb, 3, 3), ``pb`` (nb, 3), as
the world-pose kernels of :mod:`soadyn.kernels.kinematics` give them) and the margin to
the contact arrays: object world poses, broad phase (:mod:`.broad`), a bounding-sphere
test, narrow phase on each candidate in the order of ``pairs`` (:mod:`.narrow`). It writes
at most ``capacity`` = len(``depth``) contacts and returns how many there are, so a caller
whose arrays were too short sees it (the count exceeds the capacity) and calls again with
longer ones: nothing is dropped silently. A pair gives at most 4 contacts, so a capacity
of 4 P never overflows. Compiled code (the step kernels) calls its body, the helper
:func:`detect_contacts`: a kernel is optimized and emitted on its own for its Python entry,
and a compiled caller would then link it in and optimize it again, a longer first call
(``benchmarks/results/design_notes.md``);
``fs`` and ``js`` are its float and integer scratch (:func:`scratch_sizes`, ``js``
zero-filled once). :func:`detect_kernel` starts from the configuration itself (the world
poses by :func:`~soadyn.kernels.kinematics.poses_into`) and writes output arrays that hold
two fields each, the public function's one call.

Each contact i lies between ``objects[i, 0]`` and ``objects[i, 1]``, the pair's order in
``pairs`` (i < j), the normal from the first into the second. Its friction coefficient
is the larger of the two objects' (MuJoCo's rule for ``geom`` friction: the more
frictional surface governs, and an MJCF model's contacts then have the coefficients
MuJoCo gives them).
"""
from __future__ import annotations

from ...core.jit import helper, kernel
from ...core.layout import carve, model_tables
from ...core.shapes import CONVEX, PLANE
from ...core.status import BAD_SHAPE, OK
from ..kinematics import configuration_status, poses_into
from ..primitives import compose_pose
from .broad import candidate_pairs, world_boxes
from .convex import CONVEX_FLOATS, CONVEX_INTS
from .frame import contact_frame
from .layout import collision_views
from .narrow import pair_contacts, pair_distance
from .support import Hulls, solid

__all__ = ["detect_contacts", "detect_contacts_kernel", "detect_kernel", "collision_distances_kernel", "scratch_sizes",
           "place_objects", "CONTACT_FLOATS", "CONTACT_INTS"]

#: the box clipping buffer and the manifold rows
_CLIP = 2 * 16 * 4
_ROWS = 4 * 7
#: the flat contact blocks a compiled caller of :func:`detect_contacts` keeps (the
#: step kernels of :mod:`soadyn.kernels.contact.step`), per contact: floats (point 3,
#: normal 3, depth, friction, frame 9) and integers (objects 2, bodies 2)
CONTACT_FLOATS = 17
CONTACT_INTS = 4


@helper(forceinline=True)
def scratch_sizes(n, npairs, maxv, nb):
    """(floats, integers) of scratch the kernels need for n objects, P pairs, at most
    ``maxv`` hull vertices per object and nb bodies (Python calls ``scratch_sizes.py_func``)."""
    v = max(maxv, 1)
    return n * (9 + 3 + 6) + nb * 12 + _ROWS + _CLIP + 4 * v + CONVEX_FLOATS, n + npairs + 2 * v + CONVEX_INTS


@helper
def place_objects(t, Rb, pb, Rw, pw):
    """The world pose (Rw[i], pw[i]) of each object: its body's world pose composed with
    the shape's pose in the body (the world itself for body −1)."""
    for i in range(t.n):
        b = t.body[i]
        R, p = t.rotation, t.translation
        if b < 0:
            for a in range(3):
                pw[i, a] = p[i, a]
                for c in range(3):
                    Rw[i, a, c] = R[i, a, c]
            continue
        compose_pose(Rb, pb, b, R, p, i, Rw, pw, i)


@helper(forceinline=True)
def _inputs_ok(t, nb, fs, js):
    """The body poses cover every object's body and the scratch is long enough."""
    nf, ni = scratch_sizes(t.n, t.npairs, t.maxv, 0)
    if fs.shape[0] < nf or js.shape[0] < ni:
        return False
    for i in range(t.n):
        if t.body[i] >= nb:
            return False
        if t.kind[i] == CONVEX and t.vcount[i] < 1:
            return False
    return True


@helper
def _detect(t, Rb, pb, margin, fs, js, objects, bodies, point, normal, depth, friction, frame):
    """The detection of :func:`detect_contacts` on checked inputs."""
    n = t.n
    v = max(t.maxv, 1)
    Rw = carve(fs, 0, (n, 3, 3))
    pw = carve(fs, 9 * n, (n, 3))
    box = carve(fs, 12 * n, (n, 6))
    M = carve(fs, 18 * n, (4, 7))
    P = carve(fs, 18 * n + _ROWS, (2, 16, 4))
    C = carve(fs, 18 * n + _ROWS + _CLIP, (v, 4))
    fsc = carve(fs, 18 * n + _ROWS + _CLIP + 4 * v, CONVEX_FLOATS)
    order = carve(js, 0, n)
    flags = carve(js, n, t.npairs)
    Q = carve(js, n + t.npairs, (2, v))
    jsc = carve(js, n + t.npairs + 2 * v, CONVEX_INTS)
    hulls = Hulls(t.vertices, t.adj_start, t.adj, t.planes, t.starts, t.adj_vertices)
    place_objects(t, Rb, pb, Rw, pw)
    world_boxes(t, Rw, pw, margin, box)
    candidate_pairs(t, pw, Rw, box, margin, order, flags)
    capacity = depth.shape[0]
    count = 0
    for p in range(t.npairs):
        if flags[p] == 0:
            continue
        i, j = t.pairs[p, 0], t.pairs[p, 1]
        if t.kind[i] != PLANE and t.kind[j] != PLANE:  # bounding spheres farther apart than the margin
            g0, g1, g2 = pw[j, 0] - pw[i, 0], pw[j, 1] - pw[i, 1], pw[j, 2] - pw[i, 2]
            reach = t.radius[i] + t.radius[j] + margin
            if g0 * g0 + g1 * g1 + g2 * g2 > reach * reach:
                continue
        swapped = t.kind[i] > t.kind[j]
        a, b = (j, i) if swapped else (i, j)
        A = solid(t, Rw, pw, a)
        B = solid(t, Rw, pw, b)
        k = pair_contacts(A, B, hulls, margin, fsc, jsc, P, C, Q, M)
        sign = -1.0 if swapped else 1.0
        mu = max(t.friction[i], t.friction[j])
        for r in range(k):
            if count < capacity:
                objects[count, 0], objects[count, 1] = i, j
                bodies[count, 0], bodies[count, 1] = t.body[i], t.body[j]
                depth[count] = -M[r, 0]
                for e in range(3):
                    point[count, e] = M[r, 1 + e]
                    normal[count, e] = sign * M[r, 4 + e]
                friction[count] = mu
                contact_frame(normal[count, 0], normal[count, 1], normal[count, 2], frame, count)
            count += 1
    return count


@kernel
def detect_contacts_kernel(ci, cf, Rb, pb, margin, fs, js, objects, bodies, point, normal, depth, friction, frame):
    """:func:`detect_contacts` from Python (precompile, tests)."""
    return detect_contacts(ci, cf, Rb, pb, margin, fs, js, objects, bodies, point, normal, depth, friction, frame)


@helper
def detect_contacts(ci, cf, Rb, pb, margin, fs, js, objects, bodies, point, normal, depth, friction, frame):
    """Detect the contacts within ``margin`` [m] (module docstring) into the first rows of
    the outputs: ``objects``, ``bodies`` (K, 2) int64, ``point``, ``normal`` (K, 3),
    ``depth``, ``friction`` (K,), ``frame`` (K, 3, 3), K the capacity. ``depth`` = −d > 0
    for penetration. Returns the number of contacts (more than K: call again with K at
    least that), or −BAD_SHAPE for inputs that do not fit the tables."""
    t = collision_views(ci, cf)
    if not _inputs_ok(t, Rb.shape[0], fs, js) or pb.shape[0] != Rb.shape[0]:
        return -BAD_SHAPE
    return _detect(t, Rb, pb, margin, fs, js, objects, bodies, point, normal, depth, friction, frame)


@kernel
def detect_kernel(mi, mf, ws, q, ci, cf, margin, fs, js, vectors, scalars, frames, pairs):
    """:func:`detect_contacts_kernel` from the configuration ``q`` of the model ``(mi, mf)``
    (workspace ``ws``): the world poses first (:func:`~soadyn.kernels.kinematics.poses_into`).
    The outputs, of capacity K = len(``frames``), hold two fields each, one after the other,
    so that the caller's arrays of the k contacts found are slices of them:
    ``vectors`` (2K, 3) the points, then the normals; ``scalars`` (2K,) the depths, then
    the frictions; ``frames`` (K, 3, 3); ``pairs`` (2K, 2) int64 the objects, then the
    bodies. Returns the contact count, or minus a status code for a bad configuration
    (:func:`~soadyn.kernels.kinematics.configuration_status`) or inputs that do not fit the
    tables."""
    m = model_tables(mi, mf)
    st = configuration_status(m, q, ws)
    if st != OK:
        return -st
    t = collision_views(ci, cf)
    nf, _ = scratch_sizes(t.n, t.npairs, t.maxv, m.nb)
    if not _inputs_ok(t, m.nb, fs, js) or fs.shape[0] < nf:
        return -BAD_SHAPE
    K = frames.shape[0]
    if vectors.shape[0] != 2 * K or scalars.shape[0] != 2 * K or pairs.shape[0] != 2 * K:
        return -BAD_SHAPE
    base = nf - 12 * m.nb  # the body poses after the detection's scratch
    Rb = carve(fs, base, (m.nb, 3, 3))
    pb = carve(fs, base + 9 * m.nb, (m.nb, 3))
    poses_into(mi, mf, ws, q, Rb, pb)
    return _detect(t, Rb, pb, margin, fs, js, pairs[:K], pairs[K:], vectors[:K], vectors[K:], scalars[:K],
                   scalars[K:], frames)


@kernel
def collision_distances_kernel(ci, cf, Rb, pb, fs, js, distance, points, normal):
    """The signed distance (``distance`` (P,) [m], < 0: penetration), the witness points
    (``points`` (P, 2, 3): on the first and on the second object) and the unit normal from
    the first into the second (``normal`` (P, 3)) of every allowed pair, in the order of
    ``pairs``; points[p, 1] − points[p, 0] = distance[p] normal[p]. Returns OK, or BAD_SHAPE
    for inputs that do not fit the tables."""
    t = collision_views(ci, cf)
    if not _inputs_ok(t, Rb.shape[0], fs, js) or pb.shape[0] != Rb.shape[0] or distance.shape[0] != t.npairs:
        return BAD_SHAPE
    n = t.n
    v = max(t.maxv, 1)
    Rw = carve(fs, 0, (n, 3, 3))
    pw = carve(fs, 9 * n, (n, 3))
    P = carve(fs, 18 * n + _ROWS, (2, 16, 4))
    fsc = carve(fs, 18 * n + _ROWS + _CLIP + 4 * v, CONVEX_FLOATS)
    jsc = carve(js, n + t.npairs + 2 * v, CONVEX_INTS)
    hulls = Hulls(t.vertices, t.adj_start, t.adj, t.planes, t.starts, t.adj_vertices)
    place_objects(t, Rb, pb, Rw, pw)
    for p in range(t.npairs):
        i, j = t.pairs[p, 0], t.pairs[p, 1]
        swapped = t.kind[i] > t.kind[j]
        a, b = (j, i) if swapped else (i, j)
        A = solid(t, Rw, pw, a)
        B = solid(t, Rw, pw, b)
        d, x, y, nrm = pair_distance(A, B, hulls, fsc, jsc, P)
        if swapped:
            x, y = y, x
            nrm = (-nrm[0], -nrm[1], -nrm[2])
        distance[p] = d
        for e in range(3):
            points[p, 0, e] = x[e]
            points[p, 1, e] = y[e]
            normal[p, e] = nrm[e]
    return OK
