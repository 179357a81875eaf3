"""Standalone C and FMI 2.0 FMUs (Model Exchange and Co-Simulation) of a model.

Both carry the very C that ``generate`` compiles for Python (the same
rendering of the same templates), so the three never drift apart.
"""
from __future__ import annotations

import os
import shutil
import tempfile
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

from . import __version__
from ._runtime import METHODS
from .build import (PORTABLE_FLAGS, _atomic_write, _prepare_dir, checked_flags, compile_library,
                    equations_key, neutral_equations)
from .emit import TEMPLATE_DIR, emit, template
from .kernel import build_programs

__all__ = ["export_c", "export_fmu"]


def _sources(eom, name, constants, specifieds, rank_rtol):
    eq = neutral_equations(eom, name, constants, specifieds)
    key = equations_key(eq, name, (f"rank_rtol={rank_rtol!r}",))
    return eq, key, emit(build_programs(eq), eq, name, key, rank_rtol=rank_rtol)


def export_c(eom, name: str, output_dir="generated", constants=None, specifieds=None,
             rank_rtol: float = 1e-9, driver: bool = True) -> Path:
    """Write a self-contained C99 library of the model: ``<name>.h``, ``<name>.c``.

    The header documents the ABI (sizes as ``<NAME>_NQ`` ... macros,
    ``<name>_rhs``, ``<name>_mass_matrix``, ``<name>_forcing``, the name
    tables, the constraint functions of a constrained model); the code is
    reentrant (no globals but constant name tables, no static buffers, no
    allocation) and needs only <math.h> and <stddef.h>. With ``driver=True`` also
    ``<name>_driver.c``, a fixed-step RK4 example program that prints a
    trajectory (its usage is at its top). Returns the folder
    ``output_dir/name``. Nothing is written if the model is refused.
    """
    eq, key, sources = _sources(eom, name, constants, specifieds, rank_rtol)
    target = _prepare_dir(output_dir, name)
    files = dict(sources.files)
    if driver:
        files[f"{name}_driver.c"] = template("driver.c").substitute(
            name=name, NAME=name.upper(), nx=eq.nq + eq.nu, np=len(eq.constants),
            nr=len(eq.specifieds))
    for fname, text in files.items():
        _atomic_write(target / fname, text)
    return target


def _guid(key: str) -> str:
    return "{%s-%s-%s-%s-%s}" % (key[:8], key[8:12], key[12:16], key[16:20], key[20:32])


def _numbers(values) -> str:
    return " ".join(f"{float(v)!r}," for v in values)


def _model_description(eq, name, guid, start, doc) -> bytes:
    """modelDescription.xml: states, derivatives, tunable parameters, inputs."""
    nx = eq.nq + eq.nu
    root = ET.Element("fmiModelDescription", fmiVersion="2.0", modelName=name, guid=guid,
                      description=doc, generationTool=f"codegen {__version__}",
                      variableNamingConvention="flat", numberOfEventIndicators="0")
    common = dict(modelIdentifier=name, canGetAndSetFMUstate="false",
                  canSerializeFMUstate="false", providesDirectionalDerivative="false")
    kinds = (ET.SubElement(root, "ModelExchange", **common),
             ET.SubElement(root, "CoSimulation", **common,
                           canHandleVariableCommunicationStepSize="true",
                           canInterpolateInputs="false", maxOutputDerivativeOrder="0"))
    for kind in kinds:
        files = ET.SubElement(kind, "SourceFiles")
        for f in (f"{name}.c", f"{name}_fmi2.c"):
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
    structure = ET.SubElement(root, "ModelStructure")
    for section in ("Derivatives", "InitialUnknowns"):
        el = ET.SubElement(structure, section)
        for i in range(nx):
            ET.SubElement(el, "Unknown", index=str(nx + i + 1))   # 1-based: the der() variables
    ET.indent(root)
    return b'<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="utf-8") + b"\n"


def _start_values(eq, start_values):
    """Start values per array from a {name: value} dict (states 0, constants 1, inputs 0)."""
    start_values = dict(start_values or {})
    known = set(eq.state_names) | set(eq.constant_names) | set(eq.specified_names)
    unknown = sorted(set(start_values) - known)
    if unknown:
        raise ValueError(f"start_values names {unknown}, which are neither states, constants "
                         f"nor specifieds of the model")
    return dict(x=[float(start_values.get(n, 0.0)) for n in eq.state_names],
                p=[float(start_values.get(n, 1.0)) for n in eq.constant_names],
                r=[float(start_values.get(n, 0.0)) for n in eq.specified_names])


#: integrators a Co-Simulation FMU can run in fmi2DoStep: simulate's adaptive ones
CS_METHODS = tuple(m for m in METHODS if m != "rk4")


def export_fmu(eom, name: str, output_dir="generated", constants=None, specifieds=None,
               start_values=None, rank_rtol: float = 1e-9, flags=PORTABLE_FLAGS,
               method: str = "dopri5", tolerance: float = 1e-8) -> Path:
    """Write ``output_dir/<name>.fmu``, an FMI 2.0 FMU for Model Exchange and
    Co-Simulation, and return its path.

    Co-Simulation runs the model's own C integrator in ``fmi2DoStep``:
    ``method`` (one of 'dopri5', 'bdf' for stiff models, 'rosenbrock',
    'rosw') at rtol = atol = the experiment's tolerance if the host gives one,
    else ``tolerance``; inputs are held over each communication step.

    Variables: the states (with their derivatives ``der(<state>)``), the
    constants as tunable parameters and the specifieds as continuous inputs,
    named exactly as ``generate``'s ``states``, ``constants`` and
    ``specifieds``. ``start_values`` ({name: value}) sets the start values
    (default 0 for states and inputs, 1 for constants). The FMU holds the C
    sources (the model and its FMI 2.0 interface) and a binary for this
    platform (binaries/linux64 on Linux x86-64). The FMI 2.0 headers come
    from templates/fmi2 (Modelica Association, 2-clause BSD).
    """
    flags = checked_flags(flags)
    if method not in CS_METHODS:
        raise ValueError(f"method must be one of {list(CS_METHODS)}, got {method!r}")
    if not (isinstance(tolerance, (int, float)) and 0 < tolerance < 1):
        raise ValueError(f"tolerance must be a number in (0, 1), got {tolerance!r}")
    eq, key, sources = _sources(eom, name, constants, specifieds, rank_rtol)
    start = _start_values(eq, start_values)
    parent = Path(output_dir).resolve()
    target = _prepare_dir(parent, f".{name}.fmu-build")
    try:
        guid = _guid(key)
        wrapper = template("fmi2_model.c").substitute(
            name=name, NAME=name.upper(), version=__version__, guid=guid,
            mass_failure=sources.mass_failure, method=f"{name.upper()}_{method.upper()}",
            method_name=method, tolerance=repr(float(tolerance)), start_states=_numbers(start["x"]),
            start_constants=_numbers(start["p"]), start_inputs=_numbers(start["r"]))
        files = dict(sources.files)
        files[f"{name}_fmi2.c"] = wrapper
        lib = compile_library(files, [f"{name}.c", f"{name}_fmi2.c"], name, flags, target,
                              include_dirs=[TEMPLATE_DIR / "fmi2"], what=f"FMU {name!r}")
        doc = (eq.origin or "codegen model")[:200]
        fd, tmp = tempfile.mkstemp(dir=parent, prefix=f".{name}.", suffix=".fmu")
        os.close(fd)
        try:
            with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
                z.writestr("modelDescription.xml", _model_description(eq, name, guid, start, doc))
                for fname, text in files.items():
                    z.writestr(f"sources/{fname}", text)
                z.write(lib, f"binaries/{_platform()}/{name}{_shared_suffix()}")
            os.chmod(tmp, 0o644)
            final = parent / f"{name}.fmu"
            os.replace(tmp, final)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
        return final
    finally:
        shutil.rmtree(target, ignore_errors=True)


def _platform() -> str:
    import platform
    import sys
    bits = "64" if sys.maxsize > 2**32 else "32"
    system = {"Linux": "linux", "Darwin": "darwin", "Windows": "win"}[platform.system()]
    return system + bits


def _shared_suffix() -> str:
    import platform
    return {"Linux": ".so", "Darwin": ".dylib", "Windows": ".dll"}[platform.system()]
