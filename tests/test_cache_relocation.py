"""The kernels' on-disk cache travels with the package directory (soadyn.numba_cache,
PackageCacheLocator): a copy of a package whose kernels were compiled, moved to another
path and with every file's modification time renewed (as a container layer or a moved
virtual environment has them), loads its kernels without compiling; Numba's own filing
(by a hash of each source's absolute directory) compiles them again."""
import os
import shutil
import subprocess
import sys

import numba
import pytest

import soadyn
from soadyn import numba_cache

#: one small kernel's first call, and the number of soadyn functions Numba compiled for it
SCRIPT = """
import numpy as np
from numba.core import event
import soadyn as sd
from soadyn import numba_patches
compiled = []
class Compiles(event.Listener):
    def on_start(self, ev):
        if numba_patches.is_soadyns(getattr(ev.data["dispatcher"], "py_func", None)):
            compiled.append(ev.data["dispatcher"].py_func.__qualname__)
    def on_end(self, ev):
        pass
event.register("numba:compile", Compiles())
m = sd.models.serial_chain(2)
q = sd.normalize(m, np.full(m.nq, 0.25))
assert sd.__file__.startswith({root!r}), sd.__file__
print(len(compiled), *q)
"""


def copy_package(destination):
    """The package's sources, without caches, under ``destination``."""
    source = os.path.dirname(soadyn.__file__)
    shutil.copytree(source, destination / "soadyn", ignore=shutil.ignore_patterns("__pycache__"))


def first_call(root, **env):
    """Run SCRIPT with the package at ``root``; (soadyn functions compiled, the result)."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_CACHE", "SOADYN_"))}
    environment.update(PYTHONPATH=str(root), SOADYN_COMPILE_NOTICE="0", **env)
    out = subprocess.run([sys.executable, "-c", SCRIPT.format(root=str(root))], env=environment, cwd=root,
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    count, *q = out.stdout.split()
    return int(count), [float(x) for x in q]


def moved_copy(source, destination):
    """``source`` copied to ``destination`` (its cache with it), every modification time renewed."""
    shutil.copytree(source, destination)
    for directory, _, files in os.walk(destination):
        for name in files:
            os.utime(os.path.join(directory, name))  # now: none of the copied times survives


def test_a_moved_copy_loads_its_kernels_without_compiling(tmp_path):
    copy_package(tmp_path / "built")
    compiled, q = first_call(tmp_path / "built")
    assert compiled > 0  # an empty cache: the first call compiles
    moved_copy(tmp_path / "built", tmp_path / "moved")
    compiled_again, q_again = first_call(tmp_path / "moved")
    assert compiled_again == 0
    assert q_again == q


def test_filed_by_absolute_path_a_moved_copy_compiles(tmp_path):
    """The counterpart that shows the test above can fail: with Numba's own locators
    (a user's ``NUMBA_CACHE_LOCATOR_CLASSES``, which soadyn leaves alone) the cache is
    filed by the source's absolute path, and the moved copy misses it."""
    numbas = "UserProvidedCacheLocator,InTreeCacheLocator"
    copy_package(tmp_path / "built")
    compiled, q = first_call(tmp_path / "built", NUMBA_CACHE_LOCATOR_CLASSES=numbas)
    moved_copy(tmp_path / "built", tmp_path / "moved")
    compiled_again, q_again = first_call(tmp_path / "moved", NUMBA_CACHE_LOCATOR_CLASSES=numbas)
    assert compiled_again == compiled > 0
    assert q_again == q


def test_a_users_function_is_filed_as_numba_files_it(tmp_path):
    """Only soadyn's functions in soadyn's own cache directory are filed by package path."""
    def users(x):
        return x + 1

    assert numba_cache.PackageCacheLocator.from_function(users, __file__) is None
    if numba_cache._configured_dir is None:
        pytest.skip("the cache directory is the user's (NUMBA_CACHE_DIR): soadyn files nothing")
    from soadyn.core.configuration import normalize_kernel
    py_func = normalize_kernel.py_func
    locator = numba_cache.PackageCacheLocator.from_function(py_func, py_func.__code__.co_filename)
    assert locator is not None
    assert locator.get_cache_path() == os.path.join(numba.config.CACHE_DIR, "core")
