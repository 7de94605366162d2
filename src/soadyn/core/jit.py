"""The two decorators of soadyn's compiled code (their registry: :mod:`soadyn.jit_registry`).

Every function soadyn compiles is one of two kinds, named by its decorator:

- :func:`kernel`: entered from Python (the public functions' kernels, ``*_kernel``,
  ``*_batch``, and the few view builders Python calls). Numba builds its Python entry
  point, which unboxes the arguments.
- :func:`helper`: called from compiled code only (the per-body steps, the spatial
  primitives, the named views, the passes a kernel runs). Built without the entry points
  that let Python or C call it (Numba's ``no_cpython_wrapper`` and ``no_cfunc_wrapper``):
  unpacking the named views from Python objects took about 0.5 s of compilation per
  helper, and soadyn's patches of Numba link a helper into its callers only
  (:func:`soadyn.numba_patches.link_helpers_only`). Python code that needs a helper's
  result runs its Python function (``helper.py_func``).

Both are used bare (``@helper``) or with Numba's options (``@helper(forceinline=True)``,
``@kernel(nogil=True)``), and both cache the machine code on disk (``cache=True`` unless
the caller says otherwise, :mod:`soadyn.numba_cache`).

**Inlined or not is the decorator's word.** ``@helper(forceinline=True)`` is inlined into
every caller; a plain ``@helper`` is left to LLVM's judgement of size: it is compiled with
``forceinline=False``, said explicitly, because Numba otherwise gives a function the
``forceinline`` of the caller whose compilation first compiles it (15 of soadyn's helpers
were inlined or not by the order of the first calls). Whatever needs to know what a
compiled function is (soadyn's patches of Numba, the compile notice, the tests) asks the
registry, :func:`kind` and :func:`entry`, not Numba's flags: the decorator is the one
statement of a function's contract.

Both compile with the options below.

**Floating-point contraction.** ``fastmath={"contract"}`` lets the compiler fuse a
multiplication and the addition that consumes it into one fused multiply-add (one
rounding instead of two). It is the only relaxation: no reassociation, no assumption
that values are finite or non-zero, so every result is still IEEE arithmetic, each fused
step at least as accurate as the pair it replaces; results can differ from an unfused
evaluation in the last bits. The recursions are chains of dependent multiply-adds
(6-vector dot products, spatial cross products, inertia times motion), and a fused step
puts one instruction on that chain where there were two dependent ones: the cluster
kernels measured 3–11 % faster with it (``benchmarks/results/design_notes.md``).

Code that must reproduce another evaluation's roundings exactly passes
``fastmath=False``: the expression tapes, which match sympy's numpy evaluation
operation for operation (:mod:`soadyn.kernels.tape`), and the inlined sine and cosine,
whose argument reduction and fdlibm polynomials are written for unfused arithmetic
(:mod:`soadyn.kernels.trig`).

**No reference counting** (``_nrt=False``). Numba's runtime counts references to the
memory of every array a compiled function holds. soadyn's kernels hold only arrays their
caller owns for the whole call and views of them (the views of
:func:`~soadyn.core.layout.carve` are borrowed: nothing to count), and allocate nothing:
the scratch a kernel needs beyond its arguments is in the workspace
(:func:`~soadyn.core.layout.workspace_views`, ``aux``). Counting bought nothing, and
cost twice: each array argument of a call from Python was wrapped in a newly allocated
record of the runtime (and released after the call), and every function's code carried
the counting operations that LLVM then had to optimize away. Without it public calls
and first compiles measured faster, the cold ones by a quarter
(``benchmarks/results/design_notes.md``). A function that needs the
runtime says so with ``_nrt=True`` and a comment (a kernel that allocates, a view
builder that Python calls, whose views Python boxes); beside the others it is safe
because every array it hands on is a borrowed view or its own allocation, and no
function returns an array it was given (``tests/core/test_jit.py`` lists them). Numba
refuses a function without reference counting that returns an array view; soadyn's
helpers without a Python entry point may (:func:`soadyn.numba_patches.return_views_from_helpers`).
"""
from __future__ import annotations


import numba
from numba.core.registry import CPUDispatcher

from .. import numba_patches
from ..jit_registry import HELPER, KERNEL, Entry, entry, entry_named, kind, kind_named, register

#: the floating-point relaxation every kernel is compiled with (module docstring)
CONTRACT = frozenset({"contract"})

#: Numba's options that make the kind: set by the decorator, never given to it
_ENTRY_POINT_OPTIONS = ("no_cpython_wrapper", "no_cfunc_wrapper")

class HelperDispatcher(CPUDispatcher):
    """Numba's dispatcher of a :func:`helper`, which refuses a call from Python: a helper
    has no Python entry point, and Numba's dispatcher would jump to the one it does not
    have (the interpreter crashes). Compiled code calls it as Numba's own dispatcher (the
    call from Python is the only method that differs)."""

    def __call__(self, *args, **kwargs):
        py_func = self.py_func
        raise TypeError(f"{py_func.__module__}.{py_func.__qualname__} is a soadyn helper, called from compiled code "
                        "only (it has no Python entry point): Python code runs its Python function, .py_func")


def _decorator(which, function, options):
    for name in _ENTRY_POINT_OPTIONS:
        if name in options:
            raise TypeError(f"@{which}: {name}= is set by the decorator (a kernel has Python's entry point, a helper "
                            f"none: use @{HELPER if which == KERNEL else KERNEL} for the other kind); got "
                            f"{name}={options[name]!r}")
    options = {"cache": True, "fastmath": set(CONTRACT), "_nrt": False, **options}
    if which == HELPER:
        # said either way: left unset, Numba gives a helper the forceinline of the caller whose
        # compilation first compiles it, so that whether it was inlined depended on the order
        # of the first calls (module docstring)
        options.setdefault("forceinline", False)
        options.update(no_cpython_wrapper=True, no_cfunc_wrapper=True)
    numba_options = options
    if which == HELPER and options["_nrt"] is False and numba_patches.helpers_count_references():
        # stock Numba refuses a function without reference counting that returns an array
        # view (soadyn.numba_patches.return_views_from_helpers is what allows it): the
        # helpers count then, which is safe beside uncounted kernels (the kernels' arrays
        # carry no runtime record: each count is a test of a null pointer)
        numba_options = dict(options, _nrt=True)

    def compiled(py_func):
        if not callable(py_func):
            raise TypeError(f"@{which}: expected a Python function to compile, got {py_func!r}")
        register(py_func, Entry(which, dict(options)))
        dispatcher = numba.njit(py_func, **numba_options)
        if which == HELPER:
            dispatcher.__class__ = HelperDispatcher  # (Numba's dispatcher, made as njit makes it)
        return dispatcher

    if function is None:  # @kernel(options) / @helper(options)
        return compiled
    if not callable(function):
        raise TypeError(f"@{which}: expected a function or Numba's options as keywords (soadyn's functions compile "
                        f"lazily, with no signature), got {function!r}")
    return compiled(function)  # @kernel / @helper without parentheses


def kernel(function=None, /, **options):
    """Compile ``function`` as a soadyn kernel: entered from Python (module docstring).

    ``@kernel`` or ``@kernel(**options)``: Numba's ``njit`` options (``nogil=True``,
    ``forceinline=True``, ``_nrt=True`` for a kernel that allocates or returns views to
    Python, ``fastmath=False`` for unfused roundings), over the defaults ``cache=True``,
    ``fastmath=CONTRACT``, ``_nrt=False``. Returns Numba's dispatcher, registered as a
    :data:`KERNEL` (:func:`kind`)."""
    return _decorator(KERNEL, function, options)


def helper(function=None, /, **options):
    """Compile ``function`` as a soadyn helper: called from compiled code only, built
    without Python's or C's entry point (module docstring).

    ``@helper`` or ``@helper(**options)``: Numba's ``njit`` options (``forceinline=True``
    for LLVM to inline it into every caller, ``inline="always"`` for Numba to inline its IR,
    ``fastmath=False``), over the defaults ``cache=True``, ``fastmath=CONTRACT``,
    ``_nrt=False`` (counted on stock Numba: :func:`soadyn.numba_patches.helpers_count_references`).
    Returns Numba's dispatcher (a :class:`HelperDispatcher`, which refuses a call from
    Python), registered as a :data:`HELPER` (:func:`kind`)."""
    return _decorator(HELPER, function, options)

