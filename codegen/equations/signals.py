"""What a run observes and does besides integrating: outputs, events, impacts and
feedback laws, as expressions on the neutral equations.

``generate(eom, name, outputs=..., events=..., impacts=..., control=...)`` (and the
exports) hand the user's SymPy expressions, in the model's coordinates and speeds
(functions of time), its constants, its inputs and t, to :func:`attach`, which checks
them and writes them on plain symbols into the :class:`~codegen.equations.equations_of_motion.EquationsOfMotion`
that code generation compiles (codegen.algorithms.plan gives each kind its program):

- outputs ``{name: expression, Matrix or ready name}``: a Matrix keeps its shape (a
  frame's orientation ``N.dcm(A)``, a point's position ``P.pos_from(O).to_matrix(N)``);
  the ready names are "kinetic_energy" (of the model's bodies), "potential_energy"
  (their ``potential_energy`` attributes, as SymPy's ``potential_energy`` sums them; see
  also :func:`potential_energy` for constant forces) and "constraint_forces" (the
  multipliers of run-time constraints, which the runtime computes);
- events ``{name: g}``: functions whose sign changes the integrators locate;
- impacts ``{event name: (point, normal or [normals], restitution)}``: Newton's impact
  law at the point, over the partial velocities of its velocity in the Newtonian frame
  along each normal (several normals with restitution 0: a plastic, sticking contact);
- control ``{input: law}``: the law replaces the input in every expression, so that the
  compiled model, its standalone C and its FMU are the closed loop.

A symbol that is neither a constant of the model nor listed in ``constants=`` is an
error that names it, and so is a function of time that is neither a state nor an input.
"""
from __future__ import annotations

import dataclasses
import keyword
from dataclasses import dataclass, field

import sympy as sm
from sympy.core.function import AppliedUndef
from sympy.physics.vector import Point, Vector

from .equations_of_motion import EquationsOfMotion, mass_expressions, variable_name

__all__ = ["Signals", "Output", "Event", "Impact", "attach", "potential_energy", "READY",
           "entry_names", "shapes_of"]

#: the ready outputs by name
READY = ("kinetic_energy", "potential_energy", "constraint_forces")
#: SymPy's values that are no number a run could use
NOT_FINITE = (sm.nan, sm.zoo, sm.oo, -sm.oo)


@dataclass(frozen=True)
class Output:
    """An output: its name, shape (() for a scalar) and entries (row-major), plain."""
    name: str
    shape: tuple
    exprs: list


@dataclass(frozen=True)
class Event:
    name: str
    expr: object


@dataclass(frozen=True)
class Impact:
    """The contact rows of an event's impact: J (one row of nu partial velocities per
    normal), the normal velocities vn and the restitutions e, plain."""
    event: str
    J: list
    vn: list
    e: list


@dataclass(frozen=True)
class Signals:
    """The user's outputs, events, impacts and control laws, as given to generate."""
    outputs: dict = field(default_factory=dict)
    events: dict = field(default_factory=dict)
    impacts: dict = field(default_factory=dict)
    control: dict = field(default_factory=dict)

    def __bool__(self):
        return bool(self.outputs or self.events or self.impacts or self.control)


def _check_name(name, what: str) -> str:
    if not (isinstance(name, str) and name.isidentifier() and not keyword.iskeyword(name)):
        raise ValueError(f"{what} name {name!r} must be a Python identifier")
    return name


def _dict(value, what: str) -> dict:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise TypeError(f"{what} must be a dict {{name: ...}}, got {type(value).__name__}")
    return value


class _Plain:
    """The user's expressions on the model's plain symbols: the states by name, q' as
    the solved kinematics, the controlled inputs by their laws; anything else unknown
    is an error that names it."""

    def __init__(self, eq: EquationsOfMotion, source, control: dict):
        self.eq, self.source = eq, source
        self.coordinates = dict(zip(eq.state_names[:eq.nq], range(eq.nq)))
        self.states = dict(zip(eq.state_names, list(eq.q) + list(eq.u)))
        self.control = control
        self.known = (set(eq.constants) | {eq.t} | set(eq.q) | set(eq.u)
                      | {item.symbol for item in eq.intermediates})

    def __call__(self, expr, what: str):
        try:
            expr = sm.sympify(expr)
        except (sm.SympifyError, TypeError) as exc:
            raise TypeError(f"{what} must be a SymPy expression: {exc}") from None
        if not isinstance(expr, sm.Basic) or isinstance(expr, (sm.MatrixBase, Vector)):
            raise TypeError(f"{what} must be a scalar SymPy expression, got {expr!r}")
        to_state = getattr(self.source, "to_state", None)
        if callable(to_state) and expr.atoms(AppliedUndef):
            try:                             # q' and dependent speeds, as the model has them
                expr = to_state(expr)
            except (ValueError, AttributeError) as exc:
                raise ValueError(f"{what}: {exc}") from None
        eq, memo = self.eq, {}
        for d in expr.atoms(sm.Derivative):
            if d in self.control:
                memo[d] = self.control[d]
            elif d in eq.specifieds:
                continue
            elif d.derivative_count == 1 and variable_name(d.expr) in self.coordinates \
                    and d.expr.args == (eq.t,):
                memo[d] = eq.qdot[self.coordinates[variable_name(d.expr)]]
            else:
                raise ValueError(f"{what} contains {d}, which the model cannot evaluate from "
                                 f"its state (accelerations are not outputs)")
        if memo:
            expr = expr.xreplace(memo)
            memo = {}
        for f in expr.atoms(AppliedUndef):
            if f in self.control:
                memo[f] = self.control[f]
            elif f in eq.specifieds:
                continue
            elif f.args == (eq.t,) and variable_name(f) in self.states:
                memo[f] = self.states[variable_name(f)]
            else:
                raise ValueError(f"{what} contains {f}, which is neither a state "
                                 f"({', '.join(eq.state_names)}) nor an input of the model"
                                 + (f" ({', '.join(eq.specified_names)})"
                                    if eq.specifieds else ""))
        if memo:
            expr = expr.xreplace(memo)
        unknown = sorted(map(str, expr.free_symbols - self.known))
        if unknown:
            raise ValueError(f"{what} contains {', '.join(unknown)}, which the model does not "
                             f"have (constants: {', '.join(eq.constant_names) or 'none'}; time: "
                             f"{eq.t}): list it in constants= to make it a constant of the "
                             f"model")
        return expr

    def finite(self, expr, what: str):
        """expr on plain symbols (as called), refused where it holds nan, zoo or oo:
        compiled, it would be non-finite at every call and each run would end blaming
        the equations."""
        plain = self(expr, what)
        if plain.has(*NOT_FINITE):
            raise ValueError(f"{what} is not finite ({sm.sympify(expr)}): give a finite "
                             f"expression")
        return plain


def _bodies_and_frame(source, what: str):
    bodies = getattr(source, "bodies", None)
    frame = getattr(source, "_inertial", None)
    if not bodies or frame is None:
        raise ValueError(f"{what} needs the model's bodies and Newtonian frame: generate from "
                         f"the formed GibbsAppellMethod or KanesMethod, not from its equations")
    return bodies, frame


def potential_energy(loads, origin, frame) -> sm.Expr:
    """The potential energy V = -sum F . r of forces constant in ``frame`` (gravity),
    r each point's position from ``origin``: an output for loads the user names.
    A force that is not constant in the frame (it depends on the motion or on time) is
    refused, naming its point: give its potential yourself."""
    from sympy.physics.vector import dynamicsymbols
    V = sm.S.Zero
    for load in loads:
        point, force = (load.location, load.vector) if hasattr(load, "location") else load
        if not isinstance(force, Vector):
            raise TypeError(f"potential_energy takes (point, force) loads, got {load!r}")
        components = force.to_matrix(frame)
        if any(c.atoms(AppliedUndef) or dynamicsymbols._t in c.free_symbols
               for c in components):
            raise ValueError(f"the force on {point} is not constant in {frame}: give its "
                             f"potential energy yourself")
        V -= force.dot(point.pos_from(origin))
    return V


def _ready(name: str, key: str, source, eq) -> tuple:
    """(shape, exprs in functions of time, forces?) of a ready output."""
    if name == "kinetic_energy":
        bodies, frame = _bodies_and_frame(source, f"output {key!r} (kinetic_energy)")
        return (), [sm.Add(*[b.kinetic_energy(frame) for b in bodies])], False
    if name == "potential_energy":
        bodies, _ = _bodies_and_frame(source, f"output {key!r} (potential_energy)")
        V = sm.Add(*[sm.sympify(getattr(b, "potential_energy", 0)) for b in bodies])
        if V == 0:
            raise ValueError(f"output {key!r}: no body of the model has a potential_energy; "
                             f"set it (particle.potential_energy = m*g*h) or give V, e.g. "
                             f"codegen.potential_energy(loads, origin, frame)")
        return (), [V], False
    if eq.constraints is None:
        raise ValueError(f"output {key!r}: the model has no run-time constraints, so no "
                         f"constraint forces")
    return (eq.constraints.nc,), [], True


def _outputs(outputs: dict, plain: _Plain, source, eq) -> tuple:
    out, forces = [], None
    for key, value in outputs.items():
        _check_name(key, "output")
        if isinstance(value, str):
            if value not in READY:
                raise ValueError(f"output {key!r}: {value!r} is not a ready output "
                                 f"({', '.join(READY)}); give an expression instead")
            shape, exprs, is_forces = _ready(value, key, source, eq)
            if is_forces:
                forces = Output(key, shape, [])
                continue
        elif isinstance(value, Vector):
            raise TypeError(f"output {key!r} is a Vector: give its components in a frame, "
                            f"e.g. v.to_matrix(N)")
        elif isinstance(value, sm.MatrixBase):
            shape = (value.rows,) if value.cols == 1 else tuple(value.shape)
            exprs = list(value)
        else:
            shape, exprs = (), [value]
        out.append(Output(key, shape, [plain.finite(e, f"output {key!r}") for e in exprs]))
    if forces is not None:
        out.append(forces)               # the runtime appends them last (CG_OUTPUT_FORCES)
    return out, forces is not None


def _impact(key, value, plain: _Plain, source, eq, events: list) -> Impact:
    if key not in [e.name for e in events]:
        raise ValueError(f"impact {key!r} names no event (events: "
                         f"{', '.join(e.name for e in events) or 'none'})")
    if eq.constraints is not None:
        raise ValueError(f"impact {key!r}: impacts on a model with run-time constraints are "
                         f"not supported")
    try:
        point, normals, restitution = value
    except (TypeError, ValueError):
        raise TypeError(f"impact {key!r} must be (point, normal or [normals], "
                        f"restitution), got {value!r}") from None
    if not isinstance(point, Point):
        raise TypeError(f"impact {key!r}: the contact point must be a sympy.physics.vector "
                        f"Point, got {point!r}")
    normals = list(normals) if isinstance(normals, (list, tuple)) else [normals]
    if not normals or not all(isinstance(n, Vector) for n in normals):
        raise TypeError(f"impact {key!r}: the normal must be a Vector or a list of Vectors")
    _, frame = _bodies_and_frame(source, f"impact {key!r}")
    speeds = getattr(source, "u_independent", None)
    speeds = list(speeds) if speeds is not None else list(source.u)
    v = point.vel(frame)
    J, vn = [], []
    for n in normals:
        v_n = plain(v.dot(n), f"impact {key!r} (the velocity of {point} along {n})")
        row = [v_n.diff(s) for s in eq.u]
        if any(r.has(*eq.u) for r in row):
            raise ValueError(f"impact {key!r}: the velocity of {point} is not linear in the "
                             f"speeds")
        if all(r == 0 for r in row):
            raise ValueError(f"impact {key!r}: the contact Jacobian is zero ({point} has no "
                             f"velocity along {n} in the speeds {', '.join(map(str, speeds))})")
        J.append(row)
        vn.append(v_n)
    e = plain(restitution, f"impact {key!r} (restitution)")
    if not e.free_symbols:       # a number: checked here; one of the constants, at run time
        try:
            value = float(e)
        except TypeError:
            value = float("nan")
        if not 0.0 <= value <= 1.0:
            raise ValueError(f"impact {key!r}: the restitution must be a number in [0, 1] (0: "
                             f"plastic, 1: elastic), got {restitution!r}")
    return Impact(key, J, vn, [e] * len(normals))


def _substituted(value, memo: dict):
    """value with memo applied to every expression in it (lists, matrices, dataclasses)."""
    if isinstance(value, list):
        return [_substituted(v, memo) for v in value]
    if isinstance(value, sm.MatrixBase):
        return value.xreplace(memo)
    if isinstance(value, sm.Basic):
        return value.xreplace(memo)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.replace(value, **{f.name: _substituted(getattr(value, f.name), memo)
                                             for f in dataclasses.fields(value) if f.init})
    return value


def _close_loop(eq: EquationsOfMotion, control: dict, source) -> tuple:
    """(equations with the controlled inputs replaced by their laws, {input: law})."""
    by_name = dict(zip(eq.specified_names, eq.specifieds))
    laws = {}
    for key, law in control.items():
        r = by_name.get(key) if isinstance(key, str) else (key if key in eq.specifieds else None)
        if r is None:
            raise ValueError(f"control: {key} is not an input of the model (inputs: "
                             f"{', '.join(eq.specified_names) or 'none'})")
        laws[r] = law
    plain = _Plain(eq, source, {})
    laws = {r: plain.finite(law, f"control law of {variable_name(r)}")
            for r, law in laws.items()}
    for r, law in laws.items():
        loop = [variable_name(s) for s in laws if law.has(s)]
        if loop:
            raise ValueError(f"control law of {variable_name(r)} uses the controlled input "
                             f"{', '.join(loop)}: an algebraic loop")
    exprs = list(eq.qdot) + mass_expressions(eq.M) + list(eq.F) \
        + [i.expr for i in eq.intermediates]
    for r in laws:
        rates = [d for e in exprs for d in e.atoms(sm.Derivative) if d.expr == r]
        if rates:
            raise ValueError(f"control: the equations use {rates[0]}, the rate of the "
                             f"controlled input {variable_name(r)}")
    kept = [i for i, s in enumerate(eq.specifieds) if s not in laws]
    closed = dataclasses.replace(
        eq, qdot=_substituted(list(eq.qdot), laws), M=eq.M.xreplace(laws), F=eq.F.xreplace(laws),
        constraints=_substituted(eq.constraints, laws),
        intermediates=_substituted(list(eq.intermediates), laws),
        tree=_substituted(eq.tree, laws),
        specifieds=[eq.specifieds[i] for i in kept],
        specified_names=[eq.specified_names[i] for i in kept])
    return closed, laws


def attach(eq: EquationsOfMotion, source, signals: Signals) -> EquationsOfMotion:
    """eq with the signals checked and compiled in (see the module docstring); source:
    what the equations came from (its bodies, frame and speeds serve the ready outputs
    and the impacts)."""
    if not signals:
        return eq
    outputs, events = _dict(signals.outputs, "outputs"), _dict(signals.events, "events")
    impacts, control = _dict(signals.impacts, "impacts"), _dict(signals.control, "control")
    laws = {}
    if control:
        eq, laws = _close_loop(eq, control, source)
    plain = _Plain(eq, source, laws)
    outs, forces = _outputs(outputs, plain, source, eq)
    evs = [Event(_check_name(k, "event"), plain.finite(g, f"event {k!r}"))
           for k, g in events.items()]
    imps = [_impact(k, v, plain, source, eq, evs) for k, v in impacts.items()]
    order = {e.name: i for i, e in enumerate(evs)}
    imps.sort(key=lambda i: order[i.event])
    names = [o.name for o in outs]
    if len(set(names)) != len(names):
        raise ValueError(f"output names must be unique: {names}")
    return dataclasses.replace(eq, outputs=outs, output_forces=forces, events=evs,
                               impacts=imps)


def entry_names(outputs: list) -> list:
    """The C names of the outputs' entries: ``T``, ``p[0]``, ``R[0,1]`` (row-major)."""
    names = []
    for o in outputs:
        if o.shape == ():
            names.append(o.name)
        elif len(o.shape) == 1:
            names += [f"{o.name}[{i}]" for i in range(o.shape[0])]
        else:
            names += [f"{o.name}[{i},{j}]" for i in range(o.shape[0]) for j in range(o.shape[1])]
    return names


def shapes_of(entries) -> dict:
    """{name: shape} of the outputs from their entries' names (entry_names' inverse), in
    order: what a loaded model reads from its descriptor."""
    shapes = {}
    for entry in entries:
        name, _, index = entry.partition("[")
        if not index:
            shapes[name] = ()
            continue
        at = tuple(int(i) + 1 for i in index.rstrip("]").split(","))
        old = shapes.get(name, (0,) * len(at))
        shapes[name] = tuple(max(a, b) for a, b in zip(old, at))
    return shapes
