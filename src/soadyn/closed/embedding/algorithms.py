"""Constraint embedding: C-RNEA, C-ABA, C-EFPA and the cluster mass matrix [Chignoli23].

The algorithms run over the cluster connectivity tree (:func:`~soadyn.cluster_tree`)
exactly as the tree algorithms run over bodies, with the cluster quantities of
[Chignoli23, §V] (kernels in :mod:`soadyn.kernels.cluster`). They work with the
independent coordinates y, ẏ, ÿ and the independent generalized forces τ_ind = Gᵀτ
([Chignoli23, §V-D, eq. 29–31]).

Clusters whose explicit form is constant (rigid joints, gears and belts) need nothing
per call. For the others (loops, implicit user constraints) G(q) and g(q, q̇) are
evaluated per call and written into this thread's cluster workspace, where the kernels
read them, at a spanning configuration q that is either

* given (``q=``): the configuration that fixes the assembly branch, as [Chignoli23,
  Alg. 1] evaluates G, g and the cluster quantities at the spanning state — no position
  solve; y must be q's independent coordinates and q must satisfy the constraints; or
* solved, q = γ(y), by Gauss–Newton from ``q_guess`` or else from each cluster's
  reference configuration (fixed when the model is built, never a singular one: see
  :class:`~soadyn.closed.embedding.cluster_joints.ClusterJoint`), never from an earlier
  call.

Either way the result is a function of the arguments alone.

The common single-state calls take one kernel each: on models whose clusters are all
explicit the algorithm alone, on models with implicit clusters (all compiled) the solve
and the algorithm together (:mod:`soadyn.kernels.cluster.solved`); any other argument
form or kernel status takes the validated path, which gives the same result or names
the problem.
"""
from __future__ import annotations

import numpy as np

from ...core import validation as val
from ...core.batch import NO_BATCH, Batch, run_blocks, stacked_block
from ...core.call import ABSENT, NO_FORCES, Arg, CompiledFunction, Outputs
from ...core.fast_path import ExactCall, GeneralPath
from ...core.compile import derived, snapshot
from ...core.constraints import ConstraintError
from ...core.status import Unsolved, raise_status
from ...dynamics.frames import frame_set
from ...kernels.cluster.aba import cluster_aba_kernel, cluster_aba_plain_kernel, cluster_aba_states
from ...kernels.cluster.crba import cluster_mass_matrix_kernel
from ...kernels.cluster.efpa import cluster_efpa_kernel, cluster_efpa_plain_kernel
from ...kernels.cluster.embedding import embedding_kernel, input_copies_size
from ...kernels.cluster.implicit import GIVEN, GUESS, PREPARED, SOLVE, prepare_implicit_kernel
from ...kernels.cluster.kinematics import cluster_subspaces_kernel
from ...kernels.cluster.layout import pack_plain_tables
from ...kernels.cluster.rnea import cluster_rnea_kernel, cluster_rnea_plain_kernel, cluster_rnea_states
from ...kernels.cluster.solved import (cluster_aba_solved_kernel, cluster_efpa_solved_kernel,
                                       cluster_rnea_solved_kernel)
from .cluster_joints import off_manifold_message
from .clusters import cluster_tree, solve_spanning_state
from .compiled import cluster_workspace_buffer, packed_clusters

__all__ = ["cluster_rnea", "cluster_aba", "cluster_efpa", "cluster_mass_matrix", "embedding_accelerations",
           "embedding_solve", "input_copies", "spanning_state",
           "cluster_motion_subspaces", "prepare_clusters", "check_spanning_configuration", "MANIFOLD_TOL"]

#: largest constraint residual max |φ(q)| [m, rad] accepted for a given spanning configuration
MANIFOLD_TOL = 1e-6


def _nyq(model):
    return cluster_tree(model).nyq


def _nyv(model):
    return cluster_tree(model).nyv


#: one vector of length nyv, read from the header of the packed clusters ``ci``
_independent_vector = Outputs.param_shaped(lambda c, ci: (int(ci[6]),))


def _independent_square(c, state, params):
    nyv = int(params[0][6])
    return ((nyv, nyv),)


def _operational_square(c, state, params):
    m = 6 * params[0].shape[0]  # six rows per frame
    return ((m, m),)


_Y, _YD, _Q = Arg("y", _nyq), Arg("yd", _nyv), Arg("q", "nq", optional=True)
_ABA_ARGS = (_Y, _YD, Arg("tau_ind", _nyv), Arg("f_ext", "forces"))
_RNEA_ARGS = (_Y, _YD, Arg("ydd", _nyv), Arg("f_ext", "forces"))
# single states (the nonlinear clusters prepared before the call), and batches (each state
# prepared inside the batched kernel, from q or q_guess when given)
_CABA = CompiledFunction(cluster_aba_kernel, NO_BATCH, _ABA_ARGS, _independent_vector,
                         params=(None, None, None, val.GRAVITY))
# the plain calls (one state, no external forces, three folded table arrays): on explicit
# models the algorithm alone, on models with implicit clusters the solve and the algorithm
# together; indexed by :func:`_plain_call`'s ``solved`` flag
_CABA_PLAIN = (ExactCall(cluster_aba_plain_kernel), ExactCall(cluster_aba_solved_kernel))
_CRNEA_PLAIN = (ExactCall(cluster_rnea_plain_kernel), ExactCall(cluster_rnea_solved_kernel))
_CEFPA_PLAIN = (ExactCall(cluster_efpa_plain_kernel), ExactCall(cluster_efpa_solved_kernel))


def _states_adapters(kernel):
    """The single-state function and the batch (a :meth:`~soadyn.core.batch.Batch.runner`)
    of a :class:`~soadyn.core.call.CompiledFunction` for a states kernel (``kernel``: an :class:`~soadyn.core.fast_path.ExactCall` of
    :func:`~soadyn.kernels.cluster.aba.cluster_aba_states` or its C-RNEA twin, which takes
    single states and batches as flat arrays, with the tables in one array): ``params`` are
    (ci, cf, cluster workspace, gravity, mode)."""
    def single(c, ws, state, params, outs):
        ci, cf, cws, gravity, mode = params
        y, x1, x2, f_ext, q = state
        return kernel(pack_plain_tables(c.mi, ci, c.mf, cf, ws, cws), y, x1, x2, f_ext.reshape(-1), q, gravity, mode,
                      outs[0], _ONE_STATE, 0, 1)

    def batch(d, values, params, outs, status):
        ci, cf, cws, gravity, mode = params
        c = d.compiled
        tables = pack_plain_tables(c.mi, ci, c.mf, cf, d.buffer(), cws)
        flat = tuple(np.ascontiguousarray(x).reshape(-1) for x in values)
        run_blocks(block, None, (tables, *flat, gravity, mode, outs[0].reshape(-1)), status)

    def block(tables, *args):  # each block on its own copy of the tables and workspaces
        kernel(tables.copy(), *args)

    return single, Batch.runner(batch)


#: the ``status`` argument of a states kernel's call on one state (no status array)
_ONE_STATE = np.zeros(0, dtype=np.int64)
_CABA_STATES_KERNEL = ExactCall(cluster_aba_states)
_CRNEA_STATES_KERNEL = ExactCall(cluster_rnea_states)
# one state with q= or external forces, or a batch, of a model with implicit clusters
# (prepared in the kernel): validated here, then the states kernels
_CABA_STATES = CompiledFunction(*_states_adapters(_CABA_STATES_KERNEL), _ABA_ARGS + (_Q,),
                                _independent_vector,
                                params=(None, None, None, val.GRAVITY, None))
_CRNEA = CompiledFunction(cluster_rnea_kernel, NO_BATCH, _RNEA_ARGS, _independent_vector,
                          params=(None, None, None, val.GRAVITY))
_CRNEA_STATES = CompiledFunction(*_states_adapters(_CRNEA_STATES_KERNEL), _RNEA_ARGS + (_Q,),
                                 _independent_vector,
                                 params=(None, None, None, val.GRAVITY, None))
_CMASS = CompiledFunction(cluster_mass_matrix_kernel, NO_BATCH, (_Y,), Outputs.computed(_independent_square))
#: the preparation alone (its last parameter the empty ``spanning``), and the same kernel
#: writing the spanning state (q, q̇) into its output
_NO_SPANNING = np.zeros(0)
_PREPARE = CompiledFunction(prepare_implicit_kernel, NO_BATCH, (_Y, Arg("yd", _nyv, optional=True), _Q),
                            Outputs.computed(lambda c, state, params: (), allocate=lambda c, state: ()))
_CEFPA = CompiledFunction(cluster_efpa_kernel, NO_BATCH, (_Y,), Outputs.computed(_operational_square))
_SPANNING = CompiledFunction(prepare_implicit_kernel, NO_BATCH, (_Y, _YD, Arg("q_guess", "nq", optional=True)),
                             Outputs.computed(lambda c, state, params: ((c.nq + c.nv,),)))
# The embedding method's kernel takes the model's and the clusters' tables and workspaces
# in one array (fewer arguments through the dispatcher), and B states stored one after
# another: the plain call passes this thread's tables (:func:`embedding_fast`), a validated
# single state a copy packed for the call (:func:`_embed_single`), a batch a copy per block
# (:func:`embedding_batch`); one compiled copy of the method for all three.
_EMBED_PLAIN = ExactCall(embedding_kernel)


def _embed_single(c, ws, state, params, outs):
    """The kernel on one validated state (``params``: ci, cf, the cluster workspace,
    gravity, mode): the tables packed for this call."""
    ci, cf, cws, gravity, mode = params
    return _EMBED_PLAIN(pack_plain_tables(c.mi, ci, c.mf, cf, ws, cws), *state, gravity, mode, *outs)


def embedding_batch(d, values, params, outs, status):
    """A validated batch of the embedding method (``values``: Q (B, nq), V, T (B, nv), F (B,
    nb, 6) or (B, 0, 6); ``params`` as for :func:`_embed_single`; ``outs``: one (B, n)
    output) in blocks on the worker threads (:func:`~soadyn.core.batch.stacked_block`), each
    block one kernel call on its states' rows with its own copy of the tables (which hold
    the workspaces the kernel writes); a block whose kernel reports a status other than OK
    is run again state by state to find the status of each."""
    ci, cf, cws, gravity, mode = params
    c = d.compiled
    tables = pack_plain_tables(c.mi, ci, c.mf, cf, d.buffer(), cws)

    def own_tables():
        return (tables.copy(),)

    run_blocks(stacked_block, None, (embedding_kernel, own_tables, values, (gravity, mode), outs, ()), status)


_EMBED_ARGS = (Arg("q", "nq"), Arg("v", "nv"), Arg("tau", "nv"), Arg("f_ext", "forces"))
_EMBED = CompiledFunction(_embed_single, Batch.runner(embedding_batch), _EMBED_ARGS,
                          Outputs.computed(lambda c, state, params: ((c.nv + 2,),)),
                          params=(None, None, None, val.GRAVITY))
#: the same kernel, whose longer output also takes copies of q, q̇, τ (:func:`input_copies`)
_EMBED_COPIES = CompiledFunction(_embed_single, Batch.runner(embedding_batch), _EMBED_ARGS,
                                 Outputs.computed(lambda c, state, params: ((input_copies_size.py_func(c.nq, c.nv),),)),
                                 params=(None, None, None, val.GRAVITY))


# --------------------------------------------------------------------------- per-call state
def prepare_clusters(model, packed, cws, y, yd=None, q_guess=None, q=None, clusters=None):
    """Evaluate the nonlinear clusters' G — and g at q̇ = G ẏ when ``yd`` is given — into
    the cluster workspace ``cws``, where the kernels read them, at the spanning
    configuration ``q`` (nq,) when given — no position solve; each nonlinear cluster
    checks q on its constraint manifold (``MANIFOLD_TOL``) from the rows it evaluates for
    K, the rest is :func:`check_spanning_configuration`'s job — else at γ(y) solved from
    ``q_guess`` (nq,) or from each cluster's reference configuration. Nothing is kept
    between calls: every entry the kernels read is written here. ``clusters``: the
    nonlinear clusters to prepare (default: all of them)."""
    c = packed.tables
    tol = None
    if q is not None:
        cws[:model.nq] = q
        tol = MANIFOLD_TOL  # the nonlinear clusters check q on the manifold from the rows they evaluate anyway
    qw = cws[:model.nq]
    for cl in packed.nonlinear if clusters is None else clusters:
        j = cl.joint
        if q is None:
            j.solve_positions(y[cl.y_q], qw, q_guess)
        try:
            if yd is None:
                G, g = j.explicit_form(qw, tol=tol)
            else:
                G, g, _ = j.explicit_form_at(qw, yd[cl.y_v], tol)
        except ConstraintError as e:
            if str(e).startswith("q: "):  # off the manifold: already says where
                raise
            where = ("at the given q" if q is not None else
                     f"at γ(y) for y = {np.asarray(y[cl.y_q]).tolist()}")
            raise ConstraintError(f"{e} — {where}, cluster coordinates q_c = "
                                  f"{np.round(qw[j.q_index], 12).tolist()}") from None
        _write_explicit_form(c, cws, cl, G, g)


def _coordinate_names(model, j, entries):
    """'joint' or 'joint[k]' for the model q indices ``entries`` of cluster joint ``j``."""
    out = []
    for e in entries:
        for i in j.bodies:
            jt = model.bodies[i].joint
            if jt.q_index <= e < jt.q_index + jt.nq:
                out.append(jt.name if jt.nq == 1 else f"{jt.name}[{e - jt.q_index}]")
    return out


def _y_positions(model, tree):
    """The model q index of every entry of y (nyq,), once per model version."""
    def build(model):  # (the snapshot of the version: its cluster tree is ``tree``)
        idx = np.empty(tree.nyq, dtype=np.int64)
        for cl in tree.clusters:
            idx[cl.y_q] = cl.joint.q_index[cl.joint.independent_q]
        idx.flags.writeable = False
        return idx
    return derived(model).memo("cluster_y_positions", build)


def check_spanning_configuration(model, tree, y, q, tol=MANIFOLD_TOL, nonlinear=True):
    """Check a spanning configuration ``q`` (nq,) given with independent coordinates ``y``
    (nyq,): y must equal q's independent coordinates (to 1e-9 (1 + |y|); ValueError naming
    both, the coordinates and the difference) and q must satisfy every cluster's
    constraints, max |φ(q)| ≤ ``tol`` [m, rad] (ConstraintError with the residual and the
    constraint's name) [Chignoli23, eq. 2–3]. ``nonlinear=False`` leaves the nonlinear
    clusters' constraints to the caller (:func:`prepare_clusters` checks them from the
    rows it evaluates)."""
    idx = _y_positions(model, tree)
    diff = y - q[idx]
    if not np.all(np.abs(diff) <= 1e-9 * (1.0 + np.abs(y))):
        bad = np.flatnonzero(~(np.abs(diff) <= 1e-9 * (1.0 + np.abs(y))))
        names = []
        for e in idx[bad]:
            cl = tree.clusters[tree.cluster_of[next(b.index for b in model.bodies
                                                    if b.joint.q_index <= e < b.joint.q_index + b.joint.nq)]]
            names += _coordinate_names(model, cl.joint, [e])
        raise ValueError(
            f"y, q: y must be the independent coordinates of the given spanning configuration q; for "
            f"{names} (y entries {bad.tolist()}) expected from q {q[idx[bad]].tolist()}, received in y "
            f"{y[bad].tolist()} (difference y − q {diff[bad].tolist()})")
    for cl in tree.clusters:
        j = cl.joint
        if not j.constrained or (not nonlinear and not j.linear):
            continue
        for name, r in j.constraint_violation(q, y[cl.y_q]):
            if not r <= tol:
                raise ConstraintError(off_manifold_message(name, cl.name, r, tol))


def prepare_clusters_at(model, packed, cws, q, v, state=None, clusters=None):
    """The nonlinear clusters' G and g at a spanning state (q, v) that satisfies the
    constraints, without solving γ (the cut-joint methods' input). ``state``: the model's
    constraints evaluated at (q, v) (:class:`~soadyn.closed.kinematics.ConstraintState`),
    whose rows the clusters then take instead of evaluating their own. ``clusters``: the
    nonlinear clusters to prepare (default: all of them)."""
    c = packed.tables
    cws[:model.nq] = q
    for cl in packed.nonlinear if clusters is None else clusters:
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


def checked_state(model, tree, y, yd, q, q_guess):
    """y, ẏ and q or q_guess validated (single states: the Python path)."""
    y = val.vector(y, tree.nyq, "y", batch_ok=False)
    if yd is not None:
        yd = val.vector(yd, tree.nyv, "yd", batch_ok=False)
    for name in ("q", "q_guess"):
        x = q if name == "q" else q_guess
        if x is None:
            continue
        x = val.vector(x, model.nq, name, batch_ok=False)
        if not np.all(np.isfinite(x)):
            raise ValueError(f"{name}: expected finite values, got NaN or inf at entries "
                             f"{np.flatnonzero(~np.isfinite(x)).tolist()}")
        q, q_guess = (x, q_guess) if name == "q" else (q, x)
    return y, yd, q, q_guess


def _run(model, y, yd, with_bias, packed, q, q_guess, call, batch_call=None, single=None):
    """Run a cluster kernel on one state or a batch.

    ``call(packed, cws)`` runs the single-state kernel through its
    :class:`~soadyn.core.call.CompiledFunction` with this thread's cluster workspace, in
    which the nonlinear clusters have been prepared: the implicit ones by the compiled
    :func:`~soadyn.kernels.cluster.implicit.prepare_implicit_kernel` (mode SOLVE, GIVEN
    with ``q`` or GUESS with ``q_guess``), those whose constraints are Python callables in
    Python. When the compiled preparation does not succeed (``Unsolved``: no convergence
    from its starts, a singular configuration, a given q that fails its checks) every
    nonlinear cluster is prepared in Python — more starts, errors that name the cause.

    ``batch_call(packed, cws, q_arg, mode)`` runs the batched kernel (each state prepared
    inside it); ``single(b)`` evaluates state b alone, for batches that need Python."""
    if q is not None and q_guess is not None:
        raise ValueError("q, q_guess: give the spanning configuration q (no solve) or a guess for the solve, "
                         "not both")
    packed = packed_clusters(model) if packed is None else packed
    cws = cluster_workspace_buffer(model, packed)
    mode = GIVEN if q is not None else GUESS if q_guess is not None else SOLVE
    if np.ndim(y) == 2:
        if batch_call is None:
            raise ValueError(f"y: expected one state of shape ({packed.tree.nyq},), got shape {np.shape(y)}; this "
                             "function takes no batches")
        if not packed.python_prepared:
            q_arg = q if q is not None else q_guess if q_guess is not None else ABSENT
            try:
                return batch_call(packed, cws, q_arg, mode)
            except Unsolved:
                pass
        return _state_by_state(single, len(y))
    tree = packed.tree
    y, yd, q, q_guess = checked_state(model, tree, y, yd, q, q_guess)
    try:
        if packed.python_prepared:
            if q is not None:
                check_spanning_configuration(model, tree, y, q, nonlinear=False)
            prepare_clusters(model, packed, cws, y, yd if with_bias else None, q_guess, q, packed.python_prepared)
        if packed.compiled:
            _prepare_implicit(model, packed, cws, y, yd, q, q_guess, mode, with_bias)
        elif q is not None and not packed.python_prepared:
            check_spanning_configuration(model, tree, y, q)
        return call(packed, cws)
    except Unsolved:
        pass
    # the Python path (docstring above)
    if q is not None:
        check_spanning_configuration(model, tree, y, q, nonlinear=False)
    prepare_clusters(model, packed, cws, y, yd if with_bias else None, q_guess, q)
    return call(packed, cws)


def _prepare_implicit(model, packed, cws, y, yd, q, q_guess, mode, with_bias):
    """The compiled preparation of the implicit clusters; raises ``Unsolved`` when the
    caller must take the Python path."""
    q_arg = q if q is not None else q_guess if q_guess is not None else ABSENT
    _PREPARE(model, (y, ABSENT if yd is None else yd, q_arg), (packed.ci, packed.cf, cws, mode,
                                                               with_bias and yd is not None, _NO_SPANNING))


def _state_by_state(single, batch):
    """The results of ``single(b)`` (one state's call) for b < ``batch``, stacked: batches
    that need the Python path."""
    return np.stack([single(b) for b in range(batch)])


def _row(x, b):
    """State b of a batched argument (None: absent)."""
    return None if x is None else x[b]


# --------------------------------------------------------------------------- public functions
_STATE_DOC = """
    q : optional (nq,) spanning-tree configuration that fixes the assembly branch: G, g and
        the cluster quantities are evaluated at q, with no position solve ([Chignoli23,
        Alg. 1]). y must equal q's independent coordinates (ValueError otherwise) and q must
        satisfy the constraints to ``MANIFOLD_TOL`` = 1e-6 [m, rad] (ConstraintError with
        the residual and the constraint's name otherwise).
    q_guess : optional (nq,) start of the position solve q = γ(y) when ``q`` is not given;
        by default each cluster's reference configuration (fixed when the model is built,
        see :class:`~soadyn.closed.embedding.cluster_joints.ClusterJoint`), never an
        earlier call's solution. The solve finds the assembly branch nearest its start;
        it raises ConstraintError when it fails (y outside the mechanism's range) or ends
        at a singular configuration (∂φ/∂q_d rank-deficient)."""


def cluster_aba(model, y, yd, tau_ind, f_ext=None, *, q=None, q_guess=None, gravity=True, out=None):
    """Constrained forward dynamics by the cluster-based articulated-body algorithm, C-ABA
    [Chignoli23, Alg. 1]: ÿ = (GᵀMG)⁻¹ (τ_ind − Gᵀ(C + M g)) in O(N) over clusters.

    Parameters
    ----------
    model : Model with loops, couplings or holonomic user constraints (see :func:`cluster_tree`).
    y : (nyq,) independent coordinates [rad, m]; yd : (nyv,) independent velocities
        [rad/s, m/s]; None means zero.
    tau_ind : (nyv,) generalized forces on the independent coordinates (τ_ind = Gᵀτ for
        spanning-tree joint forces τ) [N m, N].
    f_ext : optional (nbodies, 6) spatial forces on the bodies (body frame) [N m, N].{state}
    gravity : include the model's gravity.

    Batches: y, yd, tau_ind (and f_ext, q, q_guess when given) with a leading dimension B
    are evaluated in one multi-threaded kernel call; returns (B, nyv).

    Returns ÿ (nyv,) [rad/s², m/s²]. A pure function of its arguments.
    """
    model = snapshot(model)
    if q is None and q_guess is None and (gravity is True or gravity is False):
        if f_ext is None:  # the plain call: one lookup, one kernel
            ydd = _run_plain(_CABA_PLAIN, model, y, yd, tau_ind, gravity, out)
            if ydd is not None:
                return ydd
        else:
            ydd = _run_explicit(_CABA, model, y, yd, tau_ind, f_ext, gravity, out)
            if ydd is not None:
                return ydd
    if q_guess is None and yd is not None and (gravity is True or gravity is False) and np.ndim(y) == 1:
        ydd = _one_state(_CABA_STATES_KERNEL, _CABA, model, y, yd, tau_ind, f_ext, q, gravity, out)
        if ydd is not None:
            return ydd
    return aba_with(model, None, y, yd, tau_ind, f_ext, gravity, out, q, q_guess)


def _is_explicit_image(model, cws, q):
    """True when ``q`` is, to 1e-9, the spanning configuration γ(y) that the kernel just
    computed from y in the cluster workspace ``cws`` (a model whose clusters are all
    explicit: γ is the explicit map, no solve). Then y equals q's independent coordinates
    and q satisfies the constraints, what :func:`check_spanning_configuration` checks (to
    1e-9 (1 + |y|)) at far greater cost in Python; any doubt (another branch of an angle, a wrong
    q) takes the validated path, which accepts q or raises the error that names the cause.
    (count_nonzero: NumPy's other reductions cost more on short arrays, ``benchmarks/results/design_notes.md``.)"""
    if type(q) is not np.ndarray or q.shape != (model.nq,) or q.dtype != np.float64:
        return False
    return np.count_nonzero(np.abs(cws[:model.nq] - q) > 1e-9) == 0


def _call_tables(model):
    """((ci, cf, this thread's cluster workspace) of the model's packed clusters, or None
    when some cluster is prepared in Python (:func:`_run` does it); whether the model has
    implicit clusters that the compiled preparation must solve first)."""
    def build(model):  # (the snapshot of the version, see soadyn.core.compile)
        packed = packed_clusters(model)
        tables = (packed.ci, packed.cf, cluster_workspace_buffer(model, packed))
        return (None if packed.python_prepared else tables), bool(packed.compiled)

    return derived(model).per_thread("cluster_call", build)


def _explicit_call(model):
    """This thread's (mi, mf, tree workspace, ci, cf, cluster workspace, nyv) for the
    single-kernel call of a model whose clusters are all explicit (rigid or linear: nothing
    to prepare per call), or an empty tuple (a nonlinear cluster; a model changed since it
    was compiled, or not compiled yet): then the general path. The fast path of
    :class:`~soadyn.core.call.CompiledFunction` with what the cluster call adds (its tables)
    looked up once: that path and :func:`_call_tables` are a sizeable part of a Mini Cheetah
    call (``benchmarks/results/design_notes.md``). The kernels check every length (and the dispatcher the types), so the
    arguments go in unchecked."""
    d = getattr(model, "_derived", None)
    if d is None:
        return ()
    objects = getattr(d.threads, "objects", None)
    found = None if objects is None else objects.get("cluster_explicit_call")
    if found is not None:
        return found

    def build(model):  # (the snapshot of the version, whose store is d)
        packed = packed_clusters(model)
        if packed.nonlinear:
            return ()
        c = d.compiled
        return (c.mi, c.mf, d.buffer(), packed.ci, packed.cf, cluster_workspace_buffer(model, packed),
                int(packed.ci[6]))

    return d.per_thread("cluster_explicit_call", build)


def _plain_call(model):
    """This thread's (tables, nyv, solved) for the plain-call kernels — ``tables`` the
    model's, the clusters' and this thread's workspaces in one array
    (:func:`~soadyn.kernels.cluster.layout.pack_plain_tables`; one array instead of six:
    each array argument costs Numba's dispatcher) — or an empty tuple (a cluster
    prepared in Python; a model changed since it was compiled, or not compiled yet): then
    the general path.
    ``solved`` (0 or 1) says which kernel of a ``_C*_PLAIN`` pair fits the model: 0 for
    explicit models (:func:`~soadyn.kernels.cluster.aba.cluster_aba_plain_kernel` and its
    C-RNEA and C-EFPA twins), 1 for models with implicit clusters, solved from their
    references inside the kernel (:mod:`soadyn.kernels.cluster.solved`). The workspace is
    this thread's own copy, made once; every entry the kernels read is written per call."""
    try:  # the common case first: no exception costs nothing (Python 3.11)
        return model._derived.threads.objects["cluster_plain_call"]
    except (AttributeError, KeyError):  # no compiled form, or this thread's first call
        pass
    d = getattr(model, "_derived", None)
    if d is None:
        return ()

    def build(model):  # (the snapshot of the version, whose store is d)
        packed = packed_clusters(model)
        if packed.nonlinear and (not packed.compiled or packed.python_prepared):
            return ()
        c = d.compiled
        tables = pack_plain_tables(c.mi, packed.ci, c.mf, packed.cf, d.buffer(), cluster_workspace_buffer(model, packed))
        return tables, int(packed.ci[6]), int(bool(packed.nonlinear))

    return d.per_thread("cluster_plain_call", build)


def _run_explicit(function, model, y, x1, x2, f_ext, gravity, out):
    """The common call with external forces on an explicit model: ``function`` (``_CABA``
    or ``_CRNEA``, a kernel ``(mi, mf, ws, y, x1, x2, f_ext, ci, cf, cws, gravity, out)``)
    with the tables of :func:`_explicit_call`; its result, or None when the call needs the
    validated path (a nonlinear cluster, other argument types such as lists, None or
    batches, a status other than OK), which converts the arguments or names the cause."""
    fast = _explicit_call(model)
    if not fast:
        return None
    mi, mf, ws, ci, cf, cws, nyv = fast
    try:
        res = np.empty(nyv) if out is None else out
        # an empty f_ext: the kernel read it as no forces, the validated path names its shape
        if function.fast(mi, mf, ws, y, x1, x2, f_ext, ci, cf, cws, gravity, res) == 0 and len(f_ext):
            return res
    except GeneralPath:
        pass
    return None


def _run_plain(kernels, model, y, x1, x2, gravity, out):
    """The plain call of a cluster kernel (``kernels``, a ``_C*_PLAIN`` pair of
    :class:`~soadyn.core.fast_path.ExactCall` of kernels ``(tables, y, x1, x2, gravity, out)``,
    no external forces): its result, or None when the call needs the validated
    path (no plain tables: :func:`_plain_call`; other argument types; a status other than
    OK), which then converts the arguments, runs the Python solve or raises the error
    that names the cause. The kernel checks every length, the dispatcher the types."""
    try:  # _plain_call's common case, without the cost of its call
        fast = model._derived.threads.objects["cluster_plain_call"]
    except (AttributeError, KeyError):  # no compiled form, or this thread's first call
        fast = _plain_call(model)
    if not fast:
        return None
    tables, nyv, solved = fast
    exact = kernels[solved]
    res = np.empty(nyv) if out is None else out
    try:
        if exact.fast(tables, y, x1, x2, gravity, res) == 0:
            return res
    except GeneralPath:  # this process's first plain call, or other argument types
        if val.kernel_vector(y) and all(val.kernel_vector(x, nyv) for x in (res, x1, x2)) \
                and exact(tables, y, x1, x2, gravity, res) == 0:
            return res
    return None


def _one_state(states_kernel, function, model, y, x1, x2, f_ext, q, gravity, out):
    """The common call on one state with ``q=`` or external forces, in one kernel after one
    look-up: on a model with implicit clusters the states kernel (:func:`_run_states`),
    else ``function`` (``_CABA`` or ``_CRNEA``) with this thread's tables, whose result
    stands when q is None or is the explicit image of y. Returns the result, or None: the
    validated path."""
    tables, implicit = _call_tables(model)
    if tables is None:
        return None
    if implicit:  # the implicit clusters solved (or checked at q) inside the kernel
        return _run_states(states_kernel, model, y, x1, x2, f_ext, q, gravity, out)
    try:
        result = function.call(model, y, x1, x2, NO_FORCES if f_ext is None else f_ext, *tables, gravity, out)
        if q is None or _is_explicit_image(model, tables[2], q):
            return result
    except Unsolved:
        pass
    return None


def _run_states(kernel, model, y, x1, x2, f_ext, q, gravity, out):
    """One state of a model with implicit clusters, with ``q=`` or external forces: the
    states kernel ``kernel`` (``_CABA_STATES_KERNEL`` or ``_CRNEA_STATES_KERNEL``) with
    this thread's plain-call tables (:func:`_plain_call`), the clusters solved from their
    references or checked at q inside it. Returns its result, or None when the call
    needs the validated path (other argument types, a status other than OK), which
    converts the arguments, runs the Python solve or names the cause."""
    fast = _plain_call(model)
    if not fast:
        return None
    tables, nyv, _ = fast
    # an empty array means "absent" to the kernel: a caller's empty f_ext or q (not None)
    # takes the validated path, which names its shape
    if q is not None and not (type(q) is np.ndarray and q.ndim == 1 and q.shape[0] > 0):
        return None
    if f_ext is None:
        forces = ABSENT
    elif type(f_ext) is np.ndarray and f_ext.ndim == 2 and f_ext.shape[0] > 0:
        forces = f_ext.reshape(-1)  # (a copy for a strided array; the kernel checks the length)
    else:
        return None
    res = np.empty(nyv) if out is None else out
    args = (tables, y, x1, x2, forces, ABSENT if q is None else q, gravity, SOLVE if q is None else GIVEN, res,
            _ONE_STATE, 0, 1)
    try:
        status = kernel.fast(*args)
    except GeneralPath:  # this process's first call, or other argument types
        if not (val.kernel_vector(y) and val.kernel_vector(forces)
                and all(val.kernel_vector(x, nyv) for x in (res, x1, x2)) and (q is None or val.kernel_vector(q))):
            return None
        status = kernel(*args)
    return res if status == 0 else None


def aba_with(model, packed, y, yd, tau_ind, f_ext=None, gravity=True, out=None, q=None, q_guess=None):
    """:func:`cluster_aba` with other packed clusters of the model (None: its own)."""
    model = snapshot(model)
    if gravity is not True and gravity is not False:  # the fast path would read its truth value
        gravity = val.GRAVITY(gravity)
    if yd is None:
        yd = np.zeros(np.shape(y)[:-1] + (_nyv(model),))
    forces = NO_FORCES if f_ext is None else f_ext
    if packed is not None and not packed.nonlinear and q is None and q_guess is None and np.ndim(y) == 1:
        # nothing to prepare (the approximate models' clusters are rigid): the kernel at once
        return _CABA(model, (y, yd, tau_ind, forces), (packed.ci, packed.cf, cluster_workspace_buffer(model, packed),
                                                       gravity), out)

    def call(packed, cws):
        return _CABA(model, (y, yd, tau_ind, forces), (packed.ci, packed.cf, cws, gravity), out)

    def batch_call(packed, cws, q_arg, mode):
        return _CABA_STATES(model, (y, yd, tau_ind, forces, q_arg), (packed.ci, packed.cf, cws, gravity, mode), out)

    def single(b):
        return aba_with(model, packed, y[b], yd[b], _row(tau_ind, b), _row(f_ext, b), gravity, None, _row(q, b),
                        _row(q_guess, b))

    return _run(model, y, yd, True, packed, q, q_guess, call, batch_call, single)


def cluster_rnea(model, y, yd, ydd, f_ext=None, *, q=None, q_guess=None, gravity=True, out=None):
    """Constrained inverse dynamics by the cluster-based RNEA, C-RNEA [Chignoli23, §VI]:
    τ_ind = Gᵀ(M(Gÿ + g) + C) computed as S_kᵀ f^J_k per cluster (eq. 31, 35).

    Parameters
    ----------
    y : (nyq,) [rad, m]; yd, ydd : (nyv,) [rad/s, m/s; rad/s², m/s²]; None means zero.
    f_ext : optional (nbodies, 6) spatial forces on the bodies (body frame) [N m, N].{state}
    gravity : include the model's gravity.

    Batches: y, yd, ydd (and f_ext, q, q_guess when given) with a leading dimension B are
    evaluated in one multi-threaded kernel call; returns (B, nyv).

    Returns τ_ind (nyv,) [N m, N]. A pure function of its arguments.
    """
    model = snapshot(model)
    if q is None and q_guess is None and (gravity is True or gravity is False):
        if f_ext is None:  # the plain call: one lookup, one kernel
            tau = _run_plain(_CRNEA_PLAIN, model, y, yd, ydd, gravity, out)
            if tau is not None:
                return tau
        else:
            tau = _run_explicit(_CRNEA, model, y, yd, ydd, f_ext, gravity, out)
            if tau is not None:
                return tau
    if q_guess is None and yd is not None and ydd is not None and (gravity is True or gravity is False) \
            and np.ndim(y) == 1:
        tau = _one_state(_CRNEA_STATES_KERNEL, _CRNEA, model, y, yd, ydd, f_ext, q, gravity, out)
        if tau is not None:
            return tau
    return _rnea_general(model, y, yd, ydd, f_ext, q, q_guess, gravity, out)


def _rnea_general(model, y, yd, ydd, f_ext, q, q_guess, gravity, out):
    """:func:`cluster_rnea` by the validated path. (Apart from it because its closures make
    every variable they read a cell, which slowed every plain call, ``benchmarks/results/design_notes.md``.)"""
    if gravity is not True and gravity is not False:  # the fast path would read its truth value
        gravity = val.GRAVITY(gravity)
    if yd is None or ydd is None:
        shape = np.shape(y)[:-1] + (_nyv(model),)
        yd = np.zeros(shape) if yd is None else yd
        ydd = np.zeros(shape) if ydd is None else ydd
    forces = NO_FORCES if f_ext is None else f_ext

    def call(packed, cws):
        return _CRNEA(model, (y, yd, ydd, forces), (packed.ci, packed.cf, cws, gravity), out)

    def batch_call(packed, cws, q_arg, mode):
        return _CRNEA_STATES(model, (y, yd, ydd, forces, q_arg), (packed.ci, packed.cf, cws, gravity, mode), out)

    def single(b):
        return cluster_rnea(model, y[b], yd[b], ydd[b], _row(f_ext, b), q=_row(q, b), q_guess=_row(q_guess, b),
                            gravity=gravity)

    return _run(model, y, yd, True, None, q, q_guess, call, batch_call, single)


def cluster_efpa(model, y, frames, *, q=None, q_guess=None):
    """Inverse operational-space inertia Ω = J (GᵀMG)⁻¹ Jᵀ of ``frames`` by the cluster-based
    extended force propagator algorithm, C-EFPA [Chignoli23, §VIII].

    J stacks the frames' Jacobians with respect to ẏ, each mapping to the frame's spatial
    velocity [ω; v] in the frame's own axes (``reference="local"``). ``frames`` is a frame
    name or a list of names; y (nyq,) [rad, m].{state}

    Returns Ω (6m, 6m) for m frames [1/kg, 1/(kg m²)]. A pure function of its arguments.
    """
    model = snapshot(model)
    if q is None and q_guess is None:
        Omega = _efpa_plain(model, y, frames)
        if Omega is not None:
            return Omega
    return efpa_with(model, None, y, frames, q, q_guess)


def _efpa_plain(model, y, frames):
    """The plain call of C-EFPA: Ω, or None when the call needs the
    validated path (as :func:`_run_plain`; frames not seen on this thread yet). The
    frames' bodies and poses and a scratch Z are kept per thread and frame list."""
    fast = _plain_call(model)
    if not fast:
        return None
    try:
        found = model._derived.threads.objects["cluster_efpa_frames"].get(
            frames if type(frames) is str else tuple(frames))
    except (KeyError, TypeError):  # this thread's first call; frames not a sequence
        found = None
    if found is None:
        return _efpa_plain_first(model, y, frames)
    tables, _, solved = fast
    exact = _CEFPA_PLAIN[solved]
    fbody, fR, fp, Z = found
    Omega = np.empty((6 * fbody.shape[0], 6 * fbody.shape[0]))
    try:
        if exact.fast(tables, y, fbody, fR, fp, Z, Omega) == 0:
            return Omega
    except GeneralPath:  # this process's first plain call, or other argument types
        if val.kernel_vector(y) and exact(tables, y, fbody, fR, fp, Z, Omega) == 0:
            return Omega
    return None


def _efpa_plain_first(model, y, frames):
    """This thread's first plain call with ``frames``: the validated path, then the frames
    kept for the next calls (:func:`_efpa_plain`)."""
    Omega = efpa_with(model, None, y, frames)
    try:
        key = frames if type(frames) is str else tuple(frames)
        hash(key)
    except TypeError:  # a single Frame, or unhashable entries: not kept
        return Omega
    fs = frame_set(model, frames)
    table = derived(model).per_thread("cluster_efpa_frames", lambda snapshot: {})
    table[key] = (fs.body, fs.rotation, fs.translation, np.empty((2 * len(fs.names), _nyv(model), 6)))
    return Omega


def efpa_with(model, packed, y, frames, q=None, q_guess=None):
    """:func:`cluster_efpa` with other packed clusters of the model (None: its own)."""
    model = snapshot(model)
    fs = frame_set(model, frames)
    for name, body in zip(fs.names, fs.body):
        if body < 0:
            raise ValueError(f"frames: frame {name!r} is fixed to the world; it has no operational-space inertia")
    return efpa_at_poses(model, packed, y, fs.body, fs.rotation, fs.translation, q, q_guess)


def efpa_at_poses(model, packed, y, fbody, fR, fp, q=None, q_guess=None):
    """:func:`cluster_efpa` for m frames given by their bodies ``fbody`` (m,) (int64, none
    the world) and poses there, rotations ``fR`` (m, 3, 3) and translations ``fp`` (m, 3)
    (contact points, which are no model frames); ``packed`` as :func:`efpa_with`."""
    def call(packed, cws):
        Z = np.empty((2 * len(fbody), packed.tree.nyv, 6))
        return _CEFPA(model, (y,), (fbody, fR, fp, Z, packed.ci, packed.cf, cws))

    return _run(model, y, None, False, packed, q, q_guess, call)


def cluster_mass_matrix(model, y, *, q=None, q_guess=None):
    """The mass matrix of the independent coordinates, H = GᵀMG (nyv, nyv) [kg m², kg], by
    composite cluster inertias over the cluster tree ([Jain12, Lemma 7–9]; [Chignoli23, §V]).

    y : (nyq,) [rad, m].{state}

    A pure function of its arguments.
    """
    model = snapshot(model)

    def call(packed, cws):
        return _CMASS(model, (y,), (packed.ci, packed.cf, cws))

    return _run(model, y, None, False, None, q, q_guess, call)


for _f in (cluster_aba, cluster_rnea, cluster_efpa, cluster_mass_matrix):
    _f.__doc__ = _f.__doc__.replace("{state}", _STATE_DOC)


def embedding_accelerations(model, q, v, tau, f_ext=None, state=None):
    """Closed-chain forward dynamics by constraint embedding at a spanning-tree state:
    q̈ = G ÿ + g with ÿ from C-ABA for τ_ind = Gᵀτ ([Chignoli23, eq. 3, Alg. 1, §V-D]), one
    kernel call (:mod:`soadyn.kernels.cluster.embedding`) from (q, v) — no position solve,
    y and ẏ taken from (q, v).

    (q, v) must satisfy the constraints (the nonlinear clusters' G and g are taken at q
    as given, and the dependent velocities follow from the independent ones); τ (nv,)
    are spanning-tree joint forces; ``state``, optional, the model's constraints evaluated
    at (q, v) (:func:`~soadyn.closed.evaluate_constraints`): the clusters prepared in
    Python then take their rows K and bias k from it instead of evaluating them again.
    The public entry point is
    ``soadyn.constrained_forward_dynamics(model, q, v, tau, method="embedding")``.
    """
    model = snapshot(model)
    packed = packed_clusters(model)
    cws = cluster_workspace_buffer(model, packed)
    forces = NO_FORCES if f_ext is None else f_ext
    if packed.python_prepared:
        prepare_clusters_at(model, packed, cws, q, v, state, packed.python_prepared)
    try:
        return _EMBED(model, (q, v, tau, forces), (packed.ci, packed.cf, cws, True, GIVEN))[:model.nv]
    except Unsolved:  # q off the manifold (within the caller's tolerance) or singular: the Python path
        prepare_clusters_at(model, packed, cws, q, v, state)
        return _EMBED(model, (q, v, tau, forces), (packed.ci, packed.cf, cws, True, PREPARED))[:model.nv]


def embedding_solve(model, q, v, tau, f_ext=None, gravity=True, copies=False):
    """The compiled embedding method on spanning states (q, v) — single (nq,), (nv,) or a
    batch (B, nq), (B, nv) — of a model whose implicit clusters are all compiled: the
    kernel's output (nv + 2,) or (B, nv + 2), q̈ then the worst position and velocity
    residuals (:func:`~soadyn.kernels.cluster.embedding.worst_residuals`); with
    ``copies``, followed by copies of q, q̇, τ (:func:`input_copies`), which the kernel
    writes state by state in its threads (a batch's result keeps its inputs so: copies in
    the calling thread were a sizeable part of a batched call, ``benchmarks/results/design_notes.md``). Returns None when some cluster is
    prepared in Python; raises :class:`~soadyn.core.status.Unsolved` when some state is
    off the constraint manifold (beyond ``MANIFOLD_TOL``) or singular: the caller then
    takes the Python path."""
    model = snapshot(model)
    tables = _call_tables(model)[0]
    if tables is None:
        return None
    return (_EMBED_COPIES if copies else _EMBED)(model, (q, v, tau, NO_FORCES if f_ext is None else f_ext),
                                                 tables + (gravity, GIVEN))


def input_copies(out, nq, nv):
    """The views (q, q̇, τ) of the copies in an output of :func:`embedding_solve` with
    ``copies`` (or of :func:`embedding_fast`): [q̈ (nv) | worst residuals (2) | q (nq) |
    q̇ (nv) | τ (nv)] along the last axis."""
    o = nv + 2
    return out[..., o:o + nq], out[..., o + nq:o + nq + nv], out[..., o + nq + nv:]


def embedding_fast(model, q, v, tau):
    """The plain call of the compiled embedding method — one state of exact types
    (C-contiguous float64 vectors), gravity on, no external forces — straight into its
    kernel (:func:`~soadyn.kernels.cluster.embedding.embedding_kernel` with this thread's
    packed tables, :func:`_plain_call`): its output as :func:`embedding_solve`'s with
    ``copies`` (q̈, the worst residuals, copies of q, v, τ: :func:`input_copies`), or None
    when it needs the validated path (this thread's first call, a model changed since,
    clusters prepared in Python, other argument types, a kernel status other than OK: the
    validated path then names the cause). One look-up, one allocation, the kernel (with y,
    ẏ, τ_ind, ÿ in the cluster workspace): faster than a kernel of thirteen arguments with
    five look-ups and four allocations (``benchmarks/results/design_notes.md``)."""
    try:  # the common case first: no exception costs nothing (Python 3.11)
        tables, size = model._derived.threads.objects["embedding_plain"]
    except (AttributeError, KeyError):  # an outdated or missing compiled form, or this thread's first call
        return _first_plain_embedding(model, q, v, tau)
    out = np.empty(size)
    try:
        status = _EMBED_PLAIN.fast(tables, q, v, tau, NO_FORCES, True, GIVEN, out)
    except GeneralPath:  # arguments of other types, or this process's first plain call
        return _first_plain_embedding(model, q, v, tau)
    return out if status == 0 else None


def _first_plain_embedding(model, q, v, tau):
    """:func:`embedding_fast` without this thread's (tables, output length) or the kernel's
    compiled version for these argument types: made (compiled or loaded) here once the
    validated path has compiled the model and its clusters; None before, or when some
    cluster is prepared in Python."""
    d = getattr(model, "_derived", None)
    if d is None or d.known("packed_clusters") is None:  # (the validated path builds them, or names why not)
        return None
    plain = _plain_call(model)
    if not plain:
        return None
    c = d.compiled
    tables, size = d.per_thread("embedding_plain", lambda snapshot: (plain[0], input_copies_size.py_func(c.nq, c.nv)))
    if not (val.kernel_vector(q, c.nq) and val.kernel_vector(v, c.nv) and val.kernel_vector(tau, c.nv)):
        return None
    out = np.empty(size)
    status = _EMBED_PLAIN(tables, q, v, tau, NO_FORCES, True, GIVEN, out)
    return out if status == 0 else None


def cluster_motion_subspaces(model, y, yd=None, *, q=None, q_guess=None):
    """The cluster motion subspaces S_k (6n_k, ny_k) and bias terms c_k = Ṡ_k ẏ_k (6n_k,) as
    the compiled recursion forms them ([Chignoli23, eq. 24–26]), for inspection and tests.
    y (nyq,), ẏ (nyv,) optional; ``q``, ``q_guess`` as for :func:`cluster_aba`.
    Returns a list of (S_k, c_k) per cluster; c_k is None without ``yd``."""
    model = snapshot(model)
    with_v = yd is not None
    tree = cluster_tree(model)
    y, yd_checked, q, q_guess = checked_state(model, tree, y, yd, q, q_guess)
    yd = yd_checked if with_v else np.zeros(tree.nyv)
    c = model.compiled
    ws = derived(model).buffer()
    S_all = [np.empty((cl.joint.ny, len(cl.bodies), 6)) for cl in tree.clusters]  # S[j, a]: body a, ẏ_k = e_j
    c_all = [np.empty((len(cl.bodies), 6)) for cl in tree.clusters]

    def call(packed, cws):
        for k in range(len(tree.clusters)):
            status = cluster_subspaces_kernel(c.mi, c.mf, ws, packed.ci, packed.cf, cws, y, yd, with_v, k, S_all[k],
                                              c_all[k])
            if status:
                raise_status(status, ("y", "yd"), model=model)

    _run(model, y, yd if with_v else None, with_v, None, q, q_guess, call)
    return [(S.reshape(S.shape[0], -1).T.copy(), ck.reshape(-1) if with_v else None) for S, ck in zip(S_all, c_all)]


def spanning_state(model, y, yd, q_guess=None):
    """``(q, v) = (γ(y), G(q) ẏ)``: spanning-tree state from independent coordinates
    ([Chignoli23, eq. 3]).

    Parameters: y (nyq,) [rad, m], ẏ (nyv,) [rad/s, m/s] (None means zero); ``q_guess``
    optional (nq,).
    Returns q (nq,), v (nv,). A pure function of its arguments.

    Loop clusters are solved by Gauss–Newton iteration from ``q_guess`` when given, else
    from each cluster's reference configuration — fixed when the model is built, never a
    singular configuration, never an earlier call's solution (see
    :class:`~soadyn.closed.embedding.cluster_joints.ClusterJoint`) — moved to y along its
    branch; the assembly branch nearest the start is found. Dependent revolute angles in
    which the constraints are 2π-periodic are wrapped to (−π, π]; y is kept as given.
    The solve is the cluster kernels' own (:mod:`soadyn.kernels.cluster.implicit`), so
    that ``cluster_aba(model, y, ...)`` and ``cluster_aba(model, y, ..., q=spanning_state(
    model, y, ...)[0])`` agree to the last bit; where it does not converge, or a cluster's
    constraints are Python callables, the Python solve takes over
    (:func:`~soadyn.closed.embedding.clusters.solve_spanning_state`, more starts).
    Raises ConstraintError when a mechanism cannot be assembled at ``y`` or the solution
    is a singular configuration (∂φ/∂q_d rank-deficient: G undefined there).
    """
    model = snapshot(model)
    tables = _call_tables(model)[0]
    if tables is not None:
        nq = model.nq
        ydv = np.zeros(_nyv(model)) if yd is None else yd
        q_arg = ABSENT if q_guess is None else q_guess
        try:
            out = _SPANNING(model, (y, ydv, q_arg), tables + (SOLVE if q_guess is None else GUESS, False))
            return out[:nq], out[nq:]
        except Unsolved:
            pass
    return solve_spanning_state(model, y, yd, q_guess)
