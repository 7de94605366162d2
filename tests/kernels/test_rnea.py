"""Hinge forces f(k) ([Jain12, eq. 12], ``sd.body_forces``) against Pinocchio's ``data.f``
after ``rnea`` (the same forces, linear-first), against τ = H f per joint, and batches."""
import numpy as np
import pytest

import soadyn as sd
from conftest import ROBOTS, load_pair, swap_lin_ang


@pytest.mark.parametrize("name", sorted(ROBOTS))
@pytest.mark.parametrize("floating", [False, True])
def test_hinge_forces_equal_pinocchio_data_f(name, floating):
    import pinocchio as pin
    pair = load_pair(name, floating)
    m, pm, pd = pair.sd, pair.pm, pair.pd
    rng = np.random.default_rng(3)
    q = sd.random_configuration(m, rng)
    v, a = rng.normal(size=(2, m.nv))
    f = sd.body_forces(m, q, v, a)
    assert f.shape == (m.nbodies, 6)
    pin.rnea(pm, pd, pair.q_to_pin(q), pair.v_to_pin(v), pair.v_to_pin(a))
    scale = 1.0 + np.abs(f).max()
    for b in m.bodies:
        jid = pm.getJointId(b.joint.name)
        ref = swap_lin_ang(pd.f[jid].vector)  # Pinocchio [f; n] -> [n; f], the joint frame = the body frame
        assert np.abs(f[b.index] - ref).max() < 1e-10 * scale, b.joint.name


def test_hinge_forces_project_to_the_joint_forces_and_batch():
    """τ(k) = H(k) f(k) [Jain12, eq. 12] for every joint (H(k): the columns of joint k in the
    Jacobian of body k's frame, local axes), with external forces; a batch equals single calls."""
    m = sd.models.random_tree(7, 3, floating_base=True)
    rng = np.random.default_rng(4)
    Q = np.array([sd.random_configuration(m, rng) for _ in range(5)])
    V, A = rng.normal(size=(2, 5, m.nv))
    F = rng.normal(size=(5, m.nbodies, 6))
    fb = sd.body_forces(m, Q, V, A, F)
    for b in range(5):
        one = sd.body_forces(m, Q[b], V[b], A[b], F[b])
        assert np.array_equal(fb[b], one)
        tau = sd.rnea(m, Q[b], V[b], A[b], F[b])
        for body in m.bodies:  # every body has a frame of its own name at its origin
            jt = body.joint
            H = sd.frame_jacobian(m, Q[b], body.name, reference="local")[:, jt.v_index:jt.v_index + jt.nv]
            assert np.allclose(H.T @ one[body.index], tau[jt.v_index:jt.v_index + jt.nv], atol=1e-9)


def test_tree_functions_only():
    with pytest.raises(sd.ClosedChainError, match="body_forces"):
        sd.body_forces(sd.models.four_bar_linkage(), np.zeros(3), None, None)
