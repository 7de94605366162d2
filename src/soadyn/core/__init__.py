"""The model and what every other layer builds on: spatial algebra, joint types and their
kernels, the configuration space, constraint descriptions, the versioned Model, its flat
array form with named views, the one cache of derived data and the one call path into
compiled code. Imports nothing from the rest of the package."""
