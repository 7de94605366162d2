"""Model file formats."""
from .mjcf import MJCFError, load_mjcf
from .urdf import URDFError, load_urdf

__all__ = ["load_urdf", "URDFError", "load_mjcf", "MJCFError"]
