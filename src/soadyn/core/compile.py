"""Everything derived from a model, computed and invalidated in one place.

A :class:`~soadyn.Model` carries a version number that every edit increments (adding a
body, frame, loop, coupling or constraint; changing gravity, an inertia, a joint). All
data derived from a model — the packed arrays the kernels read (:class:`CompiledModel`),
the workspaces, and whatever higher layers build from it (the constraint set, the
cluster tree, frame plans, ...) — lives in one :class:`Derived` store per model version,
reached through :func:`derived`. When the version has moved on, the store is rebuilt
from scratch, so no call can meet data derived from an earlier state of the model.

The store hangs on the model itself (the model's only cache attribute, which no other
module writes): ``model._derived`` is None or the store of the model's current version,
since every edit sets it to None (``Model._edited``) and :func:`derived` installs a store
only if no edit came while it was built, so a fast path checks it with one comparison.
It dies with the model, and it holds no reference to the model, so it
keeps no model alive. Higher layers memoize in it with :meth:`Derived.memo` under a key
of their choice, passing the function that builds the value; building happens under a
lock, so concurrent first calls from several threads build once.

Workspaces are per thread: :meth:`Derived.buffer` gives each Python thread its own, so
every public function may run concurrently on the same model.
"""
from __future__ import annotations

import threading

import numpy as np

from . import validation as val
from .layout import pack_model, pack_tables, workspace_size

__all__ = ["CompiledModel", "Derived", "derived", "compiled", "Workspace"]


class CompiledModel:
    """The flat array form of a model for the kernels (see :mod:`soadyn.core.layout`):
    ``mi``, ``mf`` and the sizes ``nb``, ``nq``, ``nv``; ``parents`` (nb,) body parents; the
    output shapes ``q_shape`` (nq,), ``v_shape`` (nv,), ``vv_shape`` (nv, nv),
    ``jacobian_shape`` (6, nv), ``rotations_shape`` (nb, 3, 3), ``positions_shape``
    (nb, 3), ``pose_shape`` (4, 4), ``motion_shape`` (6,), ``com_jacobian_shape`` (3, nv) and
    ``regressor_shape`` (nv, 10 nb);
    ``closed``: the model has loops, couplings or user constraints (the tree-dynamics
    functions refuse it, see :class:`soadyn.core.call.CompiledFunction`)."""

    __slots__ = ("nb", "nq", "nv", "mi", "mf", "parents", "q_shape", "v_shape", "vv_shape", "jacobian_shape",
                 "rotations_shape", "positions_shape", "pose_shape", "motion_shape", "com_jacobian_shape",
                 "regressor_shape", "closed")

    def __init__(self, model):
        bodies = model.bodies
        self.nb, self.nq, self.nv = len(bodies), model.nq, model.nv
        # output shapes of the common kernels, named for the fast call path
        self.q_shape, self.v_shape, self.vv_shape, self.jacobian_shape = (self.nq,), (self.nv,), (self.nv, self.nv), \
            (6, self.nv)
        self.rotations_shape, self.positions_shape = (self.nb, 3, 3), (self.nb, 3)
        self.pose_shape, self.motion_shape = (4, 4), (6,)
        self.com_jacobian_shape, self.regressor_shape = (3, self.nv), (self.nv, 10 * self.nb)
        self.parents = np.array([b.parent for b in bodies], dtype=np.int64)
        self.closed = bool(model.has_constraints)
        # left writable although nothing writes them after packing: Numba compiles separate
        # versions of every kernel for read-only arrays
        self.mi, self.mf = pack_model(bodies, model.gravity, self.nq, self.nv)


class Derived:
    """What is derived from one version of one model (see the module docstring)."""

    __slots__ = ("version", "compiled", "workspace_size", "threads", "_memo", "_lock")

    def __init__(self, model, version):
        self.version = version
        self.compiled = CompiledModel(model)
        self.workspace_size = int(workspace_size.py_func(self.compiled.nb, self.compiled.nv))
        self.threads = threading.local()
        self._memo = {}
        self._lock = threading.RLock()

    def buffer(self):
        """This thread's tree-kernel workspace buffer."""
        buf = getattr(self.threads, "buffer", None)
        if buf is None:
            buf = self.threads.buffer = np.zeros(self.workspace_size)
        return buf

    def plain_tables(self):
        """This thread's array for the plain-call kernels (:mod:`soadyn.kernels.plain`):
        the model's tables and a workspace of this thread's own, packed
        (:func:`~soadyn.core.layout.pack_tables` of [mi | mf | workspace])."""
        tables = getattr(self.threads, "plain_tables", None)
        if tables is None:
            c = self.compiled
            tables = self.threads.plain_tables = pack_tables(c.mi, c.mf, np.zeros(self.workspace_size))
        return tables

    def per_thread(self, key, build):
        """A per-thread object (scratch buffers of a higher layer), built on first use."""
        store = getattr(self.threads, "objects", None)
        if store is None:
            store = self.threads.objects = {}
        value = store.get(key)
        if value is None:
            value = store[key] = build()
        return value

    def known(self, key):
        """The value stored under ``key``, or None when it has not been built yet (for
        fast paths that leave the first call to the validated one)."""
        return self._memo.get(key)

    def memo(self, key, build):
        """The value stored under ``key``, built by ``build()`` on first use (once, under a
        lock). Values must not be mutated after they are built: threads share them."""
        try:
            return self._memo[key]
        except KeyError:
            pass
        with self._lock:
            if key not in self._memo:
                self._memo[key] = build()
            return self._memo[key]


_build_lock = threading.Lock()


def derived(model):
    """The :class:`Derived` store of ``model``'s current version (built on first use)."""
    try:
        d = model._derived
    except AttributeError:
        raise val.not_a_model(model) from None
    if d is not None:
        return d
    with _build_lock:
        d = model._derived
        if d is None:
            version = model._version
            model.check_compilable()
            d = Derived(model, version)
            model._derived = d
            if model._version != version:  # edited while building (by another thread)
                model._derived = None
    return d


def compiled(model):
    """The :class:`CompiledModel` of ``model``'s current version."""
    return derived(model).compiled


class Workspace:
    """Preallocated buffers for the compiled tree algorithms of one model.

    Pass it as ``workspace=`` to the public functions (together with ``out=``) to avoid
    any allocation per call. A workspace must not be used by two threads at the same
    time; without one, every thread uses its own (see :func:`derived`). Batched calls
    ignore it: their worker threads use their own (:func:`soadyn.core.call.run_blocks`).
    """

    def __init__(self, model):
        d = derived(model)
        self.model_name = model.name
        self.nb, self.nv = d.compiled.nb, d.compiled.nv
        self.size = d.workspace_size
        self.buffer = np.zeros(self.size)

    def __repr__(self):
        return f"<soadyn.Workspace for {self.model_name!r}: {self.nb} bodies, nv = {self.nv}>"
