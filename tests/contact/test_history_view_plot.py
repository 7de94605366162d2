"""The contacts of a trajectory (ContactHistory), their plot panels and their playback in
the viewer, on a box dropped on the ground and coming to rest.

Independent truths: at rest the contact forces carry the weight (Σ f = m g e_z, the forces'
normal parts λ_n / dt along the contact normals); the history's points are the steps'
contact points; the viewer's markers sit at those points with arrows along the forces,
the slots a state does not use hidden; the plot's panels draw the history's arrays and,
on log axes, the NCP residuals.
"""
from __future__ import annotations

import importlib.util
import os
import sys
import time

import numpy as np
import pytest

import soadyn as sd
from conftest import HERE
from soadyn.simulate import SimulationResult

_spec = importlib.util.spec_from_file_location("soadyn_contact_scenes",
                                               os.path.join(HERE, "..", "benchmarks", "contact_scenes.py"))
scenes = sys.modules.get(_spec.name) or importlib.util.module_from_spec(_spec)
if _spec.name not in sys.modules:
    sys.modules[_spec.name] = scenes
    _spec.loader.exec_module(scenes)

DT = 2e-3
SETTINGS = dict(margin=5e-3)


@pytest.fixture(scope="module")
def drop():
    """A box released 0.2 m above the ground, simulated with contacts for 0.6 s at dt = 2 ms
    (at rest from 0.3 s): (scene, the simulate result, its ContactHistory)."""
    scene = scenes.drop("box", height=0.2)
    res = sd.simulate(scene.model, scene.q0, scene.v0, 0.6, dt=DT, contacts=True,
                      contact_settings=sd.ContactSettings(**SETTINGS))
    return scene, res, sd.ContactHistory.from_simulation(res)


def test_history_of_a_simulation_holds_each_steps_contacts_and_forces(drop):
    """Entry i: the contacts detected at the recorded state i − 1 (where the step that ended
    at t_i started), their forces; at rest the four corners carry the weight, Σ f = m g e_z."""
    scene, res, h = drop
    model = scene.model
    mg = scene.params["mass"] * scene.params["g"]
    assert len(h) == len(res.t) and h.counts[0] == 0 and h.converged.all()
    np.testing.assert_array_equal(h.t, res.t)
    for i in range(1, len(h)):
        points, forces = h.at(i)
        detected = sd.detect_contacts(model, res.q[i - 1], margin=SETTINGS["margin"])
        np.testing.assert_allclose(points, detected.point, atol=1e-12)
        assert h.counts[i] == len(detected)
        if len(detected):
            # a force on the second object pushes it away from the first: along +n
            assert (np.einsum("ki,ki->k", forces, detected.normal) >= -1e-9).all()
    for i in range(len(h) - 50, len(h)):  # at rest (the last 0.1 s)
        assert h.counts[i] == 4
        np.testing.assert_allclose(h.at(i)[1].sum(axis=0), [0.0, 0.0, mg], rtol=0, atol=1e-3 * mg)
        assert h.normal_force[i] == pytest.approx(mg, rel=1e-3)
    with pytest.raises(IndexError, match="i: expected an entry index"):
        h.at(len(h))
    with pytest.raises(ValueError, match="result: expected a simulate"):
        sd.ContactHistory.from_simulation(SimulationResult(res.t, res.q, res.v, res.energy, res.info))


def test_history_of_steps_gives_the_frame_components_of_the_impulses():
    """ContactHistory.from_steps on a few sd.step results: each force's components in its
    contact frame (t1, t2, n) are λ / dt, the normal force Σ λ_n / dt, the residuals the
    solutions'."""
    scene = scenes.drop("box", height=0.0)  # resting on the ground
    model, settings = scene.model, sd.ContactSettings(**SETTINGS)
    q, v, steps = scene.q0, scene.v0, [None]
    for _ in range(3):
        r = sd.step(model, q, v, np.zeros(model.nv), DT, settings=settings)
        q, v = r.q, r.v
        steps.append(r)
    h = sd.ContactHistory.from_steps(DT * np.arange(4), steps, DT)
    assert list(h.counts) == [0, 4, 4, 4]
    for i, r in enumerate(steps[1:], start=1):
        points, forces = h.at(i)
        np.testing.assert_array_equal(points, r.contacts.point)
        np.testing.assert_allclose(np.einsum("kij,ki->kj", r.contacts.frame, forces), r.impulses / DT, atol=1e-9)
        assert h.normal_force[i] == pytest.approx(r.impulses[:, 2].sum() / DT, rel=1e-12)
        assert h.residual[i] == r.solution.residual
    with pytest.raises(ValueError, match="steps: expected one step result per recorded time"):
        sd.ContactHistory.from_steps(DT * np.arange(4), steps[1:], DT)


def test_plot_adds_normal_force_and_ncp_residual_panels(drop):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    scene, res, h = drop
    fig = res.plot()
    try:
        by_label = {ax.get_ylabel(): ax for ax in fig.axes}
        force_ax, residual_ax = by_label["Σ normal force [N]"], by_label["NCP residual"]
        (force,) = [np.asarray(line.get_ydata(), float) for line in force_ax.get_lines()]
        np.testing.assert_array_equal(force, h.normal_force)
        assert force[-1] == pytest.approx(scene.params["mass"] * scene.params["g"], rel=1e-3)  # at rest: m g
        (count,) = [np.asarray(line.get_ydata(), float) for line in by_label["contacts"].get_lines()]
        np.testing.assert_array_equal(count, h.counts)
        lines = {line.get_label(): np.asarray(line.get_ydata(), float) for line in residual_ax.get_lines()}
        for name in ("primal", "dual", "complementarity"):
            np.testing.assert_array_equal(lines[name], getattr(h, name))
        assert residual_ax.get_yscale() == "log"
        assert len([ax for ax in fig.axes if ax.get_ylabel() != "contacts"]) == 5  # q, v, E, force, residuals
    finally:
        plt.close(fig)
    plain = SimulationResult(res.t, res.q, res.v, res.energy, res.info)  # no contacts: no contact panels
    fig = plain.plot()
    try:
        assert len(fig.axes) == 3
    finally:
        plt.close(fig)


def _world_point(T, x):
    return T[:3, :3] @ x + T[:3, 3]


def test_scene_has_a_marker_slot_per_contact_and_poses_them_from_the_history(drop):
    scene, res, h = drop
    model = scene.model
    scn = sd.viewer.scene(model, collisions=True, contacts=h)
    assert scn.contact_slots == h.counts.max() == 4
    assert scn.names("/soadyn/contacts/") == [f"/soadyn/contacts/{k}/{x}" for k in range(4) for x in ("point", "force")]
    largest = np.linalg.norm(h.forces, axis=1).max()
    assert scn.force_scale * largest == pytest.approx(2.0 * scn.length)
    # the moving markers are posed by the history, not by q
    assert not any(n.startswith("/soadyn/contacts/") for n in sd.viewer.placements(model, scn, res.q[-1]))
    assert not any(n.startswith("/soadyn/contacts/") for n in sd.viewer.segment_points(model, scn, res.q[-1]))
    for i in (0, int(np.argmax(h.counts > 0)), len(h) - 1):
        markers = sd.viewer.contact_markers(scn, h, i)
        points, forces = h.at(i)
        for k in range(4):
            visible, X = markers[f"/soadyn/contacts/{k}/point"]
            fvisible, F = markers[f"/soadyn/contacts/{k}/force"]
            assert visible == fvisible == (k < len(points))
            if visible:
                np.testing.assert_array_equal(X[:3, 3], points[k])
                np.testing.assert_allclose(F, [points[k], points[k] + scn.force_scale * forces[k]], atol=1e-15)
    with pytest.raises(ValueError, match="history: entry"):
        sd.viewer.contact_markers(sd.viewer.scene(model, contacts=sd.ContactHistory.from_steps(
            res.t[:1], [None], DT)), h, len(h) - 1)


def test_viewer_plays_the_contacts_with_the_trajectory(drop):
    pytest.importorskip("viser")
    scene, res, h = drop
    model = scene.model
    with sd.viewer.show(model, trajectory=res, collisions=True, port=0, block=False, verbose=False) as viewer:
        history = viewer.contact_history  # the result's own, by default
        np.testing.assert_array_equal(history.points, h.points)
        np.testing.assert_array_equal(history.forces, h.forces)
        assert set(viewer.scene.names("/soadyn/contacts/")) <= set(viewer.handles)

        def check(i):
            markers = sd.viewer.contact_markers(viewer.scene, h, i)
            for name, (visible, X) in markers.items():
                handle = viewer.handles[name]
                assert handle.visible == visible, name
                if visible and X.shape == (4, 4):
                    np.testing.assert_allclose(handle.position, X[:3, 3], atol=1e-6)
                elif visible:
                    np.testing.assert_allclose(np.asarray(handle.points)[0], X, atol=1e-6)

        check(0)  # the initial state: no contacts, every slot hidden
        assert not any(viewer.handles[n].visible for n in viewer.scene.names("/soadyn/contacts/"))
        last = len(h) - 1
        assert viewer.set_time(res.t[last]) == last
        check(last)
        box = viewer.handles["/soadyn/collision/" + model.collisions[1].name]
        T = sd.viewer.placements(model, viewer.scene, res.q[last])["/soadyn/collision/" + model.collisions[1].name]
        np.testing.assert_allclose(box.position, T[:3, 3], atol=1e-6)
        first = int(np.argmax(h.counts > 0))
        viewer.slider.value = float(res.t[first])  # the slider's callback (a worker thread) poses both
        deadline = time.monotonic() + 10
        while not viewer.handles["/soadyn/contacts/0/point"].visible and time.monotonic() < deadline:
            time.sleep(0.01)
        check(first)
    with pytest.raises(ValueError, match="contacts: a ContactHistory plays with a trajectory"):
        sd.viewer.show(model, trajectory=res.q[:3], contacts=h, port=0, block=False, verbose=False)


def test_unconverged_solves_of_a_simulation_are_reported_and_plotted():
    """max_iter = 1 cannot solve the resting box's contacts: simulate warns
    (ContactSolverWarning), the history says converged=False with residuals above the
    tolerance, and the plot's force panel counts those solves."""
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    scene = scenes.drop("box", height=0.0)
    settings = sd.ContactSettings(max_iter=1, **SETTINGS)
    with pytest.warns(sd.ContactSolverWarning):
        res = sd.simulate(scene.model, scene.q0, scene.v0, 0.02, dt=DT, contacts=True, contact_settings=settings)
    h = sd.ContactHistory.from_simulation(res)
    failed = ~h.converged
    assert failed.any() and (h.residual[failed] > settings.tol).all()
    fig = res.plot()
    try:
        (force_ax,) = [ax for ax in fig.axes if ax.get_ylabel() == "Σ normal force [N]"]
        assert f"{int(failed.sum())} solves not converged" in force_ax.get_title()
    finally:
        plt.close(fig)
