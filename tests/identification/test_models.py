"""The regressor of sympy.physics.mechanics models (codegen.examples), and what is refused
or warned about."""

import numpy as np
import pytest

from codegen import GibbsAppellMethod, examples, generate
from codegen.identification import regressor
from codegen.robots import from_urdf
from robot_oracle import shared


@pytest.mark.parametrize("name, make, count", [
    ("chain", lambda: examples.spatial_chain(3), 27),
    ("cart", lambda: examples.n_pendulum_on_cart(2), 3),
    ("disk", examples.rolling_disk_contact, 10),
    ("sleigh", examples.chaplygin_sleigh, 4)])
def test_mechanics_model(outdir, name, make, count):
    """Y π equals the compiled model's inverse dynamics (inputs zero) on a chain of rigid
    bodies with body-frame speeds, on particles, and with dependent speeds (the rolling
    disk's two, projected through the constraints); the exact count equals the
    numerical rank."""
    model = make()
    reg = regressor(model)
    mod = reg.generate(f"id_{name}", output_dir=outdir)
    dyn = generate(GibbsAppellMethod(**model.kwargs), f"id_{name}_dynamics", output_dir=outdir,
                   jacobian=False)
    p = dyn.parameters(model.parameter_values)
    pi = np.array([reg.values[s] for s in reg.parameters])
    rng = np.random.default_rng(0)
    n = len(model.u_ind)
    Ys = []
    for _ in range(60):
        x, ud = rng.uniform(-1.5, 1.5, len(model.q_ind) + n), rng.uniform(-1, 1, n)
        if name == "disk":           # the lean θ away from the upright's sin θ = 0
            x[3] = rng.uniform(0.5, 2.5)
        Y = mod.regressor(x, ud)
        Ys.append(Y)
        tau = dyn.inverse_dynamics(0.0, x, ud, p, np.zeros(len(dyn.specifieds)))
        assert np.abs(Y @ pi - tau).max() <= 1e-12 * max(1.0, np.abs(tau).max())
    s = np.linalg.svd(np.vstack(Ys), compute_uv=False)
    s = s / s[0]
    assert reg.rank == count and s[count - 1] > 1e-8
    assert count == len(s) or s[count] < 1e-13


def test_inexact_numbers_are_named():
    """HyQ's file as written turns by 1.57079632679, whose float rotation is not exactly
    orthogonal: the exact rank (84) counts dependencies that rounding broke, and a warning
    says so and names exact=True, which gives 68 (test_regressor)."""
    with pytest.warns(UserWarning, match="exact=True"):
        assert regressor(from_urdf(shared("hyq"))).rank == 84


def test_missing_numbers_are_named():
    model = from_urdf(shared("iiwa"), symbolic=True)
    values = dict(model.parameter_values)
    values.pop("oz_iiwa_joint_4")
    model.parameter_values = values
    with pytest.raises(ValueError, match="oz_iiwa_joint_4"):
        regressor(model).rank


def test_missing_gravity_is_named():
    model = from_urdf(shared("iiwa"), symbolic=True)
    model.parameter_values = {k: v for k, v in model.parameter_values.items() if k != "g"}
    with pytest.raises(ValueError, match=r"\['g'\]"):
        regressor(model)


def test_exact_rotations():
    """from_urdf(exact=True)'s rotations (codegen.robots.rotations.exact_rpy_matrix) are exactly
    orthogonal, within 1e-15 of the float ones, and the files' π/2 is a quarter turn."""
    import sympy as sm
    from codegen.robots.rotations import exact_rpy_matrix, rpy_matrix
    for rpy in [(0.3, -1.1, 2.5), (1.57079632679, 0.0, 0.0), (-2.35619449019, -1.5707962636, 0.7)]:
        R = exact_rpy_matrix(rpy)
        assert all(e.is_Rational for e in R)
        assert R.T * R == sm.eye(3)
        assert np.abs(np.array(R, dtype=float) - np.array(rpy_matrix(rpy))).max() < 2e-7
    assert exact_rpy_matrix((1.57079632679, 0, 0)) == sm.Matrix([[1, 0, 0], [0, 0, -1], [0, 1, 0]])
