"""The cache's key, taken on the formed neutral equations before the CSE and the emission:
a hit costs the forming alone, the key changes with everything the sources and their build
are made from, equal keys mean equal sources in any process, and builds of different models
under one name by two processes never mix."""
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import sympy as sm
import sympy.physics.mechanics as me

import codegen.algorithms.plan as plan
import codegen.pipeline.build as pipeline
from codegen import GibbsAppellMethod, examples as ex, generate, load
from codegen.pipeline import cache
from codegen.pipeline.cache import equations_key, portable_payload
from codegen.pipeline.fingerprint import fingerprint
from codegen.pipeline.options import Options
from codegen.pipeline.build import neutral_equations
from codegen.equations.signals import Signals
from codegen.errors import CacheError

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _key(model, name="keyed", options=Options(), **kwargs):
    eq = neutral_equations(GibbsAppellMethod(**model.kwargs), name, **kwargs)
    return equations_key(eq, name, options)


def _plane_particle():
    """A particle pushed by two inputs, whose order is the user's to give."""
    x, y, vx, vy = me.dynamicsymbols("x y vx vy")
    Fx, Fy = me.dynamicsymbols("Fx Fy")
    m = sm.Symbol("m")
    N = me.ReferenceFrame("N")
    O = me.Point("O")
    P = O.locatenew("P", x * N.x + y * N.y)
    P.set_vel(N, vx * N.x + vy * N.y)
    ga = GibbsAppellMethod(N, [x, y], [vx, vy], kd_eqs=[vx - x.diff(), vy - y.diff()])
    ga.kanes_equations([me.Particle("p", P, m)], [(P, Fx * N.x + Fy * N.y)])
    return ga, [Fx, Fy]


# -- a hit ----------------------------------------------------------------------------------
def test_a_hit_forms_the_model_and_nothing_after(tmp_path, monkeypatch):
    """Generating a cached model again, from a new method as a new script does, neither
    plans, eliminates nor emits: the key is known once the equations are formed."""
    model = ex.dumbbell()
    first = generate(GibbsAppellMethod(**model.kwargs), "hit", output_dir=tmp_path)

    def refuse(*args, **kwargs):
        raise AssertionError("a cache hit ran the CSE or the emission")
    monkeypatch.setattr(pipeline, "equations_sources", refuse)
    again = generate(GibbsAppellMethod(**model.kwargs), "hit", output_dir=tmp_path)
    assert again.key == first.key and again.manifest["files"] == first.manifest["files"]
    with pytest.raises(AssertionError, match="cache hit"):
        generate(GibbsAppellMethod(**model.kwargs), "hit", output_dir=tmp_path, force=True)


# -- the key --------------------------------------------------------------------------------
def test_the_key_is_the_models_own():
    """The same model formed again, after other dummies were made, has the same key;
    every change of what its sources are made from changes it."""
    model = ex.dumbbell()
    key = _key(model)
    sm.symbols("junk0:40", cls=sm.Dummy)            # the dummies' indices move on
    assert _key(ex.dumbbell()) == key
    constants = list(model.constants)
    keys = {
        "another name": _key(model, "keyed2"),
        "constants reordered": _key(model, constants=constants[::-1]),
        "an output": _key(model, signals=Signals(outputs={"T": "kinetic_energy"})),
        "jacobian": _key(model, options=Options(jacobian=True)),
        "parameter_jacobian": _key(model, options=Options(parameter_jacobian=True)),
        "fused": _key(model, options=Options(fused=True)),
        "flags": _key(model, options=Options(flags=("-O3",))),
        "rank_rtol": _key(model, options=Options(rank_rtol=1e-8)),
        "unrolled_limit": _key(model, options=Options(unrolled_limit=10)),
        "recursive": _key(model, options=Options(recursive=False)),
    }
    assert key not in keys.values() and len(set(keys.values())) == len(keys), keys
    assert _key(model, options=Options(budget=100.0)) == key      # the budget shapes no code
    disk, heavier = ex.rolling_disk(), ex.rolling_disk()
    heavier.loads = [(P, 2 * f) for P, f in heavier.loads]
    assert _key(disk) != _key(heavier)


def test_the_key_follows_the_inputs_order():
    ga, (Fx, Fy) = _plane_particle()
    keys = {equations_key(neutral_equations(ga, "pushed", specifieds=order), "pushed", Options())
            for order in ([Fx, Fy], [Fy, Fx])}
    assert len(keys) == 2


@pytest.mark.parametrize("part", ["ABI_VERSION", "_runtime_digest", "compiler_identity",
                                  "_generator_digest"])
def test_the_key_follows_the_runtime_the_compiler_and_the_generator(monkeypatch, part):
    model = ex.dumbbell()
    key = _key(model)
    value = getattr(cache, part)
    monkeypatch.setattr(cache, part, value + 1 if isinstance(value, int)
                        else lambda: value() + " changed")
    assert _key(model) != key


def test_the_generator_digest_reads_the_code_generator(monkeypatch):
    """Every Python file of the package and every model template is hashed, with the
    versions of SymPy, NumPy and Jinja2: a change to the CSE, the plan, the emitter or a
    template is a new key."""
    import pathlib
    read = []
    original = pathlib.Path.read_bytes

    def recording(path):
        read.append(path.relative_to(ROOT).as_posix())
        return original(path)
    monkeypatch.setattr(pathlib.Path, "read_bytes", recording)
    digest = cache._generator_digest.__wrapped__()
    assert {"codegen/programs/cse.py", "codegen/algorithms/plan.py", "codegen/emit/sources.py",
            "codegen/pipeline/fingerprint.py", "codegen/version.py",
            "templates/model/model.c.j2", "templates/model/function.j2"} <= set(read)
    monkeypatch.setattr(sm, "__version__", sm.__version__ + ".changed")
    assert cache._generator_digest.__wrapped__() != digest


_SOURCES = textwrap.dedent("""
    import hashlib, json, sys
    import sympy as sm
    from codegen import GibbsAppellMethod, examples as ex
    from codegen.pipeline.cache import equations_key
    from codegen.pipeline.options import Options
    from codegen.pipeline.build import model_sources
    sm.symbols(f"junk0:{sys.argv[1]}", cls=sm.Dummy)
    out = {}
    for name in ("dumbbell", "four_bar", "rolling_disk"):
        eq, src = model_sources(GibbsAppellMethod(**getattr(ex, name)().kwargs), name)
        text = "".join(f + src.files[f] for f in sorted(src.files))
        out[name] = [equations_key(eq, name, Options()), hashlib.sha256(text.encode()).hexdigest()]
    eq, src = model_sources(GibbsAppellMethod(**ex.n_pendulum_on_cart(3).kwargs), "pendulum3")
    text = "".join(f + src.files[f] for f in sorted(src.files))
    out["pendulum3"] = [equations_key(eq, "pendulum3", Options()),
                        hashlib.sha256(text.encode()).hexdigest()]
    print(json.dumps(out))
""")


def test_equal_keys_are_equal_sources_in_any_process():
    """Two processes with other hash seeds and other numbers of dummies made before
    agree on every key and on the sources behind it (a constrained loop, a tree with its
    mass matrix formed on first use, nonholonomic constraints)."""
    runs = [subprocess.Popen([sys.executable, "-c", _SOURCES, str(n)], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True,
                             env=dict(os.environ, PYTHONHASHSEED=str(seed)))
            for n, seed in ((0, 1), (37, 2))]
    outs = [p.communicate(timeout=600) for p in runs]
    for p, (_, err) in zip(runs, outs):
        assert p.returncode == 0, err
    first, second = (json.loads(o) for o, _ in outs)
    assert first == second
    assert len({key for key, _ in first.values()}) == len(first)


# -- a mass matrix formed on first use ------------------------------------------------------
def test_a_mass_matrix_the_build_reads_is_checked_on_a_hit(tmp_path, monkeypatch):
    """A tree's mass matrix is formed on first use: the key does not form it; where the
    build read it (up to plan.COMPARE_LIMIT speeds) the manifest holds its digest and a
    hit whose matrix differs is a miss; where the build did not, a hit never forms it."""
    model = ex.n_pendulum_on_cart(2)
    eq = neutral_equations(GibbsAppellMethod(**model.kwargs), "tree")
    equations_key(eq, "tree", Options())
    assert not eq.M.formed
    mod = generate(GibbsAppellMethod(**model.kwargs), "tree", output_dir=tmp_path)
    digest = mod.manifest["mass_matrix"]
    assert digest == fingerprint(sm.Matrix(eq.M.value))
    manifest = tmp_path / "tree" / "manifest.json"
    edited = json.loads(manifest.read_text())
    edited["mass_matrix"] = "0" * 32                   # as if another matrix had been read
    manifest.write_text(json.dumps(edited))
    rebuilt = generate(GibbsAppellMethod(**model.kwargs), "tree", output_dir=tmp_path)
    assert rebuilt.key == mod.key and rebuilt.manifest["mass_matrix"] == digest

    monkeypatch.setattr(plan, "COMPARE_LIMIT", 0)          # above it M is never formed
    unread = generate(GibbsAppellMethod(**model.kwargs), "unread", output_dir=tmp_path)
    assert unread.manifest["mass_matrix"] is None
    formed = []
    monkeypatch.setattr(pipeline, "mass_digest", lambda *a, **k: formed.append(a))
    assert generate(GibbsAppellMethod(**model.kwargs), "unread",
                    output_dir=tmp_path).key == unread.key and not formed


# -- the fingerprint ------------------------------------------------------------------------
def test_the_fingerprint_is_of_structure():
    x, y = sm.symbols("x y")
    shared = sm.sin(x) * y
    assert fingerprint([shared + 1, shared]) == fingerprint([sm.sin(x) * y + 1, sm.sin(x) * y])
    assert fingerprint(x) != fingerprint(sm.Symbol("x", positive=True))
    assert fingerprint(sm.Float(0.1)) != fingerprint(sm.Float(0.1, 30))
    assert fingerprint([x, y]) != fingerprint([y, x]) != fingerprint((x, y))
    assert fingerprint({"a": 1.0}) != fingerprint({"a": 1})
    f, g = sm.Function("f"), sm.Function("f", real=True)
    assert fingerprint(f(x)) != fingerprint(g(x))
    a, b = sm.Dummy("d"), sm.Dummy("d")
    c, d = sm.Dummy("d"), sm.Dummy("d")
    assert fingerprint([a + 2 * b]) == fingerprint([c + 2 * d])       # renumbered
    assert fingerprint([a + 2 * b]) != fingerprint([b + 2 * a])       # which was made first
    deep, h = x, sm.Function("h")
    for k in range(5000):                                # deeper than Python's stack
        deep = h(deep)
    assert len(fingerprint(deep)) == 32
    with pytest.raises(TypeError, match="cannot fingerprint a object"):
        fingerprint([object()])


# -- two processes, one name ----------------------------------------------------------------
_CLASH = textwrap.dedent("""
    import json, pickle, sys, time
    import numpy as np
    import codegen.pipeline.cache as cache
    from codegen import GibbsAppellMethod, examples as ex, generate
    from codegen.errors import CacheError
    which, folder = sys.argv[1], sys.argv[2]
    removal = cache._remove_old_libraries

    def slow_removal(*args):      # a pause between the manifest and the load: where they meet
        time.sleep(0.3)
        removal(*args)
    cache._remove_old_libraries = slow_removal
    model = ex.dumbbell() if which == "dumbbell" else ex.n_pendulum_on_cart(1)
    ga = GibbsAppellMethod(**model.kwargs)
    x = np.array(model.initial_state, dtype=float)
    runs = []
    for k in range(4):
        mod = generate(ga, "clash", output_dir=folder, force=k % 2 == 0)
        p = mod.parameters(model.parameter_values)
        r = [0.0] * len(mod.specifieds) or None
        run = dict(key=mod.key, states=mod.states, rhs=mod.rhs(0.0, x, p, r).tolist())
        try:                      # the model sent elsewhere: its own, or refused
            sent = pickle.loads(pickle.dumps(mod))
            run["sent"] = [sent.key, sent.rhs(0.0, x, p, r).tolist()]
        except CacheError as exc:
            run["refused"] = str(exc)
        runs.append(run)
    print(json.dumps(runs))
""")


def test_two_processes_building_different_models_under_one_name(tmp_path):
    """Two processes generate two different models, both named "clash", into one
    folder, again and again (every other time forced): each always gets its own model,
    a model sent elsewhere is its own or refused by name, never the other one, and the
    folder ends with one whole model."""
    expected = {}
    for which, model in (("dumbbell", ex.dumbbell()), ("pendulum", ex.n_pendulum_on_cart(1))):
        mod = generate(GibbsAppellMethod(**model.kwargs), "clash", output_dir=tmp_path / which)
        p = mod.parameters(model.parameter_values)
        r = [0.0] * len(mod.specifieds) or None
        expected[which] = (mod.key, mod.states,
                           mod.rhs(0.0, np.array(model.initial_state, dtype=float), p, r).tolist())
    env = dict(os.environ, CODEGEN_CACHE=str(tmp_path / "received"))
    procs = {which: subprocess.Popen([sys.executable, "-c", _CLASH, which,
                                      str(tmp_path / "shared")], stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, env=env)
             for which in expected}
    outs = {which: p.communicate(timeout=600) for which, p in procs.items()}
    for which, p in procs.items():
        assert p.returncode == 0, outs[which][1]
        key, states, rhs = expected[which]
        for run in json.loads(outs[which][0]):
            assert (run["key"], run["states"]) == (key, states)
            assert np.allclose(run["rhs"], rhs, rtol=1e-14, atol=0)
            if "sent" in run:
                assert run["sent"][0] == key and np.allclose(run["sent"][1], rhs, rtol=1e-14)
            else:
                assert "another build of that name" in run["refused"]
    last = load(tmp_path / "shared" / "clash")
    assert last.key in {key for key, _, _ in expected.values()}


def test_a_model_whose_folder_was_taken_over_is_not_sent(tmp_path):
    first = generate(GibbsAppellMethod(**ex.dumbbell().kwargs), "taken", output_dir=tmp_path)
    generate(GibbsAppellMethod(**ex.n_pendulum_on_cart(1).kwargs), "taken", output_dir=tmp_path)
    with pytest.raises(CacheError, match="another build of that name"):
        portable_payload(first)
    x = np.array(ex.dumbbell().initial_state, dtype=float)
    assert first.rhs(0.0, x, first.parameters(ex.dumbbell().parameter_values)).shape == (5,)
