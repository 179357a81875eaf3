"""The analytic Jacobian of robots from their URDF, built by the default options
(codegen.algorithms.jacobian.auto_limit), against pin.computeABADerivatives; and the derivative
program's statements spliced at the same operations."""
from __future__ import annotations

import os

import numpy as np
import pytest

from codegen import GibbsAppellMethod, generate
from codegen.algorithms import jacobian as jac
from codegen.pipeline.build import neutral_equations
from codegen.robots import from_urdf
from codegen.robots.catalog import example_robot_data

pin = pytest.importorskip("pinocchio")

SHARED = os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared", "robots")
SHARED = SHARED if os.path.isdir(SHARED) else "/work/shared/robots"


def _path(where, relative):
    root = SHARED if where == "shared" else example_robot_data()
    path = os.path.join(root or "", relative)
    if not os.path.exists(path):
        pytest.skip(f"{path} is not here")
    return path


ROBOTS = {"hyq": ("shared", "hyq.urdf", False),
          "solo": ("erd", "solo_description/robots/solo.urdf", True)}


def _tangent(x, nq, nv):
    """d q / d (Pinocchio's tangent) at x, by Pinocchio's own quaternion algebra: the
    free-flyer's position moves by R δ, its quaternion by q ⊗ (δ/2, 0)."""
    qx, qy, qz, qw = x[3:7]
    quat = pin.Quaternion(qw, qx, qy, qz)
    T = np.zeros((nq, nv))
    T[:3, :3] = quat.toRotationMatrix()
    for i in range(3):
        half = np.zeros(3)
        half[i] = 0.5
        T[3:7, 3 + i] = (quat * pin.Quaternion(0.0, *half)).coeffs()     # x, y, z, w
    T[7:, 6:] = np.eye(nq - 7)
    return T


@pytest.mark.parametrize("name", sorted(ROBOTS))
def test_default_jacobian_equals_aba_derivatives(tmp_path, name):
    """The default options build the robot's Jacobian (its derivative program within
    AUTO_RATIO of the model's own), equal to Pinocchio's ABA derivatives."""
    where, relative, floating = ROBOTS[name]
    path = _path(where, relative)
    model = from_urdf(path, floating_base=floating)
    mod = generate(GibbsAppellMethod(**model.kwargs), f"jac_{name}", output_dir=tmp_path,
                   specifieds=model.specifieds, constants=model.constants)
    assert mod.manifest["jacobian"] is True
    pm = (pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer()) if floating
          else pin.buildModelFromUrdf(path))
    pd = pm.createData()
    p = mod.parameters(model.parameter_values)
    np.random.seed(5)                   # Pinocchio's random configuration draws from it
    q = pin.randomConfiguration(pm, -1.5 * np.ones(pm.nq), 1.5 * np.ones(pm.nq))
    v = np.random.uniform(-1.0, 1.0, pm.nv)
    x = model.from_pinocchio(q, v)
    tau = np.random.uniform(-1.0, 1.0, len(model.specifieds))
    nq = len(model.q_ind)
    pin.computeABADerivatives(pm, pd, q, v, np.concatenate([np.zeros(6) if floating else [],
                                                               tau]))
    J = mod.jacobian(0.0, x, p, tau)[nq:]
    dq = J[:, :nq] @ _tangent(x, nq, pm.nv) if floating else J[:, :nq]
    scale = max(1.0, np.abs(pd.ddq_dq).max(), np.abs(pd.ddq_dv).max())
    assert np.abs(dq - pd.ddq_dq).max() / scale < 1e-9
    assert np.abs(J[:, nq:] - pd.ddq_dv).max() / scale < 1e-9
    # the column solve's bodies of their own take R's columns (codegen.algorithms.jacobian_columns'
    # column_groups); the inputs' block goes through the dense body: d u'/d tau = M^-1
    sources = "".join(f.read_text() for f in tmp_path.rglob("*.c"))
    assert "static const int cg_g1_" in sources
    if floating:        # the base's six speeds as four and a pair in the dense body
        assert "static const int cg_g0_2" in sources
    else:               # HyQ's legs' runs of three as four, padded before and after
        assert "static const int cg_g1_pad3" in sources and "_pad0[" in sources
    # the inputs' blocks are formed only when asked for: jacobian() passes them NULL,
    # input_jacobian() the arrays (cg_model.h's CG_OPTIONAL)
    assert "if (Rr) " in sources and "if (Jqr) cg_zero(Jqr, " in sources
    # R's zeros that the column solve writes before reading (emit._overwritten) are left
    # unwritten: a floating base's R is not filled, and into a buffer of NaNs every entry
    # of J is written all the same
    assert ("cg_zero(R, " in sources) != floating
    full = np.full((mod.nx, mod.nx), np.nan)
    mod.jacobian(0.0, x, p, tau, out=full)
    assert np.array_equal(full, mod.jacobian(0.0, x, p, tau))
    Jr = mod.input_jacobian(0.0, x, p, tau)[nq:]
    Minv = pd.Minv[:, 6:] if floating else pd.Minv
    assert np.abs(Jr - Minv).max() / max(1.0, np.abs(Minv).max()) < 1e-9


def test_derivative_program_has_no_equal_temporaries():
    """No two temporaries of a floating base's derivative program are equal as SymPy
    builds them (pickled and read back: its sums and products evaluated): M's factor's
    rows alike (program.make_program's definitions read through) and the inertia's rate
    beside the momentum (rnea_derivatives._composites) left 12 on Solo12, 338 on Talos."""
    import pickle
    model = from_urdf(_path("erd", ROBOTS["solo"][1]), floating_base=True)
    eom = neutral_equations(GibbsAppellMethod(**model.kwargs), "solo", model.constants,
                            model.specifieds)
    program = jac.jacobian_program(eom)
    forms = [pickle.loads(pickle.dumps(e)) for _, e in program.temporaries]
    assert len(set(forms)) == len(forms)


def test_spliced_definitions_keep_operations(monkeypatch):
    """Splicing the definitions used once (jacobian._inline_single_uses) leaves the
    iiwa's derivative program fewer statements at no more operations."""
    model = from_urdf(_path("shared", "iiwa.urdf"))
    eom = neutral_equations(GibbsAppellMethod(**model.kwargs), "iiwa", model.constants,
                            model.specifieds)
    monkeypatch.setattr(jac, "_analytic_program", lambda *args: None)      # forward mode's
    spliced = jac.jacobian_program(eom)
    monkeypatch.setattr(jac, "_inline_single_uses", lambda defs, arrays: (defs, arrays))
    whole = jac.jacobian_program(eom)
    assert spliced.operation_count <= whole.operation_count
    assert len(spliced.temporaries) < 0.9 * len(whole.temporaries)     # 1,460 for 1,721


def test_negations_are_sympys():
    """jacobian._negated builds -e from e's terms without SymPy's flattening: the same
    expression (equal, same hash) as SymPy's -e over the iiwa's Newton–Euler program and
    on the terms it leaves to SymPy (a number times a sum, which SymPy distributes)."""
    import sympy as sm
    model = from_urdf(_path("shared", "iiwa.urdf"))
    eom = neutral_equations(GibbsAppellMethod(**model.kwargs), "iiwa", model.constants,
                            model.specifieds)
    _, values = jac._values(eom)
    a, b, c = sm.symbols("a b c")
    odd = [sm.Mul(2, a + b, evaluate=False), sm.Add(c, sm.Mul(2, a + b, evaluate=False),
                                                    evaluate=False),
           -a * b, 0.5 * a - 3, -a, a ** 2 * sm.sin(b) - 1.5 * c + 2, sm.S(4)]
    exprs = [e for _, e in values.temporaries] + odd
    assert len(exprs) > 200
    for e in exprs:
        ours, theirs = jac._negated(e), -e
        assert ours == theirs and hash(ours) == hash(theirs), e
