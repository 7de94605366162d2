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


def _drop(duration=0.6):
    """The box drop of the physics tests at dt = 2 ms: (scene, SimulationResult with its
    ContactHistory, the StepResults)."""
    scene = scenes.drop("box", height=0.2)
    model = scene.model
    settings = sd.ContactSettings(margin=5e-3)
    q, v = scene.q0.copy(), scene.v0.copy()
    Q, V, steps = [q], [v], []
    for _ in range(int(round(duration / DT))):
        r = sd.step(model, q, v, np.zeros(model.nv), DT, settings=settings)
        q, v = r.q, r.v
        Q.append(q)
        V.append(v)
        steps.append(r)
    t = DT * np.arange(len(Q))
    E = np.array([sd.kinetic_energy(model, a, b) + sd.potential_energy(model, a) for a, b in zip(Q, V)])
    history = sd.ContactHistory.from_steps(t, [None] + steps, DT)
    return scene, SimulationResult(t, np.array(Q), np.array(V), E, {"method": "step"}, contacts=history), steps


@pytest.fixture(scope="module")
def drop():
    return _drop()


def test_history_holds_each_steps_contacts_and_forces(drop):
    scene, res, steps = drop
    h = res.contacts
    mg = scene.params["mass"] * scene.params["g"]
    assert len(h) == len(res.t) and h.counts[0] == 0 and h.converged.all()
    np.testing.assert_array_equal(h.t, res.t)
    for i, r in enumerate(steps, start=1):
        points, forces = h.at(i)
        np.testing.assert_array_equal(points, r.contacts.point)
        assert h.counts[i] == len(r.contacts)
        if len(r.contacts):
            # the force's component along each contact frame axis is λ / dt (frames orthonormal)
            np.testing.assert_allclose(np.einsum("kij,ki->kj", r.contacts.frame, forces), r.impulses / DT,
                                       rtol=1e-12, atol=1e-9)
            assert h.normal_force[i] == pytest.approx(r.impulses[:, 2].sum() / DT, rel=1e-12)
            assert h.residual[i] == max(r.solution.primal, r.solution.dual, r.solution.complementarity)
    # at rest (the last 0.1 s) the four corners carry the weight: Σ f = m g e_z
    for i in range(len(h) - 50, len(h)):
        assert h.counts[i] == 4
        np.testing.assert_allclose(h.at(i)[1].sum(axis=0), [0.0, 0.0, mg], rtol=0, atol=1e-3 * mg)
    with pytest.raises(IndexError, match="i: expected an entry index"):
        h.at(len(h))
    with pytest.raises(ValueError, match="steps: expected one step result per recorded time"):
        sd.ContactHistory.from_steps(res.t, steps, DT)


def test_plot_adds_normal_force_and_ncp_residual_panels(drop):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    scene, res, _ = drop
    h = res.contacts
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
    plain = SimulationResult(res.t, res.q, res.v, res.energy, {})  # no contacts: no contact panels
    fig = plain.plot()
    try:
        assert len(fig.axes) == 3
    finally:
        plt.close(fig)


def _world_point(T, x):
    return T[:3, :3] @ x + T[:3, 3]


def test_scene_has_a_marker_slot_per_contact_and_poses_them_from_the_history(drop):
    scene, res, _ = drop
    h, model = res.contacts, scene.model
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
    scene, res, _ = drop
    h, model = res.contacts, scene.model
    with sd.viewer.show(model, trajectory=res, collisions=True, port=0, block=False, verbose=False) as viewer:
        assert viewer.contact_history is h  # the result's own history, by default
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
