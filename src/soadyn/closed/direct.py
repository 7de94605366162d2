"""The direct (Lagrange-multiplier) method compiled into one kernel
(:mod:`soadyn.kernels.direct`): closed-chain forward dynamics of a tree closed by loop
joints, couplings and transmissions from (q, v, τ) in a single call, batches included.

Models with user constraints (Python callables) use the Python methods of
:mod:`soadyn.closed.cut_joint` instead; :func:`compiled_constraints` says which. The
kernel's output array holds θ̈, a particular λ, the rank of G_c and the constraint
evaluation: :func:`direct_outputs` names its parts, :func:`output_state` makes the
:class:`~soadyn.closed.kinematics.ConstraintState` of one state from them.
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np

from ..core import validation as val
from ..core.batch import Batch
from ..core.call import ABSENT, NO_FORCES, Arg, CompiledFunction, Outputs
from ..core.fast_path import ExactCall, GeneralPath
from ..core.compile import derived, snapshot
from ..core.configuration import random_configuration
from ..core.layout import pack_tables
from ..kernels.direct import (FLOAT_HEADER, INT_HEADER, ROW_TOL, DirectOutputs, direct_kernel,
                              direct_output_size, direct_plain_kernel, direct_work_size, independent_rows,
                              pack_direct_tables)
from .constraint_set import constraint_set
from .kinematics import ConstraintState, evaluate_constraints

__all__ = ["DirectTables", "direct_tables", "compiled_constraints", "direct_solve", "direct_fast", "direct_outputs",
           "output_state", "PIVOT_TOL", "NOT_THE_DEFAULT"]

#: relative pivot threshold of the pivoted Cholesky factorization of A = G_c M⁻¹ G_c*:
#: pivots are squares of singular values of D^{-1/2}[I − HψK]G_c*, so 1e-12 drops rows
#: whose singular value is below ~1e-6 of the largest — redundant rows come out at ~1e-16.
PIVOT_TOL = 1e-12

#: the constraint set of a model packed for the kernel: the tables (``ints``, ``floats``,
#: read by :func:`soadyn.kernels.direct.direct_tables`; the floats carry the settings of
#: the plain call: gravity, no Baumgarte terms, ``PIVOT_TOL``), the same after the
#: model's own tables (``model_ints`` = [mi | ints], ``model_floats`` = [mf | floats], for
#: :func:`~soadyn.kernels.direct.direct_plain_kernel`), the row counts, the kernel's
#: output length and where the output holds max |𝔡|, max |G_c v|
DirectTables = namedtuple("DirectTables", ["ints", "floats", "model_ints", "model_floats", "m", "m_loop",
                                           "output_size", "residuals_at"])


def compiled_constraints(model):
    """True when every constraint of ``model`` is evaluated in compiled code (loop joints,
    couplings and transmissions; user constraints are Python callables)."""
    return direct_tables(model) is not None


def _build_tables(model):
    cs = constraint_set(model)
    if cs.user_blocks:
        return None
    ints, floats = pack_direct_tables(cs.loop_int, cs.loop_float, cs.coupling_v, cs.coupling_q,
                                      np.asarray(cs.coupling_offset, dtype=float), cs.m_loop, _generic_rows(model),
                                      True, 0.0, 0.0, PIVOT_TOL, ROW_TOL)
    c = derived(model).compiled
    return DirectTables(ints, floats, np.concatenate([c.mi, ints]), np.concatenate([c.mf, floats]), cs.m, cs.m_loop,
                        int(direct_output_size(model.nv, cs.m, cs.m_loop)), model.nv + cs.m + 1)


def _generic_rows(model):
    """The rows of G_c that span its row space at a generic configuration (a random one,
    the same for every build of the model): the kernel solves on these first and checks
    that the result satisfies every row (see :mod:`soadyn.kernels.direct`, step 3)."""
    st = evaluate_constraints(model, random_configuration(model, np.random.default_rng(0)), bias=False)
    G = np.ascontiguousarray(st.G)
    rows = np.empty(G.shape[0], dtype=np.int64)
    n = independent_rows(G, rows, np.empty_like(G), st.row_scale, ROW_TOL)
    return np.sort(rows[:n])


def direct_tables(model):
    """The :class:`DirectTables` of ``model`` (built once per model version), or None when
    a constraint is not compiled (a user constraint)."""
    return derived(model).memo("direct_tables", _build_tables)


def _output_shape(c, state, params):
    ints = params[0]  # header: len(li), nc, nq, m_loop, m
    if ints.shape[0] < INT_HEADER:
        return ((0,),)
    return ((int(direct_output_size(c.nv, int(ints[4]), int(ints[3]))),),)


_DIRECT = CompiledFunction(direct_kernel, Batch.stacked(),
                           (Arg("q", "nq"), Arg("v", "nv", optional=True), Arg("tau", "nv"), Arg("f_ext", "forces")),
                           Outputs.computed(_output_shape))
#: the plain call's kernel (:func:`direct_fast`); ``direct_plain``, its non-compiling
#: twin, raises :class:`~soadyn.core.fast_path.GeneralPath` for argument types it has no
#: compiled version for
_PLAIN = ExactCall(direct_plain_kernel)
direct_plain = _PLAIN.fast


def direct_outputs(out, nv, tables):
    """Named views (:class:`~soadyn.kernels.direct.DirectOutputs`) of one output row."""
    m, m_loop = tables.m, tables.m_loop
    o = 0
    views = []
    for n, shape in ((nv, (nv,)), (m, (m,)), (1, (1,)), (2, (2,)), (m * nv, (m, nv)), (m, (m,)), (m, (m,)),
                     (m, (m,)), (12 * m_loop, (m_loop, 12))):
        views.append(out[o:o + n].reshape(shape))
        o += n
    return DirectOutputs(*views)


def output_state(model, views, t=0.0):
    """The :class:`~soadyn.closed.kinematics.ConstraintState` of one state from the kernel's
    output views (:func:`direct_outputs`); loop and coupling rows have 𝔘 = 0."""
    return ConstraintState(constraint_set(model), views.G, np.zeros(views.G.shape[0]), views.ubias, views.resid,
                           views.sel, t, views.scale)


def direct_fast(model, q, v, tau, residual_tol, by_default):
    """The plain call of the compiled direct method in one kernel call
    (:func:`~soadyn.kernels.direct.direct_plain_kernel`): ``(out, plain)``, the kernel's
    output and this thread's :class:`PlainCall`; with ``by_default``, ``NOT_THE_DEFAULT``
    when the model's default method is known to be the other compiled one (embedding); or
    None when it needs the validated path (:func:`direct_solve`): a model without compiled
    tables or with an outdated compiled form, this thread's first call, arguments of other
    types (lists, batches, None, integer or strided arrays), a kernel status other than
    OK, or a residual above ``residual_tol`` (a float; ``inf``: no check). Gravity on, no
    external forces, no Baumgarte terms. The validated path raises the error that names
    what was wrong.

    One look-up finds all the call needs (:class:`PlainCall`), then one allocation and
    the kernel, its scratch in the thread's array: on a four-bar, look-ups and allocations
    are a measurable part of the call (``benchmarks/results/design_notes.md``)."""
    try:  # the common case first: no exception costs nothing (Python 3.11)
        plain = model._derived.threads.objects["direct_plain"]
    except (AttributeError, KeyError):  # an outdated or missing compiled form, or this thread's first plain call
        return _first_plain_call(model, q, v, tau, residual_tol, by_default)
    if by_default and not plain.by_default:
        if plain.by_default is not None:
            return NOT_THE_DEFAULT
        plain = _with_default(model, plain)
        if not plain.by_default:  # (known now, or still unknown: the validated path chooses it)
            return None if plain.by_default is None else NOT_THE_DEFAULT
    out = np.empty(plain.output_size)
    try:
        status = direct_plain(plain.packed, q, v, tau, residual_tol, out)
    except GeneralPath:  # arguments of other types, or this process's first plain call
        return _run_plain(model, plain, q, v, tau, residual_tol)
    return (out, plain) if status == 0 else None


def _run_plain(model, plain, q, v, tau, residual_tol):
    """The plain kernel with this thread's :class:`PlainCall` ``plain``."""
    out = np.empty(plain.output_size)
    try:
        status = direct_plain(plain.packed, q, v, tau, residual_tol, out)
    except GeneralPath:
        if not (val.kernel_vector(q, model.nq) and val.kernel_vector(v, model.nv)
                and val.kernel_vector(tau, model.nv)):
            return None
        # this process's first plain call: compile (or load) the kernel for these types
        status = _PLAIN(plain.packed, q, v, tau, residual_tol, out)
    return (out, plain) if status == 0 else None


#: :func:`direct_fast`'s answer, asked for the default method, when the model's default is
#: the other compiled method (constraint embedding, :func:`soadyn.closed.default_method`):
#: the caller goes to that method's plain call without looking the default up again. False,
#: as None is: the caller tells a result from both by one truth test
NOT_THE_DEFAULT = False

#: what the plain call of a model version needs on one thread, in one look-up: the
#: thread's one array of the model's and the constraints' tables and a workspace
#: (``packed``: :func:`~soadyn.core.layout.pack_tables` of [mi | ints], [mf | floats] and a
#: workspace followed by the kernel's scratch, :func:`~soadyn.kernels.direct.direct_work_size`;
#: written per call: each thread has its own), the :class:`DirectTables`, the
#: kernel's output length and whether the direct method is the model's default
#: (``by_default``; None while that is unknown)
PlainCall = namedtuple("PlainCall", ["packed", "tables", "output_size", "by_default"])


def _first_plain_call(model, q, v, tau, residual_tol, by_default):
    """:func:`direct_fast` on this thread's first plain call: makes its :class:`PlainCall`
    once the validated path has built the tables (until then, None: the validated path)."""
    d = getattr(model, "_derived", None)
    if d is None:
        return None
    tables = d.known("direct_tables")
    if tables is None:
        return None

    def build(snapshot):
        default = d.known("default_method")
        return PlainCall(packed_plain_tables(snapshot, tables), tables, tables.output_size,
                         None if default is None else default == "direct")

    plain = d.per_thread("direct_plain", build)
    if by_default and not plain.by_default:
        plain = _with_default(model, plain)
        if not plain.by_default:
            return None if plain.by_default is None else NOT_THE_DEFAULT
    return _run_plain(model, plain, q, v, tau, residual_tol)


def packed_plain_tables(model, tables):
    """The one array :func:`~soadyn.kernels.direct.direct_plain_kernel` takes: the model's
    and the constraints' tables (``tables``, :func:`direct_tables`) and a new workspace,
    copied into it."""
    c = derived(model).compiled
    work = np.zeros(direct_work_size(c.nb, c.nv, tables.m, tables.m - tables.m_loop))
    return pack_tables(tables.model_ints, tables.model_floats, work)


def _with_default(model, plain):
    """This thread's :class:`PlainCall` with ``by_default`` set once the model's default
    method is known (it is chosen on the first call without ``method=``)."""
    d = model._derived
    default = d.known("default_method")
    if default is None or plain.by_default is not None:
        return plain
    plain = d.threads.objects["direct_plain"] = plain._replace(by_default=default == "direct")
    return plain


def direct_solve(model, q, v, tau, f_ext=None, *, gravity=True, baumgarte=None, pivot_tol=PIVOT_TOL,
                 rank_tol=ROW_TOL, tables=None):
    """Run the compiled direct method; returns the raw output array, (size,) or (B, size)
    for a batch (read it with :func:`direct_outputs`). ``v``, ``f_ext`` may be None (zero);
    ``baumgarte`` None or checked gains (α, β) [1/s]; ``rank_tol``: the relative tolerance
    of the rows kept (:func:`~soadyn.kernels.direct.independent_rows`), ``pivot_tol`` the
    relative pivot threshold of the factorization of A (both checked by the caller);
    ``tables``: :func:`direct_tables` (looked up when None)."""
    model = snapshot(model)
    t = direct_tables(model) if tables is None else tables
    if t is None:
        names = [b.name for b in constraint_set(model).user_blocks]
        raise ValueError(f"model {model.name!r}: the compiled direct method takes loop joints, couplings and "
                         f"transmissions; the user constraints {names} need a Python method "
                         "(method='augmented', 'projection')")
    floats = t.floats
    if not (gravity is True and baumgarte is None and pivot_tol == PIVOT_TOL and rank_tol == ROW_TOL):
        alpha, beta = (0.0, 0.0) if baumgarte is None else baumgarte  # other settings: a copy
        floats = floats.copy()
        floats[:FLOAT_HEADER] = (1.0 if val.GRAVITY(gravity) else 0.0, alpha, beta, float(pivot_tol), float(rank_tol))
    if type(q) is np.ndarray and q.ndim == 1:
        out = np.empty(t.output_size)
    else:
        out = np.empty(((len(q),) if np.ndim(q) == 2 else ()) + (t.output_size,))
    return _DIRECT(model, (q, ABSENT if v is None else v, tau, NO_FORCES if f_ext is None else f_ext),
                   (t.ints, floats), out)
