"""The second fault campaign (issue 49): wrong input of every kind a user gives, each a
clear error of an exact class that names the culprit, raised before any file is written;
never a silent NaN, a crash or a half-written file. One test per case (parametrized
cases are one each), beside the earlier campaigns of test_bad_input.py,
test_compiled_bad_input.py, test_faults.py and test_signals_bad_input.py, which these
do not repeat.

Classes: restitution checked at generate; mesh files that cannot be read; animate's
times; URDF files; outputs, events and control laws; impacts; flexible bodies; the
exports; the command line; sweeps.
"""
import subprocess
import sys

import numpy as np
import pytest
import sympy as sm
import sympy.physics.mechanics as me

import codegen
from codegen import GibbsAppellMethod, examples as ex, export_c, export_fmu, generate, sweep
from codegen.animation import Mesh, animate, urdf_shapes
from codegen.description.shapes import MeshError, read_mesh
from codegen.flexible import FlexibleBody, beam_modes, fe_modes
from codegen.robots import URDFError, from_urdf
from codegen.runtime.results import SimulationResult


def nothing_written(folder):
    return not any(folder.iterdir())


# -- models shared by the cases -------------------------------------------------------------

@pytest.fixture(scope="module")
def ball():
    """A particle over the floor y = 0 (formed once; every case is refused before C)."""
    y, v = me.dynamicsymbols("y v")
    m, g = sm.symbols("m g")
    N = me.ReferenceFrame("N")
    O = me.Point("O")
    O.set_vel(N, 0)
    P = O.locatenew("P", y * N.y)
    P.set_vel(N, v * N.y)
    ga = GibbsAppellMethod(N, [y], [v], kd_eqs=[v - y.diff()],
                           bodies=[me.Particle("b", P, m)], forcelist=[(P, -m * g * N.y)])
    return dict(ga=ga, y=y, v=v, N=N, P=P)


@pytest.fixture(scope="module")
def pushed():
    """A particle in the plane pushed by two inputs Fx and Fy (for control laws)."""
    x, y, vx, vy = me.dynamicsymbols("x y vx vy")
    Fx, Fy = me.dynamicsymbols("Fx Fy")
    m = sm.Symbol("m")
    N = me.ReferenceFrame("N")
    O = me.Point("O")
    O.set_vel(N, 0)
    P = O.locatenew("P", x * N.x + y * N.y)
    P.set_vel(N, vx * N.x + vy * N.y)
    ga = GibbsAppellMethod(N, [x, y], [vx, vy], kd_eqs=[vx - x.diff(), vy - y.diff()],
                           bodies=[me.Particle("b", P, m)],
                           forcelist=[(P, Fx * N.x + Fy * N.y)])
    return dict(ga=ga, x=x, y=y, Fx=Fx, Fy=Fy)


@pytest.fixture(scope="module")
def animated(tmp_path_factory):
    """A one-link pendulum on a cart compiled with its pose outputs, and a run of it."""
    model = ex.n_pendulum_on_cart(1)
    mod = codegen.animation.generate_animated(model, "campaign_pendulum",
                                              output_dir=tmp_path_factory.mktemp("campaign"),
                                              jacobian=False)
    p = mod.parameters(model.parameter_values)
    run = mod.simulate((0, 0.2), model.initial_state, p, [0.0], t_eval=np.linspace(0, 0.2, 5))
    assert run.success
    return dict(model=model, mod=mod, p=p, run=run)


def altered(run, **changes):
    """A copy of a run with some of its arrays replaced (as a user's editing would)."""
    fields = dict(t=run.t, x=run.x, states=run.states, status=run.status, message=run.message,
                  nsteps=run.nsteps, nrejected=run.nrejected, nfev=run.nfev, method=run.method,
                  outputs=run.outputs, events=run.events)
    fields.update(changes)
    return SimulationResult(**fields)


# -- 1. restitution, checked at generate ----------------------------------------------------

@pytest.mark.parametrize("restitution,message", [
    (1.5, r"impact 'floor': the restitution must be a number in \[0, 1\].*got 1\.5"),
    (-0.2, r"impact 'floor': the restitution must be a number in \[0, 1\].*got -0\.2"),
    (float("nan"), r"impact 'floor'.*restitution"),
    (sm.I / 2, r"impact 'floor': the restitution must be a number in \[0, 1\]"),
])
def test_restitution_out_of_range_or_not_finite_is_refused(ball, tmp_path, restitution,
                                                           message):
    with pytest.raises(ValueError, match=message):
        generate(ball["ga"], "bad_e", output_dir=tmp_path, events={"floor": ball["y"]},
                 impacts={"floor": (ball["P"], ball["N"].y, restitution)})
    assert nothing_written(tmp_path)


def test_restitution_that_is_no_number_is_refused(ball, tmp_path):
    """A word (here no constant of the model) and a list: each named with its impact."""
    with pytest.raises(ValueError, match=r"impact 'floor' \(restitution\) contains high, "
                                         r"which the model does not have"):
        generate(ball["ga"], "bad_e", output_dir=tmp_path, events={"floor": ball["y"]},
                 impacts={"floor": (ball["P"], ball["N"].y, "high")})
    with pytest.raises(TypeError, match=r"impact 'floor' \(restitution\) must be a scalar"):
        generate(ball["ga"], "bad_e", output_dir=tmp_path, events={"floor": ball["y"]},
                 impacts={"floor": (ball["P"], ball["N"].y, [0.5])})
    assert nothing_written(tmp_path)


# -- 2. mesh files that cannot be read name the file ------------------------------------------

TETRAHEDRON = "v 0 0 0\nv 0.1 0 0\nv 0 0.1 0\nv 0 0 0.1\nf 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n"


def binary_stl(triangles=4):
    records = np.zeros(triangles, dtype=[("n", "<f4", 3), ("v", "<f4", (3, 3)), ("a", "<u2")])
    records["v"] = np.random.default_rng(0).uniform(-1, 1, (triangles, 3, 3))
    return b"\0" * 80 + np.uint32(triangles).tobytes() + records.tobytes()


@pytest.mark.parametrize("name,content,message", [
    ("truncated.stl", binary_stl()[:-30],
     r"truncated\.stl: a binary STL whose header counts 4 triangles \(284 bytes\) has 254 "
     r"bytes: truncated"),
    ("solid_header.stl", b"solid part" + binary_stl()[10:-7],
     r"solid_header\.stl: a binary STL .* truncated"),
    ("stub.stl", b"\x00\x01", r"stub\.stl: 2 bytes: too short for an STL"),
    ("cut.stl", b"solid t\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\n"
                b"vertex 0 1",
     r"cut\.stl: vertex 2 is cut short"),
    ("two.obj", TETRAHEDRON.replace("v 0 0 0.1", "v 0 0").encode(),
     r"two\.obj: line 4 \('v 0 0'\): a vertex has 2 coordinates, not 3"),
    ("word.obj", TETRAHEDRON.replace("v 0 0 0.1", "v 0 0 up").encode(),
     r"word\.obj: line 4 \('v 0 0 up'\): could not convert string to float: 'up'"),
    ("zero.obj", TETRAHEDRON.replace("f 2 3 4", "f 0 3 4").encode(),
     r"zero\.obj: line 8 .*vertex 0 \(OBJ counts from 1\)"),
    ("garbage.dae", b"\x89PNG\r\n\x1a\n not a document", r"garbage\.dae: not valid COLLADA XML"),
    ("letters.dae", b'<COLLADA><library_geometries><geometry id="g"><mesh><source id="s">'
                    b'<float_array>0 0 zero</float_array></source><vertices id="v"><input '
                    b'semantic="POSITION" source="#s"/></vertices><triangles><input '
                    b'semantic="VERTEX" source="#v"/><p>0 1 2</p></triangles></mesh>'
                    b'</geometry></library_geometries><library_visual_scenes><visual_scene>'
                    b'<node><instance_geometry url="#g"/></node></visual_scene>'
                    b'</library_visual_scenes></COLLADA>',
     r"letters\.dae: could not convert string to float: 'zero'"),
    ("page.dae", b"<html><body>a web page</body></html>", r"page\.dae has no valid triangles"),
])
def test_unreadable_mesh_is_named(tmp_path, name, content, message):
    (tmp_path / name).write_bytes(content)
    with pytest.raises(MeshError, match=message):
        read_mesh(tmp_path / name)


def test_missing_mesh_file_is_named(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"mesh file .*nowhere\.stl not found"):
        read_mesh(tmp_path / "nowhere.stl")


def test_an_unreadable_mesh_stops_animate_before_writing(animated, tmp_path):
    (tmp_path / "broken.stl").write_bytes(binary_stl()[:-1])
    page = tmp_path / "page.html"
    with pytest.raises(MeshError, match=r"broken\.stl: a binary STL"):
        animate(animated["mod"], animated["run"], page,
                shapes=[Mesh("A1", "P1", file=tmp_path / "broken.stl")])
    assert not page.exists() and [p.name for p in tmp_path.iterdir()] == ["broken.stl"]


# -- 3. animate's times and shapes, refused before anything is written -----------------------

def refused(animated, tmp_path, run, exc, message):
    page = tmp_path / "page.html"
    with pytest.raises(exc, match=message):
        animate(animated["mod"], run, page)
    with pytest.raises(exc, match=message):
        run.animate(page)                                # the same checks without the model
    assert nothing_written(tmp_path)


def test_animate_refuses_a_time_that_is_not_finite(animated, tmp_path):
    t = animated["run"].t.copy()
    t[2] = np.nan
    refused(animated, tmp_path, altered(animated["run"], t=t), ValueError,
            r"the run's time t\[2\] = nan is not finite")


def test_animate_refuses_times_that_go_back(animated, tmp_path):
    t = animated["run"].t.copy()
    t[3], t[4] = t[4], t[3]
    refused(animated, tmp_path, altered(animated["run"], t=t), ValueError,
            r"the run's times go back at t\[4\] = 0\.15000000000000002, after t\[3\] = 0\.2")


def test_animate_refuses_states_of_another_length(animated, tmp_path):
    run = altered(animated["run"], x=animated["run"].x[:-1])
    refused(animated, tmp_path, run, ValueError,
            r"the run has 5 times but 4 rows of states")


def test_animate_refuses_an_output_of_another_length(animated, tmp_path):
    run = animated["run"]
    name = next(iter(run.outputs))
    outputs = dict(run.outputs, **{name: run.outputs[name][:2]})
    refused(animated, tmp_path, altered(run, outputs=outputs), ValueError,
            rf"the run has 5 times but 2 rows of output '{name}'")


def test_animate_refuses_times_that_are_not_a_vector(animated, tmp_path):
    run = altered(animated["run"], t=animated["run"].t[:, None])
    refused(animated, tmp_path, run, ValueError, r"the run's times must be 1-D, got shape \(5, 1\)")


# -- 4. URDF files ------------------------------------------------------------------------------

LINK = ('<link name="{0}"><inertial><origin xyz="0.1 0 0"/><mass value="1"/>'
        '<inertia ixx="0.01" iyy="0.02" izz="0.02" ixy="0" iyz="0" ixz="0"/></inertial></link>')
JOINT = ('<joint name="{0}" type="revolute"><parent link="{1}"/><child link="{2}"/>'
         '<origin xyz="0 0 0.5"/><axis xyz="0 1 0"/><dynamics damping="0.1"/>'
         '<limit lower="-3" upper="3" effort="10" velocity="5"/></joint>')
ARM = LINK.format("a") + LINK.format("b") + JOINT.format("j", "a", "b")


def urdf(tmp_path, body, robot='<robot name="r">', close="</robot>"):
    path = tmp_path / "robot.urdf"
    path.write_text(f'<?xml version="1.0"?>\n{robot}\n{body}\n{close}\n')
    return path


@pytest.mark.parametrize("body,message", [
    (ARM.replace('<mass value="1"/>', '<mass value="nan"/>', 1),
     r"link 'a': value='nan' is not 1 finite number"),
    (ARM.replace('ixx="0.01"', 'ixx="inf"', 1), r"link 'a': ixx='inf' is not 1 finite number"),
    (ARM.replace('<origin xyz="0 0 0.5"/>', '<origin xyz="0 nan 0.5"/>'),
     r"joint 'j': xyz='0 nan 0.5' is not 3 finite number"),
    (ARM.replace('<axis xyz="0 1 0"/>', '<axis xyz="0 1"/>'),
     r"joint 'j': xyz='0 1' is not 3 finite number"),
    (ARM.replace('damping="0.1"', 'damping="-0.1"'), r"joint 'j': damping -0\.1 is negative"),
    (ARM + LINK.format("b"), r"link 'b': is defined twice"),
    (ARM + LINK.format("c") + JOINT.format("j", "b", "c"), r"joint 'j': is defined twice"),
    (LINK.format("a") + JOINT.format("j", "a", "a"), r"joint 'j': joins link 'a' to itself"),
    (LINK.format("a") + LINK.format("b") + JOINT.format("j1", "a", "b")
     + JOINT.format("j2", "b", "a"), r"every link is some joint's child"),
    (ARM.replace('<parent link="a"/>', '<parent/>'), r"joint 'j': has no <parent link=\.\.\.>"),
    (ARM.replace(' type="revolute"', ''), r"joint 'j': has no type"),
    (ARM + LINK.format("c") + '<joint name="k" type="fixed"><parent link="b"/>'
     '<child link="c"/></joint>' + LINK.format("d")
     + JOINT.format("m", "c", "d").replace("</joint>", '<mimic joint="k"/></joint>'),
     r"joint 'm': mimics joint 'k', which is fixed"),
    (ARM + LINK.format("c") + JOINT.format("k", "b", "c").replace(
        "</joint>", '<mimic joint="j" multiplier="nan"/></joint>'),
     r"joint 'k': multiplier='nan' is not 1 finite number"),
    (ARM.replace("</link>", '<visual><geometry><capsule radius="1" length="2"/></geometry>'
                            '</visual></link>', 1),
     r"link 'a', visual 0: unknown geometry <capsule>"),
    (ARM.replace("</link>", '<visual><geometry><box size="1 1 1"/></geometry><material '
                            'name="red"><color rgba="1 0 0"/></material></visual></link>', 1),
     r"link 'a', visual 0: rgba='1 0 0' is not 4 finite number"),
    (ARM.replace("</link>", '<visual><geometry><mesh filename="$(find r)/m.stl"/></geometry>'
                            '</visual></link>', 1),
     r"<mesh filename='\$\(find r\)/m\.stl'> is a xacro expression; expand it first: xacro"),
])
def test_bad_urdf_is_named(tmp_path, body, message):
    path = urdf(tmp_path, body)
    with pytest.raises(URDFError, match=message) as info:
        from_urdf(path)
    assert str(path) in str(info.value)


def test_urdf_whose_root_is_not_a_robot(tmp_path):
    path = urdf(tmp_path, ARM, robot='<sdf version="1.6">', close="</sdf>")
    with pytest.raises(URDFError, match=r"robot\.urdf: the root element is <sdf>, not <robot>"):
        from_urdf(path)


def test_urdf_path_that_is_a_folder(tmp_path):
    with pytest.raises(URDFError, match=rf"{tmp_path}: cannot be read"):
        from_urdf(tmp_path)


def test_urdf_mesh_that_is_missing_is_named_and_left_out(tmp_path):
    """A visual's mesh that is not found: a warning that names the link and the file; the
    model and its other visuals stand."""
    path = urdf(tmp_path, ARM.replace(
        "</link>", '<visual><geometry><mesh filename="package://r/meshes/gone.stl"/></geometry>'
                   '</visual><visual><geometry><box size="0.1 0.1 0.1"/></geometry></visual>'
                   '</link>', 1))
    model = from_urdf(path)
    with pytest.warns(UserWarning, match=r"link 'a': mesh 'package://r/meshes/gone\.stl' left "
                                         r"out \(not found\)"):
        shapes = urdf_shapes(model, mesh_dirs=[tmp_path])
    assert [type(s).__name__ for s in shapes] == ["Box"]


def test_urdf_mesh_that_is_damaged_is_named_when_drawn(tmp_path):
    (tmp_path / "meshes").mkdir()
    (tmp_path / "meshes" / "link.stl").write_bytes(binary_stl()[:-3])
    path = urdf(tmp_path, ARM.replace(
        "</link>", '<visual><geometry><mesh filename="package://r/meshes/link.stl"/></geometry>'
                   '</visual></link>', 1))
    (shape,) = urdf_shapes(from_urdf(path), mesh_dirs=[tmp_path])
    with pytest.raises(MeshError, match=r"meshes/link\.stl: a binary STL .* truncated"):
        shape.geometry()


# -- 5. outputs, events and control laws ------------------------------------------------------

@pytest.mark.parametrize("kind,value,message", [
    ("outputs", sm.nan, r"output 'bad' is not finite \(nan\)"),
    ("outputs", float("inf"), r"output 'bad' is not finite \(y\(t\) \+ oo\)"),
    ("events", "zoo", r"event 'bad' is not finite \(zoo\*y\(t\)\)"),
])
def test_a_signal_that_is_never_finite_is_refused(ball, tmp_path, kind, value, message):
    """Compiled, each would be NaN at every call and end runs blaming the equations."""
    expr = ball["y"] + value if not isinstance(value, str) else sm.sympify(value) * ball["y"]
    with pytest.raises(ValueError, match=message):
        generate(ball["ga"], "never", output_dir=tmp_path, **{kind: {"bad": expr}})
    assert nothing_written(tmp_path)


def test_an_output_given_as_a_word_is_no_ready_output(ball, tmp_path):
    with pytest.raises(ValueError, match=r"output 'h': 'height' is not a ready output "
                                         r"\(kinetic_energy, .*give an expression instead"):
        generate(ball["ga"], "word", output_dir=tmp_path, outputs={"h": "height"})


def test_outputs_must_be_a_dict(ball, tmp_path):
    with pytest.raises(TypeError, match=r"outputs must be a dict \{name: \.\.\.\}, got list"):
        generate(ball["ga"], "listed", output_dir=tmp_path, outputs=[ball["y"]])


def test_an_event_must_be_scalar(ball, tmp_path):
    with pytest.raises(TypeError, match=r"event 'hit' must be a scalar SymPy expression"):
        generate(ball["ga"], "matrix_event", output_dir=tmp_path,
                 events={"hit": sm.Matrix([ball["y"], ball["v"]])})


def test_an_event_name_that_is_no_identifier(ball, tmp_path):
    with pytest.raises(ValueError, match=r"event name 'hit floor' must be a Python identifier"):
        generate(ball["ga"], "spaced", output_dir=tmp_path, events={"hit floor": ball["y"]})


def test_a_control_law_with_an_unknown_symbol(pushed, tmp_path):
    with pytest.raises(ValueError, match=r"control law of Fx contains k_p, which the model does "
                                         r"not have"):
        generate(pushed["ga"], "ctl", output_dir=tmp_path,
                 control={"Fx": -sm.Symbol("k_p") * pushed["x"]})


def test_control_laws_that_feed_each_other(pushed, tmp_path):
    with pytest.raises(ValueError, match=r"control law of Fx uses the controlled input Fy: an "
                                         r"algebraic loop"):
        generate(pushed["ga"], "loop", output_dir=tmp_path,
                 control={pushed["Fx"]: -pushed["Fy"], pushed["Fy"]: -pushed["y"]})


def test_a_control_law_that_is_not_finite(pushed, tmp_path):
    with pytest.raises(ValueError, match=r"control law of Fy is not finite \(nan\)"):
        generate(pushed["ga"], "ctl_nan", output_dir=tmp_path, control={"Fy": sm.nan})


def test_a_control_law_that_is_a_list(pushed, tmp_path):
    with pytest.raises(TypeError, match=r"control law of Fx must be a scalar SymPy expression"):
        generate(pushed["ga"], "ctl_list", output_dir=tmp_path, control={"Fx": [1.0, 2.0]})


# -- 6. impacts ---------------------------------------------------------------------------------

def test_an_impact_whose_point_is_not_a_point(ball, tmp_path):
    with pytest.raises(TypeError, match=r"impact 'floor': the contact point must be a "
                                        r"sympy.physics.vector Point, got 'P'"):
        generate(ball["ga"], "imp", output_dir=tmp_path, events={"floor": ball["y"]},
                 impacts={"floor": ("P", ball["N"].y, 0.5)})


def test_an_impact_of_two_parts(ball, tmp_path):
    with pytest.raises(TypeError, match=r"impact 'floor' must be \(point, normal or \[normals\], "
                                        r"restitution\)"):
        generate(ball["ga"], "imp", output_dir=tmp_path, events={"floor": ball["y"]},
                 impacts={"floor": (ball["P"], ball["N"].y)})


def test_an_impact_normal_that_is_not_a_vector(ball, tmp_path):
    with pytest.raises(TypeError, match=r"impact 'floor': the normal must be a Vector"):
        generate(ball["ga"], "imp", output_dir=tmp_path, events={"floor": ball["y"]},
                 impacts={"floor": (ball["P"], (0, 1, 0), 0.5)})


def test_an_impact_on_a_model_with_run_time_constraints(tmp_path):
    bar = ex.four_bar()
    ga = GibbsAppellMethod(**bar.kwargs)
    tip = bar.bodies[-1].masscenter
    with pytest.raises(ValueError, match=r"impact 'stop': impacts on a model with run-time "
                                         r"constraints are not supported"):
        generate(ga, "bar_impact", output_dir=tmp_path, events={"stop": bar.q_ind[0]},
                 impacts={"stop": (tip, bar.frame.y, 0.5)})
    assert nothing_written(tmp_path)


# -- 7. flexible bodies -------------------------------------------------------------------------

@pytest.fixture
def beam_parts():
    N = me.ReferenceFrame("N")
    O = me.Point("O")
    O.set_vel(N, 0)
    return N, O, beam_modes(1.0, 1.0, 1.0, 2), me.dynamicsymbols("eta1:3"), \
        me.dynamicsymbols("zeta1:3")


def test_flexible_body_frame_that_is_not_a_frame(beam_parts):
    N, O, modes, eta, zeta = beam_parts
    with pytest.raises(TypeError, match=r"the frame of flexible body 'blade' is 'B', not a "
                                        r"ReferenceFrame"):
        FlexibleBody("blade", "B", O, modes, eta, zeta)


def test_flexible_body_modal_coordinates_twice(beam_parts):
    N, O, modes, eta, zeta = beam_parts
    with pytest.raises(ValueError, match=r"the modal coordinates are not distinct"):
        FlexibleBody("blade", N, O, modes, [eta[0], eta[0]], zeta)


def test_flexible_body_stiffness_that_is_not_finite(beam_parts):
    N, O, modes, eta, zeta = beam_parts
    with pytest.raises(ValueError, match=r"the modal stiffness of blade has non-finite entries"):
        FlexibleBody("blade", N, O, modes, eta, zeta, stiffness=[[1.0, 0.0], [0.0, np.nan]])


def test_flexible_body_constants_that_are_not_the_beams(beam_parts):
    N, O, modes, eta, zeta = beam_parts
    with pytest.raises(ValueError, match=r"flexible body 'blade': constants must name L, EI and "
                                         r"rho_A, got \['E', 'L', 'rho_A'\]"):
        FlexibleBody("blade", N, O, modes, eta, zeta, constants=dict(L=1, E=2, rho_A=3))


def test_flexible_body_gravity_that_is_not_a_vector(beam_parts):
    N, O, modes, eta, zeta = beam_parts
    with pytest.raises(TypeError, match=r"the gravity of flexible body 'blade' is 9\.81, not a "
                                        r"Vector"):
        FlexibleBody("blade", N, O, modes, eta, zeta, gravity=9.81)


def test_beam_without_modes():
    with pytest.raises(ValueError, match=r"n_modes must be a positive integer, got 0"):
        beam_modes(1.0, 1.0, 1.0, 0)


def test_node_data_with_masses_for_other_nodes():
    with pytest.raises(ValueError, match=r"2 node masses for 3 node positions"):
        fe_modes(np.eye(3), [1.0, 1.0], np.ones((3, 3, 1)), np.eye(1),
                 geometric_stiffening=False)


# -- 8. the exports -------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def pendulum_ga():
    return GibbsAppellMethod(**ex.n_pendulum_on_cart(1).kwargs)


@pytest.mark.parametrize("name,message", [
    ("1pendulum", r"model name: '1pendulum' is not a C identifier"),
    ("int", r"model name: 'int' is a C/C\+\+ keyword"),
])
def test_export_c_with_a_name_that_is_no_c_identifier(pendulum_ga, tmp_path, name, message):
    with pytest.raises(ValueError, match=message):
        export_c(pendulum_ga, name, tmp_path)
    assert nothing_written(tmp_path)


def test_export_c_into_a_folder_that_is_a_file(pendulum_ga, tmp_path):
    blocker = tmp_path / "taken"
    blocker.write_text("a file")
    with pytest.raises(OSError, match=rf"cannot create the output folder {blocker}"):
        export_c(pendulum_ga, "pendulum", blocker)
    assert blocker.read_text() == "a file"


def test_export_fmu_with_a_name_that_is_no_c_identifier(pendulum_ga, tmp_path):
    with pytest.raises(ValueError, match=r"model name: 'my-pendulum' is not a C identifier"):
        export_fmu(pendulum_ga, "my-pendulum", tmp_path)
    assert nothing_written(tmp_path)


def test_export_fmu_start_value_of_no_variable(pendulum_ga, tmp_path):
    with pytest.raises(ValueError, match=r"start_values names \['mass'\], which are neither "
                                         r"states, constants nor specifieds"):
        export_fmu(pendulum_ga, "sv", tmp_path, start_values={"mass": 2.0})
    assert nothing_written(tmp_path)


@pytest.mark.parametrize("kw,message", [
    (dict(method="euler"), r"method must be one of .*got 'euler'"),
    (dict(method="rk4"), r"method 'rk4' needs a positive, finite step dt, got None"),
    (dict(tolerance=0.0), r"tolerance must be a number in \(0, 1\), got 0\.0"),
])
def test_export_fmu_integrator_settings(pendulum_ga, tmp_path, kw, message):
    with pytest.raises(ValueError, match=message):
        export_fmu(pendulum_ga, "cs", tmp_path, **kw)
    assert nothing_written(tmp_path)


def test_export_fmu_into_a_folder_that_is_a_file(pendulum_ga, tmp_path):
    blocker = tmp_path / "taken"
    blocker.write_text("a file")
    with pytest.raises(OSError, match=rf"cannot create the output folder {blocker}"):
        export_fmu(pendulum_ga, "pendulum", blocker)
    assert [p.name for p in tmp_path.iterdir()] == ["taken"]


# -- 9. the command line ---------------------------------------------------------------------------

def cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "codegen", *args], capture_output=True,
                          text=True, timeout=300, cwd=cwd)


@pytest.mark.parametrize("args,message", [
    (["build", "pendulum", "--method", "euler"], "argument --method: invalid choice: 'euler'"),
    (["build", "pendulum", "--fps", "0"], "must be a positive, finite number of frames per "
                                          "second, got '0'"),
    (["animate", "pendulum", "--fps", "fast"], "must be a positive, finite number of frames "
                                               "per second, got 'fast'"),
    ([], "the following arguments are required: command"),
])
def test_cli_bad_arguments_are_refused_before_any_work(tmp_path, args, message):
    out = cli(*args, cwd=tmp_path)
    assert out.returncode == 2 and message in out.stderr and "Traceback" not in out.stderr
    assert nothing_written(tmp_path)


def test_cli_file_without_a_model(tmp_path):
    f = tmp_path / "empty.py"
    f.write_text("x = 1\n")
    out = cli("build", str(f), "--out", str(tmp_path / "out"))
    assert out.returncode != 0 and "Traceback" not in out.stderr
    assert f"{f} must define model() returning codegen.examples.Model" in out.stderr
    assert not (tmp_path / "out").exists()


def test_cli_output_folder_that_is_a_file(tmp_path):
    blocker = tmp_path / "taken"
    blocker.write_text("a file")
    out = cli("build", "dumbbell", "--out", str(blocker))
    assert out.returncode != 0 and "Traceback" not in out.stderr
    assert f"dumbbell: cannot create the output folder {blocker}/dumbbell" in out.stderr
    assert blocker.read_text() == "a file"


def test_cli_model_whose_name_is_no_c_identifier(tmp_path):
    f = tmp_path / "named.py"
    f.write_text("from codegen import examples\n\ndef model():\n    m = examples.dumbbell()\n"
                 "    m.name = 'my-dumbbell'\n    return m\n")
    out = cli("build", str(f), "--out", str(tmp_path / "out"))
    assert out.returncode != 0 and "Traceback" not in out.stderr
    assert "my-dumbbell: model name: 'my-dumbbell' is not a C identifier" in out.stderr


# -- 10. sweeps' arguments -------------------------------------------------------------------------

@pytest.fixture
def swept(animated):
    pytest.importorskip("distributed")
    mod = animated["mod"]
    return mod, np.tile(animated["model"].initial_state, (3, 1)), animated["p"]


def test_sweep_initial_states_of_another_width(swept):
    mod, X0, p = swept
    with pytest.raises(ValueError, match=rf"X0 must have {mod.nx} columns"):
        sweep(mod, (0, 1), X0[:, :-1], p, [0.0], client="tcp://127.0.0.1:1")


def test_sweep_without_the_constants(swept):
    mod, X0, _ = swept
    with pytest.raises(ValueError, match=r"campaign_pendulum: P \(the constants .*\) is required"):
        sweep(mod, (0, 1), X0, None, [0.0], client="tcp://127.0.0.1:1")


def test_sweep_with_an_unknown_method(swept):
    mod, X0, p = swept
    with pytest.raises(ValueError, match=r"method .*'euler'"):
        sweep(mod, (0, 1), X0, p, [0.0], method="euler", client="tcp://127.0.0.1:1")


def test_sweep_with_an_unknown_reduction(swept):
    mod, X0, p = swept
    with pytest.raises(ValueError, match=r"reduce must be None, one of .*got 'median'"):
        sweep(mod, (0, 1), X0, p, [0.0], reduce="median", client="tcp://127.0.0.1:1")


def test_sweep_with_a_deadline_in_the_past(swept):
    mod, X0, p = swept
    with pytest.raises(ValueError, match=r"deadline must be a positive number of seconds, got -1"):
        sweep(mod, (0, 1), X0, p, [0.0], deadline=-1, client="tcp://127.0.0.1:1")
