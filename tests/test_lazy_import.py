"""``import soadyn`` is light: every public name is imported on first use (PEP 562
``__getattr__`` in ``soadyn/__init__.py``), and Numba is prepared for soadyn's kernels when
the first module with compiled code is imported, whichever it is."""
import os
import subprocess
import sys

import soadyn as sd

SRC = os.path.dirname(os.path.dirname(os.path.abspath(sd.__file__)))


def _run(script, **env):
    environment = dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""),
                       SOADYN_COMPILE_NOTICE="0", **env)
    out = subprocess.run([sys.executable, "-c", script], env=environment, capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout.strip()


def test_every_public_name_resolves_and_is_listed_by_dir():
    assert len(set(sd.__all__)) == len(sd.__all__)
    for name in sd.__all__:
        assert getattr(sd, name) is not None, name
    assert set(sd.__all__) <= set(dir(sd))
    scope = {}
    exec("from soadyn import *", scope)
    assert set(sd.__all__) <= set(scope)


def test_an_unknown_name_is_an_attribute_error():
    try:
        sd.no_such_function
    except AttributeError as e:
        assert "no_such_function" in str(e)
    else:
        raise AssertionError("sd.no_such_function resolved")


def test_import_soadyn_imports_no_compiled_module_nor_numba():
    loaded = _run("import sys; import soadyn; print(' '.join(sorted(sys.modules)))").split()
    assert "numba" not in loaded and "scipy" not in loaded and "sympy" not in loaded
    assert [m for m in loaded if m.startswith("soadyn")] == ["soadyn"]


def test_simulate_is_the_function_after_its_module_is_imported():
    out = _run("import soadyn, soadyn.simulate, sys, types\n"
               "print(isinstance(soadyn.simulate, types.FunctionType), sys.modules['soadyn.simulate'].simulate "
               "is soadyn.simulate)")
    assert out == "True True"


def test_a_compiled_module_imported_first_prepares_numba_before_its_kernels():
    """A program that imports a kernel module directly (no public function first) gets the
    patches and soadyn's cache directory all the same, before that module's kernels are
    defined: the module's dispatchers cache in soadyn's directory."""
    out = _run("import soadyn.kernels.trig as trig\n"
               "from soadyn import numba_patches\n"
               "from numba.core import config\n"
               "print(len(numba_patches.applied()), config.CACHE_DIR)")
    count, folder = out.split(maxsplit=1)
    assert int(count) == len(_applied())
    given = os.environ.get("NUMBA_CACHE_DIR")  # a user's choice is kept, else soadyn's folder
    assert folder == given if given else os.path.basename(folder).startswith("numba-")


def _applied():
    from soadyn import numba_patches
    return numba_patches.applied()
