"""Relative kinematics (codegen.relative): velocities composed down the frame and point
trees as intermediates, against SymPy's expanded velocities and against KanesMethod."""
import numpy as np
import pytest
import sympy as sm
import sympy.physics.mechanics as me

from codegen import GibbsAppellMethod, generate, examples as ex
from codegen.symbolic import numeric_probe


def _equal_numerically(A, B, tol=1e-10):
    probe = numeric_probe(*(list(A) + list(B)))
    for a, b in zip(A, B):
        d = complex((a - b).xreplace(probe).evalf())
        scale = 1 + abs(complex(b.xreplace(probe).evalf()))
        assert abs(d) < tol * scale, (a, b)


@pytest.mark.parametrize("speeds", ["body", "rates"])
def test_relative_equations_equal_the_expanded_ones_and_kanes(speeds):
    """spatial_chain(3) (frames three orientations deep: relative by default): the public
    mass matrix and forcing, intermediates substituted, equal SymPy's expanded velocities'
    and KanesMethod's at a generic point."""
    model = ex.spatial_chain(3, speeds=speeds)
    rel = GibbsAppellMethod(**model.kwargs)
    rel.kanes_equations()
    assert rel._need_formed()["items"], "the relative kinematics were not used"
    exp = GibbsAppellMethod(**model.kwargs, relative_kinematics=False)
    exp.kanes_equations()
    assert not exp._need_formed()["items"]
    _equal_numerically(rel.mass_matrix, exp.mass_matrix)
    _equal_numerically(rel.forcing, exp.forcing)
    km = me.KanesMethod(model.frame, model.q_ind, model.u_ind, kd_eqs=model.kd_eqs)
    km.kanes_equations(model.bodies, model.loads)
    _equal_numerically(rel.mass_matrix, km.mass_matrix)
    _equal_numerically(rel.forcing, km.forcing)


def test_stored_velocity_that_is_not_the_positions_derivative_falls_back():
    """A point whose velocity was set (set_vel) to something other than the derivative of
    its position: the relative path notices and the model keeps SymPy's velocities
    (which KanesMethod uses too), here M = 4 m."""
    q, u = me.dynamicsymbols('q u')
    m = sm.symbols('m')
    N = me.ReferenceFrame('N')
    O = me.Point('O')
    O.set_vel(N, 0)
    P = O.locatenew('P', q * N.x)
    P.set_vel(N, 2 * u * N.x)
    ga = GibbsAppellMethod(N, [q], [u], kd_eqs=[u - q.diff()], bodies=[me.Particle('p', P, m)],
                           relative_kinematics=True)
    ga.kanes_equations()
    assert not ga._need_formed()["items"]
    assert ga.mass_matrix == sm.Matrix([[4 * m]])


def test_relative_kinematics_flag_is_checked():
    with pytest.raises(TypeError, match="relative_kinematics"):
        GibbsAppellMethod(**ex.dumbbell().kwargs, relative_kinematics="yes")


@pytest.fixture(scope="module")
def humanoid_modules(tmp_path_factory):
    """The humanoid compiled three ways: by default (relative kinematics, the solve of
    the smaller program), with SymPy's expanded velocities and the dense solve, and
    relative with the articulated-body recursion."""
    model = ex.humanoid()
    out = tmp_path_factory.mktemp("humanoid")
    kw = dict(output_dir=out, constants=model.constants, specifieds=model.specifieds,
              jacobian=False)
    mods = [generate(GibbsAppellMethod(**model.kwargs), "hum_default", **kw),
            generate(GibbsAppellMethod(**model.kwargs, relative_kinematics=False),
                     "hum_expanded", recursive=False, **kw),
            generate(GibbsAppellMethod(**model.kwargs), "hum_tree", recursive=True, **kw)]
    return model, mods


def test_humanoid_three_ways_agree(humanoid_modules):
    model, mods = humanoid_modules
    p = mods[0].parameters(model.parameter_values)
    rng = np.random.default_rng(7)
    for _ in range(5):
        x = rng.uniform(-1.5, 1.5, mods[0].nx)
        r = rng.uniform(-1, 1, len(model.specifieds))
        ref = mods[1].rhs(0.0, x, p, r)
        for mod in (mods[0], mods[2]):
            np.testing.assert_allclose(mod.rhs(0.0, x, p, r), ref, rtol=1e-9, atol=1e-9)


def test_humanoid_conserves_energy(humanoid_modules):
    """Without torques, 2 s of motion from a bent pose keeps T + V to 1e-7 J."""
    model, mods = humanoid_modules
    mod = mods[0]
    ga = GibbsAppellMethod(**model.kwargs)
    ga.kanes_equations()
    energy = sm.lambdify([list(model.q_ind) + list(model.u_ind), model.constants],
                         ga.to_state(sum(b.kinetic_energy(model.frame) for b in model.bodies)
                                     + model.potential_energy))
    p = mod.parameters(model.parameter_values)
    pv = [model.parameter_values[str(c)] for c in model.constants]
    x0 = np.array(model.initial_state, dtype=float)
    x0[len(model.q_ind):] = 0.3
    res = mod.simulate((0.0, 2.0), x0, p, r=np.zeros(len(model.specifieds)), rtol=1e-11,
                       atol=1e-11)
    assert res.success, res.message
    e0 = energy(x0, pv)
    assert max(abs(energy(x, pv) - e0) for x in res.x) < 1e-7
