"""
Mini Cheetah with its rotors standing on the ground
===================================================

The Mini Cheetah drives each of its twelve leg joints through a geared rotor (ratios 6, 6
and 9.33): a rotor turns exactly ``ratio`` times its link, a coupling between the two
joints. :func:`soadyn.step` steps such a model in contact by constraint embedding
([Chignoli23]): in the independent coordinates ẏ of its cluster tree (one cluster per link
and its rotor), with the free velocity from C-ABA, the contact Jacobian J G (q̇ = G ẏ),
the Delassus operator (J G) H⁻¹ (J G)ᵀ by C-EFPA and the new configuration on the
constraint manifold, so that every rotor stays on its gear ratio to round-off while the
robot lands and stands.

Here the robot is dropped from 3 cm onto the ground with one contact sphere per foot
(:func:`soadyn.models.add_foot_spheres`) and stands under joint PD control on its link
joints.
"""
import matplotlib.pyplot as plt
import numpy as np

import soadyn as sd
from soadyn.closed.embedding.clusters import cluster_tree
from soadyn.closed.kinematics import evaluate_constraints

# %%
# The robot, its foot spheres and the ground. ``y`` holds the independent coordinates: the
# floating base (position, quaternion x, y, z, w), then abduction, hip and knee of each leg
# (the rotors are dependent coordinates).
model = sd.models.mini_cheetah()
sd.models.add_foot_spheres(model)
model.add_ground()
tree = cluster_tree(model)
iq, iv = tree.independent_q_index, tree.independent_v_index
legs = np.array([0.0, -0.8, 1.6] * 4)  # a crouched stand [rad]
y = np.zeros(tree.nyq)
y[6], y[7:] = 1.0, legs
q, _ = sd.spanning_state(model, y, None)
y[2] = 0.03 - sd.collision_distances(model, q).distance.min()  # feet 3 cm above the ground
q, v = sd.spanning_state(model, y, None)

# %%
# One second at dt = 1 ms, with PD torques on the link joints (the rotors carry the
# reflected motor inertia through the couplings). Each step warm-starts its contact solve
# from the previous one.
dt, kp, kd = 1e-3, 80.0, 4.0
mass = sum(b.mass for b in model.bodies)
T = 1000
t = dt * np.arange(1, T + 1)
height, normal, residual = np.zeros(T), np.zeros((T, 4)), np.zeros(T)
feet = ["FR", "FL", "HR", "HL"]
result = None
for k in range(T):
    tau = np.zeros(model.nv)
    tau[iv[6:]] = kp * (legs - q[iq[7:]]) - kd * v[iv[6:]]
    result = sd.step(model, q, v, tau, dt, warm_start=result)
    q, v = result.q, result.v
    height[k] = q[2]
    for i, objects in enumerate(result.contacts.objects):
        foot = min(objects)  # the foot sphere of the contact (added before the ground)
        leg = model.collisions[foot].name[:2]
        normal[k, feet.index(leg)] = result.impulses[i, 2] / dt
    state = evaluate_constraints(model, q, v, bias=False)
    residual[k] = max(np.abs(state.residual).max(), np.abs(state.velocity_residual(v)).max())

print(f"standing: base height {height[-1]:.4f} m, normal forces {normal[-1].sum():.2f} N "
      f"(m g = {mass * 9.81:.2f} N), largest coupling residual {residual.max():.1e}")

# %%
# The base lands, sinks into the crouch and comes to rest; after the impact (its peak is
# cut off the plot) the four normal forces share the weight m g. The rotors' couplings
# hold to round-off throughout.
fig, ax = plt.subplots(3, 1, figsize=(7, 7), sharex=True)
ax[0].plot(t, height)
ax[0].set_ylabel("base height [m]")
for i, leg in enumerate(feet):
    ax[1].plot(t, normal[:, i], label=leg)
ax[1].plot(t, normal.sum(axis=1), "k", lw=1, label="sum")
ax[1].axhline(mass * 9.81, color="gray", ls="--", lw=1, label="m g")
ax[1].set_ylim(0.0, 3.0 * mass * 9.81)
ax[1].set_ylabel("normal force [N]")
ax[1].legend(ncol=3, fontsize=8)
ax[2].semilogy(t, np.maximum(residual, 1e-18))
ax[2].set_ylabel("coupling residual")
ax[2].set_xlabel("t [s]")
fig.tight_layout()
plt.show()
