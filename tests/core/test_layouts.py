"""The flat layouts (soadyn.core.layout): the compiled views of a model's ``mi``, ``mf`` and of
the workspace tile their arrays exactly — every entry in exactly one view (no overlap, no
gap), the last view ending at the array's length — read from the views' memory addresses,
on trees, closed chains and collision models; the compiled and the Python sizes and views
agree; the documented shapes; and the bounds checks of carve, rows and the layouts' views
where Numba's bounds checking is on."""
import warnings

import numba
import numpy as np
import pytest
from numba import literal_unroll, types
from numba.extending import overload

import soadyn as sd
from soadyn.core.compile import derived
from soadyn.core.layout import (INT_FIELDS, MODEL_FLOATS, MODEL_HEADER, MODEL_INTS, WORKSPACE, Layout, carve,
                                pack_parts, packed_ok, packed_part, model_float_size, model_int_size, model_lengths, model_tables, numpy_model_tables,
                                numpy_workspace_views, rows, workspace_length, workspace_size, workspace_views)

from conftest import CLOSED_CHAINS, peers

N_INTS = len(INT_FIELDS)
N_FLOATS = len(MODEL_FLOATS.names)
N_WORKSPACE = len(WORKSPACE.names)


def _span(x, int_base, float_base):
    """(entry offset, entry count) of the view ``x`` in ``mi`` (an int view) or ``mf`` (a
    float view); (−1, −1) for the sizes nb, nq, nv."""


@overload(_span)
def _span_impl(x, int_base, float_base):
    if isinstance(x, types.Integer):
        return lambda x, int_base, float_base: (-1, -1)
    if isinstance(x.dtype, types.Integer):
        return lambda x, int_base, float_base: ((x.ctypes.data - int_base) // x.itemsize, x.size)
    return lambda x, int_base, float_base: ((x.ctypes.data - float_base) // x.itemsize, x.size)


@numba.njit
def _spans(views, int_base, float_base, out):
    """The :func:`_span` of each entry of the named tuple ``views``, into ``out``."""
    k = 0
    for x in literal_unroll(views):
        out[k, 0], out[k, 1] = _span(x, int_base, float_base)
        k += 1


@numba.njit
def _compiled_spans(mi, mf, ws, sm, sw):
    m = model_tables(mi, mf)
    _spans(m, mi.ctypes.data, mf.ctypes.data, sm)
    _spans(workspace_views(ws, m), 0, ws.ctypes.data, sw)
    return m.nb, m.nq, m.nv, model_int_size(m.nb), model_float_size(m.nb), workspace_size(m.nb, m.nv)


def _assert_tiles(spans, start, length, what):
    """The spans (offset, count) cover [start, length) exactly once each, in order."""
    spans = np.asarray(spans)
    assert spans[0, 0] == start, f"{what}: the first view starts at {spans[0, 0]}, not {start}"
    ends = spans[:, 0] + spans[:, 1]
    np.testing.assert_array_equal(spans[1:, 0], ends[:-1], err_msg=f"{what}: a gap or an overlap between views")
    assert ends[-1] == length, f"{what}: the views end at {ends[-1]}, the array has {length} entries"


def _collision_model(name):
    if peers.robots_dir() is None:
        pytest.skip("example-robot-data is not installed")
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*(inertia|mimic|principal moments).*")
        model = sd.load_urdf(peers.robot_path(name), floating_base=True, mimic="ignore")
    assert len(model.collisions) > 0
    return model


MODELS = {
    "serial_chain(1)": lambda: sd.models.serial_chain(1),
    "serial_chain(7)": lambda: sd.models.serial_chain(7, floating_base=True),
    "branched_tree": lambda: sd.models.branched_tree(3, 2),
    "random_tree (every joint kind)": lambda: sd.models.random_tree(12, np.random.default_rng(3)),
    "mini_cheetah (rotors)": sd.models.mini_cheetah,
    "four_bar_linkage (closed)": sd.models.four_bar_linkage,
    "tello (closed)": sd.models.tello,
    "rssr (closed)": lambda: CLOSED_CHAINS["rssr"](np.random.default_rng(0))[0],
    "solo12 (collisions)": lambda: _collision_model("solo12"),
    "talos (collisions)": lambda: _collision_model("talos"),
}


@pytest.mark.parametrize("name", list(MODELS))
def test_compiled_views_tile_the_arrays_exactly(name):
    model = MODELS[name]()
    d = derived(model)
    c = d.compiled
    ws = np.zeros(d.workspace_size)
    sm, sw = np.zeros((3 + N_INTS + N_FLOATS, 2), np.int64), np.zeros((N_WORKSPACE, 2), np.int64)
    nb, nq, nv, ni, nf, nw = _compiled_spans(c.mi, c.mf, ws, sm, sw)
    assert (sm[:3] == -1).all()
    si, sf = sm[3:3 + N_INTS], sm[3 + N_INTS:]
    assert (nb, nq, nv) == (len(model.bodies), model.nq, model.nv)
    # the header (nb, nq, nv) then the integer fields, up to the end of mi
    _assert_tiles(si, MODEL_HEADER, len(c.mi), f"{name}: mi")
    _assert_tiles(sf, 0, len(c.mf), f"{name}: mf")
    _assert_tiles(sw, 0, len(ws), f"{name}: workspace")
    # the compiled sizes are the arrays' lengths, and Python's sizes agree
    assert (ni, nf, nw) == (len(c.mi), len(c.mf), len(ws))
    assert model_lengths(nb) == (ni, nf) and workspace_length(nb, nv) == nw
    # Python's views are the same memory as the compiled ones
    py = numpy_model_tables(c.mi, c.mf)
    for k, field in enumerate(INT_FIELDS):
        view = getattr(py, field)
        assert (view.ctypes.data - c.mi.ctypes.data) // 8 == si[k, 0] and view.size == si[k, 1], field
    for k, field in enumerate(MODEL_FLOATS.names):
        view = getattr(py, field)
        assert (view.ctypes.data - c.mf.ctypes.data) // 8 == sf[k, 0] and view.size == sf[k, 1], field
    w = numpy_workspace_views(ws, py)
    for k, view in enumerate(w):
        assert (view.ctypes.data - ws.ctypes.data) // 8 == sw[k, 0] and view.size == sw[k, 1], WORKSPACE.names[k]


def test_documented_shapes():
    model = sd.models.random_tree(9, np.random.default_rng(1))
    c = derived(model).compiled
    nb, nv = c.nb, c.nv
    m = numpy_model_tables(c.mi, c.mf)
    assert (m.nb, m.nq, m.nv) == (nb, model.nq, nv)
    assert m.parent.shape == m.joint_type.shape == m.rotated.shape == (nb,)
    assert m.inertia.shape == (nb, 6, 6) and m.rigid.shape == (nb, 10) and m.rot_tree.shape == (nb, 3, 3)
    assert m.gravity.shape == (3,)
    np.testing.assert_array_equal(m.parent, [b.parent for b in model.bodies])
    np.testing.assert_array_equal(m.gravity, model.gravity)
    w = numpy_workspace_views(np.zeros(workspace_length(nb, nv)), m)
    assert w.R.shape == (nb, 3, 3) and w.t.shape == (nb, 3) and w.P.shape == (nb, 6, 6)
    assert w.S.shape == w.U.shape == w.Gt.shape == (nv, 6) and w.eps.shape == (nv,)
    assert w.sincos.shape == (2, nb + nv) and nb + nv >= model.nq
    assert w.scratch.shape == (6, 6, 6)
    assert w.aux.shape == (max(42 * nv + 44 * nb, 6 * (nb + nv), 64),)


def test_layout_arithmetic():
    """A layout's offsets and length from its declaration, by hand."""
    lay = Layout("example", ("n", "k"), (("a", ("n", 3)), ("b", (2, ("n", "k"))), ("c", (4,)), ("d", (("k", 1),))))
    assert lay.spans((5, 2)) == (("a", 0, (5, 3)), ("b", 15, (2, 7)), ("c", 29, (4,)), ("d", 33, (3,)))
    assert lay.length((5, 2)) == 36
    with pytest.raises(ValueError, match="dims"):
        lay.length((5,))
    with pytest.raises(ValueError, match="at least 36"):
        lay.numpy_views(np.zeros(35), (5, 2))
    with pytest.raises(ValueError, match="neither an int nor one of the dims"):
        Layout("bad", ("n",), (("a", ("m",)),))
    with pytest.raises(ValueError, match="distinct"):
        Layout("bad", ("n",), (("a", ("n",)), ("a", (2,))))


_EXAMPLE = Layout("example", ("n", "k"), (("a", ("n", 3)), ("b", (2, ("n", "k"))), ("c", (4,)), ("d", (("k", 1),))))
_example_views, _example_size = _EXAMPLE.views, _EXAMPLE.size


@numba.njit(boundscheck=True)
def _checked_carve(buf, offset, n):
    return carve(buf, offset, (n, 2)).sum()


@numba.njit(boundscheck=True)
def _checked_rows(x, first, n):
    return rows(x, first, n).sum()


@numba.njit(boundscheck=True)
def _checked_views(buf, n, k):
    a, b, c, d = _example_views(buf, (n, k))
    return a.shape[0], b.shape[1], c.shape[0], d.shape[0], _example_size((n, k))


@numba.njit
def _unchecked_views(buf, n, k):
    a, b, c, d = _example_views(buf, (n, k))
    return d.shape[0]


def test_bounds_checked_where_numba_checks_bounds():
    buf = np.arange(10.0)
    assert _checked_carve(buf, 4, 3) == sum(range(4, 10))
    with pytest.raises(IndexError, match="carve"):
        _checked_carve(buf, 5, 3)
    with pytest.raises(IndexError, match="carve"):
        _checked_carve(buf, -1, 1)
    x = np.arange(12.0).reshape(6, 2)
    assert _checked_rows(x, 4, 2) == x[4:].sum()
    with pytest.raises(IndexError, match="rows"):
        _checked_rows(x, 5, 2)
    assert _checked_views(np.zeros(36), 5, 2) == (5, 7, 4, 3, 36)
    with pytest.raises(IndexError, match="layout example"):
        _checked_views(np.zeros(35), 5, 2)
    # without bounds checking the views are built unchecked (the kernels check lengths at entry)
    assert _unchecked_views(np.zeros(40), 5, 2) == 3


@numba.njit
def _parts_of(T):
    if not packed_ok(T, 3):
        return -1.0
    ints = packed_part(T, 3, 0).view(np.int64)
    a, b = packed_part(T, 3, 1), packed_part(T, 3, 2)
    return float(ints.sum()) + 10.0 * a.sum() + 100.0 * b.shape[0]


def test_packed_parts_read_back_and_refuse_a_short_array():
    """pack_parts' array read back part by part (an integer part exactly, int64 bits), and
    refused (packed_ok False) when cut short or read with another part count."""
    T = pack_parts((np.array([7, -3, 2**40]),), (np.array([0.25, 0.5]), np.zeros(4)))
    assert _parts_of(T) == 7 - 3 + 2**40 + 10 * 0.75 + 400
    assert _parts_of(T[:-1].copy()) == -1.0
    assert _parts_of(pack_parts((), (np.zeros(2),))) == -1.0
