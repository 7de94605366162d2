"""Closed-chain dynamics.

A closed-chain system is a spanning tree plus constraints (``constraints``: loop joints,
couplings and user constraints, one representation for both methods):

* Cut-joint method (seed 001): constraint kinematics, loop closure, forward dynamics
  (``METHODS``: augmented, direct, projection) and inverse dynamics.
* Constraint embedding (seed 004; seed 002 §5–6): body clusters, cluster joints (the
  constraints inside each cluster in explicit form) and the cluster algorithms C-RNEA,
  C-ABA and C-EFPA (``clusters``, ``cluster_joints``, ``embedding``); forward dynamics
  as ``METHODS["embedding"]``.
"""
from .assembly import LoopClosureError, close_loops, independent_velocity_indices
from .constraints import (ConstraintError, ConstraintSet, HolonomicConstraint, NonholonomicConstraint,
                          constraint_set, symbolic_constraint)
from .forward import (METHODS, ConstrainedDynamicsResult, constrained_forward_dynamics, constraint_forces,
                      correction_accelerations, node_body_forces)
from .inverse import ConstrainedInverseDynamicsResult, constrained_inverse_dynamics
from .kinematics import (ConstraintState, constraint_acceleration_bias, constraint_jacobian,
                         constraint_residual, evaluate_constraints)

__all__ = ["ConstraintSet", "HolonomicConstraint", "NonholonomicConstraint", "constraint_set",
           "ConstraintError", "symbolic_constraint",
           "ConstraintState", "constraint_acceleration_bias", "constraint_jacobian",
           "constraint_residual", "evaluate_constraints", "close_loops", "LoopClosureError",
           "independent_velocity_indices", "METHODS", "constrained_forward_dynamics",
           "ConstrainedDynamicsResult", "constraint_forces", "node_body_forces",
           "correction_accelerations", "constrained_inverse_dynamics", "ConstrainedInverseDynamicsResult"]
