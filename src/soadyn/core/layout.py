"""The flat array form of a model and of the kernels' workspace, read through named views.

Every compiled kernel receives a model as two flat arrays — ``mi`` (integers) and ``mf``
(reals) — and one flat float64 workspace ``ws``: each crossing from Python into Numba
costs about 0.1 µs per array argument, so a few large arrays beat many small ones.
Inside a kernel, :func:`model_tables` and :func:`workspace_views` carve them into named,
shaped views (``m.parent[i]``, ``m.gravity``, ``w.P[k]``, ``w.U[c]``) — free at run time:
no copy, no allocation, no reference counting (see :func:`carve`).

Body quantities are indexed by body ``i`` (parent-first order); joint-map quantities by
the velocity index. Spatial vectors are angular-first ([ω; v], [n; f]) and expressed in
the body frame unless the name says world.
"""
from __future__ import annotations

from collections import namedtuple
from types import FunctionType

import numpy as np
from numba import types
from numba.core import cgutils
from numba.core.imputils import impl_ret_borrowed
from numba.extending import intrinsic
from numba.np.arrayobj import make_array, populate_array

from .jit import njit
from .joints import PRISMATIC, REVOLUTE


@intrinsic
def carve(typingctx, buf, offset, shape):
    """``buf[offset:offset + prod(shape)].reshape(shape)`` as a C-contiguous view.

    ``ndarray.reshape`` in Numba calls an opaque C routine and checks the size at run
    time (about 30 ns per view); this builds the view's shape and strides directly, so
    the compiler sees constant inner strides. The view is *borrowed*: it holds no
    reference to ``buf``'s memory (no reference counting, which saves ~0.1 µs of atomic
    operations per kernel call), so it is valid only while ``buf`` is alive — use it
    inside kernels and copy anything a kernel returns. No bounds check: callers use the
    sizes computed here.
    """
    if isinstance(shape, types.Integer):
        nd = 1
    elif isinstance(shape, types.BaseTuple) and all(isinstance(d, types.Integer) for d in shape.types):
        nd = len(shape.types)
    else:
        return None
    if not isinstance(buf, types.Array) or buf.ndim != 1 or buf.layout != "C":
        return None
    retty = types.Array(buf.dtype, nd, "C")
    sig = retty(buf, offset, shape)

    def codegen(context, builder, sig, args):
        ary = make_array(sig.args[0])(context, builder, args[0])
        intp = context.get_value_type(types.intp)
        if isinstance(sig.args[2], types.Integer):
            dims = [context.cast(builder, args[2], sig.args[2], types.intp)]
        else:
            dims = [context.cast(builder, d, ty, types.intp)
                    for d, ty in zip(cgutils.unpack_tuple(builder, args[2], nd), sig.args[2].types)]
        off = context.cast(builder, args[1], sig.args[1], types.intp)
        itemsize = context.get_abi_sizeof(context.get_data_type(sig.args[0].dtype))
        strides = []
        step = intp(itemsize)
        for d in reversed(dims):
            strides.append(step)
            step = builder.mul(step, d)
        view = make_array(retty)(context, builder)
        populate_array(view, data=cgutils.gep_inbounds(builder, ary.data, off), shape=dims,
                       strides=strides[::-1], itemsize=intp(itemsize), meminfo=None,
                       parent=None)
        return impl_ret_borrowed(context, builder, retty, view._getvalue())

    return sig, codegen


@intrinsic
def rows(typingctx, x, first, count):
    """``x[first:first + count]`` — rows along the first axis of the C-contiguous ``x``, of
    any dimension — as a *borrowed* view of the same type (see :func:`carve`: no reference
    counting, valid while ``x`` is alive). No bounds check."""
    if not (isinstance(x, types.Array) and x.layout == "C" and isinstance(first, types.Integer)
            and isinstance(count, types.Integer)):
        return None
    sig = x(x, first, count)

    def codegen(context, builder, sig, args):
        ary = make_array(sig.args[0])(context, builder, args[0])
        intp = context.get_value_type(types.intp)
        start = context.cast(builder, args[1], sig.args[1], types.intp)
        n = context.cast(builder, args[2], sig.args[2], types.intp)
        shape = cgutils.unpack_tuple(builder, ary.shape, x.ndim)
        row = intp(1)  # entries per row
        for d in shape[1:]:
            row = builder.mul(row, d)
        view = make_array(sig.return_type)(context, builder)
        populate_array(view, data=cgutils.gep_inbounds(builder, ary.data, builder.mul(start, row)),
                       shape=[n] + shape[1:], strides=cgutils.unpack_tuple(builder, ary.strides, x.ndim),
                       itemsize=ary.itemsize, meminfo=None, parent=None)
        return impl_ret_borrowed(context, builder, sig.return_type, view._getvalue())

    return sig, codegen


@njit(forceinline=True, cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def borrow(x):
    """``x`` (a C-contiguous vector) as a borrowed view (see :func:`carve`).

    A kernel's array arguments own their memory: each call of a non-inlined pass that
    receives one increments and decrements its reference count (two atomic operations,
    ~20–50 ns a pass on this machine kind). A kernel that hands its arguments to several
    passes borrows them once at entry; the views are valid for the kernel's duration."""
    return carve(x, 0, x.shape[0])


# =========================================================================== stacked states
# A kernel that evaluates "B states stored one after another" takes each state argument and
# output with the states' rows concatenated along its first axis — q (B·nq,), f_ext
# (B·nb, 6), M (B·nv, nv) — B = 1 for a single call, a block of a batch's rows otherwise
# (:func:`soadyn.core.call.stacked_block`). One compiled entry point then serves both:
# a batched twin re-optimises and re-compiles the kernel's whole linked closure (0.1–1.4 s
# of a cold compile each, measured 2026-11-28), which the states' loop does not need.
@njit(forceinline=True, cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def state_count(length, size):
    """B: the number of states of ``size`` entries in an argument of ``length`` entries; 1
    when ``length`` is not a positive multiple of ``size`` (one state of a wrong length,
    which the kernel's shape checks reject)."""
    if size <= 0 or length <= 0 or length % size != 0:
        return 1
    return length // size


@njit(forceinline=True, cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def state_of(x, b, B):
    """State ``b`` of the ``B`` states stored one after another along the first axis of
    the C-contiguous ``x`` — its rows b·n … (b + 1)·n − 1, n = len(x) / B — as a borrowed
    view (:func:`rows`): ``x`` itself, borrowed, for B = 1; an empty ``x`` (an absent rate
    or force) stays empty. A length that is not a multiple of B gives views whose length
    the kernel's shape checks reject."""
    n = x.shape[0] // B
    return rows(x, b * n, n)

# =========================================================================== model tables
#: Integer fields of ``mi``, one entry per body, after a header (nb, nq, nv):
#: ``parent`` (−1: the world), ``joint_type`` (a code of :mod:`soadyn.core.joints`),
#: ``q_index``/``v_index`` and ``joint_nq``/``joint_nv`` (the joint's slice of q and v),
#: ``n_sub``/``sub_kinds`` (composite joints: number of sub-hinges, bit k set for a
#: translational sub-hinge k), ``axis_code`` (±(k + 1) when a 1-dof revolute or
#: prismatic joint's map H* is the single column ±e_k, k = 0..5 angular-first, else 0:
#: the kernels' unit-axis fast paths), ``rotated`` (0 when the joint placement has no
#: rotation).
INT_FIELDS = ("parent", "joint_type", "q_index", "v_index", "joint_nq", "joint_nv", "n_sub", "sub_kinds",
              "axis_code", "rotated")
MODEL_HEADER = 3

#: Real fields of ``mf``: ``inertia`` (nb, 6, 6) spatial inertia M(k) about the body
#: origin; ``rigid`` (nb, 10) the same in 10-parameter form (m, h = m c (3), I_o upper
#: triangle I00, I01, I02, I11, I12, I22) for the cheaper products of
#: :mod:`soadyn.kernels.primitives`; ``rot_tree``/``pos_tree`` the pose of the joint
#: frame in the parent body frame; ``axes`` (nb, 3, 3) joint axes (rows); ``pitch``
#: helical pitch [m/rad]; ``mass``, ``com`` (body frame); ``gravity`` (3,) world frame.
ModelTables = namedtuple("ModelTables", ("nb", "nq", "nv") + INT_FIELDS + (
    "inertia", "rigid", "rot_tree", "pos_tree", "axes", "pitch", "mass", "com", "gravity"))


N_INT_FIELDS = len(INT_FIELDS)


@njit(forceinline=True, cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def model_int_size(nb):
    """Length of ``mi`` for ``nb`` bodies."""
    return MODEL_HEADER + N_INT_FIELDS * nb


@njit(forceinline=True, cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def model_float_size(nb):
    """Length of ``mf`` for ``nb`` bodies."""
    return nb * (36 + 10 + 9 + 3 + 9 + 1 + 1 + 3) + 3


@njit(forceinline=True, cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def model_tables(mi, mf):
    """Named views of a packed model (:class:`ModelTables`; borrowed, see :func:`carve`)."""
    nb = mi[0]
    o = MODEL_HEADER
    parent = carve(mi, o, nb); o += nb
    joint_type = carve(mi, o, nb); o += nb
    q_index = carve(mi, o, nb); o += nb
    v_index = carve(mi, o, nb); o += nb
    joint_nq = carve(mi, o, nb); o += nb
    joint_nv = carve(mi, o, nb); o += nb
    n_sub = carve(mi, o, nb); o += nb
    sub_kinds = carve(mi, o, nb); o += nb
    axis_code = carve(mi, o, nb); o += nb
    rotated = carve(mi, o, nb)
    o = 0
    inertia = carve(mf, o, (nb, 6, 6)); o += nb * 36
    rigid = carve(mf, o, (nb, 10)); o += nb * 10
    rot_tree = carve(mf, o, (nb, 3, 3)); o += nb * 9
    pos_tree = carve(mf, o, (nb, 3)); o += nb * 3
    axes = carve(mf, o, (nb, 3, 3)); o += nb * 9
    pitch = carve(mf, o, nb); o += nb
    mass = carve(mf, o, nb); o += nb
    com = carve(mf, o, (nb, 3)); o += nb * 3
    gravity = carve(mf, o, 3)
    return ModelTables(nb, mi[1], mi[2], parent, joint_type, q_index, v_index, joint_nq, joint_nv, n_sub,
                       sub_kinds, axis_code, rotated, inertia, rigid, rot_tree, pos_tree, axes, pitch, mass,
                       com, gravity)


@njit(forceinline=True, cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def split_model_tables(mti, mtf):
    """``(ok, mi, mf, rest_i, rest_f)``: borrowed views of a model's packed tables
    followed by other tables in one int array ``mti`` = [mi | rest_i] and one float array
    ``mtf`` = [mf | rest_f] (the plain-call kernels take them so: Numba's dispatcher costs
    ~0.15 µs per array argument). ``ok`` is False when the arrays are too short for the
    model their header describes, or empty (the views are then meaningless)."""
    nb = mti[0] if mti.shape[0] > 0 else -1
    ni, nf = model_int_size(nb), model_float_size(nb)
    ok = nb >= 0 and mti.shape[0] >= ni and mtf.shape[0] >= nf
    if not ok:
        ni, nf = 0, 0
    return (ok, carve(mti, 0, ni), carve(mtf, 0, nf), carve(mti, ni, mti.shape[0] - ni),
            carve(mtf, nf, mtf.shape[0] - nf))


def pack_tables(ints, floats, work):
    """One float64 array for a plain-call kernel: [len(ints), len(floats) (int64 bits) |
    ints (int64 bits) | floats | work]. Numba's dispatcher costs about 0.15 µs per array
    argument, and the plain calls pass the model's tables, their own and a thread's
    workspace (the ``work`` part, written per call: each thread has its own copy of the
    array). :func:`split_tables` undoes it inside the kernel."""
    ints = np.ascontiguousarray(ints, dtype=np.int64)
    head = np.array([ints.shape[0], len(floats)], dtype=np.int64)
    return np.concatenate([head.view(np.float64), ints.view(np.float64), floats, work])


@njit(forceinline=True, cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def split_tables(tables):
    """``(ok, ints, floats, work)``: borrowed views of an array of :func:`pack_tables`;
    ``ok`` is False when the array is shorter than its header says (the views are then
    empty)."""
    ni, nf = 0, 0
    if tables.shape[0] >= 2:
        head = carve(tables, 0, 2).view(np.int64)
        ni, nf = head[0], head[1]
    ok = ni >= 0 and nf >= 0 and 2 + ni + nf <= tables.shape[0]
    if not ok:
        ni, nf = 0, 0
    rest = tables.shape[0] - 2 - ni - nf if ok else 0
    return ok, carve(tables, 2, ni).view(np.int64), carve(tables, 2 + ni, nf), carve(tables, 2 + ni + nf, rest)


def _numpy_carve(buf, offset, shape):
    """:func:`carve` for Python callers: the same elements as a NumPy view of ``buf``."""
    return buf[offset:offset + int(np.prod(shape))].reshape(shape)


# The view builder, the sizes of the packed arrays and of the workspace are compiled
# without the entry points that let Python call them (``no_cpython_wrapper``: the wrapper
# of model_tables boxes 22 arrays into a named tuple, ~1 s of cold compilation in every
# process); Python runs their own code instead: the sizes' Python functions, and
# model_tables' code with carve taking NumPy views.
numpy_model_tables = FunctionType(model_tables.py_func.__code__,
                                  dict(model_tables.py_func.__globals__, carve=_numpy_carve), "numpy_model_tables")
numpy_model_tables.__doc__ = ":func:`model_tables` for Python callers (writable NumPy views of ``mi`` and ``mf``)."


def pack_model(bodies, gravity, nq, nv):
    """``(mi, mf)`` for a list of bodies (:class:`soadyn.core.model.Body`)."""
    nb = len(bodies)
    mi = np.zeros(model_int_size.py_func(nb), dtype=np.int64)
    mf = np.zeros(model_float_size.py_func(nb))
    mi[:MODEL_HEADER] = (nb, nq, nv)
    m = numpy_model_tables(mi, mf)
    for i, b in enumerate(bodies):
        j = b.joint
        kinds = j.subkinds()
        m.parent[i] = b.parent
        m.joint_type[i] = j.code
        m.q_index[i], m.v_index[i], m.joint_nq[i], m.joint_nv[i] = j.q_index, j.v_index, j.nq, j.nv
        m.n_sub[i] = len(kinds)
        m.sub_kinds[i] = sum(1 << k for k, kind in enumerate(kinds) if kind == 1)
        m.rotated[i] = int(not np.array_equal(b.placement[0], np.eye(3)))
        if j.code == REVOLUTE or j.code == PRISMATIC:
            for k in range(3):
                for sign in (1, -1):
                    if np.array_equal(j.axis, sign * np.eye(3)[k]):
                        m.axis_code[i] = sign * (k + 1 + (3 if j.code == PRISMATIC else 0))
        I = b.inertia
        m.inertia[i] = I
        m.rigid[i] = (b.mass, I[2, 4], I[0, 5], I[1, 3], I[0, 0], I[0, 1], I[0, 2], I[1, 1], I[1, 2], I[2, 2])
        m.rot_tree[i] = b.placement[0]
        m.pos_tree[i] = b.placement[1]
        m.axes[i] = j.axes()
        m.pitch[i] = j.pitch
        m.mass[i] = b.mass
        m.com[i] = b.com
    m.gravity[:] = gravity
    return mi, mf


# =========================================================================== workspace
#: Per-call buffers of the tree kernels (:func:`workspace_views`), in SOA notation:
#:
#: * ``R, t`` (nb, 3, 3), (nb, 3): pose of body k in its parent (joint included), which
#:   defines φ(℘(k), k); ``Rw, pw``: world pose of body k; ``Rj, pj``: the joint alone;
#: * ``S`` (nv, 6): the columns of the joint maps H*(k) (Featherstone's S);
#: * ``V``, ``alpha``, ``f`` (nb, 6): body velocity V(k), acceleration α(k) and force f(k);
#:   ``coriolis`` (nb, 6): the Coriolis term a(k); ``z`` (nb, 6): the articulated bias
#:   force z(k) (z⁺(k) after the gather);
#: * ``P``, ``Dinv`` (nb, 6, 6): articulated (or composite) inertia P(k), D⁻¹(k) in the
#:   top-left joint_nv × joint_nv block;
#: * ``U`` (nv, 6): the columns of P(k)H*(k); ``Gt`` (nv, 6): the rows of the Kalman gain
#:   G*(k) = D⁻¹(k)U(k)ᵀ; ``eps`` (nv,): the innovations ε(k) = T(k) − H(k)z(k);
#: * ``Sw`` (nv, 6): the joint-map columns in world axes at the world origin;
#: * ``crb`` (nb, 10): composite rigid-body inertias R(k) in 10-parameter form;
#: * ``sincos`` (2, nq): sin and cos of every entry of q (of use for the angles of
#:   revolute joints; :func:`soadyn.kernels.kinematics.joint_sincos`);
#: * ``scratch`` (6, 6, 6), and the same memory as one vector, ``scratch_vector`` (216,),
#:   for a pass to carve its own small arrays from (a kernel must not carve views from an
#:   array it allocates itself: the views are borrowed, see :func:`carve`);
#: * ``aux``, the rest (:func:`workspace_size`): the scratch of the kernels that need more than the
#:   views above, each carving its own arrays from it. The kernels are compiled without
#:   reference counting (:mod:`soadyn.core.jit`) and allocate nothing: what a call needs
#:   beyond its arguments is in the workspace.
WorkspaceViews = namedtuple("WorkspaceViews", (
    "R", "t", "Rw", "pw", "Rj", "pj", "S", "V", "alpha", "f", "coriolis", "z", "P", "Dinv", "U", "Gt",
    "eps", "Sw", "crb", "sincos", "scratch", "scratch_vector", "aux"))


@njit(forceinline=True, cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def workspace_size(nb, nv):
    """Length of the flat workspace of a model with ``nb`` bodies and ``nv`` velocities
    (Python calls ``workspace_size.py_func``: its body calls no compiled function)."""
    # (sincos: 2 nq ≤ 2 (nb + nv) entries, a joint having at most one more coordinate than
    # velocities.) ``aux`` is the rest after ``scratch``, at least the last term: the most any
    # of its users takes — the RNEA derivatives' buffer (42 nv + 44 nb,
    # soadyn.kernels.derivatives.derivative_size), a rollout's six stage vectors
    # (6 max(nq, nv) ≤ 6 (nb + nv)), the partitioned inertias' and the operational-space
    # diagonal's small blocks (60 and 36)
    return (nb * (6 * 9 + 5 * 6 + 2 * 36 + 10 + 2) + nv * (4 * 6 + 1 + 2) + 6 * 36
            + max(42 * nv + 44 * nb, 6 * (nb + nv), 64))


@njit(forceinline=True, cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def workspace_views(ws, m):
    """Named views (:class:`WorkspaceViews`; borrowed, see :func:`carve`) of the flat
    workspace ``ws`` for the model tables ``m``."""
    nb, nv = m.nb, m.nv
    o = 0
    R = carve(ws, o, (nb, 3, 3)); o += nb * 9
    t = carve(ws, o, (nb, 3)); o += nb * 3
    Rw = carve(ws, o, (nb, 3, 3)); o += nb * 9
    pw = carve(ws, o, (nb, 3)); o += nb * 3
    Rj = carve(ws, o, (nb, 3, 3)); o += nb * 9
    pj = carve(ws, o, (nb, 3)); o += nb * 3
    V = carve(ws, o, (nb, 6)); o += nb * 6
    alpha = carve(ws, o, (nb, 6)); o += nb * 6
    f = carve(ws, o, (nb, 6)); o += nb * 6
    coriolis = carve(ws, o, (nb, 6)); o += nb * 6
    z = carve(ws, o, (nb, 6)); o += nb * 6
    P = carve(ws, o, (nb, 6, 6)); o += nb * 36
    Dinv = carve(ws, o, (nb, 6, 6)); o += nb * 36
    crb = carve(ws, o, (nb, 10)); o += nb * 10
    S = carve(ws, o, (nv, 6)); o += nv * 6
    U = carve(ws, o, (nv, 6)); o += nv * 6
    Gt = carve(ws, o, (nv, 6)); o += nv * 6
    Sw = carve(ws, o, (nv, 6)); o += nv * 6
    eps = carve(ws, o, nv); o += nv
    sincos = carve(ws, o, (2, m.nq)); o += 2 * (nb + nv)
    scratch = carve(ws, o, (6, 6, 6))
    scratch_vector = carve(ws, o, 6 * 36)
    o += 6 * 36
    aux = carve(ws, o, workspace_size(nb, nv) - o)
    return WorkspaceViews(R, t, Rw, pw, Rj, pj, S, V, alpha, f, coriolis, z, P, Dinv, U, Gt, eps, Sw, crb,
                          sincos, scratch, scratch_vector, aux)


@njit(forceinline=True, cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def sizes_match(m, q, ws):
    """True when ``q`` has length nq and ``ws`` is large enough for the model tables
    ``m``: the kernels' own shape check (their callers may skip validating in Python)."""
    return q.shape[0] == m.nq and ws.shape[0] >= workspace_size(m.nb, m.nv)
