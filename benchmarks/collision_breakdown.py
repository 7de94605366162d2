"""Where a ``sd.detect_contacts`` call goes, on the scenes of ``benchmarks/collision.py``:
the Python front (lookups, the output arrays, Numba's dispatch, the Contacts) against the
kernel, and inside the kernel the forward kinematics, the objects' world poses, the broad
phase and the narrow phase per family of pairs (the pairs' kinds, and whether they touch),
each timed in a compiled loop of many calls (no dispatch, caches warm: a lower bound of
what one call in a sequence of other work pays).

Usage (from the repository root)::

    PYTHONPATH=src python benchmarks/collision_breakdown.py

Prints µs per call (the fastest of 5 loops); nothing is written. The machine's load average
is printed with the numbers: on a shared machine compare the parts of one run.
"""
from __future__ import annotations

import os
import sys
import time
import timeit

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from collision import primitive_scene, robot_scene  # noqa: E402

import soadyn as sd  # noqa: E402
from soadyn.core.collisions import collision_tables  # noqa: E402
from soadyn.core.jit import kernel  # noqa: E402
from soadyn.core.layout import model_tables  # noqa: E402
from soadyn.core.shapes import KIND_NAMES, PLANE  # noqa: E402
from soadyn.geometry.detect import _prepared  # noqa: E402
from soadyn.kernels.collision.broad import candidate_pairs, world_boxes  # noqa: E402
from soadyn.kernels.collision.convex import CONVEX_FLOATS, CONVEX_INTS  # noqa: E402
from soadyn.kernels.collision.detect import detect_kernel, place_objects  # noqa: E402
from soadyn.kernels.collision.layout import collision_views  # noqa: E402
from soadyn.kernels.collision.manifold import MAX_POINTS  # noqa: E402
from soadyn.kernels.collision.narrow import pair_contacts  # noqa: E402
from soadyn.kernels.collision.support import Hulls, solid  # noqa: E402
from soadyn.kernels.kinematics import configuration_status, poses_into  # noqa: E402

#: the parts :func:`_stage` times
KINEMATICS, PLACEMENT, BROAD, PAIR = 0, 1, 2, 3


@kernel(cache=False)
def _stage(stage, reps, pair, mi, mf, ws, q, ci, cf, Rb, pb, Rw, pw, box, order, flags, M, P, C, Q, fs, js):
    """``reps`` runs of one part of the detection kernel (``stage``: KINEMATICS, PLACEMENT,
    BROAD, or PAIR for the narrow phase of pair row ``pair``, its objects' poses from the
    last PLACEMENT); returns the contact count of the pair (PAIR), else 0."""
    t = collision_views(ci, cf)
    hulls = Hulls(t.vertices, t.adj_start, t.adj, t.planes, t.starts, t.adj_vertices)
    k = 0
    for _ in range(reps):
        if stage == KINEMATICS:
            configuration_status(model_tables(mi, mf), q, ws)
            poses_into(mi, mf, ws, q, Rb, pb)
        elif stage == PLACEMENT:
            place_objects(t, Rb, pb, Rw, pw)
        elif stage == BROAD:
            world_boxes(t, Rw, pw, 0.0, box)
            candidate_pairs(t, pw, Rw, box, 0.0, order, flags)
        else:
            i, j = t.pairs[pair, 0], t.pairs[pair, 1]
            a, b = (j, i) if t.kind[i] > t.kind[j] else (i, j)
            k = pair_contacts(solid(t, Rw, pw, a), solid(t, Rw, pw, b), hulls, 0.0, fs, js, P, C, Q, M)
    return k


def _fastest(f, number):
    """µs per call of f(): the fastest of 5 loops of ``number`` calls."""
    return min(timeit.repeat(f, number=number, repeat=5)) / number * 1e6


def breakdown(model, q, number):
    """{part: µs} of one scene, and the narrow phase's families {(kind, kind, touching): (count, µs)}."""
    d, detection, scratch = _prepared(model)
    c = d.compiled
    K = detection.capacity
    outputs = (np.empty((2 * K, 3)), np.empty(2 * K), np.empty((K, 3, 3)), np.empty((2 * K, 2), np.int64))
    args = (c.mi, c.mf, d.buffer(), q, detection.ci, detection.cf, 0.0, scratch.fs, scratch.js, *outputs)
    tables = collision_tables(model)
    n, v = len(tables.kind), max(int(tables.vertex_count.max()), 1)
    R, p = sd.body_placements(model, q)
    work = (c.mi, c.mf, d.buffer(), q, detection.ci, detection.cf, np.array(R), np.array(p), np.empty((n, 3, 3)),
            np.empty((n, 3)), np.empty((n, 6)), np.zeros(n, np.int64), np.zeros(len(tables.pairs), np.int64),
            np.empty((MAX_POINTS, 7)), np.empty((2, 16, 4)), np.empty((v, 4)), np.zeros((2, v), np.int64),
            np.zeros(CONVEX_FLOATS), np.zeros(CONVEX_INTS, np.int64))

    def run(stage, reps, pair=0):
        return _stage(stage, reps, pair, *work)

    for stage in (KINEMATICS, PLACEMENT, BROAD):
        run(stage, 1)
    parts = {"detect_contacts": _fastest(lambda: sd.detect_contacts(model, q), number),
             "detect_kernel": _fastest(lambda: detect_kernel(*args), number)}
    parts["Python front"] = parts["detect_contacts"] - parts["detect_kernel"]
    for name, stage in (("kinematics", KINEMATICS), ("world poses", PLACEMENT), ("broad phase", BROAD)):
        parts[name] = min(_timed(run, stage, 20 * number) for _ in range(5))
    flags = work[12]
    families = {}
    for pair in np.flatnonzero(flags):
        i, j = tables.pairs[pair]
        if tables.kind[i] != PLANE and tables.kind[j] != PLANE:  # the kernel's bounding-sphere test
            gap = np.linalg.norm(np.asarray(work[9][j]) - work[9][i])
            if gap > tables.bounding_radius[i] + tables.bounding_radius[j]:
                continue
        touching = run(PAIR, 1, pair) > 0
        us = min(_timed(run, PAIR, number, pair) for _ in range(5))
        key = (*sorted((KIND_NAMES[tables.kind[i]], KIND_NAMES[tables.kind[j]])), touching)
        count, total = families.get(key, (0, 0.0))
        families[key] = (count + 1, total + us)
    parts["narrow phase"] = sum(us for _, us in families.values())
    return parts, families


def _timed(run, stage, reps, pair=0):
    start = time.perf_counter()
    run(stage, reps, pair)
    return (time.perf_counter() - start) / reps * 1e6


def main():
    print(f"load average (1, 5, 15 min): {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    scenes = {"solo12": (robot_scene("solo12"), 2000), "talos": (robot_scene("talos"), 300),
              "20 primitives": (primitive_scene(), 2000)}
    for name, ((model, q), number) in scenes.items():
        parts, families = breakdown(model, q, number)
        print(f"\n{name}: " + ", ".join(f"{k} {v:.2f}" for k, v in parts.items()) + " µs")
        print("| pair family | touching | pairs | µs |\n|---|---|---|---|")
        for (a, b, touching), (count, us) in sorted(families.items(), key=lambda kv: -kv[1][1]):
            print(f"| {a}–{b} | {'yes' if touching else 'no'} | {count} | {us:.2f} |")


if __name__ == "__main__":
    main()
