"""soadyn — recursive multibody dynamics built on the Spatial Operator Algebra (SOA).

Quick reference (see the README and each function's docstring)::

    import soadyn as sd
    model = sd.load_urdf(path, floating_base=False)
    model = sd.load_mjcf(path_or_xml)          # MuJoCo's MJCF, through mujoco's compiler
    q = sd.random_configuration(model, rng)
    tau = sd.rnea(model, q, v, a)            # inverse dynamics
    a = sd.aba(model, q, v, tau)             # forward dynamics, O(N)
    pm = sd.partition_hinges(model)          # multi-dof hinges as 1-dof sub-hinges + mass-less bodies
    qs, vs = sd.rollout(model, q0, v0, tau_seq, dt, "rk4")  # (T, nv) controls -> (T+1, nq), (T+1, nv)
    res = sd.simulate(model, q0, v0, t_final, dt)  # SimulationResult: t, q, v, energy (closed chains too)
    M = sd.mass_matrix(model, q)             # composite rigid bodies (or method="jtmj")
    J = sd.frame_jacobian(model, q, "tool", reference="local")
    Gc = sd.constraint_jacobian(model, q)    # closed chains: loop joints, couplings, ...
    q, v = sd.close_loops(model, q, v)
    res = sd.constrained_forward_dynamics(model, q, v, tau)   # "augmented"; "direct", "projection", "embedding"
    a = sd.aba(model.spanning_tree(), q, v, tau)  # tree functions refuse constrained models: ask for the tree
    Minv = sd.mass_matrix_inverse(model, q)  # [I − HψK]* D⁻¹ [I − HψK]; method="ltdl": sparse LᵀDL
    Lam = sd.operational_space_compliance(model, q, ["foot_l", "foot_r"])  # J M⁻¹ Jᵀ
    ops = sd.operators.sko(model, q, v)      # dense SOA operators (numeric or sympy)
    sd.viewer.show(model, q)                 # in the browser (viser, extra 'viewer'); trajectory=sd.simulate(...)

Spatial vectors are angular-first ([ω; v], [n; f]) in body frames; bodies are numbered
parent-first; quaternions are (x, y, z, w). The package is layered, each floor importing
only the floors below it: ``core`` (model, joints, spatial algebra, configuration space,
constraint descriptions, the compiled form and its cache, the call path) < ``kernels``
(Numba) < ``dynamics`` (tree functions) < ``closed`` (closed chains) < ``spec`` (the
dense operators) < ``simulate``, ``io``, ``models``, ``cli``.
"""
from . import numba_cache, numba_patches

numba_cache.configure()  # before any kernel is defined: see soadyn/numba_cache.py
numba_cache.announce_compilations()  # one line on stderr when a kernel compiles (a cache miss)
numba_patches.compile_for_plain_types()  # one version of a helper, whatever constants it is called with
numba_patches.link_helpers_only()  # machine code for the kernels Python calls, not for each helper under them
numba_patches.remember_call_types()  # each operation's type resolved once per argument types
numba_patches.lighter_passes()  # soadyn's IR optimized in full once, inside the kernels that link it
numba_patches.keep_struct_values()  # the named views returned whole, not rebuilt field by field
numba_patches.pass_views_whole()  # the named views passed whole to the always-inlined helpers
numba_patches.internal_helpers()  # a kernel's helpers internal to its module: inlined, trimmed
numba_patches.return_views_from_helpers()  # helpers compiled without reference counting may return array views

from . import geometry, graph, models  # noqa: E402
from .graph import mass_matrix_sparsity  # noqa: E402
from .closed import (LoopClosureError, close_loops, constrained_forward_dynamics,  # noqa: E402
                     constrained_forward_dynamics_derivatives,
                     constrained_inverse_dynamics, constraint_acceleration_bias, constraint_jacobian,
                     constraint_residual)
from .closed.embedding import (approximate_model, cluster_aba, cluster_aba_derivatives, cluster_efpa,  # noqa: E402
                               cluster_mass_matrix, cluster_rnea, cluster_rnea_derivatives, cluster_tree, declare_cluster, independent_state,
                               projected_efpa, projected_forward_dynamics, projected_rnea, spanning_state)
from .core import joints, spatial  # noqa: E402
from .core.compile import Workspace  # noqa: E402
from .core.configuration import (configuration_rate, difference, integrate, neutral,  # noqa: E402
                                 normalize, random_configuration)
from .core.constraints import (ConstraintError, HolonomicConstraint, NonholonomicConstraint,  # noqa: E402
                               symbolic_constraint)
from .core.model import Model  # noqa: E402
from .core.partition import merge_massless, partition_hinges, partitioned_state, unpartitioned_state  # noqa: E402
from .core.status import ClosedChainError  # noqa: E402
from .geometry import Contacts, Distances, collision_distances, collision_placements, detect_contacts  # noqa: E402
from .contact import (ContactSettings, ContactSolution, ContactSolverWarning, StepResult, delassus,  # noqa: E402
                      solve_contacts, step)
from .dynamics.aba import aba  # noqa: E402
from .dynamics.crba import mass_matrix  # noqa: E402
from .dynamics.derivatives import aba_derivatives, rnea_derivatives  # noqa: E402
from .dynamics.energy import kinetic_energy, potential_energy  # noqa: E402
from .dynamics.innovations import articulated_inertias, log_det_mass_matrix, mass_matrix_inverse  # noqa: E402
from .dynamics.jacobians import frame_jacobian  # noqa: E402
from .dynamics.kinematics import (body_placements, forward_kinematics, frame_acceleration,  # noqa: E402
                                  frame_placement, frame_velocity)
from .dynamics.oscm import operational_space_compliance, operational_space_inertia  # noqa: E402
# centroidal dynamics, the Coriolis matrix, dynamic parameters and regressors (issue 42)
from .core.parameters import check_dynamic_parameters, dynamic_parameters  # noqa: E402
from .dynamics.centroidal import (center_of_mass, center_of_mass_jacobian, centroidal_inertia,  # noqa: E402
                                  centroidal_momentum, centroidal_momentum_matrix, centroidal_momentum_rate)
from .dynamics.coriolis import coriolis_matrix  # noqa: E402
from .dynamics.regressors import (joint_torque_regressor, kinetic_energy_regressor,  # noqa: E402
                                  potential_energy_regressor)
from .closed.embedding import cluster_torque_regressor  # noqa: E402
from .dynamics.rnea import bias_forces, body_forces, generalized_gravity, rnea  # noqa: E402
from .dynamics.rollout import rollout  # noqa: E402
from .io.mjcf import MJCFError, load_mjcf  # noqa: E402
from .io.urdf import URDFError, load_urdf  # noqa: E402
from .spec import operators  # noqa: E402
from .simulate import SimulationResult, simulate  # noqa: E402  (the function; its module: sys.modules["soadyn.simulate"])
from . import plot  # noqa: E402  (matplotlib is imported when a picture is drawn)
from . import viewer  # noqa: E402  (viser is imported when a viewer is served)
from . import compiled  # noqa: E402  (the kernels for your own Numba code)

__version__ = "0.1.0"

__all__ = [
    "Model", "Workspace", "load_urdf", "URDFError", "load_mjcf", "MJCFError", "neutral", "random_configuration",
    "integrate", "difference", "configuration_rate", "normalize", "forward_kinematics", "body_placements", "frame_placement",
    "frame_velocity", "frame_acceleration", "frame_jacobian", "rnea", "bias_forces", "body_forces",
    "generalized_gravity", "aba", "mass_matrix", "rnea_derivatives", "aba_derivatives", "kinetic_energy", "potential_energy",
    "center_of_mass", "joints", "spatial", "models",
    "constraint_jacobian", "constraint_residual", "constraint_acceleration_bias", "close_loops",
    "LoopClosureError", "constrained_forward_dynamics", "constrained_forward_dynamics_derivatives",
    "constrained_inverse_dynamics",
    "HolonomicConstraint", "NonholonomicConstraint",
    "operators", "articulated_inertias", "mass_matrix_inverse", "log_det_mass_matrix",
    "operational_space_compliance", "operational_space_inertia",
    "graph", "mass_matrix_sparsity", "cluster_tree", "declare_cluster", "independent_state", "spanning_state", "cluster_aba",
    "cluster_rnea", "cluster_efpa", "cluster_mass_matrix", "approximate_model",
    "cluster_rnea_derivatives", "cluster_aba_derivatives",
    "projected_rnea", "projected_forward_dynamics", "projected_efpa", "ConstraintError", "ClosedChainError", "symbolic_constraint",
    "geometry", "Contacts", "collision_placements", "detect_contacts", "collision_distances", "Distances",
    "delassus", "solve_contacts", "ContactSolution", "ContactSolverWarning", "step", "StepResult", "ContactSettings",
    "rollout", "simulate", "SimulationResult", "plot", "viewer", "compiled", "partition_hinges", "merge_massless", "partitioned_state", "unpartitioned_state",
    "center_of_mass_jacobian", "centroidal_momentum_matrix", "centroidal_momentum", "centroidal_momentum_rate",
    "centroidal_inertia", "coriolis_matrix", "dynamic_parameters", "check_dynamic_parameters", "joint_torque_regressor",
    "kinetic_energy_regressor", "potential_energy_regressor", "cluster_torque_regressor",
]
