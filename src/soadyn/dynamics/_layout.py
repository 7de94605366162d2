"""Flat array form of a model and of the kernels' workspace.

Every compiled kernel receives the model as two arrays — ``mi`` (integers, one row
per body) and ``mf`` (all real parameters in one flat float64 buffer) — and one flat
float64 workspace ``ws``. Each crossing from Python into Numba costs about 0.1 µs
per array argument, so packing keeps the per-call overhead small; inside a kernel
``model_views`` and ``workspace_views`` carve the buffers into named, shaped views
once per call (free: no copy, no allocation of data). Fields added later follow the
original ones (``model_extra_views``, ``extra_views``), so the original offsets and
view tuples stay as they were.

Body quantities are indexed by body ``i`` (parent-first order); dof quantities by
the velocity index. All vectors are angular-first and expressed in the body frame
unless the name says world.
"""
from __future__ import annotations

import numpy as np
from numba import get_num_threads, njit, types
from numba.core import cgutils
from numba.core.imputils import impl_ret_borrowed
from numba.extending import intrinsic
from numba.np.arrayobj import make_array, populate_array

# columns of the integer model array ``mi``
PARENT, JTYPE, QIDX, VIDX, NQ, NV, NSUB, SUBKINDS = range(8)
# Columns that let the kernels take specialised paths (appended, so the ones above keep
# their numbers): AXIS = ±(k + 1) when the joint map of a 1-dof revolute or prismatic
# joint is the single column ±e_k (k = 0..5, angular-first), else 0; ROTATED = 0 when
# the joint placement's rotation is exactly the identity, else 1.
AXIS, ROTATED = 8, 9
N_INT_COLUMNS = 10


@intrinsic
def carve(typingctx, buf, offset, shape):
    """``buf[offset:offset + prod(shape)].reshape(shape)`` as a C-contiguous view.

    ``ndarray.reshape`` in Numba calls an opaque C routine and checks the size at run
    time (about 30 ns per view, ~0.8 µs per call for the two view tuples); this builds
    the view's shape and strides directly, so the compiler sees constant inner strides.
    The view is *borrowed*: it holds no reference to ``buf``'s memory (no reference
    counting, which saves ~0.1 µs of atomic operations per kernel call), so it is valid
    only while ``buf`` is alive — use it inside kernels and copy anything a kernel
    returns. No bounds check: callers use the sizes of ``model_float_size`` and
    ``workspace_size``.
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
        if nd == 1:
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


def model_float_size(nb):
    return _model_views_size(nb) + nb * 10


@njit(inline="always", cache=True)
def _model_views_size(nb):
    return nb * (36 + 9 + 3 + 9 + 1 + 1 + 3) + 3


@njit(inline="always", cache=True)
def model_extra_views(mf, nb):
    """Views of the model fields that follow those of :func:`model_views` (borrowed).

    Returns ``(rigid,)``: ``rigid`` (nb, 10) is each body's spatial inertia in
    10-parameter form (m, h = m c (3), I_o upper triangle (I00, I01, I02, I11, I12,
    I22)) about the body origin, body axes — the same inertia as ``inertia[i]``,
    for the cheaper products of ``_primitives.rigid_inertia_times``.
    """
    rigid = carve(mf, _model_views_size(nb), (nb, 10))
    return (rigid,)


@njit(inline="always", cache=True)
def model_views(mf, nb):
    """Views of the flat model buffer (borrowed, see :func:`carve`).

    Returns ``(inertia (nb,6,6), rot_tree (nb,3,3), pos_tree (nb,3), axes (nb,3,3),
    pitch (nb,), mass (nb,), com (nb,3), gravity (3,))``: body spatial inertia about the
    body origin; pose of the joint frame in the parent body frame; joint axes (rows);
    helical pitch; mass, centre of mass (body frame) and gravity (world frame).
    """
    o = 0
    inertia = carve(mf, o, (nb, 6, 6)); o += nb * 36
    rot_tree = carve(mf, o, (nb, 3, 3)); o += nb * 9
    pos_tree = carve(mf, o, (nb, 3)); o += nb * 3
    axes = carve(mf, o, (nb, 3, 3)); o += nb * 9
    pitch = carve(mf, o, nb); o += nb
    mass = carve(mf, o, nb); o += nb
    com = carve(mf, o, (nb, 3)); o += nb * 3
    gravity = carve(mf, o, 3)
    return inertia, rot_tree, pos_tree, axes, pitch, mass, com, gravity


@njit(inline="always", cache=True)
def workspace_size(nb, nv):
    """Length of the flat workspace of a model with ``nb`` bodies and ``nv`` velocities."""
    return _views_size(nb, nv) + nb * 10


@njit(inline="always", cache=True)
def _views_size(nb, nv):
    return nb * (9 + 3 + 9 + 3 + 9 + 3 + 6 * 5 + 36 * 2) + nv * (6 * 3 + 1) + 6 * 6 * 4


@njit(inline="always", cache=True)
def extra_views(ws, nb, nv):
    """Views of the workspace fields that follow those of :func:`workspace_views`
    (borrowed, see :func:`carve`).

    Returns ``(crb,)``: ``crb`` (nb, 10) holds a rigid-body inertia per body as
    (m, h = m c (3), I_o upper triangle (I00, I01, I02, I11, I12, I22)) about the body
    origin in body axes — the composite inertias in their 10-parameter form.
    """
    crb = carve(ws, _views_size(nb, nv), (nb, 10))
    return (crb,)


@njit(inline="always", cache=True)
def workspace_views(ws, nb, nv):
    """Views of the flat workspace buffer (borrowed, see :func:`carve`).

    Returns ``(R, t, Rw, pw, Rj, pj, S, V, A, F, C, pb, P, Dinv, U, Y, u, scratch)``:

    * ``R, t`` (nb,3,3), (nb,3): pose of body i in its parent (joint included), which
      defines φ*(℘(i), i);
    * ``Rw, pw``: world pose of body i; ``Rj, pj``: pose across the joint alone;
    * ``S`` (nv,6): columns of the joint maps H*;
    * ``V, A, F, C, pb`` (nb,6): velocity, acceleration, force, Coriolis term a(k),
      articulated bias force z(k);
    * ``P, Dinv`` (nb,6,6): articulated (or composite) inertia, D⁻¹ (top-left nv×nv);
    * ``U, Y`` (nv,6): P H* columns and a second per-dof scratch; ``u`` (nv,);
    * ``scratch`` (4,6,6).
    """
    o = 0
    R = carve(ws, o, (nb, 3, 3)); o += nb * 9
    t = carve(ws, o, (nb, 3)); o += nb * 3
    Rw = carve(ws, o, (nb, 3, 3)); o += nb * 9
    pw = carve(ws, o, (nb, 3)); o += nb * 3
    Rj = carve(ws, o, (nb, 3, 3)); o += nb * 9
    pj = carve(ws, o, (nb, 3)); o += nb * 3
    V = carve(ws, o, (nb, 6)); o += nb * 6
    A = carve(ws, o, (nb, 6)); o += nb * 6
    F = carve(ws, o, (nb, 6)); o += nb * 6
    C = carve(ws, o, (nb, 6)); o += nb * 6
    pb = carve(ws, o, (nb, 6)); o += nb * 6
    P = carve(ws, o, (nb, 6, 6)); o += nb * 36
    Dinv = carve(ws, o, (nb, 6, 6)); o += nb * 36
    S = carve(ws, o, (nv, 6)); o += nv * 6
    U = carve(ws, o, (nv, 6)); o += nv * 6
    Y = carve(ws, o, (nv, 6)); o += nv * 6
    u = carve(ws, o, nv); o += nv
    scratch = carve(ws, o, (4, 6, 6))
    return R, t, Rw, pw, Rj, pj, S, V, A, F, C, pb, P, Dinv, U, Y, u, scratch


@njit(inline="always", cache=True)
def sizes_match(mi, q, nv, ws):
    """True when ``q`` has length nq, ``nv`` is the model's and ``ws`` is large enough:
    the kernels' own shape check (their callers may skip validating in Python)."""
    last = mi.shape[0] - 1
    return (q.shape[0] == mi[last, QIDX] + mi[last, NQ] and nv == mi[last, VIDX] + mi[last, NV]
            and ws.shape[0] >= workspace_size(mi.shape[0], nv))


def pack_model(bodies, gravity, nq, nv):
    """Build ``(mi, mf)`` from a list of bodies (see :class:`soadyn.model.Body`)."""
    from ..joints import PRISMATIC, REVOLUTE
    nb = len(bodies)
    mi = np.zeros((nb, N_INT_COLUMNS), dtype=np.int64)
    mf = np.zeros(model_float_size(nb))
    inertia, rot_tree, pos_tree, axes, pitch, mass, com, g = model_views(mf, nb)
    rigid = model_extra_views(mf, nb)[0]
    for i, b in enumerate(bodies):
        j = b.joint
        kinds = j.subkinds()
        mi[i] = (b.parent, j.code, j.q_index, j.v_index, j.nq, j.nv, len(kinds),
                 sum(1 << k for k, kind in enumerate(kinds) if kind == 1), 0,
                 int(not np.array_equal(b.placement[0], np.eye(3))))
        if j.code == REVOLUTE or j.code == PRISMATIC:
            for k in range(3):
                for sign in (1, -1):
                    if np.array_equal(j.axis, sign * np.eye(3)[k]):
                        mi[i, AXIS] = sign * (k + 1 + (3 if j.code == PRISMATIC else 0))
        inertia[i] = b.inertia
        I = inertia[i]
        rigid[i] = (b.mass, I[2, 4], I[0, 5], I[1, 3], I[0, 0], I[0, 1], I[0, 2], I[1, 1], I[1, 2], I[2, 2])
        rot_tree[i] = b.placement[0]
        pos_tree[i] = b.placement[1]
        axes[i] = j.axes()
        pitch[i] = j.pitch
        mass[i] = b.mass
        com[i] = b.com
    g[:] = gravity
    return mi, mf


class Workspace:
    """Preallocated buffers for the compiled algorithms of one model.

    Pass it as ``workspace=`` to the public functions (together with ``out=``) to
    avoid any allocation per call. A workspace must not be shared between threads
    running at the same time; batched calls use one buffer per worker thread.
    """

    def __init__(self, model):
        c = model.compiled
        self.model = model
        self.nb, self.nv = c.nb, c.nv
        self.size = int(workspace_size(c.nb, c.nv))
        self.buffer = np.zeros(self.size)
        self._batch = None

    def __repr__(self):
        return f"<soadyn.Workspace for {self.model.name!r}: {self.nb} bodies, nv = {self.nv}>"

    def batch_buffers(self, nchunks):
        """(nchunks, size) buffers, one per parallel chunk of a batched call."""
        if self._batch is None or self._batch.shape[0] < nchunks:
            self._batch = np.zeros((nchunks, self.buffer.size))
        return self._batch


@njit(cache=True)
def batch_row(X, b):
    """``X[b]``, or None when the batched optional argument ``X`` is None. (Written inline
    in a ``prange`` body, the conditional trips Numba's parallel array analysis.)"""
    if X is None:
        return None
    return X[b]


#: states per scheduling unit of the batched kernels: threads take blocks one at a time
#: (``parallel_chunksize(1)``), so a thread slowed down by other work on its core takes
#: fewer of them instead of holding up the whole call
BATCH_BLOCK = 16


@njit(inline="always", cache=True)
def batch_blocks(batch):
    """Number of BATCH_BLOCK-state blocks of a batch (the ``prange`` of a batched kernel,
    which works on block k with the workspace ``wss[numba.get_thread_id()]``)."""
    return (batch + BATCH_BLOCK - 1) // BATCH_BLOCK


def batch_workspaces(workspace):
    """One workspace buffer per Numba thread, for the batched kernels."""
    return workspace.batch_buffers(get_num_threads())


def batch_chunks(batch):
    """Number of parallel chunks for a batch of ``batch`` states."""
    return max(1, min(batch, get_num_threads()))
