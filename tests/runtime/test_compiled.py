"""The compiled path: generated C against the SymPy expressions, caching, determinism."""
import json
import os
import re
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
import sympy as sm
import sympy.physics.mechanics as me
from scipy.integrate import solve_ivp

import built_models
from codegen import GibbsAppellMethod, examples as ex, generate, load
from codegen.pipeline import cache
from codegen.pipeline.build import model_sources
from codegen.pipeline.cache import sources_key
from codegen.pipeline.options import Options

t = me.dynamicsymbols._t


def numeric(expr, values):
    values = {k: sm.Float(float(v), 30) for k, v in values.items()}
    derivs = {k: v for k, v in values.items() if isinstance(k, sm.Derivative)}
    rest = {k: v for k, v in values.items() if k not in derivs}
    return np.array(sm.sympify(expr).xreplace(derivs).xreplace(rest).evalf(30), dtype=float)


def random_inputs(model, ga, mod, rng):
    """Matching SymPy values and arrays x, p, r for a compiled model."""
    by_name = {str(c): c for c in model.constants}
    # products of inertia small, so that every body's inertia is positive definite
    p = np.array([rng.uniform(-0.1, 0.1) if n.endswith(("xy", "yz", "zx")) else rng.uniform(0.5, 1.5)
                  for n in mod.constants])
    x = rng.uniform(0.2, 1.2, mod.nx)
    vals = {by_name[n]: v for n, v in zip(mod.constants, p)}
    vals.update(zip(list(ga.state), x))
    specs = {str(s.func): s for s in model.specifieds}
    r = rng.uniform(-1, 1, len(mod.specifieds))
    vals.update({specs[n]: v for n, v in zip(mod.specifieds, r)})
    return vals, x, p, (r if len(r) else None)


MODELS = built_models.MODELS


@pytest.mark.parametrize("name", MODELS)
def test_compiled_equals_sympy(built, name):
    model, ga, mod = built[name]
    rng = np.random.default_rng(11)
    for _ in range(3):
        vals, x, p, r = random_inputs(model, ga, mod, rng)
        M = numeric(ga.reduced_mass_matrix, vals)
        F = numeric(ga.reduced_forcing, vals).ravel()
        qd = np.array([numeric(ga.to_state(ga.kindiffdict()[q.diff()]), vals) for q in ga.q],
                      dtype=float)
        assert np.allclose(mod.mass_matrix(0.0, x, p, r), M, rtol=1e-12, atol=1e-14 * abs(M).max())
        assert np.allclose(mod.forcing(0.0, x, p, r), F, rtol=1e-12, atol=1e-14 * abs(F).max())
        xd = mod.rhs(0.0, x, p, r)
        assert np.allclose(xd[:mod.nq], qd, rtol=1e-12, atol=1e-14)
        assert np.allclose(xd[mod.nq:], np.linalg.solve(M, F), rtol=1e-10)


def test_names_and_layout(built):
    model, ga, mod = built["rolling_disk"]
    assert mod.states == ["phi", "theta", "psi", "u1", "u2", "u3"]
    assert mod.constants == ["m", "r", "g"]           # the model's declared order
    assert mod.specifieds == []
    _, _, pend = built["pendulum3"]
    assert pend.specifieds == ["F"]
    header = (mod.source_dir / "rolling_disk.h").read_text()
    assert "#define ROLLING_DISK_NX 6" in header
    assert '"phi", "theta", "psi", "u1", "u2", "u3",' in (mod.source_dir / "rolling_disk.c").read_text()
    code = (pend.source_dir / "pendulum3.c").read_text()
    assert "cg_sincos" in code and not re.search(r"pow\([^;]*?,\s*-?\d+(\.0*)?\)", code)  # no pow(x, 2)


def test_out_argument_writes_in_place(built):
    model, ga, mod = built["rolling_disk"]
    x, p = np.full(6, 0.7), np.ones(3)
    out = np.zeros(6)
    res = mod.rhs(0.0, x, p, out=out)
    assert res is out and np.all(out != 0)
    assert np.array_equal(out, mod.rhs(0.0, x, p))


def disk_energy(model):
    m, r, g = model.constants
    states = model.q_ind + model.u_ind
    E = model.energy()
    return sm.lambdify([states, [m, r, g]], E.subs(
        {q.diff(): 0 for q in model.q_ind}), "numpy")


def test_rolling_disk_conserves_energy(built):
    model, ga, mod = built["rolling_disk"]
    energy = disk_energy(model)
    p = np.array([2.0, 0.3, 9.81])                  # m, r, g
    x0 = np.array([0.0, 1.3, 0.0, 0.2, 1.5, 6.0])   # leaning, turning, spinning
    sol = solve_ivp(mod.rhs, (0, 5), x0, args=(p,), rtol=1e-12, atol=1e-12, method="DOP853")
    assert sol.success
    E = np.array([energy(xk, p) for xk in sol.y.T])
    drift = abs(E - E[0]).max() / abs(E[0])
    assert drift < 1e-9, drift
    assert abs(sol.y[1] - x0[1]).max() > 1e-3      # it did move


def test_cache_hit_and_miss(outdir, built):
    model, ga, mod = built["rolling_disk"]
    t0 = time.perf_counter()
    again = generate(ga, "rolling_disk", output_dir=outdir)
    assert time.perf_counter() - t0 < 1.0
    assert again.key == mod.key
    # a changed model under the same name: new key, new library, new numbers
    changed = ex.rolling_disk()
    changed.loads = [(changed.bodies[0].masscenter, -2 * changed.constants[0] * changed.constants[2]
                      * changed.frame.z)]
    ga2 = GibbsAppellMethod(**changed.kwargs)
    mod2 = generate(ga2, "rolling_disk", output_dir=outdir)
    assert mod2.key != mod.key
    x, p = np.array([0.1, 1.0, 0.2, 0.3, 0.4, 0.5]), np.array([1.0, 0.5, 9.81])
    assert not np.allclose(mod2.rhs(0, x, p), mod.rhs(0, x, p))
    # load() re-imports the latest from its folder without SymPy work
    assert load(mod2.source_dir).key == mod2.key
    generate(ga, "rolling_disk", output_dir=outdir)     # restore for other tests


def test_a_changed_runtime_is_a_new_key(monkeypatch):
    """The model includes the runtime's headers (cg_math.h's attributes decide the code
    compiled) and a fused one its sources: the key covers their text, so an upgraded
    runtime never loads a library built against the old one."""
    _, sources = model_sources(GibbsAppellMethod(**ex.dumbbell().kwargs), "twins")
    key = sources_key(sources, Options())
    changed = dict(cache.runtime_sources())
    changed["cg_math.h"] = changed["cg_math.h"].replace("target_clones", "target_clones ")
    monkeypatch.setattr(cache, "runtime_sources", lambda: changed)
    monkeypatch.setattr(cache, "_runtime_digest", cache._runtime_digest.__wrapped__)
    assert sources_key(sources, Options()) != key


_CHILD = textwrap.dedent("""
    import sys, json
    from codegen import GibbsAppellMethod, generate, examples as ex
    ga = GibbsAppellMethod(**ex.dumbbell().kwargs)
    mod = generate(ga, "twins", output_dir=sys.argv[1])
    print(json.dumps(mod.rhs(0.0, [0.1, 0.2, 0.3, 0.4, 0.5], [1.0, 2.0]).tolist()))
""")


def test_concurrent_generation(tmp_path):
    procs = [subprocess.Popen([sys.executable, "-c", _CHILD, str(tmp_path)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    outs = [p.communicate(timeout=300) for p in procs]
    for p, (so, se) in zip(procs, outs):
        assert p.returncode == 0, se
    assert json.loads(outs[0][0]) == json.loads(outs[1][0])
    # no temporary is left behind; .lock is the folder's lock (codegen.pipeline.files.folder_lock)
    assert not [f for f in os.listdir(tmp_path / "twins") if f.startswith(".") and f != ".lock"]


def test_deterministic_sources(tmp_path):
    texts = []
    for seed in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        out = tmp_path / seed
        subprocess.run([sys.executable, "-c", _CHILD, str(out)], env=env, check=True,
                       capture_output=True)
        texts.append([(out / "twins" / f).read_bytes() for f in ("twins.c", "twins.h")])
    assert texts[0] == texts[1]


def test_kane_input_and_lu_path(outdir):
    """Equations from KanesMethod compile too; nonholonomic Kane M is not symmetric (LU)."""
    model = ex.chaplygin_sleigh()
    km = me.KanesMethod(**model.kwargs)
    km.kanes_equations(model.bodies, model.loads)
    mod = generate(km, "sleigh_kane", output_dir=outdir)
    assert mod.manifest["symmetric"] is False
    ga = GibbsAppellMethod(**model.kwargs)
    mod_ga = generate(ga, "sleigh_ga", output_dir=outdir)
    # Kane's state carries the dependent speed u3: make it consistent (u3 = 0)
    x = np.array([0.3, -0.2, 0.7, 0.9, 1.1])
    xk = np.concatenate([x, [0.0]])
    # the same kwargs declare the model's order to both formulations
    assert mod.constants == mod_ga.constants == ["m", "a", "I_zz"]
    p = mod.parameters(I_zz=0.4, a=1.3, m=2.0)
    ours, theirs = mod_ga.rhs(0, x, p), mod.rhs(0, xk, p)
    assert np.allclose(ours, theirs[:5], rtol=1e-12)


def test_tree_unrolled_and_loop_solves_agree(outdir):
    """The three solves give the same accelerations: the articulated-body recursion
    (a tree of bodies, the default there), the unrolled LDL^T (the default for
    other symmetric M) and the loop Cholesky (above unrolled_limit), on a chain
    and on an M with structural zeros that is no tree."""
    rng = np.random.default_rng(4)
    for name, make, tree in [("pendulum5", lambda: ex.n_pendulum_on_cart(5), True),
                             ("disk_contact", ex.rolling_disk_contact, False)]:
        model = make()
        ga = GibbsAppellMethod(**model.kwargs)
        default = generate(ga, f"{name}_default", output_dir=outdir)
        unrolled = generate(ga, f"{name}_unrolled", output_dir=outdir, recursive=False)
        loop = generate(ga, f"{name}_loop", output_dir=outdir, recursive=False, unrolled_limit=0)
        assert default.manifest["solver"].startswith("articulated-body" if tree else "unrolled LDL^T")
        assert unrolled.manifest["solver"].startswith("unrolled LDL^T")
        assert loop.manifest["solver"].startswith("Cholesky")
        p = np.array([model.parameter_values[c] for c in default.constants])
        r = np.full(len(default.specifieds), 0.3)
        for _ in range(5):
            x = rng.uniform(-1, 1, len(default.states)) + 0.5
            ref = loop.rhs(0.0, x, p, r)
            for mod in (default, unrolled):
                assert np.allclose(mod.rhs(0.0, x, p, r), ref, rtol=1e-12, atol=1e-12)


def test_host_tuned_flags(outdir):
    """host_flags() (opt-in -march=native) builds a separate, equivalent module."""
    from codegen.pipeline.compiler import host_flags
    from codegen.pipeline.options import PORTABLE_FLAGS
    model = ex.n_pendulum_on_cart(3)
    ga = GibbsAppellMethod(**model.kwargs)
    portable = generate(ga, "pendulum3_flags", output_dir=outdir)
    tuned = generate(ga, "pendulum3_flags", output_dir=outdir, flags=host_flags())
    assert f"flags={' '.join(PORTABLE_FLAGS)};" in portable.manifest["options"]
    assert f"flags={' '.join(host_flags())};" in tuned.manifest["options"]
    assert tuned.key != portable.key
    p = np.array([model.parameter_values[c] for c in portable.constants])
    x = np.linspace(-0.7, 0.9, len(portable.states))
    assert np.allclose(tuned.rhs(0.0, x, p, [0.2]), portable.rhs(0.0, x, p, [0.2]),
                       rtol=1e-12, atol=1e-12)
