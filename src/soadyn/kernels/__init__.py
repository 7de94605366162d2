"""Compiled kernels (Numba): flat arrays in, a status code out.

Every kernel reads the model through :func:`soadyn.core.layout.model_tables` and its
workspace through :func:`soadyn.core.layout.workspace_views`; the public functions in
:mod:`soadyn.dynamics` and :mod:`soadyn.closed` call them through
:class:`soadyn.core.call.CompiledFunction`. One algorithm per module; the per-body
spatial-algebra steps they share are in :mod:`.primitives`.

Every compiled function is decorated by its kind (:mod:`soadyn.core.jit`): ``@kernel``
for the functions Python enters (``*_kernel``, ``*_batch``), ``@helper`` for the helpers
and passes only compiled code calls, built without the entry points that let Python call
them (unpacking the named views from Python objects took about 0.5 s of compilation per
helper); Python code that needs a helper's result runs the helper's Python function
(``helper.py_func``, or :func:`soadyn.core.layout.numpy_model_tables` for the model's
views). Small helpers (the per-body steps, the spatial primitives, the named views) are
``@helper(forceinline=True)``: LLVM inlines them into each caller, so a kernel runs as one
function, as if written by hand. Numba's own ``inline="always"`` gives the same machine
code but inlines at the level of Numba's IR, re-deriving and deep-copying the helper's IR
at every call site: measured on the tree kernels, 70 s of cold compilation against 47 s
with ``forceinline``, run times equal within 7 % (ur5, talos, four-bar, Mini Cheetah). Many kernels
take B states stored one after another (:func:`soadyn.core.layout.state_of`; B = 1 for a
single call, a block of rows for a batch, :func:`soadyn.core.batch.stacked_block`): a short
loop over the states calls the kernel's per-state body ``_<name>_state``, inlined by Numba
(``inline="always"``: one call site, so no library of its own). Kernels never
assign arrays by slice (``a[i] = b[j]``): Numba would compile its shape-mismatch error
message, string formatting included (~5 s); they copy element by element.
"""
