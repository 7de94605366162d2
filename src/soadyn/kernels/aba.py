"""Forward dynamics (``sd.aba``, ``sd.rollout``) by the partitioned ATBI recursion ([Jain23p, eq. 8]).

Every multi-dof hinge (spherical, free, universal, gimbal, planar) is run as a chain of
1-dof sub-hinges separated by mass-less sub-bodies k′_s, s = 0 … n_k − 1 inboard to
outboard (k′_{n_k−1} is body k itself, whose hinge is [Jain23p]'s k″), under the mass-less
body partitioning assumption ([Jain23p, eq. 5]). The factors of φ(℘(k), k) =
φ(℘(k), k′_0) φ(k′_0, k′_1) ⋯ are chosen as [Jain23p, §2] suggests for hinges made of
articulation sub-hinges, "the identity matrix … for one of the factors": the sub-bodies are
placed at body k's frame, φ(k′_s, k) = I, so that

* sub-hinge s has the 1 × 6 map H(k′_s) = H_C = row s of H(k) (the s-th column of H*(k),
  body frame; a unit row for spherical and free joints and for 1-dof hinges about a
  coordinate axis),
* φ(℘(k), k′_0) = φ(℘(k), k) and the Coriolis term stays on body k (a(k′_s) = 0; eq. 5:
  a(k) = a(k) + φ*(k′, k)a(k′)).

Each step then has a scalar D and inverts no matrix. In SOA symbols, for body k:

tips-to-base gather (:func:`subhinge_gather`, sub-hinges s = n_k − 1 … 0)::

    P(k′_s) = P⁺(k′_{s+1})                 (P(k′_{n_k−1}) = P(k): eq. 8 with φ(k′_s, k′_{s+1}) = I)
    D(k′_s) = H P H*,   G(k′_s) = P H* D⁻¹,   τ̄ = I − G H,   P⁺(k′_s) = τ̄ P
    ε(k′_s) = T_s − H z,   z⁺(k′_s) = z + G ε
    P(℘(k)) += φ(℘(k), k) P⁺(k′_0) φ*(℘(k), k),   z(℘(k)) += φ(℘(k), k) z⁺(k′_0)

base-to-tips scatter (:func:`subhinge_scatter`, s = 0 … n_k − 1)::

    α = φ*(℘(k), k) α(℘(k));   θ̈_s = D⁻¹(ε_s − U_sᵀ α)  (U_s = P(k′_s)H*(k′_s));   α += H*(k′_s) θ̈_s
    α(k) = α + a(k)

[Jain23p, Lemma 3.3] makes P(k) the articulated inertia of the unpartitioned recursion
(eq. 17) and P⁺(k′_0) its P⁺(k) (eq. 18–19, with φ(k′_0, k) = I): the accelerations are
those of the unpartitioned block passes of :mod:`soadyn.kernels.articulated_blocks` (eq. 7).
:func:`aba_kernel` (``sd.aba``, ``sd.rollout``) runs these passes: they
are faster than the block steps (``benchmarks/results/partitioning.md``: 0.6× for spherical
and free hinges, 0.8× for universal and gimbal, equal for 1-dof hinges about a coordinate
axis), since a block step forms U = PH*, a D of n_k × n_k, its Cholesky factor and inverse
and D⁻¹Uᵀ through loops of run-time length, and a scalar step reads a column of P (unit
rows) and divides once. The block passes stay for the innovations factorization, the OSCM
and the direct method, which need U = PH*(k) and D⁻¹(k) per hinge.
:func:`partitioned_inertias_kernel` reports the
sub-body quantities in the frames of the sub-bodies of
:func:`soadyn.core.partition.partition_hinges` (the physical sub-frames of a composite
joint; for spherical and free joints the chart centred at q, where they coincide with
body k), by the congruence P ↦ φ(k′_s, k) P φ*(k′_s, k), G ↦ φ(k′_s, k) G.

Workspace use: as the block passes (``U``, ``eps``, ``P``, ``z``, ``alpha``), with the scalar D⁻¹ of
sub-hinge s of body k at ``Dinv[k, s, s]`` and G*(k′_s) in the row ``Gt`` of its dof.
"""
from __future__ import annotations


from ..core.jit import helper, kernel
from ..core.joints import COMPOSITE, FREE, SPHERICAL, axis_rotation
from ..core.layout import borrow, carve, model_tables, state_count, state_of, workspace_views
from ..core.status import BAD_SHAPE, OK, SINGULAR
from .kinematics import (absent, body_velocities, configuration_status, forces_shape_ok, joint_placements, no_forces,
                         rates_shape_ok, result_status, state_status)
from .primitives import (add_force_to_parent, add_inertia_to_parent, articulated_to_parent, copy_matrix6,
                         init_articulated, parent_acceleration)


# --------------------------------------------------------------------------- one sub-hinge
@helper(forceinline=True)
def subhinge_map(jtype, code, s):
    """(unit, sign): H(k′_s) = sign·e_unit (angular-first) when unit ≥ 0, else the general
    row ``S[v_index + s]``. Unit rows: a 1-dof hinge with an ``axis_code``; sub-hinge s of
    a spherical or free joint (H* = [I; 0] or I)."""
    if code != 0:
        return abs(code) - 1, (1.0 if code > 0 else -1.0)
    if jtype == SPHERICAL or jtype == FREE:
        return s, 1.0
    return -1, 1.0


@helper(forceinline=True)
def subhinge_gather(w, i, s, col, unit, sign, t, update):
    """Sub-hinge s (dof ``col``) of body i, in place on P = w.P[i] and z = w.z[i]:
    D(k′_s) = HPH*, ε = t − Hz, and with ``update`` P ← P⁺ = P − U D⁻¹ Uᵀ, z ← z⁺ = z + Gε
    (U = PH*, G = U D⁻¹ into ``w.U``, ``w.Gt``; D⁻¹ into ``w.Dinv[i, s, s]``, ε into
    ``w.eps``). Returns False when D is not positive."""
    P, z, U = w.P, w.z, w.U
    if unit >= 0:  # H = ±e_unit: read a column of P instead of multiplying
        d = P[i, unit, unit]
        for a in range(6):
            U[col, a] = sign * P[i, a, unit]
        hz = sign * z[i, unit]
    else:
        h = w.S
        d = 0.0
        hz = 0.0
        for a in range(6):
            acc = 0.0
            for b in range(6):
                acc += P[i, a, b] * h[col, b]
            U[col, a] = acc
            d += h[col, a] * acc
            hz += h[col, a] * z[i, a]
    if not d > 0.0:
        return False
    dinv = 1.0 / d
    w.Dinv[i, s, s] = dinv
    e = t - hz
    w.eps[col] = e
    if update:
        for a in range(6):
            ga = U[col, a] * dinv
            w.Gt[col, a] = ga
            z[i, a] += ga * e
            for b in range(a, 6):
                x = P[i, a, b] - ga * U[col, b]
                P[i, a, b] = x
                P[i, b, a] = x
    return True


@helper(forceinline=True)
def subhinge_scatter(w, i, s, col, unit, sign, qdd):
    """Sub-hinge s (dof ``col``) of body i: θ̈_s = D⁻¹(ε − Uᵀα) into ``qdd[col]`` and
    α ← α + H*θ̈_s, with α = ``w.alpha[i]`` (α⁺(k′_s))."""
    A = w.alpha
    acc = w.eps[col]
    for a in range(6):
        acc -= w.U[col, a] * A[i, a]
    x = w.Dinv[i, s, s] * acc
    qdd[col] = x
    if unit >= 0:
        A[i, unit] += sign * x
    else:
        for a in range(6):
            A[i, a] += w.S[col, a] * x


# --------------------------------------------------------------------------- driver loops
@helper(forceinline=True)
def subbody_count(m):
    """Bodies of the partitioned model: one per sub-hinge, one per fixed-joint body."""
    n = 0
    for i in range(m.nb):
        n += max(m.joint_nv[i], 1)
    return n


@helper
def partitioned_articulated_pass(mi, mf, ws, tau, fext, has_v, P_sub, Pplus_sub):
    """The tips-to-base gather of [Jain23p, eq. 8] (module docstring). Needs
    ``joint_placements`` (and ``body_velocities`` when ``has_v``). Leaves z⁺ in ``w.z``
    and, per dof, U, G*, ε and D⁻¹ as :func:`subhinge_gather` says.

    When ``P_sub`` is not empty ((n_sub, 6, 6), n_sub = :func:`subbody_count`) it records
    P and P⁺ of every (sub-)body in the order of the partitioned model's bodies, in body
    k's frame, and the last sub-hinge of root bodies is eliminated too. Returns False
    when some D is not positive."""
    m = model_tables(mi, mf)
    w = workspace_views(ws, m)
    P, z = w.P, w.z
    record = P_sub.shape[0] > 0
    has_tau = tau.shape[0] > 0
    for i in range(m.nb):
        init_articulated(m, w, i, fext, has_v)
    base = subbody_count(m) if record else 0
    for i in range(m.nb - 1, -1, -1):
        vi = m.v_index[i]
        n = m.joint_nv[i]
        p = m.parent[i]
        code = m.axis_code[i]
        jtype = m.joint_type[i]
        if has_v:  # z(k) += P(k) a(k): a(k) stays on body k (a(k′_s) = 0)
            for a in range(6):
                acc = 0.0
                for b in range(6):
                    acc += P[i, a, b] * w.coriolis[i, b]
                z[i, a] += acc
        base -= max(n, 1)
        if record and n == 0:  # no hinge: τ̄ = I
            copy_matrix6(P, i, P_sub, base)
            copy_matrix6(P, i, Pplus_sub, base)
        for s in range(n - 1, -1, -1):
            unit, sign = subhinge_map(jtype, code, s)
            if record:
                copy_matrix6(P, i, P_sub, base + s)
            tau_s = tau[vi + s] if has_tau else 0.0
            if not subhinge_gather(w, i, s, vi + s, unit, sign, tau_s, record or s > 0 or p >= 0):
                return False
            if record:
                copy_matrix6(P, i, Pplus_sub, base + s)
        if p < 0:
            continue
        articulated_to_parent(m, w, i, p)
    return True


@helper
def partitioned_acceleration_pass(mi, mf, ws, gravity, has_v, qdd):
    """The base-to-tips scatter of the partitioned recursion: θ̈ into ``qdd``, α(k) into
    ``w.alpha`` (module docstring)."""
    m = model_tables(mi, mf)
    w = workspace_views(ws, m)
    for i in range(m.nb):
        parent_acceleration(w.R, w.t, i, m.parent[i], m.gravity, gravity, w.alpha)
        vi = m.v_index[i]
        code = m.axis_code[i]
        jtype = m.joint_type[i]
        for s in range(m.joint_nv[i]):
            unit, sign = subhinge_map(jtype, code, s)
            subhinge_scatter(w, i, s, vi + s, unit, sign, qdd)
        if has_v:
            for a in range(6):
                w.alpha[i, a] += w.coriolis[i, a]


@helper(forceinline=True)
def no_record(ws):
    """An empty (0, 6, 6) array: record no sub-body inertias."""
    return carve(ws, 0, (0, 6, 6))


# --------------------------------------------------------------------------- the entry points of sd.aba
@kernel
def aba_kernel(mi, mf, ws, q, v, tau, fext, gravity, qdd):
    """:func:`aba_into` from Python (:func:`soadyn.aba`'s validated call). Compiled code
    (the batches, the rollouts, the derivatives) calls the helper: a kernel is optimized
    and emitted on its own for its Python entry, and a compiled caller would link it in
    and optimize it again (``benchmarks/results/design_notes.md``)."""
    return aba_into(mi, mf, ws, q, v, tau, fext, gravity, qdd)


@helper
def aba_into(mi, mf, ws, q, v, tau, fext, gravity, qdd):
    """q̈ into ``qdd`` (an empty ``v`` means zero velocity); returns a status code.

    The partitioned recursion of this module ([Jain23p, eq. 8]): joint placements, body
    velocities, :func:`partitioned_articulated_pass`, :func:`partitioned_acceleration_pass`
    (the same q̈ as the block passes of :mod:`soadyn.kernels.articulated_blocks`, eq. 7,
    faster on multi-dof hinges and no slower on 1-dof ones:
    ``benchmarks/results/partitioning.md``)."""
    mi, mf, ws, q, v, tau, qdd = borrow(mi), borrow(mf), borrow(ws), borrow(q), borrow(v), borrow(tau), borrow(qdd)
    m = model_tables(mi, mf)
    st = configuration_status(m, q, ws)
    if st != OK:
        return st
    if not rates_shape_ok(m, v) or tau.shape[0] != m.nv or qdd.shape[0] != m.nv or not forces_shape_ok(m, fext):
        return BAD_SHAPE
    st = state_status(q, v, tau, fext)
    if st != OK:
        return st
    joint_placements(mi, mf, ws, q)
    has_v = v.shape[0] > 0
    if has_v:
        body_velocities(mi, mf, ws, v)
    empty = no_record(ws)
    if not partitioned_articulated_pass(mi, mf, ws, tau, fext, has_v, empty, empty):
        return SINGULAR
    partitioned_acceleration_pass(mi, mf, ws, gravity, has_v, qdd)
    return result_status(qdd)


@kernel(nogil=True)
def aba_batch(mi, mf, ws, Q, Vq, T, Fext, gravity, qdd, status, start, stop):
    """:func:`aba_into` on states ``start`` to ``stop − 1`` of a batch, with one workspace (a
    block of a batched call, see :func:`soadyn.core.batch.run_blocks`)."""
    for b in range(start, stop):
        status[b] = aba_into(mi, mf, ws, Q[b], Vq[b], T[b], Fext[b], gravity, qdd[b])


# --------------------------------------------------------------------------- P, P⁺, D, G per sub-body
@helper(forceinline=True)
def _subhinge_pose(m, i, s, q, R, t):
    """(R[0], t[0]) ← X_s ∘ (R[0], t[0]), X_s the motion of composite sub-hinge s of body i
    (rotation about its axis by θ_s, or translation along it by d_s)."""
    ax, ay, az = m.axes[i, s, 0], m.axes[i, s, 1], m.axes[i, s, 2]
    x = q[m.q_index[i] + s]
    if (m.sub_kinds[i] >> s) & 1:
        t[0, 0] += ax * x
        t[0, 1] += ay * x
        t[0, 2] += az * x
        return
    r = axis_rotation(ax, ay, az, x)
    t0, t1, t2 = t[0, 0], t[0, 1], t[0, 2]
    for a in range(3):
        t[0, a] = r[3 * a] * t0 + r[3 * a + 1] * t1 + r[3 * a + 2] * t2
    for b in range(3):
        c0, c1, c2 = R[0, 0, b], R[0, 1, b], R[0, 2, b]
        for a in range(3):
            R[0, a, b] = r[3 * a] * c0 + r[3 * a + 1] * c1 + r[3 * a + 2] * c2


@kernel(nogil=True)
def partitioned_inertias_kernel(mi, mf, ws, q, P_out, Pplus_out, D_out, G_out):
    """P, P⁺, D and G of :func:`_partitioned_inertias_state`, for B = len(q) / nq states
    stored one after another (:func:`~soadyn.core.layout.state_of`: one state for a call, a
    block of a batch's rows). Returns the first status other than OK."""
    B = state_count(q.shape[0], model_tables(mi, mf).nq)
    for b in range(B):
        st = _partitioned_inertias_state(mi, mf, ws, state_of(q, b, B), state_of(P_out, b, B), state_of(Pplus_out, b,
                                         B), state_of(D_out, b, B), state_of(G_out, b, B))
        if st != OK:
            return st
    return OK


@helper(inline="always")
def _partitioned_inertias_state(mi, mf, ws, q, P_out, Pplus_out, D_out, G_out):
    """P, P⁺ (n_sub, 6, 6), D (nv, nv) diagonal and G (6, nv) of every body and sub-body
    (:func:`subbody_count` of them, the order of the partitioned model's bodies), each in
    its own frame (module docstring)."""
    m = model_tables(mi, mf)
    st = configuration_status(m, q, ws)
    if st != OK:
        return st
    if P_out.shape[0] != subbody_count(m):
        return BAD_SHAPE
    joint_placements(mi, mf, ws, q)
    if not partitioned_articulated_pass(mi, mf, ws, absent(ws), no_forces(ws), False, P_out, Pplus_out):
        return SINGULAR
    w = workspace_views(ws, m)
    D_out[:] = 0.0
    for i in range(m.nb):
        for s in range(m.joint_nv[i]):
            col = m.v_index[i] + s
            D_out[col, col] = 1.0 / w.Dinv[i, s, s]
            for a in range(6):
                G_out[a, col] = w.Gt[col, a]
    # composite joints: sub-body s sits in its own sub-frame; pose of body k there
    # accumulated from the tip, X_{s+1} ∘ ⋯ ∘ X_{n−1}
    aux = w.aux  # the scratch, zeroed (as allocations with np.zeros were)
    o = 0
    R = carve(aux, o, (1, 3, 3)); o += 9
    t = carve(aux, o, (1, 3)); o += 3
    tmp = carve(aux, o, (1, 6, 6)); o += 36
    g = carve(aux, o, (2, 6)); o += 12
    for k in range(o):
        aux[k] = 0.0
    base = 0
    for i in range(m.nb):
        n = m.joint_nv[i]
        if m.joint_type[i] == COMPOSITE:
            # element by element, no slice assignment (see soadyn.kernels.primitives)
            for a in range(3):
                for b in range(3):
                    R[0, a, b] = 1.0 if a == b else 0.0
                t[0, a] = 0.0
            for s in range(n - 1, 0, -1):
                _subhinge_pose(m, i, s, q, R, t)
                k = base + s - 1
                for X in (P_out, Pplus_out):
                    tmp[0] = 0.0
                    add_inertia_to_parent(R, t, 0, X[k], tmp, 0, w.scratch)
                    copy_matrix6(tmp, 0, X, k)
                col = m.v_index[i] + s - 1
                for a in range(6):
                    g[0, a] = G_out[a, col]
                    g[1, a] = 0.0
                add_force_to_parent(R, t, 0, g, 0, g, 1)
                for a in range(6):
                    G_out[a, col] = g[1, a]
        base += max(n, 1)
    return OK
