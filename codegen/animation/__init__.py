"""See the motion: a run played in 3-D in the browser (three.js), from outputs compiled
with the model.

    out = pose_outputs(model)                       # every drawn frame and point
    mod = generate(ga, 'disk', outputs={**out, 'E': 'kinetic_energy'})
    run = mod.simulate((0, 5), x0, p, t_eval=np.arange(0, 5, 1 / 60))
    codegen.animate(mod, run, 'disk.html', outputs=['E'])   # or run.animate('disk.html')

``generate_animated(description, name, ...)`` forms, adds the pose outputs and
generates in one call. Shapes: Box, Sphere, Cylinder, Mesh (codegen.description.shapes).
"""
from .page import THREE_VERSION, animate
from .generate import generate_animated
from .poses import pose_outputs
from ..description.shapes import Box, Cylinder, Mesh, Sphere
from .urdf import urdf_shapes

__all__ = ["animate", "pose_outputs", "generate_animated", "Box", "Sphere", "Cylinder", "Mesh",
           "urdf_shapes", "THREE_VERSION"]

