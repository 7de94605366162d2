"""A velocity, acceleration or force argument of the wrong length is an error on every call.

The kernels read an empty rate vector as "absent" (zero): that is how the public
functions pass ``None`` to them. A caller's own empty (or too long) array is a mistake,
and must be named as one whether or not the function has run before — the second call of
a function takes the fast path, which hands the arrays to the kernel unchecked. (Before
the fix, a warm ``rnea`` returned the zero-velocity result for an empty ``v``, and the
cluster kernels of a four-bar read past the end of an empty ``yd``.)
"""
from __future__ import annotations

import numpy as np
import pytest

import soadyn as sd

TREE = sd.models.random_tree(5, 0, floating_base=True)
Q = sd.random_configuration(TREE, 1)
ONES = np.ones(TREE.nv)
FRAME = TREE.frames[-1].name
# a longer buffer: its empty slice points at ones, which a kernel reading past the end
# of the slice would use
BUFFER = np.ones(3 * TREE.nv)

#: public tree functions and the positions of their rate arguments in (q, v, a)
TREE_CALLS = {
    "rnea": (lambda q, v, a: sd.rnea(TREE, q, v, a), (1, 2)),
    "aba": (lambda q, v, a: sd.aba(TREE, q, v, a), (1, 2)),
    "body_forces": (lambda q, v, a: sd.body_forces(TREE, q, v, a), (1, 2)),
    "forward_kinematics": (lambda q, v, a: sd.forward_kinematics(TREE, q, v, a), (1, 2)),
    "kinetic_energy": (lambda q, v, a: sd.kinetic_energy(TREE, q, v), (1,)),
    "center_of_mass": (lambda q, v, a: sd.center_of_mass(TREE, q, v), (1,)),
    "rnea_derivatives": (lambda q, v, a: sd.rnea_derivatives(TREE, q, v, a), (1, 2)),
    "aba_derivatives": (lambda q, v, a: sd.aba_derivatives(TREE, q, v, a), (1, 2)),
    "frame_velocity": (lambda q, v, a: sd.frame_velocity(TREE, q, v, FRAME), (1,)),
    "frame_acceleration": (lambda q, v, a: sd.frame_acceleration(TREE, q, v, a, FRAME), (1, 2)),
    "center_of_mass v a": (lambda q, v, a: sd.center_of_mass(TREE, q, v, a), (1, 2)),
    "centroidal_momentum_rate": (lambda q, v, a: sd.centroidal_momentum_rate(TREE, q, v, a), (1, 2)),
    "coriolis_matrix": (lambda q, v, a: sd.coriolis_matrix(TREE, q, v), (1,)),
    "joint_torque_regressor": (lambda q, v, a: sd.joint_torque_regressor(TREE, q, v, a), (1, 2)),
    "kinetic_energy_regressor": (lambda q, v, a: sd.kinetic_energy_regressor(TREE, q, v), (1,)),
}
@pytest.mark.parametrize("name", sorted(TREE_CALLS))
@pytest.mark.parametrize("length", ["empty", "long"])
def test_tree_functions_name_a_wrong_rate_length_on_every_call(name, length):
    call, positions = TREE_CALLS[name]
    for k in positions:
        args = [Q, ONES, ONES]
        args[k] = BUFFER[:0] if length == "empty" else BUFFER[:TREE.nv + 1]
        for _ in range(2):
            call(Q, ONES, ONES)  # a valid call first: the next one takes the fast path
            with pytest.raises(ValueError, match=r"expected shape \(20,\)"):
                call(*args)


FORCE_CALLS = {
    "rnea": lambda f: sd.rnea(TREE, Q, ONES, ONES, f),
    "aba": lambda f: sd.aba(TREE, Q, ONES, ONES, f),
    "body_forces": lambda f: sd.body_forces(TREE, Q, ONES, ONES, f),
    "rnea_derivatives": lambda f: sd.rnea_derivatives(TREE, Q, ONES, ONES, f),
    "aba_derivatives": lambda f: sd.aba_derivatives(TREE, Q, ONES, ONES, f),
}


@pytest.mark.parametrize("name", sorted(FORCE_CALLS))
def test_external_forces_of_no_body_are_named_on_every_call(name):
    """f_ext of shape (0, 6) is what the kernels read as "no forces"; from a caller it is
    the wrong shape (one row per body)."""
    call = FORCE_CALLS[name]
    forces = np.zeros((TREE.nbodies, 6))
    for _ in range(2):
        call(forces)
        with pytest.raises(ValueError, match=r"f_ext: expected shape \(5, 6\)"):
            call(forces[:0])


def test_none_still_means_zero_on_the_fast_path():
    """The absent rate (None) is not mistaken for a caller's empty array: it gives the
    zero-rate result, equal to passing zeros."""
    zeros = np.zeros(TREE.nv)
    for _ in range(2):
        np.testing.assert_array_equal(sd.rnea(TREE, Q, None, None), sd.rnea(TREE, Q, zeros, zeros))
        np.testing.assert_array_equal(sd.aba(TREE, Q, None, ONES), sd.aba(TREE, Q, zeros, ONES))
        assert sd.kinetic_energy(TREE, Q, None) == 0.0
        np.testing.assert_array_equal(sd.rnea(TREE, Q, ONES, ONES, None),
                                      sd.rnea(TREE, Q, ONES, ONES, np.zeros((TREE.nbodies, 6))))


def _closed_cases():
    """(name, model, y, q): a four-bar (an implicit cluster, solved inside the kernel) and
    the Mini Cheetah (explicit clusters: geared rotors)."""
    cases = []
    for name, model in (("four-bar", sd.models.four_bar_chain(1, 0)), ("mini_cheetah", sd.models.mini_cheetah())):
        q0 = sd.neutral(model) + (0.1 if name == "four-bar" else 0.0)
        y, yd = sd.independent_state(model, q0, np.zeros(model.nv))
        q, _ = sd.spanning_state(model, y, yd)
        cases.append((name, model, y, q))
    return cases


CLOSED = _closed_cases()


@pytest.mark.parametrize("case", CLOSED, ids=[c[0] for c in CLOSED])
@pytest.mark.parametrize("function", ["cluster_rnea", "cluster_aba"])
@pytest.mark.parametrize("keywords", ["plain", "q", "f_ext"])
def test_cluster_functions_name_an_empty_rate_on_every_call(case, function, keywords):
    _, model, y, q = case
    f = getattr(sd, function)
    ones = np.ones(len(sd.independent_state(model, q, np.zeros(model.nv))[1]))  # (nyv,)
    buffer = np.ones(3 * len(ones))
    kw = {"plain": {}, "q": {"q": q}, "f_ext": {"f_ext": np.zeros((model.nbodies, 6))}}[keywords]
    third = "ydd" if function == "cluster_rnea" else "tau_ind"
    for k, name in ((1, "yd"), (2, third)):
        args = [y, ones, ones]
        args[k] = buffer[:0]
        for _ in range(2):
            f(model, y, ones, ones, **kw)  # warm: the next call takes the fast path
            with pytest.raises(ValueError, match=f"{name}: expected shape"):
                f(model, *args, **kw)
    forces = np.zeros((model.nbodies, 6))
    kw.pop("f_ext", None)
    for _ in range(2):
        f(model, y, ones, ones, forces, **kw)
        with pytest.raises(ValueError, match="f_ext: expected shape"):
            f(model, y, ones, ones, forces[:0], **kw)


def test_the_compiled_direct_method_names_an_empty_velocity():
    model = sd.models.four_bar_chain(2, 1)
    q, v = sd.close_loops(model, sd.neutral(model) + 0.1, np.ones(model.nv))
    tau = np.ones(model.nv)
    buffer = np.ones(3 * model.nv)
    for method in (None, "direct", "embedding"):
        for _ in range(2):
            sd.constrained_forward_dynamics(model, q, v, tau, method=method)
            with pytest.raises(ValueError, match=r"v: expected shape"):
                sd.constrained_forward_dynamics(model, q, buffer[:0], tau, method=method)
