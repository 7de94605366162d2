"""
Identifying a leg's inertial parameters, rotors included
========================================================

The inverse dynamics of a rigid-body system are linear in its bodies' dynamic parameters π
(ten per body: mass, first moment, rotational inertia about the body origin; [Atkeson86]):
τ = Y(q, q̇, q̈) π. For a robot whose joints are driven through gears and belts the
torques are those of the *constrained* dynamics, τ_ind = Gᵀ τ in the independent
coordinates ([Chignoli23, §V-D]), and the rotors' parameters reach them only through the
transmission: ``sd.cluster_torque_regressor`` gives the regressor Y_c of exactly these
dynamics, over every body of the spanning tree, rotors included.

One leg of the MIT Humanoid on a fixed hip (``sd.models.mit_humanoid_leg``): hip yaw,
roll and pitch driven by geared rotors, knee and ankle by two rotors through a belt — five
links, five rotors, 100 parameters, five torques. We

1. drive the leg along an exciting trajectory (a Fourier series per joint) and record its
   torques with 2 % noise (the "measurements", from ``sd.cluster_rnea`` with the published
   parameters: the truth we then try to recover);
2. find the identifiable combinations of parameters — the *base parameters* — by a
   rank-revealing QR decomposition of the stacked regressor ([Gautier91]);
3. estimate them by weighted least squares, and compare with the truth;
4. do the same with a model of the leg without its rotors, to see what the rotors
   contribute.
"""
import matplotlib.pyplot as plt
import numpy as np
import scipy.linalg

import soadyn as sd
from soadyn.core.parameters import parameter_names

model = sd.models.get("mit_humanoid_leg")
tree = sd.cluster_tree(model)
names = parameter_names(model)  # "<body>.<parameter>", the order of π
rotors = [k for k, b in enumerate(model.bodies) if b.name.endswith("rotor")]
rotor_columns = np.concatenate([np.arange(10 * k, 10 * k + 10) for k in rotors])
truth = sd.dynamic_parameters(model)
print(f"{model.nbodies} bodies ({len(rotors)} rotors), {truth.size} parameters, {tree.nyv} independent joints")


def trajectory(rng, duration=12.0, samples=600, base=0.25, harmonics=5, amplitude=0.5):
    """y, ẏ, ÿ (samples, nyv) of a Fourier series per joint (base frequency ``base`` Hz)."""
    t = np.linspace(0.0, duration, samples, endpoint=False)
    w = 2 * np.pi * base * np.arange(1, harmonics + 1)
    a, b = rng.normal(size=(2, harmonics, tree.nyv)) * amplitude / np.arange(1, harmonics + 1)[:, None]
    s, c = np.sin(np.outer(t, w)), np.cos(np.outer(t, w))
    return t, s @ a + c @ b, (c * w) @ a - (s * w) @ b, -(s * w**2) @ a - (c * w**2) @ b


# %%
# Simulated measurements and the regressor. The noise is 2 % of each joint's RMS torque;
# the least squares below weigh each joint by the inverse of its noise level.
rng = np.random.default_rng(0)
t, y, yd, ydd = trajectory(rng)
tau = sd.cluster_rnea(model, y, yd, ydd)
sigma = 0.02 * np.sqrt(np.mean(tau**2, axis=0))
measured = tau + rng.normal(size=tau.shape) * sigma
Y = sd.cluster_torque_regressor(model, y, yd, ydd)  # (samples, nyv, 100)
assert np.allclose(Y @ truth, tau, rtol=0.0, atol=1e-10 * np.abs(tau).max())
W = (Y / sigma[:, None]).reshape(-1, truth.size)
b = (measured / sigma).reshape(-1)

# the same leg without its rotors: the tree of its five links (same coordinates y)
links = sd.approximate_model(model, reflected=False).model
Y_links = sd.joint_torque_regressor(links, y, yd, ydd)  # (samples, nyv, 50)
W_links = (Y_links / sigma[:, None]).reshape(-1, 10 * links.nbodies)


# %%
# Base parameters. A QR decomposition with column pivoting, W P = Q R, puts the columns
# that are linearly independent first; the magnitude of R_kk falls by many orders where the
# remaining columns are combinations of the earlier ones. The base parameters are then
# β = π_b + K π_d with K = R_b⁻¹ R_bd: W π = W_b β.
def base_parameters(W):
    R, P = scipy.linalg.qr(W, mode="r", pivoting=True)
    d = np.abs(np.diag(R)) / abs(R[0, 0])
    rank = int(np.sum(d > 1e-10))
    K = scipy.linalg.solve_triangular(R[:rank, :rank], R[:rank, rank:])
    return d, rank, P, K


d, rank, P, K = base_parameters(W)
d_links, rank_links, P_links, _ = base_parameters(W_links)
print(f"base parameters: {rank} of {truth.size} with the rotors, {rank_links} of {10 * links.nbodies} without "
      f"them; the rotors add {rank - rank_links} identifiable combinations")
print(f"|R_kk| / |R_00| across the gap: {d[rank - 1]:.1e} -> {d[rank]:.1e} (rotors), "
      f"{d_links[rank_links - 1]:.1e} -> {d_links[rank_links]:.1e} (links only)")

# %%
# Why the rotors add so many: a rotor turns relative to the link that carries it, N times as
# fast as the joint it drives, so beyond its axial inertia (the reflected inertia N² I_rot of
# the classic approximation) its first moment off the axis and the parts of its inertia
# that are not symmetric about the axis enter the torques through the rotor's own angle —
# identifiable, unlike the same parameters of a body fixed to the link. (For these
# symmetric rotors their true values are zero, and so are the estimates below, within their
# standard deviations.) What does not change as the rotor turns — its mass, its first
# moment along the axis, the mean of its moments about the axes across it — adds to its
# carrier's parameters and is not separately identifiable.
#
# Least squares for β, and its covariance from the (known) noise: the estimates agree
# with the truth within their standard deviations.
Wb = W[:, P[:rank]]
beta = np.linalg.lstsq(Wb, b, rcond=None)[0]
beta_true = truth[P[:rank]] + K @ truth[P[rank:]]
std = np.sqrt(np.diag(np.linalg.inv(Wb.T @ Wb)))
z = (beta - beta_true) / std
print(f"estimate − truth within {np.abs(z).max():.2f} standard deviations (all {rank}); "
      f"{int(np.sum(std < 0.01 * np.abs(beta_true)))} base parameters to better than 1 %")
# each rotor's moment of inertia about its own axis: I_xx, I_yy or I_zz of its body
axial = {f"{model.bodies[k].name}.I_{2 * 'xyz'[np.argmax(np.abs(model.bodies[k].joint.axis))]}" for k in rotors}
print("base parameters led by a rotor's axial inertia:")
for k in range(rank):
    if names[P[k]] in axial:
        print(f"  {names[P[k]]:28s} truth {beta_true[k]:.4e}  estimate {beta[k]:.4e} ± {std[k]:.1e} kg m² "
              f"({100 * abs(beta[k] - beta_true[k]) / abs(beta_true[k]):.1f} %)")

# %%
# Validation on a new trajectory: the torques predicted by the identified base parameters
# against the true (noise-free) ones; and the best the rotor-less model can do, fitted to
# the same measurements.
beta_links = np.linalg.lstsq(W_links[:, P_links[:rank_links]], b, rcond=None)[0]
rng_v = np.random.default_rng(1)
tv, yv, ydv, yddv = trajectory(rng_v)
tau_v = sd.cluster_rnea(model, yv, ydv, yddv)
Yv = sd.cluster_torque_regressor(model, yv, ydv, yddv)
pred = Yv[..., P[:rank]] @ beta
pred_links = sd.joint_torque_regressor(links, yv, ydv, yddv)[..., P_links[:rank_links]] @ beta_links
rms = np.sqrt(np.mean(tau_v**2, axis=0))
err = np.sqrt(np.mean((pred - tau_v) ** 2, axis=0)) / rms
err_links = np.sqrt(np.mean((pred_links - tau_v) ** 2, axis=0)) / rms
# the rotors' part of the true torque: their columns times their parameters
rotor_torque = Yv[..., rotor_columns] @ truth[rotor_columns]
share = np.sqrt(np.mean(rotor_torque**2, axis=0)) / rms
joints = [j for cluster in tree for j in cluster.independent_joints]
print(f"{'joint':26s} {'rotors in τ':>11s} {'identified':>11s} {'no rotors':>10s}   (RMS, % of the joint's RMS torque)")
for k, joint in enumerate(joints):
    print(f"{joint:26s} {100 * share[k]:10.1f}% {100 * err[k]:10.2f}% {100 * err_links[k]:9.1f}%")

# %%
# Left: the diagonal of R, the gap where the rank ends. Right: the knee's torque on the
# validation trajectory — the identified model on top of the truth, the model without
# rotors, fitted as well as it can be, missing the rotors' reflected inertia.
fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(10, 4))
ax0.semilogy(np.arange(1, d.size + 1), d, "o", ms=3, label=f"with rotors: rank {rank}")
ax0.semilogy(np.arange(1, d_links.size + 1), d_links, "s", ms=3, label=f"links only: rank {rank_links}")
ax0.axhline(1e-10, color="gray", lw=0.8, ls="--")
ax0.set_xlabel("pivoted column k")
ax0.set_ylabel("|R_kk| / |R_00|")
ax0.legend(fontsize=8)
knee = joints.index("right_hipy_to_knee_link")
ax1.plot(tv, tau_v[:, knee], "k", lw=2.2, label="truth")
ax1.plot(tv, pred[:, knee], "C0--", label="identified (rotors included)")
ax1.plot(tv, pred_links[:, knee], "C3", label="identified without rotors")
ax1.set_xlabel("t [s]")
ax1.set_ylabel("knee τ [N m]")
ax1.legend(fontsize=8)
fig.tight_layout()
plt.show()
