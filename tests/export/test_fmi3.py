"""FMI 3.0 FMUs (export_fmu(..., fmi_version=3)): validated and run by FMPy against
simulate, their directional and adjoint derivatives against the module's Jacobian, FMU
states, the build description, and wrong calls answered with fmi3Error and a message."""
import ctypes
import shutil
import subprocess
import xml.etree.ElementTree as ET
import zipfile

import fmpy
import numpy as np
import pytest
from fmpy import extract, read_model_description
from fmpy.fmi1 import FMICallException
from fmpy.fmi3 import FMU3Model, FMU3Slave
from fmpy.model_description import read_build_description
from fmpy.validation import validate_fmu

from codegen import GibbsAppellMethod, examples as ex, export_fmu, generate

CC = shutil.which("gcc") or shutil.which("cc")
VR_X, VR_DX, VR_P, VR_R, VR_Z, VR_Y = 10, 11, 12, 13, 14, 100


def control_model():
    """The pendulum on a cart under a PD law on the cart (no input left), its kinetic
    energy and the cart's position as outputs."""
    model = ex.n_pendulum_on_cart(1)
    ga = GibbsAppellMethod(**model.kwargs)
    q, u = list(ga.q), list(ga.u)
    kw = dict(control={"F": -20.0 * q[0] - 8.0 * u[0]},
              outputs={"T": "kinetic_energy", "cart": q[0]})
    return model, ga, kw


@pytest.fixture(scope="module")
def fmus(tmp_path_factory, hybrid):
    """name -> dict(mod, path, x0, p, r, kw) of the five models, each generated and
    exported once (FMI 3.0, its start values those of the run compared)."""
    out = tmp_path_factory.mktemp("fmi3")
    res = {}
    builders = {"pend": lambda: (ex.n_pendulum_on_cart(2), None, {}),
                "disk": lambda: (ex.rolling_disk(), None, {}),
                "fourbar": lambda: (ex.four_bar(), None, {}),
                "ctrl": control_model}
    for name, build in builders.items():
        model, ga, kw = build()
        ga = ga or GibbsAppellMethod(**model.kwargs)
        mod = generate(ga, f"{name}3", output_dir=out / "py", **kw)
        vals = dict(model.parameter_values, baumgarte_alpha=5.0, baumgarte_beta=5.0)
        p = np.array([vals[c] for c in mod.constants])
        x0 = np.array(model.initial_state, dtype=float)
        if mod.nc:
            x0 = mod.project(x0, p)
        r = np.full(len(mod.specifieds), 0.25) if mod.specifieds else None
        values = dict(zip(mod.states, x0), **dict(zip(mod.constants, p)))
        if r is not None:
            values.update(zip(mod.specifieds, r))
        path = export_fmu(ga, f"{name}3", out, start_values=values, fmi_version=3, **kw)
        res[name] = dict(mod=mod, path=str(path), x0=x0, p=p, r=r, ga=ga, kw=kw, values=values)
    b = hybrid("ball")
    values = dict(y=1.0, v=0.0, **b["values"])
    path = export_fmu(b["ga"], "ball3", out, start_values=values, fmi_version=3, **b["kw"])
    res["ball"] = dict(mod=b["mod"], path=str(path), x0=np.array([1.0, 0.0]), p=b["p"], r=None,
                       ga=b["ga"], kw=b["kw"], values=values)
    return res


MODELS = ["pend", "disk", "fourbar", "ctrl", "ball"]


@pytest.mark.parametrize("name", MODELS)
def test_validates_with_arrays(fmus, name):
    """validate_fmu finds no problem; the states, constants and inputs are arrays sized by
    structural parameters, each output has its shape, the capabilities are declared."""
    f = fmus[name]
    mod = f["mod"]
    assert validate_fmu(f["path"]) == []
    md = read_model_description(f["path"])
    assert md.fmiVersion == "3.0" and md.modelExchange and md.coSimulation
    assert md.numberOfContinuousStates == mod.nx
    v = {x.name: x for x in md.modelVariables}
    assert v["states"].shape == (mod.nx,) and v["der(states)"].derivative is v["states"]
    assert v["states"].dimensions[0].variable is v["n_states"]
    assert v["n_states"].causality == "structuralParameter"
    assert v["states"].description == "[" + ", ".join(mod.states) + "]"
    assert v["constants"].shape == (len(mod.constants),)
    assert ("inputs" in v) == bool(mod.specifieds)
    outputs = [x for x in md.modelVariables if x.causality == "output"]
    assert [(o.name, o.shape) for o in outputs] == [(n, mod.output_shapes[n])
                                                     for n in mod.output_names]
    assert md.numberOfEventIndicators == len(mod.event_names)
    with zipfile.ZipFile(f["path"]) as z:       # FMPy reads FMI 2.0's attribute name
        root = ET.fromstring(z.read("modelDescription.xml"))
    for kind in ("ModelExchange", "CoSimulation"):
        element = root.find(kind)
        for capability in ("providesDirectionalDerivatives", "providesAdjointDerivatives"):
            assert element.get(capability) == ("true" if mod.nc == 0 else "false")
        assert element.get("canSerializeFMUState") == "true"
    config = read_build_description(f["path"])[0]
    assert f"{md.modelName}_fmi3.c" in config.sourceFileSets[0].sourceFiles


def test_sources_are_deterministic_and_build_from_the_description(fmus, tmp_path):
    """A second export writes the very same modelDescription.xml and sources; the
    sources build a working binary from buildDescription.xml alone."""
    f = fmus["pend"]
    again = export_fmu(f["ga"], "pend3", tmp_path, start_values=f["values"], fmi_version=3)
    with zipfile.ZipFile(f["path"]) as a, zipfile.ZipFile(again) as b:
        names = [n for n in a.namelist() if not n.startswith("binaries/")]
        assert names == [n for n in b.namelist() if not n.startswith("binaries/")]
        assert all(a.read(n) == b.read(n) for n in names)
    folder = extract(f["path"], str(tmp_path / "unzipped"))
    config = read_build_description(folder)[0]
    files = config.sourceFileSets[0].sourceFiles
    subprocess.run([CC, "-std=c99", "-Wall", "-Wextra", "-pedantic", "-Werror", "-O1", "-shared",
                    "-fPIC", "-I.", *files, "-lm", "-o", "rebuilt.so"],
                   cwd=f"{folder}/sources", check=True, capture_output=True)
    lib = ctypes.CDLL(f"{folder}/sources/rebuilt.so")
    lib.fmi3GetVersion.restype = ctypes.c_char_p
    assert lib.fmi3GetVersion() == b"3.0"


def regular_times(res):
    """Which output times of an FMPy run are regular ones (an event's two sides dropped)."""
    t = np.asarray(res["time"])
    regular = np.r_[True, np.diff(t) != 0] & np.r_[np.diff(t) != 0, True]
    return regular


@pytest.mark.parametrize("name", MODELS)
def test_model_exchange_equals_simulate(fmus, name):
    """FMPy's CVODE at rtol 1e-13 on the FMU against simulate at 1e-12 (array start
    values of the constants set by FMPy, the impacts in Event Mode)."""
    f = fmus[name]
    mod = f["mod"]
    t_end = 1.5 if name != "ball" else 2.0
    res = fmpy.simulate_fmu(f["path"], fmi_type="ModelExchange", stop_time=t_end,
                            output_interval=0.01, relative_tolerance=1e-13, output=["states"])
    keep = regular_times(res)
    t, x = res["time"][keep], res["states"][keep]
    ours = mod.simulate((0, t_end), f["x0"], f["p"], f["r"], rtol=1e-12, atol=1e-12,
                        t_eval=t)
    err = np.abs(x - ours.x).max()
    print(f"ME {name}: max |FMPy CVODE - simulate| = {err:.2e}")
    assert err < 1e-8


@pytest.mark.parametrize("name", MODELS)
def test_cosimulation_equals_simulate(fmus, name):
    """fmi3DoStep runs the runtime's DOPRI5 at the host's tolerance, impacts applied
    inside the step: the run and the outputs are simulate's at the same times."""
    f = fmus[name]
    mod = f["mod"]
    res = fmpy.simulate_fmu(f["path"], fmi_type="CoSimulation", stop_time=2.0,
                            output_interval=0.01, relative_tolerance=1e-10,
                            output=["states"] + mod.output_names)
    ours = mod.simulate((0, 2.0), f["x0"], f["p"], f["r"], rtol=1e-10, atol=1e-10,
                        t_eval=res["time"])
    err = np.abs(res["states"] - ours.x).max()
    print(f"CS {name}: max |FMPy CS - simulate| = {err:.2e}")
    assert err < 1e-8
    for n in mod.output_names:
        assert np.abs(res[n] - ours.outputs[n]).max() < 1e-8


def test_cosimulation_event_mode_with_early_return(fmus):
    """With event mode and early return the ball's step ends at each located impact, the
    host's Event Mode applies it: the run equals simulate's, impact times among FMPy's
    output times."""
    f = fmus["ball"]
    mod = f["mod"]
    res = fmpy.simulate_fmu(f["path"], fmi_type="CoSimulation", stop_time=3.0,
                            output_interval=0.01, relative_tolerance=1e-10, output=["states"],
                            use_event_mode=True, early_return_allowed=True)
    ref = mod.simulate((0, 3.0), f["x0"], f["p"], rtol=1e-10, atol=1e-10,
                       t_eval=np.linspace(0, 3, 301))
    impacts = np.array([e[1] for e in ref.events if e[0] == "floor"])
    t = np.asarray(res["time"])
    assert len(impacts) >= 4
    assert np.abs(t[None, :] - impacts[:, None]).min(axis=1).max() < 1e-9
    keep = regular_times(res)
    ours = mod.simulate((0, 3.0), f["x0"], f["p"], rtol=1e-10, atol=1e-10, t_eval=t[keep])
    err = np.abs(res["states"][keep] - ours.x).max()
    print(f"CS ball with event mode: max |FMPy - simulate| = {err:.2e}")
    assert err < 1e-8


def doubles(values):
    """A C array of doubles."""
    return (ctypes.c_double * len(values))(*values)


def me_instance(f, name="me"):
    """A Model Exchange instance of the FMU, its log messages in .logged."""
    md = read_model_description(f["path"])
    fmu = FMU3Model(guid=md.guid, unzipDirectory=extract(f["path"]),
                    modelIdentifier=md.modelExchange.modelIdentifier, instanceName=name)
    logged = []
    fmu.instantiate(logMessage=lambda env, status, category, message:
                    logged.append((status, message)))
    fmu.logged = logged
    return fmu


@pytest.mark.parametrize("name", ["pend", "disk", "ctrl", "ball", "fourbar"])
def test_directional_and_adjoint_derivatives(fmus, name):
    """J seed and J^T seed at a random point, with random seeds, against the module's
    analytic Jacobian (states and inputs); a model with run-time constraints refuses."""
    f = fmus[name]
    mod = f["mod"]
    fmu = me_instance(f)
    fmu.enterInitializationMode()
    fmu.exitInitializationMode()
    fmu.enterContinuousTimeMode()
    rng = np.random.default_rng(3)
    x = f["x0"] + rng.uniform(-0.3, 0.3, mod.nx)
    fmu.setContinuousStates(doubles(x), mod.nx)
    if mod.nc:
        with pytest.raises(FMICallException):
            fmu.getDirectionalDerivative([VR_DX], [VR_X], list(np.ones(mod.nx)), mod.nx)
        assert b"derivatives are not provided" in fmu.logged[-1][1]
        return
    J, Jr = mod.linearize(x, f["p"], f["r"])
    worst = 0.0
    for _ in range(3):
        seed = rng.standard_normal(mod.nx)
        d = np.array(fmu.getDirectionalDerivative([VR_DX], [VR_X], list(seed), mod.nx))
        a = np.array(fmu.getAdjointDerivative([VR_DX], [VR_X], list(seed), mod.nx))
        worst = max(worst, np.abs(d - J @ seed).max() / max(1, np.abs(J @ seed).max()),
                    np.abs(a - J.T @ seed).max() / max(1, np.abs(J.T @ seed).max()))
    if mod.specifieds:
        seed = rng.standard_normal(mod.nx + len(mod.specifieds))
        d = np.array(fmu.getDirectionalDerivative([VR_DX], [VR_X, VR_R], list(seed), mod.nx))
        assert np.abs(d - np.c_[J, Jr] @ seed).max() < 1e-12
        w = rng.standard_normal(2 * mod.nx)              # two der(states) asked: summed
        a = np.array(fmu.getAdjointDerivative([VR_DX, VR_DX], [VR_R, VR_X], list(w),
                                              len(seed)))
        want = np.c_[Jr, J].T @ (w[:mod.nx] + w[mod.nx:])
        assert np.abs(a - want).max() < 1e-12
    print(f"derivatives {name}: max relative error {worst:.1e}")
    assert worst < 1e-12
    fmu.terminate()
    fmu.freeInstance()


def test_fmu_states_and_their_serialization(fmus):
    """A state taken, the run gone on, the state set: the same values again; its bytes
    give the same state in another instance; foreign bytes are refused."""
    f = fmus["pend"]
    mod = f["mod"]
    fmu = me_instance(f)
    fmu.enterInitializationMode()
    fmu.exitInitializationMode()
    fmu.enterContinuousTimeMode()
    fmu.setTime(0.3)
    x = f["x0"] + 0.1
    fmu.setContinuousStates(doubles(x), mod.nx)
    fmu.setFloat64([VR_R], [0.7])
    state = fmu.getFMUState()
    dx = np.array(fmu.getFloat64([VR_DX], nValues=mod.nx))
    fmu.setTime(0.9)
    fmu.setContinuousStates(doubles(x * 2), mod.nx)
    fmu.setFloat64([VR_R], [-3.0])
    fmu.setFMUState(state)
    assert np.array_equal(fmu.getFloat64([VR_DX], nValues=mod.nx), dx)
    got = doubles(np.zeros(mod.nx))
    fmu.getContinuousStates(got, mod.nx)
    assert np.array_equal(list(got), x)
    blob = fmu.serializeFMUState(state)
    assert fmu.serializeFMUState(state) == blob and len(blob) > 8 * mod.nx
    fmu.freeFMUState(state)
    other = me_instance(f, "other")
    other.enterInitializationMode()
    restored = other.deserializeFMUState(blob)
    other.setFMUState(restored)
    assert np.array_equal(other.getFloat64([VR_DX], nValues=mod.nx), dx)
    assert np.allclose(dx, mod.rhs(0.3, x, f["p"], [0.7]), rtol=1e-13, atol=1e-13)
    with pytest.raises(FMICallException):
        other.deserializeFMUState(b"x" * len(blob))
    assert b"no state of this model" in other.logged[-1][1]
    with pytest.raises(FMICallException):
        other.deserializeFMUState(blob[:-1])
    assert b"values given" in other.logged[-1][1]
    other.freeFMUState(restored)
    fmu.freeInstance()
    other.freeInstance()


def test_cosimulation_state_restored_reruns_the_step(fmus):
    """A Co-Simulation state taken at 0.3 and restored: the step from it is taken again
    (the integrator afresh), through the impact, to simulate's accuracy."""
    f = fmus["ball"]
    md = read_model_description(f["path"])
    fmu = FMU3Slave(guid=md.guid, unzipDirectory=extract(f["path"]),
                    modelIdentifier=md.coSimulation.modelIdentifier, instanceName="cs")
    fmu.instantiate()
    fmu.enterInitializationMode(tolerance=1e-10)
    fmu.exitInitializationMode()
    fmu.doStep(0.0, 0.3)
    state = fmu.getFMUState()
    fmu.doStep(0.3, 0.4)
    first = fmu.getFloat64([VR_X], nValues=2)
    fmu.setFMUState(state)
    fmu.doStep(0.3, 0.4)
    again = fmu.getFloat64([VR_X], nValues=2)
    ref = f["mod"].simulate((0, 0.7), f["x0"], f["p"], rtol=1e-10, atol=1e-10,
                            t_eval=[0.3, 0.7])
    assert np.abs(np.array(first) - ref.x[-1]).max() < 1e-9
    assert np.abs(np.array(again) - ref.x[-1]).max() < 1e-9
    fmu.freeFMUState(state)
    fmu.freeInstance()


# -- wrong calls: fmi3Error and a message, never a crash ------------------------------------
ERROR = 3                                       # fmi3Error
SIZE, VR, F64, U64 = ctypes.c_size_t, ctypes.c_uint32, ctypes.c_double, ctypes.c_uint64


def refs(*values):
    """A C array of value references."""
    return (VR * len(values))(*values)


def raw(fmu, function, *args):
    """The FMU's function called directly (FMPy's wrappers raise), its status returned."""
    f = getattr(fmu.dll, function)
    f.restype = ctypes.c_int
    return f(fmu.component, *args)


def expect_error(fmu, function, *args, says):
    """function(instance, *args) returns fmi3Error, and the logger got a message with
    fmi3Error that contains says."""
    before = len(fmu.logged)
    assert raw(fmu, function, *args) == ERROR, function
    assert len(fmu.logged) == before + 1, (function, fmu.logged[before:])
    status, message = fmu.logged[-1]
    assert status == ERROR and says.encode() in message, (function, message)
    assert message.startswith(function.encode()), message


def test_wrong_calls_to_model_exchange(fmus):
    """Wrong states, value references, array sizes, FMU states, a NULL instance and a
    wrong token: each refused with fmi3Error and a message, the instance whole after."""
    f = fmus["pend"]
    mod = f["mod"]
    nx, n_p = mod.nx, len(mod.constants)
    fmu = me_instance(f)
    buf = (F64 * (nx + 1))()
    flags = [ctypes.c_bool() for _ in range(6)]
    # the wrong state
    expect_error(fmu, "fmi3SetContinuousStates", buf, SIZE(nx), says="Instantiated")
    expect_error(fmu, "fmi3GetContinuousStateDerivatives", buf, SIZE(nx), says="Instantiated")
    expect_error(fmu, "fmi3EnterContinuousTimeMode", says="must not be called in Instantiated")
    expect_error(fmu, "fmi3ExitInitializationMode", says="Instantiated")
    expect_error(fmu, "fmi3Terminate", says="Instantiated")
    expect_error(fmu, "fmi3SetUInt64", refs(1), SIZE(1), (U64 * 1)(nx), SIZE(1),
                 says="Instantiated")
    assert raw(fmu, "fmi3EnterInitializationMode", ctypes.c_bool(False), F64(0.0), F64(0.0),
               ctypes.c_bool(False), F64(0.0)) == 0
    expect_error(fmu, "fmi3UpdateDiscreteStates", *[ctypes.byref(b) for b in flags[:5]],
                 ctypes.byref(F64()), says="Initialization Mode")
    expect_error(fmu, "fmi3EnterInitializationMode", ctypes.c_bool(False), F64(0.0), F64(0.0),
                 ctypes.c_bool(False), F64(0.0), says="Initialization Mode")
    assert raw(fmu, "fmi3ExitInitializationMode") == 0                   # Event Mode
    expect_error(fmu, "fmi3DoStep", F64(0.0), F64(0.1), ctypes.c_bool(True),
                 *[ctypes.byref(b) for b in flags[:3]], ctypes.byref(F64()), says="Event Mode")
    expect_error(fmu, "fmi3EnterStepMode", says="Model Exchange instance has no Step Mode")
    expect_error(fmu, "fmi3CompletedIntegratorStep", ctypes.c_bool(True),
                 *[ctypes.byref(b) for b in flags[:2]], says="Event Mode")
    assert raw(fmu, "fmi3EnterContinuousTimeMode") == 0
    # values that cannot be set, references that do not exist, arrays of the wrong size
    expect_error(fmu, "fmi3SetFloat64", refs(VR_X), SIZE(1), buf, SIZE(nx),
                 says="the states cannot be set in Continuous-Time Mode")
    expect_error(fmu, "fmi3SetFloat64", refs(VR_DX), SIZE(1), buf, SIZE(nx), says="calculated")
    expect_error(fmu, "fmi3GetFloat64", refs(999), SIZE(1), buf, SIZE(1),
                 says="999 is no Float64 variable")
    expect_error(fmu, "fmi3GetFloat64", refs(VR_Z), SIZE(1), buf, SIZE(1),
                 says="no Float64 variable")                     # the pendulum has no events
    expect_error(fmu, "fmi3GetInt32", refs(VR_X), SIZE(1), (ctypes.c_int32 * 1)(), SIZE(1),
                 says="no Int32 variable")
    expect_error(fmu, "fmi3GetUInt64", refs(VR_X), SIZE(1), (U64 * 1)(), SIZE(1),
                 says="no UInt64 variable")
    expect_error(fmu, "fmi3GetFloat64", refs(VR_X), SIZE(1), buf, SIZE(nx - 1),
                 says=f"{nx - 1} values given for variables of {nx} entries")
    expect_error(fmu, "fmi3GetFloat64", refs(VR_X, VR_P), SIZE(2), buf, SIZE(nx + 1),
                 says=f"for variables of {nx + n_p} entries")
    expect_error(fmu, "fmi3SetFloat64", refs(VR_P), SIZE(1), buf, SIZE(n_p + 1),
                 says=f"for variables of {n_p} entries")
    expect_error(fmu, "fmi3SetContinuousStates", buf, SIZE(nx + 1), says="values given")
    expect_error(fmu, "fmi3GetEventIndicators", buf, SIZE(1), says="values given")
    seed = (F64 * (2 * nx))(*range(2 * nx))
    expect_error(fmu, "fmi3GetDirectionalDerivative", refs(VR_DX), SIZE(1), refs(VR_X), SIZE(1),
                 seed, SIZE(nx - 1), buf, SIZE(nx), says="values given")
    expect_error(fmu, "fmi3GetAdjointDerivative", refs(VR_DX), SIZE(1), refs(VR_X), SIZE(1),
                 seed, SIZE(nx), buf, SIZE(nx + 1), says="values given")
    expect_error(fmu, "fmi3GetDirectionalDerivative", refs(VR_X), SIZE(1), refs(VR_X), SIZE(1),
                 seed, SIZE(nx), buf, SIZE(nx), says="is not der(states)")
    expect_error(fmu, "fmi3GetAdjointDerivative", refs(VR_DX), SIZE(1), refs(VR_P), SIZE(1),
                 seed, SIZE(nx), buf, SIZE(n_p), says="neither states")
    state = ctypes.c_void_p()
    assert raw(fmu, "fmi3GetFMUState", ctypes.byref(state)) == 0
    blob = (ctypes.c_uint8 * 10000)()
    expect_error(fmu, "fmi3SerializeFMUState", state, blob, SIZE(7), says="values given")
    expect_error(fmu, "fmi3SetFMUState", ctypes.c_void_p(), says="no state")
    assert raw(fmu, "fmi3FreeFMUState", ctypes.byref(state)) == 0 and not state.value
    # a NULL instance, a wrong token: no crash
    assert fmu.dll.fmi3GetFloat64(None, refs(VR_X), SIZE(1), buf, SIZE(nx)) == ERROR
    create = fmu.dll.fmi3InstantiateModelExchange
    create.restype = ctypes.c_void_p
    assert create(b"x", b"{not-the-token}", b"", ctypes.c_bool(False), ctypes.c_bool(False),
                  None, fmu.logMessage) is None
    assert b"does not match" in fmu.logged[-1][1]
    # the instance is whole after all that: its derivative is the module's
    assert raw(fmu, "fmi3SetContinuousStates", (F64 * nx)(*f["x0"]), SIZE(nx)) == 0
    assert raw(fmu, "fmi3GetContinuousStateDerivatives", buf, SIZE(nx)) == 0
    assert np.array_equal(list(buf)[:nx], mod.rhs(0.0, f["x0"], f["p"], f["r"]))
    fmu.terminate()
    expect_error(fmu, "fmi3GetContinuousStates", buf, SIZE(nx + 1), says="values given")
    fmu.freeInstance()


def test_wrong_calls_to_co_simulation_and_the_sizes(fmus):
    """Co-Simulation refuses Model Exchange's calls and bad steps; the structural
    parameters are the model's sizes, which Configuration Mode cannot change."""
    f = fmus["ball"]
    md = read_model_description(f["path"])
    fmu = FMU3Slave(guid=md.guid, unzipDirectory=extract(f["path"]),
                    modelIdentifier=md.coSimulation.modelIdentifier, instanceName="cs")
    logged = []
    fmu.instantiate(logMessage=lambda env, status, category, message:
                    logged.append((status, message)))
    fmu.logged = logged
    flags = [ctypes.c_bool() for _ in range(3)]

    def step(t, h):
        return (F64(t), F64(h), ctypes.c_bool(True), *[ctypes.byref(b) for b in flags],
                ctypes.byref(F64()))
    sizes = (U64 * 2)()
    assert raw(fmu, "fmi3GetUInt64", refs(1, 4), SIZE(2), sizes, SIZE(2)) == 0
    assert list(sizes) == [2, 2]                                  # n_states, n_event_indicators
    expect_error(fmu, "fmi3GetUInt64", refs(3), SIZE(1), sizes, SIZE(1), says="no UInt64")
    assert raw(fmu, "fmi3EnterConfigurationMode") == 0
    assert raw(fmu, "fmi3SetUInt64", refs(1), SIZE(1), (U64 * 1)(2), SIZE(1)) == 0
    expect_error(fmu, "fmi3SetUInt64", refs(1), SIZE(1), (U64 * 1)(7), SIZE(1),
                 says="fixed by the model at 2, not 7")
    expect_error(fmu, "fmi3GetFloat64", refs(VR_X), SIZE(1), (F64 * 2)(), SIZE(2),
                 says="Configuration Mode")
    assert raw(fmu, "fmi3ExitConfigurationMode") == 0
    expect_error(fmu, "fmi3DoStep", *step(0.0, 0.1), says="Instantiated")
    fmu.enterInitializationMode()
    fmu.exitInitializationMode()                                  # Step Mode
    expect_error(fmu, "fmi3SetContinuousStates", (F64 * 2)(), SIZE(2), says="Step Mode")
    expect_error(fmu, "fmi3EnterEventMode", says="without event mode")
    expect_error(fmu, "fmi3DoStep", *step(0.0, -0.1), says="must be finite and not negative")
    expect_error(fmu, "fmi3DoStep", *step(0.0, float("nan")), says="not negative")
    expect_error(fmu, "fmi3SetFloat64", refs(VR_Y), SIZE(1), (F64 * 1)(), SIZE(1),
                 says="calculated")
    expect_error(fmu, "fmi3GetOutputDerivatives", refs(VR_Y), SIZE(1), (ctypes.c_int32 * 1)(1),
                 (F64 * 1)(), SIZE(1), says="not provided")
    assert raw(fmu, "fmi3DoStep", *step(0.0, 0.5)) == 0
    x = (F64 * 2)()
    assert raw(fmu, "fmi3GetFloat64", refs(VR_X), SIZE(1), x, SIZE(2)) == 0
    ref = f["mod"].simulate((0, 0.5), f["x0"], f["p"], rtol=1e-8, atol=1e-8, t_eval=[0.5])
    assert np.abs(np.array(list(x)) - ref.x[-1]).max() < 1e-12
    assert raw(fmu, "fmi3SetFloat64", refs(VR_P), SIZE(1), (F64 * 3)(1.0, float("nan"), 0.9),
               SIZE(3)) == 0                                      # tunable: taken in Step Mode
    expect_error(fmu, "fmi3DoStep", *step(0.5, 0.1), says="the integrator's start failed")
    create = fmu.dll.fmi3InstantiateScheduledExecution
    create.restype = ctypes.c_void_p
    null = [t() for t in create.argtypes[7:]]                     # no callbacks
    assert create(b"se", md.guid.encode(), b"", ctypes.c_bool(False), ctypes.c_bool(False), None,
                  fmu.logMessage, *null) is None
    assert b"no Scheduled Execution" in logged[-1][1]
    fmu.terminate()
    fmu.freeInstance()


def calls(nx):
    """Each state-changing or state-bound function with arguments right but for the state."""
    buf, flags, t = (F64 * nx)(), [ctypes.c_bool() for _ in range(6)], F64()
    out = [ctypes.byref(b) for b in flags]
    seed = (F64 * nx)(*range(nx))
    return {
        "fmi3EnterInitializationMode": (ctypes.c_bool(False), F64(0), F64(0), ctypes.c_bool(False),
                                        F64(0)),
        "fmi3ExitInitializationMode": (),
        "fmi3EnterEventMode": (),
        "fmi3EnterContinuousTimeMode": (),
        "fmi3EnterStepMode": (),
        "fmi3EnterConfigurationMode": (),
        "fmi3ExitConfigurationMode": (),
        "fmi3Terminate": (),
        "fmi3EvaluateDiscreteStates": (),
        "fmi3UpdateDiscreteStates": (*out[:5], ctypes.byref(t)),
        "fmi3CompletedIntegratorStep": (ctypes.c_bool(True), *out[:2]),
        "fmi3SetTime": (F64(0.5),),
        "fmi3SetContinuousStates": (buf, SIZE(nx)),
        "fmi3GetContinuousStateDerivatives": (buf, SIZE(nx)),
        "fmi3GetContinuousStates": (buf, SIZE(nx)),
        "fmi3GetEventIndicators": (buf, SIZE(0)),
        "fmi3SetFloat64": (refs(VR_R), SIZE(1), buf, SIZE(1)),
        "fmi3SetUInt64": (refs(1), SIZE(1), (U64 * 1)(nx), SIZE(1)),
        "fmi3GetDirectionalDerivative": (refs(VR_DX), SIZE(1), refs(VR_X), SIZE(1), seed,
                                         SIZE(nx), buf, SIZE(nx)),
        "fmi3GetAdjointDerivative": (refs(VR_DX), SIZE(1), refs(VR_X), SIZE(1), seed, SIZE(nx),
                                     buf, SIZE(nx)),
        "fmi3DoStep": (F64(0), F64(0.1), ctypes.c_bool(True), *out[:3], ctypes.byref(t)),
    }


#: the functions each state refuses (FMI 3.0's state machine)
REFUSED = {
    "Instantiated": ["fmi3ExitInitializationMode", "fmi3EnterEventMode",
                     "fmi3EnterContinuousTimeMode", "fmi3EnterStepMode",
                     "fmi3ExitConfigurationMode", "fmi3Terminate", "fmi3EvaluateDiscreteStates",
                     "fmi3UpdateDiscreteStates", "fmi3CompletedIntegratorStep", "fmi3SetTime",
                     "fmi3SetContinuousStates", "fmi3GetContinuousStateDerivatives",
                     "fmi3GetContinuousStates", "fmi3GetEventIndicators", "fmi3SetUInt64",
                     "fmi3GetDirectionalDerivative", "fmi3GetAdjointDerivative", "fmi3DoStep"],
    "Terminated": ["fmi3EnterInitializationMode", "fmi3ExitInitializationMode",
                   "fmi3EnterEventMode", "fmi3EnterContinuousTimeMode", "fmi3EnterStepMode",
                   "fmi3EnterConfigurationMode", "fmi3ExitConfigurationMode", "fmi3Terminate",
                   "fmi3EvaluateDiscreteStates", "fmi3UpdateDiscreteStates",
                   "fmi3CompletedIntegratorStep", "fmi3SetTime", "fmi3SetContinuousStates",
                   "fmi3SetFloat64", "fmi3SetUInt64", "fmi3DoStep"],
}


@pytest.mark.parametrize("state", REFUSED)
def test_every_function_refuses_the_wrong_state(fmus, state):
    """Each function called where FMI 3.0's state machine does not allow it: fmi3Error and
    the logger's message, and the instance goes on (its derivative is the module's)."""
    f = fmus["pend"]
    mod = f["mod"]
    fmu = me_instance(f)
    if state == "Terminated":
        fmu.enterInitializationMode()
        fmu.exitInitializationMode()
        fmu.terminate()
    table = calls(mod.nx)
    for function in REFUSED[state]:
        expect_error(fmu, function, *table[function], says=f"must not be called in {state}")
    buf = (F64 * mod.nx)()
    assert raw(fmu, "fmi3GetFloat64", refs(VR_DX), SIZE(1), buf, SIZE(mod.nx)) == 0
    assert np.array_equal(list(buf), mod.rhs(0.0, f["x0"], f["p"], f["r"]))
    fmu.freeInstance()


def test_export_arguments(fmus, tmp_path):
    """An unknown FMI version and an output named as one of the FMU's own variables are
    refused before anything is written."""
    f = fmus["ball"]
    with pytest.raises(ValueError, match="fmi_version must be 2 or 3"):
        export_fmu(f["ga"], "ball4", tmp_path, fmi_version=4)
    kw = dict(f["kw"], outputs={"states": f["kw"]["outputs"]["h"]})
    with pytest.raises(ValueError, match="output 'states' takes the name"):
        export_fmu(f["ga"], "ball4", tmp_path, fmi_version=3, **kw)
    assert not any(tmp_path.iterdir())


def test_array_start_values_from_the_host(fmus):
    """FMPy sets the constants and the states as whole arrays before the run: the run is
    simulate's with those values."""
    f = fmus["pend"]
    mod = f["mod"]
    p = f["p"] * np.linspace(0.8, 1.2, len(f["p"]))
    x0 = f["x0"] + 0.2
    res = fmpy.simulate_fmu(f["path"], fmi_type="CoSimulation", stop_time=1.0,
                            output_interval=0.05, relative_tolerance=1e-10, output=["states"],
                            start_values={"constants": p, "states": x0, "inputs": [-0.5]})
    ours = mod.simulate((0, 1.0), x0, p, [-0.5], rtol=1e-10, atol=1e-10, t_eval=res["time"])
    assert np.abs(res["states"] - ours.x).max() < 1e-12
    assert np.abs(res["states"][-1] - fmpy.simulate_fmu(
        f["path"], fmi_type="CoSimulation", stop_time=1.0, output_interval=0.05,
        relative_tolerance=1e-10, output=["states"])["states"][-1]).max() > 1e-3
