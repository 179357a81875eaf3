"""The Newton–Euler program (codegen.algorithms.rnea) against KanesMethod's M u' - F, and the
tree's bias wrench split as h = W a0 + b (codegen.formulation.tree) that it runs on."""
import zlib

import numpy as np
import pytest
import sympy as sm
import sympy.physics.mechanics as me

from codegen import GibbsAppellMethod, equations_of
from codegen import examples as ex
from codegen.algorithms.rnea import inverse_program
from codegen.symbolic.expressions import vanishes
from helpers import kane_state
from robot_oracle import program_function


def _two_masses(gs):
    """A planar double pendulum of point masses on absolute angles (a tree of particles),
    mass i pulled by m_i gs[i] along -N.y: a uniform field when the gs are equal."""
    N = me.ReferenceFrame("N")
    O = me.Point("O")
    O.set_vel(N, 0)
    q = me.dynamicsymbols("q1:3")
    u = me.dynamicsymbols("u1:3")
    m = sm.symbols("m1:3")
    frames = [N.orientnew("A", "Axis", [q[0], N.z])]
    frames.append(N.orientnew("B", "Axis", [q[1], N.z]))
    P1 = O.locatenew("P1", frames[0].x)
    P1.v2pt_theory(O, N, frames[0])
    P2 = P1.locatenew("P2", frames[1].x)
    P2.v2pt_theory(P1, N, frames[1])
    bodies = [me.Particle("p1", P1, m[0]), me.Particle("p2", P2, m[1])]
    loads = [(P, -mi * gi * N.y) for P, mi, gi in zip((P1, P2), m, gs)]
    kw = dict(frame=N, q_ind=q, u_ind=u, kd_eqs=[ui - qi.diff() for ui, qi in zip(u, q)],
              bodies=bodies, forcelist=loads)
    return kw, bodies, loads


class _Model:
    def __init__(self, kw, bodies, loads):
        self.kwargs, self.bodies, self.loads = kw, bodies, loads
        self.constants = sorted(set().union(*[b.mass.free_symbols for b in bodies])
                                | set().union(*[v.free_symbols(kw["frame"]) for _, v in loads])
                                - {me.dynamicsymbols._t}, key=str)
        self.q_ind, self.u_ind, self.q_dependent, self.u_dependent = kw["q_ind"], kw["u_ind"], [], []
        self.specifieds = []


g, g2 = sm.symbols("g g2")
CASES = {
    "pendulum3": lambda: ex.n_pendulum_on_cart(3),                    # particles, a cart
    "chain3": lambda: ex.spatial_chain(3),                            # rigid, spherical
    "chain2_rates": lambda: ex.spatial_chain(2, speeds="rates"),
    "uniform": lambda: _Model(*_two_masses((g, g))),
    "not_uniform": lambda: _Model(*_two_masses((g, g2))),             # no field: in b
}


@pytest.mark.parametrize("name", CASES)
def test_inverse_dynamics_equal_kane(name):
    """tau = M u' - F of the Newton–Euler program (run in Python) equals KanesMethod's
    mass matrix and forcing at random states and accelerations."""
    model = CASES[name]()
    eom = equations_of(GibbsAppellMethod(**model.kwargs))
    assert eom.tree is not None
    inverse = program_function(inverse_program(eom))
    km = me.KanesMethod(**model.kwargs)
    km.kanes_equations(model.bodies, model.loads)
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    for _ in range(2):
        vals = kane_state(model, None, rng)
        derivs = {k: v for k, v in vals.items() if isinstance(k, sm.Derivative)}
        rest = {k: v for k, v in vals.items() if k not in derivs}
        M = np.array(km.mass_matrix.xreplace(derivs).xreplace(rest).evalf(), dtype=float)
        F = np.array(km.forcing.xreplace(derivs).xreplace(rest).evalf(), dtype=float).ravel()
        ud = rng.uniform(-1.0, 1.0, eom.nu)
        a = {"x": [vals[s] for s in list(model.q_ind) + list(model.u_ind)],
             "p": [vals[c] for c in eom.constants], "r": [vals[s] for s in eom.specifieds],
             "ud": ud}
        tau = np.array(inverse(a)["tau"], dtype=float)
        expected = M @ ud - F
        assert np.allclose(tau, expected, rtol=1e-10, atol=1e-10 * np.abs(expected).max())


@pytest.mark.parametrize("name", ["pendulum3", "chain3", "uniform", "not_uniform"])
def test_bias_split_is_exact(name):
    """Every node's h = W a0 + b on its rows, at generic points; a uniform field (the
    same g times each mass) is in a0 and not in b, a field that is not uniform in b."""
    eom = equations_of(GibbsAppellMethod(**CASES[name]().kwargs))
    nodes = eom.tree.nodes
    full = {}
    for item in list(eom.intermediates) + list(eom.tree.intermediates):
        full[item.symbol] = sm.sympify(item.expr).xreplace(full)
    for nd in nodes:
        W = sm.Matrix(nd.W)
        rest = sm.Matrix(nd.h) - W * sm.Matrix(nd.a0) - sm.Matrix(nd.b)
        assert vanishes([e.xreplace(full) for e in rest]), name
    field = {"pendulum3": ex.n_pendulum_on_cart(3).constants, "uniform": [g],
             "not_uniform": [g, g2]}.get(name)
    if name in ("pendulum3", "uniform"):
        gravity = [s for s in field if str(s) == "g"]
        assert all(not sm.sympify(e).has(*gravity) for nd in nodes for e in nd.b)
        assert all(any(sm.sympify(e).has(*gravity) for e in nd.a0) for nd in nodes[-2:])
    elif name == "not_uniform":
        assert any(sm.sympify(e).has(g2) for e in nodes[-1].b)


DENSE = {
    "humanoid": ex.humanoid,                                          # 4 roots, 3-speed joints
    "chain4": lambda: ex.spatial_chain(4),
    "chain3_rates": lambda: ex.spatial_chain(3, speeds="rates"),      # s moves with q: no c
}


@pytest.mark.parametrize("name", DENSE)
def test_carried_acceleration_equals_dense(name):
    """The total acceleration carried outward (each child's velocity product c,
    codegen.formulation.tree) gives tau = M u' - F of the dense formulation (its M and F); c is
    found exactly where a joint turns about its point with a constant axis."""
    from robot_oracle import evaluator
    model = DENSE[name]()
    method = GibbsAppellMethod(**model.kwargs)
    eom = equations_of(method)
    children = [nd for nd in eom.tree.nodes if nd.parent >= 0]
    carried = all(nd.c is not None for nd in children)
    assert carried == (name != "chain3_rates"), name
    inverse = program_function(inverse_program(eom))
    dense = equations_of(GibbsAppellMethod(**DENSE[name]().kwargs))
    run = evaluator(dense)
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    for _ in range(2):
        vals = kane_state(model, None, rng)
        x = [vals[s] for s in list(model.q_ind) + list(model.u_ind)]
        p = [vals[c] for c in eom.constants]
        r = [vals[s] for s in eom.specifieds]
        M, F = run(x, [vals[c] for c in dense.constants], [vals[s] for s in dense.specifieds])
        ud = rng.uniform(-1.0, 1.0, eom.nu)
        tau = np.array(inverse({"x": x, "p": p, "r": r, "ud": ud})["tau"], dtype=float)
        expected = M @ ud - F
        assert np.allclose(tau, expected, rtol=1e-10, atol=1e-10 * np.abs(expected).max())


# the robots' joint torques the program gives to their joints directly, of their inputs r
# (the iiwa's two others, and Atlas's eleven, are read inside a shared definition and stay)
DIRECT = {"ur5": (6, 6), "iiwa": (5, 7), "hyq": (12, 12)}


@pytest.mark.parametrize("name", DIRECT)
def test_joint_torques_to_their_joints_equal_pinocchio(name):
    """A joint's torque pair, a moment on the child and its reaction on the parent, is
    read once, in its joint's tau (codegen.algorithms.rnea.joint_torques), and no longer
    on the inward pass; tau = M u' - F still equals Pinocchio's (pin.crba, pin.rnea) with
    random joint torques, as it does with the pairs left in the bodies' wrenches."""
    from robot_oracle import SIXTEEN, pin, pin_dynamics, pin_model, program_states, robot_path
    import codegen.algorithms.rnea as rnea
    from codegen.robots import from_urdf
    if pin is None:
        pytest.skip("Pinocchio is not installed")
    path, (floating, options) = robot_path(name), SIXTEEN[name][2:]
    model = from_urdf(path, floating_base=floating, **options)
    eom = GibbsAppellMethod(**model.kwargs).to_equations(constants=model.constants,
                                                         specifieds=model.specifieds)
    program = inverse_program(eom)
    r = {n for n in (i.name for i in program.inputs if i.array == "r")}
    rs = [o for o, n in program.names.items() if n in r]
    outputs = dict(program.outputs)["tau"]
    direct = sum(any(e.has(x) for x in rs) for e in outputs)
    inside = [s for s, e in program.temporaries if any(e.has(x) for x in rs)]
    assert (direct, len(rs)) == DIRECT[name]
    assert len(inside) == (2 if name == "iiwa" else 0)
    with pytest.MonkeyPatch.context() as mp:       # the pairs left in the wrenches
        mp.setattr(rnea, "joint_torques", lambda nodes, S, h, elsewhere, r: (h, {}))
        left = inverse_program(eom)
    assert program.operation_count < left.operation_count
    kept = program_function(left)
    run, pm = program_function(program), pin_model(path, floating)
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    for a, q, v, tau in program_states(model, rng, 2):
        a["ud"] = rng.uniform(-1.0, 1.0, eom.nu)
        M, F = pin_dynamics(model, pm, a["x"], tau)
        expected = M @ a["ud"] - F
        ours = np.array(run(a)["tau"], dtype=float)
        assert np.abs(ours - expected).max() < 1e-10 * max(1.0, np.abs(expected).max())
        assert np.allclose(ours, np.array(kept(a)["tau"], dtype=float), rtol=1e-12, atol=1e-12)
