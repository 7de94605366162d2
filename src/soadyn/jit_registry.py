"""The registry of soadyn's compiled functions: which functions its decorators compiled
(:func:`soadyn.core.jit.kernel` and :func:`soadyn.core.jit.helper`), of which kind, with
which options.

A module of its own, below both of its users, so that the layers import downward only:
:mod:`soadyn.core.jit` writes it (each decorated function, as it is defined) and
:mod:`soadyn.numba_patches` reads it (the patches touch soadyn's registered functions
only), and neither imports the other for it. It imports nothing of soadyn.
"""
from __future__ import annotations

import threading
from collections import namedtuple

__all__ = ["KERNEL", "HELPER", "Entry", "entry", "kind", "entry_named", "kind_named", "register"]

#: the two kinds of compiled function (module docstring)
KERNEL = "kernel"
HELPER = "helper"

Entry = namedtuple("Entry", ("kind", "options"))
Entry.__doc__ = """What the registry knows of one compiled function: its ``kind``
(:data:`KERNEL` or :data:`HELPER`) and the Numba ``options`` its decorator compiles it
with (a dict: the caller's, with soadyn's defaults and the kind's entry-point options)."""

#: the Python function of each compiled function (what its dispatcher holds as ``py_func``)
#: -> its Entry
_by_function = {}
#: (module, qualified name) of each -> its Entry: Numba's function descriptor names a
#: function by these two while it compiles it
_by_name = {}
_registering = threading.Lock()  # (modules defining compiled code may be imported from several threads)


def entry(function):
    """The registry's :class:`Entry` of ``function`` (a dispatcher made by :func:`kernel`
    or :func:`helper`, or the Python function it compiles), or None for any other
    function (a user's, or Numba's)."""
    return _by_function.get(getattr(function, "py_func", function))


def kind(function):
    """:data:`KERNEL` or :data:`HELPER` for a function compiled by soadyn's decorators (a
    dispatcher or its Python function), None for any other."""
    found = entry(function)
    return None if found is None else found.kind


def entry_named(module, qualname):
    """The :class:`Entry` of the compiled function ``qualname`` of module ``module`` (the
    names Numba's function descriptor holds), or None when soadyn's decorators compiled
    no function of that name."""
    return _by_name.get((module, qualname))


def kind_named(module, qualname):
    """:func:`kind` of the function ``qualname`` of module ``module`` (:func:`entry_named`)."""
    found = entry_named(module, qualname)
    return None if found is None else found.kind


def register(py_func, registered):
    """Record ``py_func`` (a Python function a decorator compiles) with its :class:`Entry`
    ``registered``; the same function again keeps its first entry, another kind is refused."""
    with _registering:
        known = _by_function.get(py_func)
        if known is not None:
            if known.kind != registered.kind:
                raise TypeError(f"{py_func.__module__}.{py_func.__qualname__}: already compiled as a {known.kind}, "
                                f"now decorated as a {registered.kind}: a compiled function has one kind")
            return  # the same function compiled again (the call path's twin of a kernel): its first entry stays
        _by_function[py_func] = registered
        # (a function defined again under the same name, as a test does: the newest is the one Numba compiles)
        _by_name[(py_func.__module__, py_func.__qualname__)] = registered
