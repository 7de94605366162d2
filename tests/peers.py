"""Helpers to compare soadyn with Pinocchio on example-robot-data models.

Pinocchio orders spatial vectors linear-first and its free-flyer velocity as [v; ω];
URDF continuous joints are (cos θ, sin θ) there. The maps live in ``soadyn.peers``
(shared with the benchmarks); this module skips the tests when a peer is missing.
"""
from __future__ import annotations

import pytest

pin = pytest.importorskip("pinocchio")

from soadyn import peers as _peers  # noqa: E402
from soadyn.peers import ROBOTS, PinPair, swap_lin_ang  # noqa: E402,F401


def robots_dir():
    d = _peers.robots_dir()
    if d is None:
        pytest.skip("example-robot-data is not installed")
    return d


def robot_path(name):
    robots_dir()
    return _peers.robot_path(name)


def load_pair(name, floating=None):
    robots_dir()
    return _peers.load_pair(name, floating)
