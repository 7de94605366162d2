"""Suite-wide settings.

Hypothesis runs derandomized so that CI and every developer see the same examples and
``main`` stays green for reasons the code controls; set ``SOADYN_HYPOTHESIS=explore`` to
draw fresh examples instead (new failures found that way become regression tests).
"""
import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("SOADYN_HYPOTHESIS", "ci"))
