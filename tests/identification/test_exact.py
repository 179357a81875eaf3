"""The exact column dependencies: by primes with the coefficients checked over ℚ, against
the reduced row echelon form over ℚ."""
import random
from fractions import Fraction

from codegen.identification.exact import rref_pivots
from codegen.identification.modular import modular_dependencies


def _stack(seed, rows=30):
    """Rows over 8 columns with column 3 = 2/7 c0 - 5/3 c1 + 0.1575 c2, column 5 zero and
    column 7 = column 6 + 1/11 column 4; entries small fractions."""
    rng = random.Random(seed)
    out = []
    for _ in range(rows):
        r = [Fraction(rng.randint(-50, 50), rng.randint(1, 40)) for _ in range(8)]
        r[3] = Fraction(2, 7) * r[0] - Fraction(5, 3) * r[1] + Fraction("0.1575") * r[2]
        r[5] = Fraction(0)
        r[7] = r[6] + r[4] / 11
        out.append(r)
    return out


def test_primes_agree_with_the_rationals():
    rows = _stack(0)
    pivots, R = modular_dependencies(rows)
    assert (pivots, R) == tuple(rref_pivots(rows, 8))
    assert pivots == [0, 1, 2, 4, 6]
    assert R[0][3] == Fraction(2, 7) and R[2][3] == Fraction(63, 400) and R[3][7] == Fraction(1, 11)


def test_coefficients_too_large_to_recover_fall_back():
    """A coefficient whose fraction needs more digits than the primes carry is not
    recovered: None, and the caller reduces over ℚ."""
    rows = _stack(1)
    big = Fraction(10 ** 60 + 7, 3 ** 50)
    for r in rows:
        r[3] = big * r[0]
    assert modular_dependencies(rows) is None
    pivots, R = rref_pivots(rows, 8)
    assert R[0][3] == big
