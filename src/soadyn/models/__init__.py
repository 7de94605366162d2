"""Built-in models written in code: [CDI18]'s four examples, generated trees and closed chains."""
from .closed_chains import four_bar_chain, four_bar_linkage, planar_leg_linkage, rolling_disk, rssr_linkage
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
    """A built-in model by name (see ``BUILTIN``) with its default parameters."""
    try:
        return BUILTIN[name]()
    except KeyError:
        raise ValueError(f"name: unknown built-in model {name!r}; available: {sorted(BUILTIN)}") from None


__all__ = ["double_pendulum", "pendulum_on_cart", "satellite_with_arrays", "three_link_arm",
           "serial_chain", "branched_tree", "random_tree", "random_rigid_inertia", "get", "BUILTIN",
           "four_bar_linkage", "four_bar_chain", "planar_leg_linkage", "rssr_linkage", "rolling_disk"]
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
