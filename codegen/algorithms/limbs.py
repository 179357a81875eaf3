"""A tree's limbs (the chains of bodies between its branchings) and what belongs to each: the
inputs by the speeds they drive, a program's statements by the inputs they read. The pairing of
mirrored limbs (codegen.algorithms.lanes) reads them."""
from __future__ import annotations

import sympy as sm
from sympy.core.function import AppliedUndef

__all__ = ["limbs", "ancestors", "same_joints", "input_owners", "statement_limbs", "output_roles"]


def limbs(nodes) -> list:
    """The chains between branchings: lists of node indices, root side first."""
    children = {k: [] for k in range(len(nodes))}
    for k, nd in enumerate(nodes):
        if nd.parent >= 0:
            children[nd.parent].append(k)
    chains = []
    for k, nd in enumerate(nodes):
        if nd.parent < 0 or len(children[nd.parent]) > 1:
            chain = [k]
            while len(children[chain[-1]]) == 1:
                chain.append(children[chain[-1]][0])
            chains.append(chain)
    return chains


def ancestors(nodes, chains, li) -> frozenset:
    where = {k: i for i, chain in enumerate(chains) for k in chain}
    found, parent = set(), nodes[chains[li][0]].parent
    while parent >= 0:
        found.add(where[parent])
        parent = nodes[parent].parent
    return frozenset(found)


def same_joints(nodes, a, b) -> bool:
    return len(a) == len(b) and all(
        len(nodes[i].speeds) == len(nodes[j].speeds) and nodes[i].rows == nodes[j].rows
        for i, j in zip(a, b))


def input_owners(eom, program, chains) -> dict | None:
    """{input object: (limb, its role there)}: a speed's u and u' by the node owning it, a
    coordinate by the speeds its q' reads, an input r by the deepest body whose loads read
    it; a parameter is no limb's (None where a coordinate reads two chains')."""
    speed = _speed_places(eom.tree.nodes, chains)
    u_index = {u: j for j, u in enumerate(eom.u)}
    objects = {name: obj for obj, name in program.names.items()}
    loads = [_loads(nd) for nd in eom.tree.nodes]
    owner, counts = {}, {}
    for inp in program.inputs:
        obj = objects[inp.name]
        if inp.array == "x" and inp.index < eom.nq:
            read = {speed[u_index[s]][0] for s in sm.sympify(eom.qdot[inp.index]).free_symbols
                    if s in u_index}
        elif inp.array == "r":          # by the deepest body whose loads read it
            node = max((k for k in range(len(loads)) if obj in loads[k]),
                       key=lambda k: _depth(eom.tree.nodes, k), default=None)
            if node is None:
                return None
            j = eom.tree.nodes[node].speeds[0]
            owner[obj] = (speed[j][0], f"r{speed[j][1]}")
            continue
        elif inp.array in ("x", "ud"):
            j = inp.index - eom.nq if inp.array == "x" else inp.index
            if j not in speed:
                return None
            owner[obj] = (speed[j][0], f"{inp.array}{speed[j][1]}")
            continue
        else:
            continue                                # a parameter: both lanes read it
        if len(read) != 1:
            return None
        li = read.pop()
        # its place among the limb's coordinates (inputs), in the order they are read
        counts[li, inp.array] = counts.get((li, inp.array), -1) + 1
        owner[obj] = (li, f"{inp.array}{counts[li, inp.array]}")
    return owner


def _speed_places(nodes, chains) -> dict:
    """{speed: (limb, its place among the limb's speeds)}."""
    place = {}
    for li, chain in enumerate(chains):
        position = 0
        for k in chain:
            for j in nodes[k].speeds:
                place[j] = (li, position)
                position += 1
    return place


def _loads(nd) -> set:
    """The inputs a body's forces read (its bias and generalized forces)."""
    found = set()
    for values in (nd.h, nd.b, nd.bx, nd.bg, nd.r):
        for e in values or ():
            found |= sm.sympify(e).atoms(AppliedUndef)
    return found


def _depth(nodes, k) -> int:
    depth = 0
    while nodes[k].parent >= 0:
        k, depth = nodes[k].parent, depth + 1
    return depth


def statement_limbs(temps, owner, chains, nodes) -> dict:
    """{statement: its limb, or None}: the deepest limb whose inputs or statements it reads
    directly, the others read being that limb's ancestors'; a statement reading two limbs
    (a base's acceleration from every leg) is no limb's, and a value both lanes read."""
    above = [ancestors(nodes, chains, li) for li in range(len(chains))]
    limb_of = {}
    for sym, expr in temps:
        found = set()
        for x in expr.free_symbols | expr.atoms(AppliedUndef):
            if x in owner:
                found.add(owner[x][0])
            elif limb_of.get(x) is not None:
                found.add(limb_of[x])
        deepest = [li for li in found if found <= {li} | above[li]]
        limb_of[sym] = deepest[0] if deepest else None
    return limb_of


def output_roles(eom, program, owner, chains) -> dict:
    """{(output, index): (limb, role)}: an output per speed (tau, ud, D, F) by the speed's
    place in its limb, one per coordinate (qd) by its q's role; an entry of M (its packed
    lower triangle, row by row) by its two speeds' places where both are one limb's, or one
    limb's and the other an ancestor's (read alike by both lanes); an entry between two
    limbs by neither."""
    nodes = eom.tree.nodes
    place = _speed_places(nodes, chains)
    objects = {name: obj for obj, name in program.names.items()}
    by_q = {inp.index: owner[objects[inp.name]] for inp in program.inputs
            if inp.array == "x" and inp.index < eom.nq and objects[inp.name] in owner}
    above = [ancestors(nodes, chains, li) for li in range(len(chains))]
    roles = {}
    for name, exprs in program.outputs:
        if name == "qd":
            roles.update({(name, i): (by_q[i][0], f"qd:{by_q[i][1]}")
                          for i in range(len(exprs)) if i in by_q})
        elif name in ("tau", "ud", "D", "F"):
            roles.update({(name, j): (place[j][0], f"{name}:{place[j][1]}")
                          for j in range(len(exprs))})
        elif name == "M":
            n = 0
            for i in range(eom.nu):
                for j in range(i + 1):
                    (li, pi), (lj, pj) = place[i], place[j]
                    if li == lj:
                        roles["M", n] = (li, f"M:{pi}:{pj}")
                    elif lj in above[li]:
                        roles["M", n] = (li, f"M:{pi}:@{j}")
                    elif li in above[lj]:
                        roles["M", n] = (lj, f"M:@{i}:{pj}")
                    n += 1
    return roles
