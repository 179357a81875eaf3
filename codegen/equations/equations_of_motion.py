"""The formulation's output in neutral form: what the code generator compiles.

:class:`EquationsOfMotion` holds M u' = F and q' = f(q, u) on plain symbols,
with the names and order of every array the generated code uses:

    x = [q, u]      states, in the order of ``q`` then ``u``
    p = constants   parameters (default: the order the model declares, else
                    the free symbols sorted by name)
    r = specifieds  inputs: functions of time other than q, u (and their
                    time derivatives if the equations contain them)

The default order: the constants and inputs a model declares
(codegen.description.model.DeclaredOrder: a Model's ``constants`` and
``specifieds``) first, in its order, then every other one sorted by name; where
nothing is declared (a plain KanesMethod), all sorted by name.

A model with run-time constraints carries them as :class:`Constraints`; its
constants then include ``baumgarte_alpha`` (and ``baumgarte_beta`` if any
constraint is holonomic), the stabilization parameters (0 switches it off).

It is built by :func:`codegen.formulation.equations_of.equations_of`, from a
GibbsAppellMethod's plain-symbol results or from anything with KanesMethod's
interface; :func:`assemble` checks and names the parts of both. This module
imports nothing of the formulation.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import sympy as sm
from sympy.core.function import AppliedUndef
from sympy.physics.vector import dynamicsymbols

from ..symbolic.expressions import LazyMatrix

__all__ = ["EquationsOfMotion", "Constraints", "assemble", "variable_name",
           "BAUMGARTE_ALPHA", "BAUMGARTE_BETA", "DEFAULTS"]

t = dynamicsymbols._t


#: the Baumgarte parameters of the run-time constraint elimination: ordinary,
#: tunable constants of the generated model (in p, sorted by name like the
#: others; appended after the user's when the user orders p)
BAUMGARTE_ALPHA = sm.Symbol("baumgarte_alpha")
BAUMGARTE_BETA = sm.Symbol("baumgarte_beta")
#: their documented defaults [1/s]: a correction time of 0.2 s, critically damped
#: (alpha = beta); 0 switches the stabilization off. CompiledModel.parameters()
#: and an FMU's start values use them.
DEFAULTS = {"baumgarte_alpha": 5.0, "baumgarte_beta": 5.0}


@dataclass
class Constraints:
    """A(q, t) u = B(q, t), eliminated at run time (Singh & Likins).

    The first ``nh`` rows come from the configuration constraints f(q, t) = 0
    (f, and its Jacobian fq over q, serve projection and stabilization); the
    rest are velocity constraints. A u' = B' + S with B' = B_dot - A_dot u
    and Baumgarte's terms S = -2 alpha (A u - B) - beta**2 [f; 0].
    """
    A: sm.Matrix
    B: sm.Matrix
    Bdot: sm.Matrix
    f: list
    fq: sm.Matrix
    nh: int
    S: sm.Matrix = None

    @property
    def nc(self):
        return self.A.rows


@dataclass(frozen=True)
class EquationsOfMotion:
    """M(x, p, r, t) u' = F(x, p, r, t), q' = qdot(x, p, r, t), on plain symbols.

    A frozen value: the formulation's results as expressions and names, with
    nothing that calls back into it."""
    q: list                    # plain symbols of the coordinates
    u: list                    # plain symbols of the speeds the state carries
    qdot: list                 # expressions
    M: sm.Matrix               # or a symbolic.LazyMatrix, formed when read (a tree's)
    F: sm.Matrix
    symmetric: bool            # M is symmetric (solved by LDL^T, else LU)
    constants: list            # plain symbols, in the order of p
    specifieds: list           # functions of time / derivatives, in the order of r
    state_names: list
    constant_names: list
    specified_names: list
    origin: str = ""
    t: sm.Symbol = field(default=t)
    constraints: Constraints = None      # run-time constraints, if any
    # codegen.equations.intermediates.Intermediate, in order: symbols the expressions use that
    # the generated code computes first (the dependent speeds and their solve)
    intermediates: list = field(default_factory=list)
    # codegen.equations.tree.Tree: the bodies as a tree for the O(n) solve, or None
    tree: object = field(default=None, repr=False)
    tree_note: str = ""                  # why the bodies are not solved as a tree
    # what a run observes and does (codegen.equations.signals): outputs (Output: name, shape,
    # entries), the constraint forces appended as the last output, event functions
    # (Event) and impacts (Impact, in the events' order), on plain symbols
    outputs: list = field(default_factory=list)
    output_forces: bool = False
    events: list = field(default_factory=list)
    impacts: list = field(default_factory=list)

    @property
    def nq(self):
        return len(self.q)

    @property
    def nu(self):
        return len(self.u)


def variable_name(obj) -> str:
    """The plain name of a symbol, a function of time or its derivative."""
    if isinstance(obj, sm.Derivative):
        return variable_name(obj.expr) + "_" + "d" * obj.derivative_count
    if isinstance(obj, AppliedUndef):
        return str(obj.func)
    return str(obj)


def _inputs_in(expr, states, out: set) -> set:
    """Functions of time other than the states, and derivatives, as they occur (outermost)."""
    if isinstance(expr, sm.Derivative):
        if expr.expr not in states:
            out.add(expr)
    elif isinstance(expr, AppliedUndef):
        if expr not in states:
            out.add(expr)
    else:
        for a in expr.args:
            _inputs_in(a, states, out)
    return out


def _stabilized(c: Constraints, u) -> Constraints:
    """c with Baumgarte's S = -2 alpha (A u - B) - beta^2 [f; 0]."""
    res = c.A * sm.Matrix(u) - c.B
    pos = sm.Matrix(list(c.f) + [0] * (c.nc - c.nh))
    c.S = -2 * BAUMGARTE_ALPHA * res - BAUMGARTE_BETA**2 * pos
    return c


def mass_expressions(M) -> list:
    """M's entries, or where M is not formed yet (symbolic.LazyMatrix: a tree's, which
    the build does not read) its symbols, known without forming it."""
    if isinstance(M, LazyMatrix) and not M.formed and M.symbols is not None:
        return sorted(M.symbols, key=str)
    return list(M)


def _refuse_duplicates(items, what):
    seen, twice = set(), []
    for item in items:
        if item in seen and item not in twice:
            twice.append(item)
        seen.add(item)
    if twice:
        raise ValueError(f"{what} name {', '.join(map(str, twice))} more than once: each entry "
                         f"of the array must be a different symbol")


def _check_symbols(constants, what: str):
    """Every constant a SymPy Symbol other than time."""
    bad = [c for c in constants if not isinstance(c, sm.Symbol)]
    if bad:
        raise TypeError(f"{what} must be SymPy Symbols, got {bad}")
    if t in constants:
        raise ValueError(f"constant {t} is SymPy's time symbol (dynamicsymbols._t): the "
                         f"equations cannot tell it from time; give it another name")


def _declared_first(found, declared, key) -> list:
    """The default order of an array: the declared entries in their order, then the
    other found ones sorted by key."""
    declared = list(dict.fromkeys(declared))
    return declared + sorted(set(found) - set(declared), key=key)


def assemble(q, u, qdot, M, F, symmetric, constants, specifieds, names, origin,
             constraints=None, intermediates=(), tree=None, tree_note="", *,
             declared=None) -> EquationsOfMotion:
    """The neutral equations from their parts on plain symbols: the arrays p and r
    ordered (constants, specifieds: the user's order, checked, or the default: the
    declared order, an object with ``constants`` and ``specifieds`` such as
    codegen.description.model.DeclaredOrder, then the rest sorted by name) and
    Baumgarte's terms added to the run-time constraints. names: of the states."""
    if len(set(names)) != len(names):
        raise ValueError(f"state names are not unique: {names}")
    exprs = list(qdot) + mass_expressions(M) + list(F) + [item.expr for item in intermediates]
    if constraints is not None:
        constraints = _stabilized(constraints, u)
        exprs += list(constraints.Bdot) + list(constraints.S) + list(constraints.A) + list(constraints.fq)
    states = set(q) | set(u)
    found = set()
    for e in exprs:
        _inputs_in(e, states, found)
    if specifieds is None:
        specifieds = _declared_first(found, declared.specifieds if declared else (),
                                     variable_name)
    else:
        if not isinstance(specifieds, (list, tuple, sm.MatrixBase)):
            raise TypeError(f"specifieds must be a list of functions of time, got {specifieds!r}")
        specifieds = list(specifieds)
        _refuse_duplicates(specifieds, "specifieds")
        missing = sorted(found - set(specifieds), key=variable_name)
        if missing:
            raise ValueError(f"the equations contain {', '.join(map(str, missing))}, which "
                             f"is not in specifieds {specifieds}")
        unused = [s for s in specifieds if s not in found]
        if unused:
            warnings.warn(f"specified input {', '.join(map(str, unused))} does not appear in the "
                          f"equations: it keeps its place in r and is ignored", stacklevel=4)
    free = set()
    for e in exprs:
        free |= e.free_symbols
    free -= states | {t} | {item.symbol for item in intermediates}
    if constants is None:
        constants = _declared_first(free, declared.constants if declared else (), str)
        _check_symbols(constants, "the model's declared constants")
    else:
        if not isinstance(constants, (list, tuple, sm.MatrixBase)):
            raise TypeError(f"constants must be a list of SymPy Symbols, got {constants!r}")
        constants = list(constants)
        _check_symbols(constants, "constants")
        _refuse_duplicates(constants, "constants")
        # the generator's own constants need not be listed: they come last
        constants += sorted((free & {BAUMGARTE_ALPHA, BAUMGARTE_BETA}) - set(constants), key=str)
        missing = sorted(free - set(constants), key=str)
        if missing:
            raise ValueError(f"the equations contain {', '.join(map(str, missing))}, which "
                             f"is not in constants {constants}")
    return EquationsOfMotion(
        q=list(q), u=list(u), qdot=list(qdot), M=M, F=F, symmetric=symmetric,
        constants=constants, specifieds=specifieds,
        state_names=names, constant_names=[str(c) for c in constants],
        specified_names=[variable_name(s) for s in specifieds], origin=origin,
        constraints=constraints, intermediates=list(intermediates), tree=tree,
        tree_note=tree_note)


