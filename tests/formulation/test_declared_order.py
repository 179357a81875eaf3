"""A model's order of constants and inputs travels with its kwargs
(codegen.description.model.declare_order): GibbsAppellMethod and KanesMethod made from
``model.kwargs`` hand over ``model.constants`` and ``model.specifieds`` as the order of p
and r; where nothing is declared, the order is sorted by name. The robots are in
tests/oracles/test_robots.py."""
import gc
import weakref

import pytest
import sympy as sm
import sympy.physics.mechanics as me

from codegen import GibbsAppellMethod, equations_of, examples as ex
from codegen.description.model import declared_order


def names(symbols):
    return [str(s) for s in symbols]


def test_both_formulations_hand_over_the_declared_order():
    model = ex.rolling_disk()
    assert names(model.constants) == ["m", "r", "g"]              # not sorted by name
    ga = GibbsAppellMethod(**model.kwargs)
    assert ga.to_equations().constant_names == ["m", "r", "g"]
    assert equations_of(ga).constant_names == ["m", "r", "g"]
    km = me.KanesMethod(**model.kwargs)
    km.kanes_equations()
    assert equations_of(km).constant_names == ["m", "r", "g"]


def test_inputs_in_the_declared_order():
    model = ex.humanoid()
    declared = [str(s.func) for s in model.specifieds]
    assert declared != sorted(declared)
    eq = GibbsAppellMethod(**model.kwargs).to_equations()
    assert eq.specified_names == declared


def test_what_the_model_does_not_declare_follows_sorted():
    """A load added to the kwargs brings a constant the model does not declare: it comes
    after the declared ones (though its name sorts first); Baumgarte's constants of a
    model with run-time constraints too."""
    model = ex.n_pendulum_on_cart(1)
    kw = model.kwargs
    extra = sm.Symbol("a_push")
    kw["forcelist"] = list(kw["forcelist"]) + [(model.bodies[0].masscenter,
                                                extra * model.frame.x)]
    eq = GibbsAppellMethod(**kw).to_equations()
    assert eq.constant_names == names(model.constants) + ["a_push"]
    bar = ex.four_bar()
    eq = GibbsAppellMethod(**bar.kwargs).to_equations()
    assert eq.constant_names == names(bar.constants) + ["baumgarte_alpha", "baumgarte_beta"]


def test_a_declared_constant_the_equations_lack_keeps_its_place():
    model = ex.dumbbell()
    unused = sm.Symbol("unused")
    model.constants = [unused] + list(model.constants)
    eq = GibbsAppellMethod(**model.kwargs).to_equations()
    assert eq.constant_names == ["unused", "m", "l"]


def test_explicit_order_wins():
    model = ex.rolling_disk()
    ga = GibbsAppellMethod(**model.kwargs)
    consts = sorted(model.constants, key=str)
    assert equations_of(ga, constants=consts).constant_names == ["g", "m", "r"]


def test_bodies_that_are_not_one_models_are_sorted_by_name():
    """A method whose bodies are not exactly the model's (a fixed particle added here) is
    not that model: today's rule, sorted by name."""
    model = ex.n_pendulum_on_cart(1)
    kw = model.kwargs
    N, O = model.frame, me.Point("O2")
    O.set_vel(N, 0)
    kw["bodies"] = list(kw["bodies"]) + [me.Particle("fixed", O, sm.Symbol("m9"))]
    eq = GibbsAppellMethod(**kw).to_equations()
    assert eq.constant_names == sorted(names(model.constants)) != names(model.constants)
    assert declared_order(kw["bodies"]) is None
    assert declared_order(model.bodies) is not None


def test_the_latest_declaration_counts():
    model = ex.rolling_disk()
    model.constants = list(reversed(model.constants))
    assert GibbsAppellMethod(**model.kwargs).to_equations().constant_names == ["g", "r", "m"]


def test_a_declared_constant_that_is_not_a_symbol_is_named():
    model = ex.dumbbell()
    model.constants = list(model.constants) + ["l2"]
    with pytest.raises(TypeError, match=r"the model's declared constants must be SymPy "
                                        r"Symbols, got \['l2'\]"):
        GibbsAppellMethod(**model.kwargs).to_equations()


def test_declarations_do_not_keep_bodies_alive():
    model = ex.dumbbell()
    kw = model.kwargs
    body = weakref.ref(model.bodies[0])
    del model, kw
    gc.collect()
    assert body() is None
