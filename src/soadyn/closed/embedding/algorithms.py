"""Constraint embedding: C-RNEA, C-ABA, C-EFPA and the cluster mass matrix [Chignoli23].

The algorithms run over the cluster connectivity tree (:func:`~soadyn.cluster_tree`)
exactly as the tree algorithms run over bodies, with the cluster quantities of
[Chignoli23, §V] (kernels in :mod:`soadyn.kernels.cluster`). They work with the
independent coordinates y, ẏ, ÿ and the independent generalized forces τ_ind = Gᵀτ
([Chignoli23, §V-D, eq. 29–31]).

Clusters whose explicit form is constant (rigid joints, gears and belts) need nothing
per call. For the others (loops, implicit user constraints) each call first solves
q = γ(y) from the cluster's reference configuration and evaluates G(q) and g(q, q̇),
writing them into this thread's cluster workspace, where the kernels read them: the
result is a function of the arguments alone.
"""
from __future__ import annotations

import numpy as np

from ...core import validation as val
from ...core.call import NO_FORCES, Arg, CompiledFunction
from ...core.compile import derived
from ...dynamics.frames import frame_set
from ...kernels.cluster.aba import cluster_aba_kernel
from ...kernels.cluster.crba import cluster_mass_matrix_kernel
from ...kernels.cluster.efpa import cluster_efpa_kernel
from ...kernels.cluster.explicit import apply_explicit_map, apply_explicit_map_transpose
from ...kernels.cluster.kinematics import positions_pass
from ...kernels.cluster.layout import cluster_workspace, motion_subspace, velocity_product
from ...kernels.cluster.rnea import cluster_rnea_kernel
from .clusters import cluster_tree
from .compiled import cluster_workspace_buffer, packed_clusters

__all__ = ["cluster_rnea", "cluster_aba", "cluster_efpa", "cluster_mass_matrix", "embedding_accelerations",
           "cluster_motion_subspaces", "prepare_clusters"]


def _nyq(model):
    return cluster_tree(model).nyq


def _nyv(model):
    return cluster_tree(model).nyv


def _independent_vector(c, state, params):
    return ((int(params[0][6]),),)  # nyv, from the header of the packed clusters


def _independent_square(c, state, params):
    nyv = int(params[0][6])
    return ((nyv, nyv),)


def _operational_square(c, state, params):
    m = 6 * params[0].shape[0]  # six rows per frame
    return ((m, m),)


_Y, _YD = Arg("y", _nyq), Arg("yd", _nyv)
_CABA = CompiledFunction(cluster_aba_kernel, None, (_Y, _YD, Arg("tau_ind", _nyv), Arg("f_ext", "forces")),
                         _independent_vector, params=(None, None, None, bool))
_CRNEA = CompiledFunction(cluster_rnea_kernel, None, (_Y, _YD, Arg("ydd", _nyv), Arg("f_ext", "forces")),
                          _independent_vector, params=(None, None, None, bool))
_CMASS = CompiledFunction(cluster_mass_matrix_kernel, None, (_Y,), _independent_square)
_CEFPA = CompiledFunction(cluster_efpa_kernel, None, (_Y,), _operational_square)


# --------------------------------------------------------------------------- per-call state
def prepare_clusters(model, packed, cws, y, yd=None, q_guess=None):
    """Solve γ(y) for the nonlinear clusters from their reference configurations (or
    ``q_guess``, (nq,)) and evaluate their G — and g at q̇ = G ẏ when ``yd`` is given —
    into the cluster workspace ``cws``, where the kernels read them. Nothing is kept
    between calls."""
    q = cws[:model.nq]
    c = packed.tables
    for cl in packed.nonlinear:
        j = cl.joint
        j.solve_positions(y[cl.y_q], q, q_guess)
        if yd is None:
            G, g = j.explicit_form(q)
        else:
            G, g, _ = j.explicit_form_at(q, yd[cl.y_v])
        _write_explicit_form(c, cws, cl, G, g)


def prepare_clusters_at(model, packed, cws, q, v, state=None):
    """The nonlinear clusters' G and g at a spanning state (q, v) that satisfies the
    constraints, without solving γ (the cut-joint methods' input). ``state``: the model's
    constraints evaluated at (q, v) (:class:`~soadyn.closed.kinematics.ConstraintState`),
    whose rows the clusters then take instead of evaluating their own."""
    c = packed.tables
    cws[:model.nq] = q
    for cl in packed.nonlinear:
        j = cl.joint
        if state is None:
            G, g = j.explicit_form(q, v)
        else:
            rows = packed.model_rows[cl.index]
            G, g = j.explicit_form_of(state.G[np.ix_(rows, j.v_index)], state.acceleration_bias[rows])
        _write_explicit_form(c, cws, cl, G, g)


def _write_explicit_form(c, cws, cl, G, g):
    k = cl.index
    og, ob = c.G_offset[k], c.g_offset[k]
    cws[og:og + G.size] = G.ravel()
    cws[ob:ob + cl.joint.n] = 0.0 if g is None else g


def _prepared(model, y, yd, with_bias, packed=None):
    """(packed clusters, this thread's cluster workspace with the nonlinear clusters
    prepared for (y, ẏ), y, ẏ); y and ẏ are validated first when clusters need it.
    ``packed``: other packed clusters of the model (the approximate models' H̃)."""
    key = "cluster_workspace" if packed is None else ("cluster_workspace", id(packed))
    packed = packed_clusters(model) if packed is None else packed
    cws = cluster_workspace_buffer(model, packed, key)
    if packed.nonlinear:
        tree = packed.tree
        y = val.vector(y, tree.nyq, "y", batch_ok=False)
        if yd is not None:
            yd = val.vector(yd, tree.nyv, "yd", batch_ok=False)
        prepare_clusters(model, packed, cws, y, yd if with_bias else None)
    return packed, cws, y, yd


# --------------------------------------------------------------------------- public functions
def cluster_aba(model, y, yd, tau_ind, f_ext=None, *, gravity=True, out=None):
    """Constrained forward dynamics by the cluster-based articulated-body algorithm, C-ABA
    [Chignoli23, Alg. 1]: ÿ = (GᵀMG)⁻¹ (τ_ind − Gᵀ(C + M g)) in O(N) over clusters.

    Parameters
    ----------
    model : Model with loops, couplings or holonomic user constraints (see :func:`cluster_tree`).
    y : (nyq,) independent coordinates; yd : (nyv,) independent velocities.
    tau_ind : (nyv,) generalized forces on the independent coordinates (τ_ind = Gᵀτ for
        spanning-tree joint forces τ) [N m, N].
    f_ext : optional (nbodies, 6) spatial forces on the bodies (body frame).
    gravity : include the model's gravity.

    Returns ÿ (nyv,).
    """
    return aba_with(model, None, y, yd, tau_ind, f_ext, gravity, out)


def aba_with(model, packed, y, yd, tau_ind, f_ext=None, gravity=True, out=None):
    """:func:`cluster_aba` with other packed clusters of the model (None: its own)."""
    packed, cws, y, yd = _prepared(model, y, yd, True, packed)
    return _CABA(model, (y, yd, tau_ind, NO_FORCES if f_ext is None else f_ext), (packed.ci, packed.cf, cws, gravity),
                 out)


def cluster_rnea(model, y, yd, ydd, f_ext=None, *, gravity=True, out=None):
    """Constrained inverse dynamics by the cluster-based RNEA, C-RNEA [Chignoli23, §VI]:
    τ_ind = Gᵀ(M(Gÿ + g) + C) computed as S_kᵀ f^J_k per cluster (eq. 31, 35).

    Parameters: y (nyq,), yd, ydd (nyv,); f_ext optional (nbodies, 6). Returns τ_ind (nyv,).
    """
    packed, cws, y, yd = _prepared(model, y, yd, True)
    return _CRNEA(model, (y, yd, ydd, NO_FORCES if f_ext is None else f_ext), (packed.ci, packed.cf, cws, gravity),
                  out)


def cluster_efpa(model, y, frames):
    """Inverse operational-space inertia Ω = J (GᵀMG)⁻¹ Jᵀ of ``frames`` by the cluster-based
    extended force propagator algorithm, C-EFPA [Chignoli23, §VIII].

    J stacks the frames' Jacobians with respect to ẏ, each mapping to the frame's spatial
    velocity [ω; v] in the frame's own axes (``reference="local"``). ``frames`` is a frame
    name or a list of names. Returns Ω (6m, 6m) for m frames.
    """
    return efpa_with(model, None, y, frames)


def efpa_with(model, packed, y, frames):
    """:func:`cluster_efpa` with other packed clusters of the model (None: its own)."""
    fs = frame_set(model, frames)
    for name, body in zip(fs.names, fs.body):
        if body < 0:
            raise ValueError(f"frames: frame {name!r} is fixed to the world; it has no operational-space inertia")
    packed, cws, y, _ = _prepared(model, y, None, False, packed)
    Z = np.empty((len(fs.names), packed.tree.nyv, 6))
    return _CEFPA(model, (y,), (fs.body, fs.rotation, fs.translation, Z, packed.ci, packed.cf, cws))


def cluster_mass_matrix(model, y):
    """The mass matrix of the independent coordinates, H = GᵀMG (nyv, nyv), by composite
    cluster inertias over the cluster tree ([Jain12, Lemma 7–9]; [Chignoli23, §V])."""
    packed, cws, y, _ = _prepared(model, y, None, False)
    return _CMASS(model, (y,), (packed.ci, packed.cf, cws))


def embedding_accelerations(model, q, v, tau, f_ext=None, state=None):
    """Closed-chain forward dynamics by constraint embedding at a spanning-tree state:
    q̈ = G ÿ + g with ÿ from C-ABA for τ_ind = Gᵀτ ([Chignoli23, eq. 3, Alg. 1, §V-D]).

    (q, v) must satisfy the constraints (the nonlinear clusters' G and g are taken at q
    as given, and the dependent velocities follow from the independent ones); τ (nv,)
    are spanning-tree joint forces; ``state``, optional, the model's constraints evaluated
    at (q, v) (:func:`~soadyn.closed.evaluate_constraints`): the clusters then take their
    rows K and bias k from it (the cut-joint evaluation) instead of evaluating them again.
    The public entry point is
    ``soadyn.constrained_forward_dynamics(model, q, v, tau, method="embedding")``.
    """
    packed = packed_clusters(model)
    tree = packed.tree
    cws = cluster_workspace_buffer(model, packed)
    c = model.compiled
    y, yd = tree.independent_state(q, v)
    if packed.nonlinear:
        prepare_clusters_at(model, packed, cws, q, v, state)
    tau_ind = np.empty(tree.nyv)
    apply_explicit_map_transpose(c.mi, c.mf, packed.ci, packed.cf, cws, tau, tau_ind)
    ydd = _CABA(model, (y, yd, tau_ind, NO_FORCES if f_ext is None else f_ext), (packed.ci, packed.cf, cws, True))
    qdd = np.empty(model.nv)
    apply_explicit_map(c.mi, c.mf, packed.ci, packed.cf, cws, ydd, qdd, False, True)
    return qdd


def cluster_motion_subspaces(model, y, yd=None):
    """The cluster motion subspaces S_k (6n_k, ny_k) and bias terms c_k = Ṡ_k ẏ_k (6n_k,) as
    the compiled recursion forms them ([Chignoli23, eq. 24–26]), for inspection and tests.
    Returns a list of (S_k, c_k) per cluster; c_k is None without ``yd``."""
    with_v = yd is not None
    packed = packed_clusters(model)
    tree = packed.tree
    y = val.vector(y, tree.nyq, "y", batch_ok=False)
    yd = val.vector(yd, tree.nyv, "yd", batch_ok=False) if with_v else np.zeros(tree.nyv)
    cws = cluster_workspace_buffer(model, packed)
    if packed.nonlinear:
        prepare_clusters(model, packed, cws, y, yd if with_v else None)
    c = model.compiled
    ws = derived(model).buffer()
    st = positions_pass(c.mi, c.mf, ws, packed.ci, packed.cf, cws, y, yd, with_v, with_v)
    if st:
        raise ValueError("y: the spanning state has a zero quaternion")
    w = cluster_workspace(cws, packed.tables, model.nq, model.nv)
    out = []
    for k, cl in enumerate(tree.clusters):
        S = motion_subspace(packed.tables, w, k)  # (ny, n_bodies, 6)
        ck = velocity_product(packed.tables, w, k).reshape(-1).copy() if with_v else None
        out.append((S.reshape(S.shape[0], -1).T.copy(), ck))
    return out
