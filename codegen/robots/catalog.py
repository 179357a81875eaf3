"""Where robot descriptions are found: example-robot-data's URDFs, and the robots the
benchmarks use."""
from __future__ import annotations

import os
import sys

__all__ = ["example_robot_data", "BENCHMARK_ROBOTS", "IIWA_URDF"]

#: the KUKA LBR iiwa 14 of the rigid-body dynamics benchmark (GRiDBenchmarks' urdfs/,
#: unchanged, MIT: LICENSE-GRiDBenchmarks beside it), shipped so that the guide's
#: robot examples run from an install alone
IIWA_URDF = os.path.join(os.path.dirname(__file__), "descriptions", "iiwa.urdf")


def example_robot_data() -> str | None:
    """The robots/ folder of the example-robot-data package (``pip install
    example-robot-data``: its URDFs under cmeel.prefix/share/), or None."""
    for p in sys.path:
        root = os.path.join(p or ".", "cmeel.prefix", "share", "example-robot-data", "robots")
        if os.path.isdir(root):
            return root
    return None


#: name -> (where, path, floating_base, options): where "shared" (the rigid-body dynamics
#: benchmark's URDFs of Neuman et al. and GRiD, kept beside the project) or "erd"
#: (example-robot-data); options, from_urdf's. Atlas's utorso inertia is not positive
#: semidefinite as written, nor ANYmal's base inertia within the triangle inequality: they
#: are loaded as written, as Pinocchio and GRiD do. The
#: Panda's second finger moves on its own (Pinocchio's ABA refuses mimic joints).
BENCHMARK_ROBOTS = {
    "iiwa": ("shared", "iiwa.urdf", False, {}),
    "ur5": ("erd", "ur_description/urdf/ur5_robot.urdf", False, {}),
    "panda": ("erd", "panda_description/urdf/panda.urdf", False, {"mimic": False}),
    "hyq": ("shared", "hyq.urdf", False, {}),
    "solo12": ("erd", "solo_description/robots/solo12.urdf", True, {}),
    "anymal": ("erd", "anymal_b_simple_description/robots/anymal.urdf", True,
               {"check_inertia": False}),
    "atlas": ("shared", "atlas.urdf", False, {"check_inertia": False}),
    "talos": ("erd", "talos_data/robots/talos_reduced.urdf", True, {}),
}
