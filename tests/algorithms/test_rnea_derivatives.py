"""The Newton–Euler residual's analytic derivatives in each root's frame
(codegen.algorithms.rnea_derivatives): equal to forward mode over the Newton–Euler program at
random states, in fewer operations, and the Jacobian built from them equal to
pin.computeABADerivatives."""
from __future__ import annotations

import os
import random
from pathlib import Path

import numpy as np
import pytest
import sympy as sm

from codegen import GibbsAppellMethod, generate
from codegen.algorithms import jacobian as jac
from codegen.algorithms import rnea_derivatives as rd
from codegen.algorithms.rnea_derivatives_solve import solve_operations
from codegen.bench.robots import robot_path
from codegen.pipeline.build import neutral_equations
from codegen.examples import n_pendulum_on_cart, stiff_pendulum
from codegen.robots import from_urdf
from codegen.symbolic.expressions import evaluate

SHARED = os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared", "robots")
SHARED = Path(SHARED if os.path.isdir(SHARED) else "/work/shared/robots")

#: case -> (codegen.robots.catalog's robot, more from_urdf options): a chain of revolute
#: joints; the same with its joints' damping (loads on the bodies, affine in u);
#: prismatic fingers without every velocity product, their forces in Q; a free-flyer root
#: of six speeds
ROBOTS = {"iiwa": ("iiwa", {}), "iiwa_damped": ("iiwa", {"damping": True}),
          "panda": ("panda", {}), "solo12": ("solo12", {})}


@pytest.fixture(scope="session")
def robot():
    """name -> (model, eom, path), each formed once."""
    cache = {}

    def get(name):
        if name not in cache:
            robot_name, more = ROBOTS[name]
            try:
                path, floating, options = robot_path(robot_name, SHARED)
            except FileNotFoundError as e:
                pytest.skip(str(e))
            model = from_urdf(path, floating_base=floating, **options, **more)
            eom = neutral_equations(GibbsAppellMethod(**model.kwargs), name, model.constants,
                                    model.specifieds)
            cache[name] = (model, eom, path)
        return cache[name]
    return get


def _outputs(program, values, rng):
    """The program's outputs at a random point: each input (u' by its C name) drawn from
    rng when values (shared between programs) has none."""

    def leaf(atom):
        name = program.names.get(atom)
        key = name if name is not None and name.startswith("cg_ud") else str(atom)
        if key not in values:
            values[key] = rng.uniform(-1.3, 1.3)
        return values[key]
    memo = {}
    for s, e in program.temporaries:
        memo[s] = evaluate(e, memo, leaf)
    return {n: np.array([evaluate(sm.sympify(e), memo, leaf) for e in exprs]).real
            for n, exprs in program.outputs}


@pytest.mark.parametrize("name", ROBOTS)
def test_equal_to_forward_mode_in_fewer_operations(robot, monkeypatch, name):
    """The analytic derivative program's Jq, R, Jqr, Rr equal forward mode's over the
    Newton–Euler program (1e-12 relative) at two random states, in fewer operations."""
    _, eom, _ = robot(name)
    _equal_to_forward_mode_in_fewer_operations(eom, monkeypatch)


def _equal_to_forward_mode_in_fewer_operations(eom, monkeypatch):
    assert rd._reason(eom) is None
    monkeypatch.setattr(jac, "COMPARE_BELOW", 0)        # the analytic program, uncompared
    monkeypatch.setattr(jac, "FORWARD_ONLY_SPEEDS", 0)  # however few the speeds
    analytic = jac.jacobian_program(eom)
    monkeypatch.setattr(jac, "_analytic_program", lambda *args: None)
    forward = jac.jacobian_program(eom)
    assert analytic.operation_count < forward.operation_count
    for seed in range(2):
        values, rng = {}, random.Random(seed)
        ours, theirs = _outputs(analytic, values, rng), _outputs(forward, values, rng)
        for key, value in theirs.items():
            assert np.abs(ours[key] - value).max() <= 1e-12 * max(1.0, np.abs(value).max()), key


def test_a_wrong_structure_is_caught(robot, monkeypatch):
    """The check at generic points refuses a residual that is not the tree's: with the
    bodies' loads dropped, the iiwa is left to forward mode."""
    _, eom, _ = robot("iiwa")
    monkeypatch.setattr(rd, "_loads", lambda temporaries, exprs, speeds:
                        [sm.S.Zero for _ in exprs])
    assert rd.rnea_derivatives(eom, jac._Tangents(list(eom.q) + list(eom.u)
                                                  + list(eom.specifieds))) is None


@pytest.fixture(scope="session")
def pendulum():
    """The 5-link pendulum on a cart: model and equations, formed once."""
    model = n_pendulum_on_cart(5)
    return model, neutral_equations(GibbsAppellMethod(**model.kwargs), "cart",
                                    model.constants, model.specifieds)


def test_pendulum_on_a_cart_equals_forward_mode(pendulum, monkeypatch):
    """The pendulum on a cart's particles hang on absolute angles: each axis, in the
    Newtonian frame, turns with its own angle (S' and S'' terms), and gravity is lifted
    to the cart, whose rows do not carry it. Its derivatives equal forward mode's (1e-12)
    at two random states, in fewer operations."""
    _, eom = pendulum
    _equal_to_forward_mode_in_fewer_operations(eom, monkeypatch)


def test_stiff_pendulum_equals_forward_mode(monkeypatch):
    """The same with springs and dampers between the links (loads on the particles'
    frames, depending on q and affine in u)."""
    model = stiff_pendulum(4)
    eom = neutral_equations(GibbsAppellMethod(**model.kwargs), "stiff", model.constants,
                            model.specifieds)
    _equal_to_forward_mode_in_fewer_operations(eom, monkeypatch)


def test_pendulum_on_a_cart_equals_aba_derivatives(pendulum, outdir):
    """Its compiled Jacobian against pin.computeABADerivatives on the same chain
    (relative angles, codegen.bench.jacobian's)."""
    pytest.importorskip("pinocchio")
    from codegen.bench.jacobian import _pinocchio, derivatives_difference
    from codegen.bench.simulate import to_relative
    model, _ = pendulum
    n = 5
    mod = generate(GibbsAppellMethod(**model.kwargs), "rnead_cart", output_dir=outdir,
                   jacobian=True)
    pin, pm, data = _pinocchio(n, model.parameter_values)
    p = mod.parameters(model.parameter_values)
    rng = np.random.default_rng(3)
    for _ in range(2):
        x = np.concatenate([rng.uniform(-1.5, 1.5, n + 1), rng.uniform(-1.0, 1.0, n + 1)])
        r = rng.uniform(-1.0, 1.0, 1)
        q, v = to_relative(x, n)
        assert derivatives_difference(mod.jacobian(0.0, x, p, r), pin, pm, data, q, v,
                                      np.concatenate([r, np.zeros(n)])) < 1e-9


@pytest.fixture(scope="session")
def compiled(robot, outdir):
    cache = {}

    def get(name):
        if name not in cache:
            model, _, path = robot(name)
            cache[name] = generate(GibbsAppellMethod(**model.kwargs), f"rnead_{name}",
                                   output_dir=outdir, specifieds=model.specifieds,
                                   constants=model.constants, jacobian=True)
        return cache[name]
    return get


@pytest.mark.parametrize("name", ["iiwa", "iiwa_damped", "panda"])
def test_jacobian_equals_aba_derivatives(robot, compiled, name):
    """The compiled Jacobian, from the analytic derivatives, against
    pin.computeABADerivatives at random states (the Panda's fingers each on its own; the
    damped iiwa's -b v added to Pinocchio's torques, and its M⁻¹ b to d/dv)."""
    pin = pytest.importorskip("pinocchio")
    model, _, path = robot(name)
    mod = compiled(name)
    pm = pin.buildModelFromUrdf(path, mimic=False)
    damping = pm.damping if name == "iiwa_damped" else np.zeros(pm.nv)
    pd = pm.createData()
    p = mod.parameters(model.parameter_values)
    rng = np.random.default_rng(7)
    nq = len(model.q_ind)
    for _ in range(2):
        x = np.concatenate([rng.uniform(-1.5, 1.5, nq), rng.uniform(-1.0, 1.0, pm.nv)])
        tau = rng.uniform(-1.0, 1.0, len(model.specifieds))
        q, v = model.to_pinocchio(x)
        pin.computeABADerivatives(pm, pd, q, v, tau - damping * v)
        J = mod.jacobian(0.0, x, p, tau)[nq:]
        Minv = np.triu(pd.Minv) + np.triu(pd.Minv, 1).T
        dv = pd.ddq_dv - Minv * damping          # the damping's -b v, through M⁻¹
        scale = max(1.0, np.abs(pd.ddq_dq).max(), np.abs(dv).max())
        assert np.abs(J[:, :nq] - pd.ddq_dq).max() / scale < 1e-9
        assert np.abs(J[:, nq:] - dv).max() / scale < 1e-9


@pytest.mark.parametrize("name", ["iiwa", "solo12"])
def test_solved_accelerations_equal_the_recursion(robot, name):
    """With u' solved in the program (solve=True: M from the derivatives' Yc S, factored
    without fill-in, and the residual at u' = 0), its output ud equals the
    articulated-body recursion's u' at random states (a chain; a free-flyer's six speeds
    with four legs), and its R equals the one from u' given; solve_operations says it
    costs less than the recursion."""
    from codegen.algorithms.aba import tree_program
    _, eom, _ = robot(name)
    tree = tree_program(eom)
    assert solve_operations(eom) < tree.operation_count
    solved = jac.jacobian_program(eom, None, tree.operation_count)
    given = jac.jacobian_program(eom, None, None)
    assert "ud" in dict(solved.outputs) and "ud" not in dict(given.outputs)
    # M's factor left in L for the columns function, which reads it and forms nothing
    from codegen.algorithms.jacobian_columns import column_solve_program, state_supports
    order, positions = solved.factor_layout
    assert sorted(order) == list(range(eom.nu))
    assert len(dict(solved.outputs)["L"]) == len(positions) + eom.nu
    columns = column_solve_program(eom, state_supports(solved, eom.nu, eom.nq + eom.nu),
                                   solved.factor_layout)
    assert {i.array for i in columns.inputs} <= {"L", "B"}
    rng = random.Random(11)
    for _ in range(2):
        values = {}
        ours = _outputs(solved, values, rng)
        theirs = _outputs(tree, values, rng)
        scale = 1.0 + np.abs(theirs["ud"]).max()
        assert np.abs(ours["ud"] - theirs["ud"]).max() / scale < 1e-10
        values.update({f"cg_ud{j}": float(v) for j, v in enumerate(ours["ud"])})
        again = _outputs(given, values, rng)
        assert np.abs(ours["R"] - again["R"]).max() / (1.0 + np.abs(again["R"]).max()) < 1e-10


def test_solved_jacobian_reports_a_mass_matrix_not_positive_definite(robot, outdir):
    """The compiled Jacobian that solves u' itself (CG_JACOBIAN_UD) at parameters of no
    rigid body (the last link's inertia about its axis negative): the mass matrix named,
    as by the right-hand side, not finite numbers of an indefinite M."""
    from codegen.errors import DynamicsError
    path, floating, options = robot_path("iiwa", SHARED)
    model = from_urdf(path, floating_base=floating, symbolic=True, **options)
    mod = generate(GibbsAppellMethod(**model.kwargs), "iiwa_symbolic_ud", output_dir=outdir,
                   specifieds=model.specifieds, constants=model.constants, jacobian=True)
    assert "CG_JACOBIAN_UD" in (Path(outdir) / "iiwa_symbolic_ud" / "iiwa_symbolic_ud.c").read_text()
    x = np.array(model.initial_state, float) + 0.2
    r = np.zeros(len(model.specifieds))
    good = mod.parameters(model.parameter_values)
    assert np.isfinite(mod.jacobian(0.0, x, good, r)).all()
    bad = mod.parameters({**model.parameter_values, "Izz_iiwa_link_7": -1.0})
    for call in (mod.rhs, mod.jacobian):
        with pytest.raises(DynamicsError, match="mass matrix"):
            call(0.0, x, bad, r)
