"""The exact-type fast path: a public call straight into its compiled kernel, without
validation, when the arguments are of the kernel's exact types.

Validating every argument in Python costs, per array, as much as the dynamics of several
bodies. Numba's dispatcher inspects the argument types anyway to pick a compiled version,
so the call is first tried on a second dispatcher over the same kernel that holds only the
versions already compiled and never compiles (:class:`ExactCall`). Other argument types (a
list, a batch, a strided, read-only or integer array) make it raise :class:`GeneralPath`
at once; the kernels check lengths and finiteness themselves, so a fast call is as safe as
a validated one. Whatever the fast path does not take goes to the validated path,
:meth:`soadyn.core.call.CompiledFunction.general`. Only :class:`GeneralPath` is caught:
an error inside the call is never mistaken for a type mismatch.

Three steps, in the ordinary function :func:`call`:

1. **Plain call** (:func:`plain_call`; functions declared with a ``plain`` kernel: ``rnea``,
   ``aba``, the centroidal maps): one state, the parameters at their plain values (gravity
   on), no external forces, no workspace given — a kernel of few arguments, the model's
   tables and the thread's workspace packed in one array (:mod:`soadyn.kernels.plain`;
   Numba's dispatch costs in proportion to the number of arguments).
2. **Exact-type call**: the kernel itself, through its non-compiling twin, with this
   thread's workspace (or the caller's :class:`~soadyn.core.compile.Workspace`), the
   result kept only when no absent argument was given as an empty array
   (:func:`rates_given`). The rendered call first replaces an absent argument given as
   None by its stand-in (:func:`with_stand_ins`), as the public functions pass None;
   :func:`call` leaves None to the general path, which reads it as absent (its callers
   pass the stand-ins).
3. Else the general path.

:func:`call` is the ordinary form of the path, used by
:meth:`~soadyn.core.call.CompiledFunction.__call__` (state and parameters as tuples).

**The rendered form.** The hottest public functions (``aba``, ``rnea``, ``mass_matrix``,
...) call :attr:`CompiledFunction.call <soadyn.core.call.CompiledFunction>` instead: the
same three steps as one function of positional arguments, rendered per function from
:data:`TEMPLATE` (the technique of ``dataclasses``: no tuple built, no argument unpacked
into the dispatcher; ``benchmarks/results/call_path.md`` measures what that saves). Its
source is registered in :mod:`linecache` under :func:`rendered_filename`, so a traceback
shows its lines; ``tests/core/test_fast_path.py`` renders it for every function that has
one and checks it against :func:`call` on valid and invalid input. The frames from
``sd.aba`` to the kernel are listed in ``docs/call_path.md``.

:class:`ExactCall` uses private hooks of Numba's dispatcher, after checking that they are
there as written for (:data:`soadyn.numba_patches.DISPATCHER_HOOKS`; else every call takes
the general path); ``tests/core/test_call.py`` checks they behave as assumed.
"""
from __future__ import annotations

import linecache

import numpy as np

from .. import numba_patches
from . import jit
from . import validation as val
from .compile import Workspace
from .validation import ABSENT, NO_FORCES

__all__ = ["GeneralPath", "ExactCall", "call", "plain_call", "with_stand_ins", "rates_given",
           "first_plain_call", "TEMPLATE", "PLAIN_STEP", "render", "rendered_filename", "rendered_call"]


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


# --- the ordinary path --------------------------------------------------------------------

def call(function, model, state, params=(), out=None, workspace=None):
    """``function`` (a :class:`~soadyn.core.call.CompiledFunction`) on one call's arguments:
    the plain call, else the exact-type call, else the general path. ``state``: the state
    arguments in the order of ``function.args`` (an absent optional rate or external forces
    as None or its stand-in ``ABSENT`` / ``NO_FORCES``); ``params``: the parameters;
    ``out``: the output array (a tuple for several outputs) or None; ``workspace``: a
    :class:`~soadyn.core.compile.Workspace` or None. Returns the output (the tuple of
    outputs for several).

    The exact-type call is written here rather than in a function of its own: every line
    costs a few percent of a kernel call on a 6-joint arm (``benchmarks/results/call_path.md``)."""
    # 1. the plain call
    if function.plain is not None and workspace is None and _plain_applies(function, state, params):
        result = plain_call(function, model, state, out)
        if result is not _NO_TABLES:
            if result is not None:
                return result
            # the plain kernel refused: the exact-type call would too (the same argument
            # types, the same computation); the general path names what is wrong
            return function.general(model, with_stand_ins(function, state), params, out, workspace)
    # 2. the exact-type call: a current model (see soadyn.core.compile), this thread's
    # workspace or the caller's (of this model version), a tree function on a tree. (An
    # absent argument given as None has no compiled version: the general path reads it as
    # absent; the rendered call replaces it by its stand-in first.)
    try:
        d = model._derived
        c = d.compiled
        if workspace is None:
            ws = d.threads.buffer  # AttributeError: this thread's first call
        elif type(workspace) is Workspace and workspace.store is d:
            ws = workspace.buffer
        else:  # not this model version's: the general path names what it is
            ws = None
    except AttributeError:
        ws = None
    if ws is not None and not (c.closed and function.tree_function is not None):
        try:
            if function.single:
                if out is not None:
                    result = out
                elif function.shape is not None:  # (one named shape: no call)
                    result = np.empty(getattr(c, function.shape))
                else:
                    result = np.empty(function.output_shapes(c, state, params)[0])
                status = function.fast(c.mi, c.mf, ws, *state, *params, result)
            elif out is None or (type(out) is tuple and len(out) == function.n_outputs):
                # (an ``out`` of another length would reach the dispatcher as a wrong
                # argument count: the general path names it instead)
                result = function.allocate(c, state) if out is None else out
                status = function.fast(c.mi, c.mf, ws, *state, *params, *result)
            else:
                status = None
        except GeneralPath:  # argument types without a compiled version
            status = None
        # a nonzero status: the general path raises the error it means
        if status == 0 and (not function.absent_positions or rates_given(function, state)):
            return result
    # 3. the general path
    return function.general(model, state, params, out, workspace)


#: :func:`plain_call`'s answer when this thread has no packed tables for the model (yet)
_NO_TABLES = object()


def _plain_applies(function, state, params):
    """Whether the call is the plain call's: no external forces, the parameters at their
    plain values (compared by identity: ``True`` is the gravity flag, not 1)."""
    for k in function.forces_positions:
        if state[k] is not None:
            return False
    if len(params) != len(function.plain_params):
        return False
    for given, plain in zip(params, function.plain_params):
        if given is not plain:
            return False
    return True


def plain_call(function, model, state, out):
    """The plain call of ``function`` (:mod:`soadyn.kernels.plain`: the packed tables of
    this thread, the state without the external forces, absent rates as None, one output).
    Returns the output; None when the plain kernel refused the arguments (the general path
    names what is wrong); ``_NO_TABLES`` when ``model`` is not a current model or this
    thread has made no validated call of a plain-call function on this model version yet
    (:meth:`~soadyn.core.compile.Derived.plain_tables`): the exact-type call may still
    take it."""
    try:
        d = model._derived
        tables = d.threads.plain_tables
    except AttributeError:
        return _NO_TABLES
    shape = getattr(d.compiled, function.outputs.names[0])
    result = np.empty(shape) if out is None else out
    plain_state = state[:function.plain_count]  # (the external forces come last)
    try:
        if function.plain.fast(tables, *plain_state, result) == 0:
            return result
    except GeneralPath:  # argument types without a compiled version in this process
        if first_plain_call(function, tables, plain_state, result, shape):
            return result
    return None


def first_plain_call(function, tables, state, result, shape):
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


def with_stand_ins(function, state):
    """``state`` with each absent optional rate or external forces given as None replaced
    by its stand-in (``ABSENT``, ``NO_FORCES``: every kernel has one signature, so an
    absent argument is an empty array, never None)."""
    for k, forces in function.absent_positions:
        if state[k] is None:
            break
    else:  # (the common call: nothing to replace, no new tuple)
        return state
    given = list(state)
    for k, forces in function.absent_positions:
        if given[k] is None:
            given[k] = NO_FORCES if forces else ABSENT
    return tuple(given)


def rates_given(function, state):
    """False when an argument of ``state`` that may be absent is an empty array other than
    its stand-in: the kernel reads it as absent (zero), but the caller meant an array; the
    general path names its shape."""
    for k, forces in function.absent_positions:
        x = state[k]
        if len(x) == 0 and x is not (NO_FORCES if forces else ABSENT):
            return False
    return True


# --- the rendered path --------------------------------------------------------------------

#: The rendered fast path of one function: :func:`call` for positional arguments, with
#: the function's arity and output shapes written in. Slots: ``name`` (the kernel's name),
#: ``state`` (``s0, s1, ...``), ``params`` (``, p0, ...``), ``state_tuple``, ``param_tuple``, ``plain_step``
#: (:data:`PLAIN_STEP` or nothing), ``stand_ins`` (None → ``ABSENT`` / ``NO_FORCES``),
#: ``closed`` (the closed-chain refusal of a tree function), ``several`` (several outputs:
#: a given ``out`` goes to the general path), ``allocate``, ``outputs`` (the output
#: arguments), ``given`` (:func:`rates_given` written out), ``returned``.
TEMPLATE = '''\
def fast_path_of_{name}(model, {state}{params}, out=None, workspace=None):
    """soadyn.core.fast_path.call of {name}, rendered from soadyn.core.fast_path.TEMPLATE."""{plain_step}{stand_ins}
    try:  # (AttributeError: not a current model (see soadyn.core.compile), or this thread's first call)
        d = model._derived
        c = d.compiled
        # a given workspace: this model version's (else the general path names what it is)
        ws = d.threads.buffer if workspace is None else \\
            workspace.buffer if type(workspace) is Workspace and workspace.store is d else None
        if ws is not None and not {closed}{several}:
            {allocate}
            if fast(c.mi, c.mf, ws, {state}{params}, {outputs}) == 0{given}:
                return {returned}
    except (AttributeError, GeneralPath):
        pass
    return function.general(model, {state_tuple}, {param_tuple}, out, workspace)
'''

#: The plain-call step of :data:`TEMPLATE` (:func:`plain_call`): ``plain_when`` (no
#: workspace, no external forces, the plain parameters), ``plain_state`` (the state
#: without the external forces) and ``plain_tuple``, ``shape`` (the output's shape attribute),
#: ``plain_stand_ins``.
PLAIN_STEP = '''
    if {plain_when}:
        try:  # (AttributeError: not a current model, or no packed tables on this thread yet)
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
                if first_plain_call(function, tables, {plain_tuple}, result, d.compiled.{shape}):
                    return result
            # the plain kernel refused: the general path names what is wrong{plain_stand_ins}
            return function.general(model, {state_tuple}, {param_tuple}, out, workspace)'''


def _stand_ins(function, indent):
    """Lines replacing None by the stand-in of each argument that may be absent."""
    return "".join(f"\n{indent}if s{k} is None:\n{indent}    s{k} = {'NO_FORCES' if forces else 'ABSENT'}"
                   for k, forces in function.absent_positions)


def _tuple(names):
    """The source of the tuple of ``names``."""
    return f"({names[0]},)" if len(names) == 1 else f"({', '.join(names)})"


def render(function):
    """The source of ``function``'s rendered fast path (:data:`TEMPLATE`), for a
    :class:`~soadyn.core.call.CompiledFunction` whose kernel is compiled and whose outputs
    are shape attributes of the compiled model or one parameter-shaped output."""
    outputs = function.outputs
    n_state, n_params = len(function.args), len(function.params)
    state_names = [f"s{k}" for k in range(n_state)]
    state = ", ".join(state_names)
    slots = {"name": function.kernel_name, "state": state, "state_tuple": _tuple(state_names),
             "params": "".join(f", p{k}" for k in range(n_params)),
             "param_tuple": _tuple([f"p{k}" for k in range(n_params)]) if n_params else "()",
             "closed": "c.closed" if function.tree_function is not None else "False", "several": ""}
    if outputs.kind == "param_shaped":  # one output, shaped by the first parameter
        slots.update(allocate="result = empty(shape_of(c, p0)) if out is None else out", outputs="result",
                     returned="result")
    elif len(outputs.names) == 1:
        slots.update(allocate=f"result = empty(c.{outputs.names[0]}) if out is None else out", outputs="result",
                     returned="result")
    else:  # several outputs: a given ``out`` tuple is checked by the general path
        names = [f"o{k}" for k in range(len(outputs.names))]
        slots.update(allocate="; ".join(f"{o} = empty(c.{shape})" for o, shape in zip(names, outputs.names)),
                     outputs=", ".join(names), returned=f"({', '.join(names)})", several=" and out is None")
    # an optional rate or external forces given as an empty array (rates_given), tested in
    # the order that is cheapest for the common call: a given rate, absent forces
    slots["given"] = "".join(f" and (s{k} is NO_FORCES or len(s{k}))" if forces
                             else f" and (len(s{k}) or s{k} is ABSENT)" for k, forces in function.absent_positions)
    slots["stand_ins"] = _stand_ins(function, "    ")
    slots["plain_step"] = ""
    if function.plain is not None:
        when = ["workspace is None"] + [f"s{k} is None" for k in function.forces_positions] \
            + [f"p{k} is {value!r}" for k, value in enumerate(function.plain_params)]
        plain_names = [f"s{k}" for k in range(n_state) if k not in function.forces_positions]
        slots["plain_step"] = PLAIN_STEP.format(
            plain_when=" and ".join(when), shape=outputs.names[0], plain_stand_ins=_stand_ins(function, "            "),
            plain_state=", ".join(plain_names), plain_tuple=_tuple(plain_names), state_tuple=slots["state_tuple"],
            param_tuple=slots["param_tuple"])
    return TEMPLATE.format(**slots)


#: rendered file name → the function it was rendered for (one name per function)
_rendered = {}


def rendered_filename(function):
    """The file name the rendered fast path of ``function`` is compiled and registered in
    :mod:`linecache` under (a traceback shows it with the lines): its kernel and outputs,
    numbered when another function of the same kernel and outputs has the name already."""
    base = f"<soadyn/core/fast_path.py: TEMPLATE rendered for {function.kernel_name} -> {function.outputs}"
    name, k = base + ">", 1
    while _rendered.setdefault(name, function) is not function:
        k += 1
        name = f"{base} #{k}>"
    return name


def rendered_call(function):
    """``function``'s rendered fast path as a Python function ``call(model, *state,
    *params, out=None, workspace=None)``."""
    source = render(function)
    filename = rendered_filename(function)
    # (size, mtime None: linecache.checkcache keeps the entry, there is no file to stat)
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    scope = {"empty": np.empty, "fast": function.fast, "GeneralPath": GeneralPath,
             "function": function, "ABSENT": ABSENT, "NO_FORCES": NO_FORCES, "Workspace": Workspace,
             "shape_of": function.outputs.shape_of, "plain": None if function.plain is None else function.plain.fast,
             "first_plain_call": first_plain_call}
    exec(compile(source, filename, "exec"), scope)
    return scope[f"fast_path_of_{function.kernel_name}"]
