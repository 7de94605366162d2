"""The options of soadyn's two decorators (soadyn.core.jit): every kernel and helper is compiled with floating-point
contraction and nothing else relaxed, except the code that must reproduce unfused
roundings (the expression tapes, the inlined sine and cosine); and without reference
counting, except the few functions that allocate or return views to Python."""
import importlib
import math
import pkgutil

import pytest
from numba.core.registry import CPUDispatcher

import soadyn
import soadyn.core
import soadyn.kernels
from soadyn import numba_patches
from soadyn.core import jit
from soadyn.core.jit import CONTRACT, helper, kernel

UNFUSED = {"soadyn.kernels.tape", "soadyn.kernels.trig"}
#: the functions compiled with Numba's reference counting, each for a reason its comment
#: gives: kernels that allocate, and view builders that Python calls
COUNTED = {("soadyn.kernels.derivatives", "aba_derivatives_kernel"), ("soadyn.kernels.ltdl",
           "mass_matrix_inverse_ltdl_kernel"), ("soadyn.kernels.tape", "tape_kernel"),
           ("soadyn.kernels.direct", "direct_kernel"), ("soadyn.kernels.loops", "loop_tables"),
           ("soadyn.kernels.direct", "direct_tables"), ("soadyn.kernels.direct", "direct_outputs"),
           ("soadyn.kernels.cluster.layout", "cluster_tables")}


def _modules():
    for package in (soadyn.core, soadyn.kernels):
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            yield importlib.import_module(info.name)


def _kernels():
    """(module name, name, dispatcher) of every Numba function soadyn defines."""
    for module in _modules():
        for name, value in vars(module).items():
            if isinstance(value, CPUDispatcher) and value.py_func.__module__ == module.__name__:
                yield module.__name__, name, value


def test_every_kernel_contracts_and_relaxes_nothing_else():
    found = list(_kernels())
    assert len(found) > 200  # the walk reached the kernels (core and kernels: 300+ functions)
    for module, name, kernel in found:
        fastmath = kernel.targetoptions.get("fastmath")
        if module in UNFUSED:
            assert fastmath is False, f"{module}.{name}: fastmath={fastmath!r}, expected False (unfused roundings)"
        else:
            assert set(fastmath) == set(CONTRACT), f"{module}.{name}: fastmath={fastmath!r}, expected {set(CONTRACT)}"


def test_the_decorators_keep_an_explicit_choice_and_stay_ieee():
    @kernel(cache=False)
    def plain(a, b, c):
        return a * b + c

    @kernel(cache=False, fastmath=False)
    def unfused(a, b, c):
        return a * b + c

    assert plain.targetoptions["fastmath"] == set(CONTRACT)
    assert unfused.targetoptions["fastmath"] is False
    # contraction gives a·b + c rounded once or twice, never anything else: with a·b = 1 − 2⁻⁶⁰
    # exactly (a = 1 + 2⁻³⁰, b = 1 − 2⁻³⁰) and c = −1 the two are −2⁻⁶⁰ and 0
    a, b = 1.0 + 2.0 ** -30, 1.0 - 2.0 ** -30
    assert plain(a, b, -1.0) in (-(2.0 ** -60), 0.0)
    assert unfused(a, b, -1.0) == 0.0
    # no finite-math assumption: infinities and NaN propagate as in IEEE arithmetic
    assert plain(math.inf, 1.0, 0.0) == math.inf
    assert math.isnan(plain(math.nan, 1.0, 0.0))
    assert math.isnan(plain(math.inf, 0.0, 1.0))



def test_kernels_count_no_references_except_the_listed_few():
    # (on stock Numba, without soadyn's patch that lets them return views, the helpers
    # without a Python entry point count too: soadyn.numba_patches.helpers_count_references)
    stock = numba_patches.helpers_count_references()
    counted = {(module, name) for module, name, compiled in _kernels() if compiled.targetoptions.get("_nrt", True)
               and not (stock and jit.kind(compiled) == jit.HELPER)}
    assert counted == COUNTED


@pytest.mark.skipif(not numba_patches.applied("return_views_from_helpers"),
                    reason="the Numba patch return_views_from_helpers is switched off (SOADYN_NUMBA_PATCHES)")
def test_a_function_python_calls_may_not_return_a_view_without_reference_counting(monkeypatch):
    """Without reference counting an array returned to Python is boxed as its parent: Numba
    refuses a returned view, and soadyn's patch (helpers may return views) keeps that
    refusal for every function with a Python entry point."""
    import numpy as np
    import pytest
    from numba.core.errors import TypingError

    import sys
    import types
    # a module of soadyn's (Numba and soadyn's patches go by the defining module's name)
    module = types.ModuleType("soadyn._view_check")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    scope = module.__dict__
    scope.update(helper=helper, kernel=kernel)
    exec("""
@helper(cache=False)
def tail(x):
    return x[1:]

@kernel(cache=False)
def sum_of_tail(x):
    s = 0.0
    for v in tail(x):
        s += v
    return s

@kernel(cache=False)
def tail_to_python(x):
    return x[1:]
""", scope)
    x = np.arange(5.0)
    assert scope["sum_of_tail"](x) == 10.0  # the helper's view, used in compiled code
    with pytest.raises(TypingError, match="Only accept returning of array passed into the function"):
        scope["tail_to_python"](x)


def _holds_array(t):
    from numba.core import types
    if isinstance(t, types.Array):
        return True
    return isinstance(t, types.BaseTuple) and any(_holds_array(x) for x in t.types)


def test_no_function_without_reference_counting_returns_arrays_to_python():
    """Python boxes an array returned without reference counting as its parent object
    (a view would come back as the array it was cut from): every function with a Python
    entry point that returns arrays or tuples of them (the view builders) counts
    references. Checked on every compiled version after all kernels are compiled (loaded
    from the cache that ``make test`` fills first)."""
    from soadyn import precompile

    for group in precompile.GROUPS.values():
        group()
    checked, wrong = 0, []
    for module, name, compiled in _kernels():
        if jit.kind(compiled) == jit.HELPER or compiled.targetoptions.get("_nrt", True):
            continue
        for cres in compiled.overloads.values():
            checked += 1
            if _holds_array(cres.signature.return_type):
                wrong.append(f"{module}.{name} -> {cres.signature.return_type}")
    assert checked > 40 and not wrong, wrong
