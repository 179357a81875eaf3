"""Constrained models for the regressor: which speeds are independent, and exact states on
a closed loop.

A model's constraints take one of three forms (codegen.formulation.constraints): none;
dependent speeds named by the model (``u_dependent``, with ``q_dependent`` for a closed
loop reduced symbolically); or constraints left to the run-time elimination. For the last,
the regressor needs independent speeds of its own: the speeds' split is chosen here, the
constraint rows' Jacobian in the speeds evaluated at the model's initial state, and the
rows are the time derivatives of the configuration constraints and the velocity
constraints. Y is then projected as for dependent speeds, Y_r = Tᵀ Y with T = [I; A] the
constraints' null space in the split's coordinates (u = T u_i).
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import sympy as sm
from sympy.physics.vector import dynamicsymbols

from ..formulation.kinematics import Kinematics
from .algebraic import closure_point

__all__ = ["Split", "split_speeds", "closure_polynomials", "loop_points"]

t = dynamicsymbols._t


@dataclass
class Split:
    """The kinematics the regressor is formed with, its velocity constraints (rows in
    the model's q(t), u(t)), the configuration constraints that close loops, and the
    dependent coordinates (each with its position in the model's state)."""
    kin: Kinematics
    velocity: list
    closure: list
    q_dependent: list
    state: list            # the model's state, in order: coordinates then speeds


def _numeric(model, exprs, symbols, point):
    """exprs at the model's numbers and point (a float each of symbols)."""
    values = {s: v for s, v in zip(symbols, point)}
    by_name = {str(s): s for row in exprs for e in row for s in e.free_symbols}
    values.update({by_name[k]: v for k, v in model.parameter_values.items() if k in by_name})
    return np.array([[float(e.xreplace(values)) for e in row] for row in exprs])


def _independent(M, order, tol=1e-9):
    """Indices (taken in order) of M's columns that raise its rank, numerically."""
    chosen = []
    for j in order:
        trial = chosen + [j]
        s = np.linalg.svd(M[:, trial], compute_uv=False)
        if len(s) == len(trial) and s[-1] > tol * max(1.0, s[0]):
            chosen = trial
    return chosen


def split_speeds(model) -> Split:
    """The Split of a model (module docstring)."""
    q, u = list(model.q_ind), list(model.u_ind)
    state = q + list(model.q_dependent or []) + u
    if model.u_dependent:
        kin = Kinematics(q, u, model.kd_eqs, model.q_dependent, model.u_dependent)
        return Split(kin, list(model.velocity_constraints), list(model.configuration_constraints),
                     list(model.q_dependent or []), state)
    if model.q_dependent:
        raise NotImplementedError(f"model {model.name!r} names dependent coordinates but no "
                                  f"dependent speeds: give u_dependent with its velocity "
                                  f"constraints")
    closure = list(model.configuration_constraints)
    if not closure and not model.velocity_constraints:
        return Split(Kinematics(q, u, model.kd_eqs), [], [], [], state)
    plain = Kinematics(q, u, model.kd_eqs)
    rows = [sm.diff(c, t) for c in closure] + list(model.velocity_constraints)
    J = sm.Matrix([plain.to_plain(r, "constraint", inputs=False) for r in rows]).jacobian(plain.us)
    start = list(model.initial_state)[:len(state)] or [0.3] * len(state)
    Jn = _numeric(model, J.tolist(), plain.qs + plain.us, start)
    keep = _independent(Jn.T, range(len(rows)))
    # the last speeds are made dependent, so a chain's first joints (a crank) stay independent
    dependent = sorted(_independent(Jn[keep], reversed(range(len(u)))))
    independent = [j for j in range(len(u)) if j not in dependent]
    kin = Kinematics(q, [u[j] for j in independent], model.kd_eqs,
                     u_dependent=[u[j] for j in dependent])
    qdep = []
    if closure:
        Jq = sm.Matrix([plain.to_plain(c, "constraint", inputs=False)
                        for c in closure]).jacobian(plain.qs)
        Jqn = _numeric(model, Jq.tolist(), plain.qs + plain.us, start)
        rows_q = _independent(Jqn.T, range(len(closure)))
        qdep = [q[j] for j in sorted(_independent(Jqn[rows_q], reversed(range(len(q)))))]
        closure = [closure[i] for i in rows_q]
    return Split(kin, [rows[i] for i in keep], closure, qdep, state)


def closure_polynomials(split: Split, values: dict):
    """(polys, pairs, bare): the closure's configuration constraints as polynomials in
    each angle's (sin, cos) symbols and in the coordinates that enter bare (a slider's
    length), the model's numbers as exact rationals (values {name: Rational}); pairs
    {an angle's plain symbol: (s, c)}, bare: the bare coordinates' plain symbols."""
    kin = split.kin
    plain = [kin.to_plain(e, "configuration constraint", inputs=False) for e in split.closure]
    plain = [sm.expand_trig(e) for e in plain]
    angles = {a.args[0] for e in plain for a in e.atoms(sm.sin, sm.cos)}
    pairs, trig = {}, {}
    for k, qs in enumerate(kin.qs):
        if qs in angles:
            s, c = sm.Dummy(f"s{k}"), sm.Dummy(f"c{k}")
            pairs[qs] = (s, c)
            trig[sm.sin(qs)], trig[sm.cos(qs)] = s, c
    polys = []
    for e in plain:
        by_name = {str(s): s for s in e.free_symbols}
        e = e.xreplace({by_name[k]: v for k, v in values.items() if k in by_name})
        e = e.xreplace(trig)
        if e.free_symbols & set(pairs):
            raise NotImplementedError(f"the closure {e} is not a polynomial in the "
                                      f"coordinates' sines and cosines")
        polys.append(sm.numer(sm.together(sm.expand(e))))
    bare = [qs for qs in kin.qs if qs not in pairs]
    return polys, pairs, bare


def loop_points(split: Split, values: dict, nx: int, n: int):
    """point(rng) -> (arrays, angles) or None: a random exact state on the closure for
    codegen.identification.exact (the dependent coordinates' values, sines and cosines
    algebraic, codegen.identification.algebraic.closure_point), rational x and u'
    elsewhere; values: the model's numbers {name: Rational}. An angle that the closure
    does not hold gets a rational (sin, cos) of its own."""
    polys, pairs, bare = closure_polynomials(split, values)
    kin = split.kin
    dep = {str(q.func) for q in split.q_dependent}
    is_dep = {s: str(q.func) in dep for s, q in zip(kin.qs, kin.q)}
    position = {str(q.func): k for k, q in enumerate(split.state)}
    where = {s: position[str(q.func)] for s, q in zip(kin.qs, kin.q)}

    def point(rng):
        found = closure_point(polys, [pairs[s] for s in pairs if not is_dep[s]],
                              [pairs[s] for s in pairs if is_dep[s]], rng,
                              [s for s in bare if not is_dep[s]],
                              [s for s in bare if is_dep[s]])
        if found is None:
            return None

        def r():
            return Fraction(rng.randint(-9, 9), rng.randint(1, 9))
        x = [r() for _ in range(nx)]
        for s in bare:
            x[where[s]] = found[s]
        angles = []
        for s in kin.qs:
            if s in pairs:
                angles.append((found[pairs[s][0]], found[pairs[s][1]]))
            else:
                t = r()
                angles.append((2 * t / (1 + t * t), (1 - t * t) / (1 + t * t)))
        return {"x": x, "ud": [r() for _ in range(n)]}, angles
    return point
