"""Mirrored limbs side by side: a tree's program (the inverse dynamics, the articulated-body
recursion, the composite-rigid-body M, or M and F) over two limbs of one shape (HyQ's left
and right legs) as one program over pairs of doubles, each pair one SSE2 register (cg_v2,
cg_math.h), so that the two limbs' arithmetic costs one limb's. Pairs are kept only where
they leave fewer operations (Atlas's M pairs its legs alone, and its packing costs more).

The scalar program (codegen.algorithms.rnea) is taken apart into limbs: the chains of a tree
between its branchings. Two limbs pair when their statements match one to one up to their
numbers (anti-unification): each statement of one limb has a partner in the other of the same
form, over partner inputs (the k-th joint's q, q', u' and r of each), partner statements,
and numbers that may differ (a mirrored offset, an inertia's sign), held as a constant pair.
Matching is by form, not by the printed text, since SymPy orders terms and
folds signs by value: the terms of a sum or product are matched within groups of one form
(trying the orders of a group), a number times x matches x (the pair of coefficients then
multiplies), and a statement of one limb may match an expression written out in the other.
Each limb's statements may read those of its ancestors' limbs (the free-flyer's base, the
torso of an arm), shared by both lanes. Limbs that do not match stay scalar; a model with no
pair keeps its scalar program alone.

The program returned keeps the scalar program's inputs and outputs: its temporaries are the
scalar statements outside the pairs, the pairs' inputs packed two by two (Pack), their
statements over pairs, and each pair's values read lane by lane (Lane) where a scalar
statement or an output reads them. Its statements over pairs are in Program.vectors.
Compilers without GCC's vector extension (CG_LANES unset, cg_math.h) compile the scalar
program instead (codegen.emit.sources).
"""
from __future__ import annotations

import itertools
import re

import numpy as np

import sympy as sm
from sympy.core.function import AppliedUndef

from .crba import NODES_NAMED
from .limbs import ancestors, input_owners, limbs, output_roles, same_joints, statement_limbs
from ..programs.pairs import Lane, Pack, program_values
from ..programs.program import Program, live_temporaries
from ..programs.schedule import depth_first

__all__ = ["lane_program"]

# statements named by the passes after a node (codegen.algorithms.rnea's cg_ia<k>_<i>):
# partners must be those of partner nodes
_NODE_LABEL = re.compile(r"^cg_([A-Za-z]+)(\d+)_(.*)$")
# orders tried for a group of terms of one form before the pair is given up
_ORDERS_TRIED = 720


class _Mismatch(Exception):
    """The two limbs differ in form."""


def lane_program(eom, program: Program) -> Program | None:
    """program (the inverse dynamics over eom.tree) with its mirrored chains side by side,
    or None where no two chains match."""
    tree = eom.tree
    if program is None or tree is None:
        return None
    chains = limbs(tree.nodes)
    candidates = [(a, b) for a, b in itertools.combinations(range(len(chains)), 2)
                  if same_joints(tree.nodes, chains[a], chains[b]) and
                  ancestors(tree.nodes, chains, a) == ancestors(tree.nodes, chains, b)]
    owner = input_owners(eom, program, chains) if candidates else None
    if owner is None:
        return None
    scalar = program.operation_count
    program = _normalized(program)
    temps = program.temporaries
    defs = dict(temps)
    limb_of = statement_limbs(temps, owner, chains, tree.nodes)
    roles = output_roles(eom, program, owner, chains)
    pairs, used = [], set()
    for a, b in candidates:
        if a in used or b in used:
            continue
        try:
            pairs.append(_Pairing(a, b, chains, tree.nodes, owner, defs, limb_of, program, roles))
        except _Mismatch:
            continue
        used |= {a, b}
    if not pairs:
        return None
    lanes = _assemble(program, pairs, limb_of)
    # Atlas's mass matrix pairs its legs only, and their packing costs more than it saves
    if lanes.operation_count >= scalar:
        return None
    return lanes if _agrees(program, lanes) else None


def _agrees(program, lanes) -> bool:
    """The two programs' outputs at seeded random inputs agree (to 1e-9 of their size): the
    matching is by form, and this is its check of the values."""
    rng = np.random.default_rng(0)
    objects = {name: obj for obj, name in program.names.items()}
    inputs = {objects[i.name]: rng.uniform(-1.0, 1.0) for i in program.inputs}
    try:
        expected, got = program_values(program, inputs), program_values(lanes, inputs)
    except ValueError:                      # an expression the check cannot evaluate
        return False
    return bool(np.all(np.abs(got - expected) <= 1e-9 * (1.0 + np.max(np.abs(expected)))))


def _normalized(program) -> Program:
    """program with the statements that are a number times another, or the negative of an
    earlier one, written into their readers: their partners in a mirrored limb may be
    written out (HyQ's -sin q where the other leg has sin q)."""
    into, seen, temps = {}, {}, []
    for s, e in program.temporaries:
        e = e.xreplace(into) if into else e
        if e.is_Mul and len(e.args) == 2 and e.args[0].is_Number and (
                e.args[1].is_Symbol or isinstance(e.args[1], AppliedUndef)):
            into[s] = e
            continue
        if -e in seen:             # (SymPy distributes the sign over a sum itself)
            into[s] = -seen[-e]
            continue
        seen.setdefault(e, s)
        temps.append((s, e))
    outputs = [(n, [sm.sympify(x).xreplace(into) for x in xs]) for n, xs in program.outputs]
    return Program(inputs=program.inputs, names=program.names, temporaries=temps,
                   outputs=outputs)


class _Pairing:
    """Limbs a and b matched statement by statement: .vectors, the statements over pairs
    ((symbol, expression), inputs and constants packed first; .pairs, those whose value is
    a pair); .outputs, {(output, index) of a: ((output, index) of its partner in b, the
    pair's symbol)}; .exports, {statement read outside its limb: (pair's symbol, lane)}."""

    def __init__(self, a, b, chains, nodes, owner, defs, limb_of, program, roles):
        self.a, self.b, self.owner, self.defs, self.limb_of = a, b, owner, defs, limb_of
        self.common = ancestors(nodes, chains, a)
        self.node_partner = dict(zip(chains[a], chains[b]))
        self.vectors, self.keys, self.bound, self.rbound = [], {}, {}, {}
        self.pairs = set()          # the statements over pairs (the others are scalars)
        self.orders = 0
        self.place, count = {}, {}
        for x, _ in program.temporaries:
            count[limb_of[x]] = self.place[x] = count.get(limb_of[x], -1) + 1
        own_a = {key: role for key, (li, role) in roles.items() if li == a}
        own_b = {role: key for key, (li, role) in roles.items() if li == b}
        exports_b = {self._label(s, mapped=False): s for s in self._exports(b, set(own_b.values()), program)}
        self.exports = {}
        for s in self._exports(a, set(own_a), program):
            partner = exports_b.pop(self._label(s), None) if self._label(s) else None
            if partner is None:
                raise _Mismatch(f"{s} is read outside its limb and has no partner")
            v = self.pair(s, partner)
            self.exports[s], self.exports[partner] = (v, 0), (v, 1)
        if exports_b:
            raise _Mismatch("statements read outside the limb without partners")
        out = {name: list(exprs) for name, exprs in program.outputs}
        self.outputs = {}
        for key, role in own_a.items():
            other = own_b.get(role)
            if other is None:
                raise _Mismatch(f"output {key} has no partner")
            self.outputs[key] = (other, self._named(("out", key), lambda key=key, other=other:
                                                    self.pair(sm.sympify(out[key[0]][key[1]]), sm.sympify(out[other[0]][other[1]]))))

    def _exports(self, li, owned, program) -> list:
        """The limb's statements read by statements or outputs outside it, in order."""
        read = set()
        for s, e in program.temporaries:
            if self.limb_of[s] != li:
                read |= e.free_symbols
        for name, exprs in program.outputs:
            for j, e in enumerate(exprs):
                if (name, j) not in owned:
                    read |= sm.sympify(e).free_symbols
        return [s for s, _ in program.temporaries if s in read and self.limb_of[s] == li]

    def _label(self, s, mapped=True):
        """A node's statement's label (kind, node, component), the node its partner's if
        mapped; None for a CSE temporary."""
        m = _NODE_LABEL.match(str(s))
        if m is None:
            return None
        node = int(m.group(2))
        if not mapped:
            return m.group(1), node, m.group(3)
        return m.group(1), self.node_partner.get(node, -1), \
            _rest(m, lambda n: str(self.node_partner.get(n, n)))

    def _named(self, key, value):
        """A symbol for the pair value() (called once: its statements come first)."""
        if key not in self.keys:
            expr = value() if callable(value) else value
            if key in self.keys:
                return self.keys[key]
            if expr.is_Symbol:              # a statement that is another's value
                self.keys[key] = expr
                return expr
            s = sm.Symbol(f"cg_v{self.a}_{self.b}_{len(self.vectors)}", real=True)
            self.vectors.append((s, expr))
            if expr.has(Pack) or expr.free_symbols & self.pairs:
                self.pairs.add(s)
            self.keys[key] = s
        return self.keys[key]

    def _shared(self, e) -> bool:
        for x in e.free_symbols | e.atoms(AppliedUndef):
            if x in self.owner and self.owner[x][0] not in self.common:
                return False
            if self.limb_of.get(x) is not None and self.limb_of[x] not in self.common:
                return False
        return True

    def pair(self, ea, eb):
        """The expression over pairs with ea in lane 0 and eb in lane 1."""
        if ea == eb and self._shared(ea):
            return ea
        if ea.is_Number and eb.is_Number:
            return self._named(("k", ea, eb), Pack(sm.Float(ea), sm.Float(eb)))
        ca, ra = ea.as_coeff_Mul() if ea.is_Mul else (sm.S.One, ea)
        cb, rb = eb.as_coeff_Mul() if eb.is_Mul else (sm.S.One, eb)
        if ca != 1 or cb != 1:
            c = ca if ca == cb else self.pair(ca, cb)
            return sm.Mul(c, self.pair(ra, rb), evaluate=False)
        owner, defs, limb_of = self.owner, self.defs, self.limb_of
        in_a = ea in defs and limb_of[ea] == self.a
        in_b = eb in defs and limb_of[eb] == self.b
        if in_a and in_b:
            if self.bound.get(ea, eb) != eb or (ea not in self.bound and eb in self.rbound):
                raise _Mismatch(f"{ea} and {eb} matched elsewhere")
            if self._label(ea) != self._label(eb, mapped=False):
                raise _Mismatch(f"labels {ea}, {eb}")
            self.bound[ea], self.rbound[eb] = eb, ea
            return self._named(("t", ea), lambda: self.pair(defs[ea], defs[eb]))
        if in_a:      # written out in b
            if self.bound.setdefault(ea, ("x", eb)) != ("x", eb):
                raise _Mismatch(f"{ea} matched elsewhere")
            return self._named(("t", ea), lambda: self.pair(defs[ea], eb))
        if in_b:
            if self.rbound.setdefault(eb, ("x", ea)) != ("x", ea):
                raise _Mismatch(f"{eb} matched elsewhere")
            return self._named(("r", eb), lambda: self.pair(ea, defs[eb]))
        if ea in owner or eb in owner:
            if owner.get(ea, (None,))[0] == self.a and owner.get(eb, (None,))[0] == self.b \
                    and owner[ea][1] == owner[eb][1]:
                return self._named(("in", ea), Pack(ea, eb))
            raise _Mismatch(f"inputs {ea}, {eb}")
        if ea in defs and eb in defs and self._shared(ea) and self._shared(eb):
            # two values of the limbs' ancestors (the hips' transports of the base's
            # motion): computed apart, then packed
            return self._named(("s", ea, eb), Pack(ea, eb))
        if ea in defs or eb in defs or type(ea) is not type(eb):
            raise _Mismatch(f"forms {ea}, {eb}")
        if ea.is_Add:
            na = sum((t for t in ea.args if t.is_Number), sm.S.Zero)
            nb = sum((t for t in eb.args if t.is_Number), sm.S.Zero)
            ta, tb = [t for t in ea.args if not t.is_Number], [t for t in eb.args if not t.is_Number]
            if sorted(map(self._form, ta)) != sorted(map(self._form, tb)):
                # one side's CSE took a sum out (Atlas's left leg: c (u + d v) where the
                # right has c' u + d' v): both written out, like terms gathered
                fa, fb = self._written_out(ea), self._written_out(eb)
                if (fa, fb) != (ea, eb):
                    return self.pair(fa, fb)
            terms = self._terms(ta, tb)
            if na != 0 or nb != 0:
                terms.insert(0, na if na == nb else self.pair(na, nb))
            return sm.Add(*terms, evaluate=False)
        if ea.is_Mul:
            return sm.Mul(*self._terms(list(ea.args), list(eb.args)), evaluate=False)
        if ea.is_Pow and ea.exp == eb.exp and ea.exp.is_Integer:
            return sm.Pow(self.pair(ea.base, eb.base), ea.exp, evaluate=False)
        if isinstance(ea, (sm.sin, sm.cos)) and ea.func == eb.func and \
                ea.args[0] in owner and eb.args[0] in owner:
            self.pair(ea.args[0], eb.args[0])       # partner coordinates
            return self._named(("f", ea), Pack(ea, eb))
        raise _Mismatch(f"forms {ea}, {eb}")

    def _terms(self, ta, tb) -> list:
        """The terms of two sums (or factors of two products) matched within groups of one
        form, each group's orders tried until one matches."""
        ga, gb = {}, {}
        for t in ta:
            ga.setdefault(self._form(t), []).append(t)
        for t in tb:
            gb.setdefault(self._form(t), []).append(t)
        if sorted((k, len(v)) for k, v in ga.items()) != sorted((k, len(v)) for k, v in gb.items()):
            raise _Mismatch("terms of different forms")
        out = []
        for form, xs in ga.items():
            # the order of their statements in each limb first (rows of an inertia differ
            # only in their numbers: another order may match in form, wrongly)
            xs, ys = sorted(xs, key=self._rank), sorted(gb[form], key=self._rank)
            if len(xs) == 1:
                out.append(self.pair(xs[0], ys[0]))
                continue
            for order in itertools.permutations(ys):
                self.orders += 1
                if self.orders > _ORDERS_TRIED:
                    raise _Mismatch("too many orders")
                saved = (list(self.vectors), dict(self.keys), dict(self.bound), dict(self.rbound),
                         set(self.pairs))
                try:        # a list first: an order that fails leaves no terms behind
                    out.extend([self.pair(x, y) for x, y in zip(xs, order)])
                    break
                except _Mismatch:
                    self.vectors, self.keys, self.bound, self.rbound, self.pairs = saved
            else:
                raise _Mismatch("no order of the terms matches")
        return out

    def _written_out(self, e):
        """The sum e with the sums its CSE took out (number times a CSE temporary) written
        out, like terms gathered."""
        terms = []
        for t in e.args:
            c, rest = t.as_coeff_Mul()
            if rest in self.defs and not _NODE_LABEL.match(str(rest)) and self.defs[rest].is_Add:
                terms += [c * x for x in self._written_out(self.defs[rest]).args]
            else:
                terms.append(t)
        return sm.Add(*terms)

    def _rank(self, e) -> tuple:
        """Where e's statements come among their limb's."""
        return tuple(sorted(self.place[x] for x in e.free_symbols if x in self.place))

    def _form(self, e) -> str:
        """e's form for grouping terms: its factors' kinds, numbers and statements left out."""
        if e.is_Mul:
            c, rest = e.as_coeff_Mul()
            if c != 1:
                return self._form(rest)
        if e in self.owner:
            return f"in:{self.owner[e][1]}"
        if e in self.defs:          # a CSE temporary by its value's form (the other side's
            m = _NODE_LABEL.match(str(e))     # may be written out)
            return f"t:{m.group(1)}:{_rest(m, lambda n: '#')}" if m else self._form(self.defs[e])
        if e.is_Add:
            return "x"
        if e.is_Symbol or isinstance(e, AppliedUndef):
            return f"s:{e}"
        inner = sorted(self._form(x) for x in e.args if not x.is_Number)
        return f"{type(e).__name__}({','.join(inner)})"


def _rest(m, node) -> str:
    """A node label's components after its node (_NODE_LABEL's match m), each that names a
    node too (crba.NODES_NAMED) written as node(that node)."""
    rest = m.group(3).split("_")
    for i in NODES_NAMED.get((m.group(1), len(rest)), ()):
        rest[i] = node(int(rest[i]))
    return "_".join(rest)


def _assemble(program, pairs, limb_of) -> Program:
    """The scalar statements outside the pairs, the pairs', their values read lane by lane,
    sorted topologically, then scheduled as the scalar program (depth first, Sethi–Ullman)
    in three runs (_runs)."""
    paired = {p.a for p in pairs} | {p.b for p in pairs}
    before, after, read = [], [], {s for p in pairs for s in p.exports}
    for s, e in program.temporaries:           # scalar: before the pairs or reading them
        if limb_of[s] not in paired:
            if e.free_symbols & read:
                read.add(s)
                after.append((s, e))
            else:
                before.append((s, e))
    temps, vectors = before, set()
    for p in pairs:
        temps += p.vectors
        vectors |= p.pairs
        temps += [(s, Lane(v, lane) if v in p.pairs else v) for s, (v, lane) in p.exports.items()]
    temps += after
    outputs = []
    for name, exprs in program.outputs:
        exprs = list(exprs)
        for p in pairs:
            for (n, i), ((m, j), v) in p.outputs.items():
                if n == name:
                    exprs[i] = Lane(v, 0) if v in p.pairs else v
                if m == name:
                    exprs[j] = Lane(v, 1) if v in p.pairs else v
        outputs.append((name, exprs))
    temps = _topological(temps)
    temps = _runs(depth_first(live_temporaries(temps, outputs), outputs, ershov=True), vectors)
    kept = {s for s, _ in temps}
    return Program(inputs=program.inputs, names=program.names, temporaries=temps,
                   outputs=outputs, vectors=frozenset(vectors & kept))


def _runs(temps, vectors) -> list:
    """temps in three runs, each in its order: the scalar statements before the pairs, the
    pairs' statements with those reading their lanes, then the rest, so that a function in
    parts keeps the pairs in one part (codegen.emit.layout.part_starts)."""
    runs, lanes, after = ([], [], []), set(), set()
    for s, e in temps:
        reads = e.free_symbols
        if s in vectors or reads & vectors:
            if reads & after:                  # pairs on both sides of a scalar value
                return temps
            lanes.add(s)
            runs[1].append((s, e))
        elif reads & (lanes | after):
            after.add(s)
            runs[2].append((s, e))
        else:
            runs[0].append((s, e))
    return runs[0] + runs[1] + runs[2]


def _topological(temps) -> list:
    """temps with each statement after those it reads, otherwise in their order."""
    index = {s: k for k, (s, _) in enumerate(temps)}
    done, order = set(), []
    for root in range(len(temps)):
        stack = [(root, False)]
        while stack:
            k, ready = stack.pop()
            if k in done:
                continue
            if ready:
                done.add(k)
                order.append(temps[k])
                continue
            stack.append((k, True))
            for x in sorted(temps[k][1].free_symbols, key=str, reverse=True):
                if x in index and index[x] not in done:
                    stack.append((index[x], False))
    return order
