"""The specification: the dense SOA operators of a model (:mod:`.operators`) and of its
clusters (:mod:`.cluster_algebra`), numeric or symbolic. Short, readable and slow; the
compiled kernels are tested against it."""
