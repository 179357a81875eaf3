"""``GibbsAppellMethod``: the Gibbs–Appell equations behind KanesMethod's interface.

The facade only arranges the stages: :mod:`codegen.formulation.kinematics` (coordinates,
speeds, kinematic equations), :mod:`codegen.formulation.constraints` (dependent speeds,
run-time constraints), :mod:`codegen.formulation.public_matrices` (the public matrices),
:mod:`codegen.formulation.chain_rule` (S, M, F over all speeds for the generated code)
and :mod:`codegen.formulation.handoff` (``to_equations``, ``to_linearizer``).
"""
from __future__ import annotations

import numpy as np
import sympy as sm
from sympy.physics.mechanics import KanesMethod
from sympy.physics.vector import ReferenceFrame, dynamicsymbols

from .constraints import ConstraintMembers, definitions, kane_form, prepare, project, resolve
from ..equations.equations_of_motion import EquationsOfMotion
from .chain_rule import check_bodies, check_loads, form, varying_inertia_loads
from .handoff import Formed
from .kinematics import Kinematics, as_list
from .linearize import GibbsAppellLinearizer
from .public_matrices import form_public

__all__ = ["GibbsAppellMethod"]

t = dynamicsymbols._t


class GibbsAppellMethod(ConstraintMembers, KanesMethod):
    """Equations of motion by the Gibbs–Appell equation, a drop-in for KanesMethod.

    Explanation
    ===========

    The constructor takes KanesMethod's arguments, and the object answers
    KanesMethod's members with KanesMethod's meaning and shapes: ``q``, ``u``
    (independent then dependent speeds), ``kanes_equations(bodies, loads)``
    returning (fr, frstar) with fr + frstar = 0, ``mass_matrix`` and
    ``forcing`` ([k_d; k_dnh] and -[f_d; f_dnh], over all speeds),
    ``mass_matrix_full``, ``forcing_full``, ``mass_matrix_kin``,
    ``forcing_kin``, ``kindiffdict()``, ``rhs()``, ``auxiliary_eqs``,
    ``to_linearizer()`` and ``linearize()``. It works as ``eom_method`` of
    ``System.form_eoms`` and in place of KanesMethod in ``JointsMethod``.

    The equations are formed differently: from Greenwood's Gibbs–Appell
    function S (4.292), by the chain rule (see :mod:`codegen.formulation.chain_rule`),
    over all speeds, then projected onto the independent speeds through the
    constraint Jacobians (:mod:`codegen.formulation.constraints`). The projected,
    symmetric equations are the Gibbs–Appell equations proper:

    - ``reduced_mass_matrix`` M_r and ``reduced_forcing`` F_r:
      M_r u_i' = F_r over the independent speeds ``u_independent``, with the
      dependent speeds eliminated; M_r = d²S/du_i'², F_r = Q - dS/du_i' at
      u_i' = 0. ``generate`` compiles these (the state is [q, u_independent]).
    - ``gibbs_appell_function``: S over the independent quasi-accelerations
      (terms free of u' dropped). ``generalized_active_forces``: Q.

    Parameters
    ==========

    frame : ReferenceFrame
        The Newtonian frame.
    q_ind, u_ind : sequences of dynamicsymbols
        Independent coordinates and independent speeds (quasi-velocities).
    kd_eqs : sequence of expressions
        Kinematic differential equations, one per coordinate, linear in q'
        and u. A speed need not appear in them (an ignorable wheel angle).
    q_dependent, configuration_constraints : sequences
        Dependent coordinates and as many holonomic constraints f(q, t) = 0
        (kept in the state, used by ``linearize``, as in KanesMethod).
        **Extension:** configuration constraints without ``q_dependent``
        are eliminated at run time by the generated code (SVD null-space
        method of Singh & Likins; see ``constraint_matrices``).
    u_dependent, velocity_constraints, acceleration_constraints : sequences
        Dependent speeds and as many velocity constraints, linear in the
        speeds; the acceleration constraints default to their time
        derivative. **Extension:** velocity constraints without
        ``u_dependent`` are eliminated at run time.
    u_auxiliary : sequence of dynamicsymbols
        Auxiliary speeds, which bring non-contributing forces into evidence
        (``auxiliary_eqs``); they are zero in the equations of motion.
    bodies : sequence of Particle and RigidBody (and deprecated Body)
    forcelist : sequence of (Point, Vector) forces and (ReferenceFrame, Vector) torques
        Both may also be given to ``kanes_equations``.
    explicit_kinematics : bool
        Whether ``mass_matrix_full``/``forcing_full`` carry the identity and
        the solved q' (True) or the kinematic equations as given (False).
        q' is solved only when something needs it.
    kd_eqs_solver, constraint_solver : str or callable
        As in KanesMethod: a method of ``Matrix.solve`` ('LU', 'CRAMER', ...)
        or a callable ``f(A, b)``, for q' and for the dependent speeds. The
        generated code solves for the dependent speeds with the same solver,
        on placeholders of the constraint matrix (no expression swell).
    The equations are formed by ``kanes_equations`` or, when bodies were
    given to the constructor, on first use.

    Examples
    ========

    >>> import sympy.physics.mechanics as me, sympy as sm
    >>> q, u = me.dynamicsymbols('q u')
    >>> m, g, l = sm.symbols('m g l')
    >>> N = me.ReferenceFrame('N'); A = N.orientnew('A', 'Axis', [q, N.z])
    >>> O = me.Point('O'); O.set_vel(N, 0)
    >>> P = O.locatenew('P', l * A.x); _ = P.v2pt_theory(O, N, A)
    >>> ga = GibbsAppellMethod(N, [q], [u], kd_eqs=[u - q.diff()])
    >>> fr, frstar = ga.kanes_equations([me.Particle('p', P, m)], [(P, -m * g * N.y)])
    >>> ga.mass_matrix, ga.forcing
    (Matrix([[l**2*m]]), Matrix([[-g*l*m*cos(q(t))]]))
    """

    def __init__(self, frame, q_ind, u_ind, kd_eqs=None, q_dependent=None,
                 configuration_constraints=None, u_dependent=None,
                 velocity_constraints=None, acceleration_constraints=None,
                 u_auxiliary=None, bodies=None, forcelist=None, explicit_kinematics=True,
                 kd_eqs_solver='LU', constraint_solver='LU', relative_kinematics=None):
        if not isinstance(frame, ReferenceFrame):
            raise TypeError(f"An inertial ReferenceFrame must be supplied, got {frame!r}")
        self._inertial = frame
        self.explicit_kinematics = explicit_kinematics
        self._constraint_solver = constraint_solver
        if relative_kinematics not in (None, True, False):
            raise TypeError(f"relative_kinematics must be None, True or False, "
                            f"got {relative_kinematics!r}")
        self._relative = relative_kinematics
        kin = self._kin = Kinematics(q_ind, u_ind, kd_eqs, q_dependent, u_dependent,
                                     u_auxiliary, kd_eqs_solver)
        c = self._constraints = prepare(kin, configuration_constraints, velocity_constraints,
                                        acceleration_constraints, constraint_solver)
        self._nh, self._runtime = c.nh, c.runtime
        self._bodylist = bodies
        self._forcelist = forcelist
        self._fr = self._frstar = self._public_form = None
        self._formed = self._given = None
        self._S = None
        self._codegen = None                 # the hand-off (codegen.formulation.handoff.Formed)
        self._state_memo = (None, None)      # to_state's resolved intermediates, per hand-off

    # -- forming --------------------------------------------------------------
    def kanes_equations(self, bodies=None, loads=None):
        """Form the equations; returns (fr, frstar) as KanesMethod does, fr + frstar = 0.

        With auxiliary speeds both carry the auxiliary equations last
        (``auxiliary_eqs``)."""
        self._form_given(bodies, loads)
        return self._public_pair()

    def _form_given(self, bodies=None, loads=None):
        """kanes_equations' checks and forming, without the public (fr, frstar)."""
        if bodies is None:
            bodies = self._bodylist
        if loads is None and self._forcelist is not None:
            loads = self._forcelist
        if loads == []:
            loads = None
        if not self._kin.has_kd:
            raise AttributeError('Create an instance of KanesMethod with kinematic '
                                 'differential equations to use this method.')
        if bodies is None or isinstance(bodies, (str, bytes)) or not np.iterable(bodies):
            raise TypeError('Bodies must be supplied in an iterable.')
        self._form(bodies, loads)

    def _public_pair(self):
        """(fr, frstar) as functions of time (codegen.formulation.public_matrices; generate never needs them)."""
        if self._fr is None:
            f, to_time = self._public_formed(), self._kin.to_time
            self._fr, self._frstar = to_time(f['fr']), to_time(f['frstar'])
        return self._fr, self._frstar

    def _uses_relative(self) -> bool:
        """Whether to compose the velocities as intermediates (codegen.formulation.relative): asked
        for, or (None) any model without constraints or auxiliary speeds."""
        if self._relative is not None:
            return self._relative
        return self._nh is None and self._runtime is None and not self._kin.uas

    def _form_fr(self, fl):
        """KanesMethod's check of a force list (the equations are formed together)."""
        if fl is not None and (isinstance(fl, (str, bytes)) or not np.iterable(fl) or len(fl) == 0):
            raise ValueError('Force pairs must be supplied in an non-empty iterable or None.')
        return check_loads(as_list(fl, 'loads'))

    def _form(self, bodies, loads):
        """Check and keep the bodies and loads; each form is made on first use: the
        public matrices (codegen.formulation.public_matrices) and the code generator's (_need_formed)."""
        bodies_checked = check_bodies(as_list(bodies, 'bodies'))
        checked_loads = self._form_fr(loads) + varying_inertia_loads(bodies_checked,
                                                                     self._inertial)
        self._given = dict(bodies=bodies_checked, loads=checked_loads)
        self._bodylist, self._forcelist = bodies, loads
        self._formed = self._fr = self._frstar = self._public_form = None
        self._S = self._codegen = None

    def _kane_form(self, M, Q, R) -> dict:
        """KanesMethod's blocks from M, Q, R over all speeds (constraints.kane_form)."""
        return kane_form(self._kin, self._nh, M, Q, R)

    def _public_formed(self) -> dict:
        """The public matrices' blocks (_kane_form's, plain symbols), formed on first use
        from the vectors as the user stored them (codegen.formulation.public_matrices): KanesMethod's size,
        where the code generator's own forms would be far larger written out."""
        if self._public_form is None:
            f = self._need_given()
            P = form_public(self._kin, self._inertial, f['bodies'], f['loads'])
            self._public_form = dict(self._kane_form(P.M, P.Q, P.R), form=P)
        return self._public_form

    def _need_given(self) -> dict:
        """The checked bodies and loads (formed from the constructor's on first use)."""
        if self._given is None:
            if self._bodylist is None:
                raise ValueError('Need to compute Fr, Fr* first.')
            self._form_given()
        return self._given

    def _need_formed(self) -> dict:
        """The code generator's forms (codegen.formulation.chain_rule), made on first use."""
        if self._formed is None:
            given = self._need_given()
            bodies, loads = given['bodies'], given['loads']
            ga = form(self._kin, self._inertial, bodies, loads, relative=self._uses_relative())
            self._formed = dict(ga=ga, items=ga.intermediates, **given)
        return self._formed

    def _handoff(self) -> Formed:
        """The formed equations as a value for code generation and linearization."""
        if self._codegen is None:
            f = self._need_formed()
            self._codegen = Formed(self._kin, self._constraints, f['ga'], f['bodies'],
                                   f['loads'])
        return self._codegen

    # -- KanesMethod's members ------------------------------------------------------
    @property
    def q(self):
        """All coordinates, independent then dependent."""
        return self._kin.q

    @property
    def u(self):
        """All speeds, independent then dependent (as KanesMethod)."""
        return self._kin.u

    # KanesMethod's private attributes that its consumers read (PyDy's System reads all
    # three to tell the states and their rates from the specified inputs)
    @property
    def _qdot(self):
        return self._kin.q.diff(t)

    @property
    def _udot(self):
        return self._kin.u.diff(t)

    @property
    def _uaux(self):
        return self._kin.u_aux

    @property
    def bodylist(self):
        return self._bodylist

    @property
    def forcelist(self):
        return self._forcelist

    @property
    def bodies(self):
        return self._bodylist

    @property
    def frame(self):
        """The Newtonian frame."""
        return self._inertial

    @property
    def loads(self):
        return self._forcelist

    @property
    def mass_matrix(self):
        """[k_d; k_dnh] over all speeds (KanesMethod's): the projected dynamic
        equations, then the acceleration constraints."""
        f = self._public_formed()
        k_dnh = self._nh.k_dnh if self._nh is not None else sm.zeros(0, len(self._kin.us))
        return self._kin.to_time(f['Mk'].col_join(k_dnh))

    @property
    def forcing(self):
        """-[f_d; f_dnh], so that mass_matrix u' = forcing."""
        f = self._public_formed()
        f_dnh = self._nh.f_dnh if self._nh is not None else sm.zeros(0, 1)
        Fk = sm.Matrix([q - r for q, r in zip(f['Qk'], f['Rk'])])
        return self._kin.to_time(Fk.col_join(-f_dnh))

    @property
    def mass_matrix_kin(self):
        """k_kqdot: the identity (explicit kinematics) or as given in kd_eqs (implicit)."""
        return sm.eye(len(self.q)) if self.explicit_kinematics else self._kin.k_kqdot

    @property
    def forcing_kin(self):
        """-(k_ku u + f_k), of the solved (explicit) or the given (implicit) kinematics."""
        kin = self._kin
        if self.explicit_kinematics:
            k_ku, f_k = kin.explicit_kinematics()
        else:
            k_ku, f_k = kin.k_ku, kin.f_k
        return -(k_ku * self.u + f_k)

    @property
    def mass_matrix_full(self):
        """The mass matrix of [q', u'], block diagonal of mass_matrix_kin and mass_matrix."""
        o, n = len(self.u), len(self.q)
        return self.mass_matrix_kin.row_join(sm.zeros(n, o)).col_join(
            sm.zeros(o, n).row_join(self.mass_matrix))

    @property
    def forcing_full(self):
        """[forcing_kin; forcing]."""
        return self.forcing_kin.col_join(self.forcing)

    def kindiffdict(self):
        """{q': expression of q, u, t}: the kinematic equations solved (kd_eqs_solver)."""
        kin = self._kin
        if not kin.has_kd:
            raise AttributeError('Create an instance of KanesMethod with kinematic '
                                 'differential equations to use this method.')
        return {qi.diff(t): e for qi, e in zip(kin.q, kin.to_time(sm.Matrix(kin.qdot)))}

    @property
    def auxiliary_eqs(self):
        """The auxiliary equations, one per auxiliary speed (fr + frstar of those speeds)."""
        aux_eq = self._public_formed()['aux_eq']
        if aux_eq is None:
            raise ValueError('No auxiliary speeds have been declared.')
        return self._kin.to_time(aux_eq)

    @property
    def _Ars(self):
        """KanesMethod's A_rs: u_dependent = A_rs u_independent (+ terms free of u)."""
        return sm.Matrix() if self._nh is None else self._kin.to_time(self._nh.Ars)

    def rhs(self, inv_method=None):
        """[q'; u'] by solving mass_matrix u' = forcing (as KanesMethod.rhs)."""
        kdes = self.kindiffdict()
        top = sm.Matrix([kdes[qi.diff(t)] for qi in self.q])
        if inv_method is None:
            bottom = self.mass_matrix.LUsolve(self.forcing)
        else:
            bottom = self.mass_matrix.inv(inv_method, try_block_diag=True) * self.forcing
        return top.col_join(bottom)

    def _form_eoms(self):
        fr, frstar = self.kanes_equations(self.bodylist, self.forcelist)
        return fr + frstar

    def to_linearizer(self, linear_solver='LU'):
        """A linearizer of these equations with the interface and meaning of SymPy's
        Linearizer (it subclasses it): ``linearize(op_point, A_and_B, simplify)``.
        Its blocks are differentiated at the operating point, not symbolically
        first (codegen.formulation.linearize)."""
        return GibbsAppellLinearizer(self._handoff(), linear_solver)

    def linearize(self, *, new_method=None, linear_solver='LU', **kwargs):
        """Linearize about an operating point, as KanesMethod.linearize: returns
        (M, A, B, r) with M [q', u'] = A [q_ind, u_ind] + B r, or (A, B, r) with
        A_and_B=True. ``op_point`` (a dict, or several) may leave states out: they
        stay symbolic. Fast on large models: the Jacobians are taken at the
        operating point (codegen.formulation.linearize), not symbolically first."""
        linearizer = self.to_linearizer(linear_solver=linear_solver)
        result = linearizer.linearize(**kwargs)
        return result + (linearizer.r,)

    # -- the Gibbs–Appell equations proper -------------------------------------------
    @property
    def u_independent(self):
        """The independent speeds: the speeds of the compiled model's state."""
        return self._kin.u[:self._kin.p, :]

    @property
    def state(self):
        """[q, u_independent]: the state of the compiled model (``generate``), in order."""
        return self._kin.q.col_join(self.u_independent)

    @property
    def reduced_mass_matrix(self):
        """M_r over ``u_independent`` (symmetric): d²S/du_i'², dependent speeds eliminated."""
        return self._reduced()[0]

    @property
    def reduced_forcing(self):
        """F_r with M_r u_i' = F_r: Q - dS/du_i' at u_i' = 0, dependent speeds eliminated."""
        return self._reduced()[1]

    def _reduced(self):
        """(M_r, F_r) from the public forms, projected (codegen.formulation.constraints.project)."""
        f = self._public_formed()
        if 'reduced' not in f:
            kin, P = self._kin, f['form']
            o = len(kin.us)
            M, F = P.M[:o, :o], P.F[:o, :]
            if self._nh is not None:
                items, Ars, w = self._nh.intermediates(kin)
                M, F = (resolve(X, items) for X in project(M, F, Ars, w))
            f['reduced'] = (kin.to_time(M), kin.to_time(F))
        return f['reduced']

    @property
    def generalized_active_forces(self):
        """Q over the independent speeds (fr of kanes_equations, without auxiliary rows)."""
        return self._kin.to_time(self._public_formed()['Qk'])

    @property
    def gibbs_appell_function(self):
        """S(q, u_i, u_i', t) (u' as u.diff(t)); terms free of u' dropped.

        Dependent speeds and their rates are eliminated (u_d' = A_rs u_i' + w),
        so that reduced_mass_matrix = d²S/du_i'²."""
        if self._S is None:
            kin = self._kin
            S = self._public_formed()['form'].gibbs_appell_function(kin.uds)
            if self._nh is not None:
                items, Ars, w = self._nh.intermediates(kin)
                p = kin.p
                rates = {kin.uds[p + k]: sm.Add(*[Ars[k, j] * kin.uds[j] for j in range(p)]) + w[k]
                         for k in range(kin.m)}
                S = resolve([S.xreplace(rates)], items)[0]
            S = sm.expand(S)
            zero = {d: 0 for d in kin.uds}
            S = sm.Add(*[a for a in sm.Add.make_args(S) if a.xreplace(zero) != a])
            self._S = kin.to_time(S)
        return self._S

    def to_state(self, expr):
        """expr over the compiled model's state [q, u_independent] (and t): q'
        and the dependent speeds replaced. E.g. the kinetic energy, for energy checks."""
        handoff = self._handoff()
        if self._state_memo[0] is not handoff:         # once per formation, not per call
            self._state_memo = (handoff, definitions(handoff.reduced()[0]))
        plain = self._kin.to_plain(expr, "expression")
        return self._kin.to_time(resolve([plain], (), self._state_memo[1])[0])

    # -- the hand-off to code generation ---------------------------------------------
    def to_equations(self, constants=None, specifieds=None) -> EquationsOfMotion:
        """The equations ``generate`` compiles (a frozen :class:`codegen.EquationsOfMotion`):
        state [q, u_independent], M_r u_i' = F_r, the dependent speeds' solve and kinematic
        intermediates as named intermediates, the run-time constraints, the bodies' tree.
        constants, specifieds: the order of p and r (Baumgarte's after them); default: a
        Model's (its kwargs carry it) then the rest sorted by name, or all sorted by name."""
        return self._handoff().equations(constants, specifieds)
