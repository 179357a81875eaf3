"""The articulated-body (O(n)) solve of tree-structured systems (codegen.recursive)."""
import numpy as np
import pytest
import sympy as sm
import sympy.physics.mechanics as me

from codegen import DynamicsError, GibbsAppellMethod, equations_of, generate
from codegen import examples as ex
from codegen.recursive import tree_of


def tree(model):
    return equations_of(GibbsAppellMethod(**model.kwargs)).tree


def test_which_models_are_trees():
    t = tree(ex.n_pendulum_on_cart(4))
    assert [(nd.speed, nd.parent) for nd in t.nodes] == [(0, -1), (1, 0), (2, 1), (3, 2), (4, 3)]
    assert t.nodes[0].rows == [3] and all(nd.rows == [3, 4] for nd in t.nodes[1:])   # planar
    assert [(nd.speed, nd.parent) for nd in tree(ex.dumbbell()).nodes] == [(0, -1), (1, 0)]
    assert tree(ex.spring_damper()) is not None
    # one body with three speeds, spherical joints, run-time constraints: the dense solve
    for model in (ex.rolling_disk(), ex.chaplygin_sleigh(), ex.spatial_chain(2),
                  ex.offset_pendulum(), ex.four_bar()):
        assert tree(model) is None, model.name


def _pendulum(masses):
    """Point masses on massless links; masses[i] None: no body at the end of link i."""
    N = me.ReferenceFrame("N")
    O = me.Point("O")
    O.set_vel(N, 0)
    q = me.dynamicsymbols(f"q1:{len(masses) + 1}")
    u = me.dynamicsymbols(f"u1:{len(masses) + 1}")
    g = sm.Symbol("g")
    bodies, loads, P = [], [], O
    for i, m in enumerate(masses):
        A = N.orientnew(f"A{i}", "Axis", [q[i], N.z])
        A.set_ang_vel(N, u[i] * N.z)
        P = P.locatenew(f"P{i}", A.x)
        P.v2pt_theory(O if i == 0 else prev, N, A)
        prev = P
        if m is not None:
            bodies.append(me.Particle(f"p{i}", P, m))
            loads.append((P, -m * g * N.y))
    kd = [ui - qi.diff() for qi, ui in zip(q, u)]
    return GibbsAppellMethod(N, q, u, kd_eqs=kd, bodies=bodies, forcelist=loads)


def test_structures_that_are_not_trees_fall_back():
    m1, m2, m3 = sm.symbols("m1 m2 m3")
    assert equations_of(_pendulum([m1, m2, m3])).tree is not None
    # a massless middle link: speed 2 is owned by no body
    assert equations_of(_pendulum([m1, None, m3])).tree is None
    # two bodies moving with the same speeds
    G = [[sm.S.Zero] * 2 for _ in range(3)] + [[sm.S.One, sm.S.Zero], [sm.S.Zero, sm.S.One],
                                               [sm.S.Zero] * 2]
    W, h, r = [[sm.S.Zero] * 6 for _ in range(6)], [sm.S.Zero] * 6, [sm.S.Zero] * 3
    assert tree_of([(G, W, h, r), (G, W, h, r)], [0, 0], 2) is None
    # a child that does not carry its parent's partial velocities rigidly
    x = sm.Symbol("x")
    G1 = [[sm.S.Zero] * 2 for _ in range(3)] + [[sm.S.One, sm.S.Zero], [sm.S.Zero] * 2,
                                                [sm.S.Zero] * 2]
    G2 = [[sm.S.Zero] * 2 for _ in range(3)] + [[2 + x, sm.S.Zero], [sm.S.Zero, sm.S.One],
                                                [sm.S.Zero] * 2]
    assert tree_of([(G1, W, h, r), (G2, W, h, r)], [0, 0], 2) is None
    G2[3][0] = sm.S.One
    assert tree_of([(G1, W, h, r), (G2, W, h, r)], [0, 0], 2) is not None


@pytest.fixture(scope="module")
def chain(tmp_path_factory):
    model = ex.n_pendulum_on_cart(6)
    ga = GibbsAppellMethod(**model.kwargs)
    mod = generate(ga, "tree6", output_dir=tmp_path_factory.mktemp("tree"))
    p = np.array([model.parameter_values[c] for c in mod.constants])
    return model, ga, mod, p


def test_recursion_equals_the_dense_equations(chain):
    """u' of the recursion solves the symbolic M u' = F (lambdified, NumPy solve)."""
    model, ga, mod, p = chain
    eq = equations_of(ga)
    args = list(eq.q) + list(eq.u) + list(eq.constants) + list(eq.specifieds)
    fM, fF = sm.lambdify(args, eq.M), sm.lambdify(args, eq.F)
    rng = np.random.default_rng(12)
    for _ in range(10):
        x = rng.uniform(-3, 3, len(mod.states))
        vals = list(x) + list(p) + [0.7]
        ud = np.linalg.solve(np.array(fM(*vals), dtype=float), np.array(fF(*vals), dtype=float).ravel())
        assert np.allclose(mod.rhs(0.0, x, p, [0.7])[eq.nq:], ud, rtol=1e-11, atol=1e-11)


def test_zero_tip_mass_is_named(chain):
    model, ga, mod, p = chain
    bad = p.copy()
    bad[mod.constants.index("m6")] = 0.0
    with pytest.raises(DynamicsError, match="not positive definite"):
        mod.rhs(0.0, np.full(len(mod.states), 0.2), bad, [0.0])


def test_long_run_keeps_energy(chain):
    """20 s of DOPRI5 on the recursion, no input: the energy is kept to 1e-8."""
    model, ga, mod, p = chain
    x0 = np.array(model.initial_state, dtype=float)
    res = mod.simulate((0, 20), x0, p, [0.0], rtol=1e-11, atol=1e-11, t_eval=np.linspace(0, 20, 201))
    assert res.success
    consts = [sm.Symbol(c) for c in mod.constants]
    E = sm.lambdify([list(ga.q) + list(ga.u), consts, model.specifieds],
                    ga.to_state(model.energy()))
    energy = np.array([E(x, p, [0.0]) for x in res.x])
    assert abs(energy - energy[0]).max() / abs(energy).max() < 1e-8
    assert abs(res.x[:, 1] - x0[1]).max() > 0.1                    # it did swing
