"""The animation page in a real browser (headless Chromium, WebGL on SwiftShader): it
loads without JavaScript errors, draws the rolling disk where its state says (its contact
point projected through the page's camera), changes pixels only where bodies moved, draws
a flexible beam deformed where its modal coordinates say, and stays small for the 12-body
humanoid; bad input is refused before anything is written."""
import os
import stat

import numpy as np
import pytest

import codegen
from codegen import GibbsAppellMethod, examples as ex, generate
from codegen.animation import Box, Cylinder, Mesh, Sphere, generate_animated, pose_outputs
from codegen.animation.browser import Browser, _presented, chromium
from codegen.description.shapes import equivalent_box, read_mesh

FPS = 60
RED = "#ff0000"
BEAM_SPIN = dict(Omega=1.0, T=2.0)         # spin_up_beam's final rate and spin-up time


@pytest.fixture(scope="module")
def animated(tmp_path_factory):
    """The animated models, each compiled on first use (once per session), and a run."""
    out, made = tmp_path_factory.mktemp("animated"), {}

    def get(name):
        if name in made:
            return made[name]
        if name == "disk":
            model = ex.rolling_disk_contact()
            mod = generate_animated(model, "anim_disk", output_dir=out,
                                    outputs={"T": "kinetic_energy"})
            seconds = 2.0
        elif name == "pendulum":
            model = ex.n_pendulum_on_cart(2)
            mod = generate_animated(model, "anim_pendulum", output_dir=out)
            seconds = 1.0
        elif name == "humanoid":
            model = ex.humanoid()
            mod = generate_animated(model, "anim_humanoid", output_dir=out)
            seconds = 10.0
        elif name == "beam":              # a quick spin-up: the tip deflects about a metre
            model = ex.spin_up_beam(2)
            model.parameter_values.update(BEAM_SPIN)
            mod = generate_animated(model, "anim_beam", output_dir=out)
            seconds = 2.0
        p = mod.parameters(model.parameter_values)
        r = np.zeros(len(mod.specifieds)) if mod.specifieds else None
        run = mod.simulate((0, seconds), model.initial_state, p, r, rtol=1e-9, atol=1e-9,
                           t_eval=np.linspace(0, seconds, int(round(seconds * FPS)) + 1),
                           method="bdf" if model.stiff else "dopri5")
        assert run.success, run.message
        made[name] = dict(model=model, mod=mod, run=run, p=p, dir=out)
        return made[name]
    return get


def disk_geometry(x, r):
    """The rolling disk's centre, contact point and plane axes from its state (x, y, phi,
    theta, psi, ...), by Greenwood's triad: independent of the page's code."""
    x_, y_, phi, theta = x[:4]
    cz, sz, cx, sx = np.cos(phi), np.sin(phi), np.cos(theta), np.sin(theta)
    Bx = np.array([cz, sz, 0.0])
    By = np.array([-sz * cx, cz * cx, sx])
    contact = np.array([x_, y_, 0.0])
    return contact + r * By, contact, Bx, By


def project(camera, points, size):
    """Pixel coordinates of world points through the page's camera, for an image of
    size (w, h) (the projection's aspect taken from the image)."""
    V = np.array(camera["view"]).reshape(4, 4).T          # three.js: column-major
    P = np.array(camera["projection"]).reshape(4, 4).T
    w, h = size
    P[0, 0] = P[1, 1] * h / w
    X = np.c_[np.atleast_2d(points), np.ones(len(np.atleast_2d(points)))]
    clip = (P @ V @ X.T).T
    ndc = clip[:, :3] / clip[:, 3:]
    return np.c_[(ndc[:, 0] + 1) / 2 * w, (1 - ndc[:, 1]) / 2 * h]


def image(png):
    PIL = pytest.importorskip("PIL.Image")
    return np.asarray(PIL.open(png).convert("RGB")).astype(int)


def disk_page(animated, path, more=(), **kw):
    d = animated("disk")
    return codegen.animate(d["mod"], d["run"], path,
                           shapes=[Cylinder("D", "C", d["p"][d["mod"].constants.index("r")],
                                            0.01, color=RED), *more], **kw)


def test_equivalent_box_has_the_bodys_principal_moments():
    rng = np.random.default_rng(3)
    A = rng.normal(size=(3, 3))
    sides = np.array([0.3, 0.5, 0.9])
    Q = np.linalg.qr(A)[0]
    m = 2.5
    inertia = Q @ np.diag(m / 12 * np.array([sides[1]**2 + sides[2]**2, sides[0]**2 + sides[2]**2,
                                             sides[0]**2 + sides[1]**2])) @ Q.T
    got, axes = equivalent_box(m, inertia)
    assert np.allclose(sorted(got), sorted(sides), rtol=1e-12)
    assert np.isclose(np.linalg.det(axes), 1.0)
    back = axes @ np.diag(m / 12 * np.array([got[1]**2 + got[2]**2, got[0]**2 + got[2]**2,
                                             got[0]**2 + got[1]**2])) @ axes.T
    assert np.allclose(back, inertia, atol=1e-14)
    disk, _ = equivalent_box(2.0, np.diag([0.045, 0.045, 0.09]))     # a thin disk: a plate
    assert np.allclose(disk[:2], np.sqrt(3) * 0.3) and disk[2] == pytest.approx(0.02 * disk[0])


def test_poses_from_c_equal_the_state(animated):
    """The page's poses (composed from the compiled relative outputs) against the disk's
    state by Greenwood's triad."""
    from codegen.animation.page import Scene
    d = animated("disk")
    run, r = d["run"], d["p"][d["mod"].constants.index("r")]
    scene = Scene(run.t, run.outputs, "disk")
    for k in (0, len(run.t) // 2, len(run.t) - 1):
        centre, _, Bx, By = disk_geometry(run.x[k], r)
        assert np.abs(scene.p["C"][k] - centre).max() < 1e-12
        assert np.abs(scene.R["D"][k][:, 2] - np.cross(Bx, By)).max() < 1e-12   # the axis


def test_a_point_located_only_by_its_velocity_moves_by_it(tmp_path):
    """examples.rolling_disk has no contact coordinates: its centre starts at its anchor
    r B.y and moves by its compiled velocity, integrated over the run's times; its height
    stays r sin(theta) to the trapezoidal rule's error."""
    from codegen.animation.page import Scene
    model = ex.rolling_disk()
    mod = generate_animated(model, "anim_disk_free", output_dir=tmp_path)
    assert "anim_v__C" in mod.output_names and "anim_a__C" in mod.output_names
    p = mod.parameters(model.parameter_values)
    run = mod.simulate((0, 2), model.initial_state, p, rtol=1e-10, atol=1e-10,
                       t_eval=np.linspace(0, 2, 241))
    C = Scene(run.t, run.outputs, "disk").p["C"]
    r, theta = model.parameter_values["r"], run["theta"]
    assert np.abs(C[:, 2] - r * np.sin(theta)).max() < 1e-3
    assert np.abs(C[0] - [0, r * np.cos(theta[0]), r * np.sin(theta[0])]).max() < 1e-15
    assert np.ptp(C[:, 0]) > 0.1                                      # it rolls away


def test_points_off_the_origin_are_located_from_a_drawn_root():
    """A free body whose centre is known by its velocity (no fixed point) carries a
    particle: the particle is drawn from the centre (its relative position), not from a
    velocity of its own, so the two stay together."""
    import sympy.physics.mechanics as me
    N = me.ReferenceFrame("N")
    a, v, w = me.dynamicsymbols("a v w")
    H = N.orientnew("H", "Axis", (a, N.z))
    H.set_ang_vel(N, w * N.z)
    No, Ho = me.Point("No"), me.Point("Ho")
    Ho.set_pos(No, me.dynamicsymbols("x") * N.x)
    Ho.set_vel(N, v * N.x)
    P = Ho.locatenew("P", 0.5 * H.y)
    P.v2pt_theory(Ho, N, H)
    hub = me.RigidBody("hub", Ho, H, 1.0, (me.inertia(H, 1, 1, 1), Ho))
    out = pose_outputs(me.KanesMethod(N, [a], [w], kd_eqs=[a.diff() - w],
                                      bodies=[hub, me.Particle("tip", P, 0.1)]), N)
    assert "anim_d__P__Ho__H" in out and "anim_v__Ho" in out and "anim_v__P" not in out


@pytest.fixture(scope="module")
def browser():
    if chromium() is None:
        pytest.skip("Chromium is not installed")
    with Browser((800, 600)) as b:
        yield b


TETRAHEDRON = "v 0 0 0\nv 0.1 0 0\nv 0 0.1 0\nv 0 0 0.1\nf 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n"


def test_meshes_are_read_from_obj_and_stl(tmp_path):
    obj = tmp_path / "t.obj"
    obj.write_text(TETRAHEDRON)
    v, f = read_mesh(obj)
    assert v.shape == (4, 3) and f.shape == (4, 3) and f.max() == 3
    tri = v[f]                                       # the same triangles as a binary STL
    normals = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
    records = np.zeros(4, dtype=[("n", "<f4", 3), ("v", "<f4", (3, 3)), ("a", "<u2")])
    records["n"], records["v"] = normals, tri
    (tmp_path / "t.stl").write_bytes(b"\0" * 80 + np.uint32(4).tobytes() + records.tobytes())
    v2, f2 = read_mesh(tmp_path / "t.stl")
    assert np.allclose(v2[f2], tri, atol=1e-7)
    ascii_stl = "solid t\n" + "".join(
        "facet normal 0 0 0\nouter loop\n" + "".join(f"vertex {a} {b} {c}\n" for a, b, c in t)
        + "endloop\nendfacet\n" for t in tri) + "endsolid t\n"
    (tmp_path / "a.stl").write_text(ascii_stl)
    v3, f3 = read_mesh(tmp_path / "a.stl")
    assert np.allclose(v3[f3], tri)
    (tmp_path / "bad.obj").write_text("v 0 0 0\nf 1 2 3\n")
    with pytest.raises(ValueError, match="no valid triangles"):
        read_mesh(tmp_path / "bad.obj")


DAE = """<?xml version="1.0"?>
<COLLADA xmlns="http://www.collada.org/2005/11/COLLADASchema" version="1.4.1">
<asset><unit meter="0.001"/><up_axis>Y_UP</up_axis></asset>
<library_geometries><geometry id="g"><mesh>
 <source id="g-pos"><float_array id="g-arr" count="15">0 0 0 1000 0 0 1000 1000 0 0 1000 0
  5 5 5</float_array><technique_common><accessor source="#g-arr" count="5" stride="3"/>
  </technique_common></source>
 <source id="g-nrm"><float_array id="g-narr" count="3">0 0 1</float_array></source>
 <vertices id="g-v"><input semantic="POSITION" source="#g-pos"/></vertices>
 <polylist count="1"><input semantic="VERTEX" source="#g-v" offset="0"/>
  <input semantic="NORMAL" source="#g-nrm" offset="1"/><vcount>4</vcount>
  <p>0 0 1 0 2 0 3 0</p></polylist>
</mesh></geometry></library_geometries>
<library_nodes><node id="up"><translate>0 0 2000</translate><instance_geometry url="#g"/>
</node></library_nodes>
<library_visual_scenes><visual_scene id="s"><node><rotate>0 0 1 90</rotate><scale>2 2 2</scale>
 <instance_geometry url="#g"/><node><instance_node url="#up"/></node></node>
</visual_scene></library_visual_scenes>
<scene><instance_visual_scene url="#s"/></scene></COLLADA>"""


def triangles(vertices, faces):
    """Each triangle's centroid and area vector (its corners' cross product, so its
    facing): the same whichever corner is listed first."""
    a, b, c = np.moveaxis(np.asarray(vertices, float)[faces], 1, 0)
    return np.c_[(a + b + c) / 3, np.cross(b - a, c - a)]


def same_triangles(v1, f1, v2, f2, tol):
    """Each triangle of one mesh is a triangle of the other, facing the same way."""
    from scipy.spatial import cKDTree
    t1, t2 = triangles(v1, f1), triangles(v2, f2)
    return len(t1) == len(t2) and cKDTree(t2).query(t1)[0].max() < tol \
        and cKDTree(t1).query(t2)[0].max() < tol


def test_collada_meshes_are_read_through_their_nodes(tmp_path):
    """A .dae in millimetres: a quad (a polylist with normals interleaved) instanced by a
    turned and scaled node and again through a nested instance_node lifted 2 m; the
    unused point is dropped, up_axis is not applied (robot meshes are in link axes)."""
    (tmp_path / "q.dae").write_text(DAE)
    v, f = read_mesh(tmp_path / "q.dae")
    quad = np.array([[0, 0, 0], [0, 2, 0], [-2, 2, 0], [-2, 0, 0]], float)   # Rz(90°) 2 x
    want = np.array([[q[0], q[1], q[2], q[0], q[2], q[3]] for q in (quad, quad + [0, 0, 4])])
    assert len(v) == 8 and f.shape == (4, 3)
    assert same_triangles(v, f, want.reshape(-1, 3), np.arange(12).reshape(4, 3), 1e-12)
    (tmp_path / "bad.dae").write_text("<COLLADA><asset>")
    with pytest.raises(ValueError, match="not valid COLLADA"):
        read_mesh(tmp_path / "bad.dae")


def test_collada_meshes_equal_assimps(tmp_path):
    """Real robot meshes (example-robot-data: a Blender Z_UP file with node matrices and a
    MeshLab Y_UP one) against coal's loader (assimp): the same triangles."""
    coal = pytest.importorskip("coal")
    from codegen.robots.catalog import example_robot_data
    root = example_robot_data()
    if root is None:
        pytest.skip("example-robot-data is not installed")
    for name in ("panda_description/meshes/visual/finger.dae",
                 "go1_description/meshes/hip.dae"):
        path = os.path.join(root, name)
        v, f = read_mesh(path)
        model = coal.MeshLoader().load(path)
        cv = np.array(model.vertices())
        cf = np.array([[model.tri_indices(k)[i] for i in range(3)]
                       for k in range(model.num_tris)])
        assert same_triangles(v, f, cv, cf, 1e-6), name


def test_page_loads_without_errors_and_shows_the_moment(animated, browser, tmp_path):
    d = animated("disk")
    (tmp_path / "t.obj").write_text(TETRAHEDRON)
    page = disk_page(animated, tmp_path / "disk.html", outputs=["T"], traces=["C"], frames=True,
                     more=[Mesh("B", "P", file=tmp_path / "t.obj", color="#208020")])
    state = browser.open(page, "t=0.75")
    assert state["errors"] == "" and state["ready"]
    assert state["time"] == pytest.approx(0.75) and state["frames"] == len(d["run"].t)
    assert state["objects"] == 3                 # the cylinder, the mesh and the frame's axes
    assert browser.show("t=1.5")["time"] == pytest.approx(1.5)
    again = disk_page(animated, tmp_path / "again.html", outputs=["T"], traces=["C"], frames=True,
                      more=[Mesh("B", "P", file=tmp_path / "t.obj", color="#208020")])
    assert again.read_bytes() == page.read_bytes()                # deterministic


def test_contact_point_is_drawn_where_the_state_says(animated, browser, tmp_path):
    """At t = 0 the last red pixel on the line from the disk's projected centre through
    its projected contact point is the contact point's pixel."""
    d = animated("disk")
    page = disk_page(animated, tmp_path / "disk.html")
    camera = browser.open(page, "t=0&hud=0")["camera"]
    img = image(browser.screenshot(tmp_path / "t0.png"))
    h, w, _ = img.shape
    assert (w, h) == (camera["width"], camera["height"])
    red = (img[..., 0] > 120) & (img[..., 1] < 90) & (img[..., 2] < 90)
    r = d["p"][d["mod"].constants.index("r")]
    centre, contact, _, By = disk_geometry(d["run"].x[0], r)
    (cx, cy), (px, py) = project(camera, [centre, contact], (w, h))
    assert red[int(round(cy)), int(round(cx))]
    direction = np.array([px - cx, py - cy]) / np.hypot(px - cx, py - cy)
    last = None
    for s in np.arange(0, 2 * np.hypot(px - cx, py - cy), 0.25):
        i, j = int(round(cy + s * direction[1])), int(round(cx + s * direction[0]))
        if 0 <= i < h and 0 <= j < w and red[i, j]:
            last = np.array([j, i])
    assert last is not None and np.hypot(*(last - [px, py])) < 3.0, (last, (px, py))


def test_pixels_change_where_the_body_moved_and_nowhere_else(animated, browser, tmp_path):
    d = animated("disk")
    page = disk_page(animated, tmp_path / "disk.html")
    run, r = d["run"], d["p"][d["mod"].constants.index("r")]
    images, boxes = [], []
    camera = browser.open(page, "t=0&hud=0")["camera"]
    for t in (0.0, 1.0):
        assert browser.show(f"t={t}&hud=0")["time"] == pytest.approx(t)
        img = image(browser.screenshot(tmp_path / f"t{t}.png"))
        k = int(np.argmin(abs(run.t - t)))
        centre, _, Bx, By = disk_geometry(run.x[k], r)
        a = np.linspace(0, 2 * np.pi, 73)[:, None]
        rim = centre + r * (np.cos(a) * Bx + np.sin(a) * By)
        uv = project(camera, rim, img.shape[1::-1])
        boxes.append((uv.min(axis=0) - 4, uv.max(axis=0) + 4))
        images.append(img)
    changed = np.abs(images[0] - images[1]).sum(axis=2) > 24
    assert changed.sum() > 200                                       # the disk moved
    ii, jj = np.nonzero(changed)
    inside = np.zeros(len(ii), bool)
    for lo, hi in boxes:
        inside |= (jj >= lo[0]) & (jj <= hi[0]) & (ii >= lo[1]) & (ii <= hi[1])
    assert inside.all(), f"{(~inside).sum()} pixels changed away from the disk"


def test_humanoid_page_is_small_and_plays(animated, browser, tmp_path):
    h = animated("humanoid")
    page = codegen.animate(h["mod"], h["run"], tmp_path / "humanoid.html")
    assert page.stat().st_size < 2_000_000
    state = browser.open(page, "t=3")
    assert state["errors"] == "" and state["frames"] == 601
    assert state["objects"] == 12 + 20            # 12 boxes, 20 joint links
    times = browser.frame_times(60)
    assert times["frames"] == 60 and np.isfinite(times["median_ms"])
    assert times["pixel_ratio"] in (0.5, 1)
    again = browser.frame_times(60, presented=True)   # the same #fps=60 measures again
    assert again["frames"] == 60 and again["presented"] > 0           # frames were shown
    print(f"humanoid page {page.stat().st_size / 1e6:.2f} MB; frame times {times}")


def test_presented_frames_are_counted_from_the_trace():
    """Only the page's animated frames count (the layer tree with the most of them), and
    only those shown with its drawing; the rate is over the shown ones' span."""
    def report(ts, state, pid=7, host=1, animated=True):
        return {"name": "PipelineReporter", "ph": "b", "ts": ts, "pid": pid, "args": {
            "frame_reporter": {"state": state, "layer_tree_host_id": host,
                               "has_main_animation": animated}}}
    shown, dropped = "STATE_PRESENTED_ALL", "STATE_DROPPED"
    events = ([report(1e6 + k * 20_000, shown) for k in range(11)]          # 50 per second
              + [report(1.01e6, dropped), report(1.03e6, "STATE_PRESENTED_PARTIAL")]
              + [report(5e6, shown, animated=False), report(1e6, shown, pid=8)]
              + [{"name": "Graphics.Pipeline", "ph": "X", "ts": 0, "pid": 7}])
    assert _presented(events) == {"presented": 11, "dropped": 1, "presented_fps": 50.0}
    assert _presented([]) == {"presented": 0, "dropped": 0, "presented_fps": 0.0}


def test_particles_and_links(animated, tmp_path):
    """The pendulum on a cart: particles drawn as spheres, links between the pendulum's
    particles, not between the cart and the fixed point it slides from."""
    d = animated("pendulum")
    names = d["mod"].output_names
    assert sum(n.startswith("anim_particle__") for n in names) == 3
    assert sorted(n for n in names if n.startswith("anim_link__")) == \
        ["anim_link__P0__P1", "anim_link__P1__P2"]
    ga = GibbsAppellMethod(**d["model"].kwargs)                      # the same from the formulation
    assert list(pose_outputs(ga)) == list(pose_outputs(d["model"]))
    page = d["run"].animate(tmp_path / "pendulum.html")
    assert page.is_file() and b"three.js" in page.read_bytes()[:2000]


def test_bad_input_is_refused_before_writing(animated, tmp_path):
    disk, pend = animated("disk"), animated("pendulum")
    r = disk["p"][disk["mod"].constants.index("r")]

    def refused(exc, match, mod=disk["mod"], run=disk["run"], path=tmp_path / "x.html", **kw):
        with pytest.raises(exc, match=match):
            codegen.animate(mod, run, path, **kw)
        assert not any(p.name.startswith("x.html") or p.name.startswith(".x.html")
                       for p in tmp_path.iterdir())

    refused(ValueError, r"the run has 6 states .* but the model has 8", mod=disk["mod"],
            run=pend["run"])
    refused(ValueError, r"output 'E' not in the model \(it has T\)", outputs=["E"])
    refused(ValueError, r"frame 'Z' not in the model", shapes=[Box("Z", "C", (1, 1, 1))])
    refused(ValueError, r"point 'Q' not in the model", shapes=[Sphere(point="Q", radius=r)])
    refused(ValueError, r"trace point 'W' not in the model", traces=["W"])
    refused(ValueError, r"must be 3 finite numbers", shapes=[Box("D", "C", (1, -1, 1))])
    refused(FileNotFoundError, r"mesh file .* not found",
            shapes=[codegen.animation.Mesh("D", "C", file=tmp_path / "no.stl")])
    refused(FileNotFoundError, r"does not exist", path=tmp_path / "missing" / "x.html")
    refused(IsADirectoryError, r"it is a folder", path=tmp_path)
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        if not os.access(locked, os.W_OK):           # root may write anyway
            refused(PermissionError, r"not writable", path=locked / "x.html")
    finally:
        locked.chmod(stat.S_IRWXU)
    plain = generate(GibbsAppellMethod(**ex.rolling_disk_contact().kwargs), "anim_plain",
                     output_dir=disk["dir"], outputs={"T": "kinetic_energy"})
    run = plain.simulate((0, 0.1), disk["model"].initial_state, disk["p"])
    refused(ValueError, r"no animation outputs: compile the model with", mod=plain, run=run)
    with pytest.raises(ValueError, match="point 'Q' is neither located"):
        import sympy.physics.mechanics as me
        model = ex.rolling_disk_contact()
        pose_outputs(model, points=[me.Point("Q")])


def test_urdf_visuals_are_drawn(browser, tmp_path):
    """A URDF arm's box (turned, offset, red), cylinder, STL and COLLADA meshes on its
    link frame."""
    import json
    import re
    from codegen.animation import urdf_shapes
    from codegen.robots import from_urdf
    link = ('<link name="{0}"><inertial><origin xyz="0.1 0 0"/><mass value="1"/><inertia '
            'ixx="0.01" iyy="0.02" izz="0.03" ixy="0" iyz="0" ixz="0"/></inertial></link>')
    (tmp_path / "r").mkdir()
    tri = np.array([[[0, 0, 0], [1, 0, 0], [0, 1, 0]]], dtype="<f4")
    records = np.zeros(1, dtype=[("n", "<f4", 3), ("v", "<f4", (3, 3)), ("a", "<u2")])
    records["v"] = tri
    (tmp_path / "r" / "tool.stl").write_bytes(b"\0" * 80 + np.uint32(1).tobytes()
                                               + records.tobytes())
    (tmp_path / "r" / "quad.dae").write_text(DAE)
    urdf = tmp_path / "arm.urdf"
    urdf.write_text(
        '<robot name="arm">' + link.format("base") + link.format("arm").replace(
            "</link>", '<visual><origin xyz="0 0 0.2" rpy="0 0 1.5707963267948966"/><geometry>'
            '<box size="0.1 0.2 0.3"/></geometry><material name="red"><color rgba="1 0 0 1"/>'
            '</material></visual><visual><geometry><cylinder radius="0.02" length="0.1"/>'
            '</geometry></visual><visual><geometry><mesh filename="package://r/tool.stl" '
            'scale="0.1 0.1 0.1"/></geometry></visual><visual><geometry><mesh '
            'filename="package://r/quad.dae" scale="0.05 0.05 0.05"/></geometry></visual></link>')
        + '<joint name="j1" type="revolute"><parent link="base"/><child link="arm"/>'
          '<origin xyz="0 0 0.5"/><axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="10" '
          'velocity="5"/></joint></robot>')
    model = from_urdf(urdf)
    shapes = urdf_shapes(model, mesh_dirs=[tmp_path])
    assert [type(s).__name__ for s in shapes] == ["Box", "Cylinder", "Mesh", "Mesh"]
    mod = generate_animated(model, "anim_arm", output_dir=tmp_path,
                            specifieds=model.specifieds)
    run = mod.simulate((0, 0.5), [0.3, 0.0], mod.parameters(model.parameter_values),
                       [0.0], t_eval=np.linspace(0, 0.5, 31))
    page = codegen.animate(mod, run, tmp_path / "arm.html", shapes=shapes)
    scene = json.loads(re.search(r'<script id="scene" type="application/json">(.*?)</script>',
                                 page.read_text(), re.S).group(1))
    box = scene["objects"][0]
    assert box["color"] == "#ff0000" and box["size"] == [0.1, 0.2, 0.3]
    assert np.allclose(box["offset"], [0, 0, 0.2])
    assert np.allclose(box["rotation"], [0, 0, np.sqrt(0.5), np.sqrt(0.5)])   # 90° about z
    state = browser.open(page, "t=0.25")
    assert state["errors"] == "" and state["objects"] == 4 + len(scene["links"])


def test_player_is_valid_javascript(tmp_path):
    import shutil
    import subprocess
    from codegen.abi import TEMPLATE_DIR
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    mjs = tmp_path / "player.mjs"
    mjs.write_text((TEMPLATE_DIR / "animation" / "player.js").read_text())
    proc = subprocess.run([node, "--check", str(mjs)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


# -- flexible bodies -------------------------------------------------------------------

def cantilever_oracle(L, n):
    """The cantilever's shapes phi_k(x) from their textbook form, cosh bx - cos bx -
    s_k (sinh bx - sin bx), with roots of 1 + cos cosh = 0 by brentq, normalized by
    quadrature to int phi^2 = L, and the foreshortening G_kl(x) = int_0^x phi_k' phi_l'
    by quadrature: none of codegen.flexible's code."""
    from scipy.integrate import quad
    from scipy.optimize import brentq
    roots = [brentq(lambda b: 1 + np.cos(b) * np.cosh(b), max(k * np.pi, 1.0),
                    (k + 0.5) * np.pi + 0.6) for k in range(n)]     # one root per bracket
    beta = np.array(roots) / L
    s = (np.cosh(roots) + np.cos(roots)) / (np.sinh(roots) + np.sin(roots))

    def raw(x, k, d=0):
        b, z = beta[k], beta[k] * x
        if d == 0:
            return np.cosh(z) - np.cos(z) - s[k] * (np.sinh(z) - np.sin(z))
        return b * (np.sinh(z) + np.sin(z) - s[k] * (np.cosh(z) - np.cos(z)))
    scale = [np.sqrt(L / quad(lambda x: raw(x, k) ** 2, 0, L, limit=200)[0]) for k in range(n)]

    def phi(x):
        return np.array([scale[k] * raw(x, k) for k in range(n)])

    def G(x):
        return np.array([[quad(lambda u: scale[k] * scale[m] * raw(u, k, 1) * raw(u, m, 1),
                               0, x, limit=200)[0] for m in range(n)] for k in range(n)])
    return phi, G


def hub_angle(t, Omega, T):
    """spin_up_beam's prescribed hub angle (Kane, Ryan & Banerjee), in numpy."""
    c = 2 * np.pi / T
    return np.where(t <= T, Omega / T * (t**2 / 2 + (np.cos(c * t) - 1) / c**2),
                    Omega * T / 2 + Omega * (t - T))


def test_flexible_beam_points_from_c_equal_the_mode_shapes(animated):
    """The beam's drawn points, composed from the compiled outputs, against r0 + phi eta
    - 1/2 (eta^T G eta) e turned by the hub angle, with the cantilever's shapes evaluated
    here (textbook form, roots by brentq, integrals by quad); the tip against the model's
    tip_deflection output."""
    from codegen.animation.page import Scene
    from codegen.animation.poses import FLEX_POINTS
    d = animated("beam")
    run, L = d["run"], 10.0
    scene = Scene(run.t, run.outputs, "beam")
    [(body, style, nodes)] = scene.flexible
    assert (body, style) == ("beam", "line") and nodes.shape == (len(run.t), FLEX_POINTS, 3)
    phi, G = cantilever_oracle(L, 2)
    xs = np.linspace(0, L, FLEX_POINTS)
    Phi, Gs = np.array([phi(x) for x in xs]), np.array([G(x) for x in xs])
    theta = hub_angle(run.t, **BEAM_SPIN)
    eta = run.x[:, :2]
    assert np.abs(eta).max() > 0.1                                  # it does bend
    local = np.zeros((len(run.t), FLEX_POINTS, 3))
    local[..., 0] = xs - 0.5 * np.einsum("tk,xkl,tl->tx", eta, Gs, eta)
    local[..., 1] = np.einsum("tk,xk->tx", eta, Phi)
    c, s = np.cos(theta)[:, None], np.sin(theta)[:, None]
    want = np.stack([c * local[..., 0] - s * local[..., 1],
                     s * local[..., 0] + c * local[..., 1], local[..., 2]], axis=-1)
    assert np.abs(nodes - want).max() < 1e-8 * L
    in_B = c[:, 0] * nodes[:, -1, 1] - s[:, 0] * nodes[:, -1, 0]        # the tip's B.y component
    assert np.abs(in_B - run.outputs["tip_deflection"]).max() < 1e-12 * L
    assert np.abs(np.diff(nodes, axis=1)).max() > 0                  # root to tip in order


def test_flexible_beam_is_drawn_deformed(animated, browser, tmp_path):
    """In the page at #t=1 (a sample time) the drawn tip, read from the instanced nodes
    three.js renders, is the model's tip_deflection from the hub's axis (float32 data);
    its pixel, projected through the page's camera, is the beam's colour."""
    import json
    d = animated("beam")
    run = d["run"]
    page = codegen.animate(d["mod"], run, tmp_path / "beam.html", outputs=["tip_deflection"])
    state = browser.open(page, "t=1&hud=0")
    assert state["errors"] == "" and state["objects"] == 1 and state["frames"] == len(run.t)
    drawn = json.loads(browser.evaluate("""(() => {
      const m = window.codegen.scene.getObjectByName("nodes:beam"), M = m.matrixWorld.clone();
      const out = [];
      for (let i = 0; i < m.count; i++) {
        m.getMatrixAt(i, M);
        out.push([M.elements[12], M.elements[13], M.elements[14]]);
      }
      return JSON.stringify(out); })()"""))
    k = int(np.argmin(abs(run.t - 1.0)))
    assert run.t[k] == 1.0
    theta = hub_angle(1.0, **BEAM_SPIN)
    tip = np.array(drawn[-1])
    deflection = np.cos(theta) * tip[1] - np.sin(theta) * tip[0]
    want = run.outputs["tip_deflection"][k]
    assert abs(want) > 0.3 and abs(deflection - want) < 1e-5
    from codegen.animation.page import Scene
    nodes = Scene(run.t, run.outputs, "beam").flexible[0][2][k]
    assert np.abs(np.array(drawn) - nodes).max() < 1e-5               # every drawn node
    img = image(browser.screenshot(tmp_path / "beam.png"))
    (u, v), = project(state["camera"], [tip], img.shape[1::-1])
    r, g, b = img[int(round(v)), int(round(u))]
    assert b > r + 30, (r, g, b)                                     # the beam's blue


def test_fe_node_data_is_drawn_through_evenly_picked_nodes():
    """An FE beam of 30 nodes: 21 of them, both ends kept, in axial order; at eta = 0 the
    drawn points are the nodes' positions, bent they are the nodes' mode shapes."""
    from codegen.animation.poses import FLEX_POINTS
    model = ex.spin_up_beam(2, nodes=30)
    out = pose_outputs(model)
    [name] = [n for n in out if n.startswith("anim_flex__")]
    assert name == "anim_flex__beam__B__O__line"
    picked = np.round(np.linspace(0, 29, FLEX_POINTS)).astype(int)
    beam = model.bodies[0]
    at_rest = np.array(out[name].subs({q: 0 for q in beam.q}), dtype=float)
    assert np.allclose(at_rest, beam.modes.position[picked], atol=1e-15)
    eta = {q: v for q, v in zip(beam.q, (0.2, -0.1))}
    bent = np.array(out[name].subs(eta), dtype=float)
    assert np.allclose(bent[:, 1], beam.modes.shape[picked, 1] @ [0.2, -0.1], atol=1e-12)


LAMBERT = """(() => {            // three.js's own Lambert, per pixel, in place of the player's
  const {THREE, scene, draw} = window.codegen;
  scene.traverse(o => {
    const m = o.material;
    if (m && m.isShaderMaterial) o.material = new THREE.MeshLambertMaterial({
      color: m.uniforms.diffuse.value, opacity: m.uniforms.opacity.value,
      transparent: m.transparent, depthWrite: m.depthWrite, side: m.side});
  });
  draw();
  return new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
})()"""


@pytest.mark.parametrize("name", ["humanoid", "disk"])
def test_shading_per_vertex_equals_three_js_lambert(name, animated, browser, tmp_path):
    """The player lights each vertex with three.js's Lambert sums: on flat faces (the
    humanoid's boxes) the pixels are three.js's own; on curved ones (the disk's rim) and
    a mesh seen from both sides (a tetrahedron) they differ by little."""
    d = animated(name)
    if name == "humanoid":
        page = codegen.animate(d["mod"], d["run"], tmp_path / "page.html")
    else:
        (tmp_path / "t.obj").write_text(TETRAHEDRON)
        page = disk_page(animated, tmp_path / "page.html",
                         more=[Mesh("B", "P", file=tmp_path / "t.obj", color="#208020")])
    browser.open(page, "t=0.5&hud=0")
    ours = image(browser.screenshot(tmp_path / "ours.png"))
    browser.evaluate(LAMBERT)
    theirs = image(browser.screenshot(tmp_path / "theirs.png"))
    assert browser.state()["errors"] == ""
    drawn = (np.abs(ours - ours[0, 0]).sum(axis=2) > 12).sum()
    diff = np.abs(ours - theirs).max(axis=2)                  # 0-255 per channel
    assert drawn > 20_000
    assert (diff > 2).sum() <= 0.002 * drawn, np.bincount(diff.ravel())
    if name == "humanoid":
        assert diff.max() <= 2
