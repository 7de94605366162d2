"""Batches beyond one process or machine: soadyn's batched calls on a Dask cluster.

:func:`map_batches` splits the leading batch dimension of the arrays into chunks, ships
the model to the workers once (as the result of one task, which each worker fetches and
keeps: it deserializes it once, so its compiled arrays are built once per worker), runs the batched
compiled call on each chunk there and gathers the results in order. :func:`rollout` is its
form for :func:`soadyn.rollout`. Workers warm their kernel cache once, before the first
chunk: a worker plugin evaluates the function on one row (on a worker that joins later
too), loading the compiled kernels from Numba's disk cache or compiling them.

A chunk whose worker dies is run again on another worker by the Dask scheduler (at most
``distributed.scheduler.allowed-failures`` times, default 3); the results are gathered by
chunk, so none is lost or counted twice. Needs the optional dependency
``dask[distributed]`` (``pip install soadyn[distributed]``).
"""
from __future__ import annotations

import os
import uuid
from contextlib import contextmanager

import numpy as np

try:
    import distributed
    from distributed.diagnostics.plugin import WorkerPlugin
except ImportError as e:  # pragma: no cover - the optional extra is absent
    raise ImportError("soadyn.distributed needs Dask's distributed scheduler: pip install 'soadyn[distributed]' "
                      "(or 'dask[distributed]')") from e

from .core import validation as val
from .dynamics.rollout import rollout as _rollout

__all__ = ["map_batches", "rollout", "local_cluster"]

#: rows per chunk when none is given (rollouts: steps per chunk): a chunk costs a few ms of
#: scheduling and transfer, 1e5 states of a small robot's ABA about 0.1 s
#: (benchmarks/results/distributed.md)
DEFAULT_CHUNK = 65536


def local_cluster(n_workers=None, **kwargs):
    """A ``distributed.LocalCluster`` of ``n_workers`` single-threaded worker processes
    (default: one per core) whose batched calls run on one thread each
    (``NUMBA_NUM_THREADS=1``, so workers do not compete for the cores). ``kwargs`` go to
    ``LocalCluster``. This is the cluster :func:`map_batches` starts when it finds no client."""
    env = dict(kwargs.pop("env", {}) or {})
    env.setdefault("NUMBA_NUM_THREADS", "1")
    options = {"threads_per_worker": 1, "processes": True, "dashboard_address": None, **kwargs}
    return distributed.LocalCluster(n_workers=n_workers or os.cpu_count() or 1, env=env, **options)


@contextmanager
def _connected(client):
    """The Dask client to use: ``client`` itself; a client connected to an address or a
    cluster object (closed afterwards); for None the current default client, or else a
    :func:`local_cluster` started and closed around the call."""
    if isinstance(client, distributed.Client):
        yield client
        return
    if client is None:
        try:
            yield distributed.client.default_client()
            return
        except ValueError:  # no client in this process
            pass
        with local_cluster() as cluster, distributed.Client(cluster) as c:
            yield c
        return
    if isinstance(client, str) or hasattr(client, "scheduler_address"):
        with distributed.Client(client) as c:
            yield c
        return
    raise TypeError(f"client: expected a distributed.Client, a scheduler address (str), a cluster or None, "
                    f"got {type(client).__name__}")


def _evaluate(fn, model, arrays, kwargs):
    """One chunk, on a worker."""
    return fn(model, *arrays, **kwargs)


class _WarmKernels(WorkerPlugin):
    """Evaluates ``fn`` on one row when a worker starts (or when registered): the worker
    loads (or compiles) the kernels ``fn`` needs before its first chunk."""

    idempotent = True  # registering the same warm-up again does nothing

    def __init__(self, fn, model, sample, kwargs):
        self.fn, self.model, self.sample, self.kwargs = fn, model, sample, kwargs

    def setup(self, worker):
        try:
            _evaluate(self.fn, self.model, self.sample, self.kwargs)
        except Exception:  # noqa: BLE001 - a bad row is reported by its chunk, not by a worker that fails to start
            pass


def _identity(x):
    return x


def _batch_arrays(arrays):
    """The arrays (None entries kept) and their common leading dimension B."""
    if isinstance(arrays, np.ndarray) or not isinstance(arrays, (tuple, list)):
        raise TypeError(f"arrays: expected a tuple of arrays sharing their leading (batch) dimension, "
                        f"got {type(arrays).__name__}")
    arrays = tuple(None if a is None else np.asarray(a) for a in arrays)
    sizes = {k: a.shape[0] for k, a in enumerate(arrays) if a is not None and a.ndim > 0}
    if not sizes or any(a is not None and a.ndim == 0 for a in arrays):
        raise ValueError("arrays: expected at least one array, each with a leading batch dimension, got shapes "
                         f"{[None if a is None else a.shape for a in arrays]}")
    batch = next(iter(sizes.values()))
    for k, n in sizes.items():
        if n != batch:
            raise ValueError(f"arrays[{k}]: batch size {n} does not match arrays[0]'s {batch}")
    return arrays, batch


def _concatenate(parts):
    """Chunk results joined along the batch dimension (an array, or a tuple of arrays)."""
    if isinstance(parts[0], tuple):
        return tuple(np.concatenate(column) for column in zip(*parts))
    return np.concatenate(parts)


def map_batches(fn, model, arrays, client=None, chunk=DEFAULT_CHUNK, kwargs=None):
    """Evaluate a batched soadyn function over a large batch on a Dask cluster.

    ``fn(model, *arrays, **kwargs)`` is evaluated on chunks of at most ``chunk`` rows of
    the arrays, on the workers, and the results are joined in order: the result equals
    ``fn(model, *arrays, **kwargs)`` in one process.

    Parameters
    ----------
    fn : a function of ``(model, *arrays, **kwargs)`` that accepts a leading batch
        dimension, e.g. ``soadyn.aba``, ``soadyn.rnea``, ``soadyn.mass_matrix``,
        ``soadyn.rollout``. It must pickle (a module-level function; Dask uses cloudpickle).
    model : Model, shipped once to each worker.
    arrays : tuple of arrays sharing the leading batch dimension B (e.g. ``(q, v, tau)``
        with shapes (B, nq), (B, nv), (B, nv)); a None entry is passed as None.
    client : a ``distributed.Client``; a scheduler address (``"tcp://host:8786"``) or a
        cluster object, connected to for this call; or None: the current default Dask
        client, else a :func:`local_cluster` (one single-threaded worker process per core)
        started for this call and closed after it (seconds of start-up: pass a client to
        keep workers across calls).
    chunk : rows per task (a positive integer, default 65536). Each chunk costs a fixed scheduling and
        transfer overhead; ``benchmarks/results/distributed.md`` measures it.
    kwargs : optional dict of keyword arguments for ``fn`` (``dt``, ``integrator``,
        ``gravity``, ...).

    Returns
    -------
    fn's result for all B rows: an array (B, ...) or a tuple of them.

    Each worker runs one chunk at a time per thread; a worker's batched call itself uses
    ``NUMBA_NUM_THREADS`` threads (:func:`local_cluster` sets 1: one process per core).
    """
    if not callable(fn):
        raise TypeError(f"fn: expected a soadyn function (callable), got {type(fn).__name__}")
    val.model_argument(model)
    arrays, batch = _batch_arrays(arrays)
    if isinstance(chunk, bool) or not isinstance(chunk, (int, np.integer)) or chunk < 1:
        raise ValueError(f"chunk: expected a positive number of rows, got {chunk!r}")
    kwargs = {} if kwargs is None else dict(kwargs)
    chunk = int(chunk)
    edges = list(range(0, batch, chunk)) + [batch]
    with _connected(client) as c:
        sample = tuple(None if a is None else a[:1] for a in arrays)
        warm = _WarmKernels(fn, model, sample, kwargs)
        name = (f"soadyn-warm-{getattr(fn, '__module__', '')}.{getattr(fn, '__qualname__', repr(fn))}-"
                f"{[None if a is None else (a.dtype.str, a.ndim) for a in arrays]}-{sorted(kwargs)}")
        c.register_plugin(warm, name=name)
        tag = uuid.uuid4().hex
        # the model as the result of a task, not scattered data: a worker that dies holding
        # the only copy of scattered data loses it for good (and every chunk with it); a
        # task's result is recomputed from the task, which carries the pickled model
        shipped = c.submit(_identity, model, key=f"soadyn-model-{tag}", pure=False)
        futures = [c.submit(_evaluate, fn, shipped,
                            tuple(None if a is None else a[start:stop] for a in arrays), kwargs,
                            key=f"soadyn-{getattr(fn, '__name__', 'fn')}-{tag}-{k}")
                   for k, (start, stop) in enumerate(zip(edges[:-1], edges[1:]))]
        # one wait and one gather: gathering each chunk as it completes (as_completed with
        # results) sends concurrent requests down one connection, which tornado 6.6 fails on
        distributed.wait(futures)
        for k, future in enumerate(futures):
            if future.status == "error":  # its messages count rows within the chunk: say which
                e = future.exception()
                if e.args and isinstance(e.args[0], str):
                    e.args = (f"{e.args[0]} [in chunk {k}: rows {edges[k]} to {edges[k + 1] - 1} of the batch]",
                              *e.args[1:])
                raise e.with_traceback(future.traceback())
        parts = c.gather(futures)
        del shipped
    return _concatenate(parts)


def rollout(model, q0, v0, tau, dt, integrator="semi-implicit-euler", client=None, chunk=None):
    """:func:`soadyn.rollout` of B initial states on a Dask cluster (:func:`map_batches`).

    q0 (B, nq), v0 (B, nv) or None, tau (B, T, nv): returns q (B, T + 1, nq) and v
    (B, T + 1, nv), equal to ``soadyn.rollout(model, q0, v0, tau, dt, integrator)``.
    ``chunk``: rollouts per task; None: about ``DEFAULT_CHUNK`` steps per task
    (``DEFAULT_CHUNK // T`` rollouts, at least one).
    """
    if chunk is None:
        steps = np.shape(tau)[1] if np.ndim(tau) == 3 else 1
        chunk = max(1, DEFAULT_CHUNK // max(1, steps))
    q, v = map_batches(_rollout, model, (q0, v0, tau), client, chunk, {"dt": dt, "integrator": integrator})
    return q, v
