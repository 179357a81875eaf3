"""The articulated-body (O(n)) solve of tree-structured systems (codegen.algorithms.aba)."""
import numpy as np
import pytest
import sympy as sm
import sympy.physics.mechanics as me

from codegen import DynamicsError, GibbsAppellMethod, Options, equations_of, generate
from codegen import examples as ex
from codegen.algorithms.plan import TREE_OPERATION_COST, build_programs
from codegen.algorithms.aba import tree_program
from codegen.formulation.tree import tree_of


def tree(model):
    return equations_of(GibbsAppellMethod(**model.kwargs)).tree


def test_which_models_are_trees():
    t = tree(ex.n_pendulum_on_cart(4))
    assert [(nd.speeds, nd.parent) for nd in t.nodes] == [([0], -1), ([1], 0), ([2], 1), ([3], 2),
                                                          ([4], 3)]
    assert t.nodes[0].rows == [3] and all(nd.rows == [3, 4] for nd in t.nodes[1:])   # planar
    # rigid bodies: by default only where the recursion's program is the smaller
    # (Tree.rigid, judged by the plan; always with recursive=True); spherical joints:
    # three speeds per body, all six spatial rows
    assert tree(ex.spatial_chain(2)).rigid and not tree(ex.n_pendulum_on_cart(2)).rigid
    limit = Options().unrolled_limit
    eom = equations_of(GibbsAppellMethod(**ex.spatial_chain(2, speeds='rates').kwargs))
    assert "tree" in build_programs(eom, limit, False, False)         # a chain: recursion
    # short limbs (the humanoid): whichever is the less work, counting an operation of
    # the recursion as TREE_OPERATION_COST of the dense program's and its solve's
    eom = equations_of(GibbsAppellMethod(**ex.humanoid().kwargs))
    programs = build_programs(eom, limit, False, False)
    dense = build_programs(eom, limit, False, False, recursive=False)
    assert "tree" in build_programs(eom, limit, False, False, recursive=True)
    tree_cost = TREE_OPERATION_COST * tree_program(eom).operation_count
    dense_cost = dense["eval"].operation_count + dense["solve"].operation_count
    assert ("tree" in programs) == (tree_cost < dense_cost), (tree_cost, dense_cost)
    # taken at their joint points (codegen.formulation.tree._at_joint), the root, turning about
    # a fixed point, has no linear rows, and each joint's own speeds only angular ones
    t = equations_of(GibbsAppellMethod(**ex.spatial_chain(3).kwargs)).tree
    assert [(nd.speeds, nd.parent, len(nd.rows)) for nd in t.nodes] == [
        ([0, 1, 2], -1, 3), ([3, 4, 5], 0, 6), ([6, 7, 8], 1, 6)]
    assert all(e == 0 for nd in t.nodes[1:] for row in nd.s[3:] for e in row)
    # a single body (the same work either way), run-time constraints, dependent speeds
    # (their solve is part of the dense program): the dense solve
    for model in (ex.rolling_disk(), ex.chaplygin_sleigh(), ex.offset_pendulum(),
                  ex.spring_damper(), ex.four_bar(), ex.dumbbell()):
        assert tree(model) is None, model.name


def _pendulum(masses):
    """Point masses on massless links; masses[i] None: no body at the end of link i."""
    N = me.ReferenceFrame("N")
    O = me.Point("O")
    O.set_vel(N, 0)
    q = me.dynamicsymbols(f"q1:{len(masses) + 1}")
    u = me.dynamicsymbols(f"u1:{len(masses) + 1}")
    g = sm.Symbol("g")
    bodies, loads, joint = [], [], O
    for i, m in enumerate(masses):
        A = N.orientnew(f"A{i}", "Axis", [q[i], N.z])
        A.set_ang_vel(N, u[i] * N.z)
        P = joint.locatenew(f"P{i}", A.x)
        P.v2pt_theory(joint, N, A)
        joint = P
        if m is not None:
            bodies.append(me.Particle(f"p{i}", P, m))
            loads.append((P, -m * g * N.y))
    kd = [ui - qi.diff() for qi, ui in zip(q, u)]
    return GibbsAppellMethod(N, q, u, kd_eqs=kd, bodies=bodies, forcelist=loads)


def test_the_description_says_why_not_a_tree(tmp_path):
    """A model solved densely says why in its description (manifest["solver"])."""
    ga = GibbsAppellMethod(**ex.four_bar().kwargs)
    assert equations_of(ga).tree_note == "run-time constraints"
    mod = generate(ga, "four_bar_note", output_dir=tmp_path)
    assert "(not the tree recursion: run-time constraints)" in mod.manifest["solver"]
    eom = equations_of(GibbsAppellMethod(**ex.dumbbell().kwargs))
    assert eom.tree is None and eom.tree_note


def test_structures_that_are_not_trees_fall_back():
    m1, m2, m3 = sm.symbols("m1 m2 m3")
    assert equations_of(_pendulum([m1, m2, m3])).tree is not None
    model = ex.n_pendulum_on_cart(2)
    eom = equations_of(GibbsAppellMethod(**model.kwargs))
    assert eom.tree is not None           # a fact of the equations; recursive=False is the plan's
    assert not {"tree", "inverse_dynamics", "columns"} & set(
        build_programs(eom, Options().unrolled_limit, True, False, recursive=False))
    with pytest.raises(TypeError, match="recursive must be None, True or False"):
        generate(GibbsAppellMethod(**model.kwargs), "never_built", recursive="yes")
    # a massless middle link: the last body owns two speeds (a two-degree-of-freedom joint)
    t = equations_of(_pendulum([m1, None, m3])).tree
    assert [(nd.speeds, nd.parent) for nd in t.nodes] == [([0], -1), ([1, 2], 0)]
    # no body at all on the last link: speed 3 is owned by no body
    eom = equations_of(_pendulum([m1, m2, None]))
    assert eom.tree is None and "a speed moves no body" in eom.tree_note
    # two bodies moving with the same speeds
    G = [[sm.S.Zero] * 2 for _ in range(3)] + [[sm.S.One, sm.S.Zero], [sm.S.Zero, sm.S.One],
                                               [sm.S.Zero] * 2]
    W, h = [[sm.S.Zero] * 6 for _ in range(6)], [sm.S.Zero] * 6

    def rigid(k, parent):                 # coincident points, the same frame
        return sm.eye(3), [0, 0, 0]
    assert tree_of([(G, W, h), (G, W, h)], [0, 0], 2, rigid) is None
    # a child that does not carry its parent's partial velocities rigidly
    x = sm.Symbol("x")
    G1 = [[sm.S.Zero] * 2 for _ in range(3)] + [[sm.S.One, sm.S.Zero], [sm.S.Zero] * 2,
                                                [sm.S.Zero] * 2]
    G2 = [[sm.S.Zero] * 2 for _ in range(3)] + [[2 + x, sm.S.Zero], [sm.S.Zero, sm.S.One],
                                                [sm.S.Zero] * 2]
    assert tree_of([(G1, W, h), (G2, W, h)], [0, 0], 2, rigid) is None
    G2[3][0] = sm.S.One
    assert tree_of([(G1, W, h), (G2, W, h)], [0, 0], 2, rigid) is not None
    # a body moved by two branches (speeds 0 and 1 of two unrelated bodies): a loop-like coupling
    col = lambda *js: [[sm.S.Zero] * 3 for _ in range(3)] + [
        [sm.S.One if j in js else sm.S.Zero for j in range(3)] for _ in range(3)]
    assert tree_of([(col(0), W, h), (col(1), W, h), (col(0, 1, 2), W, h)],
                   [0, 0, 0], 3, rigid) is None


@pytest.mark.parametrize("name", ["massless_link", "spatial_chain", "spatial_chain_rates"])
def test_several_speeds_per_joint_equal_the_dense_solve(tmp_path, name):
    """Nodes owning 2 (a massless link) or 3 speeds (spherical joints, full 6 x 6
    spatial inertias) against the same model through the dense unrolled solve."""
    if name == "massless_link":
        ga = _pendulum([sm.Symbol("m1"), None, sm.Symbol("m3")])
    else:
        ga = GibbsAppellMethod(**ex.spatial_chain(2, speeds="rates" if "rates" in name
                                                  else "body").kwargs)
    tree_mod = generate(ga, f"{name}_tree", output_dir=tmp_path, recursive=True)
    dense = generate(ga, f"{name}_dense", output_dir=tmp_path, recursive=False)
    assert tree_mod.manifest["solver"].startswith("articulated-body")
    rng = np.random.default_rng(13)
    for _ in range(5):
        x = rng.uniform(-1.5, 1.5, len(dense.states))
        p = rng.uniform(0.5, 2.0, len(dense.constants))
        if name != "massless_link":   # a positive definite inertia about each mass centre
            for i in (1, 2):
                for ax, v in zip("xx yy zz xy yz zx".split(), (2.0, 2.5, 3.0, 0.1, -0.2, 0.15)):
                    p[dense.constants.index(f"I{i}{ax}")] = v
        r = rng.uniform(-1, 1, len(dense.specifieds))
        assert np.allclose(tree_mod.rhs(0.0, x, p, r), dense.rhs(0.0, x, p, r),
                           rtol=1e-10, atol=1e-10)


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
    inline = {}                   # the formulation's intermediates (shared sums) written out
    for item in eq.intermediates:
        inline[item.symbol] = item.expr.xreplace(inline)
    fM, fF = sm.lambdify(args, eq.M.xreplace(inline)), sm.lambdify(args, eq.F.xreplace(inline))
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
    E = sm.lambdify([list(ga.state), consts, model.specifieds],
                    ga.to_state(model.energy()))
    energy = np.array([E(x, p, [0.0]) for x in res.x])
    assert abs(energy - energy[0]).max() / abs(energy).max() < 1e-8
    assert abs(res.x[:, 1] - x0[1]).max() > 0.1                    # it did swing


def test_carried_accelerations_agree_with_pinocchio():
    """The iiwa's recursion forms each body's u'-free acceleration by the carried
    velocity products (cg_a0 temporaries, codegen.algorithms.tree_passes.carried_biases), not from
    the formulation's expressions, and agrees with pin.aba."""
    pin = pytest.importorskip("pinocchio")
    from robot_oracle import program_function, random_state, shared
    from codegen.robots import from_urdf
    path = shared("iiwa")
    model = from_urdf(path)
    eom = GibbsAppellMethod(**model.kwargs).to_equations(
        constants=model.constants, specifieds=model.specifieds)
    program = tree_program(eom)
    assert any(name.startswith("cg_a0") for name in program.names.values())
    forward = program_function(program)
    pm = pin.buildModelFromUrdf(path)
    pd = pm.createData()
    p = [model.parameter_values[str(c)] for c in model.constants]
    rng = np.random.default_rng(11)
    for x, tau in [random_state(model, rng) for _ in range(2)]:
        want = pin.aba(pm, pd, *model.to_pinocchio(x), tau)
        got = np.array(forward({"x": x, "p": p, "r": tau})["ud"])
        assert np.max(np.abs(got - want)) <= 1e-9 * np.max(np.abs(want))
