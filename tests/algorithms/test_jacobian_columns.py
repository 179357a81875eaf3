"""The Jacobian's solve M Z = R column by column through the articulated-body recursion
(codegen.algorithms.jacobian_columns.column_solve_program, the generated "columns" function) against the
dense factorization it replaces, Pinocchio's ABA derivatives and finite differences."""
from pathlib import Path

import numpy as np
import pytest

import codegen.algorithms.jacobian_columns as columns
from codegen import GibbsAppellMethod, generate
from codegen import examples as ex


def _has_columns(out_dir) -> bool:
    return any("_columns(" in f.read_text() for f in Path(out_dir).rglob("*.c"))


def _build(model, name, out_dir, forced=None, **options):
    with pytest.MonkeyPatch.context() as mp:
        if forced is not None:
            mp.setattr(columns, "_column_pays", lambda per_column, nu: forced)
        return generate(GibbsAppellMethod(**model.kwargs), name, output_dir=out_dir,
                        jacobian=True, **options)


@pytest.fixture(scope="module")
def pendulum(tmp_path_factory):
    """The 12-link pendulum on a cart, where the recursion pays (about 20 operations per
    link and column against the dense solve's 2 n per link), with both Jacobians."""
    model = ex.n_pendulum_on_cart(12)
    out = tmp_path_factory.mktemp("columns")
    mod = _build(model, "columns_pendulum12", out, parameter_jacobian=True)
    return model, mod, out


def test_pendulum_solves_by_columns(pendulum):
    model, mod, out = pendulum
    assert _has_columns(out)
    p = mod.parameters(model.parameter_values)
    rng = np.random.default_rng(5)
    x, r = rng.uniform(-1, 1, mod.nx), np.array([0.3])
    J, Jr = mod.jacobian(0.0, x, p, r), mod.input_jacobian(0.0, x, p, r)
    h = 1e-6
    for k in range(mod.nx):
        xp, xm = x.copy(), x.copy()
        xp[k] += h
        xm[k] -= h
        column = (mod.rhs(0.0, xp, p, r) - mod.rhs(0.0, xm, p, r)) / (2 * h)
        assert abs(column - J[:, k]).max() < 1e-6 * abs(J).max()
    column = (mod.rhs(0.0, x, p, r + h) - mod.rhs(0.0, x, p, r - h)) / (2 * h)
    assert abs(column - Jr[:, 0]).max() < 1e-6 * abs(Jr).max()
    Jp = mod.parameter_jacobian(0.0, x, p, r)
    for k in range(len(p)):
        pp, pm = p.copy(), p.copy()
        pp[k] += h
        pm[k] -= h
        column = (mod.rhs(0.0, x, pp, r) - mod.rhs(0.0, x, pm, r)) / (2 * h)
        assert abs(column - Jp[:, k]).max() < 1e-6 * max(1.0, abs(Jp).max())


def test_pendulum_columns_against_pinocchio(pendulum):
    pytest.importorskip("pinocchio")
    from codegen.bench.jacobian import _pinocchio, derivatives_difference
    from codegen.bench.simulate import to_relative
    model, mod, _ = pendulum
    n = 12
    pin, pm, data = _pinocchio(n, model.parameter_values)
    p = mod.parameters(model.parameter_values)
    x, r = np.random.default_rng(8).uniform(-1, 1, mod.nx), np.array([-0.7])
    q, v = to_relative(x, n)
    tau = np.zeros(n + 1)
    tau[0] = r[0]
    assert derivatives_difference(mod.jacobian(0.0, x, p, r), pin, pm, data, q, v, tau) < 1e-9


def test_spatial_tree_columns_equal_the_dense_solve(tmp_path):
    """Spherical joints (the recursion's Schur-complement step) with the column solve
    forced, against the same model's dense factorization."""
    model = ex.spatial_chain(2)
    cols = _build(model, "columns_chain2", tmp_path / "c", forced=True)
    dense = _build(model, "dense_chain2", tmp_path / "d", forced=False)
    assert _has_columns(tmp_path / "c") and not _has_columns(tmp_path / "d")
    p = cols.parameters(model.parameter_values)
    rng = np.random.default_rng(2)
    for _ in range(2):
        x, r = rng.uniform(-1, 1, cols.nx), rng.uniform(-1, 1, 2)
        a, b = cols.linearize(x, p, r), dense.linearize(x, p, r)
        for ours, theirs in zip(a, b):
            assert abs(ours - theirs).max() < 1e-11 * abs(theirs).max()


def test_columns_function_reports_a_singular_mass(pendulum):
    """A zero mass makes M singular: the column solve is never reached with a zero
    pivot (the model's own dynamics report it first)."""
    model, mod, _ = pendulum
    values = dict(model.parameter_values, m3=0.0)
    p = mod.parameters(values)
    with pytest.raises(Exception, match="mass"):
        mod.jacobian(0.0, np.zeros(mod.nx), p, np.array([0.0]))


def test_column_groups_merge_by_support(monkeypatch):
    """Columns of equal support share a group; small supports merge at the least growth
    of columns times rows, at most GROUPS of them; a column whose support holds more
    than GROUP_SHARE of the rows stays with the dense body."""
    monkeypatch.setattr(columns, "GROUPS", 4)
    legs = [frozenset(range(3 * k, 3 * k + 3)) for k in range(6)]
    # column 13 is zero by structure (a floating base's position): solved by no body
    supports = [legs[c % 6] for c in range(12)] + [frozenset(range(18)), frozenset()]
    groups = columns.column_groups(supports, 18)
    assert len(groups) == 4
    assert {12, 13}.isdisjoint(c for _, cols in groups for c in cols)
    assert sorted(c for _, cols in groups for c in cols) == list(range(12))
    for support, cols in groups:
        assert all(supports[c] <= support for c in cols)
    # two legs merged into each of two groups, the other two alone
    assert sorted(len(s) for s, _ in groups) == [3, 3, 6, 6]


def test_runs_of_three_are_padded_to_four():
    """A group's runs of three adjacent columns (a pair and a single column in
    _column_runs' tables) become runs of four with the column before, or at column 0
    the one after; other pairs and singles stay as they are."""
    from codegen.emit.column_loops import column_runs as _column_runs, padded_runs as _padded_runs
    cols = [0, 1, 2, 5, 6, 7, 9, 10, 12, 20, 21, 22, 23, 24, 25, 26]
    tables = _column_runs(cols, [4, 2, 1])
    pads, (fours, pairs, singles) = _padded_runs(tables, last=26)
    assert pads == {0: [4, 23], 3: [0]}
    assert fours == [20] and pairs == [9] and singles == [12]
    # at column 0 with no column after it within the table's: not padded
    pads, (_, pairs, singles) = _padded_runs(_column_runs([0, 1, 2], [4, 2, 1]), last=2)
    assert pads == {0: [], 3: []} and pairs == [0] and singles == [2]
