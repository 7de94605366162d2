"""The one call path (soadyn.core.call): the non-compiling fast dispatcher relies on private
hooks of Numba's dispatcher; these tests pin the behaviour it assumes."""
import numpy as np
import pytest
from numba import njit

from soadyn.core.fast_path import ExactCall, GeneralPath


@njit(cache=False)
def _double(x, out):
    for k in range(x.shape[0]):
        out[k] = 2.0 * x[k]
    return 0


def test_fast_dispatcher_never_compiles_and_signals_the_general_path():
    call = ExactCall(_double)
    x, out = np.arange(3.0), np.empty(3)
    with pytest.raises(GeneralPath):  # nothing compiled yet
        call.fast(x, out)
    assert call(x, out) == 0 and np.array_equal(out, 2 * x)  # the general path compiles
    assert call.fast(x, out) == 0  # ... and shares the version with the fast one
    n = len(call.fast.overloads)
    for other in ([0.0, 1.0, 2.0], x.astype(np.float32), x[::2], None):
        with pytest.raises(GeneralPath):
            call.fast(other, out)
    assert len(call.fast.overloads) == n


def test_general_path_is_a_type_error_only_for_the_dispatcher():
    assert issubclass(GeneralPath, TypeError)
    call = ExactCall(_double)
    call(np.arange(3.0), np.empty(3))
    with pytest.raises(GeneralPath):
        call.fast(np.arange(3), np.empty(3))  # an integer array: no exact version


def test_positional_call_is_the_tuple_call():
    """CompiledFunction.call (generated per arity) gives what __call__ gives, also where it
    must leave the fast path: a list argument, a user's Workspace, a closed chain, bad input."""
    import soadyn as sd
    from soadyn.core.call import NO_FORCES
    from soadyn.dynamics.rnea import _RNEA
    m = sd.models.random_tree(6, 0, floating_base=True)
    rng = np.random.default_rng(0)
    q = sd.random_configuration(m, rng)
    v, a = rng.normal(size=(2, m.nv))
    ref = _RNEA(m, (q, v, a, NO_FORCES), (True,))
    assert np.array_equal(_RNEA.call(m, q, v, a, NO_FORCES, True), ref)
    assert np.array_equal(_RNEA.call(m, list(q), list(v), a, NO_FORCES, True), ref)
    assert np.array_equal(_RNEA.call(m, q, v, a, NO_FORCES, True, workspace=sd.Workspace(m)), ref)
    out = np.empty(m.nv)
    assert _RNEA.call(m, q, v, a, NO_FORCES, True, out=out) is out and np.array_equal(out, ref)
    with pytest.raises(ValueError, match="q"):
        _RNEA.call(m, q[:-1], v, a, NO_FORCES, True)
    with pytest.raises(sd.ClosedChainError):
        _RNEA.call(sd.models.four_bar_linkage(), np.zeros(3), np.zeros(3), np.zeros(3), NO_FORCES, True)


def test_positional_call_with_several_outputs():
    """A function with several named output shapes (the poses of forward_kinematics)
    returns the tuple the general path returns, allocates anew each call, and leaves the
    fast path for a batch, a list or bad input with the general path's results and errors."""
    import soadyn as sd
    from soadyn.dynamics.kinematics import _POSES
    m = sd.models.random_tree(6, 0, floating_base=True)
    rng = np.random.default_rng(1)
    Q = np.stack([sd.random_configuration(m, rng) for _ in range(3)])
    full = sd.forward_kinematics(m, Q[0], np.zeros(m.nv))  # the kernel with rates, another path
    R, p = _POSES.call(m, Q[0])
    # (the two kernels compose the same poses in another order: equal up to rounding)
    assert np.allclose(R, full.rotations, rtol=0, atol=1e-13) and np.allclose(p, full.positions, rtol=0, atol=1e-13)
    R2, p2 = _POSES.call(m, list(Q[0]))
    assert np.array_equal(R2, R) and np.array_equal(p2, p) and R2 is not R
    RB, pB = _POSES.call(m, Q)
    assert RB.shape == (3, m.nbodies, 3, 3) and np.array_equal(RB[0], R) and np.array_equal(pB[0], p)
    with pytest.raises(ValueError, match="q: expected shape"):
        _POSES.call(m, Q[0, :-1])


def test_calls_with_every_output_given_stay_on_the_fast_path(monkeypatch):
    """A kernel whose caller passes all its outputs (an internal kernel: ``outputs`` None)
    and a public function with several outputs take the validated path once, then the fast
    one; an ``out`` tuple of another length is named by the validated path."""
    import soadyn as sd
    from soadyn.closed.kinematics import evaluate_constraints
    from soadyn.core.call import CompiledFunction
    from soadyn.dynamics.derivatives import _RNEA_D
    counts = {"general": 0}
    general = CompiledFunction.general

    def counted(self, *args):
        counts["general"] += 1
        return general(self, *args)

    monkeypatch.setattr(CompiledFunction, "general", counted)
    m = sd.models.four_bar_linkage()
    q, v = sd.close_loops(m, [0.7, 1.0, 1.6], np.ones(m.nv))
    evaluate_constraints(m, q, v)
    before = counts["general"]
    for _ in range(3):
        evaluate_constraints(m, q, v)  # the loop rows' kernel (outputs given by its caller)
    assert counts["general"] == before
    tree = sd.models.random_tree(5, 2)
    q = sd.random_configuration(tree, 1)
    z = np.zeros(tree.nv)
    out = tuple(np.empty((tree.nv, tree.nv)) for _ in range(3))
    sd.rnea_derivatives(tree, q, z, z, out=out)
    before = counts["general"]
    sd.rnea_derivatives(tree, q, z, z, out=out)
    assert counts["general"] == before and _RNEA_D.n_outputs == 3
    with pytest.raises(TypeError, match="out: expected 3 output arrays, got 2"):
        sd.rnea_derivatives(tree, q, z, z, out=out[:2])


def _recording_block(log, fail_start=None):
    """A block function for ``run_blocks`` (``kernel(*args, status, start, stop)``) that
    releases the GIL for a while, as a ``nogil`` kernel does, and records who ran what."""
    import threading
    import time

    def block(status, start, stop):
        time.sleep(0.002)
        if start == fail_start:
            raise ValueError(f"block at {start}")
        status[start:stop] = 1
        log.append((threading.get_ident(), start, stop))

    return block


def test_run_blocks_covers_every_state_once_and_the_caller_takes_blocks():
    import threading

    from soadyn.core.batch import run_blocks
    log = []
    status = np.zeros(160, dtype=np.int64)
    run_blocks(_recording_block(log), None, (), status)
    spans = sorted((start, stop) for _, start, stop in log)
    assert spans[0][0] == 0 and spans[-1][1] == 160
    assert all(a[1] == b[0] for a, b in zip(spans, spans[1:]))  # contiguous, no overlap
    assert np.all(status == 1)
    assert threading.get_ident() in {ident for ident, _, _ in log}  # the caller is not left waiting


def test_run_blocks_waits_for_every_block_when_one_fails():
    """An error in a block (the caller's or a worker's) is raised only after every other
    block has finished: none writes into the caller's arrays after the call returns."""
    import time

    from soadyn.core.batch import run_blocks
    for fail_start in (0, 80):
        log = []
        status = np.zeros(160, dtype=np.int64)
        with pytest.raises(ValueError, match=f"block at {fail_start}"):
            run_blocks(_recording_block(log, fail_start), None, (), status)
        done = len(log)
        time.sleep(0.02)
        assert len(log) == done  # nothing ran on after the error was raised
        assert np.count_nonzero(status) == 160 - 160 // (len(log) + 1)  # every block but the failed one
