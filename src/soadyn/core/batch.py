"""Batch dispatch: how a :class:`~soadyn.core.call.CompiledFunction` evaluates B states.

A batch is a call whose state arguments have a leading batch dimension B (validated by
:func:`soadyn.core.validation.call_arguments`). It runs block by block on worker threads
(:func:`run_blocks`), in one of the ways a :class:`Batch` names:

* :meth:`Batch.twin` — the kernel has a batched twin ``batch(mi, mf, ws, *state, *params,
  *outputs, status, start, stop)``, a serial loop over states start..stop−1 of arrays with
  a leading batch dimension. The kernels whose plain call is an open speed target — ABA,
  RNEA, the mass matrix and its inverse, the world poses, the frame Jacobian — keep one:
  a stacked kernel must release the GIL (``nogil=True``) for its blocks to run
  concurrently, which costs its single calls a tenth of Numba's dispatch, and a twin up to
  a second and a half of a cold compile instead (``benchmarks/results/design_notes.md``).
* :meth:`Batch.stacked` — the kernel itself evaluates B states stored one after another
  (:func:`soadyn.core.layout.state_of`); a block is one call of the kernel on its rows
  (:func:`stacked_block`).
* :meth:`Batch.loop` — state by state in the calling thread (cheap kernels).
* :meth:`Batch.runner` — a Python function that runs the validated batch itself (a kernel
  whose arguments are not the block kernels').
* :data:`NO_BATCH` — the function takes one state only.
"""
from __future__ import annotations

import itertools
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from functools import partial

import numpy as np
from numba.core import config

__all__ = ["Batch", "NO_BATCH", "run_batch", "run_blocks", "stacked_block", "thread_tables", "batch_threads",
           "rollout_min_block", "BLOCKS_PER_THREAD", "MIN_BLOCK"]

#: a batched call splits its states into up to BLOCKS_PER_THREAD blocks per thread (so a
#: thread slowed down by other work on its core takes fewer of them instead of holding up
#: the call), of at least MIN_BLOCK states each (a block costs a few µs to hand out)
BLOCKS_PER_THREAD = 4
MIN_BLOCK = 16


class Batch:
    """How a compiled function runs a batch: made by one of the named constructors
    (:meth:`twin`, :meth:`stacked`, :meth:`loop`, :meth:`runner`), never directly.

    ``kind``: "twin", "stacked", "loop" or "runner"; ``kernel``: the batched twin (twin)
    or the Python function ``run(d, values, params, outs, status)`` (runner), else None;
    ``private``: with "stacked", the positions in ``params`` of scratch arrays the kernel
    writes, copied for each block."""

    __slots__ = ("kind", "kernel", "private")

    def __init__(self, kind, kernel=None, private=()):
        self.kind, self.kernel, self.private = kind, kernel, frozenset(private)

    @classmethod
    def twin(cls, kernel):
        """Batches by the batched twin ``kernel(mi, mf, ws, *state, *params, *outputs,
        status, start, stop)`` (compiled with ``nogil=True``), in blocks on the threads."""
        return cls("twin", kernel)

    @classmethod
    def stacked(cls, private=()):
        """Batches by the kernel itself on blocks of rows (it evaluates B states stored one
        after another, compiled with ``nogil=True``); ``private``: positions in the
        parameters of scratch arrays it writes (copied per block)."""
        return cls("stacked", private=private)

    @classmethod
    def loop(cls):
        """Batches state by state in the calling thread, with its workspace."""
        return cls("loop")

    @classmethod
    def runner(cls, run):
        """Batches by ``run(d, values, params, outs, status)`` (``d`` the model's
        :class:`~soadyn.core.compile.Derived` store, the rest validated, ``status`` (B,)
        int64 to fill)."""
        return cls("runner", run)

    def __repr__(self):
        return f"Batch.{self.kind}({'' if self.kernel is None else getattr(self.kernel, '__name__', self.kernel)})"


#: the ``batch`` of a function that takes one state only (a batch is refused by validation)
NO_BATCH = None


def run_batch(function, d, values, params, outs, workspace, status):
    """Evaluate the validated batch ``values`` (state arguments with a leading dimension B)
    of ``function`` (a :class:`~soadyn.core.call.CompiledFunction`) into ``outs``, the
    status of each state into ``status`` (B,)."""
    batch = function.batch
    if batch.kind == "runner":
        batch.kernel(d, values, params, outs, status)
    elif batch.kind == "stacked":
        run_blocks(stacked_block, None, (function.exact.general, partial(thread_tables, d), values, params, outs,
                                         batch.private), status)
    elif batch.kind == "loop":
        c = d.compiled
        ws = d.buffer() if workspace is None else workspace.buffer
        for b in range(status.shape[0]):
            row = tuple(None if x is None else x[b] for x in values)
            status[b] = function.exact(c.mi, c.mf, ws, *row, *params, *(None if o is None else o[b] for o in outs))
    else:  # twin
        run_blocks(batch.kernel, d, (*values, *params, *outs), status)


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
