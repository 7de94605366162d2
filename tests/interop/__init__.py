# A package so that this folder's test_pinocchio.py and tests/dynamics/test_pinocchio.py get
# distinct module names (interop.test_pinocchio) when pytest collects both in one run.
