"""The compiled narrow phase: one module per pair family, arrays in, contact points out.

Shapes arrive as their kind code and three numbers (:mod:`soadyn.core.shapes`), poses as a
rotation (3, 3) and a position (3,) in the world. :mod:`.frame` builds the contact frames
(t1, t2, n), normal last, that every contact carries.
"""
