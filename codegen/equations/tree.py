"""The bodies as a tree of joints, as the equations carry it (``EquationsOfMotion.tree``):
each node's speeds, parent, spatial rows, subspace, inertia and bias, and its transport from
its parent. The formulation finds it (codegen.formulation.tree); the tree algorithms read it."""
from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["TreeNode", "Tree"]


@dataclass
class TreeNode:
    speeds: list        # the speeds this body's joint owns (one or more)
    parent: int         # index of the parent node, -1 for a root
    rows: list          # spatial rows (0-2 angular, 3-5 linear) the body can move in
    s: list             # Γ_b[rows, speeds]: len(rows) x len(speeds)
    W: list             # len(rows) x len(rows) spatial inertia
    h: list             # len(rows) inertial bias wrench
    # A_b = X A_parent + s u'_speeds, X = [[R, 0], [-R r×, R]] on (rows, parent rows): R
    # turns the parent's components into this body's, r is this body's reference point
    # from the parent's in the parent's components (None for a root)
    R: list = None
    r: list = None
    # h = W a0 + b on rows (None where not split): a0 the u'-free acceleration, so that
    # the Newton–Euler passes (codegen.algorithms.rnea) form W (A + a0) + b with one product by W
    a0: list = None
    b: list = None
    # the Newton–Euler passes' total acceleration carried as Pinocchio's RNEA does
    # (codegen.algorithms.rnea), where the split's a0 (gravity added) is carried by X: a0x, a0 on
    # all six rows; for a child, c = (c_ω; e) with a0x = X (a0x_parent + (0; e)) +
    # (c_ω; 0), the velocity product of its joint (None where that does not hold);
    # Wx, W's rows on all six columns, and bx, b without a0's off-row columns folded in
    a0x: list = None
    c: list = None
    Wx: list = None
    bx: list = None
    # Wx and bx with Khalil's grouping of inertial parameters (codegen.formulation.grouping),
    # where it changed them: the same joint forces from fewer nonzero inertias
    Wg: list = None
    bg: list = None


@dataclass
class Tree:
    nodes: list         # parents before children
    Q: list             # generalized active forces, one per speed
    # it has rigid bodies: by default the plan takes the recursion only where its program is
    # the smaller (codegen.algorithms.plan.build_programs; particles: always)
    rigid: bool = False
    # definitions its expressions use beyond the formulation's: the rotations and joint
    # points the detection composed (codegen.formulation.relative), defined after the formulation
    intermediates: list = field(default_factory=list)

    @property
    def carried(self) -> bool:
        """Whether every child joint has its velocity product c and every root its a0x:
        then the passes carry each body's u'-free acceleration outward (TreeNode.c)."""
        return all(nd.a0x is not None and (nd.parent < 0 or nd.c is not None)
                   for nd in self.nodes)
