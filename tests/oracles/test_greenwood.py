"""Greenwood's worked examples 4.10 and 4.11, compared exactly with simplify."""
import pytest
import sympy as sm

from codegen import GibbsAppellMethod
from codegen import examples as ex


def udot_free(expr, uds):
    """expr has no quasi-acceleration in it after simplification."""
    return all(sm.simplify(expr.diff(d)) == 0 for d in uds)


def eom_residual(ga):
    """M u' - F over the independent speeds, the left side of Greenwood's dS/du' - Q = 0."""
    ud = sm.Matrix([u.diff() for u in ga.u_independent])
    return ga.reduced_mass_matrix * ud - ga.reduced_forcing


@pytest.fixture(scope="module")
def dumbbell():
    model = ex.dumbbell()
    return model, GibbsAppellMethod(**model.kwargs)


@pytest.fixture(scope="module")
def disk():
    model = ex.rolling_disk()
    return model, GibbsAppellMethod(**model.kwargs)


def test_dumbbell_gibbs_appell_function(dumbbell):
    model, ga = dumbbell
    m, l = model.constants
    v, w = ga.u_independent              # v and phi'
    vd, wd = v.diff(), w.diff()          # v' and phi''
    S_book = m / 2 * (vd**2 + v**2 * w**2 + (vd - l * w**2)**2 + (l * wd + v * w)**2)   # (4.287)
    assert udot_free(ga.gibbs_appell_function - S_book, [vd, wd])
    # and the book's S is not u'-free on its own (the check can fail)
    assert not udot_free(S_book, [vd, wd])


def test_dumbbell_equations(dumbbell):
    model, ga = dumbbell
    m, l = model.constants
    v, w = ga.u_independent
    book = sm.Matrix([2 * m * v.diff() - m * l * w**2,                  # (4.289)
                      m * l**2 * w.diff() + m * l * v * w])             # (4.290)
    assert sm.simplify(eom_residual(ga) - book) == sm.zeros(2, 1)


def test_disk_equations(disk):
    model, ga = disk
    m, r, g = model.constants
    th = model.q_ind[1]
    u1, wd, Om = ga.u
    cot = sm.cos(th) / sm.sin(th)
    book = sm.Matrix([
        sm.Rational(5, 4) * m * r**2 * u1.diff() - m * r**2 * wd**2 * cot / 4
        + sm.Rational(3, 2) * m * r**2 * wd * Om + m * g * r * sm.cos(th),    # (4.317)
        m * r**2 / 4 * (wd.diff() + u1 * wd * cot - 2 * u1 * Om),             # (4.318)
        sm.Rational(3, 2) * m * r**2 * Om.diff() - m * r**2 * u1 * wd])      # (4.319)
    assert sm.simplify(eom_residual(ga) - book) == sm.zeros(3, 1)


def test_disk_gibbs_appell_function(disk):
    """(4.314), with the Omega that the text extraction lost put back."""
    model, ga = disk
    m, r, g = model.constants
    th = model.q_ind[1]
    u1, wd, Om = ga.u
    thdd, wdd, Omd = (u.diff() for u in ga.u)
    cot = sm.cos(th) / sm.sin(th)
    S_book = (m * r**2 / 2 * ((Omd - u1 * wd)**2 + (thdd + wd * Om)**2)
              + m * r**2 / 8 * ((thdd - wd**2 * cot + 2 * wd * Om) * (thdd - wd**2 * cot + wd * Om)
                                + (wdd + u1 * wd * cot - 2 * u1 * Om) * (wdd + u1 * wd * cot - u1 * Om))
              + m * r**2 / 4 * Omd**2 + m * r**2 / 8 * Om * (wd * thdd - u1 * wdd))
    assert udot_free(ga.gibbs_appell_function - S_book, [thdd, wdd, Omd])


def test_disk_generalized_forces(disk):
    model, ga = disk
    m, r, g = model.constants
    th = model.q_ind[1]
    assert sm.simplify(ga.generalized_active_forces - sm.Matrix([-m * g * r * sm.cos(th), 0, 0])) \
        == sm.zeros(3, 1)                                                    # (4.315)


@pytest.mark.parametrize("name", ["dumbbell", "rolling_disk", "chaplygin_sleigh", "offset_pendulum"])
def test_mass_matrix_and_forcing_are_derivatives_of_S(name):
    """M = d2S/du'2 and F = Q - dS/du' at u' = 0, exactly."""
    model = ex.EXAMPLES[name]()
    ga = GibbsAppellMethod(**model.kwargs)
    S = ga.gibbs_appell_function
    ud = [u.diff() for u in ga.u_independent]
    H = sm.hessian(S, ud)
    assert sm.simplify(H - ga.reduced_mass_matrix) == sm.zeros(len(ud), len(ud))
    grad0 = sm.Matrix([S.diff(d) for d in ud]).xreplace({d: 0 for d in ud})
    assert sm.simplify(ga.generalized_active_forces - grad0 - ga.reduced_forcing) \
        == sm.zeros(len(ud), 1)
