"""``python -m soadyn.models``: the built-in models, one line each (as ``soadyn models``)."""
from . import listing

print(listing())
