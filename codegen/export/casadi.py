"""The compiled dynamics as CasADi external functions, with exact first and second derivatives.

``casadi_function(mod, eom)`` compiles the model's C (the very files ``mod`` runs), the
runtime and a wrapper rendered from ``templates/export/casadi.c.j2`` into one library and
loads it with ``casadi.external``: x' = f(x, r, p) in the module's orders. CasADi finds the
derivatives by name (casadi/core/external.cpp):

- ``jac_<name>``: the analytic Jacobian (``cg_jacobian``), with the structural zeros of
  ∂x'/∂(x, r) as its sparsity;
- ``adj1_<name>``: Jᵀλ, which CasADi takes for gradients (reverse mode);
- ``jac_adj1_<name>``: the Hessian of λᵀx' (what IPOPT's exact Hessian asks for), from the
  generated second-derivative program (codegen.algorithms.hessian) with u' and μ = M⁻ᵀλ_u
  solved in C. Exact: no finite differences anywhere.

No ``fwd1_<name>``: CasADi would prefer it to ``jac_<name>`` and call it once per direction.
``export_casadi(eom, name, directory)`` writes the same sources (and the library) standalone.
"""
from __future__ import annotations

import hashlib
import shutil
import tempfile
from pathlib import Path

from ..algorithms.hessian import BLOCKS, second_derivative_program
from ..pipeline.compiler import compile_library, shared_suffix
from ..pipeline.files import atomic_path, prepare_dir, write_all
from ..pipeline.options import Options
from ..pipeline.build import model_sources, neutral_equations
from ..emit.printer import CPrinter
from ..emit.render import render, runtime_sources

__all__ = ["CASADI_FLAGS", "casadi_function", "casadi_sources", "export_casadi", "rk4_step"]

#: the wrapper's build: -fvisibility=hidden keeps the runtime's cg_* symbols inside the
#: library, so that two models' libraries load side by side
CASADI_FLAGS = ("-O2", "-fno-math-errno", "-fvisibility=hidden")


def _ccs(nrow: int, ncol: int, entries) -> list:
    """CasADi's compressed-column sparsity [nrow, ncol, colind[ncol + 1], row[nnz]]
    (the canonical form: colind[0] == 1 would mean dense)."""
    cols = [sorted({r for r, c in entries if c == j}) for j in range(ncol)]
    colind, rows = [0], []
    for rs in cols:
        rows += rs
        colind.append(len(rows))
    return [nrow, ncol, *colind, *rows]


def _program_lines(program) -> list:
    """The second-derivative program as C statements (inputs read from x, p, r, a, mu, lq)."""
    printer = CPrinter(program.names)
    lines = [f"const double {i.name} = {i.array}[{i.index}];" for i in program.inputs]
    for sym, expr in program.temporaries:
        lines.append(f"const double {printer.expression(sym)} = {printer.expression(expr)};")
    for array, exprs in program.outputs:
        lines += [f"{array}[{k}] = {printer.expression(e)};" for k, e in enumerate(exprs)]
    used = {i.array for i in program.inputs}
    lines += [f"(void){a};" for a in ("x", "p", "r", "a", "mu", "lq") if a not in used]
    return lines


def casadi_sources(eq, name: str, hessian: bool = True, parameters: bool = False) -> str:
    """The wrapper's C (``<name>_casadi.c``) for the neutral equations eq of model name.
    hessian: also jac_adj1_<name> (exact second derivatives); parameters: differentiate p
    too (the model's C then needs its parameter Jacobian)."""
    blocks = ("x", "r", "p") if parameters else ("x", "r")
    sd = second_derivative_program(eq, blocks)
    nq, nu = eq.nq, eq.nu
    n = {"x": nq + nu, "r": len(eq.specifieds), "p": len(eq.constants)}
    doff, off = {}, 0
    for b in BLOCKS:
        if b in blocks:
            doff[b], off = off, off + n[b]
    nx, nd = n["x"], sd.nd
    sparsities, index = [], {}

    def sp(pattern: list) -> int:
        key = tuple(pattern)
        if key not in index:
            index[key] = len(sparsities)
            sparsities.append(pattern)
        return index[key]

    def jblock(b):            # ∂x'/∂b
        if b not in doff:
            return set()
        return {(i, k - doff[b]) for i, k in sd.jacobian if doff[b] <= k < doff[b] + n[b]}

    def hblock(o, w):         # ∂²(λᵀx')/∂o∂w
        if o not in doff or w not in doff:
            return set()
        return {(k - doff[o], l - doff[w]) for k, l in sd.hessian
                if doff[o] <= k < doff[o] + n[o] and doff[w] <= l < doff[w] + n[w]}

    dense = {b: sp(_ccs(n[b], 1, [(i, 0) for i in range(n[b])])) for b in BLOCKS}
    s_xdot = sp(_ccs(nx, 1, [(i, 0) for i in range(nx)]))
    s_out = sp(_ccs(nx, 1, []))           # out_xdot: its size only (CasADi then passes nothing)
    jac_sp = [sp(_ccs(nx, n[b], jblock(b))) for b in BLOCKS]
    diff = [1 if b in doff else 0 for b in BLOCKS]
    base = [("x", dense["x"]), ("r", dense["r"]), ("p", dense["p"]), ("out_xdot", s_out)]
    nzv = sum(n.values())
    functions = [
        dict(name=name, body="f", inputs=base[:3], outputs=[("xdot", s_xdot)], diff_in=diff,
             sz_w=nzv + nx),
        dict(name=f"jac_{name}", body="jac_f", inputs=base, diff_in=diff + [0],
             outputs=[(f"jac_xdot_{b}", s) for b, s in zip(BLOCKS, jac_sp)],
             sz_w=nzv + nx * nd + nx * nzv),
        dict(name=f"adj1_{name}", body="adj1_f", inputs=base + [("adj_xdot", s_xdot)],
             diff_in=diff + [0, 1], outputs=[(f"adj_{b}", dense[b]) for b in BLOCKS],
             sz_w=nzv + nx + nx * nd + nx * nzv),
    ]
    ja_sp = []
    if hessian:
        for o in BLOCKS:
            for w in (*BLOCKS, "out_xdot", "adj_xdot"):
                if w == "out_xdot":
                    ja_sp.append(sp(_ccs(n[o], nx, [])))
                elif w == "adj_xdot":
                    ja_sp.append(sp(_ccs(n[o], nx, [(b, a) for a, b in jblock(o)])))
                else:
                    ja_sp.append(sp(_ccs(n[o], n[w], hblock(o, w))))
        functions.append(dict(
            name=f"jac_adj1_{name}", body="jac_adj1_f",
            inputs=base + [("adj_xdot", s_xdot)] + [(f"out_adj_{b}", sp(_ccs(n[b], 1, [])))
                                                     for b in BLOCKS],
            outputs=[(f"jac_adj_{o}_{w}", ja_sp[5 * a + k]) for a, o in enumerate(BLOCKS)
                     for k, w in enumerate((*BLOCKS, "out_xdot", "adj_xdot"))],
            diff_in=diff + [0, 1, 0, 0, 0],
            sz_w=(nzv + 2 * nx + nx * nd + nx * nzv + nu * nu + nu + nd * (nd + 1) // 2
                  + nu * nd + nd * nd)))
    return render("export/casadi.c.j2", name=name, model_c=[f"{name}.c"], nq=nq, nu=nu,
                  nx=nx, nr=n["r"], np=n["p"], nd=nd, blocks=blocks, hessian=hessian,
                  sparsities=sparsities, doff=[doff.get(b, -1) for b in BLOCKS],
                  jac_sp=[f"cgx_s{i}" for i in jac_sp], ja_sp=[f"cgx_s{i}" for i in ja_sp],
                  second=_program_lines(sd.program) if hessian else [],
                  functions=functions)


def _casadi():
    try:
        import casadi
    except ImportError as exc:
        raise ImportError("codegen.casadi_function needs CasADi: pip install 'casadi>=3.6' "
                          "(or the extra: pip install 'gibbs-appell-codegen[casadi]')") from exc
    return casadi


def _equations_like(mod, eom):
    """eom's neutral equations with p and r in mod's orders; a ValueError naming what
    differs when eom is not mod's model."""
    eq = neutral_equations(eom, mod.name)
    if list(eq.state_names) != list(mod.states):
        raise ValueError(f"model {mod.name!r}: eom's states {eq.state_names} are not the "
                         f"module's {mod.states}: pass the equations mod was generated from")
    by_name = dict(zip(eq.constant_names, eq.constants))
    spec = dict(zip(eq.specified_names, eq.specifieds))
    if set(by_name) != set(mod.constants) or set(spec) != set(mod.specifieds):
        raise ValueError(f"model {mod.name!r}: eom's constants {eq.constant_names} and inputs "
                         f"{eq.specified_names} are not the module's {mod.constants}, "
                         f"{mod.specifieds}")
    if list(eq.constant_names) == list(mod.constants) and \
            list(eq.specified_names) == list(mod.specifieds):
        return eq                 # the usual case: the module kept the equations' order
    return neutral_equations(eom, mod.name, [by_name[c] for c in mod.constants],
                             [spec[s] for s in mod.specifieds])


def _refuse_constraints(nc: int, name: str) -> None:
    if nc:
        raise ValueError(f"model {name!r} has {nc} run-time constraint rows: its x' is the "
                         f"projected dynamics, which the CasADi export does not provide "
                         f"(write the constraints as NLP constraints on a model without them)")


def _build(files: dict, name: str, folder: Path, flags) -> Path:
    """lib<name>_casadi_<hash> in folder, compiled once per sources and flags."""
    digest = hashlib.sha256(repr((sorted(files.items()), tuple(flags))).encode()).hexdigest()[:16]
    lib = folder / f"lib{name}_casadi_{digest}{shared_suffix()}"
    if lib.exists():
        return lib
    c_sources = sorted(f for f in files if f.endswith(".c") and f != "cg_fused.c")
    built = compile_library(files, c_sources, f"lib{name}_casadi", list(flags), folder,
                            what=f"the CasADi library of {name!r}")
    try:
        with atomic_path(lib) as tmp:
            shutil.copyfile(built, tmp)
    finally:
        shutil.rmtree(built.parent, ignore_errors=True)
    return lib


def casadi_function(mod, eom, hessian: bool = True, parameters: bool = False,
                    flags=CASADI_FLAGS):
    """The compiled model as a ``casadi.Function`` f(x, r, p) -> xdot.

    mod: the CompiledModel (``codegen.generate``, built with ``jacobian=True``, the
    default); eom: the equations it was generated from (the second derivatives are
    generated from them). x, r and p are in mod's orders (mod.states, mod.specifieds,
    mod.constants); a model without inputs or constants has empty r or p.

    hessian: supply exact second derivatives (``jac_adj1_<name>``, for IPOPT's exact
    Hessian); without them use IPOPT's ``hessian_approximation="limited-memory"``.
    parameters: differentiate p too (mod then needs ``parameter_jacobian=True``);
    otherwise p is a constant input whose derivatives CasADi takes as zero (so pass
    parameters=True when p is a decision variable).

    The library is built beside mod's sources (``mod.source_dir / "casadi"``), once per
    sources and flags. Wrong input sizes are refused by CasADi, naming the function (the
    model) and the input ("Input 0 (x) has mismatching shape"). A non-finite input fails
    the evaluation: CasADi raises "Evaluation failed" for the model, and the library names
    the input on stderr ("cart2: input x[1] is nan"); a non-finite result or a singular M
    fails it too (IPOPT then shortens its step). Models with run-time constraints are
    refused.
    """
    ca = _casadi()
    _refuse_constraints(getattr(mod, "nc", 0), mod.name)
    if not mod.manifest.get("jacobian"):
        raise ValueError(f"model {mod.name!r} was generated without its analytic Jacobian: "
                         f"generate it with jacobian=True")
    if parameters and "parameter_jacobian=True" not in str(mod.manifest.get("options", "")):
        raise ValueError(f"model {mod.name!r} was generated without parameter_jacobian=True, "
                         f"which parameters=True needs")
    eq = _equations_like(mod, eom)
    src = Path(mod.source_dir)
    files = {p.name: p.read_text() for p in sorted(src.iterdir())
             if p.suffix in (".c", ".h") and p.is_file()}
    files.update(runtime_sources())
    files[f"{mod.name}_casadi.c"] = casadi_sources(eq, mod.name, hessian, parameters)
    folder = src / "casadi"
    try:
        folder.mkdir(exist_ok=True)
    except PermissionError:      # a read-only cache: build in the user's temporary folder
        folder = Path(tempfile.gettempdir()) / f"codegen-casadi-{mod.name}"
        folder.mkdir(exist_ok=True)
    lib = _build(files, mod.name, folder, flags)
    return ca.external(mod.name, str(lib))


def export_casadi(eom, name: str, directory="generated", hessian: bool = True,
                  parameters: bool = False, constants=None, specifieds=None,
                  build: bool = True, flags=CASADI_FLAGS) -> Path:
    """Write the CasADi external functions of a model standalone into ``directory/name``:
    the model's C (as ``export_c``), the runtime, ``<name>_casadi.c`` and, with build=True,
    ``lib<name>_casadi.so`` (``casadi.external(name, path)`` loads it). All files are
    written or none. Build it yourself with the command at the top of ``<name>_casadi.c``
    (``-Dcasadi_int=int`` for acados); ``<name>_casadi_check.c`` is a C program that calls
    every function as a C tool does and checks their sparsity tables. Returns the folder."""
    # the second derivatives from the neutral equations (M and F as formed, before the plan)
    neutral = neutral_equations(eom, name, constants, specifieds)
    _refuse_constraints(neutral.constraints.nc if neutral.constraints is not None else 0, name)
    options = Options(jacobian=True, parameter_jacobian=parameters)
    _, sources = model_sources(eom, name, constants, specifieds, options)
    files = dict(sources.files)
    files.update(runtime_sources())
    files[f"{name}_casadi.c"] = casadi_sources(neutral, name, hessian, parameters)
    nx = neutral.nq + neutral.nu
    functions = [name, f"jac_{name}", f"adj1_{name}"] + ([f"jac_adj1_{name}"] if hessian else [])
    files[f"{name}_casadi_check.c"] = render(
        "export/casadi_check.c.j2", name=name, nx=nx, nr=len(neutral.specifieds),
        np=len(neutral.constants), functions=functions)
    target = prepare_dir(directory, name)
    if build:
        c_sources = [f for f in files if f.endswith(".c")
                     and f not in ("cg_fused.c", f"{name}_casadi_check.c")]
        built = compile_library(files, sorted(c_sources), f"lib{name}_casadi", list(flags),
                                target, what=f"the CasADi library of {name!r}")
        try:
            files[built.name] = built.read_bytes()
        finally:
            shutil.rmtree(built.parent, ignore_errors=True)
    write_all(target, files)
    return target


def rk4_step(f, h: float, steps: int = 1, jacobian: bool = True):
    """One shooting interval as one CasADi Function: ``steps`` RK4 steps of length h / steps
    of f(x, r, p) with r held, (x, r, p) -> x_next and, with jacobian=True, also
    ∂x_next/∂x and ∂x_next/∂r (from f's analytic Jacobian, by CasADi's chain rule).
    Named ``<f>_rk4``; ``.map(N)`` evaluates N intervals in one call."""
    ca = _casadi()
    x = ca.MX.sym("x", f.size1_in(0))
    r = ca.MX.sym("r", f.size1_in(1))
    p = ca.MX.sym("p", f.size1_in(2))
    dt, xk = h / steps, x
    for _ in range(steps):
        k1 = f(xk, r, p)
        k2 = f(xk + dt / 2 * k1, r, p)
        k3 = f(xk + dt / 2 * k2, r, p)
        k4 = f(xk + dt * k3, r, p)
        xk = xk + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    outputs, names = [xk], ["x_next"]
    if jacobian:
        outputs += [ca.jacobian(xk, x), ca.jacobian(xk, r)]
        names += ["jac_x_next_x", "jac_x_next_r"]
    return ca.Function(f"{f.name()}_rk4", [x, r, p], outputs, ["x", "r", "p"], names)
