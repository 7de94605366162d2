"""Constraint embedding [Chignoli23]: body clusters and the cluster connectivity tree
(:mod:`.clusters`), the constraints of a cluster in explicit form (:mod:`.cluster_joints`),
the packed form the kernels read (:mod:`.compiled`), the public cluster algorithms
C-RNEA, C-ABA, C-EFPA and the cluster mass matrix (:mod:`.algorithms`), their
derivatives (:mod:`.derivatives`), the regressor of the constrained dynamics in the
dynamic parameters (:mod:`.regressor`), and the
comparison methods of [Chignoli23, §II] (:mod:`.comparison`)."""
from .algorithms import (cluster_aba, cluster_efpa, cluster_mass_matrix, cluster_motion_subspaces, cluster_rnea,
                         embedding_accelerations, spanning_state)
from .clusters import (Cluster, ClusterTree, cluster_tree, declare_cluster, independent_state,
                       random_independent_state)
from .derivatives import cluster_aba_derivatives, cluster_rnea_derivatives
from .comparison import approximate_model, projected_efpa, projected_forward_dynamics, projected_rnea
from .regressor import cluster_torque_regressor

__all__ = ["cluster_aba", "cluster_efpa", "cluster_mass_matrix", "cluster_motion_subspaces", "cluster_rnea",
           "embedding_accelerations", "Cluster", "ClusterTree", "cluster_tree", "declare_cluster",
           "independent_state", "random_independent_state", "spanning_state", "approximate_model",
           "projected_efpa", "projected_forward_dynamics", "projected_rnea",
           "cluster_rnea_derivatives", "cluster_aba_derivatives", "cluster_torque_regressor"]
