"""The pipeline of a compiled model: form, check, program, emit, then build and load.

``model_sources`` goes from a formed model to its C sources (nothing is
written); ``generate`` forms the model, takes its key and looks it up in the cache
(codegen.pipeline.cache) before the CSE and the emission, which only a miss runs, then
builds and returns the loaded model. The compiler is in codegen.pipeline.compiler, the
atomic writes in codegen.pipeline.files, the names' checks in codegen.pipeline.names.
"""
from __future__ import annotations

from .cache import cached, equations_key, install, load, mass_digest, model_fields
from .compiler import host_flags
from ..emit.sources import emit
from ..equations.equations_of_motion import EquationsOfMotion
from ..formulation.equations_of import equations_of
from .files import prepare_dir
from ..algorithms.plan import build_programs, planned_equations
from .names import check_model_name, check_variable_names
from .options import PORTABLE_FLAGS, Options
from ..progress import Stages
from ..equations.signals import Signals, attach

__all__ = ["generate", "model_sources", "neutral_equations", "equations_sources",
           # importable from here as before their moves to codegen.pipeline.cache and codegen.pipeline.compiler
           "load", "host_flags", "PORTABLE_FLAGS"]


def neutral_equations(eom, name: str, constants=None, specifieds=None,
                      signals: Signals = Signals()) -> EquationsOfMotion:
    """The checked neutral equations of eom for a model called name (no file is touched),
    with its outputs, events, impacts and control laws (codegen.equations.signals)."""
    check_model_name(name)
    eq = eom if isinstance(eom, EquationsOfMotion) else equations_of(eom, constants, specifieds)
    if not eq.u:
        raise ValueError(f"model {name!r} has no speeds: there is nothing to integrate")
    check_variable_names(eq)
    return attach(eq, eom, signals)


def equations_sources(eq: EquationsOfMotion, name: str, options: Options = Options(),
                      stages: Stages = None):
    """The Sources of neutral equations (neutral_equations'): the plan and its CSE, then
    the emission; stages (codegen.progress.Stages) reports CSE and emitting."""
    stages = stages or Stages(False)
    with stages("CSE"):
        eq = planned_equations(eq, options.recursive)
        programs = build_programs(eq, options.unrolled_limit, options.jacobian,
                                  options.parameter_jacobian, options.recursive)
    with stages("emitting"):
        return emit(programs, eq, name, options.rank_rtol, options.fused)


def model_sources(eom, name: str, constants=None, specifieds=None,
                  options: Options = Options(), stages: Stages = None,
                  signals: Signals = Signals()) -> tuple:
    """(neutral equations, Sources) of a model: everything short of compiling;
    stages (codegen.progress.Stages) reports forming, CSE and emitting."""
    stages = stages or Stages(False)
    with stages("forming"):
        eq = neutral_equations(eom, name, constants, specifieds, signals)
    return eq, equations_sources(eq, name, options, stages)


def generate(eom, name: str, constants=None, specifieds=None, output_dir="generated",
             flags=Options.flags, force: bool = False, rank_rtol: float = Options.rank_rtol,
             recursive=Options.recursive, unrolled_limit: int = Options.unrolled_limit,
             fused: bool = Options.fused, jacobian: bool | None = Options.jacobian,
             parameter_jacobian: bool = Options.parameter_jacobian, progress: bool = False,
             outputs=None, events=None, impacts=None, control=None,
             budget: float | None = Options.budget):
    """Generate, compile and load the dynamics of a formed model.

    Parameters
    ----------
    eom : GibbsAppellMethod, KanesMethod (formed) or EquationsOfMotion
    name : str
        A C identifier of at most 64 characters; names the files, the C
        functions and the folder.
    constants : list of Symbols, optional
        The order of p. Default: the order the model declares, where eom was made
        from a Model's kwargs (``GibbsAppellMethod(**model.kwargs)`` or a formed
        ``KanesMethod(**model.kwargs)``: ``model.constants``, then any other
        constant sorted by name); where nothing is declared (a method built from
        its own arguments), the equations' free symbols sorted by name.
    specifieds : list of functions of time, optional
        The order of r. Default: as for constants, ``model.specifieds`` where a
        Model declares them; otherwise the functions of time that are not states
        (and their derivatives, named ``<f>_d``), sorted by name.
    output_dir : path
        Parent folder; the model goes to ``output_dir/name/``.
    force : bool
        Rebuild even if the cache has this model.
    flags, rank_rtol, recursive, unrolled_limit, fused, jacobian, parameter_jacobian
        The code-generation options, with the defaults of
        :class:`codegen.pipeline.options.Options`; flags default to ``PORTABLE_FLAGS``,
        ``codegen.pipeline.compiler.host_flags()`` adds -march=native.
    progress : bool or codegen.progress.Stages
        Print each stage as it finishes, with its time (forming, CSE, emitting,
        compiling), on stderr (or through the given Stages).
    outputs : dict, optional
        ``{name: expression}`` of t, the coordinates and speeds (functions of time,
        q' allowed), the constants and the inputs, evaluated in C at every output
        time of a run (``SimulationResult.outputs``) and by ``mod.outputs``. A SymPy
        Matrix keeps its shape: a frame's orientation ``N.dcm(A)`` (3 x 3), a
        point's position ``P.pos_from(O).to_matrix(N)`` (3,). Ready outputs by name:
        ``"kinetic_energy"``, ``"potential_energy"`` (the bodies' own, or
        ``codegen.potential_energy(loads, origin, frame)`` for constant forces) and
        ``"constraint_forces"`` (run-time constraints).
    events : dict, optional
        ``{name: g}``: event functions whose sign changes ``simulate`` locates in C
        (``events=`` of simulate sets their direction and whether they end the run).
    impacts : dict, optional
        ``{event name: (point, normal, restitution)}``: at that event, Newton's
        impact law at the point along the normal (a Vector, or a list of them: a
        plastic, sticking contact with restitution 0), formed from the model's
        partial velocities and mass matrix, applied in C before the run goes on.
        The event's function is the contact's gap (positive while the point is
        clear; by default its event is located falling, and is terminal), and a
        point that does not approach along the first normal is left alone.
    control : dict, optional
        ``{input: law}`` (the input as its function of time or its name, the law an
        expression like an output's): the closed loop compiled in; the input leaves
        r, and the standalone C and the FMU are the closed-loop model.
    budget : float, optional
        Seconds the build may take (forming to compiling, wall clock). A model
        that would take longer stops with :class:`codegen.BudgetError`, whose
        message names the stage; nothing is written. None (the default): no limit.

    Returns
    -------
    CompiledModel
        With ``rhs``, ``mass_matrix``, ``forcing``, ``simulate``, ``states``,
        ``constants``, ``specifieds``, ``source_dir`` (see :class:`codegen.runtime.compiled_model.CompiledModel`).
    """
    options = Options(flags=flags, rank_rtol=rank_rtol, recursive=recursive,
                      unrolled_limit=unrolled_limit, fused=fused, jacobian=jacobian,
                      parameter_jacobian=parameter_jacobian, budget=budget)
    stages = progress if isinstance(progress, Stages) else Stages(progress)
    if options.budget is not None:
        stages.budget, stages.what = options.budget, f"generating model {name!r}"
    signals = Signals(outputs or {}, events or {}, impacts or {}, control or {})
    with stages("forming"):
        eq = neutral_equations(eom, name, constants, specifieds, signals)
    # the key is the formed model's, so that a hit skips the CSE and the emission
    key = equations_key(eq, name, options)
    target = prepare_dir(output_dir, name)
    if not force:
        hit = cached(target, key, mass=lambda: mass_digest(eq, form=True))
        if hit is not None:
            stages.line(f"{'cached':<12}{target}")
            return hit
    sources = equations_sources(eq, name, options, stages)
    return install(target, name, key, sources.files, sources.c_files, options.flags,
                   model_fields(eq, sources, options), stages, sources.file_flags)
