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
from ..core.call import ABSENT, NO_FORCES, Arg, CompiledFunction
from ..core.compile import derived
from ..kernels.direct import DirectOutputs, direct_batch, direct_kernel, direct_output_size
from ..kernels.loops import loop_row_count
from .constraint_set import constraint_set
from .kinematics import ConstraintState

__all__ = ["DirectTables", "direct_tables", "compiled_constraints", "direct_solve", "direct_outputs",
           "output_state", "PIVOT_TOL"]

#: relative pivot threshold of the pivoted Cholesky factorization of A = G_c M⁻¹ G_c*:
#: pivots are squares of singular values of D^{-1/2}[I − HψK]G_c*, so 1e-12 drops rows
#: whose singular value is below ~1e-6 of the largest — redundant rows come out at ~1e-16.
PIVOT_TOL = 1e-12

#: the constraint set of a model packed for the kernel: the loop tables, the coupling rows,
#: the row counts and the kernel's output length
DirectTables = namedtuple("DirectTables", ["loop_int", "loop_float", "coupling_v", "coupling_q", "coupling_offset",
                                           "m", "m_loop", "output_size"])

_NO_STABILIZATION = np.zeros(2)


def compiled_constraints(model):
    """True when every constraint of ``model`` is evaluated in compiled code (loop joints,
    couplings and transmissions; user constraints are Python callables)."""
    return direct_tables(model) is not None


def _build_tables(model):
    cs = constraint_set(model)
    if cs.user_blocks:
        return None
    size = int(direct_output_size(model.nv, cs.m, cs.m_loop))
    return DirectTables(cs.loop_int, cs.loop_float, np.ascontiguousarray(cs.coupling_v),
                        np.ascontiguousarray(cs.coupling_q), np.ascontiguousarray(cs.coupling_offset, dtype=float),
                        cs.m, cs.m_loop, size)


def direct_tables(model):
    """The :class:`DirectTables` of ``model`` (built once per model version), or None when
    a constraint is not compiled (a user constraint)."""
    return derived(model).memo("direct_tables", lambda: _build_tables(model))


def _output_shape(c, state, params):
    li, lf, coupling_v = params[0], params[1], params[2]
    m_loop = int(loop_row_count(li, lf))
    return ((int(direct_output_size(c.nv, m_loop + coupling_v.shape[0], m_loop)),),)


_DIRECT = CompiledFunction(direct_kernel, direct_batch,
                           (Arg("q", "nq"), Arg("v", "nv", optional=True), Arg("tau", "nv"), Arg("f_ext", "forces")),
                           _output_shape, params=(None, None, None, None, None, val.GRAVITY, None, float))


def direct_outputs(out, nv, tables):
    """Named views (:class:`~soadyn.kernels.direct.DirectOutputs`) of one output row."""
    m, m_loop = tables.m, tables.m_loop
    o = 0
    views = []
    for n, shape in ((nv, (nv,)), (m, (m,)), (1, (1,)), (2, (2,)), (m * nv, (m, nv)), (m, (m,)), (m, (m,)),
                     (12 * m_loop, (m_loop, 12))):
        views.append(out[o:o + n].reshape(shape))
        o += n
    return DirectOutputs(*views)


def output_state(model, views, t=0.0):
    """The :class:`~soadyn.closed.kinematics.ConstraintState` of one state from the kernel's
    output views (:func:`direct_outputs`); loop and coupling rows have 𝔘 = 0."""
    return ConstraintState(constraint_set(model), views.G, np.zeros(views.G.shape[0]), views.ubias, views.resid,
                           views.sel, t)


def direct_solve(model, q, v, tau, f_ext=None, *, gravity=True, baumgarte=None, pivot_tol=PIVOT_TOL,
                 tables=None):
    """Run the compiled direct method; returns the raw output array, (size,) or (B, size)
    for a batch (read it with :func:`direct_outputs`). ``v``, ``f_ext`` may be None (zero);
    ``tables``: :func:`direct_tables` (looked up when None)."""
    t = direct_tables(model) if tables is None else tables
    if t is None:
        names = [b.name for b in constraint_set(model).user_blocks]
        raise ValueError(f"model {model.name!r}: the compiled direct method takes loop joints, couplings and "
                         f"transmissions; the user constraints {names} need a Python method "
                         "(method='augmented', 'projection')")
    stab = _NO_STABILIZATION if baumgarte is None else np.array(baumgarte, dtype=float).reshape(2)
    if type(q) is np.ndarray and q.ndim == 1:
        out = np.empty(t.output_size)
    else:
        out = np.empty(((len(q),) if np.ndim(q) == 2 else ()) + (t.output_size,))
    return _DIRECT(model, (q, ABSENT if v is None else v, tau, NO_FORCES if f_ext is None else f_ext),
                   (t.loop_int, t.loop_float, t.coupling_v, t.coupling_q, t.coupling_offset, gravity, stab,
                    pivot_tol), out)
