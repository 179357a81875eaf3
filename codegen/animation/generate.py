"""generate() with a description's animation outputs, in one call."""
from __future__ import annotations

from ..formulation.appell import GibbsAppellMethod
from ..pipeline.build import generate
from ..description.model import Model
from .poses import pose_outputs

__all__ = ["generate_animated"]


def generate_animated(description, name: str, *, outputs=None, frames=(), points=(),
                      anchors=None, **generate_kwargs):
    """generate() with the pose outputs of ``description`` (a codegen.examples.Model or a
    formed GibbsAppellMethod) added to ``outputs``. A Model is formed with
    GibbsAppellMethod first, and its own outputs (a beam's tip deflection) come along."""
    poses = pose_outputs(description, frames=frames, points=points, anchors=anchors)
    own = dict(description.outputs) if isinstance(description, Model) else {}
    eom = GibbsAppellMethod(**description.kwargs) if isinstance(description, Model) else description
    return generate(eom, name, outputs={**poses, **own, **(outputs or {})}, **generate_kwargs)
