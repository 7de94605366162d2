"""The one Numba decorator of soadyn's kernels: :func:`njit`, Numba's ``njit`` with
floating-point contraction allowed.

``fastmath={"contract"}`` lets the compiler fuse a multiplication and the addition that
consumes it into one fused multiply-add (one rounding instead of two). It is the only
relaxation: no reassociation, no assumption that values are finite or non-zero, so every
result is still IEEE arithmetic, each fused step at least as accurate as the pair it
replaces; results can differ from an unfused evaluation in the last bits. The recursions
are chains of dependent multiply-adds (6-vector dot products, spatial cross products,
inertia times motion), and a fused step puts one instruction on that chain where there
were two dependent ones: on the Mini Cheetah the C-RNEA kernel went from 1.72–1.77 to
1.53–1.56 µs and C-ABA's from 4.32–4.33 to 3.99–4.21 µs in a compiled loop (2026-11-27,
the same process kind alternated).

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
the counting operations that LLVM then had to optimize away. Without it (2026-11-28,
this machine kind, alternating with the code before): public calls mostly 0.15–0.6 µs
faster (ur5 RNEA 1.40 against 1.81 µs, panda 1.54 against 1.93; Mini Cheetah C-ABA 4.70
against 5.08; talos ``mass_matrix_inverse``, five arguments and a long kernel, 6.75 against
6.77), first calls compile 24–31 % faster (``rnea`` 4.5 against 6.5 s,
``cluster_aba`` 20.1–20.7 against 26.7 s, with ``q=`` on an implicit loop 28.2 against
39.0 s), ``soadyn precompile -j 2`` 70.2 against 86.1 s. A function that needs the
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
