"""A model's outputs as CasADi functions (codegen.export.casadi_outputs): values equal the
compiled module's outputs, first derivatives equal central differences of them, the Hessian
of λᵀy equals central differences of the Jacobian, shapes are kept, and what is not a
function of (x, r, p) is refused."""
from __future__ import annotations

import numpy as np
import pytest
import sympy as sm
import sympy.physics.mechanics as me

ca = pytest.importorskip("casadi", reason="CasADi is not installed (pip install casadi)")

from codegen import GibbsAppellMethod, casadi_outputs, examples, generate


@pytest.fixture(scope="module")
def cart2(tmp_path_factory):
    """(module, equations, {name: Function}, p) of the double pendulum on a cart with its
    kinetic energy, its tip's position (2,), the lower link's rotation (2 x 2) and the
    input's power."""
    model = examples.n_pendulum_on_cart(2)
    ga = GibbsAppellMethod(**model.kwargs)
    ga.kanes_equations(model.bodies, model.loads)
    N = model.kwargs["frame"]
    cart, lower = model.bodies[0], model.bodies[-1]
    q2 = ga.q[2]
    outputs = {"T": "kinetic_energy",
               "tip": lower.masscenter.pos_from(cart.masscenter).to_matrix(N)[:2, 0],
               "R": sm.Matrix([[sm.cos(q2), -sm.sin(q2)], [sm.sin(q2), sm.cos(q2)]]),
               "work": model.specifieds[0] * ga.u[0] * model.constants[0]}
    mod = generate(ga, "cart2out", output_dir=tmp_path_factory.mktemp("out"), jacobian=True,
                   outputs=outputs)
    gs = casadi_outputs(mod, ga, outputs)
    return mod, ga, gs, mod.parameters(model.parameter_values), outputs


def _points(seed, count=3):
    rng = np.random.default_rng(seed)
    return [(rng.normal(size=6), rng.normal(size=1)) for _ in range(count)]


def test_values_and_shapes_equal_the_modules_outputs(cart2):
    mod, _, gs, p, _ = cart2
    assert sorted(gs) == ["R", "T", "tip", "work"]
    assert gs["R"].size_out(0) == (2, 2) and gs["tip"].size_out(0) == (2, 1)
    assert gs["T"].name() == "cart2out_T"
    for x, r in _points(0):
        ref = mod.outputs(0.0, x, p, r)
        for name, g in gs.items():
            np.testing.assert_allclose(np.array(g(x, r, p)).reshape(np.shape(ref[name])),
                                       ref[name], rtol=1e-13, atol=1e-14)


@pytest.mark.parametrize("name", ["T", "tip", "R", "work"])
def test_first_and_second_derivatives_are_exact(cart2, name):
    """CasADi's Jacobian of y in (x, r) against central differences of mod.outputs, and the
    Hessian of λᵀy against central differences of that Jacobian."""
    mod, _, gs, p, _ = cart2
    g = gs[name]
    ny = g.numel_out(0)
    X, R = ca.MX.sym("x", 6), ca.MX.sym("r", 1)
    z = ca.vertcat(X, R)
    y = ca.vec(g(X, R, p))
    rng = np.random.default_rng(7)
    lam = rng.normal(size=ny)
    fun = ca.Function("d", [X, R], [ca.jacobian(y, z), ca.hessian(ca.dot(ca.DM(lam), y), z)[0]])

    def out(zv):              # column-major, as CasADi vectorizes
        return np.ravel(mod.outputs(0.0, zv[:6], p, zv[6:])[name], order="F")
    h = 1e-6
    for x, r in _points(1, 2):
        zv = np.concatenate([x, r])
        J, H = (np.array(v) for v in fun(x, r))
        fd = np.array([(out(zv + h * e) - out(zv - h * e)) / (2 * h) for e in np.eye(7)]).T
        np.testing.assert_allclose(J, fd, rtol=0, atol=1e-8)
        jac = lambda w: np.array(fun(w[:6], w[6:])[0])
        fdh = np.array([(jac(zv + h * e).T @ lam - jac(zv - h * e).T @ lam) / (2 * h)
                        for e in np.eye(7)]).T
        np.testing.assert_allclose(H, fdh, rtol=0, atol=1e-6)
    # the structural zeros are declared: the energy does not read the cart's position
    if name == "T":
        sp = np.array(ca.DM(g.jacobian().sparsity_out(0), 1).full(), dtype=bool)
        assert sp.shape == (1, 6) and not sp[0, 0]


def test_refuses_time_and_accelerations(cart2, tmp_path):
    mod, ga, _, _, outputs = cart2
    t = me.dynamicsymbols._t
    with pytest.raises(ValueError, match="reads the time t"):
        casadi_outputs(mod, ga, {"clock": sm.sin(t) * ga.u[0]})
    with pytest.raises(ValueError, match="no outputs to export"):
        casadi_outputs(mod, ga, {})


def test_nan_input_fails_naming_the_function(cart2, capfd):
    mod, _, gs, p, _ = cart2
    with pytest.raises(RuntimeError, match="cart2out_T"):
        gs["T"]([np.nan] + [0.0] * 5, [0.0], p)
    assert "cart2out_T: input x[0] is nan" in capfd.readouterr().err
