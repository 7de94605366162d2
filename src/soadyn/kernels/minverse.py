"""M⁻¹ by the innovations factorization applied to the identity, column by column, world axes.

    M⁻¹ = [I − HψK]* D⁻¹ [I − HψK]        [Jain24, topic 6]

The factors are the recursions of :mod:`.innovations` (:func:`~.innovations.factor_gather`,
:func:`~.innovations.factor_scatter`) applied to the N columns of the identity. Every
spatial quantity is taken to world axes at the world origin, where φ(℘(k), k) is the
identity: handing an inertia, a force or an acceleration to the parent or to a child is
an addition or a copy, not a 6×6 transformation.

* **articulated inertias** (:func:`world_articulated_factors`), the ATBI recursion
  [Jain23p, eq. 7] in world axes: P(k) starts as the body's rigid inertia moved to the
  world origin, then tips to base H*(k) (``w.Sw``), U(k) = P(k)H*(k) (``w.U``),
  D(k) = H(k)U(k), G*(k) = D⁻¹(k)Uᵀ(k) (``w.Gt``) and P(℘(k)) += P(k) − U(k)G*(k).

* **one column c** of the identity (a unit generalized force at dof c of body b)
  (:func:`inverse_columns`). The gather [I − HψK] then D⁻¹ (:func:`column_gathers`)
  reaches only b and its ancestors, so it is a walk from b to the root with the gathered
  force y (6 scalars)::

      r(k) = D⁻¹(k) (e_k − H(k) y),     y ← y + U(k) r(k)

  The scatter [I − HψK]* (:func:`scatter_step`) then runs over the bodies k ≤ b (those
  whose dofs are ≤ c: the upper triangle; bodies are numbered parent-first), base to
  tips, with the accelerations a(k) ((nb, 6), in ``w.alpha`` or ``w.f``)::

      x(k) ← x(k) − G*(k) a(℘(k)),     a(k) = a(℘(k)) + H*(k) x(k),     a(root parent) = 0

  Column c of the upper triangle is row c of the lower one: both passes read and write
  row c of the result, contiguous in memory, and the lower triangle is mirrored at the
  end. (Pinocchio's ``computeMinverse`` runs the same recursion as an ABA on unit
  forces with 6 × nv force and motion blocks per body; here the per-column state is one
  6-vector and the (nb, 6) accelerations, no O(N²) scratch.)

Both per-column recursions are chains of dependent arithmetic (each step waits on the
previous one's y or a), so their speed is the chain's latency, not the arithmetic: the
columns go in pairs whose gathers walk in step and whose scatters take turns body by body,
and a scatter step on a chain (℘(k) = k − 1, most bodies) takes a(℘(k)) from the previous
step rather than reading it back. A floating base's gather step is one product,
(D⁻¹H)(root) y, with D⁻¹H kept in the root's rows of ``w.Gt``, which the scatter does not
read; a free-floating root's D⁻¹ and D⁻¹H come from P⁻¹ and its world pose
(:func:`free_root_step`). Walks in pairs made the whole kernel faster than one walk after the
other on every robot measured, most on the humanoids (``benchmarks/results/design_notes.md``).
"""
from __future__ import annotations


from ..core.jit import helper, kernel
from ..core.layout import borrow, model_tables, workspace_views
from ..core.joints import FREE
from ..core.status import BAD_SHAPE, OK, SINGULAR
from .kinematics import configuration_status, joint_sincos, world_pose_step
from .primitives import (add_rigid_inertia_to_parent, copy_lower_to_upper, inverse_times_rows, joint_column_to_world,
                         rigid_inertia_matrix, spd_inverse)


@helper(forceinline=True)
def dot6(s, a0, a1, a2, a3, a4, a5):
    """s · a for a 6-vector ``s`` and six scalars, summed pairwise (a shorter chain of
    dependent additions than left to right: the recursions below wait on these sums)."""
    return (s[0] * a0 + s[1] * a1) + (s[2] * a2 + s[3] * a3) + (s[4] * a4 + s[5] * a5)


@helper(forceinline=True)
def add_columns6(cols, start, n, x, a0, a1, a2, a3, a4, a5):
    """(a0, …, a5) + Σ_r cols[start + r] x[start + r] over r < n: a 6-vector plus n
    six-vector columns (rows of ``cols``) times their entries of ``x``, in scalars."""
    for r in range(n):
        c, xr = cols[start + r], x[start + r]
        a0 += c[0] * xr
        a1 += c[1] * xr
        a2 += c[2] * xr
        a3 += c[3] * xr
        a4 += c[4] * xr
        a5 += c[5] * xr
    return a0, a1, a2, a3, a4, a5


@helper
def world_articulated_factors(mi, mf, ws, q):
    """The ATBI recursion [Jain23p, eq. 7] at ``q`` (zero velocity and forces) in world
    axes at the world origin: ``w.Sw`` = H*(k) columns, ``w.U`` = U(k) = P(k)H*(k) columns,
    ``w.Dinv`` = D⁻¹(k), ``w.Gt`` = G*(k) = D⁻¹(k)Uᵀ(k) rows (module docstring; for a
    root of several dofs D⁻¹(k)H(k) instead, :func:`root_gather`); ``w.P`` is left with
    P⁺(k) added into the parents. Returns False when some D(k) is not positive definite."""
    m = model_tables(mi, mf)
    w = workspace_views(ws, m)
    P = w.P
    sc = joint_sincos(w, q)
    for i in range(m.nb):  # world poses, and each body's rigid inertia at the world origin
        world_pose_step(m, w, i, q, sc, w.Rw, w.pw)
        for a in range(10):
            w.crb[i, a] = 0.0
        add_rigid_inertia_to_parent(w.Rw, w.pw, i, m.rigid, w.crb, i)
        rigid_inertia_matrix(w.crb, i, P, i)
    for k in range(m.nb - 1, -1, -1):
        vi, n, p = m.v_index[k], m.joint_nv[k], m.parent[k]
        if n == 1:  # scalars (one column, D(k) a number)
            if not joint_step_one(m, w, k, vi, p):
                return False
            continue
        if p < 0 and m.joint_type[k] == FREE:  # a floating base
            if not free_root_step(m, w, k, vi):
                return False
            continue
        # a literal n for six-dof (free) joints: the compiler unrolls their loops
        if not (joint_step(m, w, k, vi, 6, p) if n == 6 else joint_step(m, w, k, vi, n, p)):
            return False
    return True


@helper(forceinline=True)
def joint_step(m, w, k, vi, n, p):
    """Body k's step of :func:`world_articulated_factors` for an n-dof joint: H*(k),
    U(k) = P(k)H*(k), D(k) = H(k)U(k), D⁻¹(k) and, below a parent, G*(k) = D⁻¹(k)Uᵀ(k)
    and P(℘(k)) += P(k) − U(k)G*(k). Returns False when D(k) is not positive definite."""
    P, U, Sw, Gt, Dinv = w.P, w.U, w.Sw, w.Gt, w.Dinv
    D = w.scratch[0]
    Pk = P[k]
    for col in range(vi, vi + n):
        Sw[col, 0], Sw[col, 1], Sw[col, 2], Sw[col, 3], Sw[col, 4], Sw[col, 5] = \
            joint_column_to_world(m.axis_code[k], k, w.S, col, w.Rw, w.pw)
        for a in range(6):
            acc = 0.0
            for b in range(6):
                acc += Pk[a, b] * Sw[col, b]
            U[col, a] = acc
    for r in range(n):  # D(k) = H(k)U(k)
        for r2 in range(n):
            acc = 0.0
            for a in range(6):
                acc += Sw[vi + r, a] * U[vi + r2, a]
            D[r, r2] = acc
    if n > 0 and not spd_inverse(D, Dinv, k, n):
        return False
    if p < 0:  # a root: no G*(k) or P⁺(k); its rows of Gt take D⁻¹(k)H(k), its gather's map (root_gather)
        inverse_times_rows(Dinv, k, Sw, vi, n, Gt)
        return True
    inverse_times_rows(Dinv, k, U, vi, n, Gt)
    Pp = P[p]  # P(℘(k)) += P⁺(k) = P(k) − U(k)G*(k)
    for a in range(6):
        for b in range(6):
            acc = Pk[a, b]
            for r in range(n):
                acc -= U[vi + r, a] * Gt[vi + r, b]
            Pp[a, b] += acc
    return True


@helper(forceinline=True)
def free_root_step(m, w, k, vi):
    """Body k's step of :func:`world_articulated_factors` for a free-floating root (a FREE
    joint: S = 1 in body axes, so H*(k) = X, the map of body k's motions to world axes at
    the world origin). D = XᵀPX is not formed: D⁻¹H = X⁻¹P⁻¹, the root's map of
    :func:`root_gather` (into ``w.Gt``), and D⁻¹ = X⁻¹(X⁻¹P⁻¹)ᵀ, from P⁻¹ and two products
    with the structured X⁻¹ (:func:`from_world_rows`) instead of U, D and D⁻¹H (faster ATBI
    factors on a floating-base robot, ``benchmarks/results/design_notes.md``). A root has no G* or P⁺. Returns False
    when P, so D, is not positive definite."""
    Sw, Dinv, Gt = w.Sw, w.Dinv, w.Gt
    for col in range(vi, vi + 6):  # H*(k): the columns of X (the scatter's a(k) = H*(k)x(k))
        Sw[col, 0], Sw[col, 1], Sw[col, 2], Sw[col, 3], Sw[col, 4], Sw[col, 5] = \
            joint_column_to_world(0, k, w.S, col, w.Rw, w.pw)
    if not spd_inverse(w.P[k], Dinv, k, 6):  # P⁻¹, in D⁻¹'s place until the end
        return False
    from_world_rows(w.Rw, w.pw, k, Dinv[k], 0, False, Gt, vi)  # D⁻¹H = X⁻¹P⁻¹
    from_world_rows(w.Rw, w.pw, k, Gt, vi, True, Dinv[k], 0)  # D⁻¹ = X⁻¹(D⁻¹H)ᵀ
    return True


@helper(forceinline=True)
def from_world_rows(Rw, pw, i, M, o, transposed, out, oo):
    """out[oo:oo + 6] = X⁻¹ A for the 6×6 A = M[o:o + 6] (its transpose with
    ``transposed``), X the map of body i's motions [ω; v] (body axes and origin) to world
    axes at the world origin, X⁻¹ = [[Rᵀ, 0], [−Rᵀ[p]×, Rᵀ]] (Rw, pw: the body's world pose):
    column by column, Rᵀa_top and Rᵀ(a_bottom − p × a_top). ``out`` and ``M`` must not
    overlap."""
    p0, p1, p2 = pw[i, 0], pw[i, 1], pw[i, 2]
    for j in range(6):
        if transposed:
            a0, a1, a2, a3, a4, a5 = M[o + j, 0], M[o + j, 1], M[o + j, 2], M[o + j, 3], M[o + j, 4], M[o + j, 5]
        else:
            a0, a1, a2, a3, a4, a5 = M[o, j], M[o + 1, j], M[o + 2, j], M[o + 3, j], M[o + 4, j], M[o + 5, j]
        b0 = a3 - (p1 * a2 - p2 * a1)
        b1 = a4 - (p2 * a0 - p0 * a2)
        b2 = a5 - (p0 * a1 - p1 * a0)
        for r in range(3):
            out[oo + r, j] = Rw[i, 0, r] * a0 + Rw[i, 1, r] * a1 + Rw[i, 2, r] * a2
            out[oo + 3 + r, j] = Rw[i, 0, r] * b0 + Rw[i, 1, r] * b1 + Rw[i, 2, r] * b2


@helper(forceinline=True)
def joint_step_one(m, w, k, vi, p):
    """Body k's step of :func:`world_articulated_factors` for a one-dof joint, in scalars:
    H*(k), U(k) = P(k)H*(k), D(k) = H(k)U(k), G*(k) = Uᵀ(k)/D(k) and
    P(℘(k)) += P(k) − U(k)G*(k). Returns False when D(k) ≤ 0."""
    Pk = w.P[k]
    s0, s1, s2, s3, s4, s5 = joint_column_to_world(m.axis_code[k], k, w.S, vi, w.Rw, w.pw)
    u0 = dot6(Pk[0], s0, s1, s2, s3, s4, s5)
    u1 = dot6(Pk[1], s0, s1, s2, s3, s4, s5)
    u2 = dot6(Pk[2], s0, s1, s2, s3, s4, s5)
    u3 = dot6(Pk[3], s0, s1, s2, s3, s4, s5)
    u4 = dot6(Pk[4], s0, s1, s2, s3, s4, s5)
    u5 = dot6(Pk[5], s0, s1, s2, s3, s4, s5)
    d = (s0 * u0 + s1 * u1) + (s2 * u2 + s3 * u3) + (s4 * u4 + s5 * u5)
    if not d > 0.0:
        return False
    dinv = 1.0 / d
    g0, g1, g2, g3, g4, g5 = dinv * u0, dinv * u1, dinv * u2, dinv * u3, dinv * u4, dinv * u5
    w.Dinv[k, 0, 0] = dinv
    w.Sw[vi, 0], w.Sw[vi, 1], w.Sw[vi, 2], w.Sw[vi, 3], w.Sw[vi, 4], w.Sw[vi, 5] = s0, s1, s2, s3, s4, s5
    w.U[vi, 0], w.U[vi, 1], w.U[vi, 2], w.U[vi, 3], w.U[vi, 4], w.U[vi, 5] = u0, u1, u2, u3, u4, u5
    w.Gt[vi, 0], w.Gt[vi, 1], w.Gt[vi, 2], w.Gt[vi, 3], w.Gt[vi, 4], w.Gt[vi, 5] = g0, g1, g2, g3, g4, g5
    if p >= 0:
        Pp = w.P[p]
        for a in range(6):
            ua = w.U[vi, a]
            Pp[a, 0] += Pk[a, 0] - ua * g0
            Pp[a, 1] += Pk[a, 1] - ua * g1
            Pp[a, 2] += Pk[a, 2] - ua * g2
            Pp[a, 3] += Pk[a, 3] - ua * g3
            Pp[a, 4] += Pk[a, 4] - ua * g4
            Pp[a, 5] += Pk[a, 5] - ua * g5
    return True


@helper(forceinline=True)
def block_gather(Sw, Dinv, h, k, vi, n, c, row, y0, y1, y2, y3, y4, y5):
    """r(k) = D⁻¹(k) (e_k − H(k) y) into ``row`` for an n-dof body k (``h``: n scratch)."""
    for r in range(n):
        h[r] = (1.0 if vi + r == c else 0.0) - dot6(Sw[vi + r], y0, y1, y2, y3, y4, y5)
    for r in range(n):
        x = 0.0
        for r2 in range(n):
            x += Dinv[k, r, r2] * h[r2]
        row[vi + r] = x


@helper(forceinline=True)
def root_gather(Gt, Dinv, k, vi, n, c, row, y0, y1, y2, y3, y4, y5):
    """r(k) = D⁻¹(k) e_k − (D⁻¹(k)H(k)) y into ``row`` for a root k of n > 1 dofs, whose rows
    of ``Gt`` hold D⁻¹(k)H(k) (:func:`joint_step`): one product with y instead of two
    (:func:`block_gather`), on every column's walk (a floating base)."""
    j = c - vi  # the root's own column, if c is one of its dofs
    for r in range(n):
        e = Dinv[k, r, j] if 0 <= j < n else 0.0
        row[vi + r] = e - dot6(Gt[vi + r], y0, y1, y2, y3, y4, y5)


@helper(forceinline=True)
def one_dof_gather(Sw, U, Dinv, k, v, c, p, row, y0, y1, y2, y3, y4, y5):
    """One-dof body k's step of column c's walk (its dof v, parent p): the scalar
    r(k) = D⁻¹(k) (e_k − H(k) y) into ``row[v]``; returns y + U(k) r(k) (y itself at a root,
    which passes nothing on)."""
    r = Dinv[k, 0, 0] * ((1.0 if v == c else 0.0) - dot6(Sw[v], y0, y1, y2, y3, y4, y5))
    row[v] = r
    if p < 0:
        return y0, y1, y2, y3, y4, y5
    u = U[v]
    return y0 + u[0] * r, y1 + u[1] * r, y2 + u[2] * r, y3 + u[3] * r, y4 + u[4] * r, y5 + u[5] * r


@helper(forceinline=True)
def column_walk(m, w, k, c, row, y0, y1, y2, y3, y4, y5):
    """The walk of column c (:func:`column_gathers`) from body k to the root, with the
    gathered force y so far: r(k) = D⁻¹(k) (e_k − H(k) y) into ``row``,
    y ← y + U(k) r(k), body after body."""
    Sw, U, Dinv = w.Sw, w.U, w.Dinv
    h = w.scratch[1, 0]
    while k >= 0:
        vi, n, p = m.v_index[k], m.joint_nv[k], m.parent[k]
        if n == 1:
            y0, y1, y2, y3, y4, y5 = one_dof_gather(Sw, U, Dinv, k, vi, c, p, row, y0, y1, y2, y3, y4, y5)
            k = p
            continue
        if p < 0:  # a floating base
            if n == 6:  # a literal n: unrolled loops
                root_gather(w.Gt, Dinv, k, vi, 6, c, row, y0, y1, y2, y3, y4, y5)
            else:
                root_gather(w.Gt, Dinv, k, vi, n, c, row, y0, y1, y2, y3, y4, y5)
        elif n == 6:
            block_gather(Sw, Dinv, h, k, vi, 6, c, row, y0, y1, y2, y3, y4, y5)
        else:
            block_gather(Sw, Dinv, h, k, vi, n, c, row, y0, y1, y2, y3, y4, y5)
        if p < 0:
            break  # the root passes nothing on
        y0, y1, y2, y3, y4, y5 = add_columns6(U, vi, n, row, y0, y1, y2, y3, y4, y5)
        k = p


@helper(forceinline=True)
def column_gathers(m, w, b1, c1, row1, b2, c2, row2):
    """D⁻¹[I − HψK] on columns c1 and c2 of the identity (dofs of bodies b1 and b2; c2 < 0:
    c1 alone) into ``row1`` and ``row2``: the walks from b1 and from b2 to the root
    (module docstring), taken in step while both are on one-dof bodies. Each walk is a
    chain of dependent arithmetic (r(k) needs y, y needs r(k)): two in step overlap in
    the processor (module docstring). The entries of a
    row up to its body's last dof that its walk does not reach (bodies off the path) are
    zeroed. Needs :func:`world_articulated_factors`."""
    Sw, U, Dinv = w.Sw, w.U, w.Dinv
    for j in range(m.v_index[b1] + m.joint_nv[b1]):
        row1[j] = 0.0
    y0 = y1 = y2 = y3 = y4 = y5 = 0.0
    z0 = z1 = z2 = z3 = z4 = z5 = 0.0
    k1, k2 = b1, -1
    if c2 >= 0:
        for j in range(m.v_index[b2] + m.joint_nv[b2]):
            row2[j] = 0.0
        k2 = b2
    while k1 >= 0 and k2 >= 0 and m.joint_nv[k1] == 1 and m.joint_nv[k2] == 1:
        p1, p2 = m.parent[k1], m.parent[k2]
        y0, y1, y2, y3, y4, y5 = one_dof_gather(Sw, U, Dinv, k1, m.v_index[k1], c1, p1, row1, y0, y1, y2, y3, y4, y5)
        z0, z1, z2, z3, z4, z5 = one_dof_gather(Sw, U, Dinv, k2, m.v_index[k2], c2, p2, row2, z0, z1, z2, z3, z4, z5)
        k1, k2 = p1, p2
    column_walk(m, w, k1, c1, row1, y0, y1, y2, y3, y4, y5)
    column_walk(m, w, k2, c2, row2, z0, z1, z2, z3, z4, z5)


@helper(forceinline=True)
def scatter_step(m, w, k, row, A, a0, a1, a2, a3, a4, a5):
    """Body k's step of [I − HψK]* on one column (module docstring): its entries of ``row``
    x(k) −= G*(k)a(℘(k)), then a(k) = a(℘(k)) + H*(k)x(k) into ``A`` (nb, 6). (a0, …, a5)
    is a(k − 1), the previous step's result: on a chain (℘(k) = k − 1, and for the root
    ℘(k) = −1 with a = 0 given) a(℘(k)) is taken from it rather than read back from ``A``.
    Returns a(k)."""
    Sw, Gt = w.Sw, w.Gt
    vi, n, p = m.v_index[k], m.joint_nv[k], m.parent[k]
    if p != k - 1:
        if p >= 0:
            a0, a1, a2, a3, a4, a5 = A[p, 0], A[p, 1], A[p, 2], A[p, 3], A[p, 4], A[p, 5]
        else:  # a(root parent) = 0
            a0 = a1 = a2 = a3 = a4 = a5 = 0.0
    if n == 1:  # the common case in scalars
        x = row[vi] - dot6(Gt[vi], a0, a1, a2, a3, a4, a5) if p >= 0 else row[vi]
        row[vi] = x
        s = Sw[vi]
        a0, a1, a2, a3, a4, a5 = a0 + s[0] * x, a1 + s[1] * x, a2 + s[2] * x, a3 + s[3] * x, a4 + s[4] * x, \
            a5 + s[5] * x
    else:
        if p >= 0:
            for r in range(n):
                row[vi + r] -= dot6(Gt[vi + r], a0, a1, a2, a3, a4, a5)
        a0, a1, a2, a3, a4, a5 = add_columns6(Sw, vi, n, row, a0, a1, a2, a3, a4, a5)
    A[k, 0], A[k, 1], A[k, 2], A[k, 3], A[k, 4], A[k, 5] = a0, a1, a2, a3, a4, a5
    return a0, a1, a2, a3, a4, a5


@helper
def inverse_columns(mi, mf, ws, Minv):
    """Every column of M⁻¹'s upper triangle into its row of ``Minv`` (column c: the
    gather from its body b, then the scatter over the bodies 0..b), then mirrored.

    The columns go in pairs: their gathers walk in step (:func:`column_gathers`) and
    their scatters, independent chains of dependent arithmetic, take turns body by body
    (their accelerations in ``w.alpha`` and ``w.f``), so the processor overlaps them."""
    m = model_tables(mi, mf)
    w = workspace_views(ws, m)
    b1 = c1 = -1  # the column waiting for a partner
    for b in range(m.nb):
        for c in range(m.v_index[b], m.v_index[b] + m.joint_nv[b]):
            if c1 < 0:
                b1, c1 = b, c
                continue
            row1, row2 = Minv[c1], Minv[c]
            column_gathers(m, w, b1, c1, row1, b, c, row2)
            a0 = a1 = a2 = a3 = a4 = a5 = 0.0
            e0 = e1 = e2 = e3 = e4 = e5 = 0.0
            for k in range(b1 + 1):
                a0, a1, a2, a3, a4, a5 = scatter_step(m, w, k, row1, w.alpha, a0, a1, a2, a3, a4, a5)
                e0, e1, e2, e3, e4, e5 = scatter_step(m, w, k, row2, w.f, e0, e1, e2, e3, e4, e5)
            for k in range(b1 + 1, b + 1):
                e0, e1, e2, e3, e4, e5 = scatter_step(m, w, k, row2, w.f, e0, e1, e2, e3, e4, e5)
            c1 = -1
    if c1 >= 0:
        row1 = Minv[c1]
        column_gathers(m, w, b1, c1, row1, -1, -1, row1)
        a0 = a1 = a2 = a3 = a4 = a5 = 0.0
        for k in range(b1 + 1):
            a0, a1, a2, a3, a4, a5 = scatter_step(m, w, k, row1, w.alpha, a0, a1, a2, a3, a4, a5)
    copy_lower_to_upper(Minv)


@kernel
def mass_matrix_inverse_kernel(mi, mf, ws, q, Minv):
    """M⁻¹(q) into ``Minv`` (nv, nv), both triangles, by the innovations factors applied
    to the identity (module docstring), O(N²); returns a status (SINGULAR when some D(k)
    is not positive definite)."""
    # borrowed views: the passes below then pass them on without reference counting
    mi, mf, ws, q = borrow(mi), borrow(mf), borrow(ws), borrow(q)
    m = model_tables(mi, mf)
    st = configuration_status(m, q, ws)
    if st != OK:
        return st
    if Minv.shape[0] != m.nv or Minv.shape[1] != m.nv:
        return BAD_SHAPE
    if not world_articulated_factors(mi, mf, ws, q):
        return SINGULAR
    inverse_columns(mi, mf, ws, Minv)
    return OK


@kernel(nogil=True)
def mass_matrix_inverse_batch(mi, mf, ws, Q, Minv, status, start, stop):
    """:func:`mass_matrix_inverse_kernel` on states ``start`` to ``stop − 1`` of a batch
    (a block of a batched call, see :func:`soadyn.core.batch.run_blocks`)."""
    for b in range(start, stop):
        status[b] = mass_matrix_inverse_kernel(mi, mf, ws, Q[b], Minv[b])
