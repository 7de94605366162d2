"""The public tree algorithms: thin functions that call their kernels
(:mod:`soadyn.kernels`) through the one call path of :mod:`soadyn.core.call`."""
