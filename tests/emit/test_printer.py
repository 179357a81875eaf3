"""The C printer's sums: a number shared by several terms is multiplied once, and the
printed C has the value of the expression."""
import math
import random

import sympy as sm

from codegen.emit.printer import CPrinter


def _c_value(text: str, values: dict) -> float:
    """The printed C evaluated as Python (the printer's C here is also Python: products,
    sums, parentheses and decimal numbers)."""
    return eval(text, {"__builtins__": {}}, dict(values))


def test_a_shared_number_is_taken_out_once():
    a, b, c, d = sm.symbols("a b c d")
    printer = CPrinter({})
    values = {"a": 0.3, "b": -1.7, "c": 2.5, "d": 0.11}
    cases = [(0.35 * a - 0.35 * b + c, 1), (-0.2 * a - 0.2 * b * c + 3, 2),
             (0.1 * a + 0.1 * b + 0.1 * c, 1), (-0.5 * a * b + 2 * a + 0.5 * c - 2 * d, 3),
             (2 * a + 3 * b, 2),
             # a number alone is a term, not a factor to take out
             (0.5 + 0.5 * a + 0.5 * b, 1), (2 * a + 2 * b + 2, 1), (0.5 * a - 0.5 * b - 0.5, 1)]
    for expr, products in cases:
        text = printer.expression(expr)
        assert text.count("*") == products, text
        want = float(expr.subs(values))
        assert math.isclose(_c_value(text, values), want, rel_tol=1e-15), text


def test_random_sums_keep_their_value():
    """Sums of products with numbers drawn from a few, so that many are shared, some of
    them equal to a sum's constant term: the printed C has the expression's value."""
    rng = random.Random(7)
    x = sm.symbols("x0:5")
    values = {str(s): 0.37 + 0.61 * i for i, s in enumerate(x)}
    printer = CPrinter({})
    for _ in range(300):
        numbers = [sm.Float(rng.choice([0.5, -0.5, 2.0, 0.25, -3.0, 1.0]))
                   for _ in range(rng.randint(1, 6))]
        expr = sm.Float(rng.choice([0, 0.5, 2.0, -0.25])) + sm.Add(
            *[n * rng.choice(x) * (rng.choice(x) if rng.random() < 0.5 else 1)
              for n in numbers])
        want = float(expr.subs({s: values[str(s)] for s in x}))
        got = _c_value(printer.expression(expr), values)
        assert math.isclose(got, want, rel_tol=1e-13, abs_tol=1e-13), (expr, got, want)
