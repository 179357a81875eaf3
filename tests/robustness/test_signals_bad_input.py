"""Bad outputs, events, impacts, resets and controllers: each a clear error or a run status
that names it, never a silent wrong trajectory."""
import ctypes

import numpy as np
import pytest
import sympy as sm
import sympy.physics.mechanics as me

from codegen import DynamicsError, GibbsAppellMethod, generate
from codegen.abi import STATUS_CODE


@pytest.fixture(scope="module")
def parts(hybrid):
    """The simple pendulum of hybrid_models, formed (each test generates its own variant)."""
    pd = hybrid("pendulum")
    q, u, m, g, l = pd["symbols"]
    return dict(ga=pd["ga"], q=q, u=u, m=m, l=l, N=pd["frames"][0], P=pd["points"][1])


def test_expressions_with_what_the_model_does_not_have(parts, tmp_path):
    ga, q, N, P = parts["ga"], parts["q"], parts["N"], parts["P"]
    c, w = sm.Symbol('c'), me.dynamicsymbols('w')
    with pytest.raises(ValueError, match=r"event 'hit' contains c, which the model does not "
                                         r"have .*list it in constants="):
        generate(ga, "bad", output_dir=tmp_path, events={"hit": q - c})
    with pytest.raises(ValueError, match=r"output 'x' contains w\(t\), which is neither a state"):
        generate(ga, "bad", output_dir=tmp_path, outputs={"x": w + q})
    with pytest.raises(ValueError, match=r"output 'a': .*Derivative\(u\(t\), t\)"):
        generate(ga, "bad", output_dir=tmp_path, outputs={"a": parts["u"].diff()})
    with pytest.raises(TypeError, match=r"output 'v' is a Vector: give its components"):
        generate(ga, "bad", output_dir=tmp_path, outputs={"v": P.vel(N)})
    with pytest.raises(ValueError, match=r"output name '2x' must be a Python identifier"):
        generate(ga, "bad", output_dir=tmp_path, outputs={"2x": q})
    with pytest.raises(ValueError, match=r"'energy' is not a ready output"):
        generate(ga, "bad", output_dir=tmp_path, outputs={"E": "energy"})
    with pytest.raises(ValueError, match=r"no run-time constraints, so no constraint forces"):
        generate(ga, "bad", output_dir=tmp_path, outputs={"lam": "constraint_forces"})
    with pytest.raises(ValueError, match=r"impact 'hit' names no event"):
        generate(ga, "bad", output_dir=tmp_path, impacts={"hit": (P, N.y, 0)})
    with pytest.raises(ValueError, match=r"control: F is not an input of the model"):
        generate(ga, "bad", output_dir=tmp_path, control={"F": q})
    # listed in constants=, c is a constant of the model
    mod = generate(ga, "ok_c", output_dir=tmp_path, events={"hit": q - c},
                   constants=[parts["m"], sm.Symbol('g'), parts["l"], c])
    assert mod.constants == ["m", "g", "l", "c"]


def test_an_impact_whose_contact_jacobian_is_zero(parts, tmp_path):
    """Zero everywhere: refused when generated. Singular where the point strikes (two
    normals for one speed): the status CG_ERR_IMPACT, named."""
    ga, q, N, P = parts["ga"], parts["q"], parts["N"], parts["P"]
    with pytest.raises(ValueError, match=r"impact 'hit': the contact Jacobian is zero"):
        generate(ga, "bad", output_dir=tmp_path, events={"hit": q}, impacts={"hit": (P, N.z, 0)})
    mod = generate(ga, "stuck", output_dir=tmp_path, events={"hit": q + 1},
                   impacts={"hit": (P, [N.y, -N.x], 0)})
    p = mod.parameters(m=1, g=9.81, l=1)
    with pytest.raises(DynamicsError, match=r"contact Jacobian is zero here"):
        mod.impact("hit", 0.0, [-1.0, -1.0], p)
    res = mod.simulate((0, 3), [-0.5, -2.0], p)
    assert res.status == STATUS_CODE["CG_ERR_IMPACT"] and "contact Jacobian" in res.message


def test_bad_resets(parts, tmp_path):
    mod = generate(parts["ga"], "resets", output_dir=tmp_path, events={"down": parts["q"]})
    p = mod.parameters(m=1, g=9.81, l=1)
    ev = {"down": {"terminal": True}}
    for reset, match in ((lambda n, t, x, p: x[:1], r"reset at event 'down' .*returned shape \(1,\)"),
                         (lambda n, t, x, p: x * np.nan, r"returned a non-finite state"),
                         (lambda n, t, x, p: "no", r"did not return numbers")):
        with pytest.raises(ValueError, match=match):
            mod.simulate((0, 3), [0.5, 0.0], p, events=ev, reset=reset)
    with pytest.raises(TypeError, match=r"reset must be a callable"):
        mod.simulate((0, 3), [0.5, 0.0], p, events=ev, reset=[0.0, 0.0])
    with pytest.raises(ValueError, match=r"'up' is not an event of the model \(events: down\)"):
        mod.simulate((0, 3), [0.5, 0.0], p, events={"up": {}})
    with pytest.raises(ValueError, match=r"direction must be -1, 0 or 1, got 2"):
        mod.simulate((0, 3), [0.5, 0.0], p, events={"down": {"direction": 2}})
    with pytest.raises(ValueError, match=r"max_events must be at least 1"):
        mod.simulate((0, 3), [0.5, 0.0], p, max_events=0)


def test_a_reset_off_the_constraints(tmp_path):
    from codegen import examples as ex
    bar = ex.four_bar()
    ga = GibbsAppellMethod(**bar.kwargs)
    q = ga.q[0]
    mod = generate(ga, "bar_reset", output_dir=tmp_path, events={"e": q - 1e3})
    p = mod.parameters(bar.parameter_values)
    x0 = mod.project(np.array(bar.initial_state, dtype=float), p)
    g0 = mod.event_functions(0.0, x0, p)[0] + 1e3
    mod2 = generate(ga, "bar_reset2", output_dir=tmp_path, events={"e": q - (g0 + 1e-3)})
    with pytest.raises(ValueError, match=r"returned a state off the constraints .*project"):
        mod2.simulate((0, 2), x0, p, events={"e": {"terminal": True}},
                      reset=lambda n, t, x, p: x + 0.1)


def test_bad_controllers(parts, tmp_path):
    from codegen import examples as ex
    model = ex.n_pendulum_on_cart(1)
    mod = generate(GibbsAppellMethod(**model.kwargs), "ctl_bad", output_dir=tmp_path)
    p = mod.parameters(model.parameter_values)
    x0 = [0.0, 1.5, 0.0, 0.0]
    with pytest.raises(ValueError, match=r"K must have shape \(nr, nx\) = \(1, 4\), got \(4, 1\)"):
        mod.simulate((0, 1), x0, p, controller=np.ones((4, 1)))
    with pytest.raises(ValueError, match=r"K is not finite"):
        mod.simulate((0, 1), x0, p, controller=np.full((1, 4), np.nan))
    with pytest.raises(TypeError, match=r"the controller runs in C"):
        mod.simulate((0, 1), x0, p, controller=lambda t, x: -x[0])
    with pytest.raises(ValueError, match=r"x_ref must be 4 finite numbers"):
        mod.simulate((0, 1), x0, p, controller=np.ones((1, 4)), x_ref=[0.0])
    sig = ctypes.CFUNCTYPE(None, ctypes.c_double, ctypes.POINTER(ctypes.c_double),
                           ctypes.POINTER(ctypes.c_double), ctypes.POINTER(ctypes.c_double),
                           ctypes.c_void_p)

    def nan(t, x, p_, r, data):
        r[0] = float("nan")
    with pytest.raises(DynamicsError, match=r"the controller gave a non-finite input at t = 0"):
        mod.simulate((0, 1), x0, p, controller=sig(nan))
    free = generate(parts["ga"], "no_inputs", output_dir=tmp_path)
    with pytest.raises(ValueError, match=r"no inputs for a controller to set"):
        free.simulate((0, 1), [0.1, 0.0], free.parameters(m=1, g=1, l=1), controller=np.ones((0, 2)))
    from codegen import sweep
    with pytest.raises(TypeError, match=r"sweep's controller is a matrix K"):
        sweep(mod, (0, 1), [x0], p, controller=sig(nan))
