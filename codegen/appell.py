"""``GibbsAppellMethod``: the Gibbs–Appell equations behind KanesMethod's interface.

The facade only arranges the stages: :mod:`codegen.kinematics` (coordinates,
speeds, kinematic equations), :mod:`codegen.constraints` (dependent speeds,
run-time constraints), :mod:`codegen.formulation` (S, M, F over all speeds)
and, for the generated code, :mod:`codegen.eom`.
"""
from __future__ import annotations

import numpy as np
import sympy as sm
from sympy.core.function import AppliedUndef
from sympy.core.sorting import default_sort_key
from sympy.physics.mechanics import KanesMethod
from sympy.physics.vector import ReferenceFrame, dynamicsymbols

from .constraints import dependent_speeds, project, resolve, runtime_constraints
from .formulation import (check_bodies, check_loads, form, gibbs_appell_function, is_rigid,
                          varying_inertia_loads)
from .kinematics import Kinematics, as_list
from .symbolic import dag_atoms, memo_xreplace, numeric_probe
from .relative import frame_depth

#: with no constraints, velocities are composed as intermediates (codegen.relative)
#: when a body's frame is this many orientations from the Newtonian frame
RELATIVE_DEPTH = 3

__all__ = ["GibbsAppellMethod"]

t = dynamicsymbols._t


class GibbsAppellMethod(KanesMethod):
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
    function S (4.292), by the chain rule (see :mod:`codegen.formulation`),
    over all speeds, then projected onto the independent speeds through the
    constraint Jacobians (:mod:`codegen.constraints`). The projected,
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
        config = as_list(configuration_constraints, 'configuration_constraints')
        vel = as_list(velocity_constraints, 'velocity_constraints')
        if kin.n_q_dependent and len(config) != kin.n_q_dependent:
            raise ValueError(f"There must be an equal number of dependent coordinates and "
                             f"configuration constraints: {kin.n_q_dependent} dependent "
                             f"coordinates, {len(config)} configuration constraints")
        self._f_h = sm.Matrix([kin.to_plain(e, f"configuration_constraints[{i}]", inputs=False)
                               for i, e in enumerate(config)]) if kin.n_q_dependent \
            else sm.zeros(0, 1)
        self._nh = dependent_speeds(kin, vel if kin.m else [], acceleration_constraints,
                                    constraint_solver)
        run_config = [] if kin.n_q_dependent else \
            [kin.to_plain(e, f"configuration_constraints[{i}]", inputs=False)
             for i, e in enumerate(config)]
        run_vel = [] if kin.m else \
            [kin.to_plain(e, f"velocity_constraints[{i}]", inputs=False) for i, e in enumerate(vel)]
        if (run_config or run_vel) and (kin.m or kin.uas):
            raise ValueError("constraints left to the run-time elimination (without dependent "
                             "coordinates or speeds) cannot be combined with dependent or "
                             "auxiliary speeds: give all velocity constraints with u_dependent")
        self._runtime = runtime_constraints(kin, run_config, run_vel)
        if self._runtime is not None:
            _check_freedom(self._runtime, kin.qs)
        self._holonomic_rows = run_config
        self._bodylist = bodies
        self._forcelist = forcelist
        self._fr = self._frstar = None
        self._formed = None
        self._S = None
        self._codegen = self._codegen_nh = None

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
        """(fr, frstar) as functions of time, the kinematic intermediates substituted
        (formed on first use: a long chain's are large, and generate never needs them)."""
        if self._fr is None:
            f = self._formed
            self._fr, self._frstar = self._public(f['fr']), self._public(f['frstar'])
        return self._fr, self._frstar

    def _public(self, matrix):
        """matrix over plain symbols and the kinematic intermediates, as functions of time."""
        return self._kin.to_time(self._resolved(matrix))

    def _resolved(self, matrix):
        """matrix with the kinematic intermediates substituted (plain symbols)."""
        items = self._formed['items']
        return resolve(matrix, items) if items else matrix

    def _uses_relative(self, bodies, loads) -> bool:
        """Whether to compose the velocities as intermediates (codegen.relative): asked
        for, or (None) a model without constraints or auxiliary speeds whose frames are
        RELATIVE_DEPTH or more orientations deep, where SymPy's written-out velocities grow."""
        kin = self._kin
        if self._relative is not None:
            return self._relative
        if self._nh is not None or self._runtime is not None or kin.uas:
            return False
        frames = [b.frame for b in bodies if is_rigid(b)] + \
            [w for w, _ in loads if isinstance(w, ReferenceFrame)]
        return frame_depth(frames, self._inertial) >= RELATIVE_DEPTH

    def _form_fr(self, fl):
        """KanesMethod's check of a force list (the equations are formed together)."""
        if fl is not None and (isinstance(fl, (str, bytes)) or not np.iterable(fl) or len(fl) == 0):
            raise ValueError('Force pairs must be supplied in an non-empty iterable or None.')
        return check_loads(as_list(fl, 'loads'))

    def _form(self, bodies, loads):
        kin = self._kin
        bodies_checked = check_bodies(as_list(bodies, 'bodies'))
        checked_loads = self._form_fr(loads) + varying_inertia_loads(bodies_checked,
                                                                     self._inertial)
        ga = form(kin, self._inertial, bodies_checked, checked_loads,
                  relative=self._uses_relative(bodies_checked, checked_loads))
        o, p = len(kin.us), kin.p
        M, Q, R = ga.M, ga.Q, ga.R
        Mk, Qk, Rk = M[:o, :o], Q[:o, :], R[:o, :]
        if self._nh is not None:           # KanesMethod's projection with its A_rs
            Ars = self._nh.Ars
            Mk, Qk, Rk = (X[:p, :] + Ars.T * X[p:, :] for X in (Mk, Qk, Rk))
        udot = list(kin.uds)
        fr = Qk
        frstar = -(Rk + _times(Mk, udot))
        self._aux_eq = None
        if kin.uas:
            Ma, Qa, Ra = M[o:, :o], Q[o:, :], R[o:, :]
            if self._nh is not None:
                Aa = self._nh.Ars_aux
                Ma, Qa, Ra = (X + Aa.T * Y[p:o, :] for X, Y in ((Ma, M[:, :o]), (Qa, Q), (Ra, R)))
            fr_aux, frstar_aux = Qa, -(Ra + _times(Ma, udot))
            self._aux_eq = fr_aux + frstar_aux
            fr, frstar = fr.col_join(fr_aux), frstar.col_join(frstar_aux)
        self._formed = dict(ga=ga, Mk=Mk, Qk=Qk, Rk=Rk, fr=fr, frstar=frstar,
                            items=ga.intermediates, loads=checked_loads)
        self._bodylist, self._forcelist = bodies, loads
        self._fr = self._frstar = None
        self._S = self._codegen = self._codegen_nh = None

    def _need_formed(self):
        if self._formed is None:
            if self._bodylist is None:
                raise ValueError('Need to compute Fr, Fr* first.')
            self._form_given()
        return self._formed

    def _codegen_equations(self):
        """(intermediates, M_r, F_r) on plain symbols: the dependent speeds' solve as
        intermediates (constraint_solver on placeholders), then the projection."""
        if self._codegen is None:
            f = self._need_formed()
            kin, M, F = self._kin, f['ga'].M, f['ga'].F
            o = len(kin.us)
            items, Ars, w = self._codegen_items()
            self._codegen = (items, M[:o, :o], F[:o, :]) if self._nh is None else \
                (items, *project(M[:o, :o], F[:o, :], Ars, w))
        return self._codegen

    def _codegen_items(self):
        """(intermediates, A_rs, w): the formulation's intermediates and the dependent
        speeds' solve on placeholders (codegen.constraints), without the projection."""
        if self._codegen_nh is None:
            f, kin = self._need_formed(), self._kin
            if self._nh is None:
                self._codegen_nh = (list(f['items']), sm.zeros(0, kin.p), None)
            else:
                items, Ars, w = self._nh.intermediates(kin)
                self._codegen_nh = (list(f['items']) + items, Ars, w)
        return self._codegen_nh

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
    def loads(self):
        return self._forcelist

    @property
    def mass_matrix(self):
        """[k_d; k_dnh] over all speeds (KanesMethod's): the projected dynamic
        equations, then the acceleration constraints."""
        f = self._need_formed()
        k_dnh = self._nh.k_dnh if self._nh is not None else sm.zeros(0, len(self._kin.us))
        return self._public(f['Mk'].col_join(k_dnh))

    @property
    def forcing(self):
        """-[f_d; f_dnh], so that mass_matrix u' = forcing."""
        f = self._need_formed()
        f_dnh = self._nh.f_dnh if self._nh is not None else sm.zeros(0, 1)
        Fk = sm.Matrix([q - r for q, r in zip(f['Qk'], f['Rk'])])
        return self._public(Fk.col_join(-f_dnh))

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
        self._need_formed()
        if self._aux_eq is None:
            raise ValueError('No auxiliary speeds have been declared.')
        return self._public(self._aux_eq)

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
        first (codegen.linearize)."""
        from .linearize import GibbsAppellLinearizer
        return GibbsAppellLinearizer(self, linear_solver)

    def _linearizer_parts(self):
        """SymPy's linearizer form of the equations on plain symbols (see codegen.linearize):
        f_0 without its q' (its Jacobian there is the identity), f_1 .. f_a, and the
        split of q, u into independent and dependent, and the inputs r."""
        f = self._need_formed()
        kin, nh = self._kin, self._nh
        def at(matrix, zero_symbols):
            """matrix with the symbols zero (DAG-memoized: these expressions share much)."""
            if not zero_symbols:
                return matrix
            memo = dict.fromkeys(zero_symbols, sm.S.Zero)
            return matrix.applyfunc(lambda e: memo_xreplace(e, memo))
        G = at(sm.Matrix(kin.qdot), kin.uas)                      # q' = G(q, u, t)
        # the dynamics as KanesMethod's fr + fr* = T^T (F - M u') = 0 over all speeds,
        # T = [I; A_rs] with A_rs the placeholders of the compiled path: their
        # definitions go along (the adjugate solve: no pivot that vanishes at a
        # special operating point, as the upright bicycle's does for LU)
        frstar, fr = (at(self._resolved(f[k]), kin.uas) for k in ("frstar", "fr"))
        items, Ars, _ = self._codegen_items()
        o = len(kin.us)
        T = sm.eye(kin.p).col_join(Ars)
        M, F = f["ga"].M[:o, :o], at(f["ga"].F[:o, :], kin.uas)
        dependent = set(kin.us[kin.p:])
        definitions = [(i.symbol, i.expr) for i in items if i.symbol not in dependent]
        parts = dict(
            f_0=-at(G, kin.us), f_1=-G,
            f_2=-T.T * (M * sm.Matrix(kin.uds[:o])), f_3=T.T * F,
            f_4=sm.zeros(kin.p, 1), definitions=definitions,
            # the same blocks in KanesMethod's form, for code that inspects them
            kane_f_2=lambda: at(frstar, kin.us), kane_f_3=lambda: at(frstar, kin.uds) + fr,
            f_c=self._f_h,
            f_v=nh.f_nh + nh.k_nh * sm.Matrix(kin.us) if nh else sm.Matrix(),
            f_a=nh.f_dnh + nh.k_dnh * sm.Matrix(kin.uds) if nh else sm.Matrix())
        n_ind = len(kin.q) - kin.n_q_dependent
        parts.update(q_i=kin.q[:n_ind, :], q_d=kin.q[n_ind:, :], u_i=kin.u[:kin.p, :],
                     u_d=kin.u[kin.p:, :])
        # the inputs: what stays a function of time (or its derivative) on plain symbols
        found = dag_atoms(list(parts["f_3"]) + [e for _, e in definitions],
                          (AppliedUndef, sm.Derivative))
        r = sorted((a for a in found if a.free_symbols == {t}), key=default_sort_key)
        for i in r:
            if i.diff(t) in r:
                raise ValueError('Cannot have derivatives of specified quantities when '
                                 'linearizing forcing terms.')
        parts["r"] = r
        return parts

    def linearize(self, *, new_method=None, linear_solver='LU', **kwargs):
        """Linearize about an operating point, as KanesMethod.linearize: returns
        (M, A, B, r) with M [q', u'] = A [q_ind, u_ind] + B r, or (A, B, r) with
        A_and_B=True. ``op_point`` (a dict, or several) may leave states out: they
        stay symbolic. Fast on large models: the Jacobians are taken at the
        operating point (codegen.linearize), not symbolically first."""
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
        items, Mr, _ = self._codegen_equations()
        return self._kin.to_time(resolve(Mr, items))

    @property
    def reduced_forcing(self):
        """F_r with M_r u_i' = F_r: Q - dS/du_i' at u_i' = 0, dependent speeds eliminated."""
        items, _, Fr = self._codegen_equations()
        return self._kin.to_time(resolve(Fr, items))

    @property
    def generalized_active_forces(self):
        """Q over the independent speeds (fr of kanes_equations, without auxiliary rows)."""
        self._need_formed()
        return self._public(self._formed['Qk'])

    @property
    def gibbs_appell_function(self):
        """S(q, u_i, u_i', t) (u' as u.diff(t)); terms free of u' dropped.

        Dependent speeds and their rates are eliminated (u_d' = A_rs u_i' + w),
        so that reduced_mass_matrix = d²S/du_i'²."""
        if self._S is None:
            f = self._need_formed()
            kin = self._kin
            S = gibbs_appell_function(kin, f['ga'].terms)
            items = list(f['items'])
            if self._nh is not None:
                nh_items, Ars, w = self._nh.intermediates(kin)
                items += nh_items
                p = kin.p
                rates = {kin.uds[p + k]: sm.Add(*[Ars[k, j] * kin.uds[j] for j in range(p)]) + w[k]
                         for k in range(kin.m)}
                S = S.xreplace(rates)
            S = sm.expand(resolve([S], items)[0])
            zero = {d: 0 for d in kin.uds}
            S = sm.Add(*[a for a in sm.Add.make_args(S) if a.xreplace(zero) != a])
            self._S = kin.to_time(S)
        return self._S

    def to_state(self, expr):
        """expr over the compiled model's state [q, u_independent] (and t): q'
        and the dependent speeds replaced. E.g. the kinetic energy, for energy checks."""
        items = self._codegen_equations()[0]
        return self._kin.to_time(resolve([self._kin.to_plain(expr, "expression")], items)[0])

    # -- for codegen.eom -------------------------------------------------------------
    def _equations_plain(self):
        """(q, u_independent, q', M_r, F_r, intermediates) on plain symbols."""
        items, Mr, Fr = self._codegen_equations()
        kin = self._kin
        return kin.qs, kin.us[:kin.p], kin.qdot, Mr, Fr, items

    def _constraints_plain(self):
        """The run-time constraints on plain symbols (or None)."""
        return None if self._runtime is None else dict(self._runtime)

    def _tree_plain(self, recursive=None):
        """(tree, note): the bodies as a tree for the O(n) solve (codegen.recursive), or
        None and why not (the model's description says it). recursive: True or False,
        always or never; None: for particles, and for rigid bodies when the recursion's
        program is the smaller (Tree.if_smaller)."""
        from .recursive import tree_of_bodies
        f = self._need_formed()
        for cause, reason in ((self._runtime is not None, "run-time constraints"),
                              (self._nh is not None, "nonholonomic constraints"),
                              (bool(self._kin.uas), "auxiliary speeds"),
                              (recursive is False, "recursive=False")):
            if cause:
                return None, reason
        why = []
        tree = tree_of_bodies(f['ga'].motions, as_list(self._bodylist, 'bodies'), f['loads'],
                              why)
        rigid = any(b for b in f['ga'].terms if b['w'] is not None)
        if tree is not None and rigid and recursive is None:
            tree.if_smaller = True
        return tree, why[0] if why else ""

    # -- the run-time constraints -------------------------------------------------------
    @property
    def constraint_matrices(self):
        """(A, B) with A(q, t) u = B(q, t): the constraints left to run time, or None.

        Rows from configuration constraints first, then velocity constraints;
        columns over ``u``."""
        c = self._runtime
        return None if c is None else (self._kin.to_time(c['A']), self._kin.to_time(c['B']))

    @property
    def constraint_rate(self):
        """B' = B_dot - A_dot u, with A u' = B' (or None)."""
        c = self._runtime
        return None if c is None else self._kin.to_time(c['Bdot'])

    @property
    def configuration_residual(self):
        """f(q, t) of the configuration constraints left to run time (or None)."""
        c = self._runtime
        return None if c is None else self._kin.to_time(sm.Matrix(c['f']))

    @property
    def holonomic_constraint_matrices(self):
        """(A, B) with A(q, t) q' = B from the configuration constraints, or None."""
        rows = list(self._f_h) + self._holonomic_rows
        if not rows:
            return None
        f = sm.Matrix(rows)
        return self._kin.to_time(f.jacobian(self._kin.qs)), self._kin.to_time(-f.diff(t))

    @property
    def velocity_constraint_matrices(self):
        """(A, B) with A u = B, over ``u``, of the velocity constraints, or None."""
        if self._nh is not None:
            return self._kin.to_time(self._nh.k_nh), self._kin.to_time(-self._nh.f_nh)
        c = self._runtime
        if c is None or c['A'].rows == c['nh']:
            return None
        return self._kin.to_time(c['A'][c['nh']:, :]), self._kin.to_time(c['B'][c['nh']:, :])


def _times(M: sm.Matrix, v: list) -> sm.Matrix:
    """M v entry by entry (structural zeros skipped)."""
    return sm.Matrix([sm.Add(*[M[i, j] * v[j] for j in range(M.cols) if M[i, j] != 0])
                      for i in range(M.rows)])


def _check_freedom(c: dict, qs: list):
    """Refuse run-time constraints that leave no motion, judged on the constraint
    manifold: the generic probe's coordinates are first carried onto f(q) = 0
    (Gauss-Newton), since off it A can have full rank where the mechanism moves
    (Bricard's: 5 rows of rank 4 on the manifold, 5 at a generic point). Where
    no probe reaches the manifold, the generic point is all there is to judge."""
    A, f = c['A'], sm.Matrix(c['f'])
    point = _on_manifold(f, qs) if f.rows else numeric_probe(A)
    where = "a consistent configuration"
    if point is None:
        point, where = numeric_probe(A, f), "a generic configuration (none consistent found)"
    An = np.array(A.xreplace({k: v for k, v in point.items()}).evalf(), dtype=float)
    s = np.linalg.svd(An, compute_uv=False)
    rank = int(np.sum(s > 1e-9 * s.max())) if s.size and s.max() > 0 else 0
    if rank >= A.cols:
        raise ValueError(f"the {A.rows} constraints leave zero degrees of freedom for the "
                         f"{A.cols} speeds (rank {rank} at {where}): the system cannot move")


def _on_manifold(f: sm.Matrix, qs: list, tries: int = 3) -> dict | None:
    """A probe point (numeric_probe's values) with its coordinates moved onto f = 0 to
    1e-12, or None when Gauss-Newton from `tries` generic starts does not get there."""
    q = [s for s in qs if s in f.free_symbols]
    for attempt in range(tries):
        probe = numeric_probe(f, point=attempt)
        others = {k: v for k, v in probe.items() if k not in q}
        fn = sm.lambdify([q], list(f.xreplace(others)), "numpy")
        Jn = sm.lambdify([q], f.jacobian(q).xreplace(others).tolist(), "numpy")
        x = np.array([float(probe[s]) for s in q])
        for _ in range(50):
            r = np.array(fn(x), dtype=float)
            if not np.all(np.isfinite(r)):
                break
            if np.abs(r).max() < 1e-12:
                return {**probe, **{s: sm.Float(v) for s, v in zip(q, x)}}
            x = x - np.linalg.lstsq(np.array(Jn(x), dtype=float), r, rcond=None)[0]
    return None
