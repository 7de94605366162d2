"""The one call path from a public function into its compiled kernel.

Every compiled algorithm is called as ``kernel(mi, mf, ws, *state, *params, *outputs)``
and returns a status code (:mod:`soadyn.core.status`). Batches run block by block on
worker threads (:func:`run_blocks`), in one of two ways. Most kernels evaluate B states
stored one after another (:func:`soadyn.core.layout.state_of`; B = 1 for a single call):
a block is one call of the kernel itself on its rows (:func:`stacked_block`). The
kernels whose plain call is an open speed target — ABA, RNEA, the mass matrix and its
inverse, the world poses, the frame Jacobian — keep a batched twin
``batch(mi, mf, ws, *state, *params, *outputs, status, start, stop)``, a serial loop over
states start..stop−1 of arrays with a leading batch dimension: a stacked kernel must
release the GIL (``nogil=True``) for its blocks to run concurrently, which costs its
single calls a tenth of Numba's dispatch, and a twin up to a second and a half of a cold
compile instead (``benchmarks/results/design_notes.md``). A
:class:`CompiledFunction` wraps the pair with the description of the state arguments
and outputs, and every public function calls its kernel through it:

1. **Fast path.** Validating every argument in Python costs, per array, as much as the
   dynamics of several bodies. (The hottest public functions call it through
   :attr:`CompiledFunction.call`, the same path with positional arguments.) Numba's dispatcher inspects the argument types
   anyway to pick a compiled version, so the call is first tried on a second dispatcher
   over the same kernel that holds only the versions already compiled and never
   compiles (:class:`ExactCall`). Other argument types (a list, a batch, a strided,
   read-only or integer array) make it raise :class:`GeneralPath` at once; the kernels
   check lengths and finiteness themselves, so a fast call is as safe as a validated
   one.
2. **General path.** Conversions and checks that name the argument, the expected and
   the received value; a single state, or a batch evaluated by one multi-threaded call.

Before the fast path, ``rnea`` and ``aba`` try their **plain call** (one state, gravity
on, no external forces, no workspace given): a kernel of five arguments, the model's
tables and the thread's workspace packed in one array (:mod:`soadyn.kernels.plain`;
Numba's dispatch costs in proportion to the number of arguments).

Only :class:`GeneralPath` is caught: an error inside the call is never mistaken for a
type mismatch. :class:`ExactCall` uses private hooks of Numba's dispatcher, after
checking that they are there as written for
(:data:`soadyn.numba_patches.DISPATCHER_HOOKS`; else every call takes the general path);
``tests/core/test_call.py`` checks they behave as assumed.
"""
from __future__ import annotations

import itertools
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from functools import partial

import numpy as np
from numba.core import config

from .. import numba_patches
from . import jit
from . import status as st
from . import validation as val
from .compile import Workspace, check_workspace, derived

__all__ = ["GeneralPath", "ExactCall", "Arg", "ParamShape", "CompiledFunction", "ABSENT", "NO_FORCES", "run_blocks",
           "stacked_block", "thread_tables", "batch_threads", "rollout_min_block"]

#: Stand-ins for absent arguments. Every kernel has one signature (each compiled version
#: costs seconds), so an absent rate (zero velocity or acceleration) is an empty vector and
#: absent external forces an empty (0, 6) array, never None: public functions pass these.
ABSENT = np.zeros(0)
NO_FORCES = np.zeros((0, 6))


#: a batched call splits its states into up to BLOCKS_PER_THREAD blocks per thread (so a
#: thread slowed down by other work on its core takes fewer of them instead of holding up
#: the call), of at least MIN_BLOCK states each (a block costs a few µs to hand out)
BLOCKS_PER_THREAD = 4
MIN_BLOCK = 16

_pool = None
_pool_pid = None
_pool_lock = threading.Lock()


def batch_threads():
    """Threads a batched call uses: ``NUMBA_NUM_THREADS`` (default: the number of cores)."""
    return max(1, int(config.NUMBA_NUM_THREADS))


def _worker_pool():
    """The threads that run the blocks of batched calls (made on first use, and again in a
    forked child process, which inherits no threads)."""
    global _pool, _pool_pid
    with _pool_lock:
        if _pool is None or _pool_pid != os.getpid():
            _pool = ThreadPoolExecutor(max_workers=max(1, batch_threads() - 1), thread_name_prefix="soadyn-batch")
            _pool_pid = os.getpid()
        return _pool


def rollout_min_block(steps):
    """The fewest states in a block of a batched rollout of ``steps`` steps per state: a
    state of T steps weighs T evaluations, so :data:`MIN_BLOCK` evaluations' worth of
    states (a batch of 16 rollouts of 500 steps would otherwise be one block, one thread)."""
    return max(1, -(-MIN_BLOCK // max(1, int(steps))))


def _run_block(kernel, d, args, status, start, stop):
    if d is None:  # a kernel whose arguments carry the tables and workspaces
        kernel(*args, status, start, stop)
    else:  # d.buffer(): the workspace of the worker thread that runs this block
        kernel(d.compiled.mi, d.compiled.mf, d.buffer(), *args, status, start, stop)


def run_blocks(kernel, d, args, status, min_block=MIN_BLOCK):
    """Evaluate a batch of B = ``len(status)`` states with a block kernel
    ``kernel(mi, mf, ws, *args, status, start, stop)`` (compiled with ``nogil=True``; it
    evaluates states start..stop−1 with one workspace ``ws``): the states are split into
    blocks, which the calling thread and :func:`batch_threads` − 1 worker threads take one
    after another, each thread with its own workspace (several callers at once share the
    workers: each also runs its own blocks, so none waits on another's).
    ``d``: the model's :class:`~soadyn.core.compile.Derived` store, or None
    for a kernel ``kernel(*args, status, start, stop)`` that takes its tables in ``args``
    and makes each block's own workspace itself (or a Python function that does so around
    a ``nogil`` kernel, as :func:`soadyn.closed.embedding.algorithms.embedding_batch`'s
    blocks). ``min_block``: the fewest states in a block (:data:`MIN_BLOCK` for calls of
    one evaluation per state; a rollout, T steps per state, passes :func:`rollout_min_block`).

    Numba's ``prange`` would run the same loop on its own threads, but a parallel kernel
    takes 3–5× longer to compile than this serial one (13 s against 3 s for the compiled
    direct method): the threads are Python's, the loop over each block is compiled.
    """
    batch = status.shape[0]
    blocks = min(BLOCKS_PER_THREAD * batch_threads(), -(-batch // max(1, int(min_block))))
    if blocks <= 1:
        _run_block(kernel, d, args, status, 0, batch)
        return
    edges = [batch * k // blocks for k in range(blocks + 1)]
    taken = itertools.count()  # the next block to take (next() on it is atomic under the GIL)

    def take_blocks():
        k = next(taken)
        while k < blocks:
            _run_block(kernel, d, args, status, edges[k], edges[k + 1])
            k = next(taken)

    # the calling thread takes blocks too: it is running already, where a worker woken
    # after the caller's single-threaded work is first queued on the caller's core by the
    # OS and reaches the idle one only later (a batch right after a loop of single calls
    # measured a quarter slower with the caller waiting: benchmarks/results/design_notes.md)
    pool = _worker_pool()
    jobs = [pool.submit(take_blocks) for _ in range(batch_threads() - 1)]
    try:
        take_blocks()
    finally:  # the workers' blocks write into the caller's arrays: wait for every one, also on an error
        errors = [job.exception() for job in jobs]
    for error in errors:
        if error is not None:
            raise error


def _merge_states(x):
    """A C-contiguous (B, n, ...) array as (B·n, ...): its states one after another (a view)."""
    return x.reshape((-1,) + x.shape[2:])


def thread_tables(d):
    """``(mi, mf, ws)``: the leading arguments of a tree kernel in the calling thread — the
    tables of ``d`` (the model's :class:`~soadyn.core.compile.Derived` store) and this
    thread's workspace (the ``lead`` of :func:`stacked_block`, as ``partial(thread_tables, d)``)."""
    c = d.compiled
    return c.mi, c.mf, d.buffer()


def stacked_block(kernel, lead, states, params, outs, private, status, start, stop):
    """States start..stop−1 of a batch by one call of a kernel that evaluates B states
    stored one after another (:func:`soadyn.core.layout.state_of`): ``kernel(*lead(),
    *states, *params, *outs)`` on the block's rows of ``states`` and ``outs`` (C-contiguous
    arrays with a leading batch dimension, whose rows are then C-contiguous, first two axes
    merged). ``lead()``, called in the thread that runs the block, gives the kernel's
    leading arguments: the tables and this thread's workspace (:func:`thread_tables`), or
    the block's own copy of tables that hold their workspaces (the embedding method). The
    parameters at the positions ``private`` (scratch the kernel writes) are copied for the
    block. A block whose kernel reports a status other than OK runs again state by state,
    to find the status of each. Runs as a block of :func:`run_blocks`."""
    first = lead()
    if private:
        params = tuple(p.copy() if k in private else p for k, p in enumerate(params))
    # the block's rows (an input that is not C-contiguous copied; outputs are, by validation)
    states = tuple(np.ascontiguousarray(x[start:stop]) for x in states)
    outs = tuple(o[start:stop] for o in outs)
    if kernel(*first, *(_merge_states(x) for x in states), *params, *(_merge_states(o) for o in outs)) == 0:
        return
    for b in range(stop - start):
        status[start + b] = kernel(*first, *(x[b] for x in states), *params, *(o[b] for o in outs))


class GeneralPath(TypeError):
    """The argument types have no compiled version: take the general path."""


def _mismatch(*args, **kwargs):
    raise GeneralPath("argument types need the general path")


def _no_conversion(*args, **kwargs):
    return False


class ExactCall:
    """``general``: the kernel's dispatcher; ``fast``: its non-compiling twin."""

    __slots__ = ("general", "fast")

    def __init__(self, kernel):
        self.general = kernel
        if not numba_patches.dispatcher_hooks_usable():
            # (another Numba: the hooks may be gone; every call takes the general path)
            self.fast = _mismatch
            return
        # (the same Python function as a kernel again: one kind in the registry; no cache,
        # since it never compiles)
        fast = jit.kernel(cache=False)(kernel.py_func)
        # Numba's dispatcher calls these hooks when no compiled version matches; the
        # defaults compile, search type conversions or format a message (tens of calls' time).
        fast._can_compile = False
        fast._compile_for_args = _mismatch
        fast._search_new_conversions = _no_conversion
        fast._explain_matching_error = _mismatch
        fast._explain_ambiguous = _mismatch
        self.fast = fast
        self.share()

    def share(self):
        """Make every version ``general`` has compiled callable through ``fast``."""
        fast = self.fast
        if fast is _mismatch:
            return
        for sig, cres in list(self.general.overloads.items()):
            if sig not in fast.overloads:
                fast.add_overload(cres)

    def __call__(self, *args):
        """Call through the general dispatcher, then share what it compiled."""
        result = self.general(*args)
        self.share()
        return result


class Arg:
    """A state argument: its ``name``, its length (``"nq"``, ``"nv"``, or a function of the
    model; ``"forces"`` for ``f_ext``, (nbodies, 6)) and whether None is allowed
    (``optional``: absent = zero)."""

    __slots__ = ("name", "size", "optional")

    def __init__(self, name, size, optional=False):
        self.name, self.size, self.optional = name, size, optional

    def check(self, x, model, c, batch, batch_ok):
        """``x`` validated; an absent argument (None, ``ABSENT``, ``NO_FORCES``) as the
        empty array of the batch."""
        if self.size == "forces":
            if x is None or x is NO_FORCES:
                return NO_FORCES if batch is None else np.zeros((batch, 0, 6))
            return val.external_forces(x, c.nb, batch)
        if self.optional and (x is None or x is ABSENT):
            return ABSENT if batch is None else np.zeros((batch, 0))
        n = getattr(c, self.size) if isinstance(self.size, str) else self.size(model)
        return val.vector(x, n, self.name, batch_ok)


def _positional_call(function, n_state, n_params):
    """The fast path of ``function`` (a :class:`CompiledFunction` whose outputs are shape
    attributes of the compiled model, or one :class:`ParamShape` output) as a plain function
    of positional arguments, generated for its arity (the technique of ``dataclasses``: no
    tuple is built, no argument unpacked); anything else goes through
    ``function(model, state, params, out, workspace)``. An absent optional rate or external
    forces may be given as None (the public functions pass them so): the plain-call kernel
    takes None, the others their stand-ins ``ABSENT`` and ``NO_FORCES``."""
    state = ", ".join(f"s{k}" for k in range(n_state))
    params = "".join(f", p{k}" for k in range(n_params))
    closed_check = "c.closed" if function.tree_function is not None else "False"
    if function.shapes is None:  # one output, shaped by the first parameter
        allocate, outputs, returned = "result = empty(shape_of(c, p0)) if out is None else out", "result", "result"
    elif len(function.shapes) == 1:
        allocate = f"result = empty(c.{function.shapes[0]}) if out is None else out"
        outputs = returned = "result"
    else:  # several outputs: a given ``out`` tuple is checked by the general path
        allocate = "; ".join(f"o{k} = empty(c.{shape})" for k, shape in enumerate(function.shapes))
        outputs = ", ".join(f"o{k}" for k in range(len(function.shapes)))
        returned = f"({outputs})"
    # an optional rate or external forces given as an empty array: the kernel reads it as
    # absent (zero), as it reads ABSENT or NO_FORCES, but the caller meant an array: the
    # general path names the shape (tested in the order that is cheapest for the common
    # call: a given rate, absent forces)
    given = "".join(f" and (s{k} is NO_FORCES or len(s{k}))" if forces else f" and (len(s{k}) or s{k} is ABSENT)"
                    for k, forces in function.absent_positions)

    def stand_ins(indent):  # absent arguments given as None: their stand-ins
        return "".join(f"\n{indent}if s{k} is None:\n{indent}    s{k} = {'NO_FORCES' if forces else 'ABSENT'}"
                       for k, forces in function.absent_positions)
    general = f"return function(model, ({state},), ({params[2:]}{',' if n_params else ''}), out, workspace)"
    plain = ""
    if function.plain is not None:
        # the plain call (soadyn.kernels.plain): no workspace given, absent external
        # forces, the parameters at their plain values; the packed tables exist once this
        # thread has made one validated call of a plain-call function on this model version.
        # When it fails, the fast path below would fail too (the same argument types, the
        # same computation): the general path names what is wrong
        forces = [k for k, f in function.absent_positions if f]
        when = " and ".join(["workspace is None"] + [f"s{k} is None" for k in forces]
                            + [f"p{k} is {value!r}" for k, value in enumerate(function.plain_params)])
        plain_state = ", ".join(f"s{k}" for k in range(n_state) if k not in forces)
        shape = function.shapes[0]
        plain = f"""
    if {when}:
        try:  # (AttributeError: not a current model, or no tables on this thread yet)
            d = model._derived
            tables = d.threads.plain_tables
        except AttributeError:
            pass
        else:
            result = empty(d.compiled.{shape}) if out is None else out
            try:
                if plain(tables, {plain_state}, result) == 0:
                    return result
            except GeneralPath:  # argument types without a compiled version in this process
                if first_plain(function, tables, ({plain_state},), result, d.compiled.{shape}):
                    return result{stand_ins("            ")}
            {general}"""
    source = f"""
def call(model, {state}{params}, out=None, workspace=None):{plain}{stand_ins("    ")}
    try:  # (AttributeError: not a current model (see soadyn.core.compile), or this thread's first call)
        d = model._derived
        c = d.compiled
        # a given workspace: this model version's (else the general path names what it is)
        ws = d.threads.buffer if workspace is None else \
            workspace.buffer if type(workspace) is Workspace and workspace.store is d else None
        if ws is not None and not {closed_check}{" and out is None" if returned.startswith("(") else ""}:
            {allocate}
            if fast(c.mi, c.mf, ws, {state}{params}, {outputs}) == 0{given}:
                return {returned}
    except (AttributeError, GeneralPath):
        pass
    {general}
"""
    scope = {"empty": np.empty, "fast": function.fast, "GeneralPath": GeneralPath, "function": function, "ABSENT": ABSENT,
             "NO_FORCES": NO_FORCES, "Workspace": Workspace, "shape_of": function.shape_of,
             "plain": None if function.plain is None else function.plain.fast, "first_plain": _first_plain_call}
    exec(compile(source, f"<soadyn.core.call: fast path of {function.exact.general.py_func.__name__}>", "exec"), scope)
    return scope["call"]


def _first_plain_call(function, tables, state, result, shape):
    """The plain call whose argument types have no compiled version in this process yet:
    compile (or load) one when they are the types the plain-call kernels are made for —
    C-contiguous float64 vectors, or None for an optional rate, and an output of ``shape``
    of that kind — and return whether it succeeded; anything else goes to the general
    path."""
    if not all(val.kernel_vector(x) or (x is None and optional) for x, optional in zip(state, function.plain_optional)):
        return False
    if (type(result) is not np.ndarray or result.dtype != np.float64 or not result.flags.c_contiguous
            or not result.flags.writeable or result.shape != shape):
        return False
    return function.plain(tables, *state, result) == 0


class ParamShape:
    """The ``outputs`` of a :class:`CompiledFunction` with one output whose shape is
    ``shape_of(c, first_param)``, a tuple (``c`` the compiled model)."""

    __slots__ = ("shape_of",)

    def __init__(self, shape_of):
        self.shape_of = shape_of


class CompiledFunction:
    """A kernel, its batched twin and the description of its arguments.

    Parameters
    ----------
    kernel : ``kernel(mi, mf, ws, *state, *params, *outputs) -> status``, or, for a kernel
        whose single-state form takes other arguments (see
        :func:`soadyn.kernels.cluster.embedding.embedding_kernel`), a plain function
        ``kernel(c, ws, state, params, outputs) -> status`` (``c`` the compiled model,
        ``ws`` the workspace, the rest tuples) that calls it; such a function has no fast
        path.
    batch : the batched kernel; ``"stacked"``: ``kernel`` itself evaluates B states stored
        one after another (:func:`soadyn.core.layout.state_of`, compiled with
        ``nogil=True``), run on blocks of rows by :func:`stacked_block`; ``"loop"``:
        batches run state by state; None: no batches; or a plain function ``batch(d,
        values, params, outs, status)`` (``d`` the model's
        :class:`~soadyn.core.compile.Derived` store, the rest validated) that runs them.
    args : tuple of :class:`Arg`, the state arguments (checked, batched).
    outputs : ``outputs(c, state, params) -> tuple of shapes`` for one state (``c`` the
        :class:`~soadyn.core.compile.CompiledModel`, ``state`` and ``params`` the
        arguments as given); or the name of one shape attribute of ``c`` (``"v_shape"``,
        ...) for a single output of that shape, or a tuple of such names for several
        outputs; or a :class:`ParamShape`, for a single output whose shape the first
        parameter gives (the packed tables of a cluster tree). ``outputs`` returning None
        means that the caller always provides the outputs (``out``, a tuple), unchecked:
        internal kernels only.
    params : optional converters of the parameters (e.g. ``bool``; None: as given) for the
        general path.
    allocate : for a kernel with several outputs, ``allocate(c, state) -> tuple of
        arrays`` for the fast path (None entries where ``outputs`` has None).
    names : the arguments that the kernel's ``BAD_FIRST``, ``BAD_SECOND``, ... statuses
        refer to (default: the state arguments in order).
    private : with ``batch="stacked"``, the positions in ``params`` of scratch arrays the
        kernel writes, copied for each block of a batch.
    plain : for a tree function whose one output is a shape attribute of the compiled
        model, its plain-call kernel ``plain(tables, *state, output)`` (:mod:`soadyn.kernels.plain`:
        the packed tables of :meth:`~soadyn.core.compile.Derived.plain_tables`, the state
        without the external forces, absent rates as None), which :attr:`call` takes when
        no workspace is given, the external forces are absent and the parameters are
        ``plain_params``.
    tree_function : for a function that computes the dynamics of a tree (ABA, RNEA, mass
        matrix, ...), its public name: it then raises
        :class:`~soadyn.core.status.ClosedChainError` for a model with loops, couplings or
        user constraints, whose spanning tree must be asked for explicitly
        (``model.spanning_tree()``). None (default): kinematics, Jacobians, energies and
        closed-chain kernels, correct on any model. The test is one attribute of the
        compiled model (``closed``) per call.
    """

    def __init__(self, kernel, batch, args, outputs, params=(), allocate=None, names=None, tree_function=None,
                 private=(), plain=None, plain_params=()):
        compiled = hasattr(kernel, "py_func")  # a Numba dispatcher, else a plain function calling one
        self.plain = None if plain is None else ExactCall(plain)
        self.plain_params = tuple(plain_params)
        #: per argument of the plain kernel (the state without the external forces): may it be None
        self.plain_optional = tuple(a.optional for a in args if a.size != "forces")
        self.exact = ExactCall(kernel) if compiled else None
        # (a plain function has no fast path: its ``fast`` sends every call to the general one)
        self.fast = self.exact.fast if compiled else _mismatch
        self.adapter = None if compiled else kernel
        self.batch = batch
        #: ``batch`` is a plain function ``batch(d, values, params, outs, status)`` that runs
        #: the validated batch (its kernel takes other arguments than the block kernels')
        self.batch_adapter = batch is not None and not isinstance(batch, str) and not hasattr(batch, "py_func")
        self.private = frozenset(private)
        self.args = tuple(args)
        self.names = tuple(a.name for a in self.args if a.size != "forces") if names is None else tuple(names)
        #: the output shapes as attribute names of the compiled model, when they are such
        self.shapes = self.shape = self.shape_of = None
        if isinstance(outputs, str):
            outputs = (outputs,)
        if isinstance(outputs, tuple):
            shapes = self.shapes = outputs
            self.outputs = lambda c, state, params: tuple(getattr(c, s) for s in shapes)
            if len(shapes) == 1:
                self.shape = shapes[0]
            elif allocate is None:
                def allocate(c, state):
                    return tuple(np.empty(getattr(c, s)) for s in shapes)
        elif isinstance(outputs, ParamShape):
            self.shape_of = outputs.shape_of
            self.outputs = lambda c, state, params: (outputs.shape_of(c, params[0]),)
        else:
            self.outputs = outputs
        self.params = tuple(params)
        self.allocate = allocate
        self.single = allocate is None
        #: known at construction for named shapes, else after the first general call
        self.n_outputs = None if self.shapes is None else len(self.shapes)
        self.tree_function = tree_function
        #: the name an error calls the function by: its tree-function name, else its kernel's
        self.public_name = tree_function or getattr(kernel, "py_func", kernel).__name__.removesuffix("_kernel")
        #: (position in ``state``, whether it is ``f_ext``) of the arguments that may be
        #: absent: optional vectors (``ABSENT``) and external forces (``NO_FORCES``). The
        #: kernels read an empty array there as zero, so the fast path returns only when
        #: each is the stand-in or not empty (a caller's empty array: the general path,
        #: which names its shape)
        self.absent_positions = tuple((k, a.size == "forces") for k, a in enumerate(self.args)
                                      if a.optional or a.size == "forces")
        if compiled and (self.shapes is not None or self.shape_of is not None):
            #: ``call(model, *state, *params, out=None, workspace=None)``: :meth:`__call__`
            #: with positional arguments (one per state argument and per parameter), for
            #: the hottest public functions: building and unpacking the two tuples costs
            #: a fifth of a call on a 6-joint arm
            self.call = _positional_call(self, len(self.args), len(self.params))

    def __call__(self, model, state, params=(), out=None, workspace=None):
        """Run the kernel on ``state`` (a tuple in the order of ``args``); returns the
        output array, or the tuple of outputs when there are several. ``out``: the
        output array (a tuple of them for several outputs), or None to allocate."""
        # The fast path, for the common call (a model whose compiled form is current, this
        # thread's workspace, a single state of the kernel's exact types): every line here
        # costs a few percent of a kernel call on a 6-joint arm, so it only
        # looks up what that call needs; anything else takes the general path.
        d = getattr(model, "_derived", None)
        if d is not None:  # current (see soadyn.core.compile)
            c = d.compiled
            if workspace is None:
                ws = getattr(d.threads, "buffer", None)  # None: this thread's first call
            else:  # this model version's workspace (else the general path names what it is)
                ws = workspace.buffer if type(workspace) is Workspace and workspace.store is d else None
            if ws is not None and not (c.closed and self.tree_function is not None):
                try:
                    if self.single:
                        result = out if out is not None else np.empty(
                            getattr(c, self.shape) if self.shape is not None else self.outputs(c, state, params)[0])
                        if self.fast(c.mi, c.mf, ws, *state, *params, result) == 0 and self._rates_given(state):
                            return result
                    elif out is None or (type(out) is tuple and len(out) == self.n_outputs):
                        # (an ``out`` of another length would reach the dispatcher as a wrong
                        # argument count: the general path names it instead)
                        result = self.allocate(c, state) if out is None else out
                        if self.fast(c.mi, c.mf, ws, *state, *params, *result) == 0 and self._rates_given(state):
                            return result
                except GeneralPath:
                    pass
        return self.general(model, state, params, out, workspace)

    def _rates_given(self, state):
        """False when an argument of ``state`` that may be absent is an empty array other
        than its stand-in (see ``absent_positions``)."""
        for k, forces in self.absent_positions:
            x = state[k]
            if len(x) == 0 and x is not (NO_FORCES if forces else ABSENT):
                return False
        return True

    def general(self, model, state, params, out, workspace):
        """Validated path: conversions, clear errors (also for what the fast path
        rejected, or a nonzero status), batches."""
        if not hasattr(model, "_derived"):
            raise val.not_a_model(model)
        d = derived(model)
        c = d.compiled
        if c.closed and self.tree_function is not None:
            raise st.closed_chain_error(model, self.tree_function)
        check_workspace(workspace, d)
        params = tuple(p if conv is None else conv(p) for conv, p in zip(self.params, params)) \
            + tuple(params[len(self.params):])
        batch_ok = self.batch is not None
        first = self.args[0].check(state[0], model, c, None, batch_ok)
        batch = first.shape[0] if first.ndim == 2 else None
        values = (first,) + tuple(a.check(x, model, c, batch, batch_ok) for a, x in zip(self.args[1:], state[1:]))
        val.same_batch(first, *((a.name, x) for a, x in zip(self.args[1:], values[1:])))
        shapes = self.outputs(c, values, params)
        # the number of outputs is fixed per function (an internal kernel's caller always
        # passes all of them); the fast path checks ``out`` against it
        self.n_outputs = len(shapes) if shapes is not None else len(out)
        lead = () if batch is None else (batch,)
        if shapes is None:  # an internal kernel whose caller provides every output
            outs = out
        elif out is not None:
            given = out if isinstance(out, tuple) else (out,)
            if len(given) != len(shapes):
                raise TypeError(f"out: expected {len(shapes)} output arrays, got {len(given)}")
            outs = tuple(None if s is None else val.output(o, lead + s, f"out[{k}]" if len(shapes) > 1 else "out")
                         for k, (o, s) in enumerate(zip(given, shapes)))
        else:
            outs = tuple(None if s is None else np.empty(lead + s) for s in shapes)
        if batch is None:
            ws = d.buffer() if workspace is None else workspace.buffer
            if self.adapter is not None:
                status = self.adapter(c, ws, values, params, outs)
            else:
                status = self.exact(c.mi, c.mf, ws, *values, *params, *outs)
            if status:
                st.raise_status(status, self.names, model=model, state=values + params, function=self.public_name)
            if self.plain is not None:
                # the next plain call of this thread takes the plain kernel; its version for
                # the arguments' types is compiled (or loaded) then, not here: the first call
                # of a function that runs this one once (the closed-chain methods) does not
                # pay for it (0.3-0.7 s a version from an empty cache)
                d.plain_tables()
        else:
            status = np.zeros(batch, dtype=np.int64)
            if self.batch_adapter:
                self.batch(d, values, params, outs, status)
            elif self.batch == "stacked":
                run_blocks(stacked_block, None, (self.exact.general, partial(thread_tables, d), values, params, outs,
                                                 self.private), status)
            elif self.batch == "loop":
                ws = d.buffer() if workspace is None else workspace.buffer
                for b in range(batch):
                    row = tuple(None if x is None else x[b] for x in values)
                    status[b] = self.exact(c.mi, c.mf, ws, *row, *params,
                                           *(None if o is None else o[b] for o in outs))
            else:
                run_blocks(self.batch, d, (*values, *params, *outs), status)
            st.check_batch_status(status, self.names, model, values + params, self.public_name)
        return outs[0] if len(outs) == 1 else outs
