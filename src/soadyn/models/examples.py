"""The four hand-derived examples of [CDI18] ("Generalized Mass Matrix of MBS").

Each function builds the example as a :class:`~soadyn.Model` with its physical
parameters as arguments (SI units; inertias about the centre of mass, body axes).
The seed's single-axis joints and vectors d_i (joint i from joint ℘(i)) and s_i
(centre of mass from joint i) map onto joint placements and centres of mass.

Every parameter may be a sympy expression (masses, lengths, inertia entries): the
model is then symbolic and serves the operator layer (``soadyn.operators.sko``),
which yields the seed's mass matrices in closed form.
"""
from __future__ import annotations

import numpy as np

from ..core import joints as jt
from ..core import spatial as sp
from ..core.model import Model

__all__ = ["pendulum_on_cart", "double_pendulum", "satellite_with_arrays", "three_link_arm"]


def _vec(x):
    """A parameter vector as floats, or as an object array when it holds sympy expressions."""
    return np.array(x, dtype=object if sp.is_symbolic(x) else float)


def _diag(I):
    I = _vec(I)
    return np.diag(I) if I.shape == (3,) else I


def _offset(d):
    return (np.eye(3), _vec(d))


def pendulum_on_cart(m1=1.0, m2=0.5, length=0.8, I2=(0.01, 0.01, 0.01), gravity=(0.0, -9.81, 0.0)):
    """Example 1, pendulum with a moving base: a cart sliding along x (mass ``m1``) and a
    pendulum hinged about z at the cart origin (d₂ = 0) with its centre of mass at
    s₂ = L(sin θ e_x − cos θ e_y). q = [x, θ]; gravity along −y by default.

    [CDI18]: M = [[m1 + m2, m2 L cos θ], [m2 L cos θ, I2zz + m2 L²]].
    """
    m = Model("pendulum_on_cart", gravity=gravity)
    m.add_body("cart", jt.Prismatic("x"), None, mass=m1, joint_name="x")
    m.add_body("pendulum", jt.Revolute("z"), "cart", mass=m2, com=(0.0, -length, 0.0), inertia=_diag(I2),
               joint_name="theta")
    return m


def double_pendulum(m1=1.0, m2=1.0, l1=1.0, c1=0.5, c2=0.5, I1=(0.08, 0.08, 0.005),
                    I2=(0.08, 0.08, 0.005), gravity=(0.0, 0.0, -9.81)):
    """Example 2, double pendulum: two links hinged about x, hanging along −z.

    Joint 1 at the origin; joint 2 at d₂ = (0, 0, −l1) on link 1; centres of mass at
    s₁ = (0, 0, −c1) and s₂ = (0, 0, −c2). q = [θ₁, θ₂].
    """
    m = Model("double_pendulum", gravity=gravity)
    m.add_body("link1", jt.Revolute("x"), None, mass=m1, com=(0.0, 0.0, -c1), inertia=_diag(I1),
               joint_name="theta1")
    m.add_body("link2", jt.Revolute("x"), "link1", _offset((0, 0, -l1)), mass=m2,
               com=(0.0, 0.0, -c2), inertia=_diag(I2), joint_name="theta2")
    m.add_frame("tip", "link2", _offset((0, 0, -2 * c2)))
    return m


def satellite_with_arrays(m1=500.0, I1=(400.0, 350.0, 300.0), s1=(0.0, 0.0, 0.1),
                          m2=30.0, I2=(20.0, 2.0, 22.0), d2=(0.0, 1.2, 0.0), s2=(0.0, 2.5, 0.0),
                          m3=30.0, I3=(20.0, 2.0, 22.0), d3=(0.0, -1.2, 0.0), s3=(0.0, -2.5, 0.0),
                          gravity=(0.0, 0.0, 0.0)):
    """Example 3, a satellite (free body 1, reference point η₁ at its body origin, centre of
    mass at s₁) with two solar arrays hinged about the satellite's x axis at d₂, d₃ (centres
    of mass at s₂, s₃ from their hinges). q = [p; quaternion; θ₂; θ₃], v = [ω; v; θ̇₂; θ̇₃].
    No gravity by default.
    """
    m = Model("satellite_with_arrays", gravity=gravity)
    m.add_body("bus", jt.Free(), None, mass=m1, com=s1, inertia=_diag(I1), joint_name="bus")
    m.add_body("array_left", jt.Revolute("x"), "bus", _offset(d2), mass=m2,
               com=s2, inertia=_diag(I2), joint_name="theta2")
    m.add_body("array_right", jt.Revolute("x"), "bus", _offset(d3), mass=m3,
               com=s3, inertia=_diag(I3), joint_name="theta3")
    return m


def three_link_arm(m=(3.0, 2.0, 1.0), I=((0.02, 0.02, 0.01), (0.05, 0.05, 0.004), (0.02, 0.02, 0.002)),
                   d2=(0.0, 0.0, 0.3), d3=(0.0, 0.0, 0.5), s=((0.0, 0.0, 0.15), (0.0, 0.0, 0.25), (0.0, 0.0, 0.2)),
                   gravity=(0.0, 0.0, -9.81)):
    """Example 4, a 3-link arm: joint 1 about z at the origin, joints 2 and 3 about x at
    d₂ and d₃ from the previous joint; centres of mass at s_i from joint i. q = [θ₁, θ₂, θ₃].
    """
    mod = Model("three_link_arm", gravity=gravity)
    mod.add_body("link1", jt.Revolute("z"), None, mass=m[0], com=s[0], inertia=_diag(I[0]), joint_name="theta1")
    mod.add_body("link2", jt.Revolute("x"), "link1", _offset(d2), mass=m[1], com=s[1],
                 inertia=_diag(I[1]), joint_name="theta2")
    mod.add_body("link3", jt.Revolute("x"), "link2", _offset(d3), mass=m[2], com=s[2],
                 inertia=_diag(I[2]), joint_name="theta3")
    mod.add_frame("tool", "link3", (np.eye(3), 2 * _vec(s[2])))
    return mod
