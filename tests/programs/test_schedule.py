"""The order of a program's temporaries (codegen.programs.schedule): every order is one the
values can be computed in, gives the same outputs, and the Sethi–Ullman order is kept
only where the register machine reloads less."""
import random

import sympy as sm

from codegen.programs.program import Program
from codegen.programs.schedule import depth_first, fewer_reloads, reloads


def _sums_of_products(width: int, seed: int = 3):
    """All products first, then a balanced tree of sums over them: written so, every
    product is live until the sums reach it (width values at once)."""
    rng = random.Random(seed)
    x = sm.symbols(f"x0:{width + 1}")
    temps, level = [], []
    for i in range(width):
        t = sm.Symbol(f"t{i}")
        temps.append((t, x[i] * x[i + 1] + rng.randint(1, 9)))
        level.append(t)
    k = 0
    while len(level) > 1:
        nxt = []
        for a, b in zip(level[::2], level[1::2]):
            s = sm.Symbol(f"s{k}")
            k += 1
            temps.append((s, a * b + a))
            nxt.append(s)
        level = nxt + ([level[-1]] if len(level) % 2 else [])
    return x, temps, [("y", [level[0]])]


def _evaluate(temps, outputs, values):
    env = dict(values)
    for sym, expr in temps:
        assert expr.free_symbols <= set(env), f"{sym} read before it was defined"
        env[sym] = float(expr.subs(env))
    return [float(sm.sympify(e).subs(env)) for _, exprs in outputs for e in exprs]


def test_orders_compute_the_same_outputs():
    x, temps, outputs = _sums_of_products(32)
    values = {s: 0.5 + 0.01 * i for i, s in enumerate(x)}
    want = _evaluate(temps, outputs, values)
    for ershov in (False, True):
        ordered = depth_first(temps, outputs, ershov)
        assert sorted(map(str, ordered)) == sorted(map(str, temps))
        assert _evaluate(ordered, outputs, values) == want


def test_the_order_that_reloads_less_is_kept():
    x, temps, outputs = _sums_of_products(32)
    program = Program(inputs=[], names={}, temporaries=temps, outputs=outputs)
    before = reloads(temps, outputs)
    assert before > 0                     # 32 products live at once: spilled
    kept = fewer_reloads(program)
    assert kept.temporaries != temps
    assert reloads(kept.temporaries, outputs) < before
    # already in a good order: left as it is
    again = fewer_reloads(kept)
    assert again.temporaries == kept.temporaries
    assert reloads(temps[:10], [("y", [s for s, _ in temps[:10]])], registers=16) == 0
