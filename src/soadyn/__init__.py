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

``import soadyn`` imports none of them (nor Numba, scipy or sympy): each public name is
imported on first use (PEP 562 ``__getattr__``, the table below), so that a program pays
only for what it calls. Numba is prepared for soadyn's kernels (its cache directory and
the patches of :mod:`soadyn.numba_patches`) when the first module with compiled code is
imported (:func:`soadyn.numba_cache.setup`).
"""
from __future__ import annotations

import importlib
import importlib.util
import sys
import types

__version__ = "0.1.0"

#: every public function and class → the module that defines it (imported on first use),
#: one line per name, grouped by module
_NAMES = {
    # soadyn.core
    "Model": ".core.model",
    "Workspace": ".core.compile",
    "neutral": ".core.configuration",
    "random_configuration": ".core.configuration",
    "integrate": ".core.configuration",
    "difference": ".core.configuration",
    "configuration_rate": ".core.configuration",
    "normalize": ".core.configuration",
    "ConstraintError": ".core.constraints",
    "HolonomicConstraint": ".core.constraints",
    "NonholonomicConstraint": ".core.constraints",
    "symbolic_constraint": ".core.constraints",
    "partition_hinges": ".core.partition",
    "merge_massless": ".core.partition",
    "partitioned_state": ".core.partition",
    "unpartitioned_state": ".core.partition",
    "ClosedChainError": ".core.status",
    "dynamic_parameters": ".core.parameters",
    "check_dynamic_parameters": ".core.parameters",
    # soadyn.io
    "load_urdf": ".io.urdf",
    "URDFError": ".io.urdf",
    "load_mjcf": ".io.mjcf",
    "MJCFError": ".io.mjcf",
    # soadyn.dynamics: tree algorithms
    "forward_kinematics": ".dynamics.kinematics",
    "body_placements": ".dynamics.kinematics",
    "frame_placement": ".dynamics.kinematics",
    "frame_velocity": ".dynamics.kinematics",
    "frame_acceleration": ".dynamics.kinematics",
    "frame_jacobian": ".dynamics.jacobians",
    "rnea": ".dynamics.rnea",
    "bias_forces": ".dynamics.rnea",
    "body_forces": ".dynamics.rnea",
    "generalized_gravity": ".dynamics.rnea",
    "aba": ".dynamics.aba",
    "mass_matrix": ".dynamics.crba",
    "rnea_derivatives": ".dynamics.derivatives",
    "aba_derivatives": ".dynamics.derivatives",
    "kinetic_energy": ".dynamics.energy",
    "potential_energy": ".dynamics.energy",
    "articulated_inertias": ".dynamics.innovations",
    "mass_matrix_inverse": ".dynamics.innovations",
    "log_det_mass_matrix": ".dynamics.innovations",
    "operational_space_compliance": ".dynamics.oscm",
    "operational_space_inertia": ".dynamics.oscm",
    "center_of_mass": ".dynamics.centroidal",
    "center_of_mass_jacobian": ".dynamics.centroidal",
    "centroidal_momentum_matrix": ".dynamics.centroidal",
    "centroidal_momentum": ".dynamics.centroidal",
    "centroidal_momentum_rate": ".dynamics.centroidal",
    "centroidal_inertia": ".dynamics.centroidal",
    "coriolis_matrix": ".dynamics.coriolis",
    "joint_torque_regressor": ".dynamics.regressors",
    "kinetic_energy_regressor": ".dynamics.regressors",
    "potential_energy_regressor": ".dynamics.regressors",
    "rollout": ".dynamics.rollout",
    # soadyn.graph
    "mass_matrix_sparsity": ".graph",
    # soadyn.closed: closed chains
    "constraint_jacobian": ".closed",
    "constraint_residual": ".closed",
    "constraint_acceleration_bias": ".closed",
    "close_loops": ".closed",
    "LoopClosureError": ".closed",
    "constrained_forward_dynamics": ".closed",
    "constrained_forward_dynamics_derivatives": ".closed",
    "constrained_inverse_dynamics": ".closed",
    # soadyn.closed.embedding: constraint embedding
    "cluster_tree": ".closed.embedding",
    "declare_cluster": ".closed.embedding",
    "independent_state": ".closed.embedding",
    "spanning_state": ".closed.embedding",
    "cluster_aba": ".closed.embedding",
    "cluster_rnea": ".closed.embedding",
    "cluster_efpa": ".closed.embedding",
    "cluster_mass_matrix": ".closed.embedding",
    "approximate_model": ".closed.embedding",
    "cluster_rnea_derivatives": ".closed.embedding",
    "cluster_aba_derivatives": ".closed.embedding",
    "cluster_torque_regressor": ".closed.embedding",
    "projected_rnea": ".closed.embedding",
    "projected_forward_dynamics": ".closed.embedding",
    "projected_efpa": ".closed.embedding",
    # soadyn.geometry: collision geometry and detection
    "Contacts": ".geometry",
    "collision_placements": ".geometry",
    "detect_contacts": ".geometry",
    "collision_distances": ".geometry",
    "Distances": ".geometry",
    # soadyn.contact: contact dynamics
    "delassus": ".contact",
    "solve_contacts": ".contact",
    "ContactSolution": ".contact",
    "ContactSolverWarning": ".contact",
    "ContactSettings": ".contact",
    "StepResult": ".contact",
    "step": ".contact",
    "ContactHistory": ".contact",
    # soadyn.simulate
    "simulate": ".simulate",
    "SimulationResult": ".simulate",
}

#: the public modules → their full names (``sd.joints`` is ``soadyn.core.joints``)
_MODULES = {
    "joints": ".core.joints",
    "spatial": ".core.spatial",
    "models": ".models",
    "operators": ".spec.operators",
    "graph": ".graph",
    "geometry": ".geometry",
    "plot": ".plot",  # (matplotlib is imported when a picture is drawn)
    "viewer": ".viewer",  # (viser is imported when a viewer is served)
    "compiled": ".compiled",  # (the kernels for your own Numba code)
}

__all__ = [*_NAMES, *_MODULES]


def __getattr__(name):
    """A public name, imported on first use and then kept in the package's namespace; a
    submodule (``sd.closed``, ``sd.kernels``) imported on first use as well."""
    if name in _NAMES:
        value = getattr(importlib.import_module(_NAMES[name], __name__), name)
    elif name in _MODULES:
        value = importlib.import_module(_MODULES[name], __name__)
    elif not name.startswith("__") and importlib.util.find_spec(f"{__name__}.{name}") is not None:
        return importlib.import_module(f".{name}", __name__)  # set on the package by the import itself
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))


class _Package(types.ModuleType):
    """soadyn's own module type, for one reason: importing a submodule sets the package's
    attribute of that name to the submodule, and ``soadyn.simulate`` is both a module and
    the public function ``sd.simulate``; the function keeps the name."""

    def __setattr__(self, name, value):
        if (name in _NAMES and isinstance(value, types.ModuleType)
                and value.__name__ == f"{__name__}.{name}"):
            return  # the submodule stays in sys.modules; the name is the function's
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
