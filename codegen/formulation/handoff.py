"""The hand-off from a formed GibbsAppellMethod to code generation and linearization.

:class:`Formed` is what the formulation produced, on plain symbols: the
kinematics, the constraints by kind (codegen.formulation.constraints.Prepared), M and F
over all speeds with the intermediates they are written over
(codegen.formulation.chain_rule.GibbsAppell), KanesMethod's (fr, fr*) and the bodies and
loads. From it, each formed once:

- ``reduced()``: M_r u_i' = F_r over the independent speeds, the dependent
  speeds' solve as intermediates (constraint_solver on placeholders), then
  the projection (codegen.formulation.constraints);
- ``tree()``: the bodies as a tree for the O(n) solve (codegen.formulation.tree), where
  they form one (whether the recursion is used is the plan's choice, codegen.algorithms.plan);
- ``equations(...)``: the neutral equations (codegen.equations.equations_of_motion.EquationsOfMotion)
  that the code generator compiles, what ``GibbsAppellMethod.to_equations``
  returns.

codegen.formulation.linearize reads the same value (``linearizer_parts``).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import sympy as sm

from .constraints import Prepared, kane_form, project, resolve
from ..description.model import declared_order
from ..equations.equations_of_motion import Constraints, EquationsOfMotion, assemble, variable_name
from ..flexible.body import FlexibleBody
from .chain_rule import GibbsAppell
from .kinematics import Kinematics
from ..symbolic.expressions import LazyMatrix
from .tree import tree_of_bodies

__all__ = ["Formed", "ORIGIN"]

ORIGIN = "codegen.GibbsAppellMethod (Gibbs-Appell equation, Greenwood 4.292-4.297)"


@dataclass
class Formed:
    """A formed GibbsAppellMethod's results on plain symbols (see the module docstring)."""
    kin: Kinematics
    constraints: Prepared
    ga: GibbsAppell
    bodies: list
    loads: list                 # checked, with the varying-inertia terms
    _items: tuple = field(default=None, repr=False)
    _reduced: tuple = field(default=None, repr=False)
    _kane: dict = field(default=None, repr=False)

    @property
    def fr(self) -> sm.Matrix:
        """KanesMethod's fr over ga's intermediates (formed on first use: only the
        linearization reads it)."""
        return self._kane_form()['fr']

    @property
    def frstar(self) -> sm.Matrix:
        """KanesMethod's fr* over ga's intermediates."""
        return self._kane_form()['frstar']

    def _kane_form(self) -> dict:
        if self._kane is None:
            ga = self.ga
            self._kane = kane_form(self.kin, self.constraints.nh, ga.M, ga.Q, ga.R)
        return self._kane

    def resolved(self, matrix: sm.Matrix) -> sm.Matrix:
        """matrix with the formulation's intermediates substituted (plain symbols)."""
        items = self.ga.intermediates
        return resolve(matrix, items) if items else matrix

    def intermediates(self):
        """(intermediates, A_rs, w): the formulation's intermediates and the dependent
        speeds' solve on placeholders (codegen.formulation.constraints), without the projection."""
        if self._items is None:
            nh, items = self.constraints.nh, list(self.ga.intermediates)
            if nh is None:
                self._items = (items, sm.zeros(0, self.kin.p), None)
            else:
                more, Ars, w = nh.intermediates(self.kin)
                self._items = (items + more, Ars, w)
        return self._items

    def reduced(self):
        """(intermediates, M_r, F_r) over the independent speeds, on plain symbols."""
        if self._reduced is None:
            o = len(self.kin.us)
            M, F = self.ga.M, self.ga.F[:o, :]
            items, Ars, w = self.intermediates()
            # without nonholonomic constraints M stays unformed until read
            self._reduced = (items, LazyMatrix(lambda: M[:o, :o], (o, o), M.symbols), F) \
                if self.constraints.nh is None else (items, *project(M[:o, :o], F, Ars, w))
        return self._reduced

    def tree(self):
        """(tree, note): the bodies as a tree for the O(n) solve (codegen.formulation.tree),
        or None and why not (the model's description says it)."""
        c = self.constraints
        for cause, reason in ((c.runtime is not None, "run-time constraints"),
                              (c.nh is not None, "nonholonomic constraints"),
                              (bool(self.kin.uas), "auxiliary speeds"),
                              (any(isinstance(b, FlexibleBody) for b in self.bodies),
                               "flexible bodies (the recursion takes particles and rigid "
                               "bodies)")):
            if cause:
                return None, reason
        why = []
        motions = self.ga.motions
        tree = tree_of_bodies(motions, self.bodies, self.loads, why)
        if tree is not None:        # what detecting it defined (transports, joint points)
            tree.intermediates = list(motions.items[len(self.ga.intermediates):])
        if tree is not None:
            tree.rigid = any(b for b in self.ga.terms if b['w'] is not None)
        return tree, why[0] if why else ""

    def equations(self, constants=None, specifieds=None) -> EquationsOfMotion:
        """The neutral equations: state [q, u_independent], M_r u_i' = F_r, q' solved,
        the run-time constraints and the tree (see GibbsAppellMethod.to_equations); p and
        r by default in the order a model declares for these bodies (declared_order)."""
        kin = self.kin
        items, Mr, Fr = self.reduced()
        tree, note = self.tree()
        if tree is not None:
            items = list(items) + tree.intermediates
        raw = self.constraints.runtime
        names = [variable_name(s) for s in list(kin.q) + list(kin.u[:kin.p, :])]
        return assemble(kin.qs, kin.us[:kin.p], kin.qdot, Mr, Fr, True, constants, specifieds,
                        names, ORIGIN, None if raw is None else Constraints(**raw), items,
                        tree, note, declared=declared_order(self.bodies))
