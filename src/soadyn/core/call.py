"""The declaration of a compiled function: a kernel, its arguments, its outputs and how it
runs a batch (:class:`CompiledFunction`); every public function calls its kernel through one.

Every compiled algorithm is called as ``kernel(mi, mf, ws, *state, *params, *outputs)``
and returns a status code (:mod:`soadyn.core.status`). The path of a call, each step an
ordinary function in the module named for it:

1. **Fast path** (:mod:`soadyn.core.fast_path`): the plain call, else the kernel itself
   when the arguments are of its exact types — no validation in Python.
2. **General path** (:meth:`CompiledFunction.general`): validation
   (:func:`soadyn.core.validation.call_arguments`: conversions and checks that name the
   argument, the expected and the received value), then one state, or a batch
   (:mod:`soadyn.core.batch`); a nonzero status raises the error it means
   (:func:`soadyn.core.status.raise_status`).

The options are named constructors: the outputs an :class:`Outputs` (:meth:`Outputs.shaped`,
:meth:`Outputs.param_shaped`, :meth:`Outputs.computed`), the batches a
:class:`~soadyn.core.batch.Batch` (``twin``, ``stacked``, ``loop``, ``runner``) or
:data:`~soadyn.core.batch.NO_BATCH`. ``docs/call_path.md`` lists the frames of a call.
"""
from __future__ import annotations

import numpy as np

from . import status as st
from . import validation as val
from .batch import Batch, run_batch
from .compile import check_workspace, derived
from .fast_path import ExactCall, _mismatch, call, rendered_call
from .validation import ABSENT, NO_FORCES

__all__ = ["Arg", "Outputs", "CompiledFunction", "ABSENT", "NO_FORCES"]


class Arg:
    """A state argument: its ``name``, its length (``"nq"``, ``"nv"``, or a function of the
    model; ``"forces"`` for ``f_ext``, (nbodies, 6)) and whether None is allowed
    (``optional``: absent = zero). Validated by :func:`soadyn.core.validation.state_argument`."""

    __slots__ = ("name", "size", "optional")

    def __init__(self, name, size, optional=False):
        self.name, self.size, self.optional = name, size, optional


class Outputs:
    """The outputs of a compiled function: made by one of the named constructors
    (:meth:`shaped`, :meth:`param_shaped`, :meth:`computed`), never directly.

    ``kind``: "shaped", "param_shaped" or "computed"; ``names``: the shape attributes of
    the compiled model (shaped); ``shape_of`` (param_shaped); ``compute`` and
    ``allocate`` (computed)."""

    __slots__ = ("kind", "names", "shape_of", "compute", "allocate")

    def __init__(self, kind, names=None, shape_of=None, compute=None, allocate=None):
        self.kind, self.names, self.shape_of, self.compute = kind, names, shape_of, compute
        self.allocate = allocate

    @classmethod
    def shaped(cls, *names):
        """One output per name, of the shape the compiled model's attribute of that name
        holds (``"v_shape"``, ``"vv_shape"``, ...)."""
        if not names or not all(isinstance(n, str) for n in names):
            raise TypeError(f"Outputs.shaped: expected shape attribute names, got {names!r}")
        allocate = None if len(names) == 1 else (lambda c, state: tuple(np.empty(getattr(c, n)) for n in names))
        return cls("shaped", names=tuple(names), allocate=allocate)

    @classmethod
    def param_shaped(cls, shape_of):
        """One output of shape ``shape_of(c, first_param)``, a tuple (``c`` the compiled
        model; the packed tables of a cluster tree, the contact points, ...)."""
        return cls("param_shaped", shape_of=shape_of)

    @classmethod
    def computed(cls, compute, allocate=None):
        """Outputs of shapes ``compute(c, state, params)``, a tuple of shapes (None entries:
        an output the kernel does not take; None instead of the tuple: the caller always
        provides the outputs, ``out``, unchecked — internal kernels only). ``allocate(c,
        state)``: for several outputs, the tuple of arrays the fast path passes (None entries
        where ``compute`` has None); without it the function has one output."""
        return cls("computed", compute=compute, allocate=allocate)

    def shapes(self, c, state, params):
        """The output shapes of one state (``c`` the compiled model)."""
        if self.kind == "shaped":
            return tuple(getattr(c, n) for n in self.names)
        if self.kind == "param_shaped":
            return (self.shape_of(c, params[0]),)
        return self.compute(c, state, params)

    def __repr__(self):
        if self.kind == "shaped":
            return f"Outputs.shaped({', '.join(map(repr, self.names))})"
        return f"Outputs.{self.kind}({getattr(self.shape_of or self.compute, '__name__', '?')})"


class CompiledFunction:
    """A kernel, how it runs a batch and the description of its arguments.

    Parameters
    ----------
    kernel : ``kernel(mi, mf, ws, *state, *params, *outputs) -> status``, or, for a kernel
        whose single-state form takes other arguments (see
        :func:`soadyn.kernels.cluster.embedding.embedding_kernel`), a plain function
        ``kernel(c, ws, state, params, outputs) -> status`` (``c`` the compiled model,
        ``ws`` the workspace, the rest tuples) that calls it; such a function has no fast
        path.
    batch : a :class:`~soadyn.core.batch.Batch` (``Batch.twin(kernel)``, ``Batch.stacked()``,
        ``Batch.loop()``, ``Batch.runner(run)``), or ``NO_BATCH``: one state only.
    args : tuple of :class:`Arg`, the state arguments (checked, batched).
    outputs : an :class:`Outputs`.
    params : optional converters of the parameters (e.g. ``bool``; None: as given) for the
        general path.
    names : the arguments that the kernel's ``BAD_FIRST``, ``BAD_SECOND``, ... statuses
        refer to (default: the state arguments in order).
    plain : for a tree function whose one output is a shape attribute of the compiled
        model, its plain-call kernel ``plain(tables, *state, output)`` (:mod:`soadyn.kernels.plain`:
        the packed tables of :meth:`~soadyn.core.compile.Derived.plain_tables`, the state
        without the external forces, absent rates as None), which the fast path takes when
        no workspace is given, the external forces are absent and the parameters are
        ``plain_params``.
    tree_function : for a function that computes the dynamics of a tree (ABA, RNEA, mass
        matrix, ...), its public name: it then raises
        :class:`~soadyn.core.status.ClosedChainError` for a model with loops, couplings or
        user constraints, whose spanning tree must be asked for explicitly
        (``model.spanning_tree()``). None (default): kinematics, Jacobians, energies and
        closed-chain kernels, correct on any model. The test is one attribute of the
        compiled model (``closed``) per call.

    Calls: ``function(model, state, params=(), out=None, workspace=None)`` (state and
    parameters as tuples: :func:`soadyn.core.fast_path.call`); and, for a compiled kernel
    whose outputs are :meth:`Outputs.shaped` or :meth:`Outputs.param_shaped`,
    ``function.call(model, *state, *params, out=None, workspace=None)``, the same path
    rendered for its arity (:func:`soadyn.core.fast_path.rendered_call`), which the hottest
    public functions call.
    """

    def __init__(self, kernel, batch, args, outputs, params=(), names=None, tree_function=None, plain=None,
                 plain_params=()):
        if batch is not None and not isinstance(batch, Batch):
            raise TypeError(f"batch: expected a Batch (Batch.twin, .stacked, .loop, .runner) or NO_BATCH, "
                            f"got {batch!r}")
        if not isinstance(outputs, Outputs):
            raise TypeError(f"outputs: expected an Outputs (Outputs.shaped, .param_shaped, .computed), got {outputs!r}")
        compiled = hasattr(kernel, "py_func")  # a Numba dispatcher, else a plain function calling one
        self.args = tuple(args)
        self.params = tuple(params)
        self.batch = batch
        self.outputs = outputs
        self.exact = ExactCall(kernel) if compiled else None
        # (a plain function has no fast path: its ``fast`` sends every call to the general one)
        self.fast = self.exact.fast if compiled else _mismatch
        self.adapter = None if compiled else kernel
        self.plain = None if plain is None else ExactCall(plain)
        self.plain_params = tuple(plain_params)
        #: per argument of the plain kernel (the state without the external forces): may it be None
        self.plain_optional = tuple(a.optional for a in self.args if a.size != "forces")
        self.names = tuple(a.name for a in self.args if a.size != "forces") if names is None else tuple(names)
        #: one output (passed as one array), else a tuple of them, made by ``allocate(c, state)``
        self.single = outputs.allocate is None
        self.allocate = outputs.allocate
        #: known at construction for named shapes, else after the first general call
        self.n_outputs = None if outputs.names is None else len(outputs.names)
        self.tree_function = tree_function
        #: the name an error calls the function by: its tree-function name, else its kernel's
        self.kernel_name = getattr(kernel, "py_func", kernel).__name__
        self.public_name = tree_function or self.kernel_name.removesuffix("_kernel")
        #: (position in ``state``, whether it is ``f_ext``) of the arguments that may be
        #: absent: optional vectors (``ABSENT``) and external forces (``NO_FORCES``). The
        #: kernels read an empty array there as zero, so the fast path returns only when
        #: each is the stand-in or not empty (a caller's empty array: the general path,
        #: which names its shape)
        self.absent_positions = tuple((k, a.size == "forces") for k, a in enumerate(self.args)
                                      if a.optional or a.size == "forces")
        #: the positions of the external forces in ``state`` (the plain kernels take none)
        self.forces_positions = tuple(k for k, a in enumerate(self.args) if a.size == "forces")
        #: the length of the plain kernel's state: the state arguments before the external forces
        self.plain_count = len(self.args) - len(self.forces_positions)
        if plain is not None and self.forces_positions != tuple(range(self.plain_count, len(self.args))):
            raise ValueError(f"{self.kernel_name}: a plain call needs the external forces last in its state")
        #: the output shapes of one state: ``output_shapes(c, state, params)``
        self.output_shapes = outputs.compute if outputs.kind == "computed" else outputs.shapes
        #: the shape attribute of the one output, for one named output
        self.shape = outputs.names[0] if outputs.names is not None and len(outputs.names) == 1 else None
        if compiled and (outputs.kind == "param_shaped" or outputs.kind == "shaped"):
            #: ``call(model, *state, *params, out=None, workspace=None)``: the fast path
            #: rendered for this function's arity (building and unpacking the two tuples of
            #: the ordinary path costs a fifth of a call on a 6-joint arm)
            self.call = rendered_call(self)

    def __repr__(self):
        return f"<CompiledFunction {self.kernel_name} -> {self.outputs!r}, batch {self.batch!r}>"

    #: ``function(model, state, params=(), out=None, workspace=None)``: run the kernel on
    #: ``state`` (a tuple in the order of ``args``); returns the output array, or the tuple
    #: of outputs when there are several. ``out``: the output array (a tuple of them for
    #: several outputs), or None to allocate. The ordinary path itself, as the method (a
    #: method that called it would cost a frame per call).
    __call__ = call

    def general(self, model, state, params, out, workspace):
        """Validated path: conversions, clear errors (also for what the fast path
        rejected, or a nonzero status), batches."""
        if not hasattr(model, "_derived"):
            raise val.not_a_model(model)
        d = derived(model)
        if d.compiled.closed and self.tree_function is not None:
            raise st.closed_chain_error(model, self.tree_function)
        check_workspace(workspace, d)
        values, params, outs, batch = val.call_arguments(self, model, d, state, params, out)
        # the number of outputs is fixed per function (an internal kernel's caller always
        # passes all of them); the fast path checks ``out`` against it
        self.n_outputs = len(outs)
        if batch is None:
            self._single(model, d, values, params, outs, workspace)
        else:
            status = np.zeros(batch, dtype=np.int64)
            run_batch(self, d, values, params, outs, workspace, status)
            st.check_batch_status(status, self.names, model, values + params, self.public_name)
        return outs[0] if len(outs) == 1 else outs

    def _single(self, model, d, values, params, outs, workspace):
        """One validated state: the kernel (compiling its version for these argument types
        if need be), a nonzero status raised as the error it means."""
        c = d.compiled
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
