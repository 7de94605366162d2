"""soadyn's functions are optimized with lighter LLVM pipelines (soadyn.numba_patches.
lighter_passes): per-function passes at FUNCTION_PASS_LEVEL, and a module without
reference counts through the full module pipeline alone. A user's functions, and a
module that counts references, keep Numba's pipelines; what the lighter pipelines
compile must compute the right values."""
import numpy as np
import pytest
from numba import njit
from numba.core import codegen

from soadyn import numba_patches
from soadyn.core.jit import kernel as soadyn_kernel

pytestmark = pytest.mark.skipif(not numba_patches.applied("lighter_passes"),
                                reason="the Numba patch lighter_passes is switched off (SOADYN_NUMBA_PATCHES)")

SOURCE = """
import numpy as np


def scaled(x, out):
    for i in range(x.shape[0]):
        out[i] = 2.0 * x[i] + 1.0
    return out[0]

def fresh(n):
    out = np.empty(n)
    for i in range(n):
        out[i] = 2.0 * i
    return out
"""


def _functions(module_name, jit, counting_jit=njit):
    """``scaled`` and ``fresh`` defined in a module of that name, ``scaled`` compiled by
    ``jit``, ``fresh`` by ``counting_jit`` (it returns a new array: reference counting;
    default Numba's njit), both without a cache."""
    scope = {"__name__": module_name}
    exec(SOURCE, scope)
    return jit(cache=False)(scope["scaled"]), counting_jit(cache=False)(scope["fresh"])


def _pipelines(monkeypatch):
    """{code library: [("function", opt level) or ("module", cost), ...]}: the LLVM pass
    managers made while each library was optimized (whichever optimization is installed;
    None: Numba's default level or the full module pipeline)."""
    seen, current = {}, []

    def optimizing(name):
        method = getattr(codegen.CPUCodeLibrary, name)

        def wrapped(self, *args):
            current.append(self)
            try:
                return method(self, *args)
            finally:
                current.pop()
        monkeypatch.setattr(codegen.CPUCodeLibrary, name, wrapped)

    def making(name, kind, key):
        method = getattr(codegen.CPUCodegen, name)

        def wrapped(self, **kwargs):
            if current:
                seen.setdefault(current[-1], []).append((kind, kwargs.get(key)))
            return method(self, **kwargs)
        monkeypatch.setattr(codegen.CPUCodegen, name, wrapped)

    optimizing("_optimize_functions")
    optimizing("_optimize_final_module")
    making("_function_pass_manager", "function", "opt")
    making("_module_pass_manager", "module", "cost")
    return seen


def _library(function):
    (cres,) = function.overloads.values()
    return cres.library


def test_soadyn_functions_take_the_lighter_pipelines(monkeypatch):
    seen = _pipelines(monkeypatch)
    scaled, _ = _functions("soadyn._lighter_passes_check", soadyn_kernel)
    x, out = np.array([1.0, -2.0, 0.5]), np.empty(3)
    assert scaled(x, out) == 3.0
    assert np.array_equal(out, 2.0 * x + 1.0)
    made = seen[_library(scaled)]
    functions = [level for kind, level in made if kind == "function"]
    assert functions and set(functions) == {numba_patches.FUNCTION_PASS_LEVEL}
    assert [cost for kind, cost in made if kind == "module"] == [None]  # the full pipeline alone
    assert not numba_patches.counts_references(_library(scaled)._final_module)


def test_a_users_functions_take_numbas_pipelines(monkeypatch):
    seen = _pipelines(monkeypatch)
    scaled, _ = _functions("user_module", njit)
    x, out = np.array([1.0, -2.0, 0.5]), np.empty(3)
    assert scaled(x, out) == 3.0
    made = seen[_library(scaled)]
    assert {level for kind, level in made if kind == "function"} == {None}  # Numba's level
    assert [cost for kind, cost in made if kind == "module"] == ["cheap", None]


def test_a_soadyn_module_that_counts_references_keeps_numbas_module_pipelines(monkeypatch):
    seen = _pipelines(monkeypatch)
    # one of soadyn's functions (its decorator registers it) that counts references
    _, fresh = _functions("soadyn._lighter_passes_check", soadyn_kernel, lambda **o: soadyn_kernel(_nrt=True, **o))
    assert np.array_equal(fresh(4), [0.0, 2.0, 4.0, 6.0])
    assert numba_patches.counts_references(_library(fresh)._final_module)
    made = seen[_library(fresh)]
    assert {level for kind, level in made if kind == "function"} == {numba_patches.FUNCTION_PASS_LEVEL}
    assert [cost for kind, cost in made if kind == "module"] == ["cheap", None]  # for the pruning of its counts


def test_a_lower_numba_opt_is_kept_for_soadyn_functions(monkeypatch):
    from numba.core import config
    monkeypatch.setattr(config, "OPT", 0)  # NUMBA_OPT=0, as for debugging
    seen = _pipelines(monkeypatch)
    scaled, _ = _functions("soadyn._lighter_passes_check", soadyn_kernel)
    x, out = np.array([1.0, -2.0, 0.5]), np.empty(3)
    assert scaled(x, out) == 3.0
    assert {level for kind, level in seen[_library(scaled)] if kind == "function"} == {0}
