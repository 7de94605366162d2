"""While Numba compiles soadyn's functions, struct values whose data form is their value
form pass through Numba's conversions whole (soadyn.numba_patches.keep_struct_values): a
named tuple of arrays returned by a helper comes back without being taken apart and
rebuilt. Values whose forms differ (a boolean member: a byte in data form) keep Numba's
conversion; what is compiled must compute the right values, and a user's functions are
compiled as Numba compiles them."""
from collections import namedtuple

import numpy as np
import pytest
from numba import njit, typeof
from numba.core import types
from numba.core.registry import cpu_target

from soadyn import numba_patches
from soadyn.core.jit import helper, kernel

pytestmark = pytest.mark.skipif(not numba_patches.applied("keep_struct_values"),
                                reason="the Numba patch keep_struct_values is switched off (SOADYN_NUMBA_PATCHES)")


Views = namedtuple("Views", ["n", "a", "b"])
Flagged = namedtuple("Flagged", ["ok", "a"])

SOURCE = """
def views(x, y):
    return Views(x.shape[0], x[1:], y)

def flagged(x):
    return Flagged(x[0] > 0.0, x)

def use(x, y):
    v = views(x, y)
    f = flagged(x)
    return v.n + v.a[0] + v.b[1] + (10.0 if f.ok else 20.0) + f.a[2]
"""


#: a user's decorators of the same two kinds: Numba's njit, without and with entry points
USERS = (lambda **o: njit(no_cpython_wrapper=True, no_cfunc_wrapper=True, **o), njit)


def _compiled(module_name, helper, kernel):
    """``use`` and its helpers defined in a module of that name, compiled by the
    decorators ``helper`` and ``kernel`` (soadyn's, or a user's: :data:`USERS`)."""
    scope = {"__name__": module_name, "Views": Views, "Flagged": Flagged}
    exec(SOURCE, scope)
    for name in ("views", "flagged"):  # helpers: called from compiled code only
        scope[name] = helper(cache=False)(scope[name])
    return kernel(cache=False)(scope["use"]), scope


def _model(value):
    return cpu_target.target_context.data_model_manager[typeof(value)]


def test_which_values_have_one_form():
    x = np.arange(3.0)
    assert numba_patches.same_form(_model(x))  # an array: pointers and integers
    assert numba_patches.same_form(_model(Views(3, x, x)))
    assert numba_patches.same_form(cpu_target.target_context.data_model_manager[types.UniTuple(types.intp, 2)])
    assert not numba_patches.same_form(_model(Flagged(True, x)))  # a boolean is a byte in data form
    assert not numba_patches.same_form(_model(True))


def _conversions(monkeypatch):
    """The models Numba's own (rebuilding) return conversions ran on, through soadyn's
    patch (which calls them only where the two forms differ or the function is not
    soadyn's)."""
    seen = []
    for name in ("as_return", "from_return"):
        def spy(self, builder, value, numba_method=numba_patches._numba_struct[name]):
            seen.append(self)
            return numba_method(self, builder, value)
        monkeypatch.setitem(numba_patches._numba_struct, name, spy)
    return seen


def test_soadyn_functions_pass_one_form_structs_whole(monkeypatch):
    seen = _conversions(monkeypatch)
    use, _ = _compiled("soadyn._struct_values_check", helper, kernel)
    x, y = np.array([1.0, 2.0, 3.0]), np.array([5.0, 7.0])
    assert use(x, y) == 3 + 2.0 + 7.0 + 10.0 + 3.0
    views_model, flagged_model = _model(Views(3, x[1:], y)), _model(Flagged(True, x))
    assert views_model not in seen  # returned whole, not rebuilt
    assert flagged_model in seen  # the boolean member converted as Numba converts it


def test_a_users_functions_are_converted_as_numba_does(monkeypatch):
    seen = _conversions(monkeypatch)
    use, _ = _compiled("user_module", *USERS)
    x, y = np.array([-1.0, 2.0, 3.0]), np.array([5.0, 7.0])
    assert use(x, y) == 3 + 2.0 + 7.0 + 20.0 + 3.0
    assert _model(Views(3, x[1:], y)) in seen
