"""Bad descriptions give a clear exception that names the offending item."""
import pytest
import sympy as sm
import sympy.physics.mechanics as me

from codegen import GibbsAppellMethod
from codegen import examples as ex
from helpers import one_link_pendulum


def pendulum():
    kw, s = one_link_pendulum()
    return kw, (s.q, s.u, s.N, s.A, s.O, s.P)


def test_good_pendulum_works():
    kw, _ = pendulum()
    assert GibbsAppellMethod(**kw).mass_matrix.shape == (1, 1)


def test_kd_eqs_count():
    kw, (q, u, *_ ) = pendulum()
    q2 = me.dynamicsymbols('q2')
    kw.update(q_ind=[q, q2], kd_eqs=[u - q.diff()])
    with pytest.raises(ValueError, match="equal number of kinematic differential equations"):
        GibbsAppellMethod(**kw)


def test_velocity_with_a_speed_that_is_not_listed():
    """l*w*A.y with w not a speed: KanesMethod gives M = 0 silently; here it is an error naming w."""
    kw, (q, u, N, A, O, P) = pendulum()
    w = me.dynamicsymbols('w')
    P.set_vel(N, kw['bodies'][0].mass * 0 + sm.Symbol('l') * w * A.y)
    with pytest.raises(ValueError, match=r"velocity of P contains w\(t\), which is neither a "
                                         r"coordinate nor a speed"):
        GibbsAppellMethod(**kw).mass_matrix
    # the same with w listed as a speed forms
    kw.update(u_ind=[w], kd_eqs=[w - q.diff()])
    assert GibbsAppellMethod(**kw).mass_matrix.shape == (1, 1)


def test_deprecated_body_keeps_its_rotational_inertia():
    """sympy's deprecated Body subclasses RigidBody and Particle: a Body with an
    inertia is a rigid body (it used to lose its inertia), one without is a particle."""
    import warnings
    kw, (q, u, N, A, O, P) = pendulum()
    m, l, Iz = sm.symbols('m l Iz')
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        link = me.Body('link', masscenter=P, mass=m, frame=A,
                       central_inertia=me.inertia(A, 0, 0, Iz))
        point = me.Body('point', masscenter=P, mass=m)
    A.set_ang_vel(N, u * N.z)
    kw['bodies'] = [link]
    assert sm.simplify(GibbsAppellMethod(**kw).mass_matrix[0] - (m * l**2 + Iz)) == 0
    kw['bodies'] = [point]
    assert sm.simplify(GibbsAppellMethod(**kw).mass_matrix[0] - m * l**2) == 0


def test_velocity_with_acceleration_in_it():
    kw, (q, u, N, A, O, P) = pendulum()
    P.set_vel(N, u.diff() * A.y)
    with pytest.raises(ValueError, match=r"velocity of P contains Derivative\(u\(t\), t\)"):
        GibbsAppellMethod(**kw).mass_matrix


def test_kd_eqs_not_linear_in_qdot():
    kw, (q, u, *_ ) = pendulum()
    kw['kd_eqs'] = [u - q.diff()**2]
    with pytest.raises(ValueError, match="nonlinear"):
        GibbsAppellMethod(**kw)


def test_kd_eqs_not_solvable():
    kw, (q, u, *_ ) = pendulum()
    kw['kd_eqs'] = [u - (sm.cos(q)**2 + sm.sin(q)**2 - 1) * q.diff()]
    with pytest.raises(ValueError, match=r"cannot be solved for Derivative\(q\(t\), t\)"):
        GibbsAppellMethod(**kw).mass_matrix


def test_dependent_speed_count_mismatch():
    model = ex.dumbbell()
    kw = model.kwargs
    kw['velocity_constraints'] = list(kw['velocity_constraints']) * 2
    with pytest.raises(ValueError, match="equal number of dependent speeds and velocity "
                                         "constraints: 1 dependent speeds, 2 velocity"):
        GibbsAppellMethod(**kw)


def test_constraint_not_linear_in_speeds():
    """NonlinearError, as KanesMethod (through linear_eq_to_matrix) raises."""
    from sympy.solvers.solveset import NonlinearError
    model = ex.dumbbell()
    kw = model.kwargs
    u3 = model.u_dependent[0]
    kw['velocity_constraints'] = [u3**2]
    with pytest.raises(NonlinearError, match=r"velocity constraint .* not linear in u3"):
        GibbsAppellMethod(**kw)


def test_non_symmetric_inertia():
    model = ex.offset_pendulum()
    body = model.bodies[0]
    B = body.frame
    body.inertia = (me.inertia(B, 1, 1, 1) + 0.5 * (B.x | B.y), model.bodies[0].masscenter)
    with pytest.raises(ValueError, match="inertia dyadic of body is not symmetric"):
        GibbsAppellMethod(**model.kwargs).mass_matrix


def test_load_on_wrong_object():
    kw, (q, u, N, A, O, P) = pendulum()
    kw['forcelist'] = [(kw['bodies'][0], N.x)]
    with pytest.raises(TypeError, match="neither a Point nor a ReferenceFrame"):
        GibbsAppellMethod(**kw).mass_matrix
    kw['forcelist'] = [(P, 3)]
    with pytest.raises(TypeError, match="not a Vector"):
        GibbsAppellMethod(**kw).mass_matrix


def test_coordinate_not_a_function_of_time():
    """ValueError, as KanesMethod raises."""
    kw, _ = pendulum()
    kw['q_ind'] = [sm.Symbol('q')]
    with pytest.raises(ValueError, match="not a function of time"):
        GibbsAppellMethod(**kw)


def test_body_of_wrong_type():
    kw, (q, u, N, A, O, P) = pendulum()
    kw['bodies'] = [P]
    with pytest.raises(TypeError, match="neither a Particle, a RigidBody nor a FlexibleBody"):
        GibbsAppellMethod(**kw).mass_matrix
