"""What the program stage promises the emitter: one CSE whose temporaries, put back, give
the same expressions; C names that are valid and unique; programs that read only what they
define; the same program under any hash seed. The oracles are SymPy's own evaluation of the
equations and Python's keyword list."""
import itertools
import keyword
import random
import re
import subprocess
import sys

import numpy as np
import pytest
import sympy as sm

from codegen import GibbsAppellMethod, equations_of, examples as ex
from codegen.programs.cse import cse
from codegen.programs.program import (check_defined, dependency_order, dependents,
                                      live_temporaries, make_program)


def _random_exprs(seed, n=12):
    """Sums of products of trig functions and powers over a few symbols, with shared parts."""
    rng = random.Random(seed)
    x = sm.symbols("x0:5")
    atoms = list(x) + [sm.sin(x[0]), sm.cos(x[1]), x[2] ** 2, 1 / x[3], sm.sqrt(x[4])]
    out = []
    for _ in range(n):
        terms = [rng.randint(-3, 3) * sm.Mul(*rng.sample(atoms, rng.randint(1, 4)))
                 for _ in range(rng.randint(1, 5))]
        out.append(sm.Add(*terms))
    return x, out


def _substituted(temps, exprs):
    memo = {}
    for s, e in temps:
        memo[s] = e.xreplace(memo)
    return [sm.sympify(e).xreplace(memo) for e in exprs]


@pytest.mark.parametrize("seed", range(8))
def test_cse_gives_back_the_same_expressions(seed):
    x, exprs = _random_exprs(seed)
    temps, reduced = cse(exprs, (sm.Symbol(f"t{k}") for k in itertools.count()))
    back = _substituted(temps, reduced)
    point = {s: v for s, v in zip(x, [0.3, -1.1, 0.7, 1.9, 2.3])}
    for a, b in zip(exprs, back):
        assert complex(a.evalf(subs=point)) == pytest.approx(complex(b.evalf(subs=point)),
                                                             rel=1e-13, abs=1e-13)
    # every temporary is defined before its use and used at least twice
    defined = set()
    for s, e in temps:
        assert e.free_symbols - set(x) <= defined
        defined.add(s)
    uses = sum(([a for a in sm.preorder_traversal(e) if a in defined]
                for e in [e for _, e in temps] + reduced), [])
    assert all(uses.count(s) >= 2 for s in defined)


def test_cse_shares_work_between_expressions():
    a, b, c = sm.symbols("a b c")
    shared = sm.sin(a) * sm.cos(b) + c ** 3
    temps, reduced = cse([shared + 1, 2 * shared, shared * a],
                         (sm.Symbol(f"t{k}") for k in itertools.count()))
    everything = [e for _, e in temps] + list(reduced)
    count = sum(1 for e in everything for node in sm.preorder_traversal(e) if node == sm.sin(a))
    assert count == 1 and temps             # sin(a) computed once, in a temporary
    assert all(not e.has(sm.sin) for e in reduced)


def test_the_same_program_under_any_hash_seed():
    code = ("from codegen import GibbsAppellMethod, equations_of, examples as ex\n"
            "from codegen.programs.program import make_program\n"
            "eq = equations_of(GibbsAppellMethod(**ex.n_pendulum_on_cart(2).kwargs))\n"
            "p = make_program(eq, [('qd', list(eq.qdot)), ('F', list(eq.F))])\n"
            "print([(str(s), str(e)) for s, e in p.temporaries], p.outputs)\n")
    outs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           check=True, env={**__import__("os").environ, "PYTHONHASHSEED": seed}
                           ).stdout for seed in ("1", "2")}
    assert len(outs) == 1


@pytest.fixture(scope="module")
def cart():
    return equations_of(GibbsAppellMethod(**ex.n_pendulum_on_cart(2).kwargs))


def test_a_program_computes_its_equations(cart):
    """The program's outputs, run as Python over its inputs, equal the equations' own
    expressions evaluated by SymPy at a random state."""
    mass = [cart.M[i, j] for i in range(cart.nu) for j in range(i + 1)]
    program = make_program(cart, [("qd", list(cart.qdot)), ("M", mass), ("F", list(cart.F))])
    check_defined(program, "test")
    rng = np.random.default_rng(4)
    arrays = {"x": rng.uniform(-1, 1, cart.nq + cart.nu), "p": rng.uniform(0.5, 2, len(cart.constants)),
              "r": rng.uniform(-1, 1, len(cart.specifieds))}
    by_name = {n: o for o, n in program.names.items()}
    values = {by_name[i.name]: arrays[i.array][i.index] for i in program.inputs}
    memo = dict(values)
    for s, e in program.temporaries:
        memo[s] = float(e.xreplace(memo))
    outputs = dict(program.outputs)
    subs = {s: sm.Float(v) for s, v in zip(list(cart.q) + list(cart.u), arrays["x"])}
    subs.update({s: sm.Float(v) for s, v in zip(cart.constants, arrays["p"])})
    subs.update({s: sm.Float(v) for s, v in zip(cart.specifieds, arrays["r"])})
    for item in cart.intermediates:
        subs[item.symbol] = item.expr.xreplace(subs)
    for name, exprs in (("qd", cart.qdot), ("M", mass), ("F", cart.F)):
        ours = [float(sm.sympify(e).xreplace(memo)) for e in outputs[name]]
        theirs = [float(sm.sympify(e).xreplace(subs)) for e in exprs]
        assert np.allclose(ours, theirs, rtol=1e-12, atol=1e-12), name


def test_input_names_are_valid_unique_c_identifiers():
    """States, constants and inputs whose names clash with each other, with C keywords
    or are not identifiers get C names that are all distinct and valid."""
    import sympy.physics.mechanics as me
    q, u = me.dynamicsymbols("int u")
    m, g, l_ = sm.symbols("m g l"), sm.Symbol("g"), sm.Symbol("x[0]")
    N = me.ReferenceFrame("N")
    O = me.Point("O")
    O.set_vel(N, 0)
    P = O.locatenew("P", l_ * sm.cos(q) * N.x + l_ * sm.sin(q) * N.y)
    P.set_vel(N, P.pos_from(O).dt(N).subs(q.diff(), u))
    ga = GibbsAppellMethod(N, [q], [u], kd_eqs=[u - q.diff()])
    ga.kanes_equations([me.Particle("p", P, m[0])], [(P, -g * N.y)])
    eq = equations_of(ga)
    program = make_program(eq, [("F", list(eq.F)), ("qd", list(eq.qdot))])
    names = [i.name for i in program.inputs]
    assert len(set(names)) == len(names)
    c_keywords = {"int", "double", "return", "for", "if", "while", "char", "void"}
    for n in names:
        assert re.fullmatch(r"[A-Za-z_]\w*", n) and n not in c_keywords and not keyword.iskeyword(n)
    check_defined(program, "test")


def test_check_defined_names_what_is_missing(cart):
    program = make_program(cart, [("F", list(cart.F))])
    program.temporaries.append((sm.Symbol("cg_z"), sm.Symbol("stray") + 1))
    with pytest.raises(ValueError, match=r"uses \['stray'\]"):
        check_defined(program, "test")


def test_live_temporaries_dependents_and_order():
    a, b, t0, t1, t2 = sm.symbols("a b t0 t1 t2")
    temps = [(t0, a + b), (t1, t0 * a), (t2, b ** 2)]
    assert live_temporaries(temps, [("y", [t1 + 1])]) == temps[:2]
    assert dependents(temps, {a}) == {t0, t1}
    ordered = dependency_order([(t1, t0 * a), (t0, a + b)])
    assert [s for s, _ in ordered] == [t0, t1]
