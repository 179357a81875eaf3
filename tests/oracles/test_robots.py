"""Robots from URDF files (codegen.robots) against Pinocchio on the same files.

Five robots are compiled with the default options and no order given (session
fixture: ``generate(GibbsAppellMethod(**model.kwargs), name)``, the model's own order
of inputs travelling with its kwargs): their rhs, inverse dynamics and mass matrix
against pin.aba, pin.rnea and pin.crba. The rest of the sixteen robots of
robot_oracle.SIXTEEN are formed from their kwargs alone and their recursion's program
run in Python against pin.aba, most of them robots whose joint names do not sort in
Pinocchio's tree order. Every
small URDF of example-robot-data is formulated and its recursion's and inverse
dynamics' programs run in Python against pin.aba and pin.rnea (the larger robots
are in codegen.bench.robots, which checks the same before timing). Models chosen
for the features they use (prismatic and mimic joints, fixed joints that merge
links, massless links) are formulated and their M and F evaluated at random
states against pin.crba and
pin.rnea, without compiling. Every URDF of example-robot-data is parsed and its
joint order checked against Pinocchio's.
"""
import glob
import os

import numpy as np
import pytest
import sympy as sm
import sympy.physics.mechanics as me

from codegen import GibbsAppellMethod, equations_of, generate
from codegen.pipeline.build import neutral_equations
from codegen.algorithms.rnea import inverse_program
from codegen.algorithms.aba import tree_program
from codegen.robots import URDFError, from_urdf, parse_urdf
from robot_oracle import (ERD, SHARED, SIXTEEN, erd, evaluator, pin, pin_dynamics, pin_model,
                          program_function, program_states, random_state, relative_error,
                          robot_path, shared)

# -- compiled: forward dynamics and the mass matrix --------------------------------------

# the joint names of the UR5, the Go2 and Talos do not sort in tree order; the Go2 and
# Talos are floating, Talos the largest of the sixteen (38 speeds)
COMPILED = {"iiwa": (lambda: shared("iiwa"), False),
            "ur5": (lambda: erd("ur_description/urdf/ur5_robot.urdf"), False),
            "solo": (lambda: erd("solo_description/robots/solo.urdf"), True),
            "go2": (lambda: robot_path("go2"), True),
            "talos": (lambda: robot_path("talos"), True)}


@pytest.fixture(scope="session")
def compiled(outdir):
    """name -> (model, compiled, path) on demand, each built once, without constants= or
    specifieds= (the model's order travels with its kwargs)."""
    cache = {}

    def get(name):
        if name not in cache:
            path_of, floating = COMPILED[name]
            path = path_of()
            model = from_urdf(path, floating_base=floating)
            mod = generate(GibbsAppellMethod(**model.kwargs), f"urdf_{name}", output_dir=outdir,
                           jacobian=None if name == "ur5" else False)
            cache[name] = (model, mod, path)
        return cache[name]
    return get


@pytest.mark.parametrize("name", sorted(COMPILED))
def test_compiled_robot_equals_pinocchio(compiled, name):
    """rhs's accelerations equal pin.aba, inverse_dynamics pin.rnea, mass_matrix
    pin.crba, at random states; and q' of the free-flyer is the derivative of
    Pinocchio's integrate. The iiwa's default options choose the recursion, through
    the constant rotations of its joint origins."""
    model, mod, path = compiled(name)
    if name == "iiwa":
        assert mod.manifest["solver"].startswith("articulated-body recursion")
    pm = pin_model(path, model.floating_base)
    pd = pm.createData()
    assert mod.specifieds == [f"tau_{j}" for j in model.joint_names] == \
        [str(s.func) for s in model.specifieds]
    assert mod.constants == [str(c) for c in model.constants]
    assert mod.states[len(model.q_ind) - len(model.joint_names):len(model.q_ind)] == \
        [f"q_{j}" for j in model.joint_names]
    p = mod.parameters(model.parameter_values)
    rng = np.random.default_rng(3)
    nq = len(model.q_ind)
    for _ in range(4):
        x, tau = random_state(model, rng)
        q, v = model.to_pinocchio(x)
        full = np.concatenate([np.zeros(6) if model.floating_base else [], tau])
        xdot = mod.rhs(0.0, x, p, tau)
        assert relative_error(xdot[nq:], pin.aba(pm, pd, q, v, full)) < 1e-9
        Mp, _ = pin_dynamics(model, pm, x, tau)
        assert relative_error(mod.mass_matrix(0.0, x, p, tau), Mp) < 1e-9
        udot = rng.uniform(-1.0, 1.0, len(v))
        # M u' - F with the joint torques in F: Pinocchio's tau less ours
        assert relative_error(mod.inverse_dynamics(0.0, x, udot, p, tau) + full,
                              pin.rnea(pm, pd, q, v, udot)) < 1e-9
        if model.floating_base:
            h = 1e-6
            dq = (pin.integrate(pm, q, v * h) - pin.integrate(pm, q, -v * h)) / (2 * h)
            assert np.abs(xdot[:7] - dq[:7]).max() < 1e-7


FORMED = sorted(set(SIXTEEN) - set(COMPILED))


@pytest.mark.parametrize("name", FORMED)
def test_formed_from_kwargs_alone_equals_pinocchio(name):
    """The rest of the sixteen robots, formed as ``generate`` forms them from
    ``GibbsAppellMethod(**model.kwargs)`` with no constants= or specifieds=: the inputs
    come in the model's order (Pinocchio's v order, not sorted by name), and the
    recursion's program, run in Python, gives pin.aba's accelerations at random states."""
    _, _, floating, options = SIXTEEN[name]
    path = robot_path(name)
    model = from_urdf(path, floating_base=floating, **options)
    eom = neutral_equations(GibbsAppellMethod(**model.kwargs), f"urdf_{name}")
    assert eom.specified_names == [f"tau_{j}" for j in model.joint_names]
    assert eom.constant_names == [str(c) for c in model.constants]
    forward = program_function(tree_program(eom))
    pm = pin_model(path, floating, mimic=options.get("mimic", True))
    pd = pm.createData()
    p = [model.parameter_values[c] for c in eom.constant_names]
    rng = np.random.default_rng(8)
    for _ in range(2):
        x, tau = random_state(model, rng)
        q, v = model.to_pinocchio(x)
        full = np.concatenate([np.zeros(6) if floating else [], tau])
        ours = np.array(forward({"x": x, "p": p, "r": tau})["ud"])
        assert relative_error(ours, pin.aba(pm, pd, q, v, full)) < 1e-9


def test_kanes_method_from_the_same_kwargs_gets_the_same_order(tmp_path):
    """Joints named against their tree order (z_shoulder above a_elbow): KanesMethod and
    GibbsAppellMethod made from one model's kwargs hand over its order, and KanesMethod's
    equations in that order give pin.aba's accelerations."""
    path = write(tmp_path, LINK.format("base") + LINK.format("upper") + LINK.format("lower")
                 + joint("z_shoulder", "base", "upper")
                 + joint("a_elbow", "upper", "lower").replace('0 1 0', '1 0 0'))
    model = from_urdf(path)
    order = ["tau_z_shoulder", "tau_a_elbow"]
    km = me.KanesMethod(**model.kwargs)
    km.kanes_equations()
    kane = equations_of(km)
    assert kane.specified_names == order
    assert equations_of(GibbsAppellMethod(**model.kwargs)).specified_names == order
    run = evaluator(kane)
    pm = pin_model(path)
    x, tau = random_state(model, np.random.default_rng(2))
    M, F = run(x, [], tau)
    q, v = model.to_pinocchio(x)
    assert relative_error(np.linalg.solve(M, F), pin.aba(pm, pm.createData(), q, v, tau)) < 1e-9


def test_jacobian_equals_aba_derivatives(compiled):
    """The UR5's analytic Jacobian (the default options build it; over the tree it
    differentiates the Newton-Euler program) against pin.computeABADerivatives."""
    model, mod, path = compiled("ur5")
    pm = pin_model(path)
    pd = pm.createData()
    p = mod.parameters(model.parameter_values)
    x, tau = random_state(model, np.random.default_rng(11))
    q, v = model.to_pinocchio(x)
    pin.computeABADerivatives(pm, pd, q, v, tau)
    J = mod.jacobian(0.0, x, p, tau)
    nq = len(model.q_ind)
    assert relative_error(J[nq:, :nq], pd.ddq_dq) < 1e-9
    assert relative_error(J[nq:, nq:], pd.ddq_dv) < 1e-9
    assert relative_error(mod.input_jacobian(0.0, x, p, tau)[nq:], pd.Minv) < 1e-9


def test_inverse_dynamics_bad_input(compiled):
    model, mod, _ = compiled("ur5")
    p = mod.parameters(model.parameter_values)
    x = np.zeros(mod.nx)
    with pytest.raises(ValueError, match="udot"):
        mod.inverse_dynamics(0.0, x, np.zeros(mod.nu - 1), p, np.zeros(mod.nu))
    bad = np.zeros(mod.nu)
    bad[2] = np.nan
    with pytest.raises(ValueError, match=r"udot is not finite at .*u_elbow_joint"):
        mod.inverse_dynamics(0.0, x, bad, p, np.zeros(mod.nu))
    x[1] = np.inf
    with pytest.raises(ValueError, match=r"x is not finite at \['q_shoulder_lift_joint'\]"):
        mod.inverse_dynamics(0.0, x, np.zeros(mod.nu), p, np.zeros(mod.nu))


# -- the recursion's programs run in Python on every small URDF ---------------------------


def _small_urdfs(limit=6):
    """example-robot-data's fixed-base URDFs that Pinocchio loads, up to limit speeds
    (the larger ones are in codegen.bench.robots): the first of each description
    folder, and the double pendulum's continuous joints; not the UR arms (the UR5 is
    compiled above)."""
    if ERD is None:
        return []
    out, folders = [], set()
    for path in sorted(glob.glob(os.path.join(ERD, "**", "*.urdf"), recursive=True)):
        relative = os.path.relpath(path, ERD)
        folder = relative.split(os.sep)[0]
        if folder == "ur_description" or (folder in folders
                                           and not relative.endswith("_continuous.urdf")):
            continue
        try:
            nv = pin.buildModelFromUrdf(path, mimic=True).nv
        except Exception:       # Pinocchio refuses it (test_joint_order_follows_pinocchio)
            continue
        if 0 < nv <= limit:
            out.append(relative)
            folders.add(folder)
    return out


SMALL = _small_urdfs()


def test_many_robots_are_small_ones():
    if ERD is None:
        pytest.skip("example-robot-data is not installed")
    assert len(SMALL) >= 8


@pytest.mark.parametrize("relative", SMALL)
def test_recursion_and_inverse_dynamics_on_small_robots(relative):
    """Each small robot of example-robot-data, as written (inertias unchecked, as
    Pinocchio loads them): the articulated-body recursion's program (u') against
    pin.aba, the Newton-Euler program (tau) against pin.rnea, at two random states."""
    path = os.path.join(ERD, relative)
    model = from_urdf(path, check_inertia=False)
    eom = GibbsAppellMethod(**model.kwargs).to_equations(
        constants=model.constants, specifieds=model.specifieds)
    assert eom.tree is not None, eom.tree_note
    forward = program_function(tree_program(eom))
    inverse = program_function(inverse_program(eom))
    pm = pin_model(path)
    pd = pm.createData()
    rng = np.random.default_rng(5)
    for a, q, v, tau in program_states(model, rng, 2):
        assert relative_error(np.array(forward(a)["ud"]), pin.aba(pm, pd, q, v, tau)) < 1e-9
        udot = rng.uniform(-1.0, 1.0, len(v))
        a.update(ud=udot, r=np.zeros_like(tau))
        assert relative_error(np.array(inverse(a)["tau"]), pin.rnea(pm, pd, q, v, udot)) < 1e-9


# -- formulated, not compiled: M and F against crba and rnea -----------------------------



def formulated_error(model, pm, seed=0, damping=None):
    eom = GibbsAppellMethod(**model.kwargs).to_equations(
        constants=model.constants, specifieds=model.specifieds)
    run = evaluator(eom)
    p = [model.parameter_values[str(c)] for c in model.constants]
    rng = np.random.default_rng(seed)
    worst = 0.0
    for _ in range(3):
        x, tau = random_state(model, rng)
        M, F = run(x, p, tau)
        Mp, Fp = pin_dynamics(model, pm, x, tau, damping)
        worst = max(worst, relative_error(M, Mp), relative_error(F, Fp))
    return worst


def test_symbolic_numbers_damping_and_gravity():
    """The panda's prismatic fingers, one a mimic of the other (Pinocchio's mimic=True),
    its hand merged into the last link by fixed joints; symbolic=True: the file's
    nonzero numbers as constants (merged links give expressions of them);
    damping=True: -b v; gravity scaled."""
    path = erd("panda_description/urdf/panda.urdf")
    model = from_urdf(path, symbolic=True, damping=True, gravity=3.0)
    names = set(model.parameter_values)
    assert {"m_panda_link7", "m_panda_hand", "Ixx_panda_link1", "oz_panda_joint1",
            "damping_panda_joint1", "g"} <= names
    assert model.parameter_values["g"] == 3.0
    assert all(isinstance(c, sm.Symbol) for c in model.constants)
    pm = pin_model(path)
    pm.gravity.linear[:] = [0.0, 0.0, -3.0]
    # the mimic finger's damping acts through its multiplier (1) on the first finger's speed
    damping = pm.damping.copy()
    damping[-1] *= 2
    assert formulated_error(model, pm, damping=damping) < 1e-9
    assert not model.conservative


def test_joint_order_follows_pinocchio_on_every_file():
    """Every URDF of example-robot-data and the shared ones that Pinocchio loads: the
    moving joints in Pinocchio's order, with its nq (a continuous joint counts 2)."""
    if ERD is None:
        pytest.skip("example-robot-data is not installed")
    files = sorted(glob.glob(os.path.join(ERD, "**", "*.urdf"), recursive=True)) \
        + sorted(glob.glob(os.path.join(SHARED, "*.urdf")))
    checked = 0
    for path in files:
        try:
            pm = pin.buildModelFromUrdf(path)
        except Exception:       # e.g. ur3.urdf, an empty <robot>
            with pytest.raises(URDFError):
                parse_urdf(path)
            continue
        desc = parse_urdf(path, mimic=False)
        moving = [j for j in desc.joints if j.type != "fixed"]
        assert [j.name for j in moving] == list(pm.names)[1:], path
        assert sum(2 if j.type == "continuous" else 1 for j in moving) == pm.nq, path
        checked += 1
    assert checked > 60


def test_states_map_to_pinocchio_and_back():
    path = erd("kinova_description/robots/kinova.urdf")
    model = from_urdf(path)
    pm = pin_model(path)
    assert model.joint_names == list(pm.names)[1:]
    x, _ = random_state(model, np.random.default_rng(1))
    x[:len(model.q_ind)] = np.linspace(-3.0, 3.0, len(model.q_ind))
    q, v = model.to_pinocchio(x)
    assert len(q) == pm.nq and len(v) == pm.nv
    assert np.allclose(model.from_pinocchio(q, v), x, atol=1e-14)
    with pytest.raises(ValueError, match="entries"):
        model.from_pinocchio(q[:-1], v)


def test_floating_base_state_and_inputs():
    path = shared("iiwa")
    model = from_urdf(path, floating_base=True)
    names = [str(s.func) for s in model.q_ind[:7] + model.u_ind[:6]]
    assert names == ["base_x", "base_y", "base_z", "base_qx", "base_qy", "base_qz", "base_qw",
                     "base_vx", "base_vy", "base_vz", "base_wx", "base_wy", "base_wz"]
    assert model.initial_state[:7] == [0, 0, 0, 0, 0, 0, 1.0]
    assert len(model.specifieds) == 7            # no inputs on the free-flyer


# -- geometry -------------------------------------------------------------------------------

def write(tmp_path, body, name="robot.urdf", robot='<robot name="r">'):
    path = tmp_path / name
    path.write_text(f'<?xml version="1.0"?>\n{robot}\n{body}\n</robot>\n')
    return str(path)


LINK = ('<link name="{0}"><inertial><origin xyz="0.1 0 0"/><mass value="1"/>'
        '<inertia ixx="0.01" iyy="0.02" izz="0.02" ixy="0" iyz="0" ixz="0"/></inertial></link>')


def joint(name, parent, child, kind="revolute", extra=""):
    return (f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>'
            f'<origin xyz="0 0 0.5"/><axis xyz="0 1 0"/>'
            f'<limit lower="-3" upper="3" effort="10" velocity="5"/>{extra}</joint>')


def test_geometry_kept_for_visualization(tmp_path):
    body = (LINK.format("base") + LINK.format("arm").replace(
        "</link>", '<visual><origin xyz="0 0 0.2" rpy="0 0 1.5707963267948966"/><geometry>'
        '<box size="0.1 0.2 0.3"/></geometry><material name="red"><color rgba="1 0 0 1"/>'
        '</material></visual></link>')
        + '<link name="tool"><visual><geometry><mesh filename="package://r/tool.stl" '
          'scale="0.001 0.001 0.001"/></geometry></visual>'
          '<visual><geometry><cylinder radius="0.02" length="0.1"/></geometry></visual></link>'
        + joint("j1", "base", "arm")
        + '<joint name="fix" type="fixed"><parent link="arm"/><child link="tool"/>'
          '<origin xyz="0.3 0 0" rpy="0 0 3.141592653589793"/></joint>')
    model = from_urdf(write(tmp_path, body))
    by_shape = {v.shape: (v, b, R, p) for v, b, R, p in model.geometry}
    box, body_of, R, p = by_shape["box"]
    assert (box.link, body_of, box.params["size"], box.rgba) == ("arm", "arm", (0.1, 0.2, 0.3),
                                                                 (1.0, 0.0, 0.0, 1.0))
    assert R == np.eye(3).tolist() and p == [0.0, 0.0, 0.0]
    mesh, body_of, R, p = by_shape["mesh"]
    assert mesh.params == {"filename": "package://r/tool.stl", "scale": (0.001, 0.001, 0.001)}
    assert body_of == "arm" and np.allclose(R, np.diag([-1.0, -1.0, 1.0])) and p == [0.3, 0, 0]
    assert by_shape["cylinder"][0].params == {"radius": 0.02, "length": 0.1}
    assert set(model.links) == {"base", "arm"}


def test_fixed_joints_merge_inertia(tmp_path):
    """A child fixed at an offset and turned: one body whose mass, mass centre and
    inertia equal Pinocchio's (its crba of the one joint, at two angles)."""
    body = (LINK.format("base") + LINK.format("arm") + LINK.format("tip")
            + joint("j1", "base", "arm")
            + '<joint name="fix" type="fixed"><parent link="arm"/><child link="tip"/>'
              '<origin xyz="0.3 0.1 0" rpy="0.3 0.2 0.1"/></joint>')
    path = write(tmp_path, body)
    model = from_urdf(path)
    assert [b.name for b in model.bodies] == ["arm"]
    assert float(model.bodies[0].mass) == 2.0
    assert formulated_error(model, pin_model(path)) < 1e-12


# -- bad input ------------------------------------------------------------------------------

BAD = {
    "malformed": ('<link name="a">', "not well-formed XML"),
    "not a number": (LINK.format("a").replace('value="1"', 'value="heavy"'),
                     r"link 'a': value='heavy' is not 1 number"),
    "unknown joint type": (LINK.format("a") + LINK.format("b") + joint("j", "a", "b", "screw"),
                           r"joint 'j': joint type 'screw' is not supported"),
    "floating joint": (LINK.format("a") + LINK.format("b") + joint("j", "a", "b", "floating"),
                       r"joint 'j': joint type 'floating' .* floating_base=True"),
    "planar joint": (LINK.format("a") + LINK.format("b") + joint("j", "a", "b", "planar"),
                     r"joint 'j': joint type 'planar' is not supported"),
    "massless with children": ('<link name="a"/><link name="b"/><link name="c"/>'
                               + joint("j1", "a", "b") + joint("j2", "b", "c"),
                               r"joint 'j1' moves only massless links \('b', 'c'\)"),
    "two parents": (LINK.format("a") + LINK.format("b") + LINK.format("c")
                    + joint("j1", "a", "c") + joint("j2", "b", "c"),
                    r"link 'c': is the child of joints 'j1' and 'j2': a closed kinematic loop"),
    "detached loop": (LINK.format("a") + LINK.format("b") + LINK.format("c") + LINK.format("d")
                      + joint("j1", "a", "b") + joint("j2", "c", "d") + joint("j3", "d", "c"),
                      r"joints 'j2', 'j3' form a closed kinematic loop not connected to the root "
                      r"link 'a'"),
    "two roots": (LINK.format("a") + LINK.format("b") + LINK.format("c") + joint("j", "a", "b"),
                  r"2 root links \('a', 'c'\)"),
    "negative mass": (LINK.format("a") + LINK.format("b").replace('value="1"', 'value="-1"')
                      + joint("j", "a", "b"), r"link 'b': mass -1.0 is negative"),
    "zero mass with inertia": (LINK.format("a") + LINK.format("b").replace('value="1"', 'value="0"')
                               + joint("j", "a", "b"), r"link 'b': mass 0 with a nonzero inertia"),
    "not positive semidefinite": (LINK.format("a") + LINK.format("b").replace('ixy="0"', 'ixy="0.05"')
                                  + joint("j", "a", "b"),
                                  r"link 'b': the inertia is not positive semidefinite .*"
                                  r"check_inertia=False"),
    "triangle inequality": (LINK.format("a") + LINK.format("b").replace('izz="0.02"', 'izz="0.04"')
                            + joint("j", "a", "b"),
                            r"link 'b': the inertia violates the triangle inequality"),
    "undefined link": (LINK.format("a") + joint("j", "a", "b"),
                       r"joint 'j': names link 'b', which is not defined"),
    "undefined mimic": (LINK.format("a") + LINK.format("b")
                        + joint("j", "a", "b", extra='<mimic joint="k"/>'),
                        r"joint 'j': mimics joint 'k', which is not defined"),
    "mimic loop": (LINK.format("a") + LINK.format("b") + LINK.format("c")
                   + joint("j1", "a", "b", extra='<mimic joint="j2"/>')
                   + joint("j2", "b", "c", extra='<mimic joint="j1"/>'),
                   r"joint 'j1': mimics itself through a chain of mimic joints"),
    "nothing moves": (LINK.format("a") + LINK.format("b")
                      + '<joint name="f" type="fixed"><parent link="a"/><child link="b"/></joint>',
                      r"no joint moves .* floating_base=True"),
    "no axis direction": (LINK.format("a") + LINK.format("b")
                          + joint("j", "a", "b").replace('<axis xyz="0 1 0"/>', '<axis xyz="0 0 0"/>'),
                          r"joint 'j': axis .* has no direction"),
    "no links": ("", r"no <link> in <robot>"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_input_is_named(tmp_path, case):
    body, message = BAD[case]
    path = write(tmp_path, body)
    with pytest.raises(URDFError, match=message) as info:
        from_urdf(path)
    assert path in str(info.value)


def test_inertia_checks_can_be_waived(tmp_path):
    body = LINK.format("a") + LINK.format("b").replace('izz="0.02"', 'izz="0.04"') + joint("j", "a", "b")
    model = from_urdf(write(tmp_path, body), check_inertia=False)
    assert len(model.bodies) == 1


def test_root_inertia_of_a_fixed_base_is_not_checked(tmp_path):
    """The root of a fixed base never moves: its inertia is not used, nor checked."""
    body = (LINK.format("a").replace('izz="0.02"', 'izz="0.04"') + LINK.format("b")
            + joint("j", "a", "b"))
    assert len(from_urdf(write(tmp_path, body)).bodies) == 1
    with pytest.raises(URDFError, match="link 'a': the inertia violates"):
        from_urdf(write(tmp_path, body), floating_base=True)


def test_massless_links_in_a_chain_are_fine(tmp_path):
    """Massless links between joints (two revolute joints through a massless link, as
    URDFs write universal joints), and a massless leaf on a fixed joint."""
    body = ('<link name="a"/><link name="m"/>' + LINK.format("b") + '<link name="leaf"/>'
            + joint("j1", "a", "m") + joint("j2", "m", "b").replace('0 1 0', '1 0 0')
            + '<joint name="f" type="fixed"><parent link="b"/><child link="leaf"/></joint>')
    path = write(tmp_path, body)
    model = from_urdf(path)
    assert len(model.u_ind) == 2 and [b.name for b in model.bodies] == ["b"]
    assert formulated_error(model, pin_model(path)) < 1e-12


@pytest.mark.parametrize("how", ["suffix", "namespace", "expression"])
def test_xacro_is_refused_with_a_hint(tmp_path, how):
    body = LINK.format("a") + LINK.format("b") + joint("j", "a", "b")
    if how == "suffix":
        path = write(tmp_path, body, name="robot.urdf.xacro")
    elif how == "namespace":
        path = write(tmp_path, '<xacro:include filename="arm.xacro"/>' + body,
                     robot='<robot name="r" xmlns:xacro="http://www.ros.org/wiki/xacro">')
    else:
        path = write(tmp_path, body.replace('value="1"', 'value="${mass}"'))
    with pytest.raises(URDFError, match=r"xacro .* > robot\.urdf"):
        from_urdf(path)


def test_missing_file_is_named(tmp_path):
    with pytest.raises(URDFError, match="nothere.urdf: cannot be read"):
        from_urdf(str(tmp_path / "nothere.urdf"))


def test_mimic_joints_follow_or_move_on_their_own():
    path = erd("panda_description/urdf/panda.urdf")
    assert from_urdf(path).joint_names[-1] == "panda_finger_joint1"
    independent = from_urdf(path, mimic=False)
    assert independent.joint_names[-2:] == ["panda_finger_joint1", "panda_finger_joint2"]
    assert independent.joint_names == list(pin.buildModelFromUrdf(path).names)[1:]


# -- the recursion through constant frames --------------------------------------------------

def test_recursion_through_a_constant_frame(outdir, monkeypatch):
    """Two bodies, the second oriented from a constant frame K fixed in the first,
    its joint located in K: the transport from the first body to the second is a
    rotation the formulation never needed, which detecting the tree defines (and the
    tree carries). Without those definitions, generating stops with an internal error
    that names the undefined symbol, before any C is compiled."""
    q1, q2, u1, u2 = me.dynamicsymbols("q1 q2 u1 u2")
    N = me.ReferenceFrame("N")
    O = me.Point("O")
    O.set_vel(N, 0)
    B1 = N.orientnew("B1", "Axis", (q1, N.z))
    K = B1.orientnew("K", "Axis", (sm.pi / 2, B1.x))
    B2 = K.orientnew("B2", "Axis", (q2, K.z))
    C1 = O.locatenew("C1", 0.2 * B1.x)
    C1.v2pt_theory(O, N, B1)
    P2 = O.locatenew("P2", 0.4 * K.x)
    P2.v2pt_theory(O, N, K)
    C2 = P2.locatenew("C2", 0.2 * B2.x)
    C2.v2pt_theory(P2, N, B2)
    bodies = [me.RigidBody("b1", C1, B1, 1.0, (me.inertia(B1, 0.1, 0.2, 0.3), C1)),
              me.RigidBody("b2", C2, B2, 1.0, (me.inertia(B2, 0.1, 0.2, 0.3), C2))]

    def formed():
        return GibbsAppellMethod(N, [q1, q2], [u1, u2], kd_eqs=[u1 - q1.diff(), u2 - q2.diff()],
                                 bodies=bodies, forcelist=[(C1, -9.81 * N.z), (C2, -9.81 * N.z)])
    tree = generate(formed(), "urdf_bug_tree", output_dir=outdir, recursive=True, jacobian=False)
    dense = generate(formed(), "urdf_bug_dense", output_dir=outdir, recursive=False, jacobian=False)
    x = np.array([0.3, -0.7, 0.4, 0.9])
    assert np.allclose(tree.rhs(0.0, x, []), dense.rhs(0.0, x, []), rtol=1e-12, atol=1e-12)
    from codegen.formulation import handoff
    real = handoff.Formed.tree

    def forgetful(self):
        tree, note = real(self)
        tree.intermediates = []
        return tree, note
    monkeypatch.setattr(handoff.Formed, "tree", forgetful)
    with pytest.raises(ValueError, match=r"internal error: the tree program uses \['_?T\d"):
        generate(formed(), "urdf_bug_forgetful", output_dir=outdir, recursive=True,
                 jacobian=False, force=True)


def test_free_flyer_velocity_is_taken_as_stored(tmp_path):
    """A free-flyer's base velocity (its speeds, in its own frame) enters the relative
    kinematics as stored: its rate is ω × v, free of the quaternion, and equals SymPy's
    own second derivative of the base's position (the kinematic equations' q' in the
    derivative of q', u' = 0) at a generic state, off the unit sphere too."""
    from codegen.formulation.kinematics import Kinematics
    from codegen.formulation.relative import RelativeMotions
    model = from_urdf(write(tmp_path, LINK.format("base") + LINK.format("arm")
                            + joint("j1", "base", "arm")), floating_base=True)
    kin = Kinematics(model.q_ind, model.u_ind, model.kd_eqs)
    motions = RelativeMotions(kin, model.frame, model.bodies)
    base_frame, base = model.links["base"]
    mo = motions.velocity(base)
    assert mo.frame == base_frame
    quaternion = set(kin.qs[3:7])
    assert not any(e.free_symbols & quaternion for e in mo.rate0)
    t = me.dynamicsymbols._t
    qdot = dict(zip([s.diff(t) for s in model.q_ind], kin.to_time(sm.Matrix(kin.qdot))))
    position = [model.q_ind[i] for i in range(3)]
    second = [sm.sympify(kin.to_time(sm.Matrix(kin.qdot))[i]).diff(t).xreplace(qdot)
              .xreplace({u.diff(t): 0 for u in model.u_ind}) for i in range(3)]
    rng = np.random.default_rng(4)
    values = dict(zip(list(model.q_ind) + list(model.u_ind),
                      rng.uniform(-1.0, 1.0, len(model.q_ind) + len(model.u_ind))))
    plain = {s: values[f] for f, s in zip(list(model.q_ind) + list(model.u_ind),
                                          kin.qs + kin.us)}
    for item in motions.items:
        plain[item.symbol] = float(item.expr.xreplace(plain))
    ours = np.array([float(sm.sympify(e).xreplace(plain)) for e in mo.rate0])
    R = np.array(base_frame.dcm(model.frame).xreplace(values), dtype=float)   # N -> base
    theirs = R @ np.array([float(e.xreplace(values)) for e in second])
    assert position and np.allclose(ours, theirs, rtol=1e-12, atol=1e-12)
    import warnings
    with warnings.catch_warnings():      # SymPy derives the unstored velocities quietly
        warnings.simplefilter("error")
        assert model.energy().has(*model.u_ind)


def test_jacobian_definitions_bound_errs_high(tmp_path):
    """The structural bound that lets the default options skip a Jacobian too large to
    build (codegen.algorithms.jacobian.definitions_bound) is at least the derivative program's
    definitions, and close to them, on a three-link chain."""
    from codegen.algorithms import jacobian as jac
    links = "".join(LINK.format(n) for n in ("base", "a", "b", "c"))
    model = from_urdf(write(tmp_path, links + joint("j1", "base", "a") + joint("j2", "a", "b")
                            + joint("j3", "b", "c").replace('xyz="0 1 0"', 'xyz="1 0 0"')))
    eom = GibbsAppellMethod(**model.kwargs).to_equations(constants=model.constants,
                                                        specifieds=model.specifieds)
    _, values = jac._values(eom)
    wrt = list(eom.q) + list(eom.u) + list(eom.specifieds)
    tangents = jac._Tangents(wrt)
    for symbol, expr in values.temporaries:
        tangents.define(symbol, expr)
    bound = jac.definitions_bound(values, wrt)
    # the entries found among the values (codegen.algorithms.jacobian._Tangents) it cannot see
    assert len(tangents.defs) <= bound <= 1.5 * len(tangents.defs)
    assert jac.jacobian_program(eom, limit=bound // 3) is None
