# A package so that this folder's test_pinocchio.py gets a module name of its own
# (interop.test_pinocchio) should another folder hold a test_pinocchio.py.
