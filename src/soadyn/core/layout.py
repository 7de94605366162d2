"""The flat array form of a model and of the kernels' workspace, read through named views.

Every compiled kernel receives a model as two flat arrays — ``mi`` (integers) and ``mf``
(reals) — and one flat float64 workspace ``ws``: each array argument of a call from Python
into Numba has a fixed cost, so a few large arrays beat many small ones
(``benchmarks/results/design_notes.md``). Inside a kernel, :func:`model_tables` and
:func:`workspace_views` carve them into named, shaped views (``m.parent[i]``,
``m.gravity``, ``w.P[k]``, ``w.U[c]``) — free at run time: no copy, no allocation, no
reference counting (see :func:`carve`).

Each flat array is declared once, as a :class:`Layout` (an ordered list of named fields
and their shapes): its length and its views are both derived from that declaration, so
they cannot disagree, and adding a field is one line.

Body quantities are indexed by body ``i`` (parent-first order); joint-map quantities by
the velocity index. Spatial vectors are angular-first ([ω; v], [n; f]) and expressed in
the body frame unless the name says world.

**Bounds.** A kernel checks once, at entry, that its buffers are as long as the layouts
say (:func:`sizes_match`, :func:`split_model_tables`, :func:`split_tables`: one comparison
each); the views are then in bounds by construction. :func:`carve`, :func:`rows` and the
layouts' views check their own bounds only where Numba's bounds checking is on
(``NUMBA_BOUNDSCHECK=1``, or ``boundscheck=True`` on the compiled function), raising
``IndexError``: a debugging aid that costs nothing on the hot path when off. Numba's disk
cache does not key its entries by that switch, so run a bounds-checked session with its own
``NUMBA_CACHE_DIR``.
"""
from __future__ import annotations

import math
from collections import namedtuple

import numpy as np
from numba import types
from numba.core import cgutils
from numba.core.imputils import impl_ret_borrowed
from numba.extending import intrinsic
from numba.np.arrayobj import make_array, populate_array

from .jit import helper
from .joints import PRISMATIC, REVOLUTE


def _borrowed_view(context, builder, retty, data, dims, itemsize):
    """A C-contiguous array of type ``retty`` over ``data`` with the shape ``dims`` (LLVM
    intp values), holding no reference to the memory (meminfo and parent null)."""
    intp = context.get_value_type(types.intp)
    strides = []
    step = intp(itemsize)
    for d in reversed(dims):
        strides.append(step)
        step = builder.mul(step, d)
    view = make_array(retty)(context, builder)
    populate_array(view, data=data, shape=dims, strides=strides[::-1], itemsize=intp(itemsize), meminfo=None,
                   parent=None)
    return view._getvalue()


def _check_span(context, builder, first, length, extent, what):
    """With Numba's bounds checking on: raise IndexError unless 0 ≤ first and
    first + length ≤ extent (LLVM intp values). Emits nothing otherwise."""
    if not context.enable_boundscheck:
        return
    end = builder.add(first, length)
    bad = builder.or_(builder.icmp_signed("<", first, first.type(0)), builder.icmp_signed(">", end, extent))
    with cgutils.if_unlikely(builder, bad):
        context.call_conv.return_user_exc(builder, IndexError, (f"{what}: view out of its buffer's bounds",))


@intrinsic
def carve(typingctx, buf, offset, shape):
    """``buf.ravel()[offset:offset + prod(shape)].reshape(shape)`` as a C-contiguous view
    (``buf``: a C-contiguous array of any dimension, read as its flat entries).

    ``ndarray.reshape`` in Numba calls an opaque C routine and checks the size at run
    time; this builds the view's shape and strides directly, so the compiler sees
    constant inner strides. The view is *borrowed*: it holds no reference to ``buf``'s
    memory (no reference counting, whose atomic operations would cost every kernel call),
    so it is valid only while ``buf`` is alive — use it inside kernels and copy anything a
    kernel returns. Bounds: see the module docstring (checked where Numba's bounds
    checking is on).
    """
    if isinstance(shape, types.Integer):
        nd = 1
    elif isinstance(shape, types.BaseTuple) and all(isinstance(d, types.Integer) for d in shape.types):
        nd = len(shape.types)
    else:
        return None
    if not isinstance(buf, types.Array) or buf.layout != "C":
        return None
    retty = types.Array(buf.dtype, nd, "C")
    sig = retty(buf, offset, shape)

    def codegen(context, builder, sig, args):
        ary = make_array(sig.args[0])(context, builder, args[0])
        if isinstance(sig.args[2], types.Integer):
            dims = [context.cast(builder, args[2], sig.args[2], types.intp)]
        else:
            dims = [context.cast(builder, d, ty, types.intp)
                    for d, ty in zip(cgutils.unpack_tuple(builder, args[2], nd), sig.args[2].types)]
        off = context.cast(builder, args[1], sig.args[1], types.intp)
        if context.enable_boundscheck:
            count = dims[0]
            for d in dims[1:]:
                count = builder.mul(count, d)
            _check_span(context, builder, off, count, ary.nitems, "carve")
        itemsize = context.get_abi_sizeof(context.get_data_type(sig.args[0].dtype))
        view = _borrowed_view(context, builder, retty, cgutils.gep_inbounds(builder, ary.data, off), dims, itemsize)
        return impl_ret_borrowed(context, builder, retty, view)

    return sig, codegen


@intrinsic
def rows(typingctx, x, first, count):
    """``x[first:first + count]`` — rows along the first axis of the C-contiguous ``x``, of
    any dimension — as a *borrowed* view of the same type (see :func:`carve`: no reference
    counting, valid while ``x`` is alive). Bounds: see the module docstring."""
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
        _check_span(context, builder, start, n, shape[0], "rows")
        row = intp(1)  # entries per row
        for d in shape[1:]:
            row = builder.mul(row, d)
        view = make_array(sig.return_type)(context, builder)
        populate_array(view, data=cgutils.gep_inbounds(builder, ary.data, builder.mul(start, row)),
                       shape=[n] + shape[1:], strides=cgutils.unpack_tuple(builder, ary.strides, x.ndim),
                       itemsize=ary.itemsize, meminfo=None, parent=None)
        return impl_ret_borrowed(context, builder, sig.return_type, view._getvalue())

    return sig, codegen


@helper(forceinline=True)
def borrow(x):
    """``x`` (a C-contiguous vector) as a borrowed view (see :func:`carve`).

    A kernel's array arguments own their memory: each call of a non-inlined pass that
    receives one increments and decrements its reference count (two atomic operations a
    pass). A kernel that hands its arguments to several passes borrows them once at
    entry; the views are valid for the kernel's duration."""
    return carve(x, 0, x.shape[0])


# =========================================================================== layouts
class Layout:
    """The fields of one flat array, in order, from which its length and its views follow.

    ``dims`` names the sizes the layout depends on (``("nb",)``, ``("nb", "nv", "n_aux")``);
    ``fields`` is a tuple of ``(name, shape)``, a shape being a tuple of terms, each an
    int, the name of one of ``dims`` or a tuple of such names and ints (their sum: ``("nb",
    "nv")``, ``("n", 1)``). Field k starts
    where field k − 1 ends; the array's length is where the last one ends.

    Compiled code calls :attr:`size` ``(dims)`` → the length (an int) and :attr:`views`
    ``(buf, dims)`` → the tuple of the fields' borrowed C-contiguous views of the 1-d
    C-contiguous ``buf``, in the order of ``fields`` (``dims`` a tuple of ints in the order
    of :attr:`dims`); both are intrinsics generated from the declaration, so the views
    cost what hand-written :func:`carve` calls cost. Python calls :meth:`length`,
    :meth:`spans` and :meth:`numpy_views`.
    """

    def __init__(self, name, dims, fields):
        self.name, self.dims, self.fields = name, tuple(dims), tuple(fields)
        self.names = tuple(n for n, _ in self.fields)
        if len(set(self.names)) != len(self.names):
            raise ValueError(f"layout {name}: fields must have distinct names, got {self.names}")
        for field, shape in self.fields:
            for term in shape:
                for d in (term,) if isinstance(term, (int, str)) else term:
                    if not isinstance(d, int) and d not in self.dims:
                        raise ValueError(f"layout {name}, field {field}: shape term {d!r} is neither an int nor "
                                         f"one of the dims {self.dims}")
        self.size = self._size_intrinsic()
        self.views = self._views_intrinsic()

    # ----------------------------------------------------------------- Python
    def _term(self, term, dims):
        if isinstance(term, int):
            return term
        if isinstance(term, str):
            return int(dims[self.dims.index(term)])
        return sum(self._term(t, dims) for t in term)

    def shapes(self, dims):
        """The fields' shapes (tuples of ints) for the sizes ``dims``."""
        if len(dims) != len(self.dims):
            raise ValueError(f"layout {self.name}: dims must be {self.dims}, got {tuple(dims)}")
        return tuple(tuple(self._term(t, dims) for t in shape) for _, shape in self.fields)

    def spans(self, dims):
        """``(name, offset, shape)`` of each field for the sizes ``dims``."""
        out, offset = [], 0
        for name, shape in zip(self.names, self.shapes(dims)):
            out.append((name, offset, shape))
            offset += math.prod(shape)
        return tuple(out)

    def length(self, dims):
        """The array's length for the sizes ``dims`` (:attr:`size` for Python)."""
        return sum(math.prod(s) for s in self.shapes(dims))

    def numpy_views(self, buf, dims):
        """The fields' writable NumPy views of ``buf`` (:attr:`views` for Python)."""
        n = self.length(dims)
        if buf.ndim != 1 or buf.shape[0] < n:
            raise ValueError(f"layout {self.name}: buf must be a vector of at least {n} entries for dims "
                             f"{dict(zip(self.dims, dims))}, got shape {buf.shape}")
        return tuple(buf[o:o + math.prod(s)].reshape(s) for _, o, s in self.spans(dims))

    # ----------------------------------------------------------------- compiled
    def _dims_ok(self, dims):
        return (isinstance(dims, types.BaseTuple) and len(dims.types) == len(self.dims)
                and all(isinstance(d, types.Integer) for d in dims.types))

    def _llvm_shapes(self, context, builder, dims_type, dims_value):
        """The fields' shapes as lists of LLVM intp values."""
        intp = context.get_value_type(types.intp)
        d = {name: context.cast(builder, v, ty, types.intp)
             for name, v, ty in zip(self.dims, cgutils.unpack_tuple(builder, dims_value, len(self.dims)),
                                    dims_type.types)}

        def term(t):
            if isinstance(t, int):
                return intp(t)
            if isinstance(t, str):
                return d[t]
            total = term(t[0])
            for part in t[1:]:
                total = builder.add(total, term(part))
            return total

        return [[term(t) for t in shape] for _, shape in self.fields]

    @staticmethod
    def _product(builder, values):
        out = values[0]
        for v in values[1:]:
            out = builder.mul(out, v)
        return out

    def _size_intrinsic(self):
        layout = self

        def size(typingctx, dims):
            if not layout._dims_ok(dims):
                return None
            sig = types.intp(dims)

            def codegen(context, builder, sig, args):
                lengths = [layout._product(builder, s) for s in layout._llvm_shapes(context, builder, sig.args[0],
                                                                                     args[0])]
                total = lengths[0]
                for n in lengths[1:]:
                    total = builder.add(total, n)
                return total

            return sig, codegen

        size.__name__ = size.__qualname__ = f"{self.name}_size"
        size.__doc__ = f"Length of a flat array of the layout {self.name} for the sizes ``dims`` {self.dims}."
        return intrinsic(size)

    def _views_intrinsic(self):
        layout = self

        def views(typingctx, buf, dims):
            if not (isinstance(buf, types.Array) and buf.ndim == 1 and buf.layout == "C" and layout._dims_ok(dims)):
                return None
            retty = types.BaseTuple.from_types([types.Array(buf.dtype, len(shape), "C") for _, shape in layout.fields])
            sig = retty(buf, dims)

            def codegen(context, builder, sig, args):
                ary = make_array(sig.args[0])(context, builder, args[0])
                itemsize = context.get_abi_sizeof(context.get_data_type(sig.args[0].dtype))
                offset = context.get_value_type(types.intp)(0)
                values = []
                for shape, ty in zip(layout._llvm_shapes(context, builder, sig.args[1], args[1]), retty):
                    data = cgutils.gep_inbounds(builder, ary.data, offset)
                    values.append(_borrowed_view(context, builder, ty, data, shape, itemsize))
                    offset = builder.add(offset, layout._product(builder, shape))
                _check_span(context, builder, offset.type(0), offset, ary.nitems, f"layout {layout.name}")
                return impl_ret_borrowed(context, builder, retty, context.make_tuple(builder, retty, values))

            return sig, codegen

        views.__name__ = views.__qualname__ = f"{self.name}_views"
        views.__doc__ = f"Borrowed views of the fields {self.names} of a flat array of the layout {self.name}."
        return intrinsic(views)

    def __repr__(self):
        return f"Layout({self.name!r}, dims={self.dims}, fields={self.names})"


# =========================================================================== stacked states
# A kernel that evaluates "B states stored one after another" takes each state argument and
# output with the states' rows concatenated along its first axis — q (B·nq,), f_ext
# (B·nb, 6), M (B·nv, nv) — B = 1 for a single call, a block of a batch's rows otherwise
# (:func:`soadyn.core.batch.stacked_block`). One compiled entry point then serves both:
# a batched twin would re-optimise and re-compile the kernel's whole linked closure, a
# cold-compile cost the states' loop does not need (benchmarks/results/design_notes.md).
@helper(forceinline=True)
def state_count(length, size):
    """B: the number of states of ``size`` entries in an argument of ``length`` entries; 1
    when ``length`` is not a positive multiple of ``size`` (one state of a wrong length,
    which the kernel's shape checks reject)."""
    if size <= 0 or length <= 0 or length % size != 0:
        return 1
    return length // size


@helper(forceinline=True)
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
#: the header of ``mi``: nb, nq, nv
MODEL_HEADER = 3
#: the layout of ``mi``
MODEL_INTS = Layout("model_ints", ("nb",), (("header", (MODEL_HEADER,)),) + tuple((n, ("nb",)) for n in INT_FIELDS))

#: The layout of ``mf``: ``inertia`` (nb, 6, 6) spatial inertia M(k) about the body
#: origin; ``rigid`` (nb, 10) the same in 10-parameter form (m, h = m c (3), I_o upper
#: triangle I00, I01, I02, I11, I12, I22) for the cheaper products of
#: :mod:`soadyn.kernels.primitives`; ``rot_tree``/``pos_tree`` the pose of the joint
#: frame in the parent body frame; ``axes`` (nb, 3, 3) joint axes (rows); ``pitch``
#: helical pitch [m/rad]; ``mass``, ``com`` (body frame); ``gravity`` (3,) world frame.
MODEL_FLOATS = Layout("model_floats", ("nb",), (
    ("inertia", ("nb", 6, 6)), ("rigid", ("nb", 10)), ("rot_tree", ("nb", 3, 3)), ("pos_tree", ("nb", 3)),
    ("axes", ("nb", 3, 3)), ("pitch", ("nb",)), ("mass", ("nb",)), ("com", ("nb", 3)), ("gravity", (3,))))

#: Named views of a packed model: the sizes nb, nq, nv, then the fields of
#: :data:`MODEL_INTS` (without its header) and of :data:`MODEL_FLOATS`.
ModelTables = namedtuple("ModelTables", ("nb", "nq", "nv") + MODEL_INTS.names[1:] + MODEL_FLOATS.names)

model_int_views, model_float_views = MODEL_INTS.views, MODEL_FLOATS.views
_model_int_size, _model_float_size = MODEL_INTS.size, MODEL_FLOATS.size


@helper(forceinline=True)
def model_int_size(nb):
    """Length of ``mi`` for ``nb`` bodies (:data:`MODEL_INTS`; Python: :func:`model_lengths`)."""
    return _model_int_size((nb,))


@helper(forceinline=True)
def model_float_size(nb):
    """Length of ``mf`` for ``nb`` bodies (:data:`MODEL_FLOATS`; Python: :func:`model_lengths`)."""
    return _model_float_size((nb,))


def model_lengths(nb):
    """``(len(mi), len(mf))`` for ``nb`` bodies, for Python callers."""
    return MODEL_INTS.length((nb,)), MODEL_FLOATS.length((nb,))


@helper(forceinline=True)
def model_tables(mi, mf):
    """Named views of a packed model (:class:`ModelTables`; borrowed, see :func:`carve`)."""
    nb = mi[0]
    return ModelTables(nb, mi[1], mi[2], *model_int_views(mi, (nb,))[1:], *model_float_views(mf, (nb,)))


def numpy_model_tables(mi, mf):
    """:func:`model_tables` for Python callers (writable NumPy views of ``mi`` and ``mf``)."""
    nb = int(mi[0])
    return ModelTables(nb, int(mi[1]), int(mi[2]), *MODEL_INTS.numpy_views(mi, (nb,))[1:],
                       *MODEL_FLOATS.numpy_views(mf, (nb,)))


@helper(forceinline=True)
def split_model_tables(mti, mtf):
    """``(ok, mi, mf, rest_i, rest_f)``: borrowed views of a model's packed tables
    followed by other tables in one int array ``mti`` = [mi | rest_i] and one float array
    ``mtf`` = [mf | rest_f] (the plain-call kernels take them so: fewer array arguments,
    each of which costs the dispatcher). ``ok`` is False when the arrays are too short
    for the model their header describes, or empty (the views are then meaningless)."""
    nb = mti[0] if mti.shape[0] > 0 else -1
    ni, nf = model_int_size(nb), model_float_size(nb)
    ok = nb >= 0 and mti.shape[0] >= ni and mtf.shape[0] >= nf
    if not ok:
        ni, nf = 0, 0
    return (ok, carve(mti, 0, ni), carve(mtf, 0, nf), carve(mti, ni, mti.shape[0] - ni),
            carve(mtf, nf, mtf.shape[0] - nf))


def pack_tables(ints, floats, work):
    """One float64 array for a plain-call kernel: [len(ints), len(floats) (int64 bits) |
    ints (int64 bits) | floats | work]. Each array argument costs Numba's dispatcher, and
    the plain calls pass the model's tables, their own and a thread's workspace (the
    ``work`` part, written per call: each thread has its own copy of the array).
    :func:`split_tables` undoes it inside the kernel."""
    ints = np.ascontiguousarray(ints, dtype=np.int64)
    head = np.array([ints.shape[0], len(floats)], dtype=np.int64)
    return np.concatenate([head.view(np.float64), ints.view(np.float64), floats, work])


@helper(forceinline=True)
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


def pack_parts(ints, floats):
    """One float64 array of several arrays, for a kernel entered from Python with many
    tables: [count | the parts' lengths (int64 bits) | the integer parts (int64 bits) | the
    float parts]. Each array argument of a call from Python costs Numba's dispatcher about
    as much as a small pass of the dynamics (``benchmarks/results/design_notes.md``); a
    kernel that takes this one array reads its parts back with :func:`packed_part`, by
    index (the integer parts first, in the order given)."""
    parts = [np.ascontiguousarray(x, dtype=np.int64).view(np.float64) for x in ints] \
        + [np.ascontiguousarray(x, dtype=np.float64) for x in floats]
    head = np.array([len(parts)] + [len(x) for x in parts], dtype=np.int64)
    return np.concatenate([head.view(np.float64)] + parts)


@helper(forceinline=True)
def packed_ok(T, count):
    """Whether ``T`` is an array of :func:`pack_parts` of ``count`` parts: its header says
    so and it is as long as its header says."""
    if T.shape[0] < 1 + count:
        return False
    head = carve(T, 0, 1 + count).view(np.int64)
    if head[0] != count:
        return False
    total = 1 + count
    for p in range(count):
        if head[1 + p] < 0:
            return False
        total += head[1 + p]
    return total <= T.shape[0]


@helper(forceinline=True)
def packed_part(T, count, index):
    """Part ``index`` of the ``count`` parts of an array of :func:`pack_parts` (checked by
    :func:`packed_ok` first) as a borrowed float64 view (``.view(np.int64)`` for an integer
    part)."""
    head = carve(T, 0, 1 + count).view(np.int64)
    offset = 1 + count
    for p in range(index):
        offset += head[1 + p]
    return carve(T, offset, head[1 + index])


def pack_model(bodies, gravity, nq, nv):
    """``(mi, mf)`` for a list of bodies (:class:`soadyn.core.model.Body`)."""
    nb = len(bodies)
    ni, nf = model_lengths(nb)
    mi = np.zeros(ni, dtype=np.int64)
    mf = np.zeros(nf)
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
#: The layout of the per-call workspace of the tree kernels (:func:`workspace_views`), in
#: SOA notation:
#:
#: * ``R, t`` (nb, 3, 3), (nb, 3): pose of body k in its parent (joint included), which
#:   defines φ(℘(k), k); ``Rw, pw``: world pose of body k; ``Rj, pj``: the joint alone;
#: * ``V``, ``alpha``, ``f`` (nb, 6): body velocity V(k), acceleration α(k) and force f(k);
#:   ``coriolis`` (nb, 6): the Coriolis term a(k); ``z`` (nb, 6): the articulated bias
#:   force z(k) (z⁺(k) after the gather);
#: * ``P``, ``Dinv`` (nb, 6, 6): articulated (or composite) inertia P(k), D⁻¹(k) in the
#:   top-left joint_nv × joint_nv block;
#: * ``crb`` (nb, 10): composite rigid-body inertias R(k) in 10-parameter form;
#: * ``S`` (nv, 6): the columns of the joint maps H*(k) (Featherstone's S);
#: * ``U`` (nv, 6): the columns of P(k)H*(k); ``Gt`` (nv, 6): the rows of the Kalman gain
#:   G*(k) = D⁻¹(k)U(k)ᵀ; ``eps`` (nv,): the innovations ε(k) = T(k) − H(k)z(k);
#: * ``Sw`` (nv, 6): the joint-map columns in world axes at the world origin;
#: * ``sincos`` (2, nb + nv): column k < nq holds sin and cos of q[k] (of use for the
#:   angles of revolute joints; :func:`soadyn.kernels.kinematics.joint_sincos`); nb + nv
#:   bounds nq, a joint having at most one more coordinate than velocities;
#: * ``scratch`` (6, 6, 6), for a pass to carve its own small arrays from (``carve``
#:   reads it as 216 flat entries; a kernel must not carve views from an array it
#:   allocates itself: the views are borrowed, see :func:`carve`);
#: * ``aux`` (n_aux,) (:func:`aux_size`): the scratch of the kernels that need more than
#:   the views above, each carving its own arrays from it. The kernels are compiled
#:   without reference counting (:mod:`soadyn.core.jit`) and allocate nothing: what a call
#:   needs beyond its arguments is in the workspace.
WORKSPACE = Layout("workspace", ("nb", "nv", "n_aux"), (
    ("R", ("nb", 3, 3)), ("t", ("nb", 3)), ("Rw", ("nb", 3, 3)), ("pw", ("nb", 3)), ("Rj", ("nb", 3, 3)),
    ("pj", ("nb", 3)),
    ("V", ("nb", 6)), ("alpha", ("nb", 6)), ("f", ("nb", 6)), ("coriolis", ("nb", 6)), ("z", ("nb", 6)),
    ("P", ("nb", 6, 6)), ("Dinv", ("nb", 6, 6)), ("crb", ("nb", 10)),
    ("S", ("nv", 6)), ("U", ("nv", 6)), ("Gt", ("nv", 6)), ("Sw", ("nv", 6)), ("eps", ("nv",)),
    ("sincos", (2, ("nb", "nv"))), ("scratch", (6, 6, 6)), ("aux", ("n_aux",))))

#: Named views of the workspace: the fields of :data:`WORKSPACE`.
WorkspaceViews = namedtuple("WorkspaceViews", WORKSPACE.names)

_workspace_size, _workspace_views = WORKSPACE.size, WORKSPACE.views


@helper(forceinline=True)
def aux_size(nb, nv):
    """Length of the workspace's ``aux``: the most any of its users takes — the RNEA
    derivatives' buffer (42 nv + 44 nb, :func:`soadyn.kernels.derivatives.derivative_size`),
    a rollout's six stage vectors (6 max(nq, nv) ≤ 6 (nb + nv)), the partitioned inertias'
    and the operational-space diagonal's small blocks (60 and 36). Python calls
    ``aux_size.py_func``."""
    return max(42 * nv + 44 * nb, 6 * (nb + nv), 64)


@helper(forceinline=True)
def workspace_size(nb, nv):
    """Length of the flat workspace of a model with ``nb`` bodies and ``nv`` velocities
    (:data:`WORKSPACE`; Python: :func:`workspace_length`)."""
    return _workspace_size((nb, nv, aux_size(nb, nv)))


def workspace_length(nb, nv):
    """:func:`workspace_size` for Python callers."""
    return WORKSPACE.length((nb, nv, aux_size.py_func(nb, nv)))


@helper(forceinline=True)
def workspace_views(ws, m):
    """Named views (:class:`WorkspaceViews`; borrowed, see :func:`carve`) of the flat
    workspace ``ws`` for the model tables ``m``."""
    return WorkspaceViews(*_workspace_views(ws, (m.nb, m.nv, aux_size(m.nb, m.nv))))


def numpy_workspace_views(ws, m):
    """:func:`workspace_views` for Python callers (writable NumPy views of ``ws``)."""
    return WorkspaceViews(*WORKSPACE.numpy_views(ws, (m.nb, m.nv, aux_size.py_func(m.nb, m.nv))))


@helper(forceinline=True)
def sizes_match(m, q, ws):
    """True when ``q`` has length nq and ``ws`` is large enough for the model tables
    ``m``: the kernels' own shape check (their callers may skip validating in Python)."""
    return q.shape[0] == m.nq and ws.shape[0] >= workspace_size(m.nb, m.nv)
