"""Robots from their descriptions: URDF files as sympy.physics.mechanics models.

``from_urdf(path)`` returns a :class:`RobotModel` (a codegen.examples.Model)
whose state follows Pinocchio's conventions for the same file. The importer
stays on the description side: it builds frames, points, rigid bodies and
loads, and knows nothing of the formulation or the generated code.
"""
from .builder import RobotModel, from_urdf
from .catalog import IIWA_URDF
from .urdf import URDFError, parse_urdf

__all__ = ["from_urdf", "IIWA_URDF", "RobotModel", "URDFError", "parse_urdf"]
