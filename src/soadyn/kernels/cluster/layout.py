"""The flat array form of a cluster tree and of the cluster kernels' workspace, read
through named views.

Like a model (:mod:`soadyn.core.layout`), a cluster tree compiles to one integer array
``ci`` and one float array ``cf`` (the constant explicit maps G of linear clusters and
optional reflected inertias H̃), and each call gets a flat float workspace ``cws``.
:func:`cluster_tables` and :func:`cluster_workspace` carve them into named views; the
per-cluster quantities of [Chignoli23, §V] are views of ``cws`` at per-cluster offsets,
taken with the accessors below (``S = motion_subspace(c, w, k)``, then ``S[j, a, :]``:
body a's motion for column j of the cluster motion subspace S_k).

Per cluster k (``c.<field>[k]``): ``parent`` cluster λ(k) (−1: the world);
``body_start``, ``n_bodies`` (its bodies are ``c.bodies[body_start:body_start +
n_bodies]``, ascending); ``yq_start``, ``n_yq``, ``yv_start``, ``n_y`` (its independent
coordinates in y and ẏ); ``row_start``, ``n_spanning`` (its spanning coordinates:
``c.rows_v`` and ``c.rows_q`` hold their model v and q indices, body order); ``kind``
(``RIGID``, ``LINEAR``: constant G and g = 0, ``NONLINEAR``: G(q), g(q, q̇) given per
call); the offsets of its quantities; ``coupled`` (1 when a child cluster hangs from
several of its bodies, so that its inertia blocks couple different bodies; otherwise
I^A_k stays block diagonal); ``rotor_offset`` (−1, or where a link–rotor pair's
constants start in ``cf``: :func:`rotor_constants`) and ``rotor_local`` (the rotor's
position in the pair).

Per body i: ``cluster_of``, ``local_index`` (position in its cluster), ``output_body``
Λ(i) ([Chignoli23, §IV-B]: the nearest supporting body outside the cluster, −1: the
world) and ``output_local`` (Λ(i)'s position in its own cluster), ``parent_local``
(the parent's position when the parent is in the same cluster, else −1), and
``row_in_cluster`` (the first row of its joint velocities in the cluster's spanning
vector). ``y_positions`` (nyq,), ``yv_positions`` (nyv,): the model q index of each
entry of y and the model v index of each entry of ẏ.
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np

from ...core.jit import helper, kernel
from ...core.layout import carve, pack_tables, split_model_tables, split_tables, workspace_size

#: cluster kinds
RIGID, LINEAR, NONLINEAR = 0, 1, 2

CLUSTER_FIELDS = ("parent", "body_start", "n_bodies", "yq_start", "n_yq", "yv_start", "n_y", "row_start",
                  "n_spanning", "kind", "G_offset", "g_offset", "armature_offset", "S_offset", "c_offset",
                  "pA_offset", "U_offset", "IA_offset", "Dinv_offset", "u_offset", "y_offset", "t_offset",
                  "coupled", "rotor_offset", "rotor_local")
BODY_FIELDS = ("cluster_of", "local_index", "output_body", "output_local", "parent_local", "row_in_cluster")
#: header of ``ci``: number of clusters, of bodies, of spanning rows, the workspace size,
#: the rows of each of the two force scratch areas, the sizes of y and ẏ, where the
#: implicit clusters' tables start in ``ci`` and ``cf`` (:mod:`.implicit`), nv and nq
HEADER = ("n", "nb", "n_rows", "workspace_size", "max_rows", "nyq", "nyv", "implicit_int", "implicit_float", "nv",
          "nq")

ClusterTables = namedtuple("ClusterTables", HEADER + CLUSTER_FIELDS + BODY_FIELDS + ("rows_v", "rows_q", "bodies",
                                                                                     "y_positions", "yv_positions"))


def cluster_int_size(ncl, nb, nrows, nyq, nyv):
    return len(HEADER) + len(CLUSTER_FIELDS) * ncl + len(BODY_FIELDS) * nb + 2 * nrows + nb + nyq + nyv


# compiled with reference counting (_nrt=True, soadyn.core.jit) for its calls from Python,
# which box the views it returns; in the kernels its views are borrowed (nothing to count)
@kernel(forceinline=True, _nrt=True)
def cluster_tables(ci):
    """Named views (:class:`ClusterTables`) of a packed cluster tree."""
    n, nb, n_rows, nyq, nyv = ci[0], ci[1], ci[2], ci[5], ci[6]
    o = 11
    parent = carve(ci, o, n); o += n
    body_start = carve(ci, o, n); o += n
    n_bodies = carve(ci, o, n); o += n
    yq_start = carve(ci, o, n); o += n
    n_yq = carve(ci, o, n); o += n
    yv_start = carve(ci, o, n); o += n
    n_y = carve(ci, o, n); o += n
    row_start = carve(ci, o, n); o += n
    n_spanning = carve(ci, o, n); o += n
    kind = carve(ci, o, n); o += n
    G_offset = carve(ci, o, n); o += n
    g_offset = carve(ci, o, n); o += n
    armature_offset = carve(ci, o, n); o += n
    S_offset = carve(ci, o, n); o += n
    c_offset = carve(ci, o, n); o += n
    pA_offset = carve(ci, o, n); o += n
    U_offset = carve(ci, o, n); o += n
    IA_offset = carve(ci, o, n); o += n
    Dinv_offset = carve(ci, o, n); o += n
    u_offset = carve(ci, o, n); o += n
    y_offset = carve(ci, o, n); o += n
    t_offset = carve(ci, o, n); o += n
    coupled = carve(ci, o, n); o += n
    rotor_offset = carve(ci, o, n); o += n
    rotor_local = carve(ci, o, n); o += n
    cluster_of = carve(ci, o, nb); o += nb
    local_index = carve(ci, o, nb); o += nb
    output_body = carve(ci, o, nb); o += nb
    output_local = carve(ci, o, nb); o += nb
    parent_local = carve(ci, o, nb); o += nb
    row_in_cluster = carve(ci, o, nb); o += nb
    rows_v = carve(ci, o, n_rows); o += n_rows
    rows_q = carve(ci, o, n_rows); o += n_rows
    bodies = carve(ci, o, nb); o += nb
    y_positions = carve(ci, o, nyq); o += nyq
    yv_positions = carve(ci, o, nyv)
    return ClusterTables(n, nb, n_rows, ci[3], ci[4], ci[5], ci[6], ci[7], ci[8], ci[9], ci[10], parent, body_start, n_bodies, yq_start, n_yq, yv_start,
                         n_y, row_start, n_spanning, kind, G_offset, g_offset, armature_offset, S_offset, c_offset,
                         pA_offset, U_offset, IA_offset, Dinv_offset, u_offset, y_offset, t_offset, coupled,
                         rotor_offset, rotor_local,
                         cluster_of, local_index, output_body, output_local, parent_local, row_in_cluster, rows_v,
                         rows_q, bodies, y_positions, yv_positions)


#: Named views of the cluster workspace: the spanning state ``q``, ``qd``, ``qdd``; the
#: independent ``y`` (nyq,), ``yd``, ``tau_ind`` and ``ydd`` (nyv,) of the embedding
#: method (:mod:`.embedding`: taken from the spanning state, not allocated per call; at
#: the end of the workspace, :func:`independent_vectors_size`); the
#: pose (``Ro``, ``to``)[i] of body i in its output body Λ(i) (the nonzero blocks of the
#: cluster transforms ^kX_λ(k), [Chignoli23, eq. 17]); scratch ``tmp`` (4, 6, 6) and
#: ``vec`` (8, 6); the offsets of two scratch areas of ``max_rows`` force rows
#: (:func:`force_columns`); and ``flat``, the whole buffer, of which the per-cluster
#: quantities are views (accessors below).
ClusterWorkspace = namedtuple("ClusterWorkspace", ["q", "qd", "qdd", "y", "yd", "tau_ind", "ydd", "Ro", "to", "tmp",
                                                   "vec", "scratch_offsets", "flat"])


def fixed_workspace_size(nq, nv, nb, max_rows):
    """Length of the part of the workspace before the per-cluster quantities."""
    return nq + 2 * nv + nb * 12 + 4 * 36 + 8 * 6 + 2 * max_rows * 6


@helper(forceinline=True)
def independent_vectors_size(nq, nv):
    """Length of the independent vectors y, ẏ, τ_ind, ÿ at the end of the workspace
    (sized by nq and nv, which bound nyq and nyv). At the end, so that the other parts
    keep their places: inserted after ``qdd`` they made Tello's C-ABA and C-RNEA calls
    markedly slower with bit-for-bit the same results — the arrays' relative placement in
    memory, not the arithmetic (``benchmarks/results/design_notes.md``)."""
    return nq + 3 * nv


@helper(forceinline=True)
def cluster_workspace(cws, c, nq, nv):
    """Named views (:class:`ClusterWorkspace`) of the flat cluster workspace."""
    nb, rows = c.nb, c.max_rows
    o = 0
    q = carve(cws, o, nq); o += nq
    qd = carve(cws, o, nv); o += nv
    qdd = carve(cws, o, nv); o += nv
    e = c.workspace_size - independent_vectors_size(nq, nv)
    y = carve(cws, e, c.nyq); e += nq
    yd = carve(cws, e, c.nyv); e += nv
    tau_ind = carve(cws, e, c.nyv); e += nv
    ydd = carve(cws, e, c.nyv)
    Ro = carve(cws, o, (nb, 3, 3)); o += nb * 9
    to = carve(cws, o, (nb, 3)); o += nb * 3
    tmp = carve(cws, o, (4, 6, 6)); o += 144
    vec = carve(cws, o, (8, 6)); o += 48
    # ``flat`` borrowed too (no reference count): the per-cluster accessors take ``w``, and
    # an array argument in it costs two atomic reference-count updates per accessor call
    return ClusterWorkspace(q, qd, qdd, y, yd, tau_ind, ydd, Ro, to, tmp, vec, (o, o + 6 * rows),
                            carve(cws, 0, cws.shape[0]))


# --------------------------------------------------------------------------- per-cluster views
@helper(forceinline=True)
def cluster_bodies(c, k):
    """The bodies of cluster k (n_bodies,), ascending."""
    return carve(c.bodies, c.body_start[k], c.n_bodies[k])


@helper(forceinline=True)
def motion_subspace(c, w, k):
    """S_k (n_y, n_bodies, 6) [Chignoli23, eq. 24]: S[j, a] is body a's motion for ẏ_k = e_j."""
    return carve(w.flat, c.S_offset[k], (c.n_y[k], c.n_bodies[k], 6))


@helper(forceinline=True)
def velocity_product(c, w, k):
    """c_k = Ṡ_k ẏ_k (n_bodies, 6) [Chignoli23, eq. 25–26]."""
    return carve(w.flat, c.c_offset[k], (c.n_bodies[k], 6))


@helper(forceinline=True)
def bias_force(c, w, k):
    """p^A_k (n_bodies, 6), the articulated-cluster bias force [Chignoli23, eq. 34, 56]."""
    return carve(w.flat, c.pA_offset[k], (c.n_bodies[k], 6))


@helper(forceinline=True)
def inertia_subspace(c, w, k):
    """U_k = I^A_k S_k (n_y, n_bodies, 6) [Chignoli23, Alg. 1]."""
    return carve(w.flat, c.U_offset[k], (c.n_y[k], c.n_bodies[k], 6))


@helper(forceinline=True)
def articulated_inertia(c, w, k):
    """I^A_k (n_bodies, n_bodies, 6, 6), the articulated-cluster inertia as body blocks."""
    n = c.n_bodies[k]
    return carve(w.flat, c.IA_offset[k], (n, n, 6, 6))


@helper(forceinline=True)
def inverse_joint_inertia(c, w, k):
    """D_k⁻¹ (n_y, n_y), D_k = S_kᵀ U_k (+ H̃_k)."""
    return carve(w.flat, c.Dinv_offset[k], (c.n_y[k], c.n_y[k]))


@helper(forceinline=True)
def innovation(c, w, k):
    """u_k = τ_k − S_kᵀ p^A_k (n_y,) [Chignoli23, Alg. 1]."""
    return carve(w.flat, c.u_offset[k], c.n_y[k])


@helper(forceinline=True)
def cluster_scratch(c, w, k):
    """Two (n_y,) scratch vectors of cluster k."""
    return carve(w.flat, c.y_offset[k], c.n_y[k]), carve(w.flat, c.t_offset[k], c.n_y[k])


@helper(forceinline=True)
def explicit_map(c, cf, w, k):
    """(G_k (n_spanning, n_y), g_k (n_spanning,)) of a constrained cluster, q̇_k = G_k ẏ_k,
    q̈_k = G_k ÿ_k + g_k [Chignoli23, eq. 3]: constants in ``cf`` for a rigid or linear
    cluster, this call's values in the workspace for a nonlinear one."""
    if c.kind[k] == NONLINEAR:
        nc, ny = c.n_spanning[k], c.n_y[k]
        return carve(w.flat, c.G_offset[k], (nc, ny)), carve(w.flat, c.g_offset[k], nc)
    return constant_map(c, cf, k)


@helper(forceinline=True)
def constant_map(c, cf, k):
    """(G_k, g_k = 0) of a rigid or linear cluster, constants in ``cf`` (see
    :func:`explicit_map`). Loops that run over many clusters call this in a branch of
    their own: a view chosen between two buffers (``explicit_map``) slows the loop that
    reads it (``benchmarks/results/design_notes.md``)."""
    nc, ny = c.n_spanning[k], c.n_y[k]
    return carve(cf, c.G_offset[k], (nc, ny)), carve(cf, c.g_offset[k], nc)


@helper(forceinline=True)
def reflected_inertia(c, cf, k):
    """H̃_k (n_y, n_y), added to D_k (the approximate models of [Chignoli23, §II-C])."""
    return carve(cf, c.armature_offset[k], (c.n_y[k], c.n_y[k]))


@helper(forceinline=True)
def force_columns(w, area, ncols, nbodies):
    """A view (ncols, nbodies, 6) of force scratch area ``area`` (0 or 1): ncols force
    columns, one spatial force per body of a cluster."""
    return carve(w.flat, w.scratch_offsets[area], (ncols, nbodies, 6))


@helper(forceinline=True)
def rotor_constants(c, cf, k):
    """(I_r (6, 6), s_r (6,), u_r (6,), h_r (6,)) of a link–rotor pair k
    (``c.rotor_offset[k] ≥ 0``), in the frame of the pair's output body Λ: the rotor's
    inertia ^ΛX*_r I_r ^rX_Λ, its motion per unit ẏ_k (the rotor's column of S_k,
    G_r H*_r), u_r = I_r s_r (its column of ^ΛX* U_k) and its joint axis h_r = ^ΛX_r H*_r
    (motion per unit q̇_r). Constant: the rotor's inertia is symmetric about its own axis
    (:func:`~.inertia.rotor_pair_constants`)."""
    o = c.rotor_offset[k]
    return carve(cf, o, (6, 6)), carve(cf, o + 36, 6), carve(cf, o + 42, 6), carve(cf, o + 48, 6)


@helper(forceinline=True)
def pair_rotor(c, i):
    """Whether body i is the rotor of a link–rotor pair (:func:`rotor_constants`)."""
    k = c.cluster_of[i]
    return c.rotor_offset[k] >= 0 and c.local_index[i] == c.rotor_local[k]


@helper(forceinline=True)
def no_rotor_forces(c, fext):
    """Whether no external force acts on a pair rotor (``fext`` (nb, 6), or (0, 6): none):
    then C-ABA and C-RNEA take the rotors from their constants, in the frame of the body
    they sit on (an external force on a rotor acts in its own frame)."""
    if fext.shape[0] == 0:
        return True
    for i in range(fext.shape[0]):
        if pair_rotor(c, i):
            for e in range(6):
                if fext[i, e] != 0.0:
                    return False
    return True


@helper(forceinline=True)
def states_fit(mi, ci, Y, YD, X, FEXT, Q, OUT, status, start, stop):
    """True when flat arrays hold B states of the cluster tree ``ci`` one after another
    (the arguments of the states kernels, :func:`~.aba.cluster_aba_states`): y in
    Y (B·n_yq,), ẏ, the third rate and the output in YD, X, OUT (B·n_yv,), the external
    forces in FEXT (B·nb·6,) or empty (none), q in Q (B·nq,) or empty; B = len(status),
    or 1 for an empty ``status`` (a single state); 0 ≤ start ≤ stop ≤ B."""
    c = cluster_tables(ci)
    nb, nq = mi[0], mi[1]
    B = max(status.shape[0], 1)
    return (Y.shape[0] == B * c.nyq and YD.shape[0] == B * c.nyv and X.shape[0] == B * c.nyv
            and OUT.shape[0] == B * c.nyv and (FEXT.shape[0] == 0 or FEXT.shape[0] == B * nb * 6)
            and (Q.shape[0] == 0 or Q.shape[0] == B * nq) and 0 <= start and start <= stop and stop <= B)


@helper(forceinline=True)
def state_views(mi, ci, Y, YD, X, FEXT, Q, OUT, b):
    """(y, ẏ, x, f_ext (nb, 6) or (0, 6), q (nq,) or (0,), out): borrowed views of state b
    of the flat arrays of :func:`states_fit`."""
    c = cluster_tables(ci)
    nyq, nyv = c.nyq, c.nyv
    nf = mi[0] if FEXT.shape[0] > 0 else 0
    nq = mi[1] if Q.shape[0] > 0 else 0
    return (carve(Y, b * nyq, nyq), carve(YD, b * nyv, nyv), carve(X, b * nyv, nyv), carve(FEXT, b * nf * 6, (nf, 6)),
            carve(Q, b * nq, nq), carve(OUT, b * nyv, nyv))


def pack_plain_tables(mi, ci, mf, cf, ws, cws):
    """The one array a plain-call cluster kernel takes (:func:`~soadyn.core.layout.pack_tables`
    of [mi | ci], [mf | cf] and a thread's [ws | cws]; :func:`split_plain_tables`): one
    array instead of three made the public C-RNEA call cheaper (``benchmarks/results/design_notes.md``)."""
    return pack_tables(np.concatenate([mi, ci]), np.concatenate([mf, cf]), np.concatenate([ws, cws]))


@helper(forceinline=True)
def split_plain_tables(tables):
    """``(ok, mi, mf, ws, ci, cf, cws, no_forces)``: borrowed views of the array of a
    plain-call cluster kernel (:func:`pack_plain_tables`), and an empty (0, 6) force
    array; ``ok`` is False when the array does not fit its headers (the views are then
    meaningless)."""
    packed_ok, mci, mcf, wcws = split_tables(tables)
    ok, mi, mf, ci, cf = split_model_tables(mci, mcf)
    ok = ok and packed_ok
    nws, ncws = 0, 0
    if ok and ci.shape[0] >= len(HEADER):
        nws, ncws = workspace_size(mi[0], mi[2]), ci[3]
        ok = wcws.shape[0] == nws + ncws
    else:
        ok = False
    if not ok:
        nws, ncws = 0, 0
    return ok, mi, mf, carve(wcws, 0, nws), ci, cf, carve(wcws, nws, ncws), carve(mcf, 0, (0, 6))
