"""[Jain23p]'s lemmas on the unpartitioned and partitioned models, with both sides taken
from the dense operators (soadyn.operators) of two models: a random tree with every joint
type, and ``partition_hinges`` of it (mass-less sub-bodies, 1-dof sub-hinges).

For a body k on an n-dof hinge the partitioned model has sub-bodies k′_0 … k′_{n−2} and k
itself (hinge k″ = the last sub-hinge). [Jain23p] splits β(k) = [β(k″); β(k′)] once; with
n > 2 the inboard sub-bodies together play k′ (a "compound" mass-less body at the frame of
k′_{n−2} with the n − 1 inboard sub-hinges): H_C(k) = H(k′)φ(k′, k) stacks the rows
H(k′_s)φ(k′_s, k), and D(k′) = H_C P⁺(k) H_C* (the proof of Lemma 3.1), whose determinant
is the product of the sub-bodies' scalar D(k′_s). The unpartitioned dofs are ordered
inboard first; the lemmas' block order [k″; k′] is the permutation ``[n−1, 0, …, n−2]``.
"""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import soadyn as sd
from soadyn import operators
from soadyn.core.partition import sub_body_name

from conftest import assert_close, tree_state

SETTINGS = settings(max_examples=10, deadline=None)
#: random trees with every joint type: every composite hinge (spherical, free, universal,
#: gimbal, planar) appears in each
all_kinds = st.tuples(st.integers(8, 11), st.integers(0, 2**31 - 1), st.booleans())


def blk(X, i, j):
    return X[6 * i:6 * i + 6, 6 * j:6 * j + 6]


def models(case, centre=True):
    """(model, q, S, part, Sp, multi): the operators of the model at q and of its
    partitioned form at the corresponding state; ``centre``: the charts of the spherical
    and free joints centred at q (there the velocity coordinates agree, H(k) = [H(k″); H_C],
    [Jain23p, eq. 5]), else at a nearby configuration."""
    model, q = tree_state(case)
    ref = q if centre else sd.integrate(model, q, np.random.default_rng(case[1]).uniform(-0.3, 0.3, model.nv))
    part = sd.partition_hinges(model, ref)
    qp = sd.partitioned_state(model, part, q).q
    multi = [b for b in model.bodies if b.joint.nv > 1]
    return model, q, operators.sko(model, q), part, operators.sko(part, qp), multi


class Split:
    """The quantities of [Jain23p, Lemmas 3.1–3.2] at a body ``b`` on a multi-dof hinge."""

    def __init__(self, b, S, part, Sp):
        n = b.joint.nv
        self.n = n
        self.k = b.index
        self.pk = part.body_index(b.name)
        self.subs = [part.body_index(sub_body_name(b.name, s)) for s in range(n - 1)]
        self.perm = [n - 1] + list(range(n - 1))  # [k″; k′] order of the unpartitioned dofs
        dofs = np.arange(S.dofs[self.k].start, S.dofs[self.k].stop)[self.perm]
        k, pk = self.k, self.pk
        # unpartitioned (underlined in [Jain23p]), block order [k″; k′]
        self.uP = blk(S.P, k, k)
        self.uH = S.H[dofs, 6 * k:6 * k + 6]
        self.uD = S.D[np.ix_(dofs, dofs)]
        self.uG = S.G[6 * k:6 * k + 6, dofs]
        self.utb = blk(S.tau_bar, k, k)
        # partitioned, at body k (hinge k″)
        d = Sp.dofs[pk]
        self.P = blk(Sp.P, pk, pk)
        self.tb = blk(Sp.tau_bar, pk, pk)
        self.tau = np.eye(6) - self.tb
        self.Pplus = self.tb @ self.P
        self.H2 = Sp.H[d, 6 * pk:6 * pk + 6]
        self.D = Sp.D[d, d]
        self.G = Sp.G[6 * pk:6 * pk + 6, d]
        # the inboard sub-hinges as one mass-less body k′ at the frame of k′_{n−2}
        self.phi_sub = [blk(Sp.phi, j, pk) for j in self.subs]  # φ(k′_s, k)
        self.HC = np.vstack([Sp.H[Sp.dofs[j], 6 * j:6 * j + 6] @ f for j, f in zip(self.subs, self.phi_sub)])
        self.Dc = self.HC @ self.Pplus @ self.HC.T
        self.sub_D = [Sp.D[Sp.dofs[j], Sp.dofs[j]].item() for j in self.subs]
        c = self.subs[-1]
        self.phi_c = blk(Sp.phi, c, pk)  # φ(k′, k)
        Hk1 = np.vstack([Sp.H[Sp.dofs[j], 6 * j:6 * j + 6] @ blk(Sp.phi, j, c) for j in self.subs])
        Pk1 = self.phi_c @ self.Pplus @ self.phi_c.T
        self.Gc = Pk1 @ Hk1.T @ np.linalg.inv(Hk1 @ Pk1 @ Hk1.T)  # G(k′)
        self.tbc = np.eye(6) - self.Gc @ Hk1  # τ̄(k′)
        self.c, self.Hk1, self.Pk1 = c, Hk1, Pk1


@SETTINGS
@given(case=all_kinds)
def test_lemma_3_1(case):
    """[Jain23p, Lemma 3.1]: D̲(k) and D̲⁻¹(k) (eq. 9), G̲(k) (eq. 10), τ̲(k) and τ̲̄(k)
    (eq. 11) from the partitioned quantities; and eq. 5's H(k) = [H(k″); H_C(k)]."""
    model, q, S, part, Sp, multi = models(case)
    for b in multi:
        x = Split(b, S, part, Sp)
        assert_close(x.uH, np.vstack([x.H2, x.HC]), what=f"eq. 5 H({b.name})")
        assert_close(np.linalg.det(x.Dc), np.prod(x.sub_D), what="det D(k′) = Π D(k′_s)")
        if x.n == 2:
            assert_close(x.Dc, np.array([[x.sub_D[0]]]), what="D(k′)")
        Dc_inv = np.linalg.inv(x.Dc)
        D9 = np.block([[x.D, x.H2 @ x.P @ x.HC.T], [x.HC @ x.P @ x.H2.T, x.HC @ x.P @ x.HC.T]])
        assert_close(x.uD, D9, what=f"eq. 9 D({b.name})")
        left = np.vstack([-x.G.T @ x.HC.T, np.eye(x.n - 1)])
        right = np.hstack([-x.HC @ x.G, np.eye(x.n - 1)])
        first = np.zeros((x.n, x.n))
        first[0, 0] = 1.0 / x.D.item()
        assert_close(np.linalg.inv(x.uD), first + left @ Dc_inv @ right, what=f"eq. 9 D⁻¹({b.name})")
        G10 = np.hstack([x.G, np.zeros((6, x.n - 1))]) + x.Pplus @ x.HC.T @ Dc_inv @ right
        assert_close(x.uG, G10, what=f"eq. 10 G({b.name})")
        corr = x.Pplus @ x.HC.T @ Dc_inv @ x.HC @ x.tb
        assert_close(np.eye(6) - x.utb, x.tau + corr, what=f"eq. 11 τ({b.name})")
        assert_close(x.utb, x.tb - corr, what=f"eq. 11 τ̄({b.name})")


@SETTINGS
@given(case=all_kinds)
def test_lemma_3_2(case):
    """[Jain23p, Lemma 3.2]: φ(k′, k)G̲(k) (eq. 14), φ(k′, k)τ̲(k) and φ(k′, k)τ̲̄(k)
    (eq. 15), H̲*D̲⁻¹H̲ (eq. 16); G(k′), τ̄(k′) of a single mass-less sub-body are the
    partitioned model's own."""
    model, q, S, part, Sp, multi = models(case)
    for b in multi:
        x = Split(b, S, part, Sp)
        if x.n == 2:  # k′ is the sub-body itself
            assert_close(x.Gc, Sp.G[6 * x.c:6 * x.c + 6, Sp.dofs[x.c]], what="G(k′)")
            assert_close(x.tbc, blk(Sp.tau_bar, x.c, x.c), what="τ̄(k′)")
        phi = x.phi_c
        assert_close(phi @ x.uG, np.hstack([x.tbc @ phi @ x.G, x.Gc]), what=f"eq. 14 ({b.name})")
        utau = np.eye(6) - x.utb
        tauc = np.eye(6) - x.tbc
        assert_close(phi @ utau, phi @ x.tau + tauc @ phi @ x.tb, what=f"eq. 15 τ ({b.name})")
        assert_close(phi @ x.utb, x.tbc @ phi @ x.tb, what=f"eq. 15 τ̄ ({b.name})")
        lhs = x.uH.T @ np.linalg.inv(x.uD) @ x.uH
        rhs = x.H2.T @ x.H2 / x.D.item() + x.tb.T @ x.HC.T @ np.linalg.inv(x.Dc) @ x.HC @ x.tb
        assert_close(lhs, rhs, what=f"eq. 16 ({b.name})")


@SETTINGS
@given(case=all_kinds, centre=st.booleans())
def test_lemma_3_3(case, centre):
    """[Jain23p, Lemma 3.3]: P(k) of the two models agree for every body (eq. 17);
    P̲⁺(k) = P⁺(k) − P⁺(k)H_C*D⁻¹(k′)H_C P⁺(k) (eq. 18); and φ(k′_0, k)P̲⁺(k)φ*(k′_0, k) is
    the innermost sub-body's P⁺(k′_0) (eq. 19, chained through the sub-bodies). P(k) is
    the articulated inertia of body k's subtree, whatever the velocity coordinates: eq. 17
    also holds with the spherical and free charts centred elsewhere."""
    model, q, S, part, Sp, multi = models(case, centre)
    for b in model.bodies:
        assert_close(blk(Sp.P, part.body_index(b.name), part.body_index(b.name)), blk(S.P, b.index, b.index),
                     what=f"eq. 17 P({b.name})")
    if not centre:
        return
    for b in multi:
        x = Split(b, S, part, Sp)
        uPplus = x.utb @ x.uP
        assert_close(uPplus, x.Pplus - x.Pplus @ x.HC.T @ np.linalg.inv(x.Dc) @ x.HC @ x.Pplus,
                     what=f"eq. 18 ({b.name})")
        s0, f0 = x.subs[0], x.phi_sub[0]
        assert_close(f0 @ uPplus @ f0.T, blk(Sp.tau_bar, s0, s0) @ blk(Sp.P, s0, s0), what=f"eq. 19 ({b.name})")


@SETTINGS
@given(case=all_kinds, centre=st.booleans())
def test_lemma_4_1(case, centre):
    """[Jain23p, Lemma 4.1]: the OSCM blocks Υ(k) = Ω(k, k) of the two models agree for
    every body (eq. 24), and Υ̲⁺(k) = φ*(k′_0, k)Υ⁺(k′_0)φ(k′_0, k) (eq. 25), with
    Υ⁺(k) = φ*(℘(k), k)Υ(℘(k))φ(℘(k), k) (eq. 22–23; zero for a root)."""
    model, q, S, part, Sp, multi = models(case, centre)
    for b in model.bodies:
        pk = part.body_index(b.name)
        assert_close(blk(Sp.Omega, pk, pk), blk(S.Omega, b.index, b.index), what=f"eq. 24 Υ({b.name})")

    def ups_plus(ops, k, parent):
        if parent < 0:
            return np.zeros((6, 6))
        f = blk(ops.E_phi, parent, k)
        return f.T @ blk(ops.Omega, parent, parent) @ f

    for b in multi:
        s0 = part.body_index(sub_body_name(b.name, 0))
        f0 = blk(Sp.phi, s0, part.body_index(b.name))
        assert_close(ups_plus(S, b.index, b.parent), f0.T @ ups_plus(Sp, s0, part.bodies[s0].parent) @ f0,
                     what=f"eq. 25 ({b.name})")
