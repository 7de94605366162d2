"""The general convex pair: GJK for the distance, EPA for the penetration, Newton's method
on curved surfaces.

Every convex pair without a closed form of its own (ellipsoids, cylinders and convex
meshes against the other shapes) goes through :func:`convex_distance`, which returns the
signed distance d, the witness points x on the first shape and y on the second and the
unit normal n from the first into the second, with y − x = d n (d < 0: penetration, −d
the depth: the shortest translation of the second shape along n that separates them).
Spheres and capsules enter as their cores, a point and a segment (:mod:`.support`), and
are inflated at the end.

1. **GJK** [GJK88] finds the point v of the Minkowski difference D = A − B nearest the
   origin, over simplices of support points, with the signed-volume sub-algorithm of
   [Montanari17] (the sub-simplex nearest the origin from signed volumes of
   projections, without Johnson's determinants that lose accuracy on flat simplices).
   Separated shapes: d = |v|, n = −v/|v|.
2. **EPA** [vandenBergen01]: when the origin is inside D (or within rounding of its
   surface), the polytope of GJK's last simplex is expanded towards D's surface, face by
   face, until the face nearest the origin lies on D's surface: −d is its distance to the
   origin and n its normal. (A simplex of 2 or 3 points, the origin on its edge or face,
   is first made a bipyramid, as [vandenBergen01] prescribes for the touching case.)
3. For polytopes (points, segments, boxes, convex meshes) both stop after finitely many
   steps on the exact answer (a repeated vertex ends them). On a curved surface they only
   converge, to about the square root of their tolerance in the witness points; the
   **polish** then solves the optimality conditions by Newton's method. The signed distance
   of any two convex sets is d = max_{|n| = 1} f(n), f(n) = −h_A(n) − h_B(−n) (the gap
   between the two support planes of normal n: a separating-axis bound for every n, equal
   to d at the optimum, for separated and penetrating shapes alike), with ∇f = y(n) − x(n),
   x = s_A(n), y = s_B(−n). Its Newton step on the sphere is
   δ = (Tᵀ(J_A + J_B)T + f I)⁻¹ Tᵀ(y − x), T a basis of the tangent directions, J the
   support Hessians (:func:`~.support.support_hessian`). Where a polytope's feature
   (vertex, edge, face; a cylinder's cap or side line) carries the contact, f is not smooth
   and the feature is held fixed instead: a face fixes n, an edge keeps n orthogonal to it.
   The features come from the ids of GJK's or EPA's last simplex (and a box's or a mesh's
   faces nearest the normal); the readings are tried likeliest first, until one satisfies
   the optimality conditions (witness points inside both shapes, on their support planes,
   y − x = f n), else the largest f(n), evaluated with the true support functions, is kept —
   every f(n) is a valid bound, so a wrong reading can only lose.
"""
from __future__ import annotations

import math

from ...core.jit import helper
from ...core.layout import carve
from ...core.shapes import BOX, CAPSULE, CONVEX, CYLINDER, ELLIPSOID, SPHERE
from .support import core_radius, curved, support, support_hessian
from .vector import TINY, add, axpy, column, cross, dot, norm, perpendicular, rotate, scale, sub, unit_or, unrotate

__all__ = ["convex_distance", "CONVEX_FLOATS", "CONVEX_INTS", "gjk", "epa", "polish"]

#: iteration caps: GJK on polytopes ends in a few steps; on curved surfaces it converges
#: linearly and the polish finishes the job
GJK_ITERATIONS = 128
#: EPA's polytope: vertices and face slots (a face removed frees its slot)
EPA_VERTICES = 128
EPA_FACES = 2 * EPA_VERTICES + 8
#: horizon edges at most per EPA step
EPA_EDGES = EPA_FACES
#: GJK stops when |v|² − v·w ≤ tolerance · |v|² (no support point gets nearer): to rounding on
#: polytopes; on curved surfaces, where it converges only linearly, as far as the polish
#: needs a start (its Newton steps then converge quadratically)
GJK_TOLERANCE_POLYTOPE = 1e-14
GJK_TOLERANCE_CURVED = 1e-8
#: and between ellipsoids, spheres and capsules, whose polish has one reading (no faces, no
#: edges but a capsule's segment, whose sides are smooth) and needs only a start in the basin
#: of the optimum (as :data:`EPA_TOLERANCE_ROUNDED`; at 1e-6, GJK took two thirds of a
#: sphere–ellipsoid pair's time: the polish's answer, converged to rounding, stays the same
#: to 5e-15 m in points and normals over random, penetrating and coincident poses, with
#: ellipsoids of axis ratios up to 100)
GJK_TOLERANCE_ROUNDED = 1e-2
#: EPA stops when the support beyond the nearest face is within this (relative) distance
#: for polytopes (a rounding guard: they end on a repeated vertex), and on curved surfaces,
#: where the polish takes over from a normal this close
EPA_TOLERANCE_POLYTOPE = 1e-13
EPA_TOLERANCE_CURVED = 1e-6
#: and between ellipsoids, spheres and capsules (no faces, no edges but a capsule's segment,
#: whose sides are smooth): their polish has one reading and needs only the basin
EPA_TOLERANCE_ROUNDED = 1e-3
#: Newton steps of the polish
POLISH_ITERATIONS = 40

# the polish's readings of a feature: a support point that moves with n (curved), a
# vertex, an edge line (n ⟂ its direction), a face (n = its normal), a cylinder's side
# (n ⟂ the axis, the supporting side line turning about the axis with n)
SMOOTH, POINT, EDGE, FACE, SIDE = 0, 1, 2, 3, 4


#: the scratch :func:`convex_distance` needs: floats (GJK's simplex (4, 12), EPA's vertices
#: (EPA_VERTICES, 9) and faces (EPA_FACES, 4); the polish reuses them) and integers (EPA's
#: vertex ids, faces, horizon edges, the two shapes' feature ids)
CONVEX_FLOATS = 4 * 12 + EPA_VERTICES * 9 + EPA_FACES * 4
CONVEX_INTS = EPA_VERTICES * 2 + EPA_FACES * 4 + EPA_EDGES * 2 + 8


# =========================================================================== GJK
@helper(forceinline=True)
def _polytope(S):
    return not curved(S)


@helper(forceinline=True)
def _rounded(S):
    """Ellipsoids, spheres and capsules: surfaces without faces or edges."""
    return S.kind == ELLIPSOID or S.kind == SPHERE or S.kind == CAPSULE


@helper
def _s1d(s1, s2):
    """Barycentric weights of the point of segment s1 s2 nearest the origin [Montanari17,
    Alg. 4]: the projection onto the line, read on the axis of the segment's largest
    extent; an endpoint when the projection falls outside."""
    d = sub(s2, s1)
    dd = dot(d, d)
    if dd <= 0.0:
        return 1.0, 0.0
    t = -dot(s1, d) / dd
    p = axpy(s1, t, d)
    i = 0
    if abs(d[1]) > abs(d[i]):
        i = 1
    if abs(d[2]) > abs(d[i]):
        i = 2
    mu = s1[i] - s2[i]
    c1 = p[i] - s2[i]
    c2 = s1[i] - p[i]
    if (mu > 0.0 and c1 > 0.0 and c2 > 0.0) or (mu < 0.0 and c1 < 0.0 and c2 < 0.0):
        return c1 / mu, c2 / mu
    if dot(s1, s1) <= dot(s2, s2):
        return 1.0, 0.0
    return 0.0, 1.0


@helper(forceinline=True)
def _same_sign(a, b):
    return (a > 0.0 and b > 0.0) or (a < 0.0 and b < 0.0)


@helper
def _s2d(s1, s2, s3):
    """Barycentric weights of the point of triangle s1 s2 s3 nearest the origin
    [Montanari17]: the origin projected onto the plane, its signed areas in the
    coordinate plane of the triangle's largest projection; else the nearest of the edges
    that the signs exclude."""
    n = cross(sub(s2, s1), sub(s3, s1))
    nn = dot(n, n)
    if nn > 0.0:
        p = scale(n, dot(n, s1) / nn)
        # signed areas (2×) of the projections on the plane orthogonal to axis k
        k = 0
        if abs(n[1]) > abs(n[k]):
            k = 1
        if abs(n[2]) > abs(n[k]):
            k = 2
        i, j = (1, 2) if k == 0 else ((2, 0) if k == 1 else (0, 1))
        m = n[k]
        c1 = (s2[i] - p[i]) * (s3[j] - p[j]) - (s3[i] - p[i]) * (s2[j] - p[j])
        c2 = (s3[i] - p[i]) * (s1[j] - p[j]) - (s1[i] - p[i]) * (s3[j] - p[j])
        c3 = (s1[i] - p[i]) * (s2[j] - p[j]) - (s2[i] - p[i]) * (s1[j] - p[j])
        if _same_sign(m, c1) and _same_sign(m, c2) and _same_sign(m, c3):
            return c1 / m, c2 / m, c3 / m
        ok1, ok2, ok3 = _same_sign(m, c1), _same_sign(m, c2), _same_sign(m, c3)
    else:
        ok1 = ok2 = ok3 = False  # a flat triangle: every edge is a candidate
    best = math.inf
    l1 = l2 = l3 = 0.0
    if not ok1:  # the edge s2 s3
        a, b = _s1d(s2, s3)
        x = add(scale(s2, a), scale(s3, b))
        if dot(x, x) < best:
            best, l1, l2, l3 = dot(x, x), 0.0, a, b
    if not ok2:  # s1 s3
        a, b = _s1d(s1, s3)
        x = add(scale(s1, a), scale(s3, b))
        if dot(x, x) < best:
            best, l1, l2, l3 = dot(x, x), a, 0.0, b
    if not ok3:  # s1 s2
        a, b = _s1d(s1, s2)
        x = add(scale(s1, a), scale(s2, b))
        if dot(x, x) < best:
            best, l1, l2, l3 = dot(x, x), a, b, 0.0
    return l1, l2, l3


@helper(forceinline=True)
def _det(a, b, c):
    return dot(a, cross(b, c))


@helper
def _s3d(s1, s2, s3, s4):
    """Barycentric weights of the point of tetrahedron s1..s4 nearest the origin
    [Montanari17]: all four cofactors of the signed volume with its sign means
    the origin is inside; else the nearest of the faces that the signs exclude."""
    c1 = -_det(s2, s3, s4)
    c2 = _det(s1, s3, s4)
    c3 = -_det(s1, s2, s4)
    c4 = _det(s1, s2, s3)
    m = c1 + c2 + c3 + c4
    ok1, ok2, ok3, ok4 = _same_sign(m, c1), _same_sign(m, c2), _same_sign(m, c3), _same_sign(m, c4)
    if ok1 and ok2 and ok3 and ok4:
        return c1 / m, c2 / m, c3 / m, c4 / m
    best = math.inf
    l1 = l2 = l3 = l4 = 0.0
    if not ok1:
        a, b, c = _s2d(s2, s3, s4)
        x = add(add(scale(s2, a), scale(s3, b)), scale(s4, c))
        if dot(x, x) < best:
            best, l1, l2, l3, l4 = dot(x, x), 0.0, a, b, c
    if not ok2:
        a, b, c = _s2d(s1, s3, s4)
        x = add(add(scale(s1, a), scale(s3, b)), scale(s4, c))
        if dot(x, x) < best:
            best, l1, l2, l3, l4 = dot(x, x), a, 0.0, b, c
    if not ok3:
        a, b, c = _s2d(s1, s2, s4)
        x = add(add(scale(s1, a), scale(s2, b)), scale(s4, c))
        if dot(x, x) < best:
            best, l1, l2, l3, l4 = dot(x, x), a, b, 0.0, c
    if not ok4:
        a, b, c = _s2d(s1, s2, s3)
        x = add(add(scale(s1, a), scale(s2, b)), scale(s3, c))
        if dot(x, x) < best:
            best, l1, l2, l3, l4 = dot(x, x), a, b, c, 0.0
    return l1, l2, l3, l4


@helper(forceinline=True)
def _row(X, i):
    return (X[i, 0], X[i, 1], X[i, 2])


@helper(forceinline=True)
def _put(X, i, c, v):
    X[i, c] = v[0]
    X[i, c + 1] = v[1]
    X[i, c + 2] = v[2]


@helper
def gjk(A, B, hulls, sx, cutoff):
    """GJK on the cores of A and B [GJK88; Montanari17]. ``sx`` (4, 12) holds the simplex:
    rows w = a − b (0:3), a (3:6), b (6:9), the ids of a and b (9, 10) and the weight of
    the row (11). Returns (|v|, k, L): the distance from the origin to D = A − B (0 when the
    origin is inside the final simplex of k = 4 points), the number k of simplex rows with
    positive weight, and the largest |w| met (the length scale of the tolerances). GJK stops
    early when a separating plane shows the cores farther apart than ``cutoff`` (v·w/|v|
    is a lower bound of the distance): it returns that bound, k = −1."""
    v = sub(A.p, B.p)
    if dot(v, v) <= 0.0:
        v = (1.0, 0.0, 0.0)
    exact = _polytope(A) and _polytope(B)
    if exact:
        tolerance = GJK_TOLERANCE_POLYTOPE
    elif _rounded(A) and _rounded(B):
        tolerance = GJK_TOLERANCE_ROUNDED
    else:
        tolerance = GJK_TOLERANCE_CURVED
    k = 0
    scale_length = 0.0
    ia = ib = -1  # the support ids, each query's hint for the next (−1: the start of the direction's cell, :func:`~.support.start_vertex`)
    for _ in range(GJK_ITERATIONS):
        a, ia = support(A, hulls, scale(v, -1.0), ia)
        b, ib = support(B, hulls, v, ib)
        w = sub(a, b)
        scale_length = max(scale_length, norm(w))
        vv = dot(v, v)
        vw = dot(v, w)
        if vw > cutoff * math.sqrt(vv):  # the plane v·x = v·w separates D from the origin (any v)
            return vw / math.sqrt(vv), -1, scale_length
        if k > 0:
            if vv - vw <= tolerance * vv:
                break
            if exact:
                repeated = False
                for r in range(k):
                    if sx[r, 9] == ia and sx[r, 10] == ib:
                        repeated = True
                if repeated:
                    break
        _put(sx, k, 0, w)
        _put(sx, k, 3, a)
        _put(sx, k, 6, b)
        sx[k, 9] = ia
        sx[k, 10] = ib
        k += 1
        if k == 1:
            sx[0, 11] = 1.0
        elif k == 2:
            l1, l2 = _s1d(_row(sx, 0), _row(sx, 1))
            sx[0, 11], sx[1, 11] = l1, l2
        elif k == 3:
            l1, l2, l3 = _s2d(_row(sx, 0), _row(sx, 1), _row(sx, 2))
            sx[0, 11], sx[1, 11], sx[2, 11] = l1, l2, l3
        else:
            l1, l2, l3, l4 = _s3d(_row(sx, 0), _row(sx, 1), _row(sx, 2), _row(sx, 3))
            sx[0, 11], sx[1, 11], sx[2, 11], sx[3, 11] = l1, l2, l3, l4
        # keep the rows of positive weight
        kept = 0
        for r in range(k):
            if sx[r, 11] > 0.0:
                if kept != r:
                    for c in range(12):
                        sx[kept, c] = sx[r, c]
                kept += 1
        k = kept
        v = (0.0, 0.0, 0.0)
        for r in range(k):
            v = axpy(v, sx[r, 11], _row(sx, r))
        if k == 4:
            return 0.0, k, scale_length
        if dot(v, v) <= (1e-15 * scale_length) ** 2:
            break
    return norm(v), k, scale_length


@helper(forceinline=True)
def _simplex_witness(sx, k):
    """The witness points Σ λ a, Σ λ b of GJK's simplex."""
    x = (0.0, 0.0, 0.0)
    y = (0.0, 0.0, 0.0)
    for r in range(k):
        x = axpy(x, sx[r, 11], (sx[r, 3], sx[r, 4], sx[r, 5]))
        y = axpy(y, sx[r, 11], (sx[r, 6], sx[r, 7], sx[r, 8]))
    return x, y


# =========================================================================== EPA
@helper(forceinline=True)
def _add_vertex(PV, PI, nv, w, a, b, ia, ib):
    _put(PV, nv, 0, w)
    _put(PV, nv, 3, a)
    _put(PV, nv, 6, b)
    PI[nv, 0] = ia
    PI[nv, 1] = ib
    return nv + 1


@helper
def _set_face(PV, FD, FI, f, i, j, k, centre):
    """Face f = (i, j, k) of the polytope, oriented outwards (away from ``centre``), with
    its unit normal (FD[f, 0:3]) and the distance of its plane from the origin (FD[f, 3]).
    Returns False for a face without a normal (collinear vertices)."""
    p0, p1, p2 = _row(PV, i), _row(PV, j), _row(PV, k)
    nrm = cross(sub(p1, p0), sub(p2, p0))
    length = norm(nrm)
    if not length > TINY:
        return False
    nrm = scale(nrm, 1.0 / length)
    if dot(nrm, sub(p0, centre)) < 0.0:
        j, k = k, j
        nrm = scale(nrm, -1.0)
    FI[f, 0], FI[f, 1], FI[f, 2], FI[f, 3] = i, j, k, 1
    _put(FD, f, 0, nrm)
    FD[f, 3] = dot(nrm, p0)
    return True


@helper(forceinline=True)
def _epa_support(A, B, hulls, PV, PI, nv, u, hint):
    """A new polytope vertex: the support point of D along u (the shapes' searches start
    from the ids of polytope vertex ``hint``)."""
    a, ia = support(A, hulls, u, PI[hint, 0])
    b, ib = support(B, hulls, scale(u, -1.0), PI[hint, 1])
    return _add_vertex(PV, PI, nv, sub(a, b), a, b, ia, ib)


@helper(forceinline=True)
def _off_line(p, a, d):
    """The distance of p from the line through a along the unit d."""
    r = sub(p, a)
    return norm(axpy(r, -dot(r, d), d))


@helper
def _initial_polytope(A, B, hulls, sx, k, PV, PI, FD, FI, tol):
    """EPA's first polytope, a tetrahedron around the origin (or with the origin on a face,
    the touching case), from GJK's last simplex of k points whose affine hull holds the
    origin: a point is extended along the axes to a segment, a segment by support points
    around it to a triangle, a triangle by the support point farthest from its plane on
    either side [vandenBergen01]. Support points within ``tol`` of the hull so far add no
    dimension and are passed over. Returns (vertices, faces), faces 0 when D has no volume
    around the origin."""
    nv = 0
    for r in range(k):
        nv = _add_vertex(PV, PI, nv, _row(sx, r), (sx[r, 3], sx[r, 4], sx[r, 5]), (sx[r, 6], sx[r, 7], sx[r, 8]),
                         int(sx[r, 9]), int(sx[r, 10]))
    if nv == 1:
        for c in range(6):
            u = (1.0 if c == 0 else (-1.0 if c == 1 else 0.0), 1.0 if c == 2 else (-1.0 if c == 3 else 0.0),
                 1.0 if c == 4 else (-1.0 if c == 5 else 0.0))
            nv = _epa_support(A, B, hulls, PV, PI, nv, u, 0)
            if norm(sub(_row(PV, 1), _row(PV, 0))) > tol:
                break
            nv = 1
        if nv == 1:
            return nv, 0
    if nv == 2:
        d = sub(_row(PV, 1), _row(PV, 0))
        d = scale(d, 1.0 / norm(d))
        e1 = perpendicular(d)
        e2 = cross(d, e1)
        for c in range(6):  # directions 60° apart around the segment
            angle = c * (math.pi / 3.0)
            nv = _epa_support(A, B, hulls, PV, PI, nv, add(scale(e1, math.cos(angle)), scale(e2, math.sin(angle))), 0)
            if _off_line(_row(PV, 2), _row(PV, 0), d) > tol:
                break
            nv = 2
        if nv == 2:
            return nv, 0
    if nv == 3:
        nrm = cross(sub(_row(PV, 1), _row(PV, 0)), sub(_row(PV, 2), _row(PV, 0)))
        if norm(nrm) <= TINY:
            return nv, 0
        nrm = scale(nrm, 1.0 / norm(nrm))
        nv = _epa_support(A, B, hulls, PV, PI, nv, nrm, 0)
        up = dot(nrm, sub(_row(PV, 3), _row(PV, 0)))
        nv = _epa_support(A, B, hulls, PV, PI, nv, scale(nrm, -1.0), 0)
        down = -dot(nrm, sub(_row(PV, 4), _row(PV, 0)))
        if max(up, down) <= tol:
            return nv, 0
        if down > up:  # the farther apex, in row 3
            for c in range(9):
                PV[3, c] = PV[4, c]
            PI[3, 0], PI[3, 1] = PI[4, 0], PI[4, 1]
        nv = 4
    centre = scale(add(add(_row(PV, 0), _row(PV, 1)), add(_row(PV, 2), _row(PV, 3))), 0.25)
    ok = True
    for f, (i, j, m) in enumerate(((0, 1, 2), (0, 1, 3), (0, 2, 3), (1, 2, 3))):
        ok = _set_face(PV, FD, FI, f, i, j, m, centre) and ok
    return nv, 4 if ok else 0


@helper
def epa(A, B, hulls, sx, k, fs, js, scale_length):
    """EPA [vandenBergen01] from GJK's simplex (``sx``, k rows) around the origin.
    Returns (depth, n, x, y, i0, i1, i2, l0, l1, l2, ok): the depth (≥ 0), the normal n
    (unit, from A into B), the witness points, the polytope vertices of the final face and
    the barycentric weights of the origin's projection on it; ok False when no polytope
    with a volume could be built."""
    o = 4 * 12
    PV = carve(fs, o, (EPA_VERTICES, 9))
    o += EPA_VERTICES * 9
    FD = carve(fs, o, (EPA_FACES, 4))
    PI = carve(js, 0, (EPA_VERTICES, 2))
    FI = carve(js, EPA_VERTICES * 2, (EPA_FACES, 4))
    E = carve(js, EPA_VERTICES * 2 + EPA_FACES * 4, (EPA_EDGES, 2))
    exact = _polytope(A) and _polytope(B)
    if exact:
        tol = EPA_TOLERANCE_POLYTOPE
    elif _rounded(A) and _rounded(B):
        tol = EPA_TOLERANCE_ROUNDED
    else:
        tol = EPA_TOLERANCE_CURVED
    tol *= max(scale_length, TINY)
    nv, nf = _initial_polytope(A, B, hulls, sx, k, PV, PI, FD, FI, 1e-12 * max(scale_length, TINY))
    z = (0.0, 0.0, 0.0)
    if nf == 0:
        return 0.0, z, z, z, 0, 0, 0, 0.0, 0.0, 0.0, False
    # the live face nearest the origin (the smallest slot of the nearest, as a scan in slot
    # order finds it): scanned once here, then carried from step to step — a step keeps every
    # face that w does not see and adds the horizon's, so the nearest after it is the nearer
    # of the kept faces' (found in the visibility pass, which reads every face anyway) and the
    # new faces', with no second pass over the faces
    next_best = -1
    next_lower = math.inf
    for f in range(nf):
        if FI[f, 3] == 1 and FD[f, 3] < next_lower:
            next_lower, next_best = FD[f, 3], f
    best = 0
    for _ in range(EPA_VERTICES):
        best, lower = next_best, next_lower
        if best < 0:
            break
        if nv >= EPA_VERTICES:
            break
        u = (FD[best, 0], FD[best, 1], FD[best, 2])
        nv_new = _epa_support(A, B, hulls, PV, PI, nv, u, FI[best, 0])
        w = _row(PV, nv)
        if dot(u, w) - lower <= tol:
            break
        if exact:
            repeated = False
            for r in range(nv):
                if PI[r, 0] == PI[nv, 0] and PI[r, 1] == PI[nv, 1]:
                    repeated = True
            if repeated:
                break
        # remove the faces that w sees, collecting their boundary (the horizon)
        ne = 0
        next_best = -1
        next_lower = math.inf
        for f in range(nf):
            if FI[f, 3] != 1:
                continue
            if not dot((FD[f, 0], FD[f, 1], FD[f, 2]), w) - FD[f, 3] > 0.5 * tol:
                if FD[f, 3] < next_lower:  # a kept face
                    next_lower, next_best = FD[f, 3], f
            else:
                FI[f, 3] = 0
                for e in range(3):
                    i, j = FI[f, e], FI[f, (e + 1) % 3]
                    # an edge shared by two removed faces appears once each way: cancel it
                    twin = -1
                    for t in range(ne):
                        if E[t, 0] == j and E[t, 1] == i:
                            twin = t
                            break
                    if twin >= 0:
                        ne -= 1
                        E[twin, 0], E[twin, 1] = E[ne, 0], E[ne, 1]
                    elif ne < EPA_EDGES:
                        E[ne, 0], E[ne, 1] = i, j
                        ne += 1
        if FI[best, 3] == 1 or ne < 3:  # inconsistent visibility (rounding): keep what we have
            break
        nv = nv_new
        # a new face on each horizon edge, in a free slot
        failed = False
        slot = 0
        for t in range(ne):
            while slot < nf and FI[slot, 3] == 1:
                slot += 1
            if slot >= EPA_FACES:
                failed = True
                break
            i, j = E[t, 0], E[t, 1]
            p0, p1 = _row(PV, i), _row(PV, j)
            nrm = cross(sub(p1, p0), sub(w, p0))
            length = norm(nrm)
            if not length > TINY:
                failed = True
                break
            nrm = scale(nrm, 1.0 / length)
            FI[slot, 0], FI[slot, 1], FI[slot, 2], FI[slot, 3] = i, j, nv - 1, 1
            _put(FD, slot, 0, nrm)
            FD[slot, 3] = dot(nrm, p0)
            # (ties to the smaller slot, as the scan in slot order would)
            if FD[slot, 3] < next_lower or (FD[slot, 3] == next_lower and slot < next_best):
                next_lower, next_best = FD[slot, 3], slot
            if slot >= nf:
                nf = slot + 1
            slot += 1
        if failed:
            break
    # the face the loop ended on (the last nearest one: its support point was checked), or
    # on an early exit the nearest live face; of the live faces in its plane (a face flush on
    # a face makes several), the one that holds the origin's projection
    if best < 0 or FI[best, 3] != 1:
        lower = math.inf
        for f in range(nf):
            if FI[f, 3] == 1 and FD[f, 3] < lower:
                lower, best = FD[f, 3], f
        if best < 0:
            return 0.0, z, z, z, 0, 0, 0, 0.0, 0.0, 0.0, False
    lower = FD[best, 3]
    plane = (FD[best, 0], FD[best, 1], FD[best, 2])
    chosen, off = best, math.inf
    l0 = l1 = l2 = 0.0
    for f in range(nf):
        if FI[f, 3] == 1 and abs(FD[f, 3] - lower) <= tol and dot(plane, (FD[f, 0], FD[f, 1], FD[f, 2])) > 1.0 - 1e-12:
            u = (FD[f, 0], FD[f, 1], FD[f, 2])
            p = scale(u, FD[f, 3])
            # the weights of the face's point nearest the origin's projection (in [0, 1]
            # also on a thin face, where plain barycentric coordinates blow up)
            w0, w1, w2 = _s2d(sub(_row(PV, FI[f, 0]), p), sub(_row(PV, FI[f, 1]), p), sub(_row(PV, FI[f, 2]), p))
            q = add(add(scale(_row(PV, FI[f, 0]), w0), scale(_row(PV, FI[f, 1]), w1)), scale(_row(PV, FI[f, 2]), w2))
            if norm(sub(q, p)) < off:
                chosen, off, l0, l1, l2 = f, norm(sub(q, p)), w0, w1, w2
    best = chosen
    lower = FD[best, 3]
    u = (FD[best, 0], FD[best, 1], FD[best, 2])
    i0, i1, i2 = FI[best, 0], FI[best, 1], FI[best, 2]
    x = add(add(scale((PV[i0, 3], PV[i0, 4], PV[i0, 5]), l0), scale((PV[i1, 3], PV[i1, 4], PV[i1, 5]), l1)),
            scale((PV[i2, 3], PV[i2, 4], PV[i2, 5]), l2))
    y = add(add(scale((PV[i0, 6], PV[i0, 7], PV[i0, 8]), l0), scale((PV[i1, 6], PV[i1, 7], PV[i1, 8]), l1)),
            scale((PV[i2, 6], PV[i2, 7], PV[i2, 8]), l2))
    return max(lower, 0.0), u, x, y, i0, i1, i2, l0, l1, l2, True


# =========================================================================== polish
@helper
def _vertex(S, hulls, ident):
    """The world position of vertex ``ident`` of a polytope core (:func:`~.support.local_support`'s ids)."""
    k = S.kind
    if k == SPHERE:
        return S.p
    if k == CAPSULE:
        return add(S.p, scale(column(S.R, 2), 0.5 * S.b if ident == 0 else -0.5 * S.b))
    if k == BOX:
        hx = -0.5 * S.a if ident & 1 else 0.5 * S.a
        hy = -0.5 * S.b if ident & 2 else 0.5 * S.b
        hz = -0.5 * S.c if ident & 4 else 0.5 * S.c
        return add(S.p, rotate(S.R, (hx, hy, hz)))
    v = S.vstart + ident
    V = hulls.vertices
    return add(S.p, rotate(S.R, (V[v, 0], V[v, 1], V[v, 2])))


@helper(forceinline=True)
def _feature_point(S, hulls, ftype, p0, u):
    """The support point and Hessian of a feature reading at the unit direction u: the
    shape's own where the point moves with u (SMOOTH, SIDE), a fixed point of the feature
    otherwise (a flat feature's value u·p0 is the same for each of its points on the
    directions the reading allows)."""
    if ftype == SMOOTH or ftype == SIDE:
        s, _ = support(S, hulls, u, -1)
        return s, support_hessian(S, u)
    return p0, (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)


@helper(forceinline=True)
def _quadratic(H, a, b):
    """aᵀ H b for a row-major 3×3 H."""
    return dot(a, (H[0] * b[0] + H[1] * b[1] + H[2] * b[2], H[3] * b[0] + H[4] * b[1] + H[5] * b[2],
                   H[6] * b[0] + H[7] * b[1] + H[8] * b[2]))


@helper(forceinline=True)
def _constrains(t):
    """The readings that keep n orthogonal to their direction."""
    return t == EDGE or t == SIDE


@helper
def _newton(A, B, hulls, ta, pa, da, tb, pb, db, n):
    """Maximize f(n) = n·(y − x), x the feature reading (ta, pa, da) of A at n, y that of
    B at −n, over unit n (module docstring). An EDGE or SIDE reading keeps n orthogonal to
    its direction d; a FACE fixes n (to d for A, −d for B). Returns the final n."""
    if ta == FACE:
        return da
    if tb == FACE:
        return scale(db, -1.0)
    c1 = da if _constrains(ta) else (0.0, 0.0, 0.0)
    c2 = db if _constrains(tb) else (0.0, 0.0, 0.0)
    if not _constrains(ta):
        c1, c2 = c2, c1
    if norm(c2) > 0.0:  # two directions: n along their common perpendicular
        m = cross(c1, c2)
        if norm(m) > 1e-12:
            m = scale(m, 1.0 / norm(m))
            return m if dot(m, n) >= 0.0 else scale(m, -1.0)
    if norm(c1) > 0.0:
        n = unit_or(axpy(n, -dot(n, c1), c1), perpendicular(c1))
    x, Jx = _feature_point(A, hulls, ta, pa, n)
    y, Jy = _feature_point(B, hulls, tb, pb, scale(n, -1.0))
    f = dot(n, sub(y, x))
    for _ in range(POLISH_ITERATIONS):
        g = sub(y, x)
        tiny = 1e-15 * (norm(x) + norm(y)) + 1e-300
        if norm(c1) > 0.0:  # one tangent direction, t = c × n
            t1 = unit_or(cross(c1, n), perpendicular(n))
            g1 = dot(t1, g)
            if abs(g1) <= tiny:
                break
            m11 = _quadratic(Jx, t1, t1) + _quadratic(Jy, t1, t1) + f
            floor = 1e-3 * (abs(m11) + abs(f)) + 1e-300
            newton = m11 >= floor
            a1 = g1 / max(m11, floor)
            gain = 0.5 * a1 * g1
            step = scale(t1, a1)
        else:
            t1 = perpendicular(n)
            t2 = cross(n, t1)
            g1, g2 = dot(t1, g), dot(t2, g)
            if math.sqrt(g1 * g1 + g2 * g2) <= tiny:
                break
            m11 = _quadratic(Jx, t1, t1) + _quadratic(Jy, t1, t1) + f
            m12 = _quadratic(Jx, t1, t2) + _quadratic(Jy, t1, t2)
            m22 = _quadratic(Jx, t2, t2) + _quadratic(Jy, t2, t2) + f
            # the model's Hessian −M must be negative definite near a maximum: where M has an
            # eigenvalue below a floor (a flat or a saddle direction) it is shifted up to it
            # (Levenberg–Marquardt), the step then a damped ascent along that direction
            floor = 1e-3 * (abs(m11) + abs(m22) + abs(f)) + 1e-300
            low = 0.5 * (m11 + m22) - math.sqrt(0.25 * (m11 - m22) ** 2 + m12 * m12)
            newton = low >= floor
            if not newton:
                m11 += floor - low
                m22 += floor - low
            det = m11 * m22 - m12 * m12
            a1 = (m22 * g1 - m12 * g2) / det
            a2 = (m11 * g2 - m12 * g1) / det
            gain = 0.5 * (a1 * g1 + a2 * g2)
            step = add(scale(t1, a1), scale(t2, a2))
        # a Newton step whose predicted gain is below the rounding of f (that of the points'
        # coordinates) is taken as it is: the test f2 ≥ f cannot see it (the last steps of a
        # quadratic convergence)
        trusted = newton and gain <= 1e-13 * (norm(x) + norm(y)) + 1e-300
        # backtrack until f does not decrease
        moved = False
        for _ in range(30):
            m = unit_or(add(n, step), n)
            if norm(c1) > 0.0:
                m = unit_or(axpy(m, -dot(m, c1), c1), n)
            x2, Jx2 = _feature_point(A, hulls, ta, pa, m)
            y2, Jy2 = _feature_point(B, hulls, tb, pb, scale(m, -1.0))
            f2 = dot(m, sub(y2, x2))
            if f2 >= f or trusted:
                moved = f2 > f or norm(sub(m, n)) > 0.0
                n, x, y, Jx, Jy, f = m, x2, y2, Jx2, Jy2, f2
                break
            step = scale(step, 0.5)
        if not moved:
            break
    return n


@helper(forceinline=True)
def gap(A, B, hulls, n):
    """f(n) = −h_A(n) − h_B(−n) for the cores, with the true support functions: a lower
    bound of the cores' signed distance for every unit n, equal to it at the optimum."""
    a, _ = support(A, hulls, n, -1)
    b, _ = support(B, hulls, scale(n, -1.0), -1)
    return dot(n, sub(b, a))


@helper
def _readings(S, hulls, ids, count, u, R):
    """The feature readings of shape S at the direction u (the outward direction of S at
    the contact) into rows of R (type, p0 (3), d (3)); ``ids`` the distinct vertex ids of S
    in the final simplex (``count`` of them). Returns the number of rows. Curved shapes: an
    ellipsoid's one smooth reading; a cylinder's rim (smooth), its cap (a face) and its
    side (n across the axis, the side line turning with n), the one u is nearest first.
    Polytopes: the face of three ids, each edge between two, each vertex (the feature they
    span first); for a box also its three faces towards u, for a convex mesh the three
    faces whose normals are nearest u (the ids may miss the face that carries the contact)."""
    r = 0
    if S.kind == ELLIPSOID:
        R[r, 0] = SMOOTH
        return r + 1
    if S.kind == CYLINDER:  # the stratum u is nearest first: the cap, the side or the rim
        axis = column(S.R, 2)
        along = dot(axis, u)
        side = 1.0 if along >= 0.0 else -1.0
        if abs(along) > 0.9999:
            order = (FACE, SMOOTH, SIDE)
        elif abs(along) < 1e-4:
            order = (SIDE, SMOOTH, FACE)
        else:
            order = (SMOOTH, FACE, SIDE)
        for row in range(3):
            R[row, 0] = order[row]
            if order[row] == FACE:
                _put(R, row, 1, add(S.p, scale(axis, side * 0.5 * S.b)))
                _put(R, row, 4, scale(axis, side))
            elif order[row] == SIDE:
                _put(R, row, 4, axis)
        return 3
    # polytopes: the feature the ids span first (a face, an edge, a vertex), then its parts
    if count == 3:
        p0 = _vertex(S, hulls, ids[0])
        m = cross(sub(_vertex(S, hulls, ids[1]), p0), sub(_vertex(S, hulls, ids[2]), p0))
        if norm(m) > TINY:
            m = scale(m, 1.0 / norm(m))
            if dot(m, u) < 0.0:
                m = scale(m, -1.0)
            R[r, 0] = FACE
            _put(R, r, 1, p0)
            _put(R, r, 4, m)
            r += 1
    for c in range(count):
        for e in range(c + 1, count):
            p0 = _vertex(S, hulls, ids[c])
            d = sub(_vertex(S, hulls, ids[e]), p0)
            if norm(d) > TINY:
                R[r, 0] = EDGE
                _put(R, r, 1, p0)
                _put(R, r, 4, scale(d, 1.0 / norm(d)))
                r += 1
    for c in range(count):
        R[r, 0] = POINT
        _put(R, r, 1, _vertex(S, hulls, ids[c]))
        r += 1
    if S.kind == CONVEX:  # the three hull faces nearest u, which the ids may miss
        w = unrotate(S.R, u)
        planes = hulls.planes
        d0 = d1 = d2 = -2.0
        f0 = f1 = f2 = -1
        for f in range(S.fstart, S.fstart + S.fcount):
            x = planes[f, 0] * w[0] + planes[f, 1] * w[1] + planes[f, 2] * w[2]
            if x > d2:  # d0 ≥ d1 ≥ d2: most faces fail this one test (the scan reads every face)
                if x > d0:
                    d0, d1, d2, f0, f1, f2 = x, d0, d1, f, f0, f1
                elif x > d1:
                    d1, d2, f1, f2 = x, d1, f, f1
                else:
                    d2, f2 = x, f
        for face in (f0, f1, f2):
            if face >= 0 and r < R.shape[0]:
                m = rotate(S.R, (planes[face, 0], planes[face, 1], planes[face, 2]))
                R[r, 0] = FACE
                _put(R, r, 1, add(S.p, scale(m, planes[face, 3])))
                _put(R, r, 4, m)
                r += 1
    if S.kind == BOX:  # the three faces facing u, which the ids may miss (a contact on an edge)
        for k in range(3):
            axis = column(S.R, k)
            side = 1.0 if dot(axis, u) >= 0.0 else -1.0
            if r < R.shape[0]:
                R[r, 0] = FACE
                _put(R, r, 1, add(S.p, scale(axis, side * 0.5 * (S.a if k == 0 else (S.b if k == 1 else S.c)))))
                _put(R, r, 4, scale(axis, side))
                r += 1
    return r


@helper(forceinline=True)
def _flatness(t):
    """How large a reading's support set is (a face 2, a line 1, a point 0): on a tie of
    the gap, the flatter reading gives the right witness points (a curved shape's support
    point is one point of a flat support set)."""
    if t == FACE:
        return 2
    if t == EDGE or t == SIDE:
        return 1
    return 0


@helper
def _contains(S, hulls, x, tol):
    """x lies in S's core (within ``tol``): inside every face plane of a convex mesh."""
    k = S.kind
    w = unrotate(S.R, sub(x, S.p))
    if k == SPHERE:
        return norm(w) <= tol
    if k == CAPSULE:
        return abs(w[2]) <= 0.5 * S.b + tol and math.sqrt(w[0] * w[0] + w[1] * w[1]) <= tol
    if k == BOX:
        return abs(w[0]) <= 0.5 * S.a + tol and abs(w[1]) <= 0.5 * S.b + tol and abs(w[2]) <= 0.5 * S.c + tol
    if k == CYLINDER:
        return abs(w[2]) <= 0.5 * S.b + tol and math.sqrt(w[0] * w[0] + w[1] * w[1]) <= S.a + tol
    if k == ELLIPSOID:
        return (w[0] / S.a) ** 2 + (w[1] / S.b) ** 2 + (w[2] / S.c) ** 2 <= 1.0 + tol / min(S.a, S.b, S.c)
    planes = hulls.planes
    for f in range(S.fstart, S.fstart + S.fcount):
        if planes[f, 0] * w[0] + planes[f, 1] * w[1] + planes[f, 2] * w[2] > planes[f, 3] + tol:
            return False
    return S.fcount > 0


@helper
def polish(A, B, hulls, n0, ida, na, idb, nb, fs, scale_length):
    """The best normal of the Newton polish (module docstring) over the feature readings
    of A at n0 and of B at −n0 (``ida``/``idb``: their distinct vertex ids in the final
    simplex), starting from n0. Returns (n, f(n), ta, pa, da, tb, pb, db): the normal of
    largest gap and the readings it came from (ta = −1: none improved on n0).

    The readings are tried most likely first (:func:`_readings`), and the search stops at
    the first whose result satisfies the optimality conditions: witness points in the two
    shapes, on their support planes, y − x = f n (a stationary point of f in the basin of
    GJK's or EPA's normal: the answer)."""
    RA = carve(fs, 0, (12, 7))
    RB = carve(fs, 12 * 7, (12, 7))
    ra = _readings(A, hulls, ida, na, n0, RA)
    rb = _readings(B, hulls, idb, nb, scale(n0, -1.0), RB)
    tie = 1e-13 * max(scale_length, TINY)
    exact = 1e-11 * max(scale_length, TINY)
    best_n = n0
    best_f = gap(A, B, hulls, n0)
    best_flat = -1
    bi, bj = -1, -1
    for i in range(ra):
        for j in range(rb):
            ta, tb = int(RA[i, 0]), int(RB[j, 0])
            pa, pb = (RA[i, 1], RA[i, 2], RA[i, 3]), (RB[j, 1], RB[j, 2], RB[j, 3])
            da, db = (RA[i, 4], RA[i, 5], RA[i, 6]), (RB[j, 4], RB[j, 5], RB[j, 6])
            if ta == FACE and tb == FACE and dot(da, db) > -1.0 + 1e-9:
                continue  # two faces carry a contact only when they face each other
            m = _newton(A, B, hulls, ta, pa, da, tb, pb, db, n0)
            if dot(m, n0) <= 0.0:
                continue
            f = gap(A, B, hulls, m)
            flat = _flatness(ta) + _flatness(tb)
            if f > best_f + tie or (f >= best_f - tie and flat > best_flat):
                best_n, best_f, best_flat, bi, bj = m, max(f, best_f) if flat > best_flat else f, flat, i, j
                x, y = _polished_witness(A, B, hulls, m, f, ta, pa, da, tb, pb, db, axpy(B.p, 0.0, m))
                if (norm(sub(sub(y, x), scale(m, f))) <= exact and _contains(A, hulls, x, exact)
                        and _contains(B, hulls, y, exact)
                        and abs(dot(m, x) - dot(m, support(A, hulls, m, -1)[0])) <= exact
                        and abs(dot(m, y) - dot(m, support(B, hulls, scale(m, -1.0), -1)[0])) <= exact):
                    return m, f, ta, pa, da, tb, pb, db
    z = (0.0, 0.0, 0.0)
    if bi < 0:
        return best_n, best_f, -1, z, z, -1, z, z
    return (best_n, gap(A, B, hulls, best_n), int(RA[bi, 0]), (RA[bi, 1], RA[bi, 2], RA[bi, 3]),
            (RA[bi, 4], RA[bi, 5], RA[bi, 6]), int(RB[bj, 0]), (RB[bj, 1], RB[bj, 2], RB[bj, 3]),
            (RB[bj, 4], RB[bj, 5], RB[bj, 6]))


@helper
def _line(S, hulls, t, p0, u):
    """A point of the line a constraining reading supports at u: its fixed point (EDGE), the
    side line's point at u (SIDE)."""
    if t == SIDE:
        return support(S, hulls, u, -1)[0]
    return p0


@helper
def _polished_witness(A, B, hulls, n, d, ta, pa, da, tb, pb, db, x0):
    """Witness points x on A, y on B with y − x = d n from the winning readings: a point
    reading (smooth or vertex) is its own witness and the other side's is found from it;
    two lines meet at their closest points; flat readings otherwise keep GJK's or EPA's
    witness ``x0`` moved onto A's support plane."""
    unique_a = ta == SMOOTH or ta == POINT
    unique_b = tb == SMOOTH or tb == POINT
    m = scale(n, -1.0)
    if unique_a:
        x = support(A, hulls, n, -1)[0] if ta == SMOOTH else pa
        if unique_b:
            return x, (support(B, hulls, m, -1)[0] if tb == SMOOTH else pb)
        return x, axpy(x, d, n)
    if unique_b:
        y = support(B, hulls, m, -1)[0] if tb == SMOOTH else pb
        return axpy(y, -d, n), y
    if _constrains(ta) and _constrains(tb):
        # closest points of the lines qa + s da, qb + t db
        qa, qb = _line(A, hulls, ta, pa, n), _line(B, hulls, tb, pb, m)
        r = sub(qa, qb)
        b = dot(da, db)
        den = 1.0 - b * b
        if den > 1e-12:
            s = (b * dot(db, r) - dot(da, r)) / den
            x = axpy(qa, s, da)
            return x, axpy(x, d, n)
    ha = dot(n, support(A, hulls, n, -1)[0])
    x = axpy(x0, ha - dot(n, x0), n)
    return x, axpy(x, d, n)


@helper(forceinline=True)
def _distinct_ids(ids, count, ident):
    for c in range(count):
        if ids[c] == ident:
            return count
    ids[count] = ident
    return count + 1


@helper
def convex_distance(A, B, hulls, fs, js, cutoff):
    """(d, x, y, n) of two convex shapes by GJK, EPA and the polish (module docstring):
    the signed distance [m], the witness points on A and B (world), and the unit normal
    from A into B; y − x = d n. ``fs``, ``js``: float and integer scratch of
    :data:`CONVEX_FLOATS` and :data:`CONVEX_INTS` entries. Shapes farther apart than
    ``cutoff`` [m] return as soon as GJK sees it: a lower bound of d (> cutoff), no witness
    points (the detection of contacts within a margin needs no more). Degenerate poses (coincident centres, touching
    faces) give finite values: a normal from GJK's or EPA's last face, else the centres'
    direction, else +x."""
    sx = carve(fs, 0, (4, 12))
    ra, rb = core_radius(A), core_radius(B)
    dist, k, scale_length = gjk(A, B, hulls, sx, cutoff + ra + rb)
    if k < 0:  # farther apart than the cutoff: the bound only
        z = (0.0, 0.0, 0.0)
        return dist - ra - rb, z, z, unit_or(sub(B.p, A.p), (1.0, 0.0, 0.0))
    ida = carve(js, EPA_VERTICES * 2 + EPA_FACES * 4 + EPA_EDGES * 2, 4)
    idb = carve(js, EPA_VERTICES * 2 + EPA_FACES * 4 + EPA_EDGES * 2 + 4, 4)
    na = nb = 0
    penetrating = k == 4 or dist <= 1e-12 * max(scale_length, TINY)
    if not penetrating:
        x, y = _simplex_witness(sx, k)
        n = unit_or(sub(y, x), unit_or(sub(B.p, A.p), (1.0, 0.0, 0.0)))
        d = dist
        for r in range(k):
            na = _distinct_ids(ida, na, int(sx[r, 9]))
            nb = _distinct_ids(idb, nb, int(sx[r, 10]))
    else:
        depth, n, x, y, i0, i1, i2, l0, l1, l2, ok = epa(A, B, hulls, sx, k, fs, js, scale_length)
        if ok:
            d = -depth
            PI = carve(js, 0, (EPA_VERTICES, 2))
            for i, l in ((i0, l0), (i1, l1), (i2, l2)):
                if l > 0.0:
                    na = _distinct_ids(ida, na, PI[i, 0])
                    nb = _distinct_ids(idb, nb, PI[i, 1])
        else:  # the origin on D's surface and no volume around it: touching
            x, y = _simplex_witness(sx, k)
            d = 0.0
            n = unit_or(sub(B.p, A.p), (1.0, 0.0, 0.0))
    if curved(A) or curved(B):
        n, f, ta, pa, da, tb, pb, db = polish(A, B, hulls, n, ida, na, idb, nb, carve(fs, 4 * 12, 2 * 12 * 7),
                                              scale_length)
        if ta >= 0:
            d = f
            x, y = _polished_witness(A, B, hulls, n, d, ta, pa, da, tb, pb, db, x)
        else:  # no reading improved on GJK's or EPA's normal: its gap, the witness on A's support plane
            d = f
            x = axpy(x, dot(n, support(A, hulls, n, -1)[0]) - dot(n, x), n)
            y = axpy(x, d, n)
    if ra > 0.0 or rb > 0.0:
        x = axpy(x, ra, n)
        y = axpy(y, -rb, n)
        d = d - ra - rb
    return d, x, y, n
