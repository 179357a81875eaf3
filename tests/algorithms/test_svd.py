"""The self-contained C SVD (cg_svd in templates/runtime/cg_linalg.c) against numpy.linalg.svd."""
import re

import numpy as np
import pytest

import linalg_lib as L


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    return L.build(tmp_path_factory.mktemp("linalg"))


def check_svd(lib, A, rtol=1e-12):
    US, V, s, sweeps = L.svd(lib, A)
    assert sweeps > 0
    m, n = A.shape
    ref = np.linalg.svd(A, compute_uv=False)
    k = min(m, n)
    scale = max(ref[0], 1e-300)
    assert np.allclose(s[:k], ref, rtol=0, atol=rtol * scale), (s, ref)
    assert np.all(np.diff(s) <= 1e-300 + 1e-15 * scale)            # descending
    assert np.allclose(s[k:], 0, atol=rtol * scale)                 # null space columns
    assert np.allclose(V.T @ V, np.eye(n), atol=1e-13)              # V orthogonal
    assert np.allclose(US @ V.T, A, atol=1e-13 * scale)             # reconstructs A
    return US, V, s


@pytest.mark.parametrize("shape", [(1, 1), (2, 3), (3, 2), (4, 4), (3, 7), (7, 3), (6, 6)])
def test_random(lib, shape):
    rng = np.random.default_rng(sum(shape))
    for _ in range(5):
        check_svd(lib, rng.normal(size=shape))


def test_ill_conditioned(lib):
    rng = np.random.default_rng(3)
    Q1, _ = np.linalg.qr(rng.normal(size=(5, 5)))
    Q2, _ = np.linalg.qr(rng.normal(size=(5, 5)))
    sv = np.logspace(0, -12, 5)
    A = Q1 @ np.diag(sv) @ Q2.T
    US, V, s = check_svd(lib, A)
    # one-sided Jacobi keeps the small singular values to high relative accuracy
    assert np.allclose(s, sv, rtol=1e-3)


def test_rank_deficient_and_pseudoinverse(lib):
    rng = np.random.default_rng(5)
    for m, n, r in [(3, 5, 2), (5, 3, 1), (4, 4, 3), (2, 6, 2)]:
        A = rng.normal(size=(m, r)) @ rng.normal(size=(r, n))
        US, V, s = check_svd(lib, A)
        rank = lib.cg_rank(n, s, 1e-9)
        assert rank == r == np.linalg.matrix_rank(A)
        b = rng.normal(size=m)
        x = np.empty(n)
        lib.cg_pinv_apply(m, n, rank, US, V, s, b, x)
        assert np.allclose(x, np.linalg.pinv(A, rcond=1e-9) @ b, atol=1e-12)
        g = rng.normal(size=n)
        y = np.empty(m)
        lib.cg_pinv_transpose_apply(m, n, rank, US, V, s, g, y)
        assert np.allclose(y, np.linalg.pinv(A.T, rcond=1e-9) @ g, atol=1e-12)
        # the last n - r columns of V span the null space
        assert np.allclose(A @ V[:, rank:], 0, atol=1e-12)


def test_damped_pseudoinverse(lib):
    """x += V diag(s / (s^2 + mu^2)) U^T b: Tikhonov-damped, bounded by 1 / (2 mu)."""
    rng = np.random.default_rng(8)
    A = rng.normal(size=(3, 5))
    A[2] = A[0] + 1e-7 * rng.normal(size=5)              # a nearly dependent row
    U, sv, Vt = np.linalg.svd(A, full_matrices=False)
    US, V, s = check_svd(lib, A, rtol=1e-10)
    b = rng.normal(size=3)
    mu = 1e-2 * s[0]
    x = np.zeros(5)
    lib.cg_damped_pinv_add(3, 5, 3, US, V, s, mu, b, x)
    ref = Vt.T @ np.diag(sv / (sv**2 + mu**2)) @ U.T @ b
    assert np.allclose(x, ref, atol=1e-12)
    assert np.linalg.norm(x) <= np.linalg.norm(b) / (2 * mu) + 1e-12


def test_zero_and_duplicate_rows(lib):
    A = np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0], [1.0, 2.0, 3.0]])
    US, V, s = check_svd(lib, A)
    assert lib.cg_rank(3, s, 1e-9) == 1
    zero = np.zeros((2, 3))
    US, V, s, sweeps = L.svd(lib, zero)
    assert np.all(s == 0) and lib.cg_rank(3, s, 1e-9) == 0


def test_cholesky_and_packed_matvec(lib):
    rng = np.random.default_rng(9)
    n = 6
    B = rng.normal(size=(n, n))
    M = B @ B.T + n * np.eye(n)
    packed = np.array([M[i, j] for i in range(n) for j in range(i + 1)])
    x = rng.normal(size=n)
    y = np.empty(n)
    lib.cg_packed_matvec(n, packed, x, y)
    assert np.allclose(y, M @ x)
    b = rng.normal(size=n)
    sol, inv = b.copy(), np.empty(n)
    assert lib.cg_cholesky_solve(n, packed.copy(), sol, inv) == 0
    assert np.allclose(sol, np.linalg.solve(M, b))
    M[2, 2] = -1.0
    bad = np.array([M[i, j] for i in range(n) for j in range(i + 1)])
    assert lib.cg_cholesky_solve(n, bad, b.copy(), inv) == 1     # not positive definite


def test_unrolled_ldl_with_structural_zeros(lib):
    rng = np.random.default_rng(10)
    n = L.LDL_N
    for trial in range(5):
        B = rng.normal(size=(n, n))
        M = B @ B.T + n * np.eye(n)
        M[2, 2] += 40.0                        # room to zero the couplings below and stay SPD
        for i, j in L.LDL_ZEROS:
            M[i, j] = M[j, i] = 0.0
        M += np.eye(n) * max(0.0, 1e-3 - np.linalg.eigvalsh(M).min())
        packed = np.array([M[i, j] for i in range(n) for j in range(i + 1)])
        b = rng.normal(size=n)
        sol = b.copy()
        assert lib.cgt_ldl_public(packed, sol) == 0
        assert np.allclose(sol, np.linalg.solve(M, b), rtol=1e-12, atol=1e-12)
    M[4, 4] = -1.0
    bad = np.array([M[i, j] for i in range(n) for j in range(i + 1)])
    assert lib.cgt_ldl_public(bad, b.copy()) == 1              # not positive definite
    bad[0] = 0.0
    assert lib.cgt_ldl_public(bad, b.copy()) == 1              # zero pivot: no division result escapes


def test_ldl_program_structure():
    import sympy as sm
    from codegen import Options
    from codegen.algorithms import ldlt as solve
    limit = Options().unrolled_limit
    dense = solve.ldl_program([sm.Symbol(f"m{k}") for k in range(10)], 4, limit)
    names = {str(s) for s, _ in dense.temporaries}
    assert {"l1_0", "l3_2", "d3", "e3", "u0"} <= names
    sparse = solve.ldl_program([sm.Symbol(f"m{i}{j}") if (i, j) not in L.LDL_ZEROS else sm.S.Zero
                                for i in range(L.LDL_N) for j in range(i + 1)], L.LDL_N, limit)
    names = {str(s) for s, _ in sparse.temporaries}
    assert "w2_1" in names                              # fill-in of a zero entry
    assert not {"w3_0", "l3_0", "w6_0", "l6_0"} & names  # zeros that stay zero cost nothing
    assert {i.name for i in sparse.inputs if i.array == "M"}.isdisjoint(
        {f"a{i * (i + 1) // 2 + j}" for i, j in L.LDL_ZEROS})
    # a structurally zero pivot, or a size beyond the default unrolled_limit: the loop
    # version is used
    assert solve.ldl_program([sm.S.Zero, sm.Symbol("a"), sm.Symbol("b")], 2, limit) is None
    assert solve.ldl_program([sm.Symbol(f"m{k}") for k in range(50 * 51 // 2)], 50, limit) is None


def test_sincos_within_two_ulp_of_libm(lib):
    """cg_sincos (templates/runtime/cg_math.h) against NumPy's sin and cos (1 ulp of the true values)."""
    rng = np.random.default_rng(11)
    x = np.concatenate([rng.uniform(-1e-3, 1e-3, 20000), rng.uniform(-7, 7, 200000),
                        rng.uniform(-1e3, 1e3, 100000), rng.uniform(-1e6, 1e6, 100000),
                        np.arange(-64, 65) * np.pi / 4, [0.0, 1e-300, 5e-324]])
    s, c = np.empty_like(x), np.empty_like(x)
    lib.cgt_sincos_public(len(x), x, s, c)
    for ours, ref in ((s, np.sin(x)), (c, np.cos(x))):
        err = np.abs(ours - ref)
        away = np.abs(ref) > 1e-3            # near a zero of the function: absolute error
        assert (err[away] / np.spacing(np.abs(ref[away]))).max() <= 2.0
        assert err.max() <= 2 * np.spacing(0.5)
    special = np.array([np.nan, np.inf, -np.inf, -0.0, 2e6, -3e9, 1e300])
    s, c = np.empty_like(special), np.empty_like(special)
    lib.cgt_sincos_public(len(special), special, s, c)
    assert np.isnan(s[:3]).all() and np.isnan(c[:3]).all()
    assert s[3] == 0.0 and np.signbit(s[3]) and c[3] == 1.0
    assert np.array_equal(s[4:], np.sin(special[4:])) and np.array_equal(c[4:], np.cos(special[4:]))


def test_sincos2_has_the_bits_of_two_sincos(lib):
    """The SSE2 pair (cg_sincos2 in templates/runtime/cg_math.h): lane by lane the scalar operations,
    including pairs where one angle takes the far path (>= 1e6, NaN, inf)."""
    rng = np.random.default_rng(12)
    special = np.array([0.0, -0.0, 5e-324, np.pi / 4, -np.pi / 2, 999999.9, 1e6, -3e9, np.nan,
                        np.inf, -np.inf])
    pairs = np.array(np.meshgrid(special, special)).reshape(2, -1).T.ravel()
    x = np.concatenate([pairs, rng.uniform(-7, 7, 100000), rng.uniform(-1e6, 1e6, 100000)])
    s1, c1, s2, c2 = (np.empty_like(x) for _ in range(4))
    lib.cgt_sincos_public(len(x), x, s1, c1)
    lib.cgt_sincos2_public(len(x), x, s2, c2)
    assert s1.tobytes() == s2.tobytes() and c1.tobytes() == c2.tobytes()


def test_all_finite_finds_every_infinity_and_nan(lib):
    """cg_all_finite (the runtime's test of every output): by its sum, sixteen values a
    pass and a tail, so a NaN or an infinity at any position of any length is found, and
    finite values whose sum overflows (to inf, or to NaN with both signs) still pass."""
    for n in range(0, 41):
        assert lib.cg_all_finite(np.zeros(max(n, 1)), n) == 1
        for k in range(n):
            for bad in (np.nan, np.inf, -np.inf):
                v = np.linspace(-1.0, 1.0, n)
                v[k] = bad
                assert lib.cg_all_finite(v, n) == 0, (n, k, bad)
        big = np.full(max(n, 1), 1.5e308)
        big[1::2] *= -1 if n % 3 == 0 else 1
        assert lib.cg_all_finite(big, n) == 1, n


def test_ldl_program_eliminates_a_floating_base_last():
    """A floating base's speeds first, then legs that couple to the base and within
    themselves only (Solo12's pattern, smaller): root first, the base's columns fill
    all of L; leaves first (Featherstone's L Dᵀ L) there is no fill-in. The program
    takes the order with less fill, and u' and the pivots still come at each unknown's
    own index: checked against numpy's solve."""
    import sympy as sm
    from codegen import Options
    from codegen.algorithms import ldlt as solve
    base, legs = 3, [(3, 4), (5, 6, 7)]
    n = base + sum(map(len, legs))
    leg_of = {i: k for k, leg in enumerate(legs) for i in leg}
    nonzero = {(i, j) for i in range(n) for j in range(i)
               if j < base or leg_of.get(i) == leg_of.get(j)}
    assert solve.elimination_order(nonzero, n) == list(reversed(range(n)))
    assert solve.elimination_order({(1, 0), (2, 1)}, 3) == [0, 1, 2]   # a chain: as given
    mass = [sm.Symbol(f"m{i}_{j}") if i == j or (i, j) in nonzero else sm.S.Zero
            for i in range(n) for j in range(i + 1)]
    program = solve.ldl_program(mass, n, Options().unrolled_limit)
    assert sum(str(s).startswith("l") for s, _ in program.temporaries) == len(nonzero)
    rng = np.random.default_rng(3)
    B = rng.normal(size=(n, n))
    M = B @ B.T + n * np.eye(n)
    for i in range(n):
        for j in range(i):
            if (i, j) not in nonzero:
                M[i, j] = M[j, i] = 0.0
    M += np.eye(n) * max(0.0, 1e-2 - np.linalg.eigvalsh(M).min())
    b = rng.normal(size=n)
    values = {sm.Symbol(i.name, real=True): (M[tuple(map(int, re.findall(r"\d+", i.label)))]
                                             if i.array == "M" else b[i.index])
              for i in program.inputs}
    for s, e in program.temporaries:
        values[s] = float(e.subs(values))
    out = dict(program.outputs)
    u = np.array([float(sm.sympify(e).subs(values)) for e in out["F"]])
    assert np.allclose(u, np.linalg.solve(M, b), rtol=1e-12, atol=1e-12)
    # the pivots at each unknown's index: D = diag of Lᵀ D L's D, here by the reversed order
    P = np.eye(n)[::-1]
    d = np.diag(np.linalg.cholesky(P @ M @ P)) ** 2
    D = np.array([float(sm.sympify(e).subs(values)) for e in out["D"]])
    assert np.allclose(D, d[::-1], rtol=1e-12)
