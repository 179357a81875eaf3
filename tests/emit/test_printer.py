"""The C printer's sums: a number shared by several terms is multiplied once, and the
printed C has the value of the expression."""
import math

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
             (2 * a + 3 * b, 2)]
    for expr, products in cases:
        text = printer.expression(expr)
        assert text.count("*") == products, text
        want = float(expr.subs(values))
        assert math.isclose(_c_value(text, values), want, rel_tol=1e-15), text
