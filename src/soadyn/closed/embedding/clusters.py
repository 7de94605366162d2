"""Body clusters and the cluster connectivity tree ([Chignoli23, §IV], [Jain12, §5–6]).

Constraint embedding aggregates the bodies taking part in each local loop into a
*cluster* so that the clusters form a tree (the cluster connectivity tree, C-CT). The
minimal cluster of a constraint is the aggregation subgraph S_A ([Jain12, Lemma 6]) of
the bodies the constraint involves — the bodies on the tree paths from the nearest
common ancestor of its two ends down to each end; clusters that overlap are merged and
grown to their aggregation subgraph again until they are disjoint. Every remaining body
is a cluster of its own (a rigid joint, the trivial cluster). By Lemma 5 contracting
each cluster leaves a tree.

Each cluster k has a parent cluster λ(k), the body it hangs from (℘(S)), and for every
body i its *output body* Λ(i): the nearest supporting body outside the cluster (004
§IV-B, Λ(B_i) = max{B_j ∈ κ(B_i) \\ C_k}). Clusters are numbered parent-first by their
smallest body index, as bodies are (004's "regular numbering").
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...core import validation as val
from ...core.compile import derived, snapshot
from ...core.configuration import neutral, random_configuration
from ...core.constraints import ConstraintError
from ...graph import AggregationError, aggregation_subgraph, check_aggregation_condition, induced_subgraph, \
    model_digraph
from ..constraint_set import coupling_bodies, tree_paths
from .cluster_joints import ClusterJoint

__all__ = ["Cluster", "ClusterTree", "coordinate_names", "cluster_tree", "declare_cluster", "independent_state", "solve_spanning_state",
           "random_independent_state"]


@dataclass
class Cluster:
    """One node of the cluster connectivity tree.

    Attributes: ``index``; ``name``; ``bodies`` (body indices, ascending); ``parent``
    (parent cluster index, −1 for the world); ``parent_body`` (the body it hangs from, −1
    for the world); ``output_bodies`` (Λ(i) for each body, −1 = world); ``constraints``
    (names of the couplings, loops and holonomic user constraints inside); ``kind`` (a label:
    rigid joint, geared rotor, revolute pair with rotors, loop, ...); ``joint`` (the
    :class:`~soadyn.closed.cluster_joints.ClusterJoint`); ``y_q``, ``y_v`` (slices of the
    cluster's independent coordinates in y and ẏ).
    """

    index: int
    name: str
    bodies: tuple
    parent: int
    parent_body: int
    output_bodies: tuple
    constraints: tuple
    kind: str
    joint: ClusterJoint
    y_q: slice
    y_v: slice

    @property
    def independent_joints(self):
        m = self.joint.model
        names = [m.bodies[self.joint.cols[c][0]].joint.name for c in self.joint.independent_v]
        return list(dict.fromkeys(names))


#: names of the coordinates of the multi-dof joints, "<joint>:<coordinate>" (see
#: :func:`coordinate_names`)
_FREE_Q = ("x", "y", "z", "qx", "qy", "qz", "qw")
_FREE_V = ("wx", "wy", "wz", "vx", "vy", "vz")
_SPHERICAL_Q = ("qx", "qy", "qz", "qw")
_SPHERICAL_V = ("wx", "wy", "wz")
_PLANAR = ("x", "y", "theta")


def coordinate_names(model):
    """(position names (nq,), velocity names (nv,)): one string per entry of q and v.

    A 1-dof joint's coordinate is its name (``"knee"``). A multi-dof joint's are
    ``"<joint>:<coordinate>"``: free joint q = ``x, y, z`` (position in the parent frame) then
    ``qx, qy, qz, qw`` (quaternion), v = ``wx, wy, wz`` (angular velocity) then ``vx, vy,
    vz`` (linear velocity), both in the body frame (docs/notation.md); spherical joint
    q = ``qx, qy, qz, qw``, v = ``wx, wy, wz``; planar joint ``x, y, theta`` (translations
    along its two in-plane axes, then the angle about the normal); universal and gimbal
    joints ``1, 2(, 3)``, their successive rotation angles.
    """
    model = snapshot(model)
    qn, vn = [], []
    for b in model.bodies:
        j = b.joint
        if j.nv == 0:
            continue
        if j.nq == 1 and j.nv == 1:
            qn.append(j.name)
            vn.append(j.name)
            continue
        if j.kind == "free":
            qs, vs = _FREE_Q, _FREE_V
        elif j.kind == "spherical":
            qs, vs = _SPHERICAL_Q, _SPHERICAL_V
        elif j.kind == "planar":
            qs = vs = _PLANAR
        else:
            qs = vs = tuple(str(k + 1) for k in range(j.nv))
        if len(qs) != j.nq or len(vs) != j.nv:  # a joint type this table does not know
            qs, vs = tuple(f"q{k + 1}" for k in range(j.nq)), tuple(f"v{k + 1}" for k in range(j.nv))
        qn += [f"{j.name}:{x}" for x in qs]
        vn += [f"{j.name}:{x}" for x in vs]
    return qn, vn


class ClusterTree:
    """The cluster connectivity tree of a model (see :func:`cluster_tree`).

    ``clusters`` lists :class:`Cluster` objects parent-first; ``nyq``/``nyv`` are the sizes
    of the independent position and velocity vectors y, ẏ (cluster order, independent
    joints of a cluster in body order). ``independent_q_index`` (nyq,) and
    ``independent_v_index`` (nyv,) give the spanning coordinate of each entry of y and ẏ
    (y = q[independent_q_index], ẏ = v[independent_v_index]); ``position_names`` and
    ``velocity_names`` name them (see :func:`coordinate_names`: ``"base:wx"``, ``"knee"``).
    """

    def __init__(self, model, clusters):
        self.model = model
        self.clusters = clusters
        self.nyq = sum(c.y_q.stop - c.y_q.start for c in clusters)
        self.nyv = sum(c.y_v.stop - c.y_v.start for c in clusters)
        self.independent_q_index = np.zeros(self.nyq, dtype=np.int64)
        self.independent_v_index = np.zeros(self.nyv, dtype=np.int64)
        for c in clusters:
            j = c.joint
            self.independent_q_index[c.y_q] = j.q_index[j.independent_q]
            self.independent_v_index[c.y_v] = j.v_index[j.independent_v]
        self.independent_q_index.flags.writeable = self.independent_v_index.flags.writeable = False
        qn, vn = coordinate_names(model)
        self.position_names = tuple(qn[i] for i in self.independent_q_index)
        self.velocity_names = tuple(vn[i] for i in self.independent_v_index)
        self.cluster_of = np.empty(model.nbodies, dtype=np.int64)
        for c in clusters:
            self.cluster_of[list(c.bodies)] = c.index
        self.linear = all(c.joint.linear for c in clusters)

    def __len__(self):
        return len(self.clusters)

    def __iter__(self):
        return iter(self.clusters)

    def __getitem__(self, k):
        return self.clusters[k]

    @property
    def parents(self):
        return [c.parent for c in self.clusters]

    # ------------------------------------------------------------------ states
    def independent_state(self, q, v):
        """(y, ẏ): the independent coordinates and velocities taken from (q, v)."""
        y = np.empty(self.nyq)
        yd = np.empty(self.nyv)
        for c in self.clusters:
            j = c.joint
            y[c.y_q] = q[j.q_index[j.independent_q]]
            yd[c.y_v] = v[j.v_index[j.independent_v]]
        return y, yd

    def spanning_positions(self, y, q_guess=None):
        """q = γ(y) (nq,), solving each cluster's constraints from ``q_guess`` (nq,) when
        given, else from each cluster's reference configuration."""
        q = neutral(self.model)
        for c in self.clusters:
            c.joint.solve_positions(y[c.y_q], q, q_guess)
        return q

    def explicit_jacobian(self, q):
        """G(q) (nv, nyv): q̇ = G ẏ, block diagonal over clusters."""
        G = np.zeros((self.model.nv, self.nyv))
        for c in self.clusters:
            G[np.ix_(c.joint.v_index, np.arange(c.y_v.start, c.y_v.stop))] = c.joint.jacobian(q)
        return G

    def explicit_bias(self, q, v):
        """g(q, q̇) (nv,): q̈ = G ÿ + g."""
        g = np.zeros(self.model.nv)
        for c in self.clusters:
            if not c.joint.linear:
                g[c.joint.v_index] = c.joint.bias(q, v)
        return g

    def spanning_state(self, y, yd, q_guess=None):
        """(q, v) = (γ(y), G ẏ)."""
        q = self.spanning_positions(y, q_guess)
        return q, self.explicit_jacobian(q) @ yd

    def constraint_residual(self, q):
        """All clusters' φ(q) stacked (zero on the constraint manifold)."""
        parts = [c.joint.residual(q) for c in self.clusters if c.joint.constrained]
        return np.concatenate(parts) if parts else np.zeros(0)

    # ------------------------------------------------------------------ display
    def summary(self):
        """A readable table: clusters, bodies, output bodies, constraints, independent joints."""
        m = self.model
        lines = [f"Cluster tree of {m.name!r}: {len(self.clusters)} clusters for {m.nbodies} bodies, "
                 f"{self.nyv} independent velocities (spanning tree: {m.nv})"]
        for c in self.clusters:
            parent = "world" if c.parent < 0 else self.clusters[c.parent].name
            lines.append(f"  C{c.index:<3d} {c.name!r} [{c.kind}] <- {parent} (hangs from "
                         f"{m.body_name(c.parent_body)})")
            lines.append(f"        bodies: {[m.body_name(i) for i in c.bodies]}")
            outs = sorted({m.body_name(o) for o in c.output_bodies})
            lines.append(f"        output bodies: {outs}")
            if c.constraints:
                lines.append(f"        constraints: {list(c.constraints)}")
            lines.append(f"        independent joints: {c.independent_joints} "
                         f"(y[{c.y_q.start}:{c.y_q.stop}], ẏ[{c.y_v.start}:{c.y_v.stop}])")
        return "\n".join(lines)

    def __repr__(self):
        return f"<ClusterTree of {self.model.name!r}: {len(self.clusters)} clusters, nyv={self.nyv}>"


# --------------------------------------------------------------------------- clustering
def declare_cluster(model, bodies, name=None, independent=None):
    """Declare a cluster by hand: ``bodies`` (names or indices) must satisfy the
    aggregation condition ([Jain12, Assumption 1]). ``independent`` optionally names the
    independent joints. Automatic clusters overlapping it are merged into it."""
    idx = sorted({val.model_argument(model).body_index(b) for b in bodies})
    if not idx:
        raise ValueError("bodies: a cluster needs at least one body")
    T = model_digraph(model)
    check_aggregation_condition(T, induced_subgraph(T, idx), "declared cluster",
                                names={i: model.body_name(i) for i in T.nodes})
    model.add_cluster_declaration(idx, name, independent)


def _constraint_groups(model):
    """(bodies, constraint, kind) for every coupling (or transmission), loop and user
    constraint: the bodies whose joints the constraint involves."""
    groups = []
    for c in model.couplings:  # URDF+ couplings and transmissions: constant rows
        groups.append((coupling_bodies(model, c), c, "coupling"))
    for lp in model.loops:
        pred, succ = tree_paths(model, model.frame(lp.predecessor).body, model.frame(lp.successor).body)
        if not (pred or succ):
            raise ConstraintError(f"loop {lp.name!r}: both ends are on the same body")
        groups.append((set(pred) | set(succ), lp, "loop"))
    for uc in model.user_constraints:
        if not uc.holonomic:
            raise ConstraintError(
                f"constraint {uc.name!r} is non-holonomic: constraint embedding puts holonomic constraints in "
                "the explicit form q = γ(y) ([Chignoli23, §II-B]); use a cut-joint method (augmented, direct or "
                "projection) for this model")
        if uc.time_dependent:
            raise ConstraintError(
                f"constraint {uc.name!r} depends on time: constraint embedding needs time-invariant "
                "constraints q = γ(y); use a cut-joint method (augmented, direct or projection)")
        if uc.joints is None:
            raise ConstraintError(
                f"constraint {uc.name!r} does not declare the joints it acts on: to embed it in a body "
                "cluster, create it with joints=[names of the 1-dof joints whose coordinates its function "
                "takes] (the cut-joint methods do not need them)")
        groups.append(({model.joint(j).body for j in uc.joints}, uc, "user"))
    return groups


def _kind_label(bodies, couplings, loops, users):
    if loops:
        return "loop" if not (couplings or users) else "generic"
    if users:
        return "implicit (" + ", ".join(c.name for c in users) + ")" if not couplings else "generic"
    if not couplings:
        return "rigid joint" if len(bodies) == 1 else "rigid group"
    if len(bodies) == 2 and len(couplings) == 1:
        return "geared rotor"
    if len(bodies) == 4 and len(couplings) == 2:
        return "revolute pair with rotors"
    return "coupled transmission"


def _build(model):
    T = model_digraph(model)
    names = {i: model.body_name(i) for i in T.nodes}
    # each group: [bodies, constraints, declared info]
    groups = [[set(aggregation_subgraph(T, b).nodes), [(c, kind)], None] for b, c, kind in _constraint_groups(model)]
    for d in model.declared_clusters:
        groups.append([set(d["bodies"]), [], d])
    changed = True
    while changed:
        changed = False
        merged = []
        for g in groups:
            for h in merged:
                if g[0] & h[0]:
                    if g[2] is not None and h[2] is not None:
                        raise AggregationError(f"declared clusters {[names[i] for i in sorted(g[0])]} and "
                                               f"{[names[i] for i in sorted(h[0])]} overlap")
                    h[0] |= g[0]
                    h[1] += g[1]
                    h[2] = h[2] if h[2] is not None else g[2]
                    changed = True
                    break
            else:
                merged.append(g)
        groups = merged
        for g in groups:
            SA = set(aggregation_subgraph(T, g[0]).nodes)
            if SA != g[0]:
                g[0] = SA
                changed = True
    in_group = {i: n for n, g in enumerate(groups) for i in g[0]}
    for i in range(model.nbodies):
        if i not in in_group:
            groups.append([{i}, [], None])
    groups.sort(key=lambda g: min(g[0]))
    cluster_of = {i: n for n, g in enumerate(groups) for i in g[0]}
    clusters = []
    yq = yv = 0
    for k, (bodies, cons, decl) in enumerate(groups):
        bodies = tuple(sorted(bodies))
        parents = {model.bodies[i].parent for i in bodies} - set(bodies)
        (pb,) = parents  # one parent body, guaranteed by the aggregation condition
        outputs = []
        for i in bodies:
            o = model.bodies[i].parent
            while o >= 0 and cluster_of[o] == k:
                o = model.bodies[o].parent
            outputs.append(o)
        couplings = [c for c, kind in cons if kind == "coupling"]
        loops = [c for c, kind in cons if kind == "loop"]
        users = [c for c, kind in cons if kind == "user"]
        independent = None if decl is None else decl["independent"]
        if decl is not None and decl["name"]:
            name = decl["name"]
        elif cons:
            name = "+".join(c.name for c, _ in cons)
        else:
            name = model.body_name(bodies[0])
        try:
            joint = ClusterJoint(model, bodies, pb, couplings, loops, users, independent, name)
        except ConstraintError as e:
            # (the aggregation itself cannot fail: every cluster is closed under S_A above)
            raise ConstraintError(
                f"constraint embedding: no explicit form for the cluster {name!r} of the bodies "
                f"{[names[i] for i in bodies]} (constraints {[c.name for c, _ in cons]}); the cluster satisfies the "
                "aggregation condition (it is its own aggregation subgraph S_A, [Jain12, Lemma 6], so the cluster "
                f"tree is a tree, Lemma 5); what failed is its explicit form [Chignoli23, eq. 3]: {e}") from e
        ny_q, ny_v = joint.nyq, joint.ny
        clusters.append(Cluster(k, name, bodies, -1 if pb < 0 else cluster_of[pb], pb, tuple(outputs),
                                tuple(c.name for c, _ in cons),
                                _kind_label(bodies, couplings, loops, users), joint,
                                slice(yq, yq + ny_q), slice(yv, yv + ny_v)))
        yq += ny_q
        yv += ny_v
    return ClusterTree(model, clusters)


def cluster_tree(model):
    """The cluster connectivity tree of ``model`` ([Chignoli23, §IV]).

    Clusters come from the model's couplings, loops and holonomic user constraints
    (minimal clusters: aggregation subgraphs, merged where they overlap) and from clusters
    declared with :func:`declare_cluster`. The result is cached until the model changes.
    User constraints must declare their joints (``HolonomicConstraint(..., joints=...)``);
    non-holonomic and time-dependent constraints cannot be embedded (ConstraintError: use
    the cut-joint methods).

    Returns
    -------
    ClusterTree
        ``tree.clusters[k]`` has ``bodies``, ``parent`` (cluster), ``output_bodies``,
        ``constraints``, ``kind`` and its independent coordinates; ``tree.summary()``
        prints them.
    """
    return derived(model).memo("cluster_tree", _build)


def independent_state(model, q, v):
    """``(y, ẏ)``: the independent coordinates and velocities of ``(q, v)`` ([Chignoli23, eq. 3]).

    Parameters: q (nq,), v (nv,) (None means zero). Returns y (nyq,), ẏ (nyv,) in cluster order.
    """
    model = snapshot(model)
    q = val.vector(q, val.model_argument(model).nq, "q", batch_ok=False)
    v = np.zeros(model.nv) if v is None else val.vector(v, model.nv, "v", batch_ok=False)
    return cluster_tree(model).independent_state(q, v)


def solve_spanning_state(model, y, yd, q_guess=None):
    """``(q, v) = (γ(y), G(q) ẏ)``: spanning-tree state from independent coordinates
    ([Chignoli23, eq. 3]), solved in Python (the reference of the compiled solve behind
    :func:`soadyn.spanning_state`, and its fallback).

    Parameters: y (nyq,) [rad, m], ẏ (nyv,) [rad/s, m/s] (None means zero); ``q_guess``
    optional (nq,).
    Returns q (nq,), v (nv,). A pure function of its arguments.

    Loop clusters are solved by Gauss–Newton iteration from ``q_guess`` when given, else
    from each cluster's reference configuration — fixed when the model is built, never a
    singular configuration, never an earlier call's solution (see
    :class:`~soadyn.closed.embedding.cluster_joints.ClusterJoint`) — moved to y along its
    branch; the assembly branch nearest the start is found. Dependent revolute angles in
    which the constraints are 2π-periodic are wrapped to (−π, π]; y is kept as given.
    Raises ConstraintError when a mechanism cannot be assembled at ``y`` or the solution
    is a singular configuration (∂φ/∂q_d rank-deficient: G undefined there).
    """
    model = snapshot(model)
    tree = cluster_tree(model)
    y = val.vector(y, tree.nyq, "y", batch_ok=False)
    yd = np.zeros(tree.nyv) if yd is None else val.vector(yd, tree.nyv, "yd", batch_ok=False)
    if q_guess is not None:
        q_guess = val.vector(q_guess, model.nq, "q_guess", batch_ok=False)
    try:
        return tree.spanning_state(y, yd, q_guess)
    except ConstraintError as e:
        raise ConstraintError(f"{e} — at y = {y.tolist()}") from None


def random_independent_state(model, rng=None, scale=0.5):
    """A random (y, ẏ): independent angles and displacements uniform in ±``scale``, random
    unit quaternions for free and spherical joints, normal velocities. ``rng``: numpy
    Generator or seed. Loop clusters assemble near their reference configuration for small
    ``scale``."""
    model = snapshot(model)
    rng = np.random.default_rng(rng)
    q = random_configuration(model, rng)
    for b in model.bodies:
        j = b.joint
        if j.nq == j.nv:
            q[j.q_index:j.q_index + j.nq] = rng.uniform(-scale, scale, j.nq)
    return cluster_tree(model).independent_state(q, rng.normal(size=model.nv))
