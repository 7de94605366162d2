"""Directed-graph tools of [Jain12] (§3–6): subgraphs, partitions and aggregation.

A multibody system's topology is a digraph whose edges point from parent to child
(the inertial frame is the root). [Jain12] studies which groups of nodes can be
*aggregated* (node-contracted into one node) so that the result is still a tree —
the basis of constraint embedding ([Chignoli23, §IV], where the aggregated nodes are the
body clusters). The functions here work on any hashable node labels:

* relations: :meth:`Digraph.ancestors`, :meth:`Digraph.descendants`, :func:`related`,
  :func:`unrelated`;
* subgraphs ([Jain12, §3]): :func:`induced_subgraph` (S_I), :func:`path_induced_subgraph`
  (S_P), the S/C/P partition of Lemma 1 (:func:`partition`);
* aggregation ([Jain12, §5]): :func:`parent_nodes` (℘(S)), the aggregation condition of
  Assumption 1 (:func:`satisfies_aggregation_condition`, :func:`check_aggregation_condition`),
  node contraction (:func:`contract`), the aggregation subgraph S_A of Lemma 6
  (:func:`aggregation_subgraph`);
* spanning tree and cut edges of a rooted digraph (:func:`spanning_tree`);
* the sparsity of the mass matrix predicted from the topology ([Jain12, §7],
  :func:`mass_matrix_sparsity`).

Subgraphs are :class:`Digraph` objects too; a set of nodes passed where a subgraph is
expected means the subgraph with those nodes and no edges.
"""
from __future__ import annotations

from collections import deque

import numpy as np

__all__ = ["Digraph", "AggregationError", "related", "unrelated", "induced_subgraph",
           "path_induced_subgraph", "partition", "parent_nodes", "child_nodes",
           "satisfies_aggregation_condition", "check_aggregation_condition",
           "aggregation_subgraph", "contract", "spanning_tree", "model_digraph", "mass_matrix_sparsity"]


class AggregationError(ValueError):
    """A subgraph that violates the aggregation condition ([Jain12, Assumption 1])."""


class Digraph:
    """A directed graph with edges (u, v) read "u is a parent of v".

    Parameters
    ----------
    nodes : iterable of hashable labels.
    edges : iterable of (u, v) pairs of labels in ``nodes``.
    """

    __slots__ = ("nodes", "edges", "_children", "_parents")

    def __init__(self, nodes, edges=()):
        self.nodes = frozenset(nodes)
        self.edges = frozenset((u, v) for u, v in edges)
        for u, v in self.edges:
            if u not in self.nodes or v not in self.nodes:
                raise ValueError(f"edges: edge ({u!r}, {v!r}) has an end that is not a node")
        self._children = {n: set() for n in self.nodes}
        self._parents = {n: set() for n in self.nodes}
        for u, v in self.edges:
            self._children[u].add(v)
            self._parents[v].add(u)

    @classmethod
    def from_parents(cls, parents, root=-1):
        """The tree with nodes ``root, 0 … n−1`` and edges (parents[i], i)."""
        n = len(parents)
        return cls([root, *range(n)], [(int(p), i) for i, p in enumerate(parents)])

    # ----------------------------------------------------------------- relations
    def children(self, node):
        return set(self._children[node])

    def parents(self, node):
        return set(self._parents[node])

    def roots(self):
        return {n for n in self.nodes if not self._parents[n]}

    def descendants(self, node, include_self=False):
        """Nodes reachable from ``node`` by a directed path ([Jain12]: i ≺ j)."""
        return self._reach(node, self._children, include_self)

    def ancestors(self, node, include_self=False):
        """Nodes from which ``node`` is reachable."""
        return self._reach(node, self._parents, include_self)

    @staticmethod
    def _reach(node, nbrs, include_self):
        seen = {node} if include_self else set()
        stack = list(nbrs[node])
        while stack:
            n = stack.pop()
            if n not in seen:
                seen.add(n)
                stack.extend(nbrs[n])
        return seen

    def is_tree(self):
        """True for a rooted tree: one root, every other node one parent, no cycles."""
        roots = self.roots()
        if len(roots) != 1 or any(len(p) > 1 for p in self._parents.values()):
            return False
        (root,) = roots
        return self.descendants(root, include_self=True) == self.nodes

    def subgraph(self, nodes, edges=None):
        """The subgraph on ``nodes`` with ``edges`` (default: none)."""
        return Digraph(nodes, () if edges is None else edges)

    def __eq__(self, other):
        return isinstance(other, Digraph) and self.nodes == other.nodes and self.edges == other.edges

    def __hash__(self):
        return hash((self.nodes, self.edges))

    def __le__(self, other):
        """Subgraph containment S ⊆ T (nodes and edges)."""
        return self.nodes <= other.nodes and self.edges <= other.edges

    def __repr__(self):
        return f"Digraph(nodes={sorted(self.nodes, key=repr)}, edges={sorted(self.edges, key=repr)})"


def _as_subgraph(S):
    return S if isinstance(S, Digraph) else Digraph(S)


def related(T, a, b):
    """True when a directed path joins ``a`` and ``b`` (one is an ancestor of the other)."""
    return a == b or b in T.descendants(a) or a in T.descendants(b)


def unrelated(T, node):
    """Nodes of ``T`` unrelated to ``node`` (neither ancestors nor descendants)."""
    return T.nodes - T.ancestors(node, include_self=True) - T.descendants(node)


def induced_subgraph(T, S):
    """S_I: the nodes of ``S`` with every edge of ``T`` joining two of them ([Jain12, §3])."""
    nodes = _as_subgraph(S).nodes
    return Digraph(nodes, [(u, v) for u, v in T.edges if u in nodes and v in nodes])


def path_induced_subgraph(T, S):
    """S_P: the smallest subgraph of ``T`` containing ``S`` and every directed path of ``T``
    between two of its nodes ([Jain12, §3]): a node k belongs to S_P when i ⇝ k ⇝ j for
    some i, j in S; an edge when it lies on such a path."""
    S = _as_subgraph(S)
    below = set(S.nodes)  # reachable from S (S included)
    for n in S.nodes:
        below |= T.descendants(n)
    above = set(S.nodes)  # reach S
    for n in S.nodes:
        above |= T.ancestors(n)
    nodes = below & above
    edges = {(u, v) for u, v in T.edges if u in nodes and v in nodes} | set(S.edges)
    return Digraph(nodes, edges)


def partition(T, S):
    """The S/C/P partition of Lemma 1 ([Jain12]) for a path-induced subgraph ``S``.

    Returns ``(S, C, P)``: C is the induced subgraph of the descendants of S not in S, P
    the induced subgraph of the remaining nodes. Raises ValueError when S is not
    path-induced.
    """
    S = _as_subgraph(S)
    if path_induced_subgraph(T, S) != S:
        raise ValueError("S: Lemma 1 needs a path-induced subgraph (S = S_P); "
                         f"missing nodes {sorted(path_induced_subgraph(T, S).nodes - S.nodes, key=repr)}")
    desc = set()
    for n in S.nodes:
        desc |= T.descendants(n)
    C = desc - S.nodes
    P = T.nodes - S.nodes - C
    return S, induced_subgraph(T, C), induced_subgraph(T, P)


def parent_nodes(T, S):
    """℘(S): the nodes outside S that are parents of nodes in S."""
    nodes = _as_subgraph(S).nodes
    return {u for u, v in T.edges if v in nodes and u not in nodes}


def child_nodes(T, S):
    """The nodes outside S that are children of nodes in S."""
    nodes = _as_subgraph(S).nodes
    return {v for u, v in T.edges if u in nodes and v not in nodes}


def _aggregation_problem(T, S):
    S = _as_subgraph(S)
    if not S.nodes:
        return "it is empty"
    if induced_subgraph(T, S) != S:
        return "it is not an induced subgraph (it omits edges of T between its nodes)"
    par = parent_nodes(T, S)
    if len(par) != 1:
        return (f"it has {len(par)} parent nodes {sorted(par, key=repr)} outside it; exactly one is "
                "allowed" if par else "it contains a root of T (it has no parent node)")
    (p,) = par
    missing = S.nodes - T.descendants(p)
    if missing:
        return f"its parent node {p!r} is not an ancestor of {sorted(missing, key=repr)}"
    return None


def satisfies_aggregation_condition(T, S):
    """Assumption 1 ([Jain12]): S is induced and ℘(S) is a single node, an ancestor of all
    of S. For a tree T this holds exactly when contracting S leaves a tree (Lemma 5)."""
    return _aggregation_problem(T, S) is None


def check_aggregation_condition(T, S, what="subgraph", names=None):
    """Raise :class:`AggregationError` naming the violation when S fails Assumption 1.

    ``what`` names S in the message and ``names`` maps nodes to readable labels.
    """
    problem = _aggregation_problem(T, S)
    if problem is None:
        return
    label = (lambda n: names[n]) if names is not None else repr
    nodes = sorted(_as_subgraph(S).nodes, key=repr)
    hint = ""
    if T.is_tree() and nodes:
        SA = aggregation_subgraph(T, S)
        if SA.nodes:
            hint = f"; the smallest group containing it that does is {[label(n) for n in sorted(SA.nodes, key=repr)]}"
    raise AggregationError(f"{what} {[label(n) for n in nodes]} violates the aggregation condition "
                           f"([Jain12, Assumption 1]): {problem}{hint}")


def contract(T, S, label="S"):
    """T_S: node-contract all nodes of S into the node ``label`` ([Jain12, §5.1]).

    Edges between nodes of S disappear; edges touching S are redirected to ``label``
    (parallel edges merge). Contracting S or its induced subgraph gives the same digraph
    (Lemma 3).
    """
    nodes = _as_subgraph(S).nodes
    if label in T.nodes and label not in nodes:
        raise ValueError(f"label: {label!r} is already a node of T")
    m = (lambda n: label if n in nodes else n)
    edges = {(m(u), m(v)) for u, v in T.edges if not (u in nodes and v in nodes)}
    return Digraph((T.nodes - nodes) | {label}, edges)


def aggregation_subgraph(T, S):
    """S_A of a subgraph S of the tree T ([Jain12, Lemma 6]): the smallest subtree of T
    containing S, without its root — the minimal subgraph containing S that satisfies the
    aggregation condition."""
    if not T.is_tree():
        raise ValueError("T: the aggregation subgraph is defined for trees")
    nodes = _as_subgraph(S).nodes
    if not nodes:
        return Digraph(())
    unknown = nodes - T.nodes
    if unknown:
        raise ValueError(f"S: nodes {sorted(unknown, key=repr)} are not in T")
    # the nearest common ancestor of S is the root of the smallest subtree containing S
    (root,) = T.roots()
    if root in nodes:
        raise AggregationError("S contains the root of T, which cannot be aggregated")
    it = iter(nodes)
    common = T.ancestors(next(it), include_self=True)
    for n in it:
        common &= T.ancestors(n, include_self=True)
    # the deepest common ancestor is the one with the most ancestors
    top = max(common, key=lambda n: len(T.ancestors(n)))
    if top in nodes:  # S contains its own nearest common ancestor: the subtree's root is its parent
        (top,) = T.parents(top)
    inside = set()
    for n in nodes:
        k = n
        while k != top:
            inside.add(k)
            (k,) = T.parents(k)
    return induced_subgraph(T, inside)


def spanning_tree(G, root):
    """A spanning tree of the digraph ``G`` rooted at ``root`` and its cut edges.

    Breadth-first from ``root`` along edge directions: each node keeps the first edge that
    reaches it (the tree), every other edge is a cut edge ([Jain24]: each closes a loop).
    Returns ``(tree, cut_edges)``; raises ValueError when some node is unreachable.
    """
    if root not in G.nodes:
        raise ValueError(f"root: {root!r} is not a node")
    seen = {root}
    tree_edges = set()
    queue = deque([root])
    while queue:
        u = queue.popleft()
        for v in sorted(G.children(u), key=repr):
            if v not in seen:
                seen.add(v)
                tree_edges.add((u, v))
                queue.append(v)
    if seen != G.nodes:
        raise ValueError(f"G: nodes {sorted(G.nodes - seen, key=repr)} cannot be reached from {root!r}")
    return Digraph(G.nodes, tree_edges), sorted(G.edges - tree_edges, key=repr)


def model_digraph(model):
    """The tree digraph of a model: node −1 is the inertial frame, node i body i."""
    return Digraph.from_parents(model.parents)


def mass_matrix_sparsity(model):
    """The pattern of the mass matrix predicted from the topology alone ([Jain12, §7]):
    a boolean (nv, nv) array, True where M(θ) may be nonzero. M = Hφ M φ*H* couples the
    joints of bodies k and j only through φ(k, j), which vanishes unless one body lies on
    the other's path to the root: the block of two unrelated bodies (on different branches)
    is zero at every configuration. Entries the prediction marks True can still vanish for
    geometric reasons (orthogonal joint axes, a body's mass on an axis), which the
    topology cannot see."""
    nv = model.nv
    pattern = np.zeros((nv, nv), dtype=bool)
    for body in model.bodies:
        j = body.joint
        if j.nv == 0:
            continue
        rows = slice(j.v_index, j.v_index + j.nv)
        for other in model.ancestors(body.index):  # the body itself and every body on its root path
            o = model.bodies[other].joint
            if o.nv == 0:
                continue
            cols = slice(o.v_index, o.v_index + o.nv)
            pattern[rows, cols] = True
            pattern[cols, rows] = True
    return pattern
