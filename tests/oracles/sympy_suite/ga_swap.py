"""pytest plugin: SymPy's own mechanics tests with GibbsAppellMethod in place of KanesMethod.

Loaded with ``-p ga_swap`` in a separate process (tests/oracles/test_sympy_suite.py),
so that the rest of the suite keeps the real KanesMethod as its oracle. The
names the test files, ``System``, ``JointsMethod`` and ``models.py`` look up
are swapped, including default arguments bound at definition time
(``System.form_eoms(eom_method=KanesMethod)``).
"""
import sympy.physics.mechanics as me
import sympy.physics.mechanics.jointsmethod as joints_mod
import sympy.physics.mechanics.kane as kane_mod
import sympy.physics.mechanics.system as system_mod

from codegen import GibbsAppellMethod

ORIGINAL = kane_mod.KanesMethod


def _swap_defaults(function):
    function.__defaults__ = tuple(GibbsAppellMethod if d is ORIGINAL else d
                                  for d in function.__defaults__)


me.KanesMethod = GibbsAppellMethod
joints_mod.KanesMethod = GibbsAppellMethod
system_mod.KanesMethod = GibbsAppellMethod
for cls in (system_mod.System, joints_mod.JointsMethod):
    for member in vars(cls).values():
        if callable(member) and getattr(member, "__defaults__", None):
            _swap_defaults(member)
