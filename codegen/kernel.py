"""Equations -> straight-line program: named inputs, one CSE, ordered outputs.

The program is what every emitter prints. Its expressions are SymPy
expressions over C-ready names:

- inputs: each state, constant and specified gets a local with a valid,
  unique C identifier (its own name where possible), read from x, p, r;
- temporaries: one ``sympy.cse`` over all outputs together (q', the mass
  matrix, the forcing), so work shared between them is done once;
- outputs: q' (NQ), the mass matrix (packed lower triangle, row by row, if
  symmetric; else full row-major) and the forcing (NU).

``sympy.cse(order='none')`` is used: the canonical ordering costs far more
on large inputs and the result is the same set of temporaries. The same
equations always give the same program (nothing here depends on hashing).
"""
from __future__ import annotations

import keyword
import re
from dataclasses import dataclass

import sympy as sm

from .eom import EquationsOfMotion
from .kinematics import memo_xreplace

__all__ = ["Program", "Input", "build_program", "c_identifier_error", "C_KEYWORDS"]

C_KEYWORDS = frozenset("""auto break case char const continue default do double else enum
extern float for goto if inline int long register restrict return short signed sizeof
static struct switch typedef union unsigned void volatile while _Bool _Complex _Imaginary
bool true false class new delete this template typename namespace operator private
protected public virtual friend mutable explicit using try catch throw""".split())

# names the generated functions use for their own arguments and helpers
_RESERVED = frozenset("t x p r dx M F qd i j k n s NULL main sin cos tan asin acos atan atan2 "
                      "sinh cosh tanh exp log log10 sqrt pow fabs floor ceil fmod isfinite "
                      "cg_sq cg_cube cg_powi".split())


def c_identifier_error(name: str) -> str | None:
    """Why name cannot be a C identifier of the generated code, or None."""
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        return f"{name!r} is not a C identifier (letters, digits, underscores; not starting with a digit)"
    if name in C_KEYWORDS:
        return f"{name!r} is a C/C++ keyword"
    if name.startswith("__") or re.match(r"_[A-Z]", name):
        return f"{name!r} is reserved in C (leading double underscore or underscore-capital)"
    return None


@dataclass
class Input:
    name: str        # C local
    array: str       # 'x', 'p' or 'r'
    index: int
    label: str       # the model's name for it, for the comment


@dataclass
class Program:
    inputs: list          # Input, in array order
    temporaries: list     # (Symbol, expr)
    qdot: list
    mass: list            # packed lower triangle (symmetric) or full row-major
    forcing: list
    symmetric: bool
    nq: int
    nu: int
    np: int
    nr: int
    uses_time: bool

    @property
    def operation_count(self) -> int:
        """sympy.count_ops of the temporaries and outputs (after CSE)."""
        return int(sm.count_ops([e for _, e in self.temporaries] + self.qdot + self.mass
                                + self.forcing))


def _c_names(labels: list) -> list:
    """A unique C identifier for each label, the label itself where possible."""
    out, used = [], set()
    for label in labels:
        base = re.sub(r"\W", "_", label)
        if not base or base[0].isdigit():
            base = "v_" + base
        if base in C_KEYWORDS or base in _RESERVED or keyword.iskeyword(base) \
                or base.startswith("__") or re.match(r"_[A-Z]", base):
            base = base + "_"
        name, k = base, 2
        while name in used:
            name, k = f"{base}_{k}", k + 1
        used.add(name)
        out.append(name)
    return out


def _temp_prefix(names) -> str:
    prefix = "z"
    while any(re.fullmatch(re.escape(prefix) + r"\d+", n) for n in names):
        prefix += "z"
    return prefix


def build_program(eom: EquationsOfMotion) -> Program:
    """The straight-line program of eom: inputs, CSE temporaries, outputs."""
    labels = eom.state_names + eom.constant_names + eom.specified_names
    names = _c_names(labels)
    arrays = (["x"] * len(eom.state_names) + ["p"] * len(eom.constant_names)
              + ["r"] * len(eom.specified_names))
    index = (list(range(len(eom.state_names))) + list(range(len(eom.constant_names)))
             + list(range(len(eom.specified_names))))
    inputs = [Input(n, a, i, l) for n, a, i, l in zip(names, arrays, index, labels)]
    originals = list(eom.q) + list(eom.u) + list(eom.constants) + list(eom.specifieds)
    memo = {o: sm.Symbol(n, real=True) for o, n in zip(originals, names)}
    t_sym = sm.Symbol("t", real=True)
    memo[eom.t] = t_sym
    conv = lambda e: memo_xreplace(sm.sympify(e), memo)

    nu = eom.nu
    if eom.symmetric:
        mass = [eom.M[i, j] for i in range(nu) for j in range(i + 1)]
    else:
        mass = [eom.M[i, j] for i in range(nu) for j in range(nu)]
    outputs = [conv(e) for e in list(eom.qdot) + mass + list(eom.F)]
    prefix = _temp_prefix(names)
    temps, reduced = sm.cse(outputs, symbols=sm.numbered_symbols(prefix, real=True),
                            order="none")
    nq, nm = eom.nq, len(mass)
    uses_time = any(t_sym in e.free_symbols for e in reduced + [e for _, e in temps])
    used = set()
    for e in reduced + [e for _, e in temps]:
        used |= e.free_symbols
    inputs = [i for i in inputs if sm.Symbol(i.name, real=True) in used]
    return Program(inputs=inputs, temporaries=temps, qdot=reduced[:nq],
                   mass=reduced[nq:nq + nm], forcing=reduced[nq + nm:],
                   symmetric=eom.symmetric, nq=nq, nu=nu, np=len(eom.constants),
                   nr=len(eom.specifieds), uses_time=uses_time)
