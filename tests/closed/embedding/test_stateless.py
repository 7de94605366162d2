"""Cluster functions without hidden state ([Chignoli23, Alg. 1]): results depend on the
arguments only (never on earlier calls), ``q=`` fixes the assembly branch (checked
against the cut-joint direct method at that configuration), without ``q=`` the solve
starts from a fixed, regular reference configuration, and bad input gives clear errors.

Expected values come from outside the cluster code: the branches of the planar leg
linkage by circle intersection, Tello's second hip-differential branch by scalar root
finding on its published constraint, accelerations from the cut-joint KKT method."""
import numpy as np
import pytest
from scipy.optimize import brentq

import soadyn as sd
from soadyn.closed.embedding import cluster_tree
from soadyn.core.constraints import ConstraintError

GRAVITY = (0.0, -9.81, 0.0)  # in the leg's plane (its joint axes are z)


def leg():
    return sd.models.planar_leg_linkage(gravity=GRAVITY)


# --------------------------------------------------------------------------- reference data
def leg_branches(theta):
    """(support, foot) joint angles of the planar leg linkage at driver angle θ on the
    parallelogram branch and on the crossed branch, by intersecting the circle of the
    support's tip (radius 0.096 about (0.042, 0)) with the circle of radius 0.031 about the
    driver's tip (0.011, 0) + 0.096 (cos θ, sin θ) (thigh frame)."""
    a = np.array([0.011, 0.0]) + 0.096 * np.array([np.cos(theta), np.sin(theta)])  # foot joint
    c = np.array([0.042, 0.0])  # support joint
    r_foot, r_sup = 0.031, 0.096
    d = np.linalg.norm(a - c)
    x = (d**2 - r_foot**2 + r_sup**2) / (2 * d)  # along c→a, from c
    h = np.sqrt(r_sup**2 - x**2)
    u = (a - c) / d
    n = np.array([-u[1], u[0]])
    out = []
    for s in (1.0, -1.0):
        tip = c + x * u + s * h * n  # the loop joint
        support = np.arctan2(*(tip - c)[::-1])
        foot = np.arctan2(*(tip - a)[::-1]) - theta
        out.append((support, (foot + np.pi) % (2 * np.pi) - np.pi))
    out.sort(key=lambda sf: abs(sf[0] - theta))  # parallelogram first (support = θ)
    return out


def leg_state(model, thigh, theta, branch, thigh_rate, driver_rate):
    """(q, v) of the planar leg on ``branch`` (0 parallelogram, 1 crossed); v from the
    cut-joint constraint Jacobian with the independent rates given."""
    support, foot = leg_branches(theta)[branch]
    q = np.zeros(model.nq)
    for name, value in (("thigh_joint", thigh), ("shank_driver_joint", theta), ("shank_support_joint", support),
                        ("foot_joint", foot)):
        q[model.joint(name).q_index] = value
    free = {"thigh_joint": thigh_rate, "shank_driver_joint": driver_rate}
    return q, velocity(model, q, free)


def velocity(model, q, free):
    """v with the joints named in ``free`` (name → rates) given, the others from the
    cut-joint constraints G_c v = 0 ([Jain24])."""
    Gc = sd.constraint_jacobian(model, q)
    fixed = np.zeros(model.nv, bool)
    v = np.zeros(model.nv)
    for name, rate in free.items():
        j = model.joint(name)
        v[j.v_index:j.v_index + j.nv] = rate
        fixed[j.v_index:j.v_index + j.nv] = True
    v[~fixed] = -np.linalg.lstsq(Gc[:, ~fixed], Gc[:, fixed] @ v[fixed], rcond=None)[0]
    assert np.abs(Gc @ v).max() < 1e-10
    return v


def independent_joints(model):
    return [b.joint.name for b in model.bodies if b.joint.independent]


def check_branch_dynamics(model, q, v, rng):
    """cluster_aba with q= equals the direct (KKT) method at (q, v) for forces on the
    independent joints; returns ÿ."""
    tree = cluster_tree(model)
    y, yd = tree.independent_state(q, v)
    tau = np.zeros(model.nv)
    for name in independent_joints(model):
        j = model.joint(name)
        tau[j.v_index:j.v_index + j.nv] = rng.normal(size=j.nv)
    tau_ind = tree.independent_state(q, tau)[1]  # τ_ind = Gᵀτ: G's independent rows are 1, τ is 0 elsewhere
    qdd = sd.constrained_forward_dynamics(model, q, v, tau, method="direct").qdd
    ydd_ref = tree.independent_state(q, qdd)[1]
    ydd = sd.cluster_aba(model, y, yd, tau_ind, q=q)
    np.testing.assert_allclose(ydd, ydd_ref, rtol=1e-8, atol=1e-8 * (1 + np.abs(ydd_ref).max()))
    # C-RNEA at the same q inverts it; the mass matrix is the same operator
    np.testing.assert_allclose(sd.cluster_rnea(model, y, yd, ydd, q=q), tau_ind, atol=1e-8 * (1 + np.abs(tau).max()))
    return ydd


# --------------------------------------------------------------------------- branches
def test_planar_leg_reference_is_the_documented_regular_parallelogram_configuration():
    model = leg()
    (cl,) = [c for c in cluster_tree(model) if c.joint.reference is not None]
    names = [model.bodies[i].joint.name for i in cl.bodies]
    ref = dict(zip(names, cl.joint.reference))
    np.testing.assert_allclose([ref["shank_driver_joint"], ref["shank_support_joint"], ref["foot_joint"]],
                               [0.5, 0.5, -0.5], atol=1e-12)
    # without q=, γ(y) lands on the parallelogram branch (generalized_rbda's states)
    for theta in (-1.2, -0.3, 0.2, 0.9, 2.0):
        q, _ = sd.spanning_state(model, [0.1, theta], [0.0, 0.0])
        support, foot = leg_branches(theta)[0]
        np.testing.assert_allclose(q[[2, 3]], [support, foot], atol=1e-10)


@pytest.mark.parametrize("theta", [0.6, -0.8])
def test_planar_leg_q_selects_each_assembly_branch(theta):
    model = leg()
    rng = np.random.default_rng(7)
    results = []
    for branch in (0, 1):
        q, v = leg_state(model, 0.2, theta, branch, 0.7, -1.3)
        results.append(check_branch_dynamics(model, q, v, np.random.default_rng(1)))
    assert np.abs(results[0] - results[1]).max() > 1e-2 * np.abs(results[0]).max()  # two different mechanisms' dynamics
    # without q= but with a guess on the crossed branch the solve stays there
    q1, v1 = leg_state(model, 0.2, theta, 1, 0.7, -1.3)
    y, yd = cluster_tree(model).independent_state(q1, v1)
    tau_ind = rng.normal(size=2)
    guess = q1 + 0.01
    np.testing.assert_allclose(sd.cluster_aba(model, y, yd, tau_ind, q_guess=guess),
                               sd.cluster_aba(model, y, yd, tau_ind, q=q1), rtol=1e-8)
    qs, vs = sd.spanning_state(model, y, yd, q_guess=guess)
    np.testing.assert_allclose(qs, q1, atol=1e-10)
    np.testing.assert_allclose(vs, v1, atol=1e-9)


def tello_hip_roots(q1, q2):
    """All rotor angles r (rad, rotor side; the gearbox divides by 6) solving each row of
    Tello's hip-differential constraint at gimbal q1 and thigh q2, by bracketing and
    Brent's method on the published expression."""
    import sympy

    from soadyn.models.loop_robots import _tello_hip_differential
    phi, (s1, s2, r1, r2) = _tello_hip_differential()
    out = []
    for row, r in zip(phi, (r1, r2)):
        f = sympy.lambdify(r, row.subs({s1: q1, s2: q2}), "numpy")
        grid = np.linspace(-6 * np.pi, 6 * np.pi, 2401)
        vals = f(grid)
        out.append([brentq(f, a, b, xtol=1e-15) for a, b, fa, fb in zip(grid[:-1], grid[1:], vals[:-1], vals[1:])
                    if fa * fb < 0])
    return out


@pytest.mark.slow
def test_tello_q_selects_each_assembly_branch():
    model = sd.models.tello()
    tree = cluster_tree(model)
    rng = np.random.default_rng(11)
    y, yd = sd.closed.embedding.random_independent_state(model, rng, 0.3)
    qa, _ = sd.spanning_state(model, y, yd)
    # the other branch of the left hip differential: the other root of each row
    gimbal, thigh = (qa[model.joint(n).q_index] for n in ("left-gimbal_joint", "left-thigh_joint"))
    qb = qa.copy()
    for name, roots in zip(("left-hip-rotor-1_joint", "left-hip-rotor-2_joint"), tello_hip_roots(gimbal, thigh)):
        k = model.joint(name).q_index
        assert min(abs(r - qa[k]) for r in roots) < 1e-8  # branch A is one of the roots
        qb[k] = max(roots, key=lambda r: abs(r - qa[k]))
    assert np.abs(qb - qa).max() > 1.0
    free = {name: yd_of(model, tree, yd, name) for name in independent_joints(model)}
    results = [check_branch_dynamics(model, q, velocity(model, q, free), np.random.default_rng(2)) for q in (qa, qb)]
    assert np.abs(results[0] - results[1]).max() > 1e-3 * np.abs(results[0]).max()


def yd_of(model, tree, yd, name):
    """The entries of ẏ that belong to joint ``name`` (ẏ: clusters in order, each cluster's
    independent velocities in body order)."""
    v = np.full(model.nv, np.nan)
    v[np.arange(model.nv)] = np.arange(model.nv)
    order = tree.independent_state(np.zeros(model.nq), v)[1].astype(int)  # model v index of each ẏ entry
    j = model.joint(name)
    return np.array([yd[np.flatnonzero(order == j.v_index + k)[0]] for k in range(j.nv)])


# --------------------------------------------------------------------------- determinism
def _cases(model, rng, n_states, frames):
    """(name, call) of every cluster function, with and without q=, on ``n_states`` random
    states of ``model``."""
    cases = []
    for k in range(n_states):
        y, yd = sd.closed.embedding.random_independent_state(model, rng, 0.5)
        q, _ = sd.spanning_state(model, y, yd)
        tau, ydd = rng.normal(size=(2, len(yd)))
        cases += [
            (f"aba{k}", lambda y=y, yd=yd, t=tau: sd.cluster_aba(model, y, yd, t)),
            (f"aba_q{k}", lambda y=y, yd=yd, t=tau, q=q: sd.cluster_aba(model, y, yd, t, q=q)),
            (f"rnea{k}", lambda y=y, yd=yd, a=ydd: sd.cluster_rnea(model, y, yd, a)),
            (f"rnea_q{k}", lambda y=y, yd=yd, a=ydd, q=q: sd.cluster_rnea(model, y, yd, a, q=q)),
            (f"mass{k}", lambda y=y: sd.cluster_mass_matrix(model, y)),
            (f"mass_q{k}", lambda y=y, q=q: sd.cluster_mass_matrix(model, y, q=q)),
            (f"efpa{k}", lambda y=y: sd.cluster_efpa(model, y, frames)),
            (f"efpa_q{k}", lambda y=y, q=q: sd.cluster_efpa(model, y, frames, q=q)),
            (f"spanning{k}", lambda y=y, yd=yd: np.concatenate(sd.spanning_state(model, y, yd))),
        ]
    return cases


@pytest.mark.parametrize("name, frames, n_states", [("planar_leg", ["end_effector"], 4),
                                                    ("tello", ["left-toe"], 2)])
def test_cluster_functions_in_shuffled_orders_give_bitwise_identical_results(name, frames, n_states):
    model = leg() if name == "planar_leg" else sd.models.tello()
    cases = _cases(model, np.random.default_rng(5), n_states, frames)
    reference = {label: np.array(call(), copy=True) for label, call in cases}
    rng = np.random.default_rng(0)
    for _ in range(2):
        for i in rng.permutation(len(cases)):
            label, call = cases[i]
            assert np.array_equal(call(), reference[label]), label
    # q= and the solve from the reference agree (the same branch)
    for k in range(n_states):
        np.testing.assert_allclose(reference[f"aba_q{k}"], reference[f"aba{k}"], rtol=1e-7,
                                   atol=1e-7 * np.abs(reference[f"aba{k}"]).max())


# --------------------------------------------------------------------------- angles
def test_solved_angles_are_wrapped():
    model = leg()
    q, _ = sd.spanning_state(model, [0.0, 2.5 + 2 * np.pi], [0.0, 0.0])
    np.testing.assert_allclose(q[[2, 3]], [2.5, -2.5], atol=1e-10)
    assert q[1] == 2.5 + 2 * np.pi  # y is kept as given


# --------------------------------------------------------------------------- bad input
def test_q_that_disagrees_with_y_is_rejected():
    model = leg()
    q, v = leg_state(model, 0.2, 0.6, 0, 0.0, 0.0)
    y, yd = cluster_tree(model).independent_state(q, v)
    with pytest.raises(ValueError, match=r"y, q: .*shank_driver_joint.*difference"):
        sd.cluster_aba(model, y + [0.0, 1e-3], yd, np.zeros(2), q=q)
    with pytest.raises(ValueError, match=r"q: expected shape \(4,\)"):
        sd.cluster_rnea(model, y, yd, np.zeros(2), q=q[:3])
    with pytest.raises(ValueError, match="q, q_guess"):
        sd.cluster_mass_matrix(model, y, q=q, q_guess=q)


def test_q_off_the_constraint_manifold_is_rejected():
    model = leg()
    q, v = leg_state(model, 0.2, 0.6, 0, 0.0, 0.0)
    q[model.joint("foot_joint").q_index] += 0.05
    y, yd = cluster_tree(model).independent_state(q, v)
    for call in (lambda: sd.cluster_aba(model, y, yd, np.zeros(2), q=q),
                 lambda: sd.cluster_efpa(model, y, ["end_effector"], q=q)):
        with pytest.raises(ConstraintError, match=r"q: .*'loop'.*residual max \|φ\| = [0-9.e-]+ > 1e-06"):
            call()


def test_coupling_violated_by_q_is_rejected():
    model = sd.models.geared_chain(3)
    y, yd = sd.closed.embedding.random_independent_state(model, 1)
    q, _ = sd.spanning_state(model, y, yd)
    sd.cluster_aba(model, y, yd, np.zeros(len(yd)), q=q)
    k = next(b.joint.q_index for b in model.bodies if not b.joint.independent)
    q[k] += 0.1
    with pytest.raises(ConstraintError, match="residual"):
        sd.cluster_aba(model, y, yd, np.zeros(len(yd)), q=q)
    with pytest.raises(ConstraintError, match="residual"):
        sd.cluster_rnea(model, y, yd, np.zeros(len(yd)), q=q)
    q[k] -= 0.1  # an independent coordinate that disagrees with y (a model of explicit clusters only)
    i = next(b.joint.q_index for b in model.bodies if b.joint.independent)
    q[i] += 1e-6
    for f in (sd.cluster_aba, sd.cluster_rnea):
        with pytest.raises(ValueError, match=r"y, q: y must be the independent coordinates"):
            f(model, y, yd, np.zeros(len(yd)), q=q)


def test_singular_configurations_give_clear_errors():
    model = leg()
    q = np.zeros(model.nq)  # every link along x: the branch point of the parallelogram
    assert np.abs(sd.constraint_residual(model, q)).max() < 1e-12
    with pytest.raises(ConstraintError, match="rank"):
        sd.cluster_aba(model, np.zeros(2), np.zeros(2), np.zeros(2), q=q)
    with pytest.raises(ConstraintError):
        sd.spanning_state(model, np.zeros(2), np.zeros(2))


def test_y_outside_the_mechanism_range_gives_a_clear_error():
    # a non-Grashof four-bar: the crank cannot turn past ≈ ±1.4 rad
    model = sd.models.four_bar_linkage(crank=0.3, coupler=0.2, rocker=0.2, ground=0.5)
    sd.spanning_state(model, [0.0], [0.0])
    with pytest.raises(ConstraintError, match=r"cannot solve the constraints \['loop'\].*y = \[3.0\]"):
        sd.spanning_state(model, [3.0], [0.0])
    with pytest.raises(ConstraintError, match=r"y = \[3.0\]"):
        sd.cluster_aba(model, [3.0], [0.0], [0.0])


# --------------------------------------------------------------------------- references
def _reference_regularity(model):
    """σ_min/σ_max of ∂φ/∂q_d at each nonlinear cluster's reference configuration, from
    the cluster's constraint Jacobian (implicit form)."""
    out = []
    for cl in cluster_tree(model):
        j = cl.joint
        if j.reference is None:
            continue
        q = sd.neutral(model)
        q[j.q_index] = j.reference
        assert np.abs(j.residual(q)).max() < 1e-9
        sv = np.linalg.svd(j.constraint_jacobian(q)[:, j.dependent_v], compute_uv=False)
        out.append(sv[len(j.dependent_v) - 1] / sv[0])
    return out


@pytest.mark.parametrize("name", ["planar_leg", "planar_leg_without_guess", "tello", "crank_rocker", "urdf:four_bar",
                                  "urdf:six_bar", "rssr", "four_bar_chain"])
def test_reference_configurations_are_regular(name):
    from conftest import mechanism

    from soadyn.closed.embedding.cluster_joints import REFERENCE_MARGIN
    if name.startswith("planar_leg"):
        model = leg()
        if name.endswith("without_guess"):
            for j in ("shank_driver_joint", "shank_support_joint", "foot_joint"):
                model.joint(j).assembly_guess = None
    else:
        model = mechanism(name)
    ratios = _reference_regularity(model)
    assert ratios and min(ratios) >= REFERENCE_MARGIN, ratios


def test_cluster_functions_on_threads_give_the_serial_results():
    import threading
    model = leg()
    cases = _cases(model, np.random.default_rng(8), 3, ["end_effector"])
    reference = {label: np.array(call(), copy=True) for label, call in cases}
    failures = []

    def worker(seed):
        rng = np.random.default_rng(seed)
        for _ in range(20):
            for i in rng.permutation(len(cases)):
                label, call = cases[i]
                if not np.array_equal(call(), reference[label]):
                    failures.append(label)

    threads = [threading.Thread(target=worker, args=(s,)) for s in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures, sorted(set(failures))


@pytest.mark.parametrize("name", ["four_bar_linkage", "mini_cheetah"])
def test_wrong_lengths_after_a_valid_call_are_rejected(name):
    """The fast path passes exact-type arrays straight to the kernel: after a first valid
    call (which builds the compiled tables), rates, forces and outputs of the wrong length
    must still raise the error that names them, never be read or written past their end."""
    model = getattr(sd.models, name)()
    tree = cluster_tree(model)
    rng = np.random.default_rng(0)
    if name == "four_bar_linkage":
        q, _ = sd.close_loops(model, [0.7, 1.0, 1.6])
    else:  # explicit clusters: the independent coordinates of any spanning configuration
        q = sd.random_configuration(model.spanning_tree(), rng)
    y = tree.independent_state(q, np.zeros(model.nv))[0]
    nv = tree.nyv
    yd, x = rng.normal(size=(2, nv))
    sd.cluster_aba(model, y, yd, x)
    sd.cluster_rnea(model, y, yd, x)
    sd.cluster_mass_matrix(model, y)
    long = np.zeros(nv + 1)
    with pytest.raises(ValueError, match=r"yd: expected shape"):
        sd.cluster_aba(model, y, long, x)
    with pytest.raises(ValueError, match=r"tau_ind: expected shape|tau: expected shape"):
        sd.cluster_aba(model, y, yd, long)
    with pytest.raises(ValueError, match=r"ydd: expected shape"):
        sd.cluster_rnea(model, y, yd, long)
    with pytest.raises(ValueError, match=r"y: expected shape"):
        sd.cluster_rnea(model, y[:-1], yd, x)
    with pytest.raises(ValueError, match=r"y: expected shape"):
        sd.cluster_mass_matrix(model, np.zeros(len(y) + 1))
