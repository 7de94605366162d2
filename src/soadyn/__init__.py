"""soadyn — recursive multibody dynamics built on the Spatial Operator Algebra (SOA).

Quick reference (see the README and each function's docstring)::

    import soadyn as sd
    model = sd.load_urdf(path, floating_base=False)
    q = sd.random_configuration(model, rng)
    tau = sd.rnea(model, q, v, a)            # inverse dynamics
    a = sd.aba(model, q, v, tau)             # forward dynamics, O(N)
    M = sd.mass_matrix(model, q)             # composite rigid bodies (or method="jtmj")
    J = sd.frame_jacobian(model, q, "tool", reference="local")
    Gc = sd.constraint_jacobian(model, q)    # closed chains: loop joints, couplings, ...
    q, v = sd.close_loops(model, q, v)
    res = sd.constrained_forward_dynamics(model, q, v, tau)   # "augmented"; "direct", "projection", "embedding"
    Minv = sd.mass_matrix_inverse(model, q)  # M⁻¹ = [I − HψK]* D⁻¹ [I − HψK], O(N²)
    Lam = sd.operational_space_compliance(model, q, ["foot_l", "foot_r"])  # J M⁻¹ Jᵀ
    ops = sd.operators.sko(model, q, v)      # dense SOA operators (numeric or sympy)

Spatial vectors are angular-first ([ω; v], [n; f]) in body frames; bodies are numbered
parent-first; quaternions are (x, y, z, w).
"""
from . import _cache

_cache.configure()  # before any kernel is defined: see soadyn/_cache.py

from . import graph, joints, models, operators, spatial  # noqa: E402
from .closed import (HolonomicConstraint, LoopClosureError, NonholonomicConstraint, close_loops,
                     constrained_forward_dynamics, constrained_inverse_dynamics,
                     constraint_acceleration_bias, constraint_jacobian, constraint_residual)
from .dynamics._layout import Workspace
from .dynamics.aba import aba
from .dynamics.crba import mass_matrix
from .dynamics.energy import center_of_mass, kinetic_energy, potential_energy
from .dynamics.innovations import articulated_inertias, log_det_mass_matrix, mass_matrix_inverse
from .dynamics.jacobians import frame_jacobian
from .dynamics.kinematics import (body_placements, forward_kinematics, frame_acceleration,
                                  frame_placement, frame_velocity)
from .dynamics.oscm import operational_space_compliance, operational_space_inertia
from .dynamics.rnea import bias_forces, generalized_gravity, rnea
from .io.urdf import URDFError, load_urdf
from .joints import difference, integrate
from .model import Model, neutral, random_configuration
from .closed.clusters import cluster_tree, declare_cluster, independent_state, spanning_state
from .closed.comparison import (approximate_model, projected_efpa, projected_forward_dynamics,
                                projected_rnea)
from .closed.constraints import ConstraintError, symbolic_constraint
from .closed.embedding import cluster_aba, cluster_efpa, cluster_mass_matrix, cluster_rnea

__version__ = "0.1.0"

__all__ = [
    "Model", "Workspace", "load_urdf", "URDFError", "neutral", "random_configuration",
    "integrate", "difference", "forward_kinematics", "body_placements", "frame_placement",
    "frame_velocity", "frame_acceleration", "frame_jacobian", "rnea", "bias_forces",
    "generalized_gravity", "aba", "mass_matrix", "kinetic_energy", "potential_energy",
    "center_of_mass", "joints", "spatial", "models",
    "constraint_jacobian", "constraint_residual", "constraint_acceleration_bias", "close_loops",
    "LoopClosureError", "constrained_forward_dynamics", "constrained_inverse_dynamics",
    "HolonomicConstraint", "NonholonomicConstraint",
    "operators", "articulated_inertias", "mass_matrix_inverse", "log_det_mass_matrix",
    "operational_space_compliance", "operational_space_inertia",
    "graph", "cluster_tree", "declare_cluster", "independent_state", "spanning_state", "cluster_aba",
    "cluster_rnea", "cluster_efpa", "cluster_mass_matrix", "approximate_model",
    "projected_rnea", "projected_forward_dynamics", "projected_efpa", "ConstraintError", "symbolic_constraint",
]
