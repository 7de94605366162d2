"""soadyn's patches of Numba's internals (soadyn.numba_patches) are optional and check their
ground: the switches choose them (``SOADYN_NUMBA_PATCHES``, ``SOADYN_NUMBA_PATCH_<NAME>``);
a patch whose internals changed, or a Numba outside the tested range, stays out with one
warning naming it and the dynamics are the same; a user's own functions compile to the same
LLVM IR with soadyn in the process as without it."""
import os
import subprocess
import sys

import numpy as np
import pytest

import soadyn as sd
from soadyn import numba_patches

SRC = os.path.dirname(os.path.dirname(os.path.abspath(sd.__file__)))


def _run(script, cache=None, **env):
    """``script``'s stdout and stderr in a fresh process with soadyn's sources first on
    the path, the switches of ``env`` (no switch inherited from this process unless given)
    and a Numba cache of its own when ``cache`` (a folder) is given."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith("SOADYN_NUMBA_PATCH")}
    environment.update(PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""), SOADYN_COMPILE_NOTICE="0",
                       **env)
    if cache is not None:
        environment["NUMBA_CACHE_DIR"] = str(cache)
    out = subprocess.run([sys.executable, "-c", script], env=environment, capture_output=True, text=True,
                         timeout=2400)
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout.strip(), out.stderr


APPLIED = "import soadyn.core; from soadyn import numba_patches; print(','.join(numba_patches.applied()))"


def test_the_switches_choose_the_patches():
    every = list(numba_patches.PATCHES)
    assert _run(APPLIED)[0].split(",") == every
    assert _run(APPLIED, SOADYN_NUMBA_PATCHES="0")[0] == ""
    assert _run(APPLIED, SOADYN_NUMBA_PATCHES="lighter_passes,link_helpers_only")[0].split(",") == [
        "link_helpers_only", "lighter_passes"]  # in the order of PATCHES
    assert _run(APPLIED, SOADYN_NUMBA_PATCH_LIGHTER_PASSES="0")[0].split(",") == [
        n for n in every if n != "lighter_passes"]
    assert _run(APPLIED, SOADYN_NUMBA_PATCHES="0", SOADYN_NUMBA_PATCH_PASS_VIEWS_WHOLE="1")[0] == "pass_views_whole"


def test_an_unknown_patch_name_is_refused_by_name():
    environment = dict(os.environ, PYTHONPATH=SRC, SOADYN_NUMBA_PATCHES="lighter_passes,no_such_patch")
    out = subprocess.run([sys.executable, "-c", APPLIED], env=environment, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode != 0 and "no_such_patch" in out.stderr and "lighter_passes" in out.stderr


def test_a_changed_signature_or_a_missing_internal_fails_the_ground(monkeypatch):
    from numba.core import codegen, registry

    patch = numba_patches.PATCHES["link_helpers_only"]
    assert patch.ground() is None  # as written for (the installed replacement keeps the signature)

    def finalize(self, extra):  # a Numba whose finalize takes another argument
        raise AssertionError("not called")

    monkeypatch.setattr(codegen.CPUCodeLibrary, "finalize", finalize)
    reason = patch.ground()
    assert "CPUCodeLibrary.finalize" in reason and "self, extra" in reason
    monkeypatch.setattr(registry.CPUDispatcher, "get_call_template", None)  # a Numba without it
    assert "get_call_template not found" in numba_patches.PATCHES["compile_for_plain_types"].ground()


def test_a_numba_outside_the_tested_range_fails_every_ground(monkeypatch):
    import numba

    monkeypatch.setattr(numba, "__version__", "0.70.0")
    for patch in (*numba_patches.PATCHES.values(), numba_patches.DISPATCHER_HOOKS):
        assert "found 0.70.0" in patch.ground()


# the dynamics in a process whose Numba had an internal changed: the torques are those this
# process computes with its patches (the same code compiled another way)
DYNAMICS = """
import warnings
import numpy as np
{fake}
warnings.simplefilter("always")
with warnings.catch_warnings(record=True) as caught:
    import soadyn as sd
    from soadyn import numba_patches
    m = sd.models.serial_chain(3)
    x = np.load({state!r})
    q, v, a = np.split(x, 3)
    tau = sd.rnea(m, q, v, a)
names = sorted(str(w.message).split("'")[1] for w in caught if w.category is numba_patches.NumbaPatchWarning)
print(",".join(numba_patches.applied()), ",".join(names), *tau)
"""

CHANGED_FINALIZE = """
from numba.core import codegen
numba_finalize = codegen.CPUCodeLibrary.finalize
def finalize(self, *, verify=True):  # a release whose finalize grew an option
    return numba_finalize(self)
codegen.CPUCodeLibrary.finalize = finalize
"""

NEWER_NUMBA = """
import numba
numba.__version__ = "0.70.0"
"""


def _reference(tmp_path):
    m = sd.models.serial_chain(3)
    rng = np.random.default_rng(3)
    q, v, a = rng.normal(size=(3, m.nv))
    np.save(tmp_path / "state.npy", np.concatenate([q, v, a]))
    return sd.rnea(m, q, v, a)


@pytest.mark.slow
def test_a_patch_whose_internal_changed_stays_out_with_one_warning_and_results_unchanged(tmp_path):
    tau = _reference(tmp_path)
    out, _ = _run(DYNAMICS.format(fake=CHANGED_FINALIZE, state=str(tmp_path / "state.npy")), tmp_path / "cache")
    applied, warned, *torques = out.split()
    assert applied.split(",") == [n for n in numba_patches.PATCHES if n != "link_helpers_only"]
    assert warned == "link_helpers_only"  # one warning, naming the patch
    np.testing.assert_allclose(np.array(torques, float), tau, rtol=1e-12, atol=1e-12)


@pytest.mark.slow
def test_a_newer_numba_runs_soadyn_stock_with_one_warning_per_patch(tmp_path):
    tau = _reference(tmp_path)
    # (a cache folder of its own: the faked version is part of the cache's tag)
    script = DYNAMICS.format(fake=NEWER_NUMBA, state=str(tmp_path / "state.npy")).replace(
        'print(",".join(numba_patches.applied())', 'print(",".join(numba_patches.applied()) or "none"')
    out, _ = _run(script, tmp_path / "cache")
    applied, warned, *torques = out.split()
    assert applied == "none"
    assert warned.split(",") == sorted([*numba_patches.PATCHES, "dispatcher_hooks"])  # each named once
    np.testing.assert_allclose(np.array(torques, float), tau, rtol=1e-12, atol=1e-12)


# a user's functions: a helper without entry points, always inlined, taking a named tuple
# and a constant (what the patches change for soadyn's own helpers), called by a kernel
USER = """
import sys
import numpy as np
if sys.argv[1] == "soadyn":  # soadyn's patches in place and its kernels loaded or compiled first
    import soadyn as sd
    m = sd.models.serial_chain(3)
    sd.aba(m, np.zeros(m.nq), np.zeros(m.nv), np.zeros(m.nv))
from collections import namedtuple
import numba
Views = namedtuple("Views", ["a", "b"])

@numba.njit(no_cpython_wrapper=True, no_cfunc_wrapper=True, forceinline=True)
def helper(v, k, flag):
    return v.a[k] * (2.0 if flag else 3.0) + v.b[k]

@numba.njit(no_cpython_wrapper=True, no_cfunc_wrapper=True)
def middle(v, n):
    s = 0.0
    for k in range(n):
        s += helper(v, k, True)
    return s

@numba.njit
def user(x, y):
    return middle(Views(x, y), x.shape[0])

x = np.arange(3.0)
assert user(x, x) == 9.0
sys.stdout.write(user.inspect_llvm(user.signatures[0]))
"""


@pytest.mark.slow
def test_a_users_function_compiles_to_the_same_llvm_ir_with_soadyn_as_without():
    without, _ = _run(f"import sys; sys.argv[1:] = ['numba']\n{USER}")
    # soadyn's kernels in the cache first: a kernel compiled in the process advances
    # Numba's count of compiled functions, which is part of the user's function's LLVM
    # name (``userB2v1`` against ``userB3v18``), whatever the patches do
    _run(f"import sys; sys.argv[1:] = ['soadyn']\n{USER}")
    with_soadyn, _ = _run(f"import sys; sys.argv[1:] = ['soadyn']\n{USER}")
    assert "define" in without and with_soadyn == without


# a helper returning a named view to a kernel: what the patches act on
ALONE = """
import numpy as np
from collections import namedtuple
from soadyn.core.jit import helper, kernel
from soadyn import numba_patches
V = namedtuple("V", ["a", "b"])

@helper(cache=False)
def make(x):
    return V(x[1:], x)

@kernel(cache=False)
def use(x):
    v = make(x)
    return v.a[0] + v.b[2]

print(",".join(numba_patches.applied()), use(np.arange(3.0)))
"""


@pytest.mark.slow
@pytest.mark.parametrize("name", list(numba_patches.PATCHES))
def test_each_patch_alone_compiles_soadyns_functions(name, tmp_path):
    """(The benchmark of each patch alone once found a patch alone failing: the record of
    which function is compiling was registered in the middle of a compilation.)"""
    out, _ = _run(ALONE, tmp_path / "cache", SOADYN_NUMBA_PATCHES=name)
    assert out.split() == [name, "3.0"]
