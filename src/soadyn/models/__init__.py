"""Built-in models written in code: [CDI18]'s four examples, generated trees and closed chains."""
from .closed_chains import (four_bar_chain, four_bar_linkage, planar_leg_linkage, random_closed_chain, rolling_disk,
                            rssr_linkage)
from .examples import double_pendulum, pendulum_on_cart, satellite_with_arrays, three_link_arm
from .trees import branched_tree, random_rigid_inertia, random_tree, serial_chain

BUILTIN = {
    "double_pendulum": double_pendulum,
    "pendulum_on_cart": pendulum_on_cart,
    "satellite_with_arrays": satellite_with_arrays,
    "three_link_arm": three_link_arm,
    "serial_chain": lambda: serial_chain(6),
    "branched_tree": branched_tree,
}


def get(name):
    """A built-in model by name (see ``BUILTIN``, described in ``DESCRIPTIONS``) with its
    default parameters."""
    try:
        factory = BUILTIN[name]
    except (KeyError, TypeError):
        raise ValueError(f"name: unknown built-in model {name!r}; expected one of: {', '.join(BUILTIN)}") from None
    return factory()


__all__ = ["double_pendulum", "pendulum_on_cart", "satellite_with_arrays", "three_link_arm",
           "serial_chain", "branched_tree", "random_tree", "random_rigid_inertia", "get", "BUILTIN", "DESCRIPTIONS", "listing",
           "four_bar_linkage", "four_bar_chain", "planar_leg_linkage", "rssr_linkage", "rolling_disk",
           "random_closed_chain"]
from .loop_robots import belt_chain, geared_chain, jvrc1_humanoid, mini_cheetah, mit_humanoid, mit_humanoid_leg, tello

BUILTIN.update({
    "mini_cheetah": mini_cheetah,
    "mit_humanoid": mit_humanoid,
    "mit_humanoid_leg": mit_humanoid_leg,
    "tello": tello,
    "jvrc1_humanoid": jvrc1_humanoid,
    "geared_chain": geared_chain,
    "belt_chain": belt_chain,
    "four_bar_linkage": four_bar_linkage,
    "planar_leg_linkage": planar_leg_linkage,
})
__all__ += ["mini_cheetah", "mit_humanoid", "mit_humanoid_leg", "tello", "jvrc1_humanoid", "geared_chain",
            "belt_chain"]
from .feet import FOOT_SPHERES, add_foot_spheres  # noqa: E402  (after the robots it knows)

__all__ += ["add_foot_spheres", "FOOT_SPHERES"]

#: one line per built-in model (``soadyn models`` prints them)
DESCRIPTIONS = {
    "double_pendulum": "[CDI18] example 2: a double pendulum swinging about x (the demo's default)",
    "pendulum_on_cart": "[CDI18] example 1: a pendulum hinged on a cart that slides along x",
    "satellite_with_arrays": "[CDI18] example 3: a free-floating satellite with two hinged solar arrays, no gravity",
    "three_link_arm": "[CDI18] example 4: a 3-link arm, one joint about z and two about x",
    "serial_chain": "a serial chain of 6 uniform rods, hinges about z, y, x in turn (serial_chain(n): n links)",
    "branched_tree": "a balanced binary tree of rods, 3 levels (branched_tree(depth, branching))",
    "mini_cheetah": "MIT Mini Cheetah: floating base, 12 leg joints each driven by a geared rotor",
    "mit_humanoid": "MIT Humanoid: floating base, geared rotors, knee-ankle belt transmissions",
    "mit_humanoid_leg": "one MIT Humanoid leg on a fixed hip: geared rotors and the knee-ankle belt",
    "tello": "UIUC Tello humanoid with arms: hip and knee-ankle differentials driven by rotors",
    "jvrc1_humanoid": "JVRC-1 humanoid with geared rotors on its waist, leg, shoulder and elbow joints",
    "geared_chain": "a planar chain of 12 links, each driven by a geared rotor on the previous link",
    "belt_chain": "a planar chain of 12 links in pairs, driven by rotors through belt transmissions",
    "four_bar_linkage": "a planar crank-rocker four-bar linkage (one loop joint)",
    "planar_leg_linkage": "a planar leg: a thigh and a parallelogram four-bar that drives the foot",
}


def listing():
    """The built-in models, one line each: name, size (bodies, nv), tree or closed chain, and
    its description (``soadyn models``, ``python -m soadyn.models``). Builds every model."""
    width = max(map(len, BUILTIN))
    lines = []
    for name, factory in BUILTIN.items():
        try:
            m = factory()
        except ImportError as e:  # a dependency missing from a broken install
            size = f"(needs {e.name or 'an optional package'}, not installed)"
        else:
            kind = "closed chain" if m.has_constraints else "tree"
            size = f"{m.nbodies:>2} bodies, nv = {m.nv:>2}, {kind}"
        lines.append(f"{name:<{width}}  {size:<38}  {DESCRIPTIONS.get(name, '')}")
    return "\n".join(lines)
