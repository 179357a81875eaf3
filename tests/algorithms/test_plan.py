"""What the plan promises the emitter: which programs a model gets, by the model's kind and
the options, and that each is complete (it reads only what it defines). KanesMethod's mass
matrix and forcing are the oracle for the programs' values."""
import numpy as np
import pytest
import sympy as sm
import sympy.physics.mechanics as me

from codegen import GibbsAppellMethod, Options, equations_of, examples as ex
from codegen.algorithms.plan import build_programs, planned_equations
from codegen.programs.program import check_defined

LIMIT = Options().unrolled_limit


def _programs(model, **kw):
    eq = equations_of(GibbsAppellMethod(**model.kwargs))
    options = dict(jacobian=False, parameter_jacobian=False, recursive=None) | kw
    return eq, build_programs(eq, LIMIT, options["jacobian"], options["parameter_jacobian"],
                              options["recursive"])


def test_a_chain_gets_the_recursion_and_its_tree_algorithms():
    eq, programs = _programs(ex.n_pendulum_on_cart(3))
    assert {"eval", "tree", "inverse_dynamics"} <= set(programs)
    assert "solve" not in programs and "velocity" not in programs
    for kind, program in programs.items():
        check_defined(program, kind)


def test_recursive_false_gives_dense_programs_only():
    eq, programs = _programs(ex.n_pendulum_on_cart(3), recursive=False)
    assert eq.tree is not None                     # the tree is a fact of the equations
    assert "solve" in programs and not {"tree", "inverse_dynamics", "columns"} & set(programs)
    assert planned_equations(eq, False).tree_note == "recursive=False"
    assert planned_equations(eq, None) is eq


def test_constraints_get_their_programs_and_no_tree():
    eq, programs = _programs(ex.four_bar())       # the loop closed at run time
    assert eq.constraints is not None
    assert {"eval", "velocity", "position"} <= set(programs)
    assert not {"tree", "solve", "jacobian"} & set(programs)
    assert "run-time constraints" in eq.tree_note


def test_the_jacobian_only_when_asked_or_small():
    _, none = _programs(ex.n_pendulum_on_cart(2), jacobian=False)
    _, auto = _programs(ex.n_pendulum_on_cart(2), jacobian=None)
    _, forced = _programs(ex.n_pendulum_on_cart(2), jacobian=True, parameter_jacobian=True)
    assert "jacobian" not in none and "jacobian" in auto
    assert {"jacobian", "parameter_jacobian"} <= set(forced)


def test_the_eval_program_equals_kanes_method():
    """The eval program's M and F (whichever algorithm the plan chose) equal KanesMethod's
    at a random state of the double pendulum on a cart."""
    model = ex.n_pendulum_on_cart(2)
    eq, programs = _programs(model)
    program = programs["eval"]
    km = me.KanesMethod(**model.kwargs)
    km.kanes_equations(model.bodies, model.loads)
    rng = np.random.default_rng(7)
    x = rng.uniform(-1, 1, eq.nq + eq.nu)
    p = rng.uniform(0.5, 2, len(eq.constants))
    arrays = {"x": x, "p": p, "r": rng.uniform(-1, 1, len(eq.specifieds))}
    by_name = {n: o for o, n in program.names.items()}
    memo = {by_name[i.name]: sm.Float(arrays[i.array][i.index]) for i in program.inputs}
    for s, e in program.temporaries:
        memo[s] = e.xreplace(memo)
    out = {name: [float(sm.sympify(e).xreplace(memo)) for e in exprs]
           for name, exprs in program.outputs}
    subs = dict(zip(list(km.q) + list(km.u), x))
    subs.update({sm.Symbol(n): v for n, v in zip(eq.constant_names, p)})
    subs.update(dict(zip(eq.specifieds, arrays["r"])))
    M = np.array(km.mass_matrix.subs(subs), dtype=float)
    F = np.array(km.forcing.subs(subs), dtype=float).ravel()
    n = eq.nu
    ours = np.zeros((n, n))
    ours[np.tril_indices(n)] = out["M"]
    ours = ours + np.tril(ours, -1).T
    assert np.allclose(ours, M, rtol=1e-12) and np.allclose(out["F"], F, rtol=1e-12)
