"""The single-kernel front of cluster_aba, cluster_rnea and cluster_efpa on explicit models: every
argument form gives the validated path's result, and wrong arguments still get its errors."""
from __future__ import annotations

import numpy as np
import pytest

import soadyn as sd
from soadyn.closed.embedding.algorithms import _explicit_call, _plain_call, efpa_with
from soadyn.closed.embedding.comparison import projected_efpa

from conftest import projection, random_state


@pytest.fixture(scope="module")
def cheetah():
    return sd.models.mini_cheetah()


def test_front_matches_the_projection_method_for_every_argument_form(cheetah):
    model = cheetah
    sd.cluster_aba(model, *random_state(model, np.random.default_rng(0)), np.zeros(18))  # first call: general path
    assert _explicit_call(model)  # every cluster explicit: the one-kernel front applies
    rng = np.random.default_rng(6)
    y, yd = random_state(model, rng)
    tau = rng.normal(size=len(yd))
    fext = rng.normal(size=(model.nbodies, 6))
    q, v, G, g, M, c, H = projection(model, y, yd)
    ydd = np.linalg.solve(H, tau - G.T @ c)
    tol = 1e-9 * (1 + np.abs(ydd).max())
    out = np.empty(len(yd))
    assert sd.cluster_aba(model, y, yd, tau, out=out) is out and np.allclose(out, ydd, rtol=0, atol=tol)
    assert np.allclose(sd.cluster_aba(model, list(y), list(yd), list(tau)), ydd, rtol=0, atol=tol)
    assert np.allclose(sd.cluster_rnea(model, y, yd, ydd), tau, rtol=0, atol=tol)
    # external forces: f_ext on body i enters as −Gᵀ J_iᵀ f_ext,i; the tree's RNEA with forces gives Gᵀ of it
    tau_f = G.T @ sd.rnea(model.spanning_tree(), q, v, G @ ydd + g, fext)
    assert np.allclose(sd.cluster_rnea(model, y, yd, ydd, fext), tau_f, rtol=0, atol=tol)
    assert np.allclose(sd.cluster_aba(model, y, yd, tau_f, fext), ydd, rtol=0, atol=tol)
    # yd None: zero velocity (the general path)
    assert np.allclose(sd.cluster_aba(model, y, None, tau), sd.cluster_aba(model, y, np.zeros_like(yd), tau),
                       rtol=0, atol=0)


@pytest.mark.parametrize("bad, name", [("y", "y"), ("tau_ind", "tau_ind"), ("out", "out")])
def test_front_passes_wrong_lengths_to_the_validated_errors(cheetah, bad, name):
    model = cheetah
    y, yd = random_state(model, np.random.default_rng(1))
    tau = np.zeros(len(yd))
    args = {"y": y, "tau_ind": tau, "out": np.empty(len(yd))}
    args[bad] = args[bad][:-1]
    with pytest.raises(ValueError, match=name):
        sd.cluster_aba(model, args["y"], yd, args["tau_ind"], out=args["out"])


@pytest.mark.parametrize("name", ["mini_cheetah", "jvrc1_humanoid"])
def test_plain_rnea_matches_the_projection_method_and_the_validated_kernel(name):
    """The plain C-RNEA call against Gᵀ(M(Gÿ + g) + c) of the spanning tree and, bit for
    bit, against the validated kernel (zero external forces; other argument forms), with
    and without gravity; JVRC-1 mixes link–rotor pairs with rigid and other linear clusters."""
    model = getattr(sd.models, name)()
    rng = np.random.default_rng(3)
    y, yd = random_state(model, rng)
    ydd = rng.normal(size=len(yd))
    q, v, G, g, M, c, H = projection(model, y, yd)
    expected = G.T @ (M @ (G @ ydd + g) + c)
    zero = np.zeros((model.nbodies, 6))
    for _ in range(2):  # the first call compiles and keeps the tables, the second is the plain call
        tau = sd.cluster_rnea(model, y, yd, ydd)
    assert _plain_call(model)  # the plain call applies
    tol = 1e-9 * (1 + np.abs(expected).max())
    assert np.allclose(tau, expected, rtol=0, atol=tol)
    assert np.array_equal(tau, sd.cluster_rnea(model, y, yd, ydd, zero))
    free = sd.cluster_rnea(model, y, yd, ydd, gravity=False)
    assert np.array_equal(free, sd.cluster_rnea(model, y, yd, ydd, zero, gravity=False))
    assert not np.allclose(free, tau)  # gravity reaches the plain kernel
    out = np.empty(len(yd))
    assert sd.cluster_rnea(model, y, yd, ydd, out=out) is out and np.array_equal(out, tau)
    assert np.array_equal(sd.cluster_rnea(model, list(y), list(yd), list(ydd)), tau)
    assert np.array_equal(sd.cluster_rnea(model, y, None, None), sd.cluster_rnea(model, y, 0 * yd, 0 * ydd))


@pytest.mark.parametrize("bad", ["y", "yd", "ydd", "out"])
def test_plain_rnea_passes_wrong_arguments_to_the_validated_errors(cheetah, bad):
    model = cheetah
    y, yd = random_state(model, np.random.default_rng(4))
    args = {"y": y, "yd": yd, "ydd": np.zeros(len(yd)), "out": np.empty(len(yd))}
    sd.cluster_rnea(model, y, yd, args["ydd"])
    args[bad] = args[bad][:-1]
    with pytest.raises(ValueError, match=bad):
        sd.cluster_rnea(model, args["y"], args["yd"], args["ydd"], out=args["out"])
    if bad != "out":
        args[bad] = np.full(len(args[bad]) + 1, np.nan)
        with pytest.raises(ValueError, match=bad):
            sd.cluster_rnea(model, args["y"], args["yd"], args["ydd"])
    with pytest.raises(TypeError, match="ydd"):
        sd.cluster_rnea(model, y, yd, "fast")
    y0 = y.copy()
    y0[3:7] = 0.0  # a zero quaternion (the free base)
    with pytest.raises(ValueError, match="quaternion"):
        sd.cluster_rnea(model, y0, yd, np.zeros(len(yd)))


def test_plain_efpa_is_the_validated_kernel_and_matches_the_projection_method(cheetah):
    """The plain C-EFPA call gives the validated call's Ω bit for bit (the same kernel),
    J H⁻¹ Jᵀ of the projection method, and the validated errors for wrong arguments."""
    model = cheetah
    frames = ["FR_foot", "HL_foot"]
    y, _ = random_state(model, np.random.default_rng(5))
    first = sd.cluster_efpa(model, y, frames)  # the validated path, which keeps the frames
    plain = sd.cluster_efpa(model, y, frames)
    assert np.array_equal(plain, first) and np.array_equal(plain, efpa_with(model, None, y, frames))
    assert np.array_equal(sd.cluster_efpa(model, y, tuple(frames)), plain)
    assert np.array_equal(sd.cluster_efpa(model, y, "FR_foot"), plain[:6, :6])
    assert np.allclose(plain, projected_efpa(model, y, frames), rtol=1e-10, atol=1e-12)
    with pytest.raises(ValueError, match="y"):
        sd.cluster_efpa(model, y[:-1], frames)
    with pytest.raises(TypeError, match="y"):
        sd.cluster_efpa(model, "y", frames)
    bad = y.copy()
    bad[3:7] = 0.0
    with pytest.raises(ValueError, match="quaternion"):
        sd.cluster_efpa(model, bad, frames)
    with pytest.raises((KeyError, ValueError), match="no_such_frame"):
        sd.cluster_efpa(model, y, ["FR_foot", "no_such_frame"])


def test_plain_tables_pack_into_one_array_and_split_back(cheetah):
    """The plain kernels' one array (model, clusters and workspaces) splits back into the
    arrays it was packed from; a truncated or foreign array is refused."""
    from numba import njit

    from soadyn.kernels.cluster.layout import pack_plain_tables, split_plain_tables

    @njit(cache=False)
    def split_equals(tables, mi, ci, mf, cf, ws, cws):
        ok, a, b, c, d, e, f, no_forces = split_plain_tables(tables)
        same = (a.shape == mi.shape and b.shape == mf.shape and c.shape == ws.shape and d.shape == ci.shape
                and e.shape == cf.shape and f.shape == cws.shape and no_forces.shape == (0, 6))
        if same:
            for x, y in ((a, mi), (d, ci)):
                for k in range(x.shape[0]):
                    same = same and x[k] == y[k]
            for x, y in ((b, mf), (c, ws), (e, cf), (f, cws)):
                for k in range(x.shape[0]):
                    same = same and x[k] == y[k]
        return ok, same

    rng = np.random.default_rng(0)
    mi = cheetah.compiled.mi
    mf = cheetah.compiled.mf
    ci, cf = rng.integers(0, 9, 40), rng.normal(size=30)
    ws, cws = rng.normal(size=len(sd.Workspace(cheetah).buffer)), rng.normal(size=12)
    ci[3] = len(cws)  # the cluster header's workspace length
    tables = pack_plain_tables(mi, ci, mf, cf, ws, cws)
    assert split_equals(tables, mi, ci, mf, cf, ws, cws) == (True, True)
    assert not split_equals(tables[:-1], mi, ci, mf, cf, ws, cws)[0]
    assert not split_equals(tables[:1], mi, ci, mf, cf, ws, cws)[0]
