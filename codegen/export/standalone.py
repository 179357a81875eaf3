"""Standalone C and FMI 2.0 / 3.0 FMUs (Model Exchange and Co-Simulation) of a model.

Both carry the very C that ``generate`` compiles for Python (the same
rendering of the same templates) and, beside it, the runtime's sources as
plain files (templates/runtime): the model is its descriptor, the runtime
drives it. Several models' C link into one program with one copy of the
runtime.
"""
from __future__ import annotations

import math
import shutil
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

from ..version import __version__
from ..abi import METHOD_INFO, METHODS, STATUS, STATUS_CODE, method_applies
from ..pipeline.build import model_sources
from ..pipeline.cache import sources_key
from ..pipeline.compiler import compile_library, shared_suffix
from ..equations.equations_of_motion import DEFAULTS
from ..emit.render import RUNTIME_C, TEMPLATE_DIR, render, runtime_sources
from ..pipeline.files import atomic_path, prepare_dir, write_all
from ..pipeline.options import Options
from ..equations.signals import Signals, entry_names
from .fmi3 import (FMI3_HEADERS, fmi3_build_description, fmi3_interface, fmi3_layout,
                   fmi3_model_description, fmi3_platform)

__all__ = ["export_c", "export_fmu", "CS_METHODS"]


def export_c(eom, name: str, output_dir="generated", constants=None, specifieds=None,
             rank_rtol: float = Options.rank_rtol, driver: bool = True,
             recursive=Options.recursive, jacobian: bool | None = Options.jacobian,
             parameter_jacobian: bool = Options.parameter_jacobian, outputs=None, events=None,
             impacts=None, control=None) -> Path:
    """Write a self-contained C99 library of the model into ``output_dir/name``.

    Files: ``<name>.h`` and ``<name>.c`` (the model: its functions and the
    descriptor ``<name>_model()``), the runtime (``cg_runtime.h`` with its
    API: cg_rhs, cg_mass_matrix, cg_inverse_dynamics, the integrators; ``cg_model.h``, the
    contract: the descriptor's type, the status codes, the methods; ``cg_*.c``,
    of which ``cg_fused.c`` is only for fused builds), and with ``driver=True``
    ``<name>_driver.c``, an example program that runs the runtime's
    integrator, RK4 or any method by name (its usage is at its top). Compile the model with the
    runtime: ``cc -O2 $(ls *.c | grep -v cg_fused) -lm`` (a large model's solve is in
    ``<name>_solve.c``, beside ``<name>.c`` and the driver). The code is
    reentrant (no globals but constant tables, no static buffers, no
    allocation). All files are written or none; nothing is written if the
    model is refused. Returns the folder. The analytic Jacobian (models
    without run-time constraints; see Options.jacobian) is
    ``cg_jacobian(<name>_model(), t, x, p, r, J, Jr)``, CG_ERR_NO_JACOBIAN
    where the model has none; with parameter_jacobian=True the sensitivities
    to the constants are ``cg_parameter_jacobian(<name>_model(), t, x, p, r, Jp)``.
    outputs, events, impacts and control as in ``generate``: ``cg_outputs`` evaluates
    the outputs (the driver prints them after the states), the integrators locate the
    events (``cg_integrator_events``), ``cg_impact`` applies an impact, and a control
    law makes the exported model the closed loop.
    """
    options = Options(rank_rtol=rank_rtol, recursive=recursive, jacobian=jacobian,
                      parameter_jacobian=parameter_jacobian)
    eq, sources = model_sources(eom, name, constants, specifieds, options,
                                signals=Signals(outputs or {}, events or {}, impacts or {},
                                                control or {}))
    target = prepare_dir(output_dir, name)
    files = dict(sources.files)
    files.update(runtime_sources())
    if driver:
        files[f"{name}_driver.c"] = render("export/driver.c.j2", name=name, NAME=name.upper(),
                                           nx=eq.nq + eq.nu, np=len(eq.constants),
                                           nr=len(eq.specifieds),
                                           ny=len(entry_names(eq.outputs)))
    write_all(target, files)
    return target


def _guid(key: str) -> str:
    return "{%s-%s-%s-%s-%s}" % (key[:8], key[8:12], key[12:16], key[16:20], key[20:32])


def _numbers(values) -> str:
    return " ".join(f"{float(v)!r}," for v in values)


def _model_description(eq, sources, name, guid, start, doc, jacobian: bool,
                       outputs: list) -> bytes:
    """modelDescription.xml: states, derivatives, tunable parameters, inputs, outputs;
    the event functions as event indicators; directional derivatives where the model has
    its analytic Jacobian."""
    nx = eq.nq + eq.nu
    root = ET.Element("fmiModelDescription", fmiVersion="2.0", modelName=name, guid=guid,
                      description=doc, generationTool=f"codegen {__version__}",
                      variableNamingConvention="flat",
                      numberOfEventIndicators=str(len(eq.events)))
    common = dict(modelIdentifier=name, canGetAndSetFMUstate="false",
                  canSerializeFMUstate="false",
                  providesDirectionalDerivative="true" if jacobian else "false")
    kinds = (ET.SubElement(root, "ModelExchange", **common),
             ET.SubElement(root, "CoSimulation", **common,
                           canHandleVariableCommunicationStepSize="true",
                           canInterpolateInputs="false", maxOutputDerivativeOrder="0"))
    for kind in kinds:
        files = ET.SubElement(kind, "SourceFiles")
        for f in [*sources.c_files, f"{name}_fmi2.c", *RUNTIME_C]:
            ET.SubElement(files, "File", name=f)
    ET.SubElement(root, "DefaultExperiment", startTime="0", stopTime="1")
    variables = ET.SubElement(root, "ModelVariables")

    def variable(vname, vr, causality, variability, initial=None, **real):
        attrs = dict(name=vname, valueReference=str(vr), causality=causality,
                     variability=variability)
        if initial:
            attrs["initial"] = initial
        sv = ET.SubElement(variables, "ScalarVariable", **attrs)
        ET.SubElement(sv, "Real", **{k: str(v) for k, v in real.items()})

    for i, n in enumerate(eq.state_names):
        variable(n, i, "local", "continuous", "exact", start=repr(start["x"][i]))
    for i, n in enumerate(eq.state_names):
        variable(f"der({n})", nx + i, "local", "continuous", "calculated", derivative=i + 1)
    for i, n in enumerate(eq.constant_names):
        variable(n, 2 * nx + i, "parameter", "tunable", "exact", start=repr(start["p"][i]))
    for i, n in enumerate(eq.specified_names):
        variable(n, 2 * nx + len(eq.constant_names) + i, "input", "continuous",
                 start=repr(start["r"][i]))
    first_output = 2 * nx + len(eq.constant_names) + len(eq.specified_names)
    for i, n in enumerate(outputs):
        variable(n, first_output + i, "output", "continuous", "calculated")
    structure = ET.SubElement(root, "ModelStructure")
    # 1-based indices of the variables as listed: the outputs come last, the der() after x
    output_indices = [first_output + i + 1 for i in range(len(outputs))]
    derivatives = [nx + i + 1 for i in range(nx)]
    for section, indices in (("Outputs", output_indices), ("Derivatives", derivatives),
                             ("InitialUnknowns", derivatives + output_indices)):
        if indices:
            el = ET.SubElement(structure, section)
            for index in indices:
                ET.SubElement(el, "Unknown", index=str(index))
    ET.indent(root)
    return b'<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="utf-8") + b"\n"


def _start_values(eq, start_values):
    """Start values per array from a {name: value} dict (states 0, constants 1 or their
    documented default, inputs 0); each a finite number, else a ValueError naming it."""
    start_values = dict(start_values or {})
    known = set(eq.state_names) | set(eq.constant_names) | set(eq.specified_names)
    unknown = sorted(set(start_values) - known)
    if unknown:
        raise ValueError(f"start_values names {unknown}, which are neither states, constants "
                         f"nor specifieds of the model")

    def value(n, default):
        v = start_values.get(n, default)
        try:
            v = float(v)
        except (TypeError, ValueError):
            raise ValueError(f"start value of {n!r} must be a number, got {v!r}") from None
        if not math.isfinite(v):
            raise ValueError(f"start value of {n!r} must be finite, got {v!r}")
        return v
    return dict(x=[value(n, 0.0) for n in eq.state_names],
                p=[value(n, DEFAULTS.get(n, 1.0)) for n in eq.constant_names],
                r=[value(n, 0.0) for n in eq.specified_names])


#: integrators a Co-Simulation FMU can run in fmi2DoStep: every one of simulate's
CS_METHODS = tuple(METHODS)


def _platform() -> str:
    import platform
    import sys
    bits = "64" if sys.maxsize > 2**32 else "32"
    system = {"Linux": "linux", "Darwin": "darwin", "Windows": "win"}[platform.system()]
    return system + bits


def export_fmu(eom, name: str, output_dir="generated", constants=None, specifieds=None,
               start_values=None, rank_rtol: float = Options.rank_rtol, flags=Options.flags,
               method: str = "dopri5", tolerance: float = 1e-8, recursive=Options.recursive,
               jacobian: bool | None = Options.jacobian, dt: float | None = None,
               outputs=None, events=None, impacts=None, control=None,
               fmi_version: int = 2) -> Path:
    """Write ``output_dir/<name>.fmu``, an FMI 2.0 FMU for Model Exchange and
    Co-Simulation (``fmi_version=3``: FMI 3.0, see below), and return its path.

    Co-Simulation runs the runtime's integrator in ``fmi2DoStep``: ``method``
    (one of 'dopri5', 'bdf' for stiff models, 'rosenbrock', 'rosw'; or with
    a fixed step ``dt``, 'rk4' and, for closed loops through singular
    positions, 'ali3p') at rtol = atol = the experiment's tolerance if the
    host gives one, else ``tolerance`` (for 'ali3p', the positions'
    convergence); inputs are held over each communication step, and a fixed
    step is shortened or stretched to land on each communication point.

    Variables: the states (with their derivatives ``der(<state>)``), the
    constants as tunable parameters and the specifieds as continuous inputs,
    named exactly as ``generate``'s ``states``, ``constants`` and
    ``specifieds``. ``start_values`` ({name: finite number}) sets the start
    values (default 0 for states and inputs, 1 for constants). The FMU holds
    the C sources (the model, the runtime, the FMI 2.0 interface) and a
    binary for this platform (binaries/linux64 on Linux x86-64). The FMI 2.0
    headers come from templates/fmi2 (Modelica Association, 2-clause BSD).
    A failed build keeps its sources in ``output_dir/<name>.fmu-failed-build``.
    With the model's analytic Jacobian (no run-time constraints; see
    Options.jacobian) the FMU provides directional derivatives
    (fmi2GetDirectionalDerivative) of the state derivatives with respect to
    the states and the inputs.

    outputs, events, impacts and control as in ``generate``: the outputs are
    ``causality="output"`` variables (named as ``mod.outputs``' entries: ``T``,
    ``p[0]``, ``R[0,1]``), the event functions are its event indicators
    (``fmi2GetEventIndicators``), and an impact applies when its event function has
    changed sign (or come within 1e-6 of 0 from its value at the last step) and the
    contact point approaches: in Model Exchange at the host's event
    (``fmi2NewDiscreteStates``), in Co-Simulation at the event the integrator locates
    within ``fmi2DoStep``. A control law makes the FMU the closed loop.

    ``fmi_version=3`` writes the same model as an FMI 3.0 FMU (Model Exchange and
    Co-Simulation, the same runtime and settings; codegen/export/fmi3.py): array variables
    ``states``, ``der(states)``, ``constants`` and ``inputs`` sized by structural
    parameters, each output one variable of its shape, the event functions as the array
    ``event_indicators``; directional and adjoint derivatives
    (``fmi3GetDirectionalDerivative``, ``fmi3GetAdjointDerivative``) of ``der(states)``
    with respect to ``states`` and ``inputs``; FMU states (get, set, serialize); impacts
    in Event Mode (``fmi3UpdateDiscreteStates``), and in Co-Simulation with event mode and
    early return the step ends at a located impact for the host's Event Mode; and
    ``sources/buildDescription.xml`` with the FMI 3.0 headers, so that the sources build
    the binary anew.
    """
    options = Options(flags=flags, rank_rtol=rank_rtol, recursive=recursive, jacobian=jacobian)
    if fmi_version not in (2, 3):
        raise ValueError(f"fmi_version must be 2 or 3, got {fmi_version!r}")
    if method not in CS_METHODS:
        raise ValueError(f"method must be one of {list(CS_METHODS)}, got {method!r}")
    fixed = METHOD_INFO[method].fixed_step
    if fixed and not (isinstance(dt, (int, float)) and 0 < dt < math.inf):
        raise ValueError(f"method {method!r} needs a positive, finite step dt, got {dt!r}")
    if not fixed and dt is not None:
        raise ValueError(f"dt is for the fixed-step methods "
                         f"{[m for m, i in METHOD_INFO.items() if i.fixed_step]}, not {method!r}")
    if not (isinstance(tolerance, (int, float)) and 0 < tolerance < 1):
        raise ValueError(f"tolerance must be a number in (0, 1), got {tolerance!r}")
    eq, sources = model_sources(eom, name, constants, specifieds, options,
                                signals=Signals(outputs or {}, events or {}, impacts or {},
                                                control or {}))
    # what cg_integrator_init asks of the model, known before its build: no FMU that
    # could not run is written
    if not method_applies(method, sources.flags):
        raise ValueError(f"model {name!r}: {STATUS[STATUS_CODE['CG_ERR_METHOD']]}")
    layout = fmi3_layout(eq) if fmi_version == 3 else None
    start = _start_values(eq, start_values)
    key = sources_key(sources, options)
    parent = Path(output_dir).resolve()
    target = prepare_dir(parent, f".{name}.fmu-build")
    try:
        guid = _guid(key)
        impact_events = [k for k, e in enumerate(eq.events)
                         if any(i.event == e.name for i in eq.impacts)]
        settings = dict(name=name, NAME=name.upper(), version=__version__, guid=guid,
                        method=f"CG_{method.upper()}", method_name=method,
                        dt=repr(float(dt)) if fixed else "0.0",
                        tolerance=repr(float(tolerance)), start_states=_numbers(start["x"]),
                        start_constants=_numbers(start["p"]), start_inputs=_numbers(start["r"]),
                        impact_events=impact_events)
        files = dict(sources.files)
        files.update(runtime_sources())
        interface = f"{name}_fmi{fmi_version}.c"
        c_files = [*sources.c_files, interface, *RUNTIME_C]
        doc = (eq.origin or "codegen model")[:200]
        if fmi_version == 2:
            files[interface] = render("export/fmi2_model.c.j2", **settings)
            headers = TEMPLATE_DIR / "export" / "fmi2"
        else:
            files[interface] = fmi3_interface(layout, **settings)
            headers = FMI3_HEADERS
            # a source FMU: the headers beside the sources, the build described
            files.update({h.name: h.read_text() for h in sorted(headers.glob("*.h"))})
            files["buildDescription.xml"] = fmi3_build_description(name, c_files).decode()
        lib = compile_library(files, c_files, name, options.flags, target,
                              include_dirs=[headers], what=f"FMU {name!r}",
                              failed_dir=parent / f"{name}.fmu-failed-build",
                              file_flags=sources.file_flags)
        final = parent / f"{name}.fmu"
        with atomic_path(final) as tmp, zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
            if fmi_version == 2:
                description = _model_description(eq, sources, name, guid, start, doc,
                                                 sources.jacobian, entry_names(eq.outputs))
                binary = f"binaries/{_platform()}/{name}{shared_suffix()}"
            else:
                description = fmi3_model_description(eq, layout, name, guid, start, doc,
                                                     sources.jacobian, bool(impact_events))
                binary = f"binaries/{fmi3_platform()}/{name}{shared_suffix()}"
            z.writestr("modelDescription.xml", description)
            for fname, text in sorted(files.items()):
                z.writestr(f"sources/{fname}", text)
            z.write(lib, binary)
        return final
    finally:
        shutil.rmtree(target, ignore_errors=True)
