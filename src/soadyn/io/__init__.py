"""Model file formats."""
from .urdf import URDFError, load_urdf

__all__ = ["load_urdf", "URDFError"]
