"""The public tree algorithms: thin functions that call their kernels
(:mod:`soadyn.kernels`) through the one call path of :mod:`soadyn.core.call`.

Guard rails for closed chains. The *dynamics* of a tree — ``aba``, ``rnea``,
``bias_forces``, ``generalized_gravity``, ``mass_matrix``, ``mass_matrix_inverse``,
``log_det_mass_matrix``, ``articulated_inertias``, ``apply_innovations_factor``,
``operational_space_compliance``, ``operational_space_inertia`` and ``eoscm_diagonal`` —
differ from those of the closed system when the model has loops, couplings or user
constraints, so on such a model these functions raise
:class:`~soadyn.core.status.ClosedChainError` (a ValueError) pointing to
``soadyn.constrained_forward_dynamics``, ``soadyn.constrained_inverse_dynamics`` and the
cluster functions ``soadyn.cluster_aba`` / ``soadyn.cluster_rnea``. The open spanning tree is
asked for explicitly: ``soadyn.aba(model.spanning_tree(), q, v, tau)`` (same bodies,
joints, frames and coordinates, no constraints; cached per model version).

Kinematics (``forward_kinematics``, ``frame_placement``, ``frame_velocity``,
``frame_acceleration``), Jacobians (``frame_jacobian``), energies (``kinetic_energy``,
``potential_energy``, ``center_of_mass``) and the operator products of
:mod:`soadyn.dynamics.spo` stay allowed on any model: at a state that satisfies the
constraints, the spanning tree's kinematics and energies are those of the closed system
(the SPO products are tree operators by definition, like :mod:`soadyn.operators`).
"""
