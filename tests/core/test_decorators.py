"""soadyn's two decorators (soadyn.core.jit): every compiled function in soadyn's modules is a
``@kernel`` (entered from Python) or a ``@helper`` (compiled code only), registered with that
one kind; a helper is built without Python's entry point and a kernel with it; nothing in the
sources compiles with Numba's own decorator."""
import ast
import importlib
import pathlib
import pkgutil
import sys
import types

import numba
import numpy as np
import pytest
from numba.core.registry import CPUDispatcher

import soadyn
from soadyn.core import jit

SRC = pathlib.Path(soadyn.__file__).parent


def _dispatchers():
    """(module name, name, dispatcher) of every Numba function defined at the top of one of
    soadyn's modules (all of them imported)."""
    for info in pkgutil.walk_packages(soadyn.__path__, "soadyn."):
        if info.name.rpartition(".")[2] == "__main__":  # the command lines: they run on import
            continue
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if isinstance(value, CPUDispatcher) and value.py_func.__module__ == module.__name__:
                yield module.__name__, name, value


def test_every_compiled_function_of_soadyn_is_registered_with_one_kind():
    found = list(_dispatchers())
    # the walk reached the compiled code: ~435 helpers and ~100 kernels (a lower bound, so that
    # a walk that silently stopped early fails)
    kinds = [jit.kind(d) for _, _, d in found]
    assert kinds.count(jit.HELPER) > 300 and kinds.count(jit.KERNEL) > 60, (kinds.count(jit.HELPER),
                                                                          kinds.count(jit.KERNEL))
    for module, name, dispatcher in found:
        entry = jit.entry(dispatcher)
        assert entry is not None and entry.kind in (jit.KERNEL, jit.HELPER), f"{module}.{name}: not registered"
        # the two ways the registry is asked (the dispatcher's function; Numba's descriptor names) agree
        assert jit.entry_named(module, dispatcher.py_func.__qualname__) is entry, f"{module}.{name}"
        # the kind is what Numba was given: a helper without entry points, a kernel with them
        options = dispatcher.targetoptions
        helper = entry.kind == jit.HELPER
        assert bool(options.get("no_cpython_wrapper")) is helper, f"{module}.{name}: {entry.kind} with {options}"
        assert bool(options.get("no_cfunc_wrapper")) is helper, f"{module}.{name}: {entry.kind} with {options}"
        assert isinstance(dispatcher, jit.HelperDispatcher) is helper, f"{module}.{name}"
        assert entry.options["cache"] is True, f"{module}.{name}: every soadyn function is cached"
        assert dispatcher._cache.__class__.__name__ == "FunctionCache", f"{module}.{name}: Numba caches it"


def test_a_users_function_is_not_registered():
    @numba.njit
    def users(x):
        return x

    assert jit.kind(users) is None and jit.kind(users.py_func) is None
    assert jit.kind_named(users.py_func.__module__, users.py_func.__qualname__) is None


def _compiled(monkeypatch):
    """A helper and the kernel that calls it, in a module of soadyn's (as the patches see it),
    without a cache; the kernel compiled by one call."""
    module = types.ModuleType("soadyn._decorators_check")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    module.__dict__.update(helper=jit.helper, kernel=jit.kernel)
    exec("""
@helper(cache=False)
def twice(x):
    return 2.0 * x

@kernel(cache=False)
def twice_plus_one(x):
    return twice(x) + 1.0
""", module.__dict__)
    assert module.twice_plus_one(3.0) == 7.0  # 2·3 + 1
    return module


def _defines(cres, name):
    """Whether the LLVM module of the compiled version ``cres`` defines the function ``name``."""
    return any(line.startswith("define") and f"@{name}(" in line.replace('"', "")
               for line in cres.library.get_llvm_str().splitlines())


def test_a_helper_has_no_python_entry_point_and_a_kernel_has_one(monkeypatch):
    module = _compiled(monkeypatch)
    assert jit.kind(module.twice) == jit.HELPER and jit.kind(module.twice_plus_one) == jit.KERNEL
    (helper,) = module.twice.overloads.values()
    (kernel,) = module.twice_plus_one.overloads.values()
    assert not _defines(helper, helper.fndesc.llvm_cpython_wrapper_name)
    assert not _defines(helper, helper.fndesc.llvm_cfunc_wrapper_name)
    assert _defines(kernel, kernel.fndesc.llvm_cpython_wrapper_name)
    # called from Python, a helper refuses by name (Numba would jump to the entry point it lacks)
    with pytest.raises(TypeError, match=r"soadyn\._decorators_check\.twice is a soadyn helper"):
        module.twice(3.0)
    assert module.twice.py_func(3.0) == 6.0


def test_both_decorators_work_bare_and_with_options():
    def scaled(x):
        return 0.5 * x

    def shifted(x):
        return x + 0.25

    kernel = jit.kernel(scaled)
    options = jit.kernel(cache=False, nogil=True)(shifted)
    assert jit.entry(kernel).options["cache"] is True  # the default: every soadyn function is cached
    assert kernel._cache.__class__.__name__ == "FunctionCache"  # (Numba's cache on disk)
    assert jit.entry(options).options["cache"] is False and options._cache.__class__.__name__ == "NullCache"
    assert options.targetoptions["nogil"] is True
    assert jit.entry(options).options["nogil"] is True
    assert options(np.float64(1.0)) == 1.25


def test_the_decorators_refuse_the_options_of_the_kind_and_a_second_kind():
    def f(x):
        return x

    with pytest.raises(TypeError, match=r"@kernel: no_cpython_wrapper= is set by the decorator"):
        jit.kernel(no_cpython_wrapper=True)
    with pytest.raises(TypeError, match=r"@helper: no_cfunc_wrapper= is set by the decorator"):
        jit.helper(no_cfunc_wrapper=True)
    with pytest.raises(TypeError, match=r"@helper: expected a function or Numba's options as keywords"):
        jit.helper("float64(float64)")
    jit.helper(cache=False)(f)
    with pytest.raises(TypeError, match=r"already compiled as a helper, now decorated as a kernel"):
        jit.kernel(cache=False)(f)
    jit.helper(cache=False)(f)  # the same kind again is the same function (the call path's twin of a kernel)


NUMBAS_DECORATORS = {"njit", "jit", "generated_jit", "cfunc", "vectorize", "guvectorize", "stencil"}


def _numbas_decorators_used(tree):
    """The places a module uses Numba's own decorators: ``numba.njit``-like attributes and
    names imported from ``numba`` (docstrings and comments do not count)."""
    used = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and node.attr in NUMBAS_DECORATORS and isinstance(node.value, ast.Name)
                and node.value.id == "numba"):
            used.append((node.lineno, f"numba.{node.attr}"))
        elif isinstance(node, ast.ImportFrom) and node.module == "numba":
            used += [(node.lineno, f"from numba import {a.name}") for a in node.names if a.name in NUMBAS_DECORATORS]
        elif isinstance(node, ast.Name) and node.id == "njit":
            used.append((node.lineno, "njit"))
    return used


def test_the_check_of_the_sources_finds_numbas_decorators():
    source = "import numba\nfrom numba import njit\n@numba.njit\ndef f(): pass\n@njit\ndef g(): pass\n"
    assert sorted(_numbas_decorators_used(ast.parse(source))) == [
        (2, "from numba import njit"), (3, "numba.njit"), (5, "njit")]
    assert _numbas_decorators_used(ast.parse('"""@numba.njit in a docstring"""\n')) == []


def test_no_source_compiles_with_numbas_own_decorator():
    """The one place that calls Numba's decorator is soadyn.core.jit itself."""
    found = {}
    for path in sorted(SRC.rglob("*.py")):
        if path == SRC / "core" / "jit.py":
            continue
        used = _numbas_decorators_used(ast.parse(path.read_text(), str(path)))
        if used:
            found[str(path.relative_to(SRC))] = used
    assert len(list(SRC.rglob("*.py"))) > 100  # the walk read the package
    assert not found, found
