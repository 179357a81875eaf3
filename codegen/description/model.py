"""Model: a description ready for ``KanesMethod(**model.kwargs)`` or
``GibbsAppellMethod(**model.kwargs)``, with numbers for a demonstration run (the
built-in models of :mod:`codegen.examples` are Models)."""
from __future__ import annotations

from dataclasses import dataclass, field

import sympy as sm
import sympy.physics.mechanics as me

__all__ = ["Model"]


@dataclass
class Model:
    """A description ready for ``KanesMethod(**model.kwargs)``."""
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

    @property
    def kwargs(self):
        """Keywords shared by KanesMethod and GibbsAppellMethod."""
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
