"""A documentation example as a model both KanesMethod and GibbsAppellMethod form.

:class:`DocModel` holds what a documentation page builds (frame, coordinates,
speeds, kinematic equations, constraints, bodies, loads, or the
``sympy.physics.mechanics.System`` that holds them) with the numbers it runs
with, and forms it through the page's own call: ``KanesMethod(...)`` then
``kanes_equations(bodies, loads)``, or ``System.form_eoms(eom_method=...)``,
with the method class swapped. The numeric helpers evaluate the formed
matrices at consistent states (dependent coordinates and speeds solved from
the constraints), through their common subexpressions (``sympy.cse``), never
by simplifying.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import sympy as sm
import sympy.physics.mechanics as me
from sympy.physics.biomechanics.curve import CharacteristicCurveFunction

__all__ = ["DocModel", "from_system", "Evaluated", "consistent_state", "solve_full"]

t = me.dynamicsymbols._t


@dataclass
class DocModel:
    """A documented model. ``form(cls)`` makes the documented call with cls in place
    of KanesMethod and returns the formed method object."""
    name: str
    source: str
    frame: me.ReferenceFrame
    q_ind: list
    u_ind: list
    kd_eqs: list
    bodies: list
    loads: list
    q_dependent: list = field(default_factory=list)
    u_dependent: list = field(default_factory=list)
    configuration_constraints: list = field(default_factory=list)
    velocity_constraints: list = field(default_factory=list)
    u_auxiliary: list = field(default_factory=list)
    #: the constructor's further keywords as documented (constraint_solver='CRAMER')
    options: dict = field(default_factory=dict)
    #: a model the documentation forms with System.form_eoms(eom_method=..., **form_options)
    system: me.System | None = None
    form_options: dict = field(default_factory=dict)
    #: numbers: {Symbol: value}, {specified dynamicsymbol: value}, {q or u: value}
    constants: dict = field(default_factory=dict)
    specifieds: dict = field(default_factory=dict)
    initial_conditions: dict = field(default_factory=dict)
    #: the documentation's simulation span and number of output times
    times: tuple = (0.0, 1.0, 11)
    #: what differs from the page (values the page does not give, a method it does not use)
    note: str = ""

    def form(self, method_class):
        """The documented formation with method_class; returns the formed method."""
        if self.system is not None:
            self.system.form_eoms(eom_method=method_class, **self.form_options)
            return self.system.eom_method
        kw = dict(kd_eqs=self.kd_eqs, **self.options)
        for key in ("q_dependent", "u_dependent", "configuration_constraints",
                    "velocity_constraints"):
            if getattr(self, key):
                kw[key] = getattr(self, key)
        if self.u_auxiliary:
            kw["u_auxiliary"] = self.u_auxiliary
        method = method_class(self.frame, self.q_ind, self.u_ind, **kw)
        method.kanes_equations(self.bodies, self.loads)
        return method

    @property
    def q(self):
        return list(self.q_ind) + list(self.q_dependent)

    @property
    def u(self):
        return list(self.u_ind) + list(self.u_dependent)

    def time_grid(self, end=None, num=None):
        start, stop, n = self.times
        return np.linspace(start, stop if end is None else end, n if num is None else num)


def from_system(name: str, source: str, system: me.System, **kw) -> DocModel:
    """A DocModel formed through ``system.form_eoms``; the lists are the system's."""
    loads = list(system.loads) + [ld for act in system.actuators for ld in act.to_loads()]
    return DocModel(name, source, system.frame, list(system.q_ind), list(system.u_ind),
                    list(system.kdes), list(system.bodies), loads,
                    q_dependent=list(system.q_dep), u_dependent=list(system.u_dep),
                    configuration_constraints=list(system.holonomic_constraints),
                    velocity_constraints=list(system.velocity_constraints),
                    u_auxiliary=list(system.u_aux), system=system, **kw)


class Evaluated:
    """A list of matrices through their common subexpressions (``sympy.cse``, once):
    the symbols and functions of time they hold, read off the reduced forms, and their
    values at numbers. Substituting floats into the reduced forms in order takes a
    few tenths of a second where lambdify (which prints the code) takes ten seconds,
    and walking the expressions as trees (free_symbols, find_dynamicsymbols) a
    minute, on a model of a million operations."""

    def __init__(self, exprs):
        replacements, reduced = sm.cse(list(exprs), order="none")
        self.replacements = [(s, _written_out(e)) for s, e in replacements]
        self.reduced = [X.applyfunc(_written_out) for X in reduced]
        parts = [e for _, e in self.replacements] + [e for X in self.reduced for e in X]
        made = {s for s, _ in self.replacements}
        self.symbols = set().union(*(e.free_symbols for e in parts)) - made - {t}
        self.functions = set().union(*(me.find_dynamicsymbols(e) for e in parts))

    def inputs(self, method) -> list:
        """The specified inputs, as PyDy's System finds them: the functions of time
        that are not q, u, their rates or auxiliary speeds; sorted by name."""
        known = set(method.q) | set(method.u) | set(method.q.diff(t)) | set(method.u.diff(t))
        aux = list(getattr(method, "_uaux", []))
        known |= set(aux) | {a.diff(t) for a in aux}
        return sorted(self.functions - known, key=str)

    def __call__(self, values: dict) -> list:
        """The matrices as float arrays at values ({symbol or function: number}, every
        one they hold)."""
        missing = (self.symbols | self.functions) - set(values)
        if missing:
            raise ValueError(f"no value for {sorted(map(str, missing))}")
        env = {k: sm.Float(float(v)) for k, v in values.items()}
        for symbol, expr in self.replacements:
            value = expr.xreplace(env)
            env[symbol] = value if value.is_Number else sm.Float(_number(value))
        return [np.array(X.xreplace(env).applyfunc(_number), dtype=float) for X in self.reduced]


def _written_out(e):
    """biomechanics' characteristic curves evaluate on floats through evalf of their
    symbolic form (seconds a call): written out, they are plain exp, log and sqrt."""
    return e.replace(lambda c: isinstance(c, CharacteristicCurveFunction),
                     lambda c: c.doit(deep=False))


def _number(value) -> float:
    return float(value) if value.is_Number else float(value.evalf())


def solve_full(M, F) -> np.ndarray:
    """[q'; u'] from mass_matrix_full and forcing_full, numbers."""
    return np.linalg.solve(np.array(M, dtype=float), np.array(F, dtype=float).ravel())


def _newton(f, jac, x0, tol=1e-13, maxiter=50):
    x = np.array(x0, dtype=float)
    for _ in range(maxiter):
        r = np.array(f(x), dtype=float).ravel()
        if np.abs(r).max() < tol:
            return x
        x = x - np.linalg.lstsq(np.array(jac(x), dtype=float), r, rcond=None)[0]
    raise ValueError(f"the configuration constraints did not converge "
                     f"(residual {abs(r).max():.3g})")


def consistent_state(model: DocModel, kane, rng=None, spread=0.3, specifieds=()):
    """(q, u, r) as arrays in kane.q, kane.u and specifieds order: the independent
    coordinates at the initial conditions plus a random offset of at most ±spread,
    the dependent ones solved from the configuration constraints, random independent
    speeds in ±1 around the initial ones, the dependent speeds solved from the
    velocity constraints (auxiliary speeds zero); random specified inputs in ±1.
    With rng None: the initial conditions made consistent, the model's specifieds."""
    q, u = list(kane.q), list(kane.u)
    p = {k: float(v) for k, v in model.constants.items()}
    ic = model.initial_conditions
    offset = (lambda s: 0.0) if rng is None else (lambda s: float(rng.uniform(-s, s)))
    qv = {s: float(ic.get(s, 0.0)) for s in q}
    for s in model.q_ind:
        qv[s] += offset(spread)
    q_dep = list(model.q_dependent)
    if q_dep:
        fh = sm.Matrix(model.configuration_constraints).xreplace(p)
        known = {s: v for s, v in qv.items() if s not in q_dep}
        fh = fh.xreplace(known)
        f = sm.lambdify([q_dep], fh, modules="numpy")
        jac = sm.lambdify([q_dep], fh.jacobian(q_dep), modules="numpy")
        qv.update(zip(q_dep, _newton(f, jac, [qv[s] for s in q_dep])))
    uv = {s: float(ic.get(s, 0.0)) + offset(1.0) for s in model.u_ind}
    aux = {a: 0 for a in model.u_auxiliary}
    u_dep = list(model.u_dependent)
    if u_dep:
        fv = sm.Matrix(model.velocity_constraints).xreplace(aux)
        fv = fv.xreplace(kane.kindiffdict()).xreplace(p)
        A = fv.jacobian(u_dep)
        b = fv.xreplace(dict.fromkeys(u_dep, 0))
        nums = {**qv, **uv}
        A = np.array(sm.lambdify([list(nums)], A, modules="numpy")(list(nums.values())),
                     dtype=float)
        b = np.array(sm.lambdify([list(nums)], b, modules="numpy")(list(nums.values())),
                     dtype=float).ravel()
        uv.update(zip(u_dep, np.linalg.solve(A, -b)))
    r = np.array([float(model.specifieds.get(s, 0.0)) if rng is None else offset(1.0)
                  for s in specifieds])
    return np.array([qv[s] for s in q]), np.array([uv[s] for s in u]), r
