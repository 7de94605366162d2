"""Whether a soadyn helper is inlined is its decorator's word (soadyn.core.jit): a
``@helper(forceinline=True)`` is inlined into the kernel, a plain ``@helper`` is compiled with
``forceinline=False`` also when the first compilation of it happens inside an inlined
helper's (Numba would otherwise give it that caller's ``forceinline``). What is compiled
must compute the right values."""
import re
import sys
import types as pytypes

import numpy as np
import pytest
from numba import njit

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


def _compiled(module_name, decorate, monkeypatch):
    """``inner`` (plain), ``outer`` (inlined, the first caller of ``inner``), ``alone``
    (plain) and the kernel ``use`` defined in a module of that name, compiled by
    ``decorate(kind, forceinline)``; ``use`` is called once."""
    module = pytypes.ModuleType(module_name)
    exec(SOURCE, module.__dict__)
    monkeypatch.setitem(sys.modules, module_name, module)
    module.inner = decorate("helper", False)(module.inner)
    module.outer = decorate("helper", True)(module.outer)
    module.alone = decorate("helper", False)(module.alone)
    module.use = decorate("kernel", False)(module.use)
    x = np.array([1.0, 2.0, 4.0])
    assert module.use(x) == (1.0 * 3 + 1) + 2.0 * (2.0 * 3 + 1) + 100.0 * (4.0 - 5.0)
    return module


def _definitions(dispatcher):
    """{Python name of a function defined in the optimized module of ``dispatcher``'s one
    compilation: its ``define`` line, with its attribute group (``#3``) spelled out}."""
    (result,) = dispatcher.overloads.values()
    ir = result.library.get_llvm_str()
    groups = dict(re.findall(r"^attributes (#\d+) = \{(.*)\}$", ir, re.M))
    found = {}
    for line in ir.splitlines():
        if line.startswith("define ") and "cpython" not in line and "cfunc." not in line:  # (not the wrappers)
            name = re.search(r"@\"?_ZN[^\"(]*?\d+(inner|outer|alone|use)B", line)
            if name:
                found[name.group(1)] = re.sub(r"#\d+", lambda g: groups.get(g.group(0), g.group(0)), line)
    return found


def _soadyns(kind, forceinline):
    options = dict(cache=False)
    if forceinline:
        options["forceinline"] = True
    return (helper if kind == "helper" else kernel)(**options)


def test_an_inlined_helper_is_inlined_into_the_kernel(monkeypatch):
    module = _compiled("soadyn._inlining_check", _soadyns, monkeypatch)
    defined = _definitions(module.use)
    assert "use" in defined and "outer" not in defined, defined  # forceinline=True: no copy of its own


def test_the_decorator_says_forceinline_either_way(monkeypatch):
    module = _compiled("soadyn._separate_flags", _soadyns, monkeypatch)
    assert entry(module.inner).options["forceinline"] is False
    assert entry(module.outer).options["forceinline"] is True
    # inner was first compiled while outer (forceinline) was: Numba's own rule would have
    # given it outer's forceinline; its decorator's False holds (in each version: on stock
    # Numba the constant argument makes one of its own)
    assert module.inner.overloads and all(r.fndesc.inline is False for r in module.inner.overloads.values())
    assert all(r.fndesc.inline is True for r in module.outer.overloads.values())
