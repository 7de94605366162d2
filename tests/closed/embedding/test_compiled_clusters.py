"""Implicit clusters prepared in compiled code ([Chignoli23, eq. 2–3]) and batches of the
cluster functions.

Truths used: sympy's own evaluation of the expressions (tapes); the cut-joint direct
method at the spanning configuration (accelerations of the closed system); the Python
position solve of the cluster joints (the same Gauss–Newton iteration from the same
start); single calls of the same functions (batches)."""
import numpy as np
import pytest
import sympy

import soadyn as sd
from soadyn.closed.embedding.clusters import cluster_tree, random_independent_state
from soadyn.closed.embedding.clusters import solve_spanning_state as spanning_state  # the Python solve
from soadyn.closed.embedding.compiled import packed_clusters
from soadyn.core.constraints import ConstraintError
from soadyn.core.expression_tape import OPCODES, NotCompilable, build_tape
from soadyn.kernels.tape import tape_kernel


def evaluate(tape, x):
    out = np.empty(len(tape.outputs))
    tape_kernel(tape.code, tape.consts, tape.outputs, tape.n_registers, np.asarray(x, dtype=float), out)
    return out


# --------------------------------------------------------------------------- tapes
def test_tape_evaluates_every_operation_as_sympy_does():
    a, b, c = sympy.symbols("a b c", real=True)
    exprs = [a * b + c, a / b, -a, a**3, a**-2, b**sympy.Rational(1, 2), b**a, sympy.sin(a) * sympy.cos(b),
             sympy.tan(c), sympy.exp(-a), sympy.log(b), sympy.Abs(c), sympy.atan2(a, c), sympy.asin(a / 2),
             sympy.acos(a / 2), sympy.atan(b), sympy.sinh(a), sympy.cosh(b), sympy.tanh(c), sympy.pi * a + 3,
             sympy.Rational(7, 3) * sympy.sqrt(a**2 + b**2) - sympy.sin(a + b)**2]
    tape = build_tape([a, b, c], exprs)
    rng = np.random.default_rng(0)
    for _ in range(5):
        x = np.array([rng.uniform(-1.5, 1.5), rng.uniform(0.2, 2.0), rng.uniform(-2.0, 2.0)])
        expected = [float(e.evalf(subs={a: x[0], b: x[1], c: x[2]})) for e in exprs]
        assert np.allclose(evaluate(tape, x), expected, rtol=1e-13, atol=1e-14)


def test_tape_shares_common_subexpressions():
    a, b = sympy.symbols("a b", real=True)
    e = sympy.sin(a * b) + sympy.cos(a * b)
    tape = build_tape([a, b], [e, sympy.sin(a * b) ** 2])
    # a*b and sin(a*b) are computed once: MUL, SINCOS (sin and cos of a*b together), ADD, POWI
    assert len(tape.code) == 4


_a, _b, _c, _d = sympy.symbols("a b c d", real=True)
# each fused instruction kind and an expression that needs it
FUSED = {"SUB": _a - _b, "MULADD": _a * _b + _c, "MUL3": _a * _b * _c, "MUL3ADD": _a * _b * _c + _d,
         "DOT2": _a * _b + _c * _d, "SUMPROD": _a * _b + _c * _d + _a * _b * _c + _b * _d,
         "SINCOS": sympy.sin(_a * _b) - 3 * sympy.cos(_a * _b)}


def in_python_floats(expr, x):
    """The arithmetic of ``expr`` in Python's IEEE doubles as the tape is lowered: sympy's
    common subexpressions first, then one operation at a time, sums and products folded
    left over sympy's argument order, −1·y as −y."""
    x = dict(x)
    replacements, (reduced,) = sympy.cse([expr], optimizations="basic")
    for sym, e in replacements:
        x[sym] = _fold_floats(e, x)
    return _fold_floats(reduced, x)


def _fold_floats(e, x):
    if e.is_Symbol:
        return x[e]
    if e.is_Number:
        return float(e)
    if e.is_Mul and e.as_coeff_Mul()[0] == -1:
        return -_fold_floats(e.as_coeff_Mul()[1], x)
    values = [_fold_floats(a, x) for a in e.args]
    out = values[0]
    for v in values[1:]:
        out = out + v if e.is_Add else out * v
    return out


@pytest.mark.parametrize("kind", sorted(FUSED))
def test_fused_instructions_compute_sympys_value(kind):
    """Every fused kind: present in the tape, sympy's value, and (arithmetic kinds) the
    very bits of the unfused operations in the same order."""
    expr = FUSED[kind]
    tape = build_tape([_a, _b, _c, _d], [expr])
    assert OPCODES.index(kind) in tape.code[:, 0]
    rng = np.random.default_rng(3)
    for _ in range(20):
        x = dict(zip((_a, _b, _c, _d), rng.uniform(-2.0, 2.0, 4)))
        got = evaluate(tape, list(x.values()))[0]
        assert np.isclose(got, float(expr.evalf(subs=x)), rtol=1e-14, atol=1e-15)
        if kind != "SINCOS":
            assert got == in_python_floats(expr, {k: float(v) for k, v in x.items()})


def test_constants_load_as_one_block_and_identical_operations_run_once():
    """3·x is shared by 3·x·y and 3·x·z (value numbering); the constants 3 and π come in one
    CONST; the results are sympy's."""
    x, y, z = sympy.symbols("x y z", real=True)
    exprs = [3 * x * y, 3 * x * z + sympy.pi, -x - y]
    tape = build_tape([x, y, z], exprs)
    ops = [OPCODES[o] for o in tape.code[:, 0]]
    assert ops.count("CONST") == 1 and sorted(tape.consts) == [3.0, np.pi]
    # 3·x once, (3·x)·y (an output), π + (3·x)·z fused; −x − y is (−x) − y
    assert sorted(ops) == ["CONST", "MUL", "MUL", "MULADD", "NEG", "SUB"]
    point = np.array([0.7, -1.3, 2.1])
    expected = [float(e.evalf(subs={x: point[0], y: point[1], z: point[2]})) for e in exprs]
    assert np.allclose(evaluate(tape, point), expected, rtol=1e-15, atol=0.0)


def test_operations_without_compiled_form_are_refused():
    a = sympy.Symbol("a", real=True)
    with pytest.raises(NotCompilable, match="gamma"):
        build_tape([a], [sympy.gamma(a)])
    with pytest.raises(NotCompilable, match="not an input"):
        build_tape([a], [a + sympy.Symbol("z")])


def test_symbolic_constraint_without_compiled_form_stays_in_python():
    """A constraint using a function the tapes lack still works (evaluated in Python)."""
    m = sd.Model("erf-coupled pair")
    m.add_body("a", sd.joints.Revolute((0, 0, 1)), None, mass=1.0, inertia=np.eye(3) * 0.1)
    m.add_body("b", sd.joints.Revolute((0, 0, 1)), "a", ((np.eye(3), np.array([1.0, 0, 0]))), mass=1.0,
               inertia=np.eye(3) * 0.1)
    qa, qb = sympy.symbols("qa qb", real=True)
    c = sd.symbolic_constraint("ratio", ["a", "b"], [qb - sympy.erf(qa)], [qa, qb])
    assert c.tapes is None
    m.add_constraint(c)
    p = packed_clusters(m)
    assert not p.compiled and len(p.python_prepared) == 1
    ydd = sd.cluster_aba(m, [0.3], [0.2], [0.5])
    q, v = spanning_state(m, [0.3], [0.2])
    tau = np.zeros(2)
    tau[cluster_tree(m).independent_v_index] = 0.5
    ref = sd.constrained_forward_dynamics(m, q, v, tau, method="augmented").qdd
    assert np.allclose(ydd, ref[cluster_tree(m).independent_v_index], atol=1e-9)


# --------------------------------------------------------------------------- compiled preparation
ROBOTS = ["four_bar_linkage", "planar_leg_linkage", "tello"]


@pytest.fixture(scope="module", params=ROBOTS)
def robot(request):
    return getattr(sd.models, request.param)()


def test_every_implicit_cluster_is_compiled(robot):
    p = packed_clusters(robot)
    assert p.compiled and not p.python_prepared


def test_compiled_solve_matches_the_python_solve_and_the_cut_joint_method(robot):
    tree = cluster_tree(robot)
    rng = np.random.default_rng(3)
    for _ in range(3):
        y, yd = random_independent_state(robot, rng)
        tau_ind = rng.normal(size=tree.nyv)
        q, v = spanning_state(robot, y, yd)  # the Python Gauss–Newton solve from the same starts
        solved = sd.cluster_aba(robot, y, yd, tau_ind)
        given = sd.cluster_aba(robot, y, yd, tau_ind, q=q)
        assert np.allclose(solved, given, rtol=1e-9, atol=1e-9)
        tau = np.zeros(robot.nv)
        tau[tree.independent_v_index] = tau_ind
        qdd = sd.constrained_forward_dynamics(robot, q, v, tau, method="direct").qdd
        assert np.allclose(given, qdd[tree.independent_v_index], rtol=1e-8, atol=1e-8)
        emb = sd.constrained_forward_dynamics(robot, q, v, tau, method="embedding").qdd
        assert np.allclose(emb, qdd, rtol=1e-8, atol=1e-8)
        # C-RNEA inverts C-ABA; the cluster mass matrix is GᵀMG
        assert np.allclose(sd.cluster_rnea(robot, y, yd, solved), tau_ind, rtol=1e-9, atol=1e-9)
        G = tree.explicit_jacobian(q)
        H = G.T @ sd.mass_matrix(robot.spanning_tree(), q) @ G
        assert np.allclose(sd.cluster_mass_matrix(robot, y), H, rtol=1e-9, atol=1e-12)


def _loop_and_symbolic(symbolic_first):
    """A four-bar (a loop cluster) and a two-link arm whose joints a symbolic constraint
    ties (q_b = 0.3 sin q_a + 0.2 q_a: a compiled nonlinear cluster without loops), in
    either order of the tree (the clusters are prepared in that order)."""
    from soadyn.core import joints as jt
    from soadyn.models.closed_chains import _add_four_bar
    m = sd.Model("loop_and_symbolic")

    def arm():
        a = m.add_body("arm_a", jt.Revolute("z"), None, (np.eye(3), np.array([0.0, 1.0, 0.0])), mass=0.8,
                       com=np.array([0.2, 0.0, 0.0]), inertia=np.diag([0.01, 0.02, 0.03]), joint_name="arm_a")
        joint_b = jt.Revolute("y")
        joint_b.independent = False
        m.add_body("arm_b", joint_b, a, (np.eye(3), np.array([0.4, 0.0, 0.0])), mass=0.5,
                   com=np.array([0.15, 0.0, 0.0]), inertia=np.diag([0.01, 0.015, 0.02]), joint_name="arm_b")
        qa, qb = sympy.symbols("qa qb", real=True)
        m.add_constraint(sd.symbolic_constraint("tie", ["arm_a", "arm_b"], [qb - 0.3 * sympy.sin(qa) - 0.2 * qa],
                                                [qa, qb]))

    if symbolic_first:
        arm()
    _add_four_bar(m, "", None, (np.eye(3), np.zeros(3)), (0.3, 0.5, 0.45, 0.5), (1.0, 1.5, 1.2), "y")
    if not symbolic_first:
        arm()
    return m


@pytest.mark.parametrize("symbolic_first", [False, True])
def test_loop_and_symbolic_clusters_in_either_order(symbolic_first):
    """C-ABA and C-RNEA with the clusters solved in the kernel (the last one prepared with
    or without loops: whether the loop rows left the tree placed for the bias pass) and at
    a given q, and the embedding method, equal the cut-joint direct method; C-RNEA inverts
    C-ABA."""
    model = _loop_and_symbolic(symbolic_first)
    tree = cluster_tree(model)
    p = packed_clusters(model)
    assert p.compiled and not p.python_prepared
    sizes = [len(c.bodies) for c in tree if c.constraints]  # in the order they are prepared
    assert sizes == ([2, 3] if symbolic_first else [3, 2]) and tree.nyv == 2
    rng = np.random.default_rng(11)
    for _ in range(3):
        y, yd = random_independent_state(model, rng)
        tau_ind = rng.normal(size=tree.nyv)
        q, v = spanning_state(model, y, yd)
        solved = sd.cluster_aba(model, y, yd, tau_ind)
        given = sd.cluster_aba(model, y, yd, tau_ind, q=q)
        tau = np.zeros(model.nv)
        tau[tree.independent_v_index] = tau_ind
        qdd = sd.constrained_forward_dynamics(model, q, v, tau, method="direct").qdd
        for ydd in (solved, given):
            assert np.allclose(ydd, qdd[tree.independent_v_index], rtol=1e-8, atol=1e-8)
        # the embedding method at (q, q̇): rows and bias in two passes (a symbolic constraint),
        # the tree placed by the first one
        emb = sd.constrained_forward_dynamics(model, q, v, tau, method="embedding").qdd
        assert np.allclose(emb, qdd, rtol=1e-8, atol=1e-8)
        for kw in ({}, {"q": q}):
            assert np.allclose(sd.cluster_rnea(model, y, yd, solved, **kw), tau_ind, rtol=1e-9, atol=1e-9)


def test_nan_in_the_given_configuration_is_named():
    m = sd.models.four_bar_linkage()
    y, yd = random_independent_state(m, np.random.default_rng(0))
    q, _ = spanning_state(m, y, yd)
    q[2] = np.nan
    with pytest.raises(ValueError, match=r"q: expected finite values.*\[2\]"):
        sd.cluster_aba(m, y, yd, np.zeros(len(yd)), q=q)


# --------------------------------------------------------------------------- batches
def random_batch(m, rng, B):
    """B random independent states (Y, YD) and independent forces T of ``m``."""
    states = [random_independent_state(m, rng) for _ in range(B)]
    Y = np.array([s[0] for s in states])
    YD = np.array([s[1] for s in states])
    return Y, YD, rng.normal(size=YD.shape)


@pytest.mark.parametrize("name", ["tello", "mini_cheetah", "four_bar_linkage"])
def test_batches_equal_single_calls(name):
    m = getattr(sd.models, name)()
    rng = np.random.default_rng(5)
    B = 40
    Y, YD, T = random_batch(m, rng, B)
    ydd = sd.cluster_aba(m, Y, YD, T)
    tau = sd.cluster_rnea(m, Y, YD, T)
    assert ydd.shape == tau.shape == (B, YD.shape[1])
    for b in range(B):
        assert np.array_equal(ydd[b], sd.cluster_aba(m, Y[b], YD[b], T[b]))
        assert np.array_equal(tau[b], sd.cluster_rnea(m, Y[b], YD[b], T[b]))
    Q = np.array([spanning_state(m, Y[b], YD[b])[0] for b in range(B)])
    given = sd.cluster_aba(m, Y, YD, T, q=Q)
    for b in range(B):
        assert np.array_equal(given[b], sd.cluster_aba(m, Y[b], YD[b], T[b], q=Q[b]))


@pytest.mark.parametrize("name", ["tello", "planar_leg_linkage"])
def test_batches_with_forces_and_q_equal_single_calls(name):
    """Implicit clusters: the states kernel reads each state's forces and q from flat
    arrays; a batch (several blocks on the worker threads) equals the single calls, which
    take the same kernel with one state."""
    m = getattr(sd.models, name)()
    rng = np.random.default_rng(8)
    B = 37
    Y, YD, T = random_batch(m, rng, B)
    F = rng.normal(size=(B, m.nbodies, 6))
    Q = np.array([spanning_state(m, Y[b], YD[b])[0] for b in range(B)])
    for kw in ({}, {"q": Q}):
        ydd = sd.cluster_aba(m, Y, YD, T, F, **kw)
        tau = sd.cluster_rnea(m, Y, YD, T, F, **kw)
        for b in range(B):
            one = {k: v[b] for k, v in kw.items()}
            assert np.array_equal(ydd[b], sd.cluster_aba(m, Y[b], YD[b], T[b], F[b], **one))
            assert np.array_equal(tau[b], sd.cluster_rnea(m, Y[b], YD[b], T[b], F[b], **one))
    # the forces act: the same states without them give other accelerations
    assert not np.allclose(sd.cluster_aba(m, Y, YD, T, q=Q), sd.cluster_aba(m, Y, YD, T, F, q=Q))


def test_a_batch_with_a_state_off_the_manifold_names_it():
    m = sd.models.planar_leg_linkage()
    rng = np.random.default_rng(6)
    states = [random_independent_state(m, rng) for _ in range(20)]
    Y = np.array([s[0] for s in states])
    YD = np.array([s[1] for s in states])
    Q = np.array([spanning_state(m, Y[b], YD[b])[0] for b in range(20)])
    Q[7, m.joint("foot_joint").q_index] += 0.05
    with pytest.raises(ConstraintError, match="off the constraint manifold"):
        sd.cluster_aba(m, Y, YD, np.zeros(YD.shape), q=Q)


# --------------------------------------------------------------------------- the embedding method in one call
def consistent_states(m, B, seed):
    rng = np.random.default_rng(seed)
    states = [random_independent_state(m, rng) for _ in range(B)]
    Q, V = zip(*[spanning_state(m, y, yd) for y, yd in states])
    return np.array(Q), np.array(V), rng.normal(size=(B, m.nv))


@pytest.mark.parametrize("name", ["tello", "mini_cheetah", "planar_leg_linkage"])
def test_embedding_method_equals_direct_method_singly_and_batched(name):
    m = getattr(sd.models, name)()
    Q, V, T = consistent_states(m, 12, 7)
    batch = sd.constrained_forward_dynamics(m, Q, V, T, method="embedding")
    assert batch.qdd.shape == (12, m.nv)
    for b in range(12):
        one = sd.constrained_forward_dynamics(m, Q[b], V[b], T[b], method="embedding")
        assert np.array_equal(one.qdd, batch.qdd[b])
        direct = sd.constrained_forward_dynamics(m, Q[b], V[b], T[b], method="direct")
        assert np.allclose(one.qdd, direct.qdd, rtol=1e-8, atol=1e-8)
        # the lazily made constraint forces: the same generalized force G_c*λ as the KKT solution
        assert np.allclose(one.generalized_constraint_force, direct.generalized_constraint_force, rtol=1e-6,
                           atol=1e-7)
        assert one.constraint_rank == direct.constraint_rank
    assert np.allclose(batch.generalized_constraint_force[3], sd.constrained_forward_dynamics(
        m, Q[3], V[3], T[3], method="direct").generalized_constraint_force, rtol=1e-6, atol=1e-7)


def test_embedding_method_checks_the_state():
    m = sd.models.planar_leg_linkage()
    Q, V, T = consistent_states(m, 5, 8)
    v = V[2].copy()
    v[m.joint("foot_joint").v_index] += 0.3  # violates the loop's velocity constraint
    with pytest.raises(ConstraintError, match="loop"):
        sd.constrained_forward_dynamics(m, Q[2], v, T[2], method="embedding")
    V[2] = v
    with pytest.raises(ConstraintError, match="batch entry 2|loop"):
        sd.constrained_forward_dynamics(m, Q, V, T, method="embedding")
    # check=False accepts the inconsistent velocity (the Python path, the given v as is)
    r = sd.constrained_forward_dynamics(m, Q[2], v, T[2], method="embedding", check=False)
    assert np.all(np.isfinite(r.qdd))


def test_plain_embedding_call_after_a_valid_one_checks_and_keeps_its_inputs():
    """From the second call on, the common embedding call goes straight into its kernel
    (``soadyn.closed.embedding.algorithms.embedding_fast``): it refuses what the validated
    first call refuses, gives the validated result, and its lazily made multipliers use
    the result's own inputs (not arrays the caller edited afterwards)."""
    m = sd.models.planar_leg_linkage()
    Q, V, T = consistent_states(m, 3, 9)
    q, v, tau = Q[0].copy(), V[0].copy(), T[0].copy()
    first = sd.constrained_forward_dynamics(m, q, v, tau, method="embedding")
    plain = sd.constrained_forward_dynamics(m, q, v, tau, method="embedding")
    validated = sd.constrained_forward_dynamics(m, q, v, tau, method="embedding", f_ext=np.zeros((m.nbodies, 6)))
    assert np.array_equal(plain.qdd, first.qdd) and np.array_equal(plain.qdd, validated.qdd)
    bad = v.copy()
    bad[m.joint("foot_joint").v_index] += 0.3
    with pytest.raises(ConstraintError, match="loop"):
        sd.constrained_forward_dynamics(m, q, bad, tau, method="embedding")
    with pytest.raises(ValueError, match="tau"):
        sd.constrained_forward_dynamics(m, q, v, tau[:-1], method="embedding")
    expected = validated.generalized_constraint_force
    q[0] += 0.1
    v[:] = 0.0
    tau[:] = 1.0
    plain.qdd[:] = 0.0
    assert np.array_equal(plain.generalized_constraint_force, expected)
    direct = sd.constrained_forward_dynamics(m, Q[0], V[0], T[0], method="direct")
    assert np.allclose(expected, direct.generalized_constraint_force, rtol=1e-6, atol=1e-7)


def test_batched_embedding_result_keeps_its_inputs():
    """A batched embedding call's result holds its own q, q̇, τ (copies the kernel writes):
    multipliers read after the caller edited its arrays are those of the states given,
    equal to the single calls' (and to the direct method's generalized constraint force)."""
    m = sd.models.planar_leg_linkage()
    Q, V, T = consistent_states(m, 4, 11)
    singles = [sd.constrained_forward_dynamics(m, Q[b], V[b], T[b], method="embedding") for b in range(4)]
    expected = np.array([r.generalized_constraint_force for r in singles])
    Q2, V2, T2 = Q.copy(), V.copy(), T.copy()
    batch = sd.constrained_forward_dynamics(m, Q2, V2, T2, method="embedding")
    assert np.array_equal(batch.qdd, np.array([r.qdd for r in singles]))
    Q2[:, 0] += 0.1
    V2[:] = 0.0
    T2[:] = 1.0
    assert np.array_equal(batch.generalized_constraint_force, expected)
    direct = [sd.constrained_forward_dynamics(m, Q[b], V[b], T[b], method="direct") for b in range(4)]
    assert np.allclose(expected, [r.generalized_constraint_force for r in direct], rtol=1e-6, atol=1e-7)


def test_public_spanning_state_is_the_kernels_solve(robot):
    """sd.spanning_state solves as the cluster kernels do: C-ABA from y and from y with the
    q it returns agree to the last bit; the Python solve agrees to its tolerance."""
    rng = np.random.default_rng(9)
    for _ in range(3):
        y, yd = random_independent_state(robot, rng)
        tau = rng.normal(size=len(yd))
        q, v = sd.spanning_state(robot, y, yd)
        assert np.array_equal(sd.cluster_aba(robot, y, yd, tau), sd.cluster_aba(robot, y, yd, tau, q=q))
        qp, vp = spanning_state(robot, y, yd)  # the Python solve
        assert np.allclose(q, qp, atol=1e-10) and np.allclose(v, vp, atol=1e-9)


def test_default_method_follows_the_measured_crossover():
    """Direct (KKT) for few loop and coupling rows, embedding for many loop rows, for
    couplings on a robot of some size, and for symbolic constraints the direct kernel
    cannot evaluate; the same accelerations either way."""
    from soadyn.models import four_bar_chain
    assert sd.closed.default_method(four_bar_chain(4, 0)) == "direct"  # 20 loop rows
    assert sd.closed.default_method(four_bar_chain(8, 0)) == "embedding"  # 40 loop rows
    assert sd.closed.default_method(sd.models.geared_chain(1)) == "direct"  # 1 coupling row, 2 bodies
    assert sd.closed.default_method(sd.models.geared_chain(3)) == "direct"  # 3 coupling rows, 6 bodies
    assert sd.closed.default_method(sd.models.geared_chain(4)) == "embedding"  # 4 coupling rows, 8 bodies
    assert sd.closed.default_method(sd.models.mini_cheetah()) == "embedding"  # 12 rotor couplings, 25 bodies
    assert sd.closed.default_method(sd.models.tello()) == "embedding"  # symbolic differentials
    m = four_bar_chain(16, 0)  # 80 rows
    assert sd.closed.default_method(m) == "embedding"
    rng = np.random.default_rng(2)
    q, v = sd.close_loops(m, sd.neutral(m) + 0.1 * rng.normal(size=m.nq), rng.normal(size=m.nv))
    tau = rng.normal(size=m.nv)
    res = sd.constrained_forward_dynamics(m, q, v, tau)
    direct = sd.constrained_forward_dynamics(m, q, v, tau, method="direct")
    assert res.method == "embedding" and np.allclose(res.qdd, direct.qdd, rtol=1e-8, atol=1e-8)
    stabilized = sd.constrained_forward_dynamics(m, q, v, tau, baumgarte=(1.0, 1.0))  # not for embedding
    assert stabilized.method == "direct"


def test_default_call_of_a_model_defaulting_to_embedding_takes_its_plain_call(monkeypatch):
    """On a model whose default is the embedding method and whose constraint rows the
    direct method also compiles (rotor couplings), the common call without ``method=``
    goes, from the second call on, to the embedding method's plain call: the direct
    method's plain call answers that it is not the default, and the default is not looked
    up again. The result is the embedding method's (bit for bit that of the validated
    call)."""
    from soadyn.closed import forward
    m = sd.models.mini_cheetah()
    assert sd.closed.default_method(m) == "embedding"
    rng = np.random.default_rng(5)
    y, yd = random_independent_state(m, rng)
    q, v = sd.spanning_state(m, y, yd)
    tau = rng.normal(size=m.nv)
    first = sd.constrained_forward_dynamics(m, q, v, tau)
    sd.constrained_forward_dynamics(m, q, v, tau)

    def no_second_look_up(model):
        raise AssertionError("the default method looked up again")

    monkeypatch.setattr(forward, "_known_default_method", no_second_look_up)
    plain = sd.constrained_forward_dynamics(m, q, v, tau)
    assert type(plain) is forward.PlainEmbeddingResult
    validated = sd.constrained_forward_dynamics(m, q, v, tau, method="embedding", f_ext=np.zeros((m.nbodies, 6)))
    assert np.array_equal(plain.qdd, validated.qdd) and np.array_equal(plain.qdd, first.qdd)
