"""The drop-in on other people's material: SymPy's documentation examples for
physics.mechanics and physics.biomechanics and PyDy's examples (issue 27).

Each model (codegen.bench.doc_examples, written from the documented model) is
formed with KanesMethod and with GibbsAppellMethod through the documented call
(``KanesMethod(...)`` and ``kanes_equations``, or ``System.form_eoms(eom_method=...)``),
once per tool for the module. Then, at two random consistent states (dependent
coordinates and speeds solved from the constraints, random specified inputs):

- mass_matrix_full, forcing_full, mass_matrix and forcing agree to 1e-9 relative
  (evaluated through their common subexpressions, never simplified), and so do
  the solved rates and, where the model has auxiliary speeds, auxiliary_eqs;
- the compiled model (codegen.generate) gives KanesMethod's rates;
- PyDy's System integrates each tool's object with the same constants,
  specifieds, initial conditions, times and odeint settings, and the
  trajectories agree to 1e-9 relative: with the lambdify generator for every
  model (two of them in the benchmark, see PYDY_IN_BENCHMARK), with cython for
  two small ones, with PyDy's formats of specifieds on PyDy's multi-DoF example.
"""
import importlib.util

import numpy as np
import pytest
import sympy as sm
import sympy.physics.mechanics as me
from pydy import system as pydy_system

from codegen import GibbsAppellMethod, generate
from codegen.bench.doc_examples import MODELS
from codegen.bench.doc_model import Evaluated, consistent_state, solve_full

t = me.dynamicsymbols._t
RTOL = 1e-9
#: odeint's settings for both tools: tight, so that the two runs differ by rounding only
ODE = dict(rtol=1e-11, atol=1e-11)
#: models whose KanesMethod object PyDy's System cannot integrate, with the reason; the
#: reference is then KanesMethod's own rates, integrated by odeint with the same settings
KANE_NOT_IN_PYDY = {
    "four_bar": "KanesMethod's forcing keeps uaux' in its acceleration-constraint rows "
                "(the time derivative of velocity constraints that carry the auxiliary "
                "speeds); PyDy's System counts uaux' as known and cannot print it",
}
#: PyDy's System with lambdify on these two lambdifies the matrices once more per tool
#: (their forcing_full has 0.26 M and 1.6 M operations, either tool): their runs are
#: checked by the benchmark (python -m codegen.bench.dropin), to keep this file lean
PYDY_IN_BENCHMARK = ["bicycle", "carvallo_whipple"]
#: the cython generator compiles an extension per run: two small models
CYTHON_MODELS = ["double_pendulum", "multidof_holonomic"]
GENERATORS = ["cython"] + [g for g in ("theano", "symjit") if importlib.util.find_spec(g)]


class Formed:
    """One model formed by both tools, with its numbers at two consistent states."""

    def __init__(self, name):
        self.name = name
        self.model = MODELS[name]()
        self.kane = self.model.form(me.KanesMethod)
        self.ours_model = MODELS[name]()
        self.ours = self.ours_model.form(GibbsAppellMethod)
        methods = {"kane": self.kane, "ours": self.ours}
        # the auxiliary speeds and their rates are zero in the equations of motion
        aux = self.model.u_auxiliary
        self.aux_zero = {**{a.diff(t): 0 for a in aux}, **{a: 0 for a in aux}}
        # each public matrix read once (GibbsAppellMethod's are made on each read)
        self.public = {tool: [m.mass_matrix_full, m.forcing_full, m.mass_matrix, m.forcing]
                       for tool, m in methods.items()}
        self.evaluated = {tool: Evaluated([X.xreplace(self.aux_zero) if self.aux_zero else X
                                           for X in mats])
                          for tool, mats in self.public.items()}
        self.inputs = {tool: e.inputs(methods[tool]) for tool, e in self.evaluated.items()}
        self.used = {tool: e.symbols for tool, e in self.evaluated.items()}
        self.specs = self.inputs["kane"]
        self.consts = sorted(self.used["kane"], key=str)
        self.p = [self.model.constants[c] for c in self.consts]
        rng = np.random.default_rng(20270)
        self.states = [consistent_state(self.model, self.kane, rng, specifieds=self.specs)
                       for _ in range(2)]
        self.numbers = {tool: [e(self.values(k)) for k in range(len(self.states))]
                        for tool, e in self.evaluated.items()}

    def values(self, k):
        q, u, r = self.states[k]
        return {**dict(zip(self.kane.q, q)), **dict(zip(self.kane.u, u)),
                **dict(zip(self.specs, r)), **dict(zip(self.consts, self.p))}

    def kane_rates(self, k):
        return solve_full(*self.numbers["kane"][k][:2])


_FORMED = {}


@pytest.fixture(scope="module")
def formed():
    """Each model formed once per tool for the module, on first use."""
    def get(name):
        if name not in _FORMED:
            _FORMED[name] = Formed(name)
        return _FORMED[name]
    yield get
    _FORMED.clear()


def _close(ours, theirs, what):
    scale = max(np.abs(theirs).max(), 1e-300)
    err = np.abs(ours - theirs).max() / scale
    assert err <= RTOL, f"{what}: relative difference {err:.3g}"


@pytest.mark.parametrize("name", list(MODELS))
def test_matrices_equal_kanes(formed, name):
    f = formed(name)
    assert list(f.ours.q) == list(f.kane.q) and list(f.ours.u) == list(f.kane.u)
    assert f.inputs["ours"] == f.specs, "the equations' specified inputs differ"
    assert f.used["ours"] == f.used["kane"], "the equations' constants differ"
    assert [X.shape for X in f.public["ours"]] == [X.shape for X in f.public["kane"]]
    what = ("mass_matrix_full", "forcing_full", "mass_matrix", "forcing")
    for k, (kane, ours) in enumerate(zip(f.numbers["kane"], f.numbers["ours"])):
        for label, a, b in zip(what, ours, kane):
            _close(a, b, f"{name} {label}, state {k}")
        _close(solve_full(*ours[:2]), solve_full(*kane[:2]), f"{name} rates, state {k}")


@pytest.mark.parametrize("name", ["rolling_disc_aux", "four_bar"])
def test_auxiliary_equations_equal_kanes(formed, name):
    """auxiliary_eqs at the states, with the rates of the speeds random and the
    specified reactions random."""
    f = formed(name)
    assert f.model.u_auxiliary
    both = [X.xreplace(f.aux_zero) for X in (f.kane.auxiliary_eqs, f.ours.auxiliary_eqs)]
    assert both[0].shape == both[1].shape
    rates = list(f.kane.u.diff(t))
    extra = sorted((me.find_dynamicsymbols(both[0]) | me.find_dynamicsymbols(both[1]))
                   - set(f.kane.q) - set(f.kane.u) - set(rates), key=str)
    consts = sorted((both[0].free_symbols | both[1].free_symbols) - {t}, key=str)
    p = [f.model.constants[c] for c in consts]
    rng = np.random.default_rng(3)
    for q, u, r in f.states:
        values = [rng.uniform(-1, 1, len(rates)), rng.uniform(-1, 1, len(extra))]
        got = []
        for eqs in both:
            fn = sm.lambdify([list(f.kane.q), list(f.kane.u), consts, rates, extra], eqs,
                             cse=True)
            got.append(np.array(fn(q, u, p, *values), dtype=float).ravel())
        _close(got[1], got[0], f"{name} auxiliary_eqs")


@pytest.fixture(scope="module")
def outdir(tmp_path_factory):
    return tmp_path_factory.mktemp("doc_examples")


@pytest.mark.parametrize("name", list(MODELS))
def test_compiled_rates_equal_kanes(formed, outdir, name):
    """generate(GibbsAppellMethod) compiles; its rhs on the state [q, u_independent]
    is KanesMethod's solved [q'; u'] there (parameters taken with SymPy symbols as keys)."""
    f = formed(name)
    mod = generate(f.ours, name, output_dir=outdir)
    names = [s.name for s in list(f.kane.q) + list(f.kane.u)]
    index = [names.index(s) for s in mod.states]
    constants = {c: v for c, v in f.model.constants.items() if c.name in mod.constants}
    p = mod.parameters(constants)
    spec_names = [s.name for s in f.specs]
    for k, (q, u, r) in enumerate(f.states):
        x = np.concatenate([q, u])[index]
        rv = [r[spec_names.index(s)] for s in mod.specifieds] or None
        _close(np.asarray(mod.rhs(0.0, x, p, rv)), f.kane_rates(k)[index],
               f"{name} compiled rates, state {k}")


def _system(f, method, specifieds=None, generator="lambdify"):
    """PyDy's System on method with the model's numbers, from its consistent initial
    state, over the first second (or the documented span, if shorter)."""
    q, u, _ = consistent_state(f.model, f.kane)
    tool = "kane" if method is f.kane else "ours"
    sys = pydy_system.System(
        method, constants={c: v for c, v in f.model.constants.items() if c in f.used[tool]},
        specifieds={s: f.model.specifieds[s] for s in f.inputs[tool]}
        if specifieds is None else specifieds,
        initial_conditions=dict(zip(list(method.q) + list(method.u), np.concatenate([q, u]))),
        times=f.model.time_grid(end=min(1.0, f.model.times[1]), num=11))
    sys.generate_ode_function(generator=generator)
    return sys


def _kane_reference(f, times):
    """KanesMethod's rates, auxiliary speeds zero, integrated by odeint as PyDy does."""
    from scipy.integrate import odeint
    f_num = sm.lambdify([list(f.kane.q), list(f.kane.u), f.consts, f.specs],
                        [X.xreplace(f.aux_zero) for X in f.public["kane"][:2]], cse=True)
    r = [f.model.specifieds[s] for s in f.specs]
    nq = len(f.kane.q)
    q, u, _ = consistent_state(f.model, f.kane)
    return odeint(lambda x, _t: solve_full(*f_num(x[:nq], x[nq:], f.p, r)),
                  np.concatenate([q, u]), times, **ODE)


@pytest.mark.parametrize("name", [n for n in MODELS if n not in PYDY_IN_BENCHMARK])
def test_pydy_system_lambdify(formed, name):
    f = formed(name)
    ours = _system(f, f.ours)
    x_ours = ours.integrate(**ODE)
    assert x_ours.shape == (len(ours.times), len(f.kane.q) + len(f.kane.u))
    if name in KANE_NOT_IN_PYDY:
        with pytest.raises(NotImplementedError, match="Derivative"):
            _system(f, f.kane).integrate(**ODE)
        x_kane = _kane_reference(f, ours.times)
    else:
        kane = _system(f, f.kane)
        assert ours.constants_symbols == kane.constants_symbols
        assert ours.specifieds_symbols == kane.specifieds_symbols
        x_kane = kane.integrate(**ODE)
    assert np.isfinite(x_ours).all()
    _close(x_ours, x_kane, f"{name} trajectory")


@pytest.mark.parametrize("generator", GENERATORS)
@pytest.mark.parametrize("name", CYTHON_MODELS)
def test_pydy_system_compiled_generators(formed, name, generator):
    f = formed(name)
    _close(_system(f, f.ours, generator=generator).integrate(**ODE),
           _system(f, f.kane, generator=generator).integrate(**ODE),
           f"{name} trajectory ({generator})")


def _sin_force(x, time):
    return 1.0 * np.sin(2 * np.pi * time)


def _both(x, time):
    return np.array([5.0 * np.sin(2.0 * np.pi * time), 10.0 * np.cos(2.0 * np.pi * time)])


@pytest.mark.parametrize("kind", ["function and constant", "one function for both",
                                  "symbols and values"])
def test_pydy_specifieds_formats(formed, kind):
    """PyDy's example gives F and T as a function of (x, t), a constant, one function
    for the pair, or the {'symbols': ..., 'values': ...} format."""
    f = formed("multidof_holonomic")
    F, T = f.specs
    given = {"function and constant": {F: _sin_force, T: 1.0},
             "one function for both": {(F, T): _both},
             "symbols and values": {'symbols': [F, T], 'values': np.array([0.5, 1.0])}}[kind]
    x_ours = _system(f, f.ours, specifieds=dict(given)).integrate(**ODE)
    x_kane = _system(f, f.kane, specifieds=dict(given)).integrate(**ODE)
    _close(x_ours, x_kane, f"multidof_holonomic trajectory, specifieds as {kind}")


def test_dropin_benchmark_compares_before_it_times():
    """codegen.bench.dropin on the smallest model: both tools run in their own
    interpreters and agree; its check tells a difference in the matrices or the
    trajectories (the check is what keeps a wrong answer out of the timings)."""
    from codegen.bench.dropin import agreement, compare
    (name, runs, equal, verdict), = compare(["mass_spring_damper"], cap=300)
    assert equal is True and verdict == "yes", (runs, verdict)
    for run in runs.values():
        assert run["formulate"] > 0 and run["lambdify"] > 0 and run["ops_F"] > 0
    kane = runs["kane"]
    wrong = dict(kane, numbers=[[m, [x * (1 + 1e-6) for x in f]] for m, f in kane["numbers"]])
    assert agreement(kane, wrong)[0] is False
    drifted = dict(kane, trajectory=(np.array(kane["trajectory"]) * (1 + 1e-6)).tolist())
    assert agreement(kane, drifted)[1] == "NO"
