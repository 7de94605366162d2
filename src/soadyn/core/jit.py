"""The one Numba decorator of soadyn's kernels: :func:`njit`, Numba's ``njit`` with
floating-point contraction allowed.

``fastmath={"contract"}`` lets the compiler fuse a multiplication and the addition that
consumes it into one fused multiply-add (one rounding instead of two). It is the only
relaxation: no reassociation, no assumption that values are finite or non-zero, so every
result is still IEEE arithmetic, each fused step at least as accurate as the pair it
replaces; results can differ from an unfused evaluation in the last bits. The recursions
are chains of dependent multiply-adds (6-vector dot products, spatial cross products,
inertia times motion), and a fused step puts one instruction on that chain where there
were two dependent ones: the cluster kernels measured 3–11 % faster with it
(``benchmarks/results/design_notes.md``).

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

from .. import numba_patches

#: the floating-point relaxation every kernel is compiled with (module docstring)
CONTRACT = frozenset({"contract"})


def njit(*args, **options):
    """``numba.njit`` with ``fastmath=CONTRACT`` unless the caller gives ``fastmath``, and
    without Numba's reference counting (``_nrt=False``, module docstring); used as
    ``@njit(cache=True, ...)`` like Numba's. Each function it compiles is registered as
    soadyn's (:func:`soadyn.numba_patches.register`): the patches of Numba's compilation
    apply to those only."""
    options.setdefault("fastmath", set(CONTRACT))
    options.setdefault("_nrt", False)

    numba_options = options
    if options["_nrt"] is False and options.get("no_cpython_wrapper") and numba_patches.helpers_count_references():
        # stock Numba refuses a function without reference counting that returns an array
        # view (soadyn.numba_patches.return_views_from_helpers is what allows it): the
        # helpers count then, which is safe beside uncounted kernels (the kernels' arrays
        # carry no runtime record: each count is a test of a null pointer)
        numba_options = dict(options, _nrt=True)

    def compiled(py_func):
        numba_patches.register(py_func, options)
        return numba.njit(py_func, **numba_options)

    if args and callable(args[0]):  # @njit without parentheses, or njit(function)
        return compiled(args[0])
    if args:
        raise TypeError(f"njit: expected options as keywords (soadyn's kernels compile lazily), got {args!r}")
    return compiled
