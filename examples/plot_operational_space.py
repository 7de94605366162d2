"""
Operational-space compliance of a humanoid's feet and hands
===========================================================

The operational-space compliance Ω = J M⁻¹ Jᵀ of a set of frames says how each frame
accelerates under a unit force or moment applied at any of them ([Jain24], "Focus on Ω");
its inverse is the operational-space inertia, the mass a contact feels. For the MIT
Humanoid (floating base, every joint driven by a geared rotor, knee and ankle by a belt)
the rotors are bodies in kinematic loops: with the cluster tree, C-EFPA ([Chignoli23,
§VIII]) computes Ω = J (GᵀMG)⁻¹ Jᵀ exactly in the independent coordinates. Compared here
with the reflected-inertia approximation and with the robot without its rotors (the
comparison methods of [Chignoli23, §II-E]).
"""
import matplotlib.pyplot as plt
import numpy as np

import soadyn as sd

model = sd.models.get("mit_humanoid")
tree = sd.cluster_tree(model)
frames = ["right_foot", "left_foot", "right_hand", "left_hand"]
approximate = sd.approximate_model(model)  # the joints' tree with the reflected rotor inertia
no_rotors = sd.approximate_model(model, reflected=False)

# %%
# A standing posture with bent knees, in the independent coordinates y (floating base
# first: position and quaternion (x, y, z, w)). Ω stacks the four frames' 6 × 6 blocks,
# each in the frame's own axes, angular rows first ([ω; v]).
position = {}  # the index in y of each independent joint's first coordinate
for cluster in tree:
    k = cluster.y_q.start
    for name in cluster.independent_joints:
        position[name] = k
        k += model.joint(name).nq
y, _ = sd.independent_state(model, sd.neutral(model), None)


def bend(y, knee):
    """y with both legs in a crouch: the knees bent by ``knee``, hip and ankle by −knee/2."""
    y = y.copy()
    for leg in ("right", "left"):
        y[position[f"{leg}_hipx_to_hipy_link"]] = -knee / 2
        y[position[f"{leg}_hipy_to_knee_link"]] = knee
        y[position[f"{leg}_knee_to_ankle"]] = -knee / 2
    return y


y = bend(y, 0.8)
print(tree.summary().splitlines()[0])
Omega = sd.cluster_efpa(model, y, frames)
fig, ax = plt.subplots(figsize=(5.6, 5))
image = ax.imshow(np.log10(np.abs(Omega) + 1e-12), cmap="magma", vmin=-6)
ax.set_xticks(np.arange(3, 24, 6), frames, fontsize=7)
ax.set_yticks(np.arange(3, 24, 6), frames, fontsize=7)
for k in range(1, 4):
    ax.axhline(6 * k - 0.5, color="w", lw=0.5)
    ax.axvline(6 * k - 0.5, color="w", lw=0.5)
fig.colorbar(image, ax=ax, label="log10 |Ω_ij|")
ax.set_title("MIT Humanoid: Ω of both feet and hands (C-EFPA)\nthe limbs couple through the floating base",
             fontsize=9)
fig.tight_layout()

# %%
# What a contact at the frame feels: the effective mass along the frame's z axis,
# 1/Ω_zz of the linear rows, and the effective inertia about its z axis, 1/Ω of the
# angular rows. Without the rotors, a bent leg lets the foot move along z by turning light
# links; with them, every joint that moves turns a rotor N times faster (gear ratio N),
# which resists with about N² times its own inertia: the mass the foot pushes against
# grows accordingly. The reflected inertia captures most of that, not all: it adds a
# constant to the joint inertias, while the exact rotors are bodies with their own mass and
# inertia, carried by the links they sit on and coupled to those links' motion.
methods = {"exact (C-EFPA)": lambda y: sd.cluster_efpa(model, y, frames),
           "reflected inertia": lambda y: approximate.efpa(y, frames),
           "no rotors": lambda y: no_rotors.efpa(y, frames)}
results = {name: f(y) for name, f in methods.items()}
print(f"{'frame':12s}" + "".join(f"{n:>22s}" for n in methods))
for i, frame in enumerate(frames):
    mass = "".join(f"{1 / O[6 * i + 5, 6 * i + 5]:14.2f} kg" + " " * 5 for O in results.values())
    inertia = "".join(f"{1 / O[6 * i + 2, 6 * i + 2]:14.4f} kg m²" for O in results.values())
    print(f"{frame:12s}{mass}\n{'':12s}{inertia}")

# %%
# The tree functions compute the same quantity for a tree in O(N + m²)
# (:func:`soadyn.operational_space_compliance`, [Jain23p, eq. 21–25]): on the joints' tree
# without rotors it equals the "no rotors" comparison.
tree_only = sd.operational_space_compliance(no_rotors.model, y, frames)
print(f"tree OSC vs the no-rotor EFPA: max difference {np.abs(tree_only - results['no rotors']).max():.1e}")

# %%
# The right foot's effective mass and inertia along and about its z axis as the legs
# crouch: exact, with the reflected inertia, and without rotors.
knees = np.linspace(0.0, 1.6, 17)
curves = {name: np.array([f(bend(y, k))[[5, 2], [5, 2]] for k in knees]) for name, f in methods.items()}
fig, ax = plt.subplots(1, 2, figsize=(8.4, 3.6))
for name, c in curves.items():
    ax[0].plot(knees, 1 / c[:, 0], marker="o", ms=3, label=name)
    ax[1].plot(knees, 1 / c[:, 1], marker="o", ms=3, label=name)
for a in ax:
    a.set_xlabel("knee angle [rad] (hips and ankles at −knee/2)")
ax[0].set_ylabel("right foot: 1/Ω_zz, linear [kg]")
ax[1].set_ylabel("right foot: 1/Ω_zz, angular [kg m²]")
ax[0].set_yscale("log")
ax[0].legend(fontsize=8)
fig.tight_layout()
plt.show()
