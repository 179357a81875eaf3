"""The formulation: :class:`GibbsAppellMethod` (the KanesMethod-compatible facade) and what forms
S, M and F from a description: kinematics, motions, relative velocities, constraints, the tree of
bodies, the public matrices, linearization, and the hand-off to :mod:`codegen.equations`.
"""
