"""The public fronts detect_contacts and collision_distances: batches equal single calls,
more contacts than the first capacity are all returned, the broad phase keeps every pair
within the margin (against collision_distances, which has none), the friction of a contact is the
larger of its two objects', the frames are orthonormal with the normal last, contacts feed
the Delassus operator, and bad input is refused naming the argument."""
import numpy as np
import pytest

import soadyn as sd
from soadyn.core import joints as jt
from soadyn.geometry import Box, Capsule, Ellipsoid, Plane, Sphere
from soadyn.geometry.detect import CAPACITY

from collision_scenes import build


def _boxes_on_the_ground(count, depth=1e-3):
    """``count`` unit-height boxes in a row on the ground, each 1 mm in: 4 contacts each."""
    model = sd.Model("row")
    q = []
    for k in range(count):
        model.add_body(f"b{k}", jt.Free(), None, mass=1.0, inertia=np.eye(3))
        model.add_collision(f"b{k}", Box((0.5, 0.5, 1.0)), friction=0.2 + 0.01 * k)
        q.extend([2.0 * k, 0.0, 0.5 - depth, 0.0, 0.0, 0.0, 1.0])
    model.add_ground(friction=0.5)
    return model, np.array(q)


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_broad_phase_keeps_every_pair_within_the_margin(axis):
    """detect_contacts (broad phase, then the narrow phase on its candidates) finds exactly
    the pairs that collision_distances (every allowed pair, no broad phase) puts within the
    margin, on heaps stretched along each world axis in turn (the axis the sweep sorts on)."""
    rng = np.random.default_rng(11 + axis)
    makers = (lambda: Sphere(rng.uniform(0.05, 0.15)), lambda: Box(rng.uniform(0.05, 0.3, 3)),
              lambda: Capsule(rng.uniform(0.03, 0.1), rng.uniform(0.1, 0.4)),
              lambda: Ellipsoid(rng.uniform(0.05, 0.2, 3)))
    model = sd.Model("heap")
    spread = np.full(3, 0.4)
    spread[axis] = 3.0
    q = []
    for k in range(40):
        model.add_body(f"b{k}", jt.Free(), None, mass=1.0, inertia=np.eye(3))
        model.add_collision(f"b{k}", makers[k % len(makers)]())
        quat = rng.normal(size=4)
        q.extend([*rng.uniform(-spread, spread), *(quat / np.linalg.norm(quat))])
    model.add_ground(height=-0.3)
    q = np.array(q)
    margin = 0.05
    d = sd.collision_distances(model, q)
    assert np.all(np.abs(d.distance - margin) > 1e-9)  # no pair on the border
    near = {tuple(map(int, p)) for p, x in zip(d.objects, d.distance) if x <= margin}
    assert len(near) >= 5
    assert {tuple(map(int, p)) for p in sd.detect_contacts(model, q, margin=margin).objects} == near


def test_more_contacts_than_the_first_capacity_are_all_returned():
    count = CAPACITY // 4 + 5
    model, q = _boxes_on_the_ground(count)
    c = sd.detect_contacts(model, q)
    assert len(c) == 4 * count > CAPACITY
    np.testing.assert_allclose(c.depth, 1e-3, atol=1e-14)
    # every box's four corners, in the order of the pairs (box k, ground)
    np.testing.assert_array_equal(c.objects[:, 0], np.repeat(np.arange(count), 4))
    assert np.all(c.objects[:, 1] == count)
    # the larger of the two coefficients: the box's below 0.5, the ground's above it
    expected = np.maximum(0.2 + 0.01 * np.arange(count), 0.5)
    np.testing.assert_allclose(c.friction, np.repeat(expected, 4))


def test_frames_are_orthonormal_with_the_normal_last():
    model, q = _boxes_on_the_ground(3)
    q[3:7] = [0.1, 0.2, 0.05, 0.97]  # tilt the first box
    q[3:7] /= np.linalg.norm(q[3:7])
    c = sd.detect_contacts(model, q, margin=0.2)
    assert len(c) >= 9
    for F, n in zip(c.frame, c.normal):
        np.testing.assert_allclose(F.T @ F, np.eye(3), atol=1e-14)
        assert np.linalg.det(F) == pytest.approx(1.0)
        np.testing.assert_allclose(F[:, 2], n, atol=1e-15)
    for a in (c.objects, c.bodies, c.point, c.normal, c.depth, c.friction, c.frame):
        assert not a.flags.writeable


def test_batches_equal_single_calls():
    rng = np.random.default_rng(0)
    model, q = build([Plane(), Sphere(0.3), Box((0.4, 0.5, 0.6))], [(np.eye(3), np.zeros(3)),
                                                                   (np.eye(3), np.array([0, 0, 0.29])),
                                                                   (np.eye(3), np.array([0.5, 0, 0.3]))])
    Q = np.stack([q + 0.05 * np.concatenate([rng.normal(size=3), np.zeros(4), rng.normal(size=3), np.zeros(4)])
                  for _ in range(4)])
    batch = sd.detect_contacts(model, Q, margin=0.01)
    assert isinstance(batch, list) and len(batch) == 4
    distances = sd.collision_distances(model, Q)
    assert distances.distance.shape == (4, 3) and distances.normal.shape == (4, 3, 3)
    np.testing.assert_array_equal(distances.objects, model.collision_pairs())
    for k in range(4):
        one = sd.detect_contacts(model, Q[k], margin=0.01)
        assert len(one) == len(batch[k])
        np.testing.assert_array_equal(one.point, batch[k].point)
        np.testing.assert_array_equal(one.depth, batch[k].depth)
        d = sd.collision_distances(model, Q[k])
        np.testing.assert_array_equal(d.distance, distances.distance[k])
        np.testing.assert_array_equal(d.points, distances.points[k])


def test_detected_contacts_feed_the_delassus_operator():
    model, q = _boxes_on_the_ground(2)
    c = sd.detect_contacts(model, q)
    G = sd.delassus(model, q, c)
    assert G.shape == (3 * len(c), 3 * len(c))
    np.testing.assert_allclose(G, G.T, atol=1e-12)
    assert np.linalg.eigvalsh(G).min() > -1e-12


def test_bad_input_names_the_argument():
    model, q = _boxes_on_the_ground(1)
    for margin, kind in ((-1.0, ValueError), (np.nan, ValueError), ("far", TypeError)):
        with pytest.raises(kind, match="margin"):
            sd.detect_contacts(model, q, margin=margin)
    with pytest.raises(ValueError, match="q: expected shape"):
        sd.detect_contacts(model, q[:3])
    with pytest.raises(ValueError, match="q: expected shape"):
        sd.collision_distances(model, q[:3])
    bad = q.copy()
    bad[0] = np.nan
    with pytest.raises(ValueError, match="q: expected finite"):
        sd.detect_contacts(model, bad)
    with pytest.raises(TypeError):
        sd.detect_contacts("not a model", q)


def test_a_model_without_pairs_has_no_contacts_and_no_distances():
    model = sd.Model("alone")
    model.add_body("a", jt.Free(), None, mass=1.0, inertia=np.eye(3))
    model.add_collision("a", Sphere(0.1))
    q = sd.neutral(model)
    assert len(sd.detect_contacts(model, q)) == 0
    d = sd.collision_distances(model, q)
    assert d.distance.shape == (0,) and d.points.shape == (0, 2, 3) and d.objects.shape == (0, 2)


def test_the_kernel_for_compiled_callers_gives_the_public_contacts():
    """detect_contacts_kernel (body poses and separate output arrays: the Python entry of
    the helper the step kernels call) against detect_contacts; a short capacity is reported
    by a count above it, nothing written past it."""
    from soadyn.geometry.detect import _prepared
    from soadyn.kernels.collision.detect import detect_contacts_kernel
    model, q = _boxes_on_the_ground(3)
    q[3:7] = [0.05, 0.0, 0.0, 1.0]
    q[3:7] /= np.linalg.norm(q[3:7])
    c = sd.detect_contacts(model, q, margin=0.01)
    _, detection, scratch = _prepared(model)
    R, p = sd.body_placements(model, q)
    for capacity in (len(c), len(c) - 3):
        out = (np.zeros((capacity, 2), dtype=np.int64), np.zeros((capacity, 2), dtype=np.int64),
               np.zeros((capacity, 3)), np.zeros((capacity, 3)), np.zeros(capacity), np.zeros(capacity),
               np.zeros((capacity, 3, 3)))
        count = detect_contacts_kernel(detection.ci, detection.cf, R, p, 0.01, scratch.fs, scratch.js, *out)
        assert count == len(c)
        for got, want in zip(out, (c.objects, c.bodies, c.point, c.normal, c.depth, c.friction, c.frame)):
            np.testing.assert_array_equal(got, want[:capacity])
