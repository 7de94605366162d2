"""Bridges to other multibody libraries (optional dependencies, imported lazily).

* :mod:`soadyn.interop.pinocchio` — models and states between soadyn and Pinocchio
  (PyPI ``pin``): ``from soadyn.interop import pinocchio as sdpin``.

Importing this package or its modules does not import the peer library; the functions
that need it import it when called and raise an ImportError naming the package to
install when it is missing.
"""
