"""The regressor against Pinocchio's computeJointTorqueRegressor and the model's own
inverse dynamics, and the exact base parameters against the numerical rank."""
import numpy as np
import pytest

from codegen import GibbsAppellMethod, generate
from codegen.identification import regressor
from codegen.robots import from_urdf
from robot_oracle import erd, pin, shared

ROBOTS = {"iiwa": lambda: shared("iiwa"), "hyq": lambda: shared("hyq"),
          "ur5": lambda: erd("ur_description/urdf/ur5_robot.urdf")}


@pytest.fixture(scope="module")
def robots(outdir):
    """name -> (model, Regressor, compiled regressor, Pinocchio's model), each built once;
    the model exact (from_urdf(exact=True): HyQ's and the UR5's 1.57079632679 are π/2)."""
    cache = {}

    def get(name):
        if name not in cache:
            path = ROBOTS[name]()
            model = from_urdf(path, exact=True)
            reg = regressor(model)
            cache[name] = (model, reg, reg.generate(f"id_{name}", output_dir=outdir),
                           pin.buildModelFromUrdf(path))
        return cache[name]
    return get


def _states(model, rng, k):
    n = len(model.u_ind)
    return [(rng.uniform(-2, 2, 2 * n), rng.uniform(-2, 2, n)) for _ in range(k)]


@pytest.mark.parametrize("name", sorted(ROBOTS))
def test_regressor_equals_pinocchio(robots, name):
    """Y equals pin.computeJointTorqueRegressor: the same joint order, each joint's child
    link in order, Pinocchio's ten parameters in its order."""
    model, reg, mod, pm = robots(name)
    pd = pm.createData()
    assert len(reg.parameters) == 10 * (pm.njoints - 1)
    theirs = np.concatenate([pm.inertias[i].toDynamicParameters() for i in range(1, pm.njoints)])
    assert np.allclose([reg.values[s] for s in reg.parameters], theirs, rtol=0, atol=1e-12)
    for x, ud in _states(model, np.random.default_rng(1), 5):
        q, v = model.to_pinocchio(x)
        Yp = pin.computeJointTorqueRegressor(pm, pd, q, v, ud)
        assert np.abs(mod.regressor(x, ud) - Yp).max() <= 1e-10 * max(1.0, np.abs(Yp).max())


def test_regressor_of_the_file_as_written(outdir):
    """Without exact=True the iiwa's numbers are floats (its turns are exact quarter
    turns either way): the same Y as Pinocchio's to rounding, and the same rank."""
    path = shared("iiwa")
    model = from_urdf(path)
    reg = regressor(model)
    mod = reg.generate("id_iiwa_floats", output_dir=outdir)
    pm = pin.buildModelFromUrdf(path)
    pd = pm.createData()
    for x, ud in _states(model, np.random.default_rng(5), 5):
        q, v = model.to_pinocchio(x)
        Yp = pin.computeJointTorqueRegressor(pm, pd, q, v, ud)
        assert np.abs(mod.regressor(x, ud) - Yp).max() <= 1e-12 * max(1.0, np.abs(Yp).max())
    assert reg.rank == 43


def test_regressor_times_parameters_is_the_inverse_dynamics(robots, outdir):
    """Y π equals the compiled model's inverse dynamics (r = 0) to 1e-12."""
    model, reg, mod, _ = robots("iiwa")
    model = from_urdf(shared("iiwa"))
    dyn = generate(GibbsAppellMethod(**model.kwargs), "id_iiwa_dynamics", output_dir=outdir,
                   jacobian=False)
    p = dyn.parameters(model.parameter_values)
    pi = np.array([reg.values[s] for s in reg.parameters])
    for x, ud in _states(model, np.random.default_rng(2), 5):
        tau = dyn.inverse_dynamics(0.0, x, ud, p, np.zeros(len(model.u_ind)))
        assert np.abs(mod.regressor(x, ud) @ pi - tau).max() <= 1e-12 * max(1, np.abs(tau).max())


@pytest.mark.parametrize("name, count", [("iiwa", 43), ("hyq", 68), ("ur5", 36)])
def test_base_parameters(robots, name, count):
    """Y_b β = Y π at random states, and the count equals the numerical rank of 100
    stacked samples, read where the singular values drop by more than 1e8."""
    model, reg, mod, _ = robots(name)
    assert reg.rank == count
    pi = np.array([reg.values[s] for s in reg.parameters])
    beta = np.array(reg.base_values)
    states = _states(model, np.random.default_rng(3), 100)
    for x, ud in states[:5]:
        Y = mod.regressor(x, ud)
        assert np.allclose(mod.base_regressor(x, ud) @ beta, Y @ pi, rtol=0, atol=1e-11)
        # two functions, each its own CSE: a product may associate differently in each
        # (0.4 (a b) c against 0.4 (a c) b), so equal to rounding, not bit for bit (113 of
        # 1,000 states differed in the last bits with the printer of e2a5503; at most 1.6 eps
        # of the scale over 2,000 states now)
        Yb = mod.base_regressor(x, ud)
        scale = max(1.0, np.abs(Y).max())
        assert np.abs(Yb - Y[:, reg.pivots]).max() <= 16 * np.finfo(float).eps * scale
    s = np.linalg.svd(np.vstack([mod.regressor(x, ud) for x, ud in states]), compute_uv=False)
    s = s / s[0]
    assert s[reg.rank - 1] > 1e-6 and (reg.rank == len(s) or s[reg.rank] < 1e-13), \
        (s[reg.rank - 2:reg.rank + 2])
    # the base parameters are exact: each one's leading parameter with coefficient 1
    for k, b in zip(reg.pivots, reg.base):
        assert b.coeff(reg.parameters[k]) == 1
    assert "Izz_iiwa_link_1R" in reg.base_table() if name == "iiwa" else True


def test_the_same_regressor_from_a_symbolic_model(robots):
    """from_urdf(symbolic=True) keeps the URDF's numbers as constants: the regressor
    reads their values, and the base parameters are the exact model's."""
    reg = regressor(from_urdf(shared("iiwa"), symbolic=True))
    exact = robots("iiwa")[1]
    assert [str(b) for b in reg.base] == [str(b) for b in exact.base]
    assert reg.base_values == pytest.approx(exact.base_values, rel=1e-12, abs=1e-15)
