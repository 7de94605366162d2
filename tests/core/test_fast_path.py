"""The rendered fast path (soadyn.core.fast_path.TEMPLATE) against the ordinary one.

Every compiled function with a rendered positional call (``CompiledFunction.call``) is
reached through a public function; its arguments are recorded, and the rendered call and
the ordinary path (:func:`soadyn.core.fast_path.call`, ordinary Python) are compared on
them and on variants of each argument — valid ones (a list, a strided array, an integer
array, a batch) and invalid ones (wrong length, None, NaN, another model's workspace, an
output of the wrong shape, not a model): the same result bit for bit, or the same error
type and message. The independent truth is the ordinary path's code, which states each
step as a plain function; the rendered one must not differ from it anywhere.
"""
import sys
import traceback

import numpy as np
import pytest

import soadyn as sd
from soadyn.contact.jacobian import contact_velocities
from soadyn.core import fast_path
from soadyn.core.call import CompiledFunction
from soadyn.dynamics.rollout import exponential_coordinate_rate
from soadyn.geometry.contacts import Contacts

_TREE = sd.models.random_tree(6, 2, floating_base=True)
_RNG = np.random.default_rng(7)
_Q = sd.random_configuration(_TREE, _RNG)
_V, _A = _RNG.normal(size=(2, _TREE.nv))
_FRAME = _TREE.bodies[-1].name
_FOUR_BAR = sd.models.four_bar_linkage()


#: a model whose clusters are explicit (gears: q = G y), where a call with external forces
#: takes the cluster kernels' rendered call
_GEARED = sd.models.geared_chain()


def _cluster_call(function):
    """``function`` with external forces and its third argument a list: the explicit-model
    shortcut of the embedding algorithms (the kernel's twin, exact types only) declines it,
    whether or not the kernel is compiled in this process yet, and the call reaches the
    rendered call, which converts it."""
    from soadyn.closed.embedding.clusters import random_independent_state
    y, yd = random_independent_state(_GEARED, np.random.default_rng(3), 0.6)
    return function(_GEARED, y, yd, [1.0] * len(yd), np.full((_GEARED.nbodies, 6), 0.1))


def _contacts():
    return Contacts.from_points(_TREE, [("world", _TREE.bodies[-1].name)], [[0.0, 0.0, -0.1]], [[0.0, 0.0, 1.0]])


#: one public call per rendered function (the test fails for a rendered function none reaches)
DRIVERS = [
    lambda: sd.aba(_TREE, _Q, _V, _A),
    lambda: sd.aba(_TREE, _Q, None, _A, np.full((_TREE.nbodies, 6), 0.1), gravity=False),
    lambda: sd.rnea(_TREE, _Q, _V, _A),
    lambda: sd.rnea(_TREE, _Q, _V, None, np.full((_TREE.nbodies, 6), 0.1)),
    lambda: sd.mass_matrix(_TREE, _Q),
    lambda: sd.mass_matrix(_TREE, _Q, method="jtmj"),
    lambda: sd.mass_matrix_inverse(_TREE, _Q),
    lambda: sd.mass_matrix_inverse(_TREE, _Q, method="ltdl"),
    lambda: sd.coriolis_matrix(_TREE, _Q, _V),
    lambda: sd.frame_jacobian(_TREE, _Q, _FRAME, "world"),
    lambda: sd.joint_torque_regressor(_TREE, _Q, _V, _A),
    lambda: sd.centroidal_momentum_matrix(_TREE, _Q),
    lambda: sd.center_of_mass_jacobian(_TREE, _Q),
    lambda: sd.forward_kinematics(_TREE, _Q),
    lambda: sd.frame_placement(_TREE, _Q, _FRAME),
    lambda: sd.frame_velocity(_TREE, _Q, _V, _FRAME),
    lambda: sd.frame_acceleration(_TREE, _Q, _V, _A, _FRAME),
    lambda: exponential_coordinate_rate(_TREE, _V, _A, 0.1),
    lambda: sd.integrate(_TREE, _Q, _V, 0.01),
    lambda: sd.difference(_TREE, _Q, sd.integrate(_TREE, _Q, _V, 0.01)),
    lambda: sd.configuration_rate(_TREE, _Q, _V),
    lambda: sd.normalize(_TREE, _Q),
    lambda: contact_velocities(_TREE, _Q, _V, _contacts()),
    lambda: sd.delassus(_TREE, _Q, _contacts()),
    lambda: _cluster_call(sd.cluster_aba),
    lambda: _cluster_call(sd.cluster_rnea),
]


def _rendered_functions():
    """Every CompiledFunction of soadyn's modules that has a rendered call."""
    found = {}
    for name, module in list(sys.modules.items()):
        if name.startswith("soadyn.") and module is not None:
            for value in list(vars(module).values()):
                if isinstance(value, CompiledFunction) and hasattr(value, "call"):
                    found[id(value)] = value
    return list(found.values())


@pytest.fixture(scope="module")
def recorded():
    """(function, model, state, params, out, workspace) of the first call of each rendered
    function by the drivers, through either of its entries (the rendered call or the tuple
    path)."""
    calls = {}
    functions = _rendered_functions()
    saved = {}
    ordinary = fast_path.call

    def record(function, model, state, params, out, workspace):
        if id(function) in saved:
            calls.setdefault(id(function), (function, model, tuple(state), tuple(params), out, workspace))

    def tuple_entry(function, model, state, params=(), out=None, workspace=None):
        record(function, model, state, params, out, workspace)
        return ordinary(function, model, state, params, out, workspace)

    for f in functions:
        n = len(f.args)

        def positional(model, *args, out=None, workspace=None, _f=f, _n=n, _rendered=f.call):
            end = _n + len(_f.params)
            rest = args[end:] + (None, None)  # out and workspace may come by position
            out = rest[0] if len(args) > end else out
            workspace = rest[1] if len(args) > end + 1 else workspace
            record(_f, model, args[:_n], args[_n:end], out, workspace)
            return _rendered(model, *args[:end], out=out, workspace=workspace)

        saved[id(f)] = f.call
        f.call = positional
    CompiledFunction.__call__ = tuple_entry
    try:
        for driver in DRIVERS:
            driver()
    finally:
        CompiledFunction.__call__ = ordinary
        for f in functions:
            f.call = saved[id(f)]
    return functions, calls


def test_every_rendered_function_is_reached(recorded):
    functions, calls = recorded
    missing = [repr(f) for f in functions if id(f) not in calls]
    assert not missing, f"no driver reaches {missing}: add a public call to DRIVERS"


def _outcome(run):
    try:
        return "result", run()
    except Exception as e:  # the comparison: same type, same message
        return "error", (type(e), str(e))


def _same(a, b):
    assert a[0] == b[0], (a, b)
    if a[0] == "error":
        assert a[1] == b[1]
        return
    x, y = a[1], b[1]
    if isinstance(x, tuple):
        assert isinstance(y, tuple) and len(x) == len(y)
        for u, w in zip(x, y):
            np.testing.assert_array_equal(u, w)
    else:
        assert type(x) is type(y)
        np.testing.assert_array_equal(x, y)


def _variants(function, state):
    """(label, state) pairs: each state argument replaced by valid and invalid forms."""
    for k, x in enumerate(state):
        if not isinstance(x, np.ndarray) or x.ndim != 1 or len(x) == 0:
            continue
        name = function.args[k].name
        for label, y in (("list", list(x)), ("strided", np.repeat(x, 2)[::2]), ("int", np.round(x).astype(int)),
                         ("short", x[:-1]), ("none", None), ("nan", np.full_like(x, np.nan)),
                         ("empty", np.zeros(0)), ("batch", np.stack([x, x])), ("text", "q")):
            yield f"{name}={label}", state[:k] + (y,) + state[k + 1:]


def _compare(function, model, state, params, out, workspace):
    def fresh(o):
        return tuple(np.empty_like(a) for a in o) if isinstance(o, tuple) else None if o is None else np.empty_like(o)

    rendered = _outcome(lambda: function.call(model, *state, *params, out=fresh(out), workspace=workspace))
    ordinary = _outcome(lambda: fast_path.call(function, model, state, params, fresh(out), workspace))
    _same(rendered, ordinary)
    return rendered


def test_rendered_call_is_the_ordinary_path(recorded):
    functions, calls = recorded
    other = sd.models.serial_chain(3)
    for function, model, state, params, out, workspace in calls.values():
        assert len(params) == len(function.params), function
        kind, _ = _compare(function, model, state, params, out, workspace)
        assert kind == "result", function
        for label, variant in _variants(function, state):
            _compare(function, model, variant, params, out, workspace)
        _compare(function, model, state, params, out, sd.Workspace(model))  # the caller's workspace
        _compare(function, model, state, params, out, sd.Workspace(other))  # another model's
        _compare(function, "model.urdf", state, params, out, workspace)  # not a model
        if function.single:  # an output of the wrong shape, and one of the right one
            result = function.call(model, *state, *params)
            _compare(function, model, state, params, np.empty(result.shape + (1,)), workspace)
            _compare(function, model, state, params, np.empty_like(result), workspace)


def test_rendered_call_on_a_closed_chain_and_a_new_thread():
    """A tree function refuses a model with loops by the same error on both paths, and
    a thread's first call (no workspace, no packed tables yet) gives the same result."""
    import threading
    from soadyn.dynamics.aba import _ABA
    from soadyn.dynamics.rnea import _RNEA
    q = np.zeros(_FOUR_BAR.nq)
    for f in (_ABA, _RNEA):
        _same(_outcome(lambda: f.call(_FOUR_BAR, q, q, q, None, True)),
              _outcome(lambda: fast_path.call(f, _FOUR_BAR, (q, q, q, None), (True,))))
    results = {}

    def first_calls():
        fresh = sd.models.serial_chain(4)  # (a new model: no packed tables, no workspace)
        z = np.linspace(0.1, 0.4, fresh.nv)
        results["rendered"] = _ABA.call(fresh, z, z, z, None, True)
        results["rendered again"] = _ABA.call(fresh, z, z, z, None, True)
        results["ordinary"] = fast_path.call(_ABA, fresh, (z, z, z, None), (True,))

    thread = threading.Thread(target=first_calls)
    thread.start()
    thread.join()
    assert np.array_equal(results["rendered"], results["ordinary"])
    assert np.array_equal(results["rendered again"], results["ordinary"])


def test_a_traceback_shows_the_rendered_lines():
    """The rendered function's frame has a file name (registered in linecache) whose lines
    a traceback prints."""
    from soadyn.dynamics.aba import _ABA
    with pytest.raises(ValueError) as info:
        sd.aba(_TREE, _Q[:-1], _V, _A)
    frames = [f for f in traceback.extract_tb(info.tb) if f.filename == fast_path.rendered_filename(_ABA)]
    assert len(frames) == 1
    assert frames[0].line == "return function.general(model, (s0, s1, s2, s3), (p0,), out, workspace)"
    assert frames[0].name == "fast_path_of_aba_kernel"
    assert "TEMPLATE rendered for aba_kernel" in "".join(traceback.format_tb(info.tb))


def test_render_is_the_template():
    """The rendered source is TEMPLATE with the function's slots: nothing else is generated."""
    from soadyn.dynamics.crba import _CRBA
    source = fast_path.render(_CRBA)
    lines = source.splitlines()
    assert lines[0] == "def fast_path_of_mass_matrix_kernel(model, s0, out=None, workspace=None):"
    assert "            result = empty(c.vv_shape) if out is None else out" in lines
    assert "            if fast(c.mi, c.mf, ws, s0, result) == 0:" in lines
    assert len(lines) == len(fast_path.TEMPLATE.splitlines())
