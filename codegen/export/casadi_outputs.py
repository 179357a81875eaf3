"""A model's outputs as CasADi external functions, with exact first and second derivatives.

Costs and path constraints of an optimal control problem read poses, energies and
distances. ``casadi_outputs(mod, eom, outputs)`` takes the outputs as ``generate``
does (``{name: expression or ready name}``: a SymPy expression of the coordinates,
speeds, constants and inputs, a Matrix keeping its shape, ``"kinetic_energy"``,
``"potential_energy"``) and returns ``{name: casadi.Function}``, each y = g(x, r, p) in
the output's shape. Each is generated C in one library (``templates/export/
casadi_outputs.c.j2``) with the derivatives CasADi looks up by name: ``jac_<g>`` (the
structural zeros as sparsity), ``adj1_<g>`` (Jᵀλ) and ``jac_adj1_<g>`` (the Hessian of
λᵀy), all from the outputs' expressions differentiated symbolically; nothing is
differenced.

A matrix output is CasADi's column-major matrix of the same shape; its derivatives
follow CasADi's vectorization (column after column).
"""
from __future__ import annotations

import sympy as sm

from ..emit.render import render
from ..equations.signals import Signals
from ..programs.program import make_program
from .casadi import (
    CASADI_FLAGS,
    SparsityTables,
    build_library,
    casadi_module,
    ccs,
    equations_like,
    library_folder,
    program_lines,
)

__all__ = ["casadi_outputs", "casadi_output_sources"]

#: the inputs of every output function, in its order
BLOCKS = ("x", "r", "p")


class _Sparsities:
    """A library's distinct sparsity tables (casadi.SparsityTables) taken as (nrow, ncol,
    entries)."""

    def __init__(self):
        self.registry = SparsityTables()
        self.tables = self.registry.tables

    def __call__(self, nrow: int, ncol: int, entries) -> int:
        return self.registry(ccs(nrow, ncol, entries))


def _read_through(eq) -> dict:
    """The named intermediates as expressions of the inputs, so that differentiation sees
    every dependence."""
    defs = {}
    for item in eq.intermediates:
        defs[item.symbol] = sm.sympify(item.expr).xreplace(defs)
    return defs


def _one_output(eq, out, gname: str, blocks: tuple, sps: _Sparsities, defs: dict) -> list:
    """The four ABI functions of one output: their inputs, outputs and C bodies."""
    rows, cols = (out.shape + (1, 1))[:2] if out.shape else (1, 1)
    ny = rows * cols
    # column-major, as CasADi stores a matrix
    y = [sm.sympify(out.exprs[i * cols + j]).xreplace(defs) for j in range(cols)
         for i in range(rows)]
    known = {v: sm.Dummy() for v in (*eq.q, *eq.u, *eq.specifieds, *eq.constants)}
    if any(e.xreplace(known).has(eq.t) for e in y):
        raise ValueError(f"output {out.name!r} reads the time t: the CasADi functions take "
                         f"(x, r, p) only")
    zs = {"x": [*eq.q, *eq.u], "r": list(eq.specifieds), "p": list(eq.constants)}
    n = {b: len(zs[b]) for b in BLOCKS}
    lam = sm.symbols(f"cgo_lam0:{ny}", real=True)
    jac = {b: [[sm.diff(e, z) for z in zs[b]] for e in y] if b in blocks else None
           for b in BLOCKS}
    # ∇(λᵀy) = Jᵀλ; its derivative, the Hessian, formed once for each pair of blocks
    grad = {b: [sum((lam[k] * jac[b][k][l] for k in range(ny)), sm.S.Zero)
                for l in range(n[b])] for b in blocks}
    hess = {}
    for i, o in enumerate(blocks):
        for w in blocks[:i + 1]:
            hess[o, w] = [[sm.diff(grad[o][k], z) for z in zs[w]] for k in range(n[o])]
            hess[w, o] = [list(col) for col in zip(*hess[o, w])]

    def nonzeros(matrix, nrow, ncol):
        """(CCS entries, their expressions in CCS order) of a nrow x ncol list of rows"""
        pairs = [(i, j) for j in range(ncol) for i in range(nrow) if matrix[i][j] != 0]
        return pairs, [matrix[i][j] for i, j in pairs]

    def vector(b):
        return sps(n[b], 1, [(i, 0) for i in range(n[b])])
    s_y = sps(rows, cols, [(i, j) for j in range(cols) for i in range(rows)])
    base = [("x", vector("x")), ("r", vector("r")), ("p", vector("p")),
            (f"out_{out.name}", sps(rows, cols, []))]
    diff = [1 if b in blocks else 0 for b in BLOCKS]
    # each function: (name, inputs, outputs [(name, sparsity, expressions)], reads lam)
    jac_out = []
    for b in BLOCKS:
        pairs, exprs = nonzeros(jac[b], ny, n[b]) if jac[b] else ([], [])
        jac_out.append((f"jac_{out.name}_{b}", sps(ny, n[b], pairs), exprs))
    adj_out = [(f"adj_{b}", vector(b), grad[b] if b in blocks else [sm.S.Zero] * n[b])
               for b in BLOCKS]
    ja_out = []
    for o in BLOCKS:
        for w in (*BLOCKS, f"out_{out.name}", f"adj_{out.name}"):
            ncol = n[w] if w in BLOCKS else ny
            if o in blocks and w in blocks:
                pairs, exprs = nonzeros(hess[o, w], n[o], ncol)
            elif o in blocks and w == f"adj_{out.name}":     # d adj_o / d lam = J_oᵀ
                pairs, exprs = nonzeros([[jac[o][k][l] for k in range(ny)]
                                         for l in range(n[o])], n[o], ncol)
            else:
                pairs, exprs = [], []
            ja_out.append((f"jac_adj_{o}_{w}", sps(n[o], ncol, pairs), exprs))
    adj_in = (f"adj_{out.name}", s_y)
    specs = [(gname, base[:3], [(out.name, s_y, y)], False),
             (f"jac_{gname}", base, jac_out, False),
             (f"adj1_{gname}", base + [adj_in], adj_out, True),
             (f"jac_adj1_{gname}", base + [adj_in] + [(f"out_adj_{b}", sps(n[b], 1, []))
                                                    for b in BLOCKS], ja_out, True)]
    extra = [(s, "lam", k, f"lam_{k}") for k, s in enumerate(lam)]
    functions = []
    for fname, inputs, outputs, reads_lam in specs:
        groups = [(f"o{k}", exprs) for k, (_, _, exprs) in enumerate(outputs)]
        program = make_program(eq, groups, extra_inputs=extra if reads_lam else ())
        functions.append(dict(
            name=fname, body=fname, nodes=1, reads_lam=reads_lam, ny=ny,
            inputs=[(label, sp, 0) for label, sp in inputs],
            outputs=[(label, sp, 0) for label, sp, _ in outputs],
            sizes=[len(exprs) for _, _, exprs in outputs],
            lines=program_lines(program, ("x", "p", "r", "lam")),
            diff_in=diff + [0] * (len(inputs) - 3) if not reads_lam else
            diff + [0, 1] + [0] * (len(inputs) - 5),
            sz_w=sum(n.values()) + ny + max([len(e) for _, _, e in outputs] + [1])))
    return functions


def casadi_output_sources(eq, name: str, parameters: bool = False) -> str:
    """The C of the output functions ``<name>_<output>`` of the neutral equations eq (with
    their outputs attached); parameters: differentiate p too."""
    if not eq.outputs:
        raise ValueError(f"model {name!r}: no outputs to export (give outputs={{name: "
                         f"expression}})")
    blocks = BLOCKS if parameters else ("x", "r")
    sps, defs, functions = _Sparsities(), _read_through(eq), []
    for out in eq.outputs:
        if not out.exprs:
            raise ValueError(f"output {out.name!r} (the constraint forces) depends on the "
                             f"accelerations: it is not a function of (x, r, p)")
        functions += _one_output(eq, out, f"{name}_{out.name}", blocks, sps, defs)
    return render("export/casadi_outputs.c.j2", name=name, nx=len(eq.q) + len(eq.u),
                  nr=len(eq.specifieds), np=len(eq.constants), blocks=blocks,
                  sparsities=sps.tables, functions=functions)


def casadi_outputs(mod, eom, outputs: dict, parameters: bool = False,
                   flags=CASADI_FLAGS) -> dict:
    """``{name: casadi.Function}`` of outputs as ``generate`` takes them, each y = g(x, r, p)
    in mod's orders and in the output's shape, with exact first and second derivatives
    (see the module docstring). Named ``<model>_<output>``. parameters: differentiate p
    too (when p is a decision variable). Outputs that read t or the accelerations (the
    constraint forces) are refused; a non-finite input or value fails the evaluation,
    naming the function and the input on stderr as casadi_function does."""
    ca = casadi_module()
    eq = equations_like(mod, eom, Signals(outputs=outputs))
    files = {f"{mod.name}_outputs.c": casadi_output_sources(eq, mod.name, parameters)}
    lib = build_library(files, f"{mod.name}_outputs", library_folder(mod), flags)
    return {out.name: ca.external(f"{mod.name}_{out.name}", str(lib)) for out in eq.outputs}
