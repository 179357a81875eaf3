"""The FMI 3.0 parts of an FMU (export_fmu(..., fmi_version=3)): its variables as arrays,
its modelDescription.xml, buildDescription.xml and interface C.

The build, the start values and the zip are export_fmu's, shared with FMI 2.0; the
interface C (templates/export/fmi3_model.c.j2 and its parts fmi3_*.c.j2) drives the same
runtime on the same model descriptor as the FMI 2.0 interface does.
"""
from __future__ import annotations

import platform
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass

from ..version import __version__
from ..emit.render import TEMPLATE_DIR, render

__all__ = ["FMI3_HEADERS", "Fmi3Layout", "fmi3_layout", "fmi3_model_description",
           "fmi3_build_description", "fmi3_interface", "fmi3_platform"]

#: the vendored FMI 3.0 headers (Modelica Association, 2-clause BSD)
FMI3_HEADERS = TEMPLATE_DIR / "export" / "fmi3"

# value references: fixed ones for the scalars and arrays, the outputs from 100 on
VR_TIME, VR_NX, VR_NP, VR_NR, VR_NE = 0, 1, 2, 3, 4
VR_X, VR_DX, VR_P, VR_R, VR_Z = 10, 11, 12, 13, 14
VR_Y = 100

#: names of the FMU's own variables, which no output may take
RESERVED = ("time", "n_states", "n_constants", "n_inputs", "n_event_indicators", "states",
            "der(states)", "constants", "inputs", "event_indicators")


@dataclass(frozen=True)
class Fmi3Layout:
    """Sizes of the FMU's arrays and, per output, its shape and first entry in y."""
    nx: int
    np: int
    nr: int
    ne: int
    outputs: tuple        # (name, shape, offset) per output, in the model's order


def fmi3_layout(eq) -> Fmi3Layout:
    """The arrays of the model's FMI 3.0 FMU; a ValueError if an output takes the name of
    one of the FMU's own variables."""
    outputs, offset = [], 0
    for o in eq.outputs:
        if o.name in RESERVED:
            raise ValueError(f"output {o.name!r} takes the name of an FMI 3.0 variable of the "
                             f"FMU ({', '.join(RESERVED)}): rename it")
        size = 1
        for d in o.shape:
            size *= d
        outputs.append((o.name, tuple(o.shape), offset))
        offset += size
    return Fmi3Layout(eq.nq + eq.nu, len(eq.constants), len(eq.specifieds), len(eq.events),
                      tuple(outputs))


def fmi3_platform() -> str:
    """The FMI 3.0 platform tuple of this machine (x86_64-linux, aarch64-darwin, ...)."""
    machine = platform.machine().lower()
    arch = {"amd64": "x86_64", "x86_64": "x86_64", "arm64": "aarch64",
            "aarch64": "aarch64"}.get(machine, machine if sys.maxsize > 2**32 else "x86")
    system = {"Linux": "linux", "Darwin": "darwin", "Windows": "windows"}[platform.system()]
    return f"{arch}-{system}"


def _text(values) -> str:
    return " ".join(repr(float(v)) for v in values)


def fmi3_model_description(eq, layout: Fmi3Layout, name: str, token: str, start: dict, doc: str,
                           jacobian: bool, early_return: bool) -> bytes:
    """modelDescription.xml (FMI 3.0) of Model Exchange and Co-Simulation: the states, their
    derivatives, the constants (tunable) and the inputs as Float64 arrays sized by
    structural parameters, each output a variable of its shape, the event functions as one
    event-indicator array; directional and adjoint derivatives where the model has its
    analytic Jacobian; FMU state get, set and serialization."""
    root = ET.Element("fmiModelDescription", fmiVersion="3.0", modelName=name,
                      instantiationToken=token, description=doc,
                      generationTool=f"codegen {__version__}", variableNamingConvention="flat")
    derivatives = "true" if jacobian else "false"
    common = dict(modelIdentifier=name, canGetAndSetFMUState="true", canSerializeFMUState="true",
                  providesDirectionalDerivatives=derivatives,
                  providesAdjointDerivatives=derivatives)
    ET.SubElement(root, "ModelExchange", **common)
    ET.SubElement(root, "CoSimulation", **common, canHandleVariableCommunicationStepSize="true",
                  maxOutputDerivativeOrder="0", hasEventMode="true",
                  mightReturnEarlyFromDoStep="true" if early_return else "false")
    ET.SubElement(root, "DefaultExperiment", startTime="0", stopTime="1")
    variables = ET.SubElement(root, "ModelVariables")
    ET.SubElement(variables, "Float64", name="time", valueReference=str(VR_TIME),
                  causality="independent", variability="continuous",
                  description="the independent variable")
    arrays = [(VR_NX, "n_states", layout.nx), (VR_NP, "n_constants", layout.np),
              (VR_NR, "n_inputs", layout.nr), (VR_NE, "n_event_indicators", layout.ne)]
    for vr, vname, size in arrays:
        if size:
            ET.SubElement(variables, "UInt64", name=vname, valueReference=str(vr),
                          causality="structuralParameter", variability="fixed", start=str(size),
                          description="the size of an array, fixed by the model")

    def array(vname, vr, size_vr, description, **attrs):      # a Float64 array variable
        v = ET.SubElement(variables, "Float64", name=vname, valueReference=str(vr),
                          description=description, **attrs)
        ET.SubElement(v, "Dimension", valueReference=str(size_vr))

    def names(values):                                        # an array's entries, named
        return "[" + ", ".join(values) + "]"
    array("states", VR_X, VR_NX, names(eq.state_names), causality="local",
          variability="continuous", initial="exact", start=_text(start["x"]))
    array("der(states)", VR_DX, VR_NX, "d states / dt", causality="local",
          variability="continuous", initial="calculated", derivative=str(VR_X))
    if layout.np:
        array("constants", VR_P, VR_NP, names(eq.constant_names), causality="parameter",
              variability="tunable", start=_text(start["p"]))
    if layout.nr:
        array("inputs", VR_R, VR_NR, names(eq.specified_names), causality="input",
              variability="continuous", start=_text(start["r"]))
    if layout.ne:
        array("event_indicators", VR_Z, VR_NE, names(e.name for e in eq.events),
              causality="local", variability="continuous", initial="calculated")
    for i, (oname, shape, _) in enumerate(layout.outputs):
        v = ET.SubElement(variables, "Float64", name=oname, valueReference=str(VR_Y + i),
                          causality="output", variability="continuous", initial="calculated")
        for d in shape:
            ET.SubElement(v, "Dimension", start=str(d))
    structure = ET.SubElement(root, "ModelStructure")
    outputs = [VR_Y + i for i in range(len(layout.outputs))]
    for vr in outputs:
        ET.SubElement(structure, "Output", valueReference=str(vr))
    ET.SubElement(structure, "ContinuousStateDerivative", valueReference=str(VR_DX))
    for vr in [VR_DX, *outputs]:
        ET.SubElement(structure, "InitialUnknown", valueReference=str(vr))
    if layout.ne:
        ET.SubElement(structure, "EventIndicator", valueReference=str(VR_Z))
    ET.indent(root)
    return b'<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="utf-8") + b"\n"


def fmi3_build_description(name: str, source_files: list) -> bytes:
    """sources/buildDescription.xml: the C99 files that build the FMU's binary (the model,
    its FMI 3.0 interface, the runtime; the FMI 3.0 headers beside them), with libm."""
    root = ET.Element("fmiBuildDescription", fmiVersion="3.0")
    config = ET.SubElement(root, "BuildConfiguration", modelIdentifier=name)
    files = ET.SubElement(config, "SourceFileSet", language="C99")
    for f in source_files:
        ET.SubElement(files, "SourceFile", name=f)
    ET.SubElement(files, "IncludeDirectory", name=".")
    ET.SubElement(config, "Library", name="m")
    ET.indent(root)
    return b'<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="utf-8") + b"\n"


def fmi3_interface(layout: Fmi3Layout, **settings) -> str:
    """The FMI 3.0 interface C of the model: ``settings`` are the FMI 2.0 interface's (name,
    guid, method, tolerance, start values, impact events), the layout sizes its arrays."""
    return render("export/fmi3_model.c.j2", layout=layout,
                  vr=dict(TIME=VR_TIME, NX=VR_NX, NP=VR_NP, NR=VR_NR, NE=VR_NE, X=VR_X, DX=VR_DX,
                          P=VR_P, R=VR_R, Z=VR_Z, Y=VR_Y), **settings)
