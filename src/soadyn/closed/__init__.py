"""Closed-chain dynamics: a spanning tree plus constraints (described in
:mod:`soadyn.core.constraints`).

* :mod:`.constraint_set` packs a model's constraints; :mod:`.kinematics` evaluates them
  (G_c, 𝔘, 𝔘̊, 𝔡); :mod:`.assembly` closes the loops (positions and velocities).
* Cut-joint method [Jain24]: :mod:`.cut_joint` (augmented, direct, projection) and
  :mod:`.inverse` (inverse dynamics).
* Constraint embedding [Chignoli23]: :mod:`.embedding` (clusters, cluster joints, C-RNEA,
  C-ABA, C-EFPA).
* :mod:`.forward`: ``constrained_forward_dynamics`` with every method (``METHODS``);
  :mod:`.forward_derivatives`: its derivatives through the KKT system.
"""
from .assembly import LoopClosureError, close_loops, independent_velocity_indices
from .constraint_set import ConstraintSet, constraint_set
from .cut_joint import constraint_forces, correction_accelerations, node_body_forces
from .forward import METHODS, ConstrainedDynamicsResult, constrained_forward_dynamics, default_method
from .forward_derivatives import constrained_forward_dynamics_derivatives
from .inverse import ConstrainedInverseDynamicsResult, constrained_inverse_dynamics
from .kinematics import (ConstraintState, constraint_acceleration_bias, constraint_jacobian,
                         constraint_residual, evaluate_constraints)

__all__ = ["ConstraintSet", "constraint_set", "ConstraintState", "constraint_acceleration_bias",
           "constraint_jacobian", "constraint_residual", "evaluate_constraints", "close_loops", "LoopClosureError",
           "independent_velocity_indices", "METHODS", "constrained_forward_dynamics",
           "constrained_forward_dynamics_derivatives",
           "ConstrainedDynamicsResult", "default_method", "constraint_forces", "node_body_forces",
           "correction_accelerations", "constrained_inverse_dynamics", "ConstrainedInverseDynamicsResult"]
