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
from ..equations.signals import Signals
from ..emit.render import render, runtime_sources

__all__ = ["CASADI_FLAGS", "SparsityTables", "build_library", "casadi_function", "casadi_module",
           "casadi_sources", "ccs", "equations_like", "export_casadi", "library_folder",
           "program_lines", "rk4_step"]

#: the wrapper's build: -fvisibility=hidden keeps the runtime's cg_* symbols inside the
#: library, so that two models' libraries load side by side
CASADI_FLAGS = ("-O2", "-fno-math-errno", "-fvisibility=hidden")


def ccs(nrow: int, ncol: int, entries) -> list:
    """CasADi's compressed-column sparsity [nrow, ncol, colind[ncol + 1], row[nnz]]
    (the canonical form: colind[0] == 1 would mean dense)."""
    cols = [sorted({r for r, c in entries if c == j}) for j in range(ncol)]
    colind, rows = [0], []
    for rs in cols:
        rows += rs
        colind.append(len(rows))
    return [nrow, ncol, *colind, *rows]


def program_lines(program, arrays=("x", "p", "r", "a", "mu", "lq")) -> list:
    """A program as C statements: its inputs read from the arrays named arrays (each a
    local of the C function; those the program does not read are marked unused), its
    temporaries, and its outputs written into the arrays it names."""
    printer = CPrinter(program.names)
    lines = [f"const double {i.name} = {i.array}[{i.index}];" for i in program.inputs]
    for sym, expr in program.temporaries:
        lines.append(f"const double {printer.expression(sym)} = {printer.expression(expr)};")
    for array, exprs in program.outputs:
        lines += [f"{array}[{k}] = {printer.expression(e)};" for k, e in enumerate(exprs)]
    used = {i.array for i in program.inputs}
    lines += [f"(void){a};" for a in arrays if a not in used]
    return lines


def casadi_sources(eq, name: str, hessian: bool = True, parameters: bool = False,
                   nodes: int = 1) -> str:
    """The wrapper's C (``<name>_casadi.c``) for the neutral equations eq of model name.
    hessian: also jac_adj1_<name> (exact second derivatives); parameters: differentiate p
    too (the model's C then needs its parameter Jacobian); nodes > 1: also
    ``<name>_map<nodes>`` and its derivatives, x' at that many nodes in one call."""
    if nodes != 1 and (parameters or int(nodes) != nodes or nodes < 1):
        raise ValueError(f"nodes must be a whole number ≥ 1 (got {nodes!r}), and batched "
                         f"functions differentiate x and r only (parameters=False)")
    blocks = ("x", "r", "p") if parameters else ("x", "r")
    sd = second_derivative_program(eq, blocks)
    nq, nu = eq.nq, eq.nu
    n = {"x": nq + nu, "r": len(eq.specifieds), "p": len(eq.constants)}
    doff, off = {}, 0
    for b in BLOCKS:
        if b in blocks:
            doff[b], off = off, off + n[b]
    layout = _Layout(n, nu, doff, sd)
    functions = layout.functions(name, 1, hessian)
    if nodes > 1:
        functions += layout.functions(f"{name}_map{int(nodes)}", int(nodes), hessian)
    return render("export/casadi.c.j2", name=name, model_c=[f"{name}.c"], nq=nq, nu=nu,
                  nx=n["x"], nr=n["r"], np=n["p"], nd=sd.nd, blocks=blocks, hessian=hessian,
                  sparsities=layout.sp.tables, doff=[doff.get(b, -1) for b in BLOCKS],
                  jac_sp=[f"cgx_s{i}" for i in layout.jac_sp],
                  ja_sp=[f"cgx_s{i}" for i in layout.ja_sp],
                  second=program_lines(sd.program) if hessian else [],
                  functions=functions)


class SparsityTables:
    """The distinct sparsity tables of one library, each written once: calling it with a
    table (CasADi's compressed-column list) returns the table's index."""

    def __init__(self):
        self.tables, self._index = [], {}

    def __call__(self, pattern: list) -> int:
        key = tuple(pattern)
        if key not in self._index:
            self._index[key] = len(self.tables)
            self.tables.append(list(pattern))
        return self._index[key]


class _Layout:
    """The sparsity tables and the ABI of each function, per node and batched: a batched
    function takes x, r (and the adjoint seeds) as one column per node and p once, and its
    derivatives are block diagonal over the nodes, so that node k's nonzeros of every
    input and output follow node k - 1's (the C loops over nodes with fixed strides)."""

    def __init__(self, n: dict, nu: int, doff: dict, sd):
        self.n, self.nu, self.doff, self.sd = n, nu, doff, sd
        self.sp = SparsityTables()
        # the per-node tables the C's scatter reads (each batched block repeats them)
        self.jac_sp = [self.pattern(1, "x", b, self.jblock(b)) for b in BLOCKS]
        self.ja_sp = []
        for o in BLOCKS:
            for w in (*BLOCKS, "out_xdot", "adj_xdot"):
                self.ja_sp.append(self.pattern(1, o, w, self.hpairs(o, w)))

    def jblock(self, b) -> set:
        """∂x'/∂b's nonzeros"""
        if b not in self.doff:
            return set()
        lo, hi = self.doff[b], self.doff[b] + self.n[b]
        return {(i, k - lo) for i, k in self.sd.jacobian if lo <= k < hi}

    def hpairs(self, o, w) -> set:
        """∂²(λᵀx')/∂o∂w's nonzeros (w = adj_xdot: J_oᵀ; out_xdot: none)"""
        if w == "out_xdot" or o not in self.doff:
            return set()
        if w == "adj_xdot":
            return {(b, a) for a, b in self.jblock(o)}
        if w not in self.doff:
            return set()
        lo, lw = self.doff[o], self.doff[w]
        return {(k - lo, l - lw) for k, l in self.sd.hessian
                if lo <= k < lo + self.n[o] and lw <= l < lw + self.n[w]}

    def rows(self, b) -> int:
        return self.n["x"] if b in ("out_xdot", "adj_xdot", "xdot") else self.n[b]

    def pattern(self, nodes: int, o, w, entries) -> int:
        """The sparsity of the block o × w (w None: the vector o itself) at nodes nodes;
        p is one column shared by every node, the other blocks one column per node."""
        per = lambda b: 1 if b == "p" else nodes
        if w is None:
            return self.sp(ccs(self.rows(o), per(o), [(i, c) for c in range(per(o))
                                                       for i in range(self.rows(o))]))
        no, nw = self.rows(o), self.rows(w)
        if per(o) == per(w) == nodes:
            entries = {(k * no + i, k * nw + j) for k in range(nodes) for i, j in entries}
        return self.sp(ccs(no * per(o), nw * per(w), entries))

    def functions(self, fname: str, nodes: int, hessian: bool) -> list:
        """The ABI of f, jac_f, adj1_f (and jac_adj1_f) named after fname at nodes nodes:
        their inputs and outputs as (name, sparsity, stride), where stride is the number of
        nonzeros one node takes (0: shared by every node, or none)."""
        n, nx, nu = self.n, self.n["x"], self.nu
        nzv, nd = sum(n.values()), self.sd.nd
        vec = lambda b: (b, self.pattern(nodes, b, None, None), 0 if b == "p" else n[b])
        empty = lambda label, b: (label, self.sp(ccs(self.rows(b), 1 if b == "p" else nodes,
                                                      [])), 0)
        block = lambda label, o, w, entries: (
            label, self.pattern(nodes, o, w, entries),
            len(entries) if "p" not in (o, w) else 0)
        base = [vec("x"), vec("r"), vec("p"), empty("out_xdot", "xdot")]
        diff = [1 if b in self.doff else 0 for b in BLOCKS]
        xdot = ("xdot", self.pattern(nodes, "xdot", None, None), nx)
        adj = ("adj_xdot", xdot[1], nx)
        out = [dict(name=fname, body="f", inputs=base[:3], outputs=[xdot], diff_in=diff,
                    sz_w=nzv + nx, nodes=nodes),
               dict(name=f"jac_{fname}", body="jac_f", inputs=base, diff_in=diff + [0],
                    outputs=[block(f"jac_xdot_{b}", "xdot", b, self.jblock(b)) for b in BLOCKS],
                    sz_w=nzv + nx * nd + nx * nzv, nodes=nodes),
               dict(name=f"adj1_{fname}", body="adj1_f", inputs=base + [adj],
                    diff_in=diff + [0, 1],
                    outputs=[(f"adj_{b}", vec(b)[1], vec(b)[2]) for b in BLOCKS],
                    sz_w=nzv + nx + nx * nd + nx * nzv, nodes=nodes)]
        if hessian:
            out.append(dict(
                name=f"jac_adj1_{fname}", body="jac_adj1_f",
                inputs=base + [adj] + [empty(f"out_adj_{b}", b) for b in BLOCKS],
                outputs=[block(f"jac_adj_{o}_{w}", o, w, self.hpairs(o, w)) for o in BLOCKS
                         for w in (*BLOCKS, "out_xdot", "adj_xdot")],
                diff_in=diff + [0, 1, 0, 0, 0],
                sz_w=(nzv + 2 * nx + nx * nd + nx * nzv + nu * nu + nu + nd * (nd + 1) // 2
                      + nu * nd + nd * nd), nodes=nodes))
        return out


def casadi_module():
    try:
        import casadi
    except ImportError as exc:
        raise ImportError("codegen.casadi_function needs CasADi: pip install 'casadi>=3.6' "
                          "(or the extra: pip install 'gibbs-appell-codegen[casadi]')") from exc
    return casadi


def equations_like(mod, eom, signals: Signals = Signals()):
    """eom's neutral equations with p and r in mod's orders (and signals' outputs); a
    ValueError naming what differs when eom is not mod's model."""
    eq = neutral_equations(eom, mod.name, signals=signals)
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
                             [spec[s] for s in mod.specifieds], signals)


def _refuse_constraints(nc: int, name: str) -> None:
    if nc:
        raise ValueError(f"model {name!r} has {nc} run-time constraint rows: its x' is the "
                         f"projected dynamics, which the CasADi export does not provide "
                         f"(write the constraints as NLP constraints on a model without them)")


def library_folder(mod) -> Path:
    """Where mod's CasADi libraries are built: beside its sources (``casadi/``), or in the
    user's temporary folder when the sources sit in a read-only cache."""
    folder = Path(mod.source_dir) / "casadi"
    try:
        folder.mkdir(exist_ok=True)
    except PermissionError:
        folder = Path(tempfile.gettempdir()) / f"codegen-casadi-{mod.name}"
        folder.mkdir(exist_ok=True)
    return folder


def build_library(files: dict, name: str, folder: Path, flags) -> Path:
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
                    flags=CASADI_FLAGS, nodes: int = 1):
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

    nodes > 1: the function ``<name>_map<nodes>`` instead, x' at that many nodes in one
    call into C: x (nx × nodes), r (nr × nodes), p once, xdot (nx × nodes); its Jacobian
    and Hessian are block diagonal over the nodes. A multiple-shooting NLP then calls C
    once per RK4 stage for all its intervals (CasADi's ``f.map(N)`` calls it N times).

    The library is built beside mod's sources (``mod.source_dir / "casadi"``), once per
    sources and flags. Wrong input sizes are refused by CasADi, naming the function (the
    model) and the input ("Input 0 (x) has mismatching shape"). A non-finite input fails
    the evaluation: CasADi raises "Evaluation failed" for the model, and the library names
    the input on stderr ("cart2: input x[1] is nan"); a non-finite result or a singular M
    fails it too (IPOPT then shortens its step). Models with run-time constraints are
    refused.
    """
    ca = casadi_module()
    _refuse_constraints(getattr(mod, "nc", 0), mod.name)
    if not mod.manifest.get("jacobian"):
        raise ValueError(f"model {mod.name!r} was generated without its analytic Jacobian: "
                         f"generate it with jacobian=True")
    if parameters and "parameter_jacobian=True" not in str(mod.manifest.get("options", "")):
        raise ValueError(f"model {mod.name!r} was generated without parameter_jacobian=True, "
                         f"which parameters=True needs")
    eq = equations_like(mod, eom)
    src = Path(mod.source_dir)
    files = {p.name: p.read_text() for p in sorted(src.iterdir())
             if p.suffix in (".c", ".h") and p.is_file()}
    files.update(runtime_sources())
    files[f"{mod.name}_casadi.c"] = casadi_sources(eq, mod.name, hessian, parameters, nodes)
    lib = build_library(files, mod.name, library_folder(mod), flags)
    return ca.external(mod.name if nodes == 1 else f"{mod.name}_map{nodes}", str(lib))


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
    ca = casadi_module()
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
