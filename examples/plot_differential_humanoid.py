"""
A humanoid driven through differentials
=======================================

The legs of the Tello humanoid ([Chignoli23, Fig. 8b]) are driven by rotors on the hip
and the thigh through two differentials per leg: the hip differential moves the gimbal
(roll) and the thigh (pitch) with two rotors, the knee–ankle differential moves the shin
and the foot with two more. A differential is a kinematic loop: the rotor angles are
nonlinear functions of the link angles, given by an implicit constraint φ(q) = 0. soadyn
groups each loop with its bodies into a cluster ([Chignoli23, §IV]): the link angles are
the independent coordinates y, the spanning-tree state follows from them as q = γ(y),
q̇ = G ẏ ([Chignoli23, eq. 2–3]).

Here the torso is fixed and the arms are left out (``tello(arms=False,
floating_base=False)``): ten independent coordinates, twenty spanning-tree joints.
"""
import matplotlib.pyplot as plt
import numpy as np

import soadyn as sd
from soadyn.simulate import simulate

model = sd.models.tello(arms=False, floating_base=False)
tree = sd.cluster_tree(model)
print(tree.summary())
coordinates = [j for cluster in tree for j in cluster.independent_joints]

# %%
# The knee–ankle differential of the left leg: the two rotor angles as the shin bends
# (the foot joint turned back by the shin angle), and the transmission ratios (rows of G)
# that relate the rotor rates to the shin and foot rates. Both rotors turn for a pure shin
# motion (their shin ratios coincide: the two solid lines overlap); the ratios to the
# foot change along the motion.
shin, foot = coordinates.index("left-shin_joint"), coordinates.index("left-foot_joint")
rotors = [model.joint(f"left-knee-ankle-rotor-{i}_joint") for i in (1, 2)]
bend = np.linspace(0.0, 1.2, 41)
angles, ratios = [], []
q = None
for b in bend:
    y = np.zeros(tree.nyq)
    y[shin], y[foot] = b, -b
    q, _ = sd.spanning_state(model, y, None, q)  # from the previous solution: same branch
    G = tree.explicit_jacobian(q)
    angles.append([q[r.q_index] for r in rotors])
    ratios.append([[G[r.v_index, shin], G[r.v_index, foot]] for r in rotors])
angles, ratios = np.array(angles), np.array(ratios)
fig, ax = plt.subplots(1, 2, figsize=(8, 3.4))
for i in range(2):
    ax[0].plot(bend, angles[:, i], label=f"rotor {i + 1}")
    ax[1].plot(bend, ratios[:, i, 0], label=f"∂(rotor {i + 1})/∂(shin)")
    ax[1].plot(bend, ratios[:, i, 1], ls="--", label=f"∂(rotor {i + 1})/∂(foot)")
ax[0].set_xlabel("shin angle [rad] (foot at minus the shin angle)")
ax[0].set_ylabel("rotor angle [rad]")
ax[1].set_xlabel("shin angle [rad] (foot at minus the shin angle)")
ax[1].set_ylabel("transmission ratio (row of G)")
ax[0].legend(fontsize=8)
ax[1].legend(fontsize=7)
fig.tight_layout()

# %%
# Motor torques. C-RNEA ([Chignoli23, §VI]) gives the generalized forces τ_ind = Gᵀτ on
# the independent coordinates that a motion needs. When the rotors alone are driven,
# τ_ind's shin and foot entries are G_mᵀ τ_m with G_m the 2 × 2 block of the two rotors'
# rows: the motor torques are τ_m = G_m⁻ᵀ τ_ind, and the power the motors deliver equals
# the power on the links (checked below). A kicking motion of the left leg over 1 s:
T = 1.0
t = np.linspace(0.0, T, 201)
s, sd_, sdd = (1 - np.cos(2 * np.pi * t / T)) / 2, np.pi / T * np.sin(2 * np.pi * t / T), \
    2 * (np.pi / T) ** 2 * np.cos(2 * np.pi * t / T)
thigh = coordinates.index("left-thigh_joint")
amplitude = {thigh: -0.6, shin: 1.0, foot: -0.4}
link_torque, motor_torque, power_error = [], [], []
q = None
for k in range(t.size):
    y, yd, ydd = (np.zeros(tree.nyv) for _ in range(3))
    for c, a in amplitude.items():
        y[c], yd[c], ydd[c] = a * s[k], a * sd_[k], a * sdd[k]
    q, v = sd.spanning_state(model, y, yd, q)
    tau_ind = sd.cluster_rnea(model, y, yd, ydd, q=q)
    Gm = tree.explicit_jacobian(q)[[r.v_index for r in rotors]][:, [shin, foot]]
    tau_m = np.linalg.solve(Gm.T, tau_ind[[shin, foot]])
    link_torque.append(tau_ind[[shin, foot]])
    motor_torque.append(tau_m)
    power_error.append(tau_m @ v[[r.v_index for r in rotors]] - tau_ind[[shin, foot]] @ yd[[shin, foot]])
link_torque, motor_torque = np.array(link_torque), np.array(motor_torque)
print(f"motor power − link power: max {np.abs(power_error).max():.1e} W")
fig, ax = plt.subplots(2, 1, figsize=(7, 5), sharex=True)
ax[0].plot(t, link_torque[:, 0], label="shin")
ax[0].plot(t, link_torque[:, 1], label="foot")
ax[0].set_ylabel("τ_ind [N m]")
ax[1].plot(t, motor_torque[:, 0], label="rotor 1")
ax[1].plot(t, motor_torque[:, 1], label="rotor 2")
ax[1].set_ylabel("τ_m [N m]")
ax[1].set_xlabel("t [s]")
for a in ax:
    a.legend(fontsize=8)
ax[0].set_title("left knee–ankle differential: link torques and the motor torques that produce them", fontsize=9)
fig.tight_layout()

# %%
# A free swing: both legs released from a bent posture, integrated in the independent
# coordinates with C-ABA ([Chignoli23, Alg. 1]). The constraints hold by construction of
# q = γ(y) (the residual stays at round-off) and the energy is conserved.
y0 = np.zeros(tree.nyq)
for leg in ("left", "right"):
    y0[coordinates.index(f"{leg}-thigh_joint")] = -0.5
    y0[coordinates.index(f"{leg}-shin_joint")] = 0.8
q0, v0 = sd.spanning_state(model, y0, None)
res = simulate(model, q0, v0, 0.5, dt=2e-3, coordinates="independent")
print(f"energy drift {res.energy_drift:.1e} J, max constraint residual {res.constraint_drift:.1e}")
fig = res.plot(q_index=[model.joint(f"left-{n}_joint").q_index for n in ("thigh", "shin", "foot")],
               v_index=[model.joint(f"left-{n}_joint").v_index for n in ("thigh", "shin", "foot")])
plt.show()
