"""While Numba types soadyn's functions, the type of an operation on given argument types
is resolved once and remembered (soadyn.numba_patches.remember_call_types). The remembered
answers must be Numba's own, the functions compiled with them must compute the right
values, and a user's functions must be typed as Numba types them."""
import numpy as np
import pytest
from numba import njit

from soadyn import numba_patches
from soadyn.core.jit import kernel

pytestmark = pytest.mark.skipif(not numba_patches.applied("remember_call_types"),
                                reason="the Numba patch remember_call_types is switched off (SOADYN_NUMBA_PATCHES)")


#: Numba's own resolution (the unpatched method)
NUMBA_GET_CALL_TYPE = numba_patches._numba_get_call_type

SOURCE = """
def rotate_all(R, x, out):
    # the same getitem, mul and add on the same types many times over, as in the kernels
    for i in range(R.shape[0]):
        out[i, 0] = R[i, 0, 0] * x[i, 0] + R[i, 0, 1] * x[i, 1] + R[i, 0, 2] * x[i, 2]
        out[i, 1] = R[i, 1, 0] * x[i, 0] + R[i, 1, 1] * x[i, 1] + R[i, 1, 2] * x[i, 2]
        out[i, 2] = R[i, 2, 0] * x[i, 0] + R[i, 2, 1] * x[i, 1] + R[i, 2, 2] * x[i, 2]
    return out
"""


def _compiled(module_name, registered):
    """``rotate_all`` defined in a module of that name, compiled without a cache; as one of
    soadyn's functions when ``registered`` (a kernel: the patches act on the functions
    soadyn's decorators register, :func:`soadyn.core.jit.kind`), else as a user's
    (Numba's ``njit``)."""
    scope = {"__name__": module_name}
    exec(SOURCE, scope)
    if registered:
        return kernel(cache=False)(scope["rotate_all"])
    return njit(cache=False)(scope["rotate_all"])


def _inputs():
    rng = np.random.default_rng(3)
    R = np.array([np.linalg.qr(rng.normal(size=(3, 3)))[0] for _ in range(4)])
    x = rng.normal(size=(4, 3))
    return R, x, np.empty((4, 3))


def _counting(monkeypatch):
    """Count the resolutions Numba itself performs under the patch."""
    calls = []

    def counted(self, context, args, kws):
        calls.append((self, args))
        return NUMBA_GET_CALL_TYPE(self, context, args, kws)

    monkeypatch.setattr(numba_patches, "_numba_get_call_type", counted)
    return calls


def test_soadyn_functions_resolve_each_operation_once_with_numbas_answer(monkeypatch):
    calls = _counting(monkeypatch)
    # an empty memory (earlier compilations in this process may have remembered all of these)
    monkeypatch.setattr(numba_patches, "_call_types", {})
    before = set()
    f = _compiled("soadyn._remembered_types_check", registered=True)
    R, x, out = _inputs()
    result = f(R, x, out)
    assert np.allclose(result, np.einsum("bij,bj->bi", R, x), rtol=0, atol=1e-14)
    added = set(numba_patches._call_types) - before
    # every distinct (operation, argument types) was resolved by Numba once at most: the
    # function holds 36 reads R[i, j, k], 18 reads x[i, j], 9 writes, 27 products, 18 sums
    distinct = {(fn, tuple(args)) for fn, args in calls}
    assert len(calls) == len(distinct)
    assert added, "nothing was remembered while typing a soadyn function"
    # the remembered answer is the one Numba's own resolution gives
    for key in added:
        fnty, context, target, args, kws = key
        signature, impl_key = numba_patches._call_types[key]
        fresh = NUMBA_GET_CALL_TYPE(fnty, context, args, dict(kws))
        assert fresh == signature
        assert fnty.get_impl_key(fresh) == impl_key


def test_user_functions_are_typed_as_numba_types_them(monkeypatch):
    calls = _counting(monkeypatch)
    before = set(numba_patches._call_types)
    f = _compiled("a_users_module", registered=False)
    R, x, out = _inputs()
    assert np.allclose(f(R, x, out), np.einsum("bij,bj->bi", R, x), rtol=0, atol=1e-14)
    # Numba resolved every operation itself, as often as it asked, and nothing was remembered
    assert len(calls) > len({(fn, tuple(args)) for fn, args in calls})
    assert set(numba_patches._call_types) == before
