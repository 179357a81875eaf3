"""GibbsAppellMethod as a drop-in for KanesMethod: every public member, shapes, errors.

The models are SymPy's own (its test helpers), so that the comparison is on
material written elsewhere.
"""
import numpy as np
import pytest
import sympy as sm
import sympy.physics.mechanics as me
from sympy.physics.mechanics.tests.test_kane5 import _create_rolling_disc
from sympy.solvers.solveset import NonlinearError

from codegen import GibbsAppellMethod
from helpers import one_link_pendulum

t = me.dynamicsymbols._t

#: public members of KanesMethod that GibbsAppellMethod does not provide, with the reason
NOT_PROVIDED = {}


def test_every_public_member_of_kanesmethod_is_implemented_here():
    """Each public name resolves to GibbsAppellMethod's own code, never to
    KanesMethod's (which would read KanesMethod's private state)."""
    names = [n for n in dir(me.KanesMethod) if not n.startswith("_")]
    assert {"kanes_equations", "mass_matrix", "linearize", "auxiliary_eqs"} <= set(names)
    for name in names:
        if name in NOT_PROVIDED:
            continue
        owner = next(c for c in GibbsAppellMethod.__mro__ if name in vars(c))
        assert owner is GibbsAppellMethod, f"{name} is inherited from {owner.__name__}"


def _disc(cls, **extra):
    props = _create_rolling_disc()
    kw = dict(u_dependent=props['u_dep'], velocity_constraints=props['fnh'])
    kw.update(extra)
    method = cls(props['frame'], props['q_ind'], props['u_ind'], props['kdes'], **kw)
    fr, frstar = method.kanes_equations(props['bodies'], props['loads'])
    return method, fr, frstar


def _state(method, rng):
    """Random q and independent u; dependent u from the velocity constraints (KanesMethod's A_rs)."""
    q = dict(zip(method.q, rng.uniform(-1, 1, len(method.q))))
    g, r, m = sm.symbols('g r m')
    vals = {g: 9.81, r: 0.3, m: 2.0, **q}
    p = len(method.u) - method._Ars.rows
    ui = dict(zip(method.u[:p], rng.uniform(-1, 1, p)))
    vals.update(ui)
    dep = (method._Ars * sm.Matrix(method.u[:p])).xreplace(vals)
    vals.update(dict(zip(method.u[p:], [float(v) for v in dep])))
    return vals


def _num(matrix, vals):
    return np.array(matrix.xreplace(vals).evalf(), dtype=float)


@pytest.mark.parametrize("explicit", [True, False])
def test_members_have_kanesmethods_shapes_and_values(explicit):
    ga, fr, frstar = _disc(GibbsAppellMethod, explicit_kinematics=explicit)
    km, kfr, kfrstar = _disc(me.KanesMethod, explicit_kinematics=explicit)
    assert ga.q == km.q and ga.u == km.u
    assert [b.name for b in ga.bodies] == [b.name for b in km.bodies] and ga.bodies == ga.bodylist
    assert len(ga.loads) == len(km.loads) and ga.loads == ga.forcelist
    assert fr.shape == kfr.shape and frstar.shape == kfrstar.shape
    for name in ("mass_matrix", "forcing", "mass_matrix_full", "forcing_full",
                 "mass_matrix_kin", "forcing_kin"):
        assert getattr(ga, name).shape == getattr(km, name).shape, name
    assert set(ga.kindiffdict()) == set(km.kindiffdict())
    assert ga.rhs().shape == km.rhs().shape
    rng = np.random.default_rng(5)
    for _ in range(2):
        vals = _state(km, rng)
        ours = np.linalg.solve(_num(ga.mass_matrix_full, vals), _num(ga.forcing_full, vals))
        theirs = np.linalg.solve(_num(km.mass_matrix_full, vals), _num(km.forcing_full, vals))
        assert np.allclose(ours, theirs, rtol=1e-10, atol=1e-12)
        # row by row, as KanesMethod forms them (test_jointsmethod compares entries)
        assert np.allclose(_num(ga.mass_matrix, vals), _num(km.mass_matrix, vals), rtol=1e-10)
        assert np.allclose(_num(ga.forcing, vals), _num(km.forcing, vals), rtol=1e-10)
        assert np.allclose(_num(ga._Ars, vals), _num(km._Ars, vals), rtol=1e-10)
    # the symmetric Gibbs-Appell equations over the independent speeds
    Mr = ga.reduced_mass_matrix
    assert Mr.shape == (3, 3) and sm.simplify(Mr - Mr.T) == sm.zeros(3, 3)


def test_linearizer_and_auxiliary_equations():
    """to_linearizer/linearize feed SymPy's Linearizer; auxiliary speeds give
    KanesMethod's auxiliary equations (SymPy's test_aux model)."""
    ga, _, _ = _disc(GibbsAppellMethod)
    from sympy.physics.mechanics.linearize import Linearizer
    assert isinstance(ga.to_linearizer(), Linearizer)
    q1, q2, q3, u1, u2, u3 = me.dynamicsymbols('q1 q2 q3 u1 u2 u3')
    u4, u5, f1, f2 = me.dynamicsymbols('u4, u5, f1, f2')
    r, m, g = sm.symbols('r m g')
    N = me.ReferenceFrame('N')
    Y = N.orientnew('Y', 'Axis', [q1, N.z])
    L = Y.orientnew('L', 'Axis', [q2, Y.x])
    R = L.orientnew('R', 'Axis', [q3, L.y])
    w_R_N_qd = R.ang_vel_in(N)
    R.set_ang_vel(N, u1 * L.x + u2 * L.y + u3 * L.z)
    C = me.Point('C')
    C.set_vel(N, u4 * L.x + u5 * (Y.z ^ L.x))
    Dmc = C.locatenew('Dmc', r * L.z)
    Dmc.v2pt_theory(C, N, R)
    I = me.inertia(L, m / 4 * r**2, m / 2 * r**2, m / 4 * r**2)
    kd = [me.dot(R.ang_vel_in(N) - w_R_N_qd, uv) for uv in L]
    loads = [(Dmc, - m * g * Y.z), (C, f1 * L.x + f2 * (Y.z ^ L.x))]
    bodies = [me.RigidBody('BodyD', Dmc, R, m, (I, Dmc))]
    out = []
    for cls in (GibbsAppellMethod, me.KanesMethod):
        method = cls(N, q_ind=[q1, q2, q3], u_ind=[u1, u2, u3], kd_eqs=kd, u_auxiliary=[u4, u5])
        fr, frstar = method.kanes_equations(bodies, loads)
        assert fr.shape == frstar.shape == (5, 1)
        out.append(method.auxiliary_eqs)
    assert sm.simplify(out[0] - out[1]) == sm.zeros(2, 1)
    with pytest.raises(ValueError, match="No auxiliary speeds"):
        ga.auxiliary_eqs


def _pendulum():
    kw, s = one_link_pendulum()
    return s.N, s.q, s.u, kw["bodies"], kw["forcelist"]


def _bad_inputs():
    N, q, u, bodies, loads = _pendulum()
    w, z = me.dynamicsymbols('w z')
    ok = dict(frame=N, q_ind=[q], u_ind=[u], kd_eqs=[u - q.diff()])
    return {
        "coordinate not a function of time": (dict(ok, q_ind=[sm.Symbol('q')]), ValueError),
        "duplicate coordinate": (dict(ok, q_ind=[q, q], kd_eqs=[u - q.diff()] * 2), ValueError),
        "too few kd_eqs": (dict(ok, q_ind=[q, z]), ValueError),
        "kd_eqs nonlinear": (dict(ok, kd_eqs=[u - q.diff()**2]), ValueError),
        "frame not a frame": (dict(ok, frame=None), TypeError),
        "velocity constraint count": (dict(ok, u_ind=[u], u_dependent=[w],
                                           velocity_constraints=[]), ValueError),
        "velocity constraint nonlinear": (dict(ok, u_dependent=[w],
                                               velocity_constraints=[w**2 - u]), NonlinearError),
        "configuration constraint count": (dict(ok, q_ind=[q], q_dependent=[z],
                                                kd_eqs=[u - q.diff(), z.diff()],
                                                configuration_constraints=[]), ValueError),
    }


@pytest.mark.parametrize("case", list(_bad_inputs()))
def test_what_kanesmethod_refuses_is_refused_with_the_same_type(case):
    kw, kind = _bad_inputs()[case]
    with pytest.raises(kind):
        me.KanesMethod(**kw)
    with pytest.raises(kind):
        GibbsAppellMethod(**kw)


def test_kanes_equations_argument_errors_are_kanesmethods():
    N, q, u, bodies, loads = _pendulum()
    for cls in (me.KanesMethod, GibbsAppellMethod):
        with pytest.raises(AttributeError, match="kinematic differential equations"):
            cls(N, [q], [u]).kanes_equations(bodies, loads)
        method = cls(N, [q], [u], kd_eqs=[u - q.diff()])
        with pytest.raises(TypeError, match="iterable"):
            method.kanes_equations(None, loads)
        with pytest.raises(ValueError):
            method._form_fr('bad input')
