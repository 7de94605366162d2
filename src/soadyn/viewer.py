"""A 3-D viewer in the browser: a model at a configuration, or a trajectory played back.

:func:`show` serves the model with viser (a web server and a three.js client; optional
extra ``viewer``: ``pip install 'soadyn[viewer]'``, which also brings trimesh and
pycollada to read meshes). The drawing is described first, without viser, so that it can
be built and checked without a browser:

* :func:`scene` — the :class:`Scene`: one :class:`Node` per thing drawn, each fixed to a
  model frame (or to the world) at a constant pose in that frame, or a segment joining the
  origins of two frames;
* :func:`placements` — the world pose (4, 4) of every fixed node at a configuration q,
  ``frame_placement(model, q, node.frame) @ node.placement``;
* :func:`segment_points` — the two world end points (2, 3) of every segment at q.

In viser a node's pose is relative to its parent in the scene tree; every node here is
posed in the world, so no drawn node is the parent of another (their parents, such as
``/soadyn/loops/<loop>``, are viser's identity anchors).

What is drawn (node names are viser's scene-tree paths):

* ``/soadyn/visual/<visual>``: the model's visual geometry (``model.visuals``: URDF
  ``<visual>`` boxes, cylinders, spheres and meshes);
* without visuals (or ``skeleton=True``), the kinematic skeleton:
  ``/soadyn/skeleton/<body>`` a capsule from the parent body's origin to the body's joint
  origin (fixed in the parent), ``/soadyn/skeleton/<frame>`` a capsule from a body's origin
  to each other frame fixed to it (merged links, tool frames, loop ends), and
  ``/soadyn/com/<body>`` a sphere at the centre of mass of each body with mass;
* ``/soadyn/frames/<body>``: the body frames (axes: x red, y green, z blue), ``frames=True``;
* ``/soadyn/loops/<loop>/predecessor`` and ``.../successor``: the two frames of each loop
  (cut) joint, and ``/soadyn/loops/<loop>/gap`` the segment between their origins (of
  zero length when the loop is closed);
* ``/soadyn/couplings/<coupling>/<joint>``: a ring-marker sphere at each joint of a coupling
  or transmission, and ``/soadyn/couplings/<coupling>/link<i>`` segments joining them;
* ``/soadyn/collision/<object>``: the collision shapes (``model.collisions``), ``collisions=True``
  (translucent green; :func:`show` adds a GUI box that hides and shows them): box, cylinder,
  sphere, capsule, ellipsoid, a convex mesh's hull (its vertices and faces), and a plane as a
  square of side 20 × the scene's length scale about its frame's origin;
* ``/soadyn/contacts/<k>/point`` and ``.../normal``: the k-th point of a
  :class:`~soadyn.geometry.Contacts` (``contacts=``), a sphere at its world point and a
  capsule from the point along its normal (fixed in the world: the contacts of one
  configuration);
* ``/soadyn/contacts/<k>/point`` and ``.../force`` for a trajectory with contacts (a
  :func:`soadyn.simulate` result with ``contacts=True``, or ``contacts=`` a
  :class:`~soadyn.ContactHistory`): one slot per contact of the busiest recorded step, a
  sphere at the k-th contact point of the state shown and a segment from it along the
  contact force on the second object, ``force_scale`` [m/N] long per newton; slots the state
  does not use are hidden. These nodes are *moving*: :func:`contact_markers` poses them
  from the history, not from q.
"""
from __future__ import annotations

import threading
import time
import warnings
from dataclasses import dataclass

import numpy as np
from scipy.spatial.transform import Rotation

from .closed.assembly import LoopClosureError, close_loops
from .core.configuration import neutral
from .core.model import Model
from .core.shapes import Box, Capsule, ConvexMesh, Cylinder, Ellipsoid, Plane, Sphere
from .dynamics.kinematics import forward_kinematics
from .contact.history import ContactHistory
from .geometry.contacts import Contacts

__all__ = ["Node", "Scene", "scene", "placements", "segment_points", "contact_markers", "trajectory_frames", "show",
           "Viewer"]

#: colours (rgba in [0, 1]) of the drawn items that have none of their own
COLORS = {"visual": (0.7, 0.7, 0.72, 1.0), "skeleton": (0.55, 0.6, 0.7, 1.0), "com": (0.9, 0.6, 0.1, 1.0),
          "loop": (0.85, 0.1, 0.75, 1.0), "coupling": (1.0, 0.55, 0.0, 1.0),
          "collision": (0.2, 0.8, 0.35, 0.45), "contact": (0.95, 0.1, 0.1, 1.0), "force": (1.0, 0.85, 0.0, 1.0)}


@dataclass(frozen=True, eq=False)
class Node:
    """One item of a :class:`Scene`.

    ``kind``: box (size = edge lengths), cylinder (radius, length; along z), sphere
    (radius,), mesh (scale per axis; ``filename``), capsule (radius, length; along z,
    centred), ellipsoid (semi-axes), convex (``hull`` = (vertices (V, 3), faces (F, 3))),
    plane (side,: a square in the frame's x–y plane), axes (length, radius), segment
    (thickness,). A segment joins the origins of the frames ``ends``; every other node is
    fixed to ``frame`` (None: the world) at ``placement`` (4, 4) [m]. ``rgba`` in [0, 1] or
    None (a mesh's own colours). ``moving``: a contact marker of a trajectory, posed by
    :func:`contact_markers` (its ``frame``, ``placement`` and ``ends`` are unused).
    """

    name: str
    kind: str
    frame: str | None
    placement: np.ndarray
    size: tuple
    rgba: tuple | None = None
    filename: str | None = None
    ends: tuple | None = None
    hull: tuple | None = None
    moving: bool = False


@dataclass(frozen=True, eq=False)
class Scene:
    """What :func:`show` draws for a model: ``nodes`` (a tuple of :class:`Node`), the model's
    name, ``length`` the length scale [m] that sizes markers, ``skeleton`` (True when
    the kinematic skeleton replaces missing visual geometry), and for a trajectory with
    contacts ``contact_slots`` (the number of contact markers) and ``force_scale`` [m/N],
    the length of a force arrow per newton."""

    model_name: str
    nodes: tuple
    length: float
    skeleton: bool
    contact_slots: int = 0
    force_scale: float = 0.0

    def node(self, name):
        """The node named ``name``."""
        for n in self.nodes:
            if n.name == name:
                return n
        raise KeyError(f"name: no node {name!r} in the scene of {self.model_name!r}")

    def names(self, prefix="/soadyn/"):
        """The names of the nodes under ``prefix`` (e.g. ``"/soadyn/visual/"``)."""
        return [n.name for n in self.nodes if n.name.startswith(prefix)]


def _pose(R=None, p=None):
    T = np.eye(4)
    if R is not None:
        T[:3, :3] = R
    if p is not None:
        T[:3, 3] = p
    return T


def _along(p0, p1):
    """Pose whose origin is the midpoint of p0–p1 and whose z axis points from p0 to p1."""
    d = np.asarray(p1, float) - np.asarray(p0, float)
    z = d / np.linalg.norm(d)
    helper = np.eye(3)[int(np.argmin(np.abs(z)))]
    x = np.cross(helper, z)
    x /= np.linalg.norm(x)
    return _pose(np.column_stack([x, np.cross(z, x), z]), 0.5 * (np.asarray(p0, float) + p1))


def _length_scale(model):
    """A length [m] that sizes markers: the largest joint offset or centre-of-mass offset."""
    sizes = [np.linalg.norm(b.placement[1]) for b in model.bodies] + [np.linalg.norm(b.com) for b in model.bodies]
    sizes += [np.linalg.norm(f.translation) for f in model.frames]
    L = max(sizes, default=0.0)
    return L if L > 1e-6 else 0.5


def scene(model, *, frames=True, skeleton=None, collisions=False, contacts=None):
    """The :class:`Scene` drawn for ``model`` (see the module docstring for the nodes).

    Parameters
    ----------
    model : Model
    frames : draw the body frames (axes).
    skeleton : draw the kinematic skeleton (capsules between joint origins, spheres at the
        centres of mass); default: when the model has no visual geometry.
    collisions : draw the collision shapes (``model.collisions``).
    contacts : a :class:`~soadyn.geometry.Contacts` of ``model`` (its current version) to
        draw, a :class:`~soadyn.ContactHistory` (the slots of its contact markers, posed by
        :func:`contact_markers`; the longest force arrow is 2 × the length scale), or None.
    """
    if not isinstance(model, Model):
        raise TypeError(f"model: expected a soadyn Model, got {type(model).__name__}")
    if collisions is not True and collisions is not False:
        raise TypeError(f"collisions: expected True or False, got {collisions!r}")
    history = contacts if isinstance(contacts, ContactHistory) else None
    if contacts is not None and history is None:
        Contacts.check(contacts, model)  # a Contacts of this model's version (raises naming 'contacts')
    if skeleton is None:
        skeleton = not model.visuals
    L = _length_scale(model)
    r = 0.03 * L  # marker radius
    nodes = []
    for v in model.visuals:
        nodes.append(Node(f"/soadyn/visual/{v.name}", v.kind, v.frame, np.array(v.placement), v.size,
                          v.rgba if v.rgba is not None or v.kind == "mesh" else COLORS["visual"], v.filename))
    if skeleton:
        for b in model.bodies:
            parent = None if b.parent < 0 else model.bodies[b.parent].name
            p = b.placement[1]
            if np.linalg.norm(p) > 1e-9:
                nodes.append(Node(f"/soadyn/skeleton/{b.name}", "capsule", parent, _along(np.zeros(3), p),
                                  (r, float(np.linalg.norm(p))), COLORS["skeleton"]))
            if b.mass > 0:
                nodes.append(Node(f"/soadyn/com/{b.name}", "sphere", b.name, _pose(p=b.com), (1.5 * r,),
                                  COLORS["com"]))
        bodies = set(model.body_names)
        for f in model.frames:  # merged links, tool frames, loop ends: a capsule from their body's origin
            if f.body >= 0 and f.name not in bodies and np.linalg.norm(f.translation) > 1e-9:
                nodes.append(Node(f"/soadyn/skeleton/{f.name}", "capsule", model.bodies[f.body].name,
                                  _along(np.zeros(3), f.translation), (r, float(np.linalg.norm(f.translation))),
                                  COLORS["skeleton"]))
    if frames:
        for b in model.bodies:
            nodes.append(Node(f"/soadyn/frames/{b.name}", "axes", b.name, np.eye(4), (5.0 * r, 0.1 * r)))
    for lp in model.loops:
        for end in ("predecessor", "successor"):
            nodes.append(Node(f"/soadyn/loops/{lp.name}/{end}", "axes", getattr(lp, end), np.eye(4),
                              (3.0 * r, 0.15 * r)))
        nodes.append(Node(f"/soadyn/loops/{lp.name}/gap", "segment", None, np.eye(4), (0.3 * r,), COLORS["loop"],
                          ends=(lp.predecessor, lp.successor)))
    for c in model.couplings:
        joints = c.joint_rows(model)[0]
        bodies = [next(b.name for b in model.bodies if b.joint is j) for j in joints]
        for j, body in zip(joints, bodies):
            nodes.append(Node(f"/soadyn/couplings/{c.name}/{j.name}", "sphere", body, np.eye(4), (1.2 * r,),
                              COLORS["coupling"]))
        for i in range(len(bodies) - 1):
            nodes.append(Node(f"/soadyn/couplings/{c.name}/link{i}", "segment", None, np.eye(4), (0.3 * r,),
                              COLORS["coupling"], ends=(bodies[i], bodies[i + 1])))
    if collisions:
        nodes += [_collision_node(o, None if o.frame == "world" else o.frame, 20.0 * L) for o in model.collisions]
    slots, force_scale = 0, 0.0
    if history is not None:
        slots = int(history.counts.max(initial=0))
        largest = float(np.linalg.norm(history.forces, axis=1).max(initial=0.0))
        force_scale = 2.0 * L / largest if largest > 0 else 0.0
        for k in range(slots):
            nodes.append(Node(f"/soadyn/contacts/{k}/point", "sphere", None, np.eye(4), (0.6 * r,), COLORS["contact"],
                              moving=True))
            nodes.append(Node(f"/soadyn/contacts/{k}/force", "segment", None, np.eye(4), (0.4 * r,), COLORS["force"],
                              moving=True))
    elif contacts is not None:
        for k in range(len(contacts)):
            p, n = contacts.point[k], contacts.normal[k]
            nodes.append(Node(f"/soadyn/contacts/{k}/point", "sphere", None, _pose(p=p), (0.6 * r,), COLORS["contact"]))
            nodes.append(Node(f"/soadyn/contacts/{k}/normal", "capsule", None, _along(p, p + 5.0 * r * n),
                              (0.2 * r, 5.0 * r), COLORS["contact"]))
    names = [n.name for n in nodes]
    if len(set(names)) != len(names):
        dup = sorted({x for x in names if names.count(x) > 1})
        raise ValueError(f"model: two drawn items share the scene names {dup} (visual, body, loop or coupling names)")
    return Scene(model.name, tuple(nodes), float(L), bool(skeleton), slots, force_scale)


def _collision_node(obj, frame, plane_side):
    """The :class:`Node` of collision object ``obj`` on the model frame ``frame`` (None: the
    world); a plane is a square of side ``plane_side`` [m]."""
    shape, color = obj.shape, COLORS["collision"]
    name = f"/soadyn/collision/{obj.name}"
    hull = None
    if isinstance(shape, Box):
        kind, size = "box", tuple(shape.size)
    elif isinstance(shape, (Capsule, Cylinder)):
        kind, size = ("capsule" if isinstance(shape, Capsule) else "cylinder"), (shape.radius, shape.length)
    elif isinstance(shape, Sphere):
        kind, size = "sphere", (shape.radius,)
    elif isinstance(shape, Ellipsoid):
        kind, size = "ellipsoid", tuple(shape.radii)
    elif isinstance(shape, Plane):
        kind, size = "plane", (float(plane_side),)
    elif isinstance(shape, ConvexMesh):
        kind, size, hull = "convex", (), (shape.vertices, shape.faces)
    else:
        raise TypeError(f"model: collision object {obj.name!r} has a shape the viewer cannot draw: {shape!r}")
    return Node(name, kind, frame, np.array(obj.placement), size, color, hull=hull)


def _frame_poses(model, q, names):
    """World poses (4, 4) of the model frames ``names`` (None: the world) at q, from one
    forward-kinematics pass."""
    q = np.asarray(q, dtype=float)
    if q.shape != (model.nq,):
        raise ValueError(f"q: expected shape ({model.nq},), got {q.shape}")
    fk = forward_kinematics(model, q)
    out = {None: np.eye(4)}
    for name in names:
        if name in out:
            continue
        f = model.frame(name)
        T = _pose(f.rotation, f.translation)
        if f.body >= 0:
            T = _pose(fk.rotations[f.body], fk.positions[f.body]) @ T
        out[name] = T
    return out


def placements(model, scn, q):
    """World poses ``{name: (4, 4)}`` at ``q`` (nq,) of the nodes of ``scn`` fixed to a
    frame: ``frame_placement(model, q, node.frame) @ node.placement``."""
    fixed = [n for n in scn.nodes if n.kind != "segment" and not n.moving]
    T = _frame_poses(model, q, {n.frame for n in fixed} - {None})
    return {n.name: T[n.frame] @ n.placement for n in fixed}


def segment_points(model, scn, q):
    """World end points ``{name: (2, 3)}`` at ``q`` of the segments of ``scn`` (the origins
    of the two frames each joins)."""
    segs = [n for n in scn.nodes if n.kind == "segment" and not n.moving]
    T = _frame_poses(model, q, {e for n in segs for e in n.ends})
    return {n.name: np.array([T[n.ends[0]][:3, 3], T[n.ends[1]][:3, 3]]) for n in segs}


def contact_markers(scn, history, i):
    """The contact markers of entry ``i`` of a :class:`~soadyn.ContactHistory` in a scene
    made with it: ``{name: (visible, X)}``, X the world pose (4, 4) of a point's sphere or
    the end points (2, 3) of a force segment (from the point to point + ``force_scale`` ×
    force); the slots beyond the entry's contacts are hidden (X of the slot unchanged: None)."""
    if len(history) == 0:
        raise ValueError("history: an empty ContactHistory has no entries to show")
    points, forces = history.at(i)
    if len(points) > scn.contact_slots:
        raise ValueError(f"history: entry {i} has {len(points)} contacts, the scene {scn.contact_slots} marker slots "
                         "(make the scene with this history)")
    out = {}
    for k in range(scn.contact_slots):
        point, force = f"/soadyn/contacts/{k}/point", f"/soadyn/contacts/{k}/force"
        if k < len(points):
            p = points[k]
            out[point] = (True, _pose(p=p))
            out[force] = (True, np.array([p, p + scn.force_scale * forces[k]]))
        else:
            out[point] = out[force] = (False, None)
    return out


def trajectory_frames(model, trajectory, times=None):
    """``(t (K,), q (K, nq))`` of a trajectory given as a :func:`soadyn.simulate` result
    (``.t``, ``.q``), a ``(t, q)`` pair, :func:`soadyn.rollout`'s ``(qs, vs)``, or a
    (K, nq) array of configurations. ``times``: (K,) increasing times [s], or a time
    step [s]; default the result's times, else the step numbers 0, 1, ..., K − 1."""
    t = None
    if hasattr(trajectory, "q") and hasattr(trajectory, "t"):
        t, qs = trajectory.t, trajectory.q
    elif isinstance(trajectory, (tuple, list)) and len(trajectory) == 2:
        a, b = (np.asarray(x, dtype=float) for x in trajectory)
        t, qs = (a, b) if a.ndim == 1 else (None, a)  # (t, q), or rollout's (qs, vs)
    else:
        qs = trajectory
    qs = np.asarray(qs, dtype=float)
    if qs.ndim != 2 or qs.shape[1] != model.nq or qs.shape[0] < 1 or not np.all(np.isfinite(qs)):
        raise ValueError(f"trajectory: expected finite configurations of shape (K, {model.nq}) (a simulate "
                         f"result, (t, q), rollout's (qs, vs) or an array), got shape {qs.shape}")
    K = qs.shape[0]
    if times is not None:
        t = times
    if t is None:
        t = np.arange(K, dtype=float)
    elif np.ndim(t) == 0:
        if not float(t) > 0:
            raise ValueError(f"times: expected a positive time step [s] or {K} increasing times, got {t!r}")
        t = float(t) * np.arange(K)
    t = np.asarray(t, dtype=float)
    if t.shape != (K,) or not np.all(np.isfinite(t)) or np.any(np.diff(t) < 0):
        raise ValueError(f"times: expected {K} finite non-decreasing times [s] (one per configuration), "
                         f"got shape {t.shape}")
    return t, qs


def _initial_configuration(model):
    """The neutral configuration, with the loops closed when they can be."""
    q = neutral(model)
    if model.has_constraints:
        try:
            q = close_loops(model, q + 0.1)[0]  # off the neutral point: it is often a singular one
        except (LoopClosureError, ValueError):  # no assembly near there: draw the loops open
            pass
    return q


# ================================================================= the viser server
def _wxyz(R):
    """viser's quaternion order (w, x, y, z) of a rotation matrix."""
    x, y, z, w = Rotation.from_matrix(R).as_quat()
    return np.array([w, x, y, z])


def _rgb(rgba):
    return tuple(int(round(255 * c)) for c in rgba[:3])


class Viewer:
    """A running viewer (returned by :func:`show` with ``block=False``).

    Attributes: ``server`` (the ``viser.ViserServer``), ``scene`` (:class:`Scene`),
    ``model``, ``handles`` ({node name: viser scene-node handle}), ``url``, ``times`` and
    ``configurations`` (the trajectory, or None), ``contact_history`` (the trajectory's
    :class:`~soadyn.ContactHistory`, or None), ``slider``, ``playing`` and
    ``collision_toggle`` (the GUI handles of the time slider, the play box and the collision
    shapes' box, or None). ``set_configuration(q)`` poses the scene, ``set_time(t)`` poses it
    at the trajectory's configuration at time t, with its contact points and forces (and
    returns its index), ``set_contacts(i)`` poses the contact markers of history entry i,
    ``show_collisions(visible)`` hides or shows the collision shapes, ``close()`` stops the
    server (also on leaving a ``with`` block).
    """

    def __init__(self, model, scn, server, handles, times, qs, history=None):
        self.model, self.scene, self.server, self.handles = model, scn, server, handles
        self.times, self.configurations, self.contact_history = times, qs, history
        self.url = f"http://{server.get_host()}:{server.get_port()}"
        self.slider = self.playing = self.collision_toggle = None
        self._stop = threading.Event()
        self._lock = threading.RLock()  # one pose update at a time, none once closed
        self._player = None

    def set_configuration(self, q):
        """Pose every node at configuration ``q`` (nq,)."""
        poses = placements(self.model, self.scene, q)
        points = segment_points(self.model, self.scene, q)
        with self._lock, self.server.atomic():
            for name, T in poses.items():
                h = self.handles.get(name)
                if h is not None:
                    h.position, h.wxyz = T[:3, 3], _wxyz(T[:3, :3])
            for name, P in points.items():
                self.handles[name].points = P[None]

    def set_time(self, t):
        """Show the trajectory's configuration at time ``t`` (the last one at or before t)."""
        if self.times is None:
            raise ValueError("set_time: this viewer shows no trajectory")
        k = int(np.clip(np.searchsorted(self.times, t, side="right") - 1, 0, len(self.times) - 1))
        with self._lock:  # the configuration and its contacts together
            self.set_configuration(self.configurations[k])
            if self.contact_history is not None:
                self.set_contacts(k)
        return k

    def set_contacts(self, i):
        """Show the contact points and force arrows of entry ``i`` of the contact history
        (:func:`contact_markers`), hiding the slots it does not use."""
        if self.contact_history is None:
            raise ValueError("set_contacts: this viewer shows no contact history")
        markers = contact_markers(self.scene, self.contact_history, i)
        with self._lock, self.server.atomic():
            for name, (visible, X) in markers.items():
                h = self.handles[name]
                h.visible = visible
                if not visible:
                    continue
                if X.shape == (4, 4):
                    h.position = X[:3, 3]
                else:
                    h.points = X[None]

    def _on_slider(self, _event):
        """The slider's callback (viser's worker threads): pose the scene, unless closed."""
        with self._lock:
            if not self._stop.is_set():
                self.set_time(self.slider.value)

    def show_collisions(self, visible):
        """Show (True) or hide (False) the collision shapes."""
        with self._lock:
            for name in self.scene.names("/soadyn/collision/"):
                h = self.handles.get(name)
                if h is not None:
                    h.visible = bool(visible)

    def _on_collision_toggle(self, _event):
        """The collision box's callback (viser's worker threads)."""
        if not self._stop.is_set():
            self.show_collisions(self.collision_toggle.value)

    def _start_player(self):
        self._player = threading.Thread(target=self._play, daemon=True, name="soadyn-viewer-play")
        self._player.start()

    def _play(self):
        """Advance the slider in real time while 'play' is ticked (a daemon thread)."""
        t_end = self.times[-1]
        while not self._stop.wait(1 / 30):
            if self.playing.value and t_end > self.times[0]:
                t = self.slider.value + 1 / 30
                self.slider.value = float(self.times[0] if t > t_end else t)

    def close(self):
        """Stop the playback and the server."""
        self._stop.set()
        if self._player is not None:
            self._player.join()
        with self._lock:  # after any pose update under way
            self.server.stop()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _add_node(server, n):
    """Add the viser scene node of :class:`Node` ``n`` (at the identity pose); None when a
    mesh cannot be read (a warning says why)."""
    s, color = server.scene, _rgb(n.rgba) if n.rgba is not None else None
    opacity = None if n.rgba is None or n.rgba[3] >= 1.0 else n.rgba[3]
    if n.kind == "box":
        return s.add_box(n.name, dimensions=n.size, color=color, opacity=opacity)
    if n.kind == "cylinder":
        return s.add_cylinder(n.name, radius=n.size[0], height=n.size[1], color=color, opacity=opacity)
    if n.kind == "sphere":
        return s.add_icosphere(n.name, radius=n.size[0], color=color, opacity=opacity)
    if n.kind == "convex":
        return s.add_mesh_simple(n.name, n.hull[0], n.hull[1], color=color, opacity=opacity, flat_shading=True)
    if n.kind == "plane":
        h = 0.5 * n.size[0]
        square = np.array([[-h, -h, 0.0], [h, -h, 0.0], [h, h, 0.0], [-h, h, 0.0]])
        return s.add_mesh_simple(n.name, square, np.array([[0, 1, 2], [0, 2, 3]]), color=color, opacity=opacity,
                                 side="double")
    if n.kind == "axes":
        return s.add_frame(n.name, axes_length=n.size[0], axes_radius=n.size[1])
    if n.kind == "segment":
        return s.add_line_segments(n.name, np.zeros((1, 2, 3)), color, thickness=n.size[0])
    import trimesh  # optional (extra 'viewer')

    if n.kind == "capsule":
        mesh = trimesh.creation.capsule(height=n.size[1], radius=n.size[0])
        return s.add_mesh_simple(n.name, mesh.vertices, mesh.faces, color=color, opacity=opacity)
    if n.kind == "ellipsoid":
        mesh = trimesh.creation.icosphere(subdivisions=3)
        return s.add_mesh_simple(n.name, mesh.vertices * np.asarray(n.size), mesh.faces, color=color, opacity=opacity)
    if n.filename is None:
        warnings.warn(f"{n.name}: mesh file not found (pass package_dirs= to load_urdf): not drawn", stacklevel=3)
        return None
    try:
        mesh = trimesh.load(n.filename, force="mesh")
    except Exception as e:  # noqa: BLE001 — any reader failure (format, missing pycollada) skips one mesh
        warnings.warn(f"{n.name}: cannot read the mesh {n.filename!r} ({e}): not drawn", stacklevel=3)
        return None
    mesh.apply_scale(n.size)
    if color is not None:
        return s.add_mesh_simple(n.name, mesh.vertices, mesh.faces, color=color, opacity=n.rgba[3])
    return s.add_mesh_trimesh(n.name, mesh)


def _aim_camera(server, model, scn, q):
    """Point the initial camera at the robot from a distance that frames it."""
    origins = np.array([T[:3, 3] for T in placements(model, scn, q).values()] or [np.zeros(3)])
    centre = 0.5 * (origins.min(axis=0) + origins.max(axis=0))
    extent = max(float(np.linalg.norm(origins.max(axis=0) - origins.min(axis=0))), scn.length)
    server.initial_camera.look_at = centre
    server.initial_camera.position = centre + 1.6 * extent * np.array([1.0, -1.0, 0.7]) / np.linalg.norm([1, 1, 0.7])


def show(model, q=None, trajectory=None, *, times=None, frames=True, skeleton=None, collisions=False, contacts=None,
         host="127.0.0.1", port=8080, block=True, verbose=True):
    """Show ``model`` in the browser (viser): at configuration ``q``, or playing back
    ``trajectory`` with a time slider.

    Parameters
    ----------
    model : Model
    q : (nq,) configuration (default: the trajectory's first, else the neutral
        configuration, with the loops of a closed chain closed when they can be).
    trajectory : a :func:`soadyn.simulate` result, a ``(t, q)`` pair, the ``(qs, vs)`` of
        :func:`soadyn.rollout`, or a (K, nq) array (see :func:`trajectory_frames`).
    times : the trajectory's times (K,) or time step [s] (see :func:`trajectory_frames`).
    frames, skeleton : what to draw (see :func:`scene`).
    collisions : draw the collision shapes, with a GUI box ("collision shapes") that hides and
        shows them (the Viewer's ``collision_toggle``).
    contacts : a :class:`~soadyn.geometry.Contacts` of ``model`` whose points and normals to
        draw (fixed in the world), or a :class:`~soadyn.ContactHistory` of the trajectory
        (one entry per configuration) whose points and force arrows to play back with it;
        default: the history of a :func:`soadyn.simulate` result with ``contacts=True``
        (:meth:`~soadyn.ContactHistory.from_simulation`), if the trajectory is one.
    host, port : where to serve (port 0: a free port; a busy port: the next free one).
    block : True (default): serve until interrupted (Ctrl-C), then stop the server and
        return None. False: return the running :class:`Viewer` at once (tests, notebooks,
        scripts that update it); call its ``close()`` to stop it.
    verbose : let viser print its address.

    Requires the optional packages of the extra ``viewer`` (viser, trimesh, pycollada).
    """
    try:
        import viser  # optional heavy dependency (extra 'viewer'): imported only to serve
    except ImportError as e:
        raise ImportError("soadyn.viewer.show needs viser: pip install 'soadyn[viewer]'") from e
    ts = qs = None
    if trajectory is not None:
        ts, qs = trajectory_frames(model, trajectory, times)
        if contacts is None and getattr(trajectory, "contact_points", None) is not None:
            contacts = ContactHistory.from_simulation(trajectory)
    history = contacts if isinstance(contacts, ContactHistory) else None
    if history is not None and (qs is None or len(history) != len(qs)):
        raise ValueError(f"contacts: a ContactHistory plays with a trajectory of as many configurations; got "
                         f"{len(history)} entries and {'no trajectory' if qs is None else f'{len(qs)} configurations'}")
    scn = scene(model, frames=frames, skeleton=skeleton, collisions=collisions, contacts=contacts)
    if q is None:
        q = qs[0] if qs is not None else _initial_configuration(model)
    q = np.asarray(q, dtype=float)
    placements(model, scn, q)  # validates q before a server starts
    server = viser.ViserServer(host=host, port=port, label=f"soadyn: {model.name}", verbose=verbose)
    try:
        server.scene.set_up_direction("+z")
        handles = {}
        for n in scn.nodes:
            h = _add_node(server, n)
            if h is not None:
                handles[n.name] = h
        viewer = Viewer(model, scn, server, handles, ts, qs, history)
        viewer.set_configuration(q)
        if history is not None:
            viewer.set_contacts(0)
        if scn.names("/soadyn/collision/"):
            viewer.collision_toggle = server.gui.add_checkbox("collision shapes", initial_value=True)
            viewer.collision_toggle.on_update(viewer._on_collision_toggle)
        _aim_camera(server, model, scn, q)
        if ts is not None:
            span = float(ts[-1] - ts[0])
            step = span / (len(ts) - 1) if span > 0 else 1.0
            viewer.slider = server.gui.add_slider("t", min=float(ts[0]), max=float(ts[0]) + max(span, step),
                                                  step=step, initial_value=float(ts[0]))
            viewer.playing = server.gui.add_checkbox("play", initial_value=False)
            viewer.slider.on_update(viewer._on_slider)
            viewer._start_player()
    except BaseException:
        server.stop()
        raise
    if not block:
        return viewer
    try:
        while True:
            time.sleep(1.0)
    except KeyboardInterrupt:
        pass
    finally:
        viewer.close()
    return None
