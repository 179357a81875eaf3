"""The mass matrix alone: the "mass" function of a tree model (the composite-rigid-body
algorithm without F), behind mass_matrix and cg_mass_matrix, against pin.crba and
KanesMethod; the eval function that calls it for M; and a large model's part files,
compiled at their own optimisation level."""
import os

import numpy as np
import pytest
import sympy.physics.mechanics as me

from codegen import GibbsAppellMethod, examples as ex, generate

SHARED = os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared", "robots")
SHARED = SHARED if os.path.isdir(SHARED) else "/work/shared/robots"


def _source(mod):
    return (mod.source_dir / f"{mod.name}.c").read_text()


def _kane(model):
    """KanesMethod's (M, F) of the model as a function of x and the inputs {name: value}
    (parameter values inlined)."""
    km = me.KanesMethod(**model.kwargs)
    km.kanes_equations(model.bodies, model.loads)
    by_name = {str(s): s for s in (km.mass_matrix.free_symbols | km.forcing.free_symbols)}
    values = {by_name[c]: v for c, v in model.parameter_values.items() if c in by_name}

    inputs = me.find_dynamicsymbols(km.forcing) - set(km.q) - set(km.u)

    def at(x, r):
        sub = {**values, **dict(zip(list(km.q) + list(km.u), x))}
        sub.update({f: r[str(f.func)] for f in inputs})
        return (np.array(km.mass_matrix.xreplace(sub).evalf(), dtype=float),
                np.array(km.forcing.xreplace(sub).evalf(), dtype=float).ravel())
    return at


@pytest.fixture(scope="module")
def chain(tmp_path_factory):
    """spatial_chain(2) without and with its Jacobian (which keeps eval's own M)."""
    model = ex.spatial_chain(2)
    ga = GibbsAppellMethod(**model.kwargs)
    out = tmp_path_factory.mktemp("mass")
    return model, generate(ga, "mass_chain", output_dir=out, jacobian=False), \
        generate(ga, "mass_chain_j", output_dir=out, jacobian=True)


def test_mass_and_forcing_equal_kanes(chain):
    """mass_matrix (the mass function) and forcing (eval: q' and F, calling the mass
    function for M) equal KanesMethod's M and F at random states to 1e-12; the model
    built with its Jacobian, whose eval computes M itself, gives the same."""
    model, mod, modj = chain
    assert "mass_chain_mass(t, x, p, r, M);" in _source(mod)        # eval calls it
    assert "mass_chain_j_mass(t, x, p, r, M);" not in _source(modj)
    assert "static void mass_chain_j_mass(" in _source(modj)
    kane = _kane(model)
    p = mod.parameters(model.parameter_values)
    rng = np.random.default_rng(11)
    for _ in range(2):
        x = rng.uniform(-1.2, 1.2, mod.nx)
        r = rng.uniform(-1, 1, len(mod.specifieds))
        M, F = kane(x, dict(zip(mod.specifieds, r)))
        for m in (mod, modj):
            np.testing.assert_allclose(m.mass_matrix(0.0, x, p, r), M, rtol=1e-12,
                                       atol=1e-12 * abs(M).max())
            np.testing.assert_allclose(m.forcing(0.0, x, p, r), F, rtol=1e-12,
                                       atol=1e-12 * max(abs(F).max(), 1.0))
        ud = rng.uniform(-1, 1, mod.nu)      # the runtime's fallback is not taken: a tree
        np.testing.assert_allclose(mod.inverse_dynamics(0.0, x, ud, p, r), M @ ud - F,
                                   rtol=1e-10, atol=1e-10 * abs(M).max())


def test_iiwa_mass_matrix_equals_crba(tmp_path):
    """The iiwa from its URDF: mass_matrix by its own program equals pin.crba to 1e-12
    (relative to M's largest entry) at random states, and the program has no F: fewer
    operations than eval's F alone would need with M."""
    pin = pytest.importorskip("pinocchio")
    from codegen.robots import from_urdf
    path = os.path.join(SHARED, "iiwa.urdf")
    if not os.path.exists(path):
        pytest.skip(f"{path} is not here")
    model = from_urdf(path)
    mod = generate(GibbsAppellMethod(**model.kwargs), "mass_iiwa", output_dir=tmp_path,
                   constants=model.constants, specifieds=model.specifieds, jacobian=False)
    assert "static void mass_iiwa_mass(" in _source(mod)
    pm = pin.buildModelFromUrdf(path)
    pd = pm.createData()
    p = mod.parameters(model.parameter_values)
    rng = np.random.default_rng(5)
    nq = len(model.q_ind)
    for _ in range(3):
        x = np.array(model.initial_state, dtype=float)
        x[:nq] = rng.uniform(-1.5, 1.5, nq)
        x[nq:] = rng.uniform(-1.0, 1.0, nq)
        q, _ = model.to_pinocchio(x)
        M = pin.crba(pm, pd, q)
        M = np.triu(M) + np.triu(M, 1).T
        ours = mod.mass_matrix(0.0, x, p, np.zeros(len(model.specifieds)))
        assert np.abs(ours - M).max() <= 1e-12 * abs(M).max()


def test_plan_gives_mass_only_to_trees():
    """The mass program: for a tree without run-time constraints only, with fewer
    operations than eval and no speed read (M depends on q alone); eval is q' and F
    where the recursion is the right-hand side and no Jacobian is built."""
    from codegen.pipeline.build import neutral_equations
    from codegen.algorithms.plan import build_programs
    eq = neutral_equations(GibbsAppellMethod(**ex.n_pendulum_on_cart(4).kwargs), "m4")
    programs = build_programs(eq, 8000, False, False)
    assert [a for a, _ in programs["mass"].outputs] == ["M"]
    assert [a for a, _ in programs["eval"].outputs] == ["qd", "F"]
    assert all(i.name.startswith("x_q") or i.array == "p" for i in programs["mass"].inputs)
    with_jacobian = build_programs(eq, 8000, True, False)
    assert [a for a, _ in with_jacobian["eval"].outputs] == ["qd", "M", "F"]
    assert with_jacobian["mass"].operation_count < with_jacobian["eval"].operation_count
    loop = neutral_equations(GibbsAppellMethod(**ex.four_bar().kwargs), "loop")
    assert "mass" not in build_programs(loop, 8000, False, False)


def test_part_files_compile_at_their_level(tmp_path, monkeypatch):
    """A large model's part files (forced here on a small one) carry emit.PART_FLAGS
    into the compiles, the cache key and the manifest; its results equal the whole
    build's bit for bit."""
    import codegen.emit.layout as emit
    from codegen.pipeline.build import model_sources
    from codegen.pipeline.options import Options
    model = ex.n_pendulum_on_cart(4)
    ga = GibbsAppellMethod(**model.kwargs)
    whole = generate(ga, "parts4", output_dir=tmp_path / "whole", jacobian=False)
    assert whole.manifest["file_flags"] == {}
    monkeypatch.setattr(emit, "PART_LIMIT", 10)
    monkeypatch.setattr(emit, "PART_STATEMENTS", 7)
    monkeypatch.setitem(emit.PART_OPERATIONS, "eval", 10)      # eval is parted by operations
    monkeypatch.setattr(emit, "OPERATION_PART_STATEMENTS", 7)
    monkeypatch.setattr(emit, "TU_STATEMENTS", 40)
    _, src = model_sources(ga, "parts4", options=Options(jacobian=False))
    parts = [f for f in src.c_files if "_part" in f]
    assert parts and src.file_flags == {f: emit.PART_FLAGS for f in parts}
    parted = generate(ga, "parts4", output_dir=tmp_path / "parted", jacobian=False)
    assert parted.manifest["file_flags"] == {f: list(emit.PART_FLAGS) for f in parts}
    # another level is another generator (its files are in the key: tests/pipeline/test_cache.py);
    # here, forced, the manifest records the level the parts were compiled at
    monkeypatch.setattr(emit, "PART_FLAGS", ("-O2",))
    other = generate(ga, "parts4", output_dir=tmp_path / "other", jacobian=False, force=True)
    assert other.manifest["file_flags"] == {f: ["-O2"] for f in parts}
    p = whole.parameters(model.parameter_values)
    x = np.random.default_rng(2).uniform(-1, 1, whole.nx)
    r = np.array([0.3])
    for f in ("rhs", "mass_matrix", "forcing"):
        assert np.array_equal(getattr(parted, f)(0.0, x, p, r), getattr(whole, f)(0.0, x, p, r))


def test_mass_in_the_processors_copies_unless_the_right_hand_side_solves_with_it(
        monkeypatch):
    """A tree's mass function is compiled in cg_math.h's copies (CG_CLONES, an AVX2 one
    with fused multiply-adds); as the loop over M's columns (a large tree's) it is not,
    nor where eval calls it for the M the right-hand side solves with (no recursion), so
    that the right-hand side's bits stay the same on every processor."""
    import re

    import codegen.algorithms.crba as composite
    import codegen.algorithms.plan as plan
    from codegen.pipeline.build import model_sources
    from codegen.pipeline.options import Options
    ga = GibbsAppellMethod(**ex.n_pendulum_on_cart(4).kwargs)
    cloned = re.compile(r"CG_CLONES (static )?void m4_mass\(")

    def source(**options):
        _, src = model_sources(ga, "m4", options=Options(jacobian=False, **options))
        return "".join(src.files[f] for f in src.c_files)
    recursion = source()
    assert "m4_tree(" in recursion and cloned.search(recursion)
    monkeypatch.setattr(composite, "MASS_LOOP_ENTRIES", 5)     # M by the column loop
    looped = source()
    assert "m4_tree(" in looped and "void m4_mass(" in looped and not cloned.search(looped)
    monkeypatch.setattr(plan, "tree_program", lambda eom: None)   # and no recursion
    solved = source()
    assert "m4_tree(" not in solved and "m4_mass(t, x, p, r, M)" in solved
    assert "void m4_mass(" in solved and not cloned.search(solved)


def test_no_definition_only_renames_a_scaled_value():
    """The composite-rigid-body program of the iiwa (its offsets along one axis each) defines
    no temporary that is -x or c + d x (x a symbol), except a motion subspace's entries:
    such a value is left in its readers, where a number times it folds into their
    coefficients (codegen.algorithms.tree_passes: 710 -> 682 instructions a call)."""
    import sympy as sm
    from codegen.algorithms.crba import composite_programs
    from codegen.pipeline.build import neutral_equations
    from codegen.robots import from_urdf
    model = from_urdf(os.path.join(SHARED, "iiwa.urdf"))
    eq = neutral_equations(GibbsAppellMethod(**model.kwargs), "iiwa", constants=model.constants,
                           specifieds=model.specifieds)
    mass = composite_programs(eq)["mass"]
    renames = []
    for symbol, expr in mass.temporaries:
        terms = expr.args if expr.is_Add else (expr,)
        parts = [t.as_coeff_Mul() for t in terms]
        if not str(symbol).startswith("cg_s") and len(parts) <= 2 and \
                sum(1 for c, x in parts if x.is_Symbol and (c == -1 or expr.is_Add)) == 1 and \
                all(x == 1 or x.is_Symbol for _, x in parts) and len(expr.free_symbols) == 1:
            renames.append((symbol, expr))
    assert not renames, renames[:5]
    assert len(mass.temporaries) > 50
