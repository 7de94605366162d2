"""Everything derived from a model, computed and invalidated in one place.

A :class:`~soadyn.Model` carries a version number that every edit increments (adding a
body, frame, loop, coupling or constraint; changing gravity, an inertia, a joint). All
data derived from a model — the packed arrays the kernels read (:class:`CompiledModel`),
the workspaces, and whatever higher layers build from it (the constraint set, the
cluster tree, frame plans, ...) — lives in one :class:`Derived` store per model version,
reached through :func:`derived`. When the version has moved on, the store is rebuilt
from scratch, so no call can meet data derived from an earlier state of the model.

**One model state per call.** A store is built from one complete state of the model: the
model's edits hold the model's lock from their first change to their last (setting an
inertia changes mass, centre of mass and rotational inertia in one edit), and
:func:`derived` builds under that lock. The store holds a read-only copy of the model as
it was then, its *snapshot* (:attr:`Derived.model`, an uneditable :class:`~soadyn.Model`
whose store is this one), and everything in the store is derived from the snapshot. A
call looks the store up once (the tree functions' call path, :mod:`soadyn.core.call`) or
works on the snapshot from its start (:func:`snapshot`: the functions that read the model
in Python too, the closed-chain ones, simulations): an edit made by another thread
meanwhile gives the call's result of the state before it or after it, never a mix.

The store hangs on the model itself (the model's only cache attribute, which no other
module writes): ``model._derived`` is None or the store of the model's current version,
since every edit sets it to None (``Model._edited``) and :func:`derived` installs a store
only if no edit came while it was built, so a fast path checks it with one comparison.
It dies with the model, and it holds no reference to the model (its snapshot holds a weak
one), so it keeps no model alive. Higher layers memoize in it with :meth:`Derived.memo`
under a key of their choice, passing the function that builds the value from the
snapshot; building happens under a lock, so concurrent first calls from several threads
build once.

Workspaces are per thread: :meth:`Derived.buffer` gives each Python thread its own, so
every public function may run concurrently on the same model.
"""
from __future__ import annotations

import threading

import numpy as np

from . import validation as val
from .layout import pack_model, pack_tables, workspace_length

__all__ = ["CompiledModel", "Derived", "derived", "snapshot", "compiled", "Workspace", "check_workspace"]


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
    """What is derived from one version of one model (see the module docstring):
    ``model``, the snapshot of that version (a read-only :class:`~soadyn.Model`), and
    ``compiled``, its :class:`CompiledModel`, then what higher layers memoize."""

    __slots__ = ("version", "model", "compiled", "workspace_size", "threads", "_memo", "_lock")

    def __init__(self, model, version):
        self.version = version
        self.model = model._snapshot(self)
        self.compiled = CompiledModel(self.model)
        self.workspace_size = workspace_length(self.compiled.nb, self.compiled.nv)
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
        """A per-thread object (scratch buffers of a higher layer), built by
        ``build(snapshot)`` on first use, from this version's snapshot :attr:`model`."""
        store = getattr(self.threads, "objects", None)
        if store is None:
            store = self.threads.objects = {}
        value = store.get(key)
        if value is None:
            value = store[key] = build(self.model)
        return value

    def known(self, key):
        """The value stored under ``key``, or None when it has not been built yet (for
        fast paths that leave the first call to the validated one)."""
        return self._memo.get(key)

    def memo(self, key, build):
        """The value stored under ``key``, built by ``build(snapshot)`` on first use (once,
        under a lock), from this version's snapshot :attr:`model` — never from the model
        itself, which other threads may have edited since. Values must not be mutated
        after they are built: threads share them."""
        try:
            return self._memo[key]
        except KeyError:
            pass
        with self._lock:
            if key not in self._memo:
                self._memo[key] = build(self.model)
            return self._memo[key]


def derived(model):
    """The :class:`Derived` store of ``model``'s current version (built on first use,
    under the model's edit lock: from a state no edit is halfway through)."""
    try:
        d = model._derived
    except AttributeError:
        raise val.not_a_model(model) from None
    if d is not None:
        return d
    with model._lock:
        d = model._derived
        if d is None:
            version = model._version
            model.check_compilable()
            d = Derived(model, version)
            # not installed when edited while building (by this thread: the others wait for
            # the lock), or asked for from inside an edit (add_constraint checks a user
            # constraint at the neutral configuration): the edit is not finished
            if model._version == version and not model._edit_depth:
                model._derived = d
    return d


def snapshot(model):
    """The read-only snapshot of ``model``'s current version (:attr:`Derived.model`), the
    state a call works on from start to end (see the module docstring); a snapshot is its
    own snapshot. A public function that reads the model in Python (names, frames,
    constraints, sizes) besides its kernels takes it first:
    ``model = snapshot(model)``."""
    d = getattr(model, "_derived", None)
    return (d if d is not None else derived(model)).model


def compiled(model):
    """The :class:`CompiledModel` of ``model``'s current version."""
    return derived(model).compiled


class Workspace:
    """Preallocated buffers for the compiled tree algorithms of one model version.

    Pass it as ``workspace=`` to the public functions (together with ``out=``) to avoid
    any allocation per call. A workspace belongs to the model version it was made for:
    every function refuses it for another model, or after an edit of its model (make a
    new one then; :func:`check_workspace`). A workspace must not be used by two threads at
    the same time; without one, every thread uses its own (see :func:`derived`). Batched
    calls check it and then do not use it: their worker threads use their own
    (:func:`soadyn.core.batch.run_blocks`).
    """

    def __init__(self, model):
        d = derived(model)
        self.store = d  # the derived data of the version it belongs to (the call path compares them)
        self.model_name = model.name
        self.version = d.version
        self.nb, self.nv = d.compiled.nb, d.compiled.nv
        self.size = d.workspace_size
        self.buffer = np.zeros(self.size)

    def __repr__(self):
        return (f"<soadyn.Workspace for {self.model_name!r} version {self.version}: {self.nb} bodies, "
                f"nv = {self.nv}>")


def check_workspace(workspace, d):
    """Raise unless ``workspace`` is None or a :class:`Workspace` made for the model version
    of ``d`` (its :class:`Derived` store): the one check of every ``workspace=``."""
    if workspace is None or (type(workspace) is Workspace and workspace.store is d):
        return
    model = d.model
    expected = (f"workspace: expected a soadyn.Workspace made for model {model.name!r} at its version {d.version} "
                f"({d.compiled.nb} bodies, nv = {d.compiled.nv})")
    if type(workspace) is not Workspace:
        raise ValueError(f"{expected}, got {type(workspace).__name__}")
    if workspace.store.model._origin() is model._origin():
        raise ValueError(f"{expected}, got one made for its version {workspace.version} (the model was edited "
                         "since: make a new Workspace(model))")
    raise ValueError(f"{expected}, got {workspace!r}")
