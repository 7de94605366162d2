"""soadyn's helpers (no Python or C entry point) are compiled for linking into their
callers only (soadyn.numba_patches.link_helpers_only): no machine code of their own, a cache
entry of bitcode. The kernels that link them in must compute the same dynamics, in the
process that compiled them and in later processes that load the helpers from the cache
and compile new kernels over them."""
import os
import subprocess
import sys

import pytest

import soadyn.core  # noqa: F401  (Numba's patches installed)
from soadyn import numba_patches

LINK_ONLY = pytest.mark.skipif(not numba_patches.applied("link_helpers_only"),
                               reason="the Numba patch link_helpers_only is switched off (SOADYN_NUMBA_PATCHES)")

FIRST = """
import numpy as np
import soadyn as sd
from soadyn.kernels import rnea as rnea_kernels
m = sd.models.serial_chain(3)
rng = np.random.default_rng(1)
q, v, a = rng.normal(size=(3, m.nv))
tau = sd.rnea(m, q, v, a)
np.save({out!r}, np.concatenate([q, v, a, tau]))
helper = rnea_kernels.force_step
(library,) = [cres.library for cres in helper.overloads.values()]
# Numba's object-code hook sets _compiled when the engine emits a library's machine code
print(library._soadyn_link_only, library._compiled)
"""

SECOND = """
import numpy as np
import soadyn as sd
m = sd.models.serial_chain(3)
x = np.load({out!r})
q, v, a, tau = np.split(x, 4)
# new kernels over the helpers that the first process left in the cache
print(np.abs(sd.aba(m, q, v, tau) - a).max(), np.abs(sd.mass_matrix(m, q) @ a + sd.rnea(m, q, v, 0 * a) - tau).max())
"""

USER = """
import numba
import soadyn.core  # noqa: F401  (its Numba patches in place before the user's code compiles)
@numba.njit(no_cpython_wrapper=True, no_cfunc_wrapper=True)
def twice(x):
    return 2.0 * x
@numba.njit
def f(x):
    return twice(x) + 1.0
print(f(3.0), getattr([cres.library for cres in twice.overloads.values()][0], "_soadyn_link_only", False))
"""


def run(script, cache):
    environment = dict(os.environ, NUMBA_CACHE_DIR=str(cache), SOADYN_COMPILE_NOTICE="0")
    out = subprocess.run([sys.executable, "-c", script], env=environment, capture_output=True, text=True,
                         timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout.split()


@pytest.mark.slow
@LINK_ONLY
def test_helpers_have_no_machine_code_and_kernels_over_cached_helpers_are_right(tmp_path):
    out = tmp_path / "state.npy"
    link_only, compiled = run(FIRST.format(out=str(out)), tmp_path / "cache")
    assert link_only == "True"  # the helper's library is for linking only
    assert compiled == "False"  # and no machine code was emitted for it
    # aba ∘ rnea = identity and M a + h = τ: kernels compiled in a second process, linking the
    # helpers it loaded from the cache as bitcode
    aba_error, equation_error = map(float, run(SECOND.format(out=str(out)), tmp_path / "cache"))
    assert aba_error < 1e-9 and equation_error < 1e-9


@pytest.mark.slow
def test_a_users_helpers_are_compiled_as_numba_does(tmp_path):
    value, link_only = run(USER, tmp_path / "cache")
    assert float(value) == 7.0
    assert link_only == "False"  # only soadyn's own helpers are linked only


USER_MODULE = """
import numba
from soadyn import compiled as sc

@numba.njit(cache=True)
def many_rnea(k, Q, V, A, out):
    for i in range(Q.shape[0]):
        st = sc.rnea(k, Q[i], V[i], A[i], out[i])
        if st != 0:
            return st
    return 0
"""

USER_CALL = """
import sys
import numpy as np
sys.path.insert(0, {folder!r})
import soadyn as sd
from soadyn import compiled as sc
from user_kernels import many_rnea
m = sd.models.serial_chain(3)
rng = np.random.default_rng(0)
Q, V, A = rng.normal(size=(3, 5, m.nv))
out = np.empty((5, m.nv))
status = many_rnea(sc.arguments(m), Q, V, A, out)
# inverse dynamics by the CRBA: M(q) a + h(q, v)
crba = np.stack([sd.mass_matrix(m, q) @ a + sd.rnea(m, q, v, 0 * a) for q, v, a in zip(Q, V, A)])
print(status, np.abs(out - crba).max(), sum(many_rnea.stats.cache_hits.values()))
"""


@pytest.mark.slow
def test_a_users_cached_function_over_soadyn_helpers_reloads(tmp_path):
    """A user's ``cache=True`` function that calls soadyn's compiled API links soadyn's
    helpers into its own machine code: a second process loads it from the cache (no
    compile) and it still computes inverse dynamics."""
    (tmp_path / "user_kernels.py").write_text(USER_MODULE)
    script = USER_CALL.format(folder=str(tmp_path))
    for hits in ("0", "1"):  # compiled, then loaded
        status, error, cache_hits = run(script, tmp_path / "cache")
        assert status == "0" and float(error) < 1e-9 and cache_hits == hits
