"""Compiled kernels (Numba): flat arrays in, a status code out.

Every kernel reads the model through :func:`soadyn.core.layout.model_tables` and its
workspace through :func:`soadyn.core.layout.workspace_views`; the public functions in
:mod:`soadyn.dynamics` and :mod:`soadyn.closed` call them through
:class:`soadyn.core.call.CompiledFunction`. One algorithm per module; the per-body
spatial-algebra steps they share are in :mod:`.primitives`.
"""
