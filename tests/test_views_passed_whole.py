"""soadyn's always-inlined helpers (``forceinline``, no Python or C entry point) take the
named views as one LLVM argument each, the struct value, instead of one argument per
member (soadyn.numba_patches.pass_views_whole); every other function keeps Numba's
convention. What is compiled must compute the right values."""
import re
import sys
import types as pytypes
from collections import namedtuple

import numpy as np
import pytest
from numba import njit

from soadyn import numba_patches
from soadyn.core.jit import helper, kernel

pytestmark = pytest.mark.skipif(
    not numba_patches.applied("pass_views_whole"),
    reason="the Numba patch pass_views_whole is switched off (SOADYN_NUMBA_PATCHES)")


Views = namedtuple("Views", ["n", "a", "b"])
Flagged = namedtuple("Flagged", ["ok", "a"])

SOURCE = """
def inlined(v, f, k):
    return v.n + v.a[k] + v.b[k] + (10.0 if f.ok else 20.0) + f.a[k]

def called(v, f, k):
    return v.n + v.a[k] + v.b[k] + (10.0 if f.ok else 20.0) + f.a[k]

def entry(v, f, k):
    return v.n + v.a[k] + v.b[k] + (10.0 if f.ok else 20.0) + f.a[k]

def use(x, y):
    v = Views(x.shape[0], x, y)
    f = Flagged(x[0] > 0.0, y)
    return inlined(v, f, 1) + 100.0 * called(v, f, 0) + 10000.0 * entry(v, f, 2)
"""


#: a user's decorators of the same two kinds: Numba's njit, without and with entry points
USERS = (lambda **o: njit(no_cpython_wrapper=True, no_cfunc_wrapper=True, **o), njit)


def _compiled(module_name, decorators, monkeypatch):
    """The helpers and ``use`` defined in a module of that name (registered, as Numba's
    function descriptors name it), compiled by the ``decorators`` (helper, kernel):
    soadyn's, or a user's (:data:`USERS`)."""
    helper, kernel = decorators
    module = pytypes.ModuleType(module_name)
    module.__dict__.update(Views=Views, Flagged=Flagged)
    exec(SOURCE, module.__dict__)
    monkeypatch.setitem(sys.modules, module_name, module)
    module.inlined = helper(forceinline=True, cache=False)(module.inlined)
    module.called = helper(cache=False)(module.called)
    module.entry = kernel(forceinline=True, cache=False)(module.entry)  # Python can call it
    module.use = kernel(cache=False)(module.use)
    return module


def _expected(x, y):
    def one(k):
        return x.shape[0] + x[k] + y[k] + (10.0 if x[0] > 0.0 else 20.0) + y[k]
    return one(1) + 100.0 * one(0) + 10000.0 * one(2)


def _parameters(dispatcher):
    """The parameter names of the LLVM definition of ``dispatcher``'s one compilation."""
    (result,) = dispatcher.overloads.values()
    ir = result.library.get_llvm_str()
    header = re.search(r"^define [^\n]*@\"?" + re.escape(result.fndesc.mangled_name) + r"\"?\((.*)\)", ir, re.M)
    return re.findall(r'%"?([\w.$]+)"?(?:,|$)', header.group(1))


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_an_inlined_soadyn_helper_takes_named_views_whole(monkeypatch, sign):
    module = _compiled("soadyn._views_whole_check", (helper, kernel), monkeypatch)
    x, y = sign * np.array([1.0, 2.0, 3.0]), np.array([5.0, 7.0, 11.0])
    assert module.use(x, y) == _expected(x, y)
    assert _parameters(module.inlined) == ["retptr", "excinfo", "arg.v", "arg.f", "arg.k"]
    # not inlined by LLVM: Numba's convention, one argument per member
    assert "arg.v.0" in _parameters(module.called) and "arg.v" not in _parameters(module.called)
    # a Python entry point builds its own call: Numba's convention, and Python's call works
    assert "arg.v.0" in _parameters(module.entry)
    assert module.entry(Views(3, x, y), Flagged(True, y), 1) == 3 + x[1] + 2 * y[1] + 10.0


def test_a_users_inlined_helper_keeps_numbas_convention(monkeypatch):
    module = _compiled("user_views_whole_check", USERS, monkeypatch)
    x, y = np.array([1.0, 2.0, 3.0]), np.array([5.0, 7.0, 11.0])
    assert module.use(x, y) == _expected(x, y)
    assert "arg.v.0" in _parameters(module.inlined)


def test_the_choice_is_the_functions_own():
    from soadyn.kernels import rnea
    from soadyn.kernels.cluster import layout

    class Descriptor:  # what the choice reads from Numba's function descriptor
        def __init__(self, function, inline):
            self.modname, self.qualname = function.py_func.__module__, function.py_func.__qualname__
            self.mangled_name, self.inline = f"probe {self.qualname} {inline}", inline

    assert numba_patches.takes_views_whole(Descriptor(layout.motion_subspace, True))
    assert numba_patches.takes_views_whole(Descriptor(rnea.force_step, True))
    assert not numba_patches.takes_views_whole(Descriptor(rnea.rnea_passes, False))  # not inlined
    assert not numba_patches.takes_views_whole(Descriptor(rnea.rnea_kernel, False))  # Python calls it
    assert not numba_patches.takes_views_whole(Descriptor(layout.cluster_tables, True))  # has a Python entry
