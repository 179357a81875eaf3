"""What the kinematics promise the formulation: plain symbols and back, q' solved from the
kinematic differential equations as KanesMethod solves them, and time derivatives by the
chain rule equal to SymPy's own differentiation."""
import pytest
import sympy as sm
import sympy.physics.mechanics as me

from codegen.formulation.kinematics import Kinematics

t = me.dynamicsymbols._t


@pytest.fixture()
def rates():
    q1, q2, u1, u2 = me.dynamicsymbols("q1 q2 u1 u2")
    a = sm.Symbol("a")
    kd = [u1 - q1.diff() * sm.cos(q2), u2 - q2.diff() - a * q1.diff()]
    return (q1, q2, u1, u2, a), kd, Kinematics([q1, q2], [u1, u2], kd_eqs=kd)


def test_plain_symbols_round_trip(rates):
    (q1, q2, u1, u2, a), _, kin = rates
    e = a * sm.sin(q1) * u2 + sm.cos(q2) ** 2 * u1 * t
    plain = kin.to_plain(e)
    assert not plain.atoms(sm.core.function.AppliedUndef)
    assert sm.simplify(kin.to_time(plain) - e) == 0


def test_qdot_solves_the_kinematic_equations_as_kanes_method(rates):
    (q1, q2, u1, u2, a), kd, kin = rates
    km = me.KanesMethod(me.ReferenceFrame("N"), [q1, q2], [u1, u2], kd_eqs=kd)
    theirs = km.kindiffdict()
    ours = kin.to_time(sm.Matrix(kin.qdot))
    for k, q in enumerate([q1, q2]):
        assert sm.simplify(ours[k] - theirs[q.diff()]) == 0


def test_dt_is_the_chain_rule(rates):
    """d/dt at u' = 0 of an expression in q, u and t equals SymPy's derivative with q'
    from the kinematic equations and u' set to zero."""
    (q1, q2, u1, u2, a), kd, kin = rates
    e = a * sm.sin(q1) * sm.cos(q2) * u1 + q2 ** 2 * u2 + sm.exp(t) * q1
    ours = kin.to_time(kin.dt(kin.to_plain(e)))
    km = me.KanesMethod(me.ReferenceFrame("N"), [q1, q2], [u1, u2], kd_eqs=kd)
    theirs = e.diff(t).subs(km.kindiffdict()).subs({u1.diff(): 0, u2.diff(): 0})
    assert sm.simplify(ours - theirs) == 0


def test_the_jacobian_in_the_speeds(rates):
    (q1, q2, u1, u2, a), _, kin = rates
    e = kin.to_plain(a * u1 * u2 + sm.sin(q1) * u2)
    assert [kin.to_time(d) for d in kin.jacobian_u(e)] == [a * u2, a * u1 + sm.sin(q1)]


def test_bad_kinematic_equations_are_named():
    q1, u1 = me.dynamicsymbols("q1 u1")
    with pytest.raises(ValueError, match=r"cannot be solved for Derivative\(q1\(t\), t\)"):
        Kinematics([q1], [u1], kd_eqs=[u1 - 0 * q1.diff()]).qdot
    with pytest.raises((TypeError, ValueError), match="q_ind"):
        Kinematics(q1, [u1], kd_eqs=[u1 - q1.diff()])
