"""Large models (issue 32): point kinematics composed along the position tree, against
SymPy's velocities; growth of the formulation with n; the build's time budget; the
same sources whatever the hash seed."""
import os
import subprocess
import sys
import time

import numpy as np
import pytest
import sympy as sm

from codegen import BudgetError, GibbsAppellMethod, Options, generate
from codegen import examples as ex
from codegen.progress import Stages, checkpoint
from codegen.formulation.relative import RelativeMotions


def _composed(model):
    """(RelativeMotions, kinematics) of a model, formed as the formulation forms them."""
    ga = GibbsAppellMethod(**model.kwargs)
    kin = ga._kin
    return RelativeMotions(kin, model.frame, model.bodies), kin


@pytest.mark.parametrize("make", [lambda: ex.n_pendulum_on_cart(4),
                                  lambda: ex.spatial_chain(2)],
                         ids=["pendulum4", "chain2"])
def test_composed_velocities_equal_sympys(make):
    """Every body's composed velocity and partial velocities (components in the frame
    planned for it, over the intermediates) equal SymPy's P.vel(N) and its partials
    at two random states, in floats from an independent substitution."""
    model = make()
    rm, kin = _composed(model)
    N = model.frame
    points = [b.masscenter for b in model.bodies]
    motions = [rm.velocity(P) for P in points]
    timed = {plain: f for f, plain in kin._base.items()}
    consts = sorted(model.constants, key=str)
    for seed in (1, 2):
        rng = np.random.default_rng(seed)
        at = {s: sm.Float(v) for s, v in zip(kin.qs + kin.speeds,
                                              rng.uniform(-1.2, 1.2, len(kin.qs) + len(kin.speeds)))}
        at.update({c: sm.Float(v) for c, v in zip(consts, rng.uniform(0.5, 1.5, len(consts)))})
        at_time = {timed[s]: v for s, v in at.items() if s in timed}
        at_time.update({c: at[c] for c in consts})
        at_time.update({qk.diff(): e.xreplace(at) for qk, e in zip(kin.q, kin.qdot)})
        for item in rm.items:                              # definitions before their uses
            at[item.symbol] = item.expr.xreplace(at).evalf()
        for P, mo in zip(points, motions):
            theirs = P.vel(N)
            ours = [float(c.xreplace(at)) for c in mo.value]
            ref = [float(c.xreplace(at_time).evalf()) for c in theirs.to_matrix(mo.frame)]
            np.testing.assert_allclose(ours, ref, rtol=1e-10, atol=1e-10)
            for j, s in enumerate(kin.speeds):
                partial = theirs.diff(timed[s], N).to_matrix(mo.frame)
                ref = [float(c.xreplace(at_time).evalf()) for c in partial]
                got = [float(sm.sympify(c).xreplace(at)) for c in mo.partials[j]]
                np.testing.assert_allclose(got, ref, rtol=1e-10, atol=1e-10)


def test_composed_kinematics_grow_linearly():
    """The pendulum on a cart in absolute angles (each point the sum of every link
    before it): the composed intermediates grow by the same few per link, where
    SymPy's written-out velocities grow with the square of n."""
    sizes = {}
    for n in (4, 8, 16):
        model = ex.n_pendulum_on_cart(n)
        rm, _ = _composed(model)
        for b in model.bodies:
            rm.velocity(b.masscenter)
        sizes[n] = len(rm.items)
    assert sizes[16] - sizes[8] <= 2 * (sizes[8] - sizes[4]) + 2, sizes


def test_budget_names_the_stage(tmp_path):
    """A build over its budget stops with BudgetError naming the stage it was in, and
    writes no model; checkpoints inside a stage see the budget too."""
    ga = GibbsAppellMethod(**ex.n_pendulum_on_cart(3).kwargs)
    with pytest.raises(BudgetError, match=r"stopped in stage 'forming' .* budget of 1e-06 s"):
        generate(ga, "over_budget", output_dir=tmp_path, budget=1e-6)
    assert not list(tmp_path.rglob("*.so")) and not list(tmp_path.rglob("*.c"))
    stages = Stages(False, budget=0.01, what="a test build")
    with pytest.raises(BudgetError, match="a test build stopped in stage 'CSE'"):
        with stages("CSE"):
            time.sleep(0.05)
            checkpoint()
    checkpoint()                          # outside a stage: nothing to check
    for bad in (0, -1.0, float("inf"), True, "10"):
        with pytest.raises(ValueError, match="budget must be a positive number of seconds"):
            Options(budget=bad)
    assert Options(budget=5).key() == Options().key()     # the budget shapes no code


_SOURCES = """
import hashlib, sys
import codegen.emit.layout as emit
from codegen import GibbsAppellMethod, examples as ex
from codegen.pipeline.build import model_sources
emit.PART_LIMIT, emit.PART_STATEMENTS, emit.TU_STATEMENTS = 40, 25, 60
eq, src = model_sources(GibbsAppellMethod(**ex.n_pendulum_on_cart(6).kwargs), "det6")
assert len(src.c_files) > 2, src.c_files       # the parts in units of their own
for name in sorted(src.files):
    print(name, hashlib.sha256(src.files[name].encode()).hexdigest())
"""


def test_sources_do_not_depend_on_the_hash_seed():
    """The composed kinematics, the shared sums, the DAG CSE and the parts spread over
    translation units give byte-identical sources under two hash seeds."""
    outs = []
    for seed in ("3", "4"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        proc = subprocess.run([sys.executable, "-c", _SOURCES], env=env, capture_output=True,
                              text=True, timeout=600)
        assert proc.returncode == 0, proc.stderr
        outs.append(proc.stdout)
    assert outs[0] == outs[1] and outs[0].count("\n") > 3


def test_point_at_its_parent_is_composed():
    """A point located from another at a zero position (no frame of its own) takes its
    parent's velocity: a pendulum hung from such a point."""
    import sympy.physics.mechanics as me
    from codegen import equations_of
    q, u = me.dynamicsymbols("q u")
    m, l, g = sm.symbols("m l g")
    N = me.ReferenceFrame("N")
    A = N.orientnew("A", "Axis", [q, N.z])
    A.set_ang_vel(N, u * N.z)
    O = me.Point("O")
    O.set_vel(N, 0)
    H = O.locatenew("H", 0)
    P = H.locatenew("P", l * A.x)
    P.set_vel(N, u * l * A.y)             # H's velocity never asked: H is not at rest
    ga = GibbsAppellMethod(N, [q], [u], kd_eqs=[u - q.diff()],
                           bodies=[me.Particle("p", P, m)], forcelist=[(P, -m * g * N.y)])
    eq = equations_of(ga)
    inline = {}
    for item in eq.intermediates:
        inline[item.symbol] = item.expr.xreplace(inline)
    assert sm.simplify(eq.M[0, 0].xreplace(inline) - m * l**2) == 0
    assert sm.simplify(eq.F[0].xreplace(inline) + g * l * m * sm.cos(eq.q[0])) == 0


# -- the mass matrix of a tree by the composite-rigid-body algorithm ----------------------

def _run(program, arrays):
    """A Program's outputs {array: [float]} at the input arrays {name: values}, each
    temporary substituted in turn (SymPy evaluates sin and cos of the floats)."""
    by_name = {n: o for o, n in program.names.items()}
    env = {by_name[i.name]: sm.Float(arrays[i.array][i.index]) for i in program.inputs}
    for s, e in program.temporaries:
        env[s] = e.xreplace(env)
    return {array: [float(sm.sympify(e).xreplace(env)) for e in exprs]
            for array, exprs in program.outputs}


def _kane_mass(model):
    """KanesMethod's mass matrix of the model as a function of (x, parameter values)."""
    import sympy.physics.mechanics as me
    km = me.KanesMethod(**model.kwargs)
    km.kanes_equations(model.bodies, model.loads)
    by_name = {str(s): s for s in km.mass_matrix.free_symbols}

    def at(x, values):
        sub = {by_name[c]: v for c, v in values.items() if c in by_name}
        sub.update(zip(list(km.q) + list(km.u), x))
        return np.array(km.mass_matrix.xreplace(sub).evalf(), dtype=float)
    return at


@pytest.mark.parametrize("make", [lambda: ex.n_pendulum_on_cart(6), lambda: ex.spatial_chain(2)],
                         ids=["pendulum6", "chain2"])
def test_composite_mass_matrix_equals_kanes(make, monkeypatch):
    """A tree's M by the composite-rigid-body program (codegen.algorithms.crba; points and
    planar transports, rigid bodies and 3-D transports) equals KanesMethod's at two
    random states to 1e-12, in the eval program and in the mass program alone; building
    the programs of a tree above plan.COMPARE_LIMIT speeds leaves the formulation's
    symbolic M unformed, and without a Jacobian eval is q' and F, M by the mass program."""
    import codegen.algorithms.plan as plan
    from codegen.pipeline.build import neutral_equations
    from codegen.algorithms.crba import composite_programs
    monkeypatch.setattr(plan, "COMPARE_LIMIT", 0)
    model = make()
    eq = neutral_equations(GibbsAppellMethod(**model.kwargs), "crba")
    programs = plan.build_programs(eq, 8000, False, False)
    composite = composite_programs(eq)
    assert not eq.M.formed and programs["eval"].operation_count == \
        composite["forces"].operation_count
    kane = _kane_mass(model)
    p = [model.parameter_values[str(c)] for c in eq.constants]
    nu = eq.nu
    rng = np.random.default_rng(7)
    for _ in range(2):
        x = rng.uniform(-1.2, 1.2, eq.nq + nu)
        theirs = kane(x, model.parameter_values)
        for program in (composite["eval"], programs["mass"]):
            packed = _run(program, {"x": x, "p": p, "r": [0.0] * len(eq.specifieds)})["M"]
            ours = np.zeros((nu, nu))
            ours[np.tril_indices(nu)] = packed
            ours = ours + np.tril(ours, -1).T
            np.testing.assert_allclose(ours, theirs, rtol=1e-12,
                                       atol=1e-12 * abs(theirs).max())


def _columns(program, arrays, nu):
    """M (nu x nu) from the looped mass program (composite.mass_columns_program) run as
    the emitted loop runs it: column c from the unit vector e_c, its rows i >= c kept."""
    M = np.zeros((nu, nu))
    for c in range(nu):
        column = _run(program, dict(arrays, E=np.eye(nu)[c]))["M"]
        M[c:, c] = column[c:]
    return M + np.tril(M, -1).T


@pytest.mark.parametrize("make", [lambda: ex.n_pendulum_on_cart(6), lambda: ex.spatial_chain(2)],
                         ids=["pendulum6", "chain2"])
def test_mass_columns_equal_kanes(make):
    """The large tree's mass function, a loop over M's columns (composite inertias and
    forces once, accelerations outward per column), run column by column as emitted:
    KanesMethod's M at two random states to 1e-12; O(n) statements."""
    from codegen.pipeline.build import neutral_equations
    from codegen.algorithms.crba import mass_columns_program
    model = make()
    eq = neutral_equations(GibbsAppellMethod(**model.kwargs), "columns")
    program = mass_columns_program(eq)
    assert {i.array for i in program.inputs} >= {"E"}
    kane = _kane_mass(model)
    p = [model.parameter_values[str(c)] for c in eq.constants]
    rng = np.random.default_rng(8)
    for _ in range(2):
        x = rng.uniform(-1.2, 1.2, eq.nq + eq.nu)
        theirs = kane(x, model.parameter_values)
        ours = _columns(program, {"x": x, "p": p, "r": [0.0] * len(eq.specifieds)}, eq.nu)
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12 * abs(theirs).max())


def test_mass_columns_of_a_branched_tree():
    """The humanoid (rigid bodies, branches: zeros between limbs): the looped mass
    program's M equals the straight-line composite program's (itself checked against
    KanesMethod above and pin.crba in test_mass), the zeros between branches exact."""
    from codegen.pipeline.build import neutral_equations
    from codegen.algorithms.crba import composite_programs, mass_columns_program
    model = ex.humanoid()
    eq = neutral_equations(GibbsAppellMethod(**model.kwargs), "columns_h")
    program = mass_columns_program(eq)
    straight = composite_programs(eq)["mass"]
    p = [model.parameter_values[str(c)] for c in eq.constants]
    nu = eq.nu
    x = np.random.default_rng(9).uniform(-1.0, 1.0, eq.nq + nu)
    arrays = {"x": x, "p": p, "r": [0.0] * len(eq.specifieds)}
    theirs = np.zeros((nu, nu))
    theirs[np.tril_indices(nu)] = _run(straight, arrays)["M"]
    theirs = theirs + np.tril(theirs, -1).T
    ours = _columns(program, arrays, nu)
    assert (theirs == 0).sum() > nu and np.all(ours[theirs == 0] == 0)
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12 * abs(theirs).max())


@pytest.mark.parametrize("looped", [False, True], ids=["straight", "looped"])
def test_composite_pendulum_against_pinocchio(tmp_path, monkeypatch, looped):
    """Compiled: the 6-link pendulum's M by the composite program (straight-line, or the
    loop over columns of a large tree, composite.MASS_LOOP_ENTRIES) against pin.crba on
    the chain built in Pinocchio (relative angles: M_abs = L⁻ᵀ M_rel L⁻¹), and the
    Jacobian, which factors it, against computeABADerivatives."""
    pytest.importorskip("pinocchio")
    import codegen.algorithms.crba as composite
    import codegen.algorithms.plan as plan
    from codegen.bench.jacobian import _pinocchio, derivatives_difference
    from codegen.bench.simulate import to_relative
    monkeypatch.setattr(plan, "COMPARE_LIMIT", 0)
    if looped:
        monkeypatch.setattr(composite, "MASS_LOOP_ENTRIES", 0)
    n = 6
    model = ex.n_pendulum_on_cart(n)
    mod = generate(GibbsAppellMethod(**model.kwargs), f"crba_pendulum6_{looped:d}",
                   output_dir=tmp_path, jacobian=True)
    assert ("for (; c + 1 <= 7;" in (mod.source_dir / f"{mod.name}_mass.c").read_text()) \
        if looped else not (mod.source_dir / f"{mod.name}_mass.c").exists()
    pin, pm, data = _pinocchio(n, model.parameter_values)
    p = mod.parameters(model.parameter_values)
    x = np.random.default_rng(3).uniform(-1, 1, mod.nx)
    r = np.array([0.4])
    q, v = to_relative(x, n)
    Mrel = pin.crba(pm, data, q)
    Mrel = np.triu(Mrel) + np.triu(Mrel, 1).T
    L = np.tril(np.ones((n + 1, n + 1)))
    L[1:, 0] = 0.0
    Li = np.linalg.inv(L)
    theirs = Li.T @ Mrel @ Li
    np.testing.assert_allclose(mod.mass_matrix(0.0, x, p, r), theirs, rtol=1e-12,
                               atol=1e-12 * abs(theirs).max())
    tau = np.zeros(n + 1)
    tau[0] = r[0]
    assert derivatives_difference(mod.jacobian(0.0, x, p, r), pin, pm, data, q, v, tau) < 1e-9
