"""Forward dynamics of a tree: M u' = F solved by the articulated-body recursion
(Featherstone's algorithm in the Gibbs–Appell form) in O(n), without forming M: the inward
pass's articulated inertias and biases, then the outward pass's accelerations
(:mod:`codegen.algorithms.tree_passes`)."""
from __future__ import annotations

from ..programs.program import Program, live_temporaries
from ..programs.schedule import fewer_reloads
from .tree_passes import carried_biases, inward, outward, tree_inputs

__all__ = ["tree_program"]


def tree_program(eom) -> Program | None:
    """q' and u' of a tree-structured model in one straight-line program.

    One CSE over q' and the tree's inputs (s, W, h, R, r, Q); the inward and the
    outward pass of the recursion follow as further temporaries. Outputs: qd,
    ud and D (the pivots, each > 0 for a positive definite M). None if a
    joint's D is zero by structure (the dense solve then reports the singular
    M at run time)."""
    nodes = eom.tree.nodes
    carry = eom.tree.carried
    prog, define, qd, S, W, h, Q, T = tree_inputs(eom, split=carry, carry=carry, grouped=carry)
    if carry:
        W, h = carried_biases(nodes, W, h, T, define)
    passed = inward(eom.tree.nodes, S, W, h, Q, T, define)
    if passed is None:
        return None
    step, D = passed
    ud = outward(eom.tree.nodes, T, step, len(Q), define)
    outputs = [("qd", qd), ("ud", ud), ("D", D)]
    # the recursion's long chains: its order as written spills more on the robots measured
    # (Atlas, Talos, Solo12: 5 to 7 % fewer instructions reordered), not on all (the iiwa)
    return fewer_reloads(Program(inputs=prog.inputs, names=define.names,
                                 temporaries=live_temporaries(define.temps, outputs),
                                 outputs=outputs))
