"""Bad descriptions give a clear exception that names the offending item."""
import pytest
import sympy as sm
import sympy.physics.mechanics as me

from codegen import GibbsAppellMethod
from codegen import examples as ex


def pendulum():
    q, u = me.dynamicsymbols('q u')
    m, l, g = sm.symbols('m l g')
    N = me.ReferenceFrame('N')
    A = N.orientnew('A', 'Axis', [q, N.z])
    O = me.Point('O')
    O.set_vel(N, 0)
    P = O.locatenew('P', l * A.x)
    P.v2pt_theory(O, N, A)
    return dict(frame=N, q_ind=[q], u_ind=[u], kd_eqs=[u - q.diff()],
                bodies=[me.Particle('p', P, m)], forcelist=[(P, -m * g * N.y)]), (q, u, N, A, O, P)


def test_good_pendulum_works():
    kw, _ = pendulum()
    assert GibbsAppellMethod(**kw).mass_matrix.shape == (1, 1)


def test_speed_without_kinematic_equation():
    kw, (q, u, *_ ) = pendulum()
    w = me.dynamicsymbols('w')
    kw['u_ind'] = [u, w]
    kw['kd_eqs'] = [u - q.diff()]
    with pytest.raises(ValueError, match=r"speed w\(t\) has no kinematic equation"):
        GibbsAppellMethod(**kw)
    q2 = me.dynamicsymbols('q2')
    kw.update(q_ind=[q, q2], kd_eqs=[u - q.diff()])
    with pytest.raises(ValueError, match="one kinematic differential equation per coordinate"):
        GibbsAppellMethod(**kw)


def test_speed_that_is_not_listed():
    kw, (q, u, *_ ) = pendulum()
    w = me.dynamicsymbols('w')
    kw['kd_eqs'] = [u + w - q.diff()]
    with pytest.raises(ValueError, match=r"kd_eqs\[0\].*w\(t\).*neither a coordinate nor a speed"):
        GibbsAppellMethod(**kw)


def test_velocity_with_acceleration_in_it():
    kw, (q, u, N, A, O, P) = pendulum()
    P.set_vel(N, u.diff() * A.y)
    with pytest.raises(ValueError, match=r"velocity of P contains Derivative\(u\(t\), t\)"):
        GibbsAppellMethod(**kw)


def test_kd_eqs_not_linear_in_qdot():
    kw, (q, u, *_ ) = pendulum()
    kw['kd_eqs'] = [u - q.diff()**2]
    with pytest.raises(ValueError, match="not linear"):
        GibbsAppellMethod(**kw)


def test_kd_eqs_not_solvable():
    kw, (q, u, *_ ) = pendulum()
    kw['kd_eqs'] = [u - (sm.cos(q)**2 + sm.sin(q)**2 - 1) * q.diff()]
    with pytest.raises(ValueError, match="cannot be solved for"):
        GibbsAppellMethod(**kw)


def test_dependent_speed_count_mismatch():
    model = ex.dumbbell()
    kw = model.kwargs
    kw['velocity_constraints'] = list(kw['velocity_constraints']) * 2
    with pytest.raises(ValueError, match="1 dependent speeds need as many velocity constraints, got 2"):
        GibbsAppellMethod(**kw)


def test_constraint_not_linear_in_speeds():
    model = ex.dumbbell()
    kw = model.kwargs
    u3 = model.u_dependent[0]
    kw['velocity_constraints'] = [u3**2]
    with pytest.raises(ValueError, match="velocity constraint .* not linear"):
        GibbsAppellMethod(**kw)


def test_non_symmetric_inertia():
    model = ex.offset_pendulum()
    body = model.bodies[0]
    B = body.frame
    body.inertia = (me.inertia(B, 1, 1, 1) + 0.5 * (B.x | B.y), model.bodies[0].masscenter)
    with pytest.raises(ValueError, match="inertia dyadic of body is not symmetric"):
        GibbsAppellMethod(**model.kwargs)


def test_load_on_wrong_object():
    kw, (q, u, N, A, O, P) = pendulum()
    kw['forcelist'] = [(kw['bodies'][0], N.x)]
    with pytest.raises(TypeError, match="neither a Point nor a ReferenceFrame"):
        GibbsAppellMethod(**kw)
    kw['forcelist'] = [(P, 3)]
    with pytest.raises(TypeError, match="not a Vector"):
        GibbsAppellMethod(**kw)


def test_coordinate_not_a_function_of_time():
    kw, _ = pendulum()
    kw['q_ind'] = [sm.Symbol('q')]
    with pytest.raises(TypeError, match="not a function of time"):
        GibbsAppellMethod(**kw)


def test_body_of_wrong_type():
    kw, (q, u, N, A, O, P) = pendulum()
    kw['bodies'] = [P]
    with pytest.raises(TypeError, match="neither a Particle nor a RigidBody"):
        GibbsAppellMethod(**kw)


def test_unsupported_keywords():
    kw, _ = pendulum()
    with pytest.raises(ValueError, match="auxiliary"):
        GibbsAppellMethod(**kw, u_auxiliary=[me.dynamicsymbols('ua')])
