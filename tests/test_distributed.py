"""soadyn.distributed on a LocalCluster of 2 single-threaded worker processes: the results
equal the single-process batched call, in order; a worker killed in the middle of a run
costs a retry of its chunk, and nothing is lost or counted twice."""
import os
import signal
import sys

import cloudpickle
import numpy as np
import pytest

import soadyn as sd

distributed = pytest.importorskip("distributed")
sdd = pytest.importorskip("soadyn.distributed")

# the workers cannot import this test module: its functions travel by value
cloudpickle.register_pickle_by_value(sys.modules[__name__])


@pytest.fixture(scope="module")
def client():
    with sdd.local_cluster(2) as cluster, distributed.Client(cluster) as c:
        yield c


def _states(model, batch, seed=0):
    rng = np.random.default_rng(seed)
    q = np.stack([sd.random_configuration(model, rng) for _ in range(batch)])
    v, tau = rng.normal(size=(2, batch, model.nv))
    return q, v, tau


def test_map_batches_equals_the_single_process_batch(client):
    model = sd.models.random_tree(6, 4, floating_base=True)
    q, v, tau = _states(model, 103)  # 103 = 6 chunks of 17 and one of 1
    got = sdd.map_batches(sd.aba, model, (q, v, tau), client, chunk=17)
    assert np.array_equal(got, sd.aba(model, q, v, tau))
    # None entries (zero velocity), keyword arguments, a function with two outputs
    got = sdd.map_batches(sd.rnea, model, (q, None, tau), client, chunk=40, kwargs={"gravity": False})
    assert np.array_equal(got, sd.rnea(model, q, None, tau, gravity=False))
    qs, vs = sdd.rollout(model, q[:9], v[:9], tau[:9, None].repeat(5, axis=1), 0.01, "rk4", client, chunk=4)
    expected = sd.rollout(model, q[:9], v[:9], tau[:9, None].repeat(5, axis=1), 0.01, "rk4")
    assert np.array_equal(qs, expected[0]) and np.array_equal(vs, expected[1])


def test_a_scheduler_address_or_the_default_client(client):
    model = sd.models.serial_chain(3)
    q, v, tau = _states(model, 20)
    expected = sd.aba(model, q, v, tau)
    assert np.array_equal(sdd.map_batches(sd.aba, model, (q, v, tau), client.scheduler.address, chunk=8), expected)
    assert np.array_equal(sdd.map_batches(sd.aba, model, (q, v, tau), None, chunk=8), expected)  # the fixture's


def test_the_model_is_shipped_once_per_worker(client):
    model = sd.models.serial_chain(4)
    q, v, tau = _states(model, 64)
    ids = sdd.map_batches(_worker_and_model, model, (q,), client, chunk=4)
    pairs = {tuple(row) for row in ids}
    workers = {w for w, _ in pairs}
    assert len(ids) == 64 and 1 <= len(workers) <= 2
    assert len(pairs) == len(workers)  # one model object per worker, whatever the number of chunks


def _worker_and_model(model, q):
    return np.tile([os.getpid(), id(model)], (len(q), 1))


def test_a_killed_worker_loses_nothing(client, tmp_path):
    model = sd.models.serial_chain(4)
    q, v, tau = _states(model, 60, seed=1)
    log = tmp_path / "starts.log"
    victim = q[30, 0]  # the first row of the chunk whose worker is killed
    got = sdd.map_batches(_aba_or_die, model, (q, v, tau), client, chunk=10,
                          kwargs={"log": str(log), "victim": victim})
    assert np.array_equal(got, sd.aba(model, q, v, tau))
    starts = [float(x) for x in log.read_text().split()]
    assert starts.count(victim) == 2  # killed once, run again
    assert sorted(set(starts)) == sorted(q[::10, 0])  # every chunk ran


def _aba_or_die(model, q, v, tau, log, victim):
    if len(q) > 1:  # a chunk (the warm-up evaluates one row)
        with open(log, "a") as f:
            f.write(f"{float(q[0, 0])!r}\n")
        marker = log + ".killed"
        if q[0, 0] == victim and not os.path.exists(marker):
            open(marker, "w").close()
            os.kill(os.getpid(), signal.SIGKILL)
    return sd.aba(model, q, v, tau)


def test_an_error_in_a_chunk_names_its_rows(client):
    model = sd.models.serial_chain(3)
    q, v, tau = _states(model, 60)
    q[50, 1] = np.nan
    with pytest.raises(ValueError, match=r"q: expected finite values.*\(batch entry 16\) "
                                         r"\[in chunk 2: rows 34 to 50 of the batch\]"):
        sdd.map_batches(sd.aba, model, (q, v, tau), client, chunk=17)


def test_arguments_are_checked():
    model = sd.models.serial_chain(2)
    q = np.zeros((4, 2))
    with pytest.raises(ValueError, match="arrays\\[1\\]: batch size 3 does not match arrays\\[0\\]'s 4"):
        sdd.map_batches(sd.aba, model, (q, np.zeros((3, 2))), chunk=2)
    with pytest.raises(ValueError, match="chunk: expected a positive number of rows, got 0"):
        sdd.map_batches(sd.aba, model, (q,), chunk=0)
    with pytest.raises(TypeError, match="arrays: expected a tuple of arrays"):
        sdd.map_batches(sd.aba, model, q)
    with pytest.raises(TypeError, match="model: expected a soadyn.Model"):
        sdd.map_batches(sd.aba, "model.urdf", (q,))
    with pytest.raises(TypeError, match="client: expected a distributed.Client"):
        sdd.map_batches(sd.aba, model, (q,), client=3)
