"""``regressor(model)``: the inertial-parameter regressor of a model, its exact base
parameters, and its compiled form.

τ = Y(q, u, u') π, π the standard parameters (codegen.identification.parameters): Y is
formed over the formulation's intermediates (codegen.identification.forming), its rank
and column dependencies are exact (codegen.identification.exact), ``generate`` compiles Y
and the base regressor Y_b with one CSE each (codegen.identification.compiled), and
``export_c`` writes them as standalone C (codegen.identification.standalone). Through
constraints and closed loops Y is projected onto the independent speeds
(codegen.identification.loops), and the exact states lie on the closure
(codegen.identification.algebraic).
"""
from __future__ import annotations

import warnings
from functools import cached_property

import sympy as sm

from .compiled import RegressorModule, build_module, regressor_source
from .exact import RationalProgram, exact_dependencies, exact_number
from .forming import form_regressor
from .joints import joint_terms
from .loops import loop_points
from .parameters import gravity_of, standard_parameters
from .program import regressor_program
from .standalone import export_regressor_c

__all__ = ["Regressor", "regressor", "INEXACT"]

#: base columns dependent to this (the ratio of the exact stack's last singular value to
#: its first, in floating point) mean dependencies that the model's rounding broke
INEXACT = 1e-10


def regressor(model, origins=None, gravity=None, joints=(), seed: int = 0) -> "Regressor":
    """The regressor of a Model (from_urdf's, codegen.examples', or one built by hand).

    origins: {body or its name: Point fixed in it} about which its parameters are taken
    (default: a URDF link's frame origin, else the body's mass centre). gravity: the
    uniform field (a Vector in the model's frame) the weights are m g of; default, the
    one the model's weights show (codegen.identification.parameters.gravity_of). joints:
    each joint's own parameters, any of "viscous", "coulomb", "armature" and "offset"
    (codegen.identification.joints; their values are 0). seed: the random rational
    states of the exact rank."""
    return Regressor(model, origins, gravity, joints, seed)


class Regressor:
    """A model's regressor: ``parameters`` (π, SymPy symbols, 10 per rigid body),
    ``values`` ({symbol: the model's number}), ``base`` (the base parameters as exact
    combinations of π), ``base_table()``, ``speeds`` (Y's rows: the independent speeds),
    ``state_names`` (x's entries), ``generate(name)`` (a compiled module) and
    ``export_c(name)`` (standalone C)."""

    def __init__(self, model, origins=None, gravity=None, joints=(), seed: int = 0):
        self.model, self.seed = model, seed
        self.bodies = standard_parameters(model, origins)
        if not self.bodies:
            raise ValueError(f"model {model.name!r} has no bodies to identify")
        self.gravity = gravity if gravity is not None else gravity_of(model)
        self.joint_terms = joint_terms(model, joints)
        self.parameters = ([s for b in self.bodies for s in b.symbols]
                           + [t.symbol for t in self.joint_terms])
        self.values = {s: v for b in self.bodies for s, v in zip(b.symbols, b.values)}
        self.values.update({t.symbol: 0.0 for t in self.joint_terms})
        self._formed = form_regressor(model, self.bodies, self.gravity, self.joint_terms)
        self.n, self.nx = len(self._formed.speeds), len(self._formed.split.state)
        #: the independent speeds' names: Y's rows and u''s entries, in order
        self.speeds = [str(u.func) for u in self._formed.kin.u[:self.n]]
        #: the model's state names: x's entries, in order
        self.state_names = [str(s.func) for s in self._formed.split.state]
        #: whether Y is projected through constraints (dependent speeds, closed loops)
        self.constrained = bool(self._formed.kin.m)

    def _with(self, number):
        """The formed regressor with the model's constants as number(value)."""
        by_name = {str(s): s for s in model_symbols(self._formed)}
        values = {by_name[k]: number(v) for k, v in self.model.parameter_values.items()
                  if k in by_name}
        missing = set(by_name.values()) - set(values)
        if missing:
            raise ValueError(f"the regressor of {self.model.name!r} depends on "
                             f"{sorted(map(str, missing))}, which parameter_values does not give")
        return self._formed.substituted(values)

    @cached_property
    def _dependencies(self):
        """(pivots, R): exact, from rational states (codegen.identification.exact)."""
        exact = {k: sm.Rational(str(exact_number(v)))
                 for k, v in self.model.parameter_values.items()}
        formed = self._with(lambda v: sm.Rational(str(exact_number(v))))
        evaluate = RationalProgram(regressor_program(self.model, formed), formed.kin.qs)
        # a closed loop's states are drawn on its closure, exactly (algebraic numbers)
        point = (loop_points(formed.split, exact, self.nx, self.n)
                 if formed.split.q_dependent else None)
        pivots, R, self.samples, spread = exact_dependencies(
            evaluate, self.nx, self.n, len(self.parameters), len(formed.kin.qs), self.seed,
            point)
        if spread < INEXACT:
            warnings.warn(
                f"{self.model.name}: {len(pivots)} base parameters in exact arithmetic, but "
                f"the base columns are dependent to {spread:.1e} in floating point: the "
                f"model's numbers are not exact (a rotation of floats is not exactly "
                f"orthogonal); load it with from_urdf(..., exact=True)", stacklevel=3)
        return pivots, R

    @property
    def rank(self) -> int:
        """The structural rank of Y: the number of base parameters."""
        return len(self._dependencies[0])

    @property
    def pivots(self) -> list:
        """The indices into π of each base parameter's leading parameter."""
        return list(self._dependencies[0])

    @property
    def base_names(self) -> list:
        """Each base parameter's name: its leading parameter's with R appended (Khalil's
        XX1R), in base's order."""
        return [f"{self.parameters[k]}R" for k in self.pivots]

    @cached_property
    def base(self) -> list:
        """β = R π: each base parameter its leading parameter plus the parameters that
        enter only with it, with exact rational coefficients (Y π = Y_b β)."""
        _, R = self._dependencies
        return [sm.Add(*[sm.Rational(c.numerator, c.denominator) * s
                         for c, s in zip(row, self.parameters) if c != 0]) for row in R]

    @property
    def base_values(self) -> list:
        """The base parameters' values at the model's own numbers."""
        return [float(b.xreplace(self.values)) for b in self.base]

    @property
    def unidentifiable(self) -> list:
        """The parameters Y has zero columns for: they do not enter τ at all."""
        _, R = self._dependencies
        return [s for k, s in enumerate(self.parameters) if all(row[k] == 0 for row in R)]

    def base_table(self, digits: int = 6) -> str:
        """The base parameters as a readable table: number, leading parameter, value,
        and the exact combination (coefficients shown to digits significant figures
        where they are not short fractions)."""
        lines = [f"{'#':>3}  {'base':<14} {'value':>13}  combination"]
        for k, (name, b) in enumerate(zip(self.base_names, self.base)):
            shown = b.xreplace({c: sm.Float(c, digits) for c in b.atoms(sm.Rational)
                                if c.q > 10 ** 4})
            lines.append(f"{k:>3}  {name:<14} "
                         f"{float(b.xreplace(self.values)):>13.6g}  {shown}")
        return "\n".join(lines)

    def programs(self, base: bool = True) -> dict:
        """{C function: (comment, Program, columns)} of Y and (base=True) Y_b, the model's
        numbers as Floats."""
        formed = self._with(sm.Float)
        out = {"regressor": ("the regressor Y: tau = Y pi", regressor_program(self.model, formed),
                             len(self.parameters))}
        if base:
            out["base_regressor"] = ("the base regressor Y_b: tau = Y_b beta",
                                     regressor_program(self.model, formed, self.pivots),
                                     self.rank)
        return out

    def export_c(self, name: str, output_dir="generated") -> dict:
        """Write Y and Y_b as standalone C, a header and a source, into output_dir/name/
        (codegen.identification.standalone): {file name: Path}."""
        return export_regressor_c(self, name, output_dir)

    def generate(self, name: str, output_dir="generated", base: bool = True) -> RegressorModule:
        """Compile Y and Y_b as C into output_dir/name/ and load them; base=False: Y alone,
        without the exact base parameters (for a model whose exact rank is out of reach,
        e.g. a constant turn whose cosine is not rational)."""
        if not name.isidentifier():
            raise ValueError(f"the module's name {name!r} must be a C identifier")
        source = regressor_source(name, self.model.name, self.n, self.nx, self.programs(base))
        return build_module(name, source, output_dir,
                            (self.n, self.nx, len(self.parameters), self.rank if base else None))


def model_symbols(formed) -> set:
    """The free symbols of the regressor that are neither states nor accelerations
    nor intermediates: the model's constants it still holds."""
    kin = formed.kin
    own = set(kin.qs) | set(kin.us) | set(kin.uds) | {i.symbol for i in formed.intermediates}
    free = set()
    for item in formed.intermediates:
        free |= item.expr.free_symbols
    for row in formed.Y:
        for e in row:
            free |= e.free_symbols
    return free - own
