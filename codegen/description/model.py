"""Model: a description ready for ``KanesMethod(**model.kwargs)`` or
``GibbsAppellMethod(**model.kwargs)``, with numbers for a demonstration run (the
built-in models of :mod:`codegen.examples` are Models).

A Model declares the order of its constants and inputs on its bodies
(:func:`declare_order`), the objects that travel in ``kwargs``: the hand-off to the
neutral equations (:func:`codegen.formulation.equations_of.equations_of`, which
``generate`` and the exports call) reads it back (:func:`declared_order`) for a
GibbsAppellMethod or a KanesMethod made from those kwargs, so that the compiled
module's p and r are ``model.constants`` and ``model.specifieds`` without repeating
them, and KanesMethod's constructor sees no keyword it does not know.
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass, field

import sympy as sm
import sympy.physics.mechanics as me

__all__ = ["Model", "DeclaredOrder", "declare_order", "declared_order"]


@dataclass(frozen=True)
class DeclaredOrder:
    """The order of p (constants) and r (specifieds) a model declares for its bodies.

    The equations hand-off puts the declared entries first, in this order, and any
    other constant or input the equations contain after them, sorted by name; a
    declared entry the equations do not contain keeps its place."""
    constants: tuple
    specifieds: tuple
    #: how many bodies declared it: the order is the model's only for all of them
    bodies: int


# body -> DeclaredOrder; weak, so that a declaration lives exactly as long as its bodies
_ORDERS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def declare_order(bodies, constants, specifieds) -> DeclaredOrder | None:
    """Declare the order of p and r for a model of these bodies (the latest declaration
    of a body wins). Bodies that cannot be weakly referenced declare nothing: their
    model falls back to the default order, sorted by name."""
    bodies = list(bodies or ())
    order = DeclaredOrder(tuple(constants or ()), tuple(specifieds or ()), len(bodies))
    try:
        for body in bodies:
            _ORDERS[body] = order
    except TypeError:        # not weakly referenceable or unhashable: nothing to key on
        return None
    return order


def declared_order(bodies) -> DeclaredOrder | None:
    """The order declared for exactly these bodies (:func:`declare_order`), or None:
    no declaration, or the bodies are not all one model's (some added, some left out,
    or declared by different models)."""
    try:
        bodies = list(bodies or ())
        orders = {id(o): o for o in (_ORDERS.get(body) for body in bodies)}
    except TypeError:        # a body that cannot be a key was never declared
        return None
    if len(orders) != 1:
        return None
    (order,) = orders.values()
    return order if order is not None and order.bodies == len(bodies) else None


@dataclass
class Model:
    """A description ready for ``KanesMethod(**model.kwargs)``.

    ``constants`` and ``specifieds`` are the order of p and r of the model compiled
    from its ``kwargs`` (see :class:`DeclaredOrder` for what the equations add)."""
    name: str
    frame: me.ReferenceFrame
    q_ind: list
    u_ind: list
    kd_eqs: list
    bodies: list
    loads: list = field(default_factory=list)
    q_dependent: list = field(default_factory=list)
    u_dependent: list = field(default_factory=list)
    velocity_constraints: list = field(default_factory=list)
    configuration_constraints: list = field(default_factory=list)
    constants: list = field(default_factory=list)
    specifieds: list = field(default_factory=list)
    potential_energy: sm.Expr = sm.S.Zero
    doc: str = ""
    #: numbers for a demonstration run: constant name -> value, and x0 over [q, u]
    parameter_values: dict = field(default_factory=dict)
    initial_state: list = field(default_factory=list)
    #: for the demonstration run: a stiff model wants an implicit integrator,
    #: and a model with dampers loses energy (no drift to check)
    stiff: bool = False
    conservative: bool = True
    #: named quantities of the motion, {name: expression in q(t), u(t), t and the
    #: constants}: what a run is read for (a beam's tip deflection)
    outputs: dict = field(default_factory=dict)
    #: for codegen.animate: where points the description does not locate start ({Point:
    #: Vector from the origin}), and shapes drawn instead of equivalent boxes
    anchors: dict = field(default_factory=dict)
    shapes: list = field(default_factory=list)

    def __post_init__(self):
        declare_order(self.bodies, self.constants, self.specifieds)

    @property
    def kwargs(self):
        """Keywords shared by KanesMethod and GibbsAppellMethod. Reading them declares
        the model's order of constants and inputs on its bodies (:func:`declare_order`),
        as the lists are now: ``generate`` and ``equations_of`` compile p and r in
        that order unless given ``constants=`` or ``specifieds=``."""
        declare_order(self.bodies, self.constants, self.specifieds)
        kw = dict(frame=self.frame, q_ind=self.q_ind, u_ind=self.u_ind,
                  kd_eqs=self.kd_eqs, bodies=self.bodies,
                  forcelist=self.loads)
        if self.q_dependent:
            kw.update(q_dependent=self.q_dependent)
        if self.configuration_constraints:
            kw.update(configuration_constraints=self.configuration_constraints)
        if self.u_dependent:
            kw.update(u_dependent=self.u_dependent)
        if self.velocity_constraints:
            kw.update(velocity_constraints=self.velocity_constraints)
        return kw

    def energy(self):
        """Kinetic plus potential energy, in q, u (dynamicsymbols)."""
        N = self.frame
        T = sum(b.kinetic_energy(N) for b in self.bodies)
        return T + self.potential_energy
