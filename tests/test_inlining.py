"""Whether a soadyn helper is inlined is its decorator's word (soadyn.core.jit): a
``@helper(forceinline=True)`` is compiled inlined, a plain ``@helper`` with
``forceinline=False``, also when the first compilation of it happens inside an inlined
helper's (Numba would otherwise give it that caller's ``forceinline``). What is compiled
must compute the right values."""
import sys
import types as pytypes

import numpy as np

from soadyn.core.jit import entry, helper, kernel

SOURCE = """
def inner(x, k):
    return x[k] * 3.0 + 1.0

def outer(x, k):
    return inner(x, k) + 2.0 * inner(x, k + 1)

def alone(x, k):
    return x[k] - 5.0

def use(x):
    return outer(x, 0) + 100.0 * alone(x, 2)
"""


def _compiled(module_name, monkeypatch):
    """``inner`` (plain), ``outer`` (``forceinline=True``, the first caller of ``inner``),
    ``alone`` (plain) and the kernel ``use``, compiled by soadyn's decorators in a module of
    that name; ``use`` is called once."""
    module = pytypes.ModuleType(module_name)
    exec(SOURCE, module.__dict__)
    monkeypatch.setitem(sys.modules, module_name, module)
    module.inner = helper(cache=False)(module.inner)
    module.outer = helper(forceinline=True, cache=False)(module.outer)
    module.alone = helper(cache=False)(module.alone)
    module.use = kernel(cache=False)(module.use)
    x = np.array([1.0, 2.0, 4.0])
    assert module.use(x) == (1.0 * 3 + 1) + 2.0 * (2.0 * 3 + 1) + 100.0 * (4.0 - 5.0)
    return module


def test_the_decorator_says_forceinline_either_way(monkeypatch):
    module = _compiled("soadyn._inlining_flags", monkeypatch)
    assert entry(module.inner).options["forceinline"] is False
    assert entry(module.outer).options["forceinline"] is True
    # inner was first compiled while outer (forceinline) was: Numba's own rule would have
    # given it outer's forceinline; its decorator's False holds (in each version: on stock
    # Numba the constant argument makes one of its own)
    assert module.inner.overloads and all(r.fndesc.inline is False for r in module.inner.overloads.values())
    assert all(r.fndesc.inline is True for r in module.outer.overloads.values())
