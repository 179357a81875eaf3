"""A planar 2R arm: its base parameters against the textbook's grouping (Khalil and
Dombre, Modeling, Identification and Control of Robots, 2002, §9.4 and example 9.2), and
the excitation and estimation on it."""
import numpy as np
import pytest
import sympy as sm

from codegen.identification import (RankDeficientExcitation, estimate, optimize_excitation,
                                    regressor, stack)
from codegen.robots import from_urdf

LINK = ('<link name="{0}"><inertial><origin xyz="0.1 0 -0.2"/><mass value="{1}"/>'
        '<inertia ixx="0.03" iyy="0.04" izz="0.02" ixy="0.001" iyz="0.002" ixz="0.003"/>'
        '</inertial></link>')
JOINT = ('<joint name="{0}" type="revolute"><parent link="{1}"/><child link="{2}"/>'
         '<origin xyz="0 0 {3}"/><axis xyz="0 1 0"/>'
         '<limit lower="-3" upper="3" effort="10" velocity="10"/></joint>')


@pytest.fixture(scope="module")
def arm(tmp_path_factory):
    path = tmp_path_factory.mktemp("arm") / "arm2.urdf"
    path.write_text('<robot name="arm2"><link name="base"/>' + LINK.format("upper", 1.5)
                    + LINK.format("lower", 0.8) + JOINT.format("shoulder", "base", "upper", 0)
                    + JOINT.format("elbow", "upper", "lower", -0.5) + "</robot>")
    model = from_urdf(str(path))
    reg = regressor(model)
    return model, reg, reg.generate("arm2", output_dir=tmp_path_factory.mktemp("gen"))


def test_textbook_base_parameters(arm):
    """Both axes are y, the elbow at l = 0.5 along -z of the upper link, gravity in the
    plane. Khalil's rules (his z is our y, his x our -z) give six base parameters: his
    ZZ1R = ZZ1 + l² M2 is our YY1 + l² m2, his MX1R = MX1 + l M2 our MZ1 - l m2, and his
    MY1, ZZ2, MX2, MY2 our MX1, YY2, MZ2, MX2 (the inertias about the joints' origins)."""
    _, reg, _ = arm
    s = {str(p): p for p in reg.parameters}
    expected = {s["Iyy_upper"] + sm.Rational(1, 4) * s["m_lower"],
                s["mz_upper"] - sm.Rational(1, 2) * s["m_lower"], s["mx_upper"],
                s["Iyy_lower"], s["mx_lower"], s["mz_lower"]}
    assert reg.rank == 6
    assert {sm.expand(b) for b in reg.base} == expected
    assert set(map(str, reg.unidentifiable)) >= {"Ixx_upper", "m_upper", "my_lower"}


def test_estimation_recovers_the_base_parameters(arm):
    """On an optimized excitation: noiseless data give the true base parameters to
    1e-8; with noise the errors are within 4 reported standard deviations."""
    _, reg, mod = arm
    traj, cond = optimize_excitation(mod, [-2, -2], [2, 2], harmonics=2, samples=30,
                                     maxiter=15)
    q, _, _ = traj(np.linspace(0, 10, 300))
    assert np.all(np.abs(q) <= 2 + 1e-6)
    X, UD = traj.samples(np.linspace(0, 10, 200, endpoint=False))
    W = stack(mod, X, UD)
    beta = np.array(reg.base_values)
    tau = (W @ beta).reshape(-1, 2)
    fit = estimate(W, tau, 2, sigma=[1.0, 1.0])
    assert np.abs(fit.values - beta).max() < 1e-8
    assert fit.condition == pytest.approx(cond, rel=0.5) or fit.condition < 1e3
    noisy = tau + np.random.default_rng(0).normal(scale=0.02, size=tau.shape)
    fit = estimate(W, noisy, 2)
    assert np.all(np.abs(fit.values - beta) <= 4 * fit.std)
    assert np.allclose(fit.sigma, 0.02, rtol=0.3)


def test_bad_data(arm):
    """Wrong shapes and NaNs are refused by name; an excitation that moves the elbow
    alone cannot see the shoulder's parameters, and the error names them."""
    _, reg, mod = arm
    X = np.zeros((10, 4))
    with pytest.raises(ValueError, match="X must have shape"):
        stack(mod, np.zeros((10, 3)), np.zeros((10, 2)))
    with pytest.raises(ValueError, match="samples"):
        stack(mod, X, np.zeros((9, 2)))
    bad = X.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        stack(mod, bad, np.zeros((10, 2)))
    with pytest.raises(ValueError, match="shape"):
        mod.regressor(np.zeros(3), np.zeros(2))
    rng = np.random.default_rng(0)
    X = np.column_stack([np.zeros(20), rng.uniform(-1, 1, 20), np.zeros(20), rng.uniform(-1, 1, 20)])
    UD = np.column_stack([np.zeros(20), rng.uniform(-1, 1, 20)])
    W = stack(mod, X, UD)
    names = [f"{reg.parameters[k]}R" for k in reg.pivots]
    with pytest.raises(RankDeficientExcitation, match="upper"):
        estimate(W, np.zeros((20, 2)), 2, names=names)
    with pytest.raises(ValueError, match="tau must have shape"):
        estimate(W, np.zeros((20, 3)), 2)


def test_single_calls_take_any_vector_and_an_out(arm):
    """The extension's call takes float64 vectors in place and writes out; lists, other
    kinds and byte orders, and strided views are converted first, to the same Y; wrong
    shapes of x, u' and out are refused by name."""
    _, reg, mod = arm
    x, ud = np.array([0.125, 0.25, -0.5, 0.75]), np.array([0.375, -0.5])   # float32's too
    Y = mod.regressor(x, ud)
    out = np.full((2, len(reg.parameters)), np.nan)
    assert mod.regressor(x, ud, out=out) is out and np.array_equal(out, Y)
    wide = np.zeros((4, 2))
    wide[:, 0] = x
    for a, b in ((list(x), tuple(ud)), (x.astype(">f8"), ud.astype(np.float32)),
                 (wide[:, 0], ud), (x.astype(np.float32), ud)):
        assert np.array_equal(mod.regressor(a, b), Y)
    Yb = mod.base_regressor(x, ud)
    assert np.array_equal(mod.base_regressor(x, ud, out=np.empty_like(Yb)), Yb)
    for a, b in ((x[:3], ud), (x, ud[:1]), (x.reshape(2, 2), ud), (0.0, ud)):
        with pytest.raises(ValueError, match="x must have shape"):
            mod.regressor(a, b)
    for bad in (np.empty((2, 3)), np.empty(out.size), out.T.copy().T, out.astype(">f8"),
                np.empty(out.shape, dtype=np.float32), [[0.0] * out.shape[1]] * 2):
        with pytest.raises(ValueError, match="out must be"):
            mod.regressor(x, ud, out=bad)


def test_joint_terms(arm, tmp_path):
    """Friction, armature and offsets per joint: the shoulder's rotor inertia groups into
    the first link's, as Khalil's ZZ1R = ZZ1 + Ia1 + l² M2; the other seven stay apart,
    and their columns are u, sign(u), u' and 1 in their own rows."""
    model, _, _ = arm
    reg = regressor(model, joints=("viscous", "coulomb", "armature", "offset"))
    s = {str(p): p for p in reg.parameters}
    assert reg.rank == 13
    assert s["Iyy_upper"] + s["Ia_shoulder"] + sm.Rational(1, 4) * s["m_lower"] in reg.base
    assert "Ia_shoulder" not in [str(reg.parameters[k]) for k in reg.pivots]
    mod = reg.generate("arm2_joints", output_dir=tmp_path)
    Y = mod.regressor(np.array([0.1, 0.2, -0.5, 0.7]), np.array([0.3, -0.4]))
    assert np.array_equal(Y[:, 20:], [[-0.5, -1, 0.3, 1, 0, 0, 0, 0], [0, 0, 0, 0, 0.7, 1, -0.4, 1]])
    with pytest.raises(ValueError, match="not among"):
        regressor(model, joints=("stiction",))


def test_generated_source_is_deterministic(arm, tmp_path):
    """The same model gives the same C, byte for byte, from a fresh regressor."""
    model, reg, mod = arm
    again = regressor(model).generate("arm2", output_dir=tmp_path)
    assert (again.library.parent / "arm2_regressor.c").read_text() == \
        (mod.library.parent / "arm2_regressor.c").read_text()
