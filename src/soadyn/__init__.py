"""soadyn — recursive multibody dynamics built on the Spatial Operator Algebra (SOA).

Quick reference (see the README and each function's docstring)::

    import soadyn as sd
    model = sd.load_urdf(path, floating_base=False)
    q = sd.random_configuration(model, rng)
    tau = sd.rnea(model, q, v, a)            # inverse dynamics
    a = sd.aba(model, q, v, tau)             # forward dynamics, O(N)
    M = sd.mass_matrix(model, q)             # composite rigid bodies (or method="jtmj")
    J = sd.frame_jacobian(model, q, "tool", reference="local")

Spatial vectors are angular-first ([ω; v], [n; f]) in body frames; bodies are numbered
parent-first; quaternions are (x, y, z, w).
"""
from . import graph, joints, models, spatial
from .dynamics._layout import Workspace
from .dynamics.aba import aba
from .dynamics.crba import mass_matrix
from .dynamics.energy import center_of_mass, kinetic_energy, potential_energy
from .dynamics.jacobians import frame_jacobian
from .dynamics.kinematics import (body_placements, forward_kinematics, frame_acceleration,
                                  frame_placement, frame_velocity)
from .dynamics.rnea import bias_forces, generalized_gravity, rnea
from .io.urdf import URDFError, load_urdf
from .joints import difference, integrate
from .model import Model, neutral, random_configuration
from .closed.clusters import cluster_tree, declare_cluster, independent_state, spanning_state
from .closed.comparison import (approximate_model, projected_efpa, projected_forward_dynamics,
                                projected_rnea)
from .closed.cluster_joints import ConstraintError, ImplicitConstraint, add_constraint, symbolic_constraint
from .closed.embedding import (cluster_aba, cluster_efpa, cluster_mass_matrix, cluster_rnea,
                               embedding_forward_dynamics)

__version__ = "0.1.0"

__all__ = [
    "Model", "Workspace", "load_urdf", "URDFError", "neutral", "random_configuration",
    "integrate", "difference", "forward_kinematics", "body_placements", "frame_placement",
    "frame_velocity", "frame_acceleration", "frame_jacobian", "rnea", "bias_forces",
    "generalized_gravity", "aba", "mass_matrix", "kinetic_energy", "potential_energy",
    "center_of_mass", "joints", "spatial", "models",
    "graph", "cluster_tree", "declare_cluster", "independent_state", "spanning_state", "cluster_aba",
    "cluster_rnea", "cluster_efpa", "cluster_mass_matrix", "embedding_forward_dynamics", "approximate_model",
    "projected_rnea", "projected_forward_dynamics", "projected_efpa", "ConstraintError", "ImplicitConstraint",
    "add_constraint", "symbolic_constraint",
]
