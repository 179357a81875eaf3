"""SymPy's own KanesMethod tests, run from the installed SymPy with GibbsAppellMethod swapped in.

The test files of sympy/physics/mechanics/tests that form equations through
KanesMethod, System or JointsMethod (and the models of
sympy.physics.mechanics.models) run unchanged in a child process with the
plugin tests/oracles/sympy_suite/ga_swap.py; the module doctests run through
SymPy's own doctest runner. Every test passes, those that compare the exact
expanded form of KanesMethod's expressions included (the public matrices are
formed from the stored vectors as KanesMethod forms them: codegen.formulation.public_matrices).
"""
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import sympy

HERE = Path(__file__).resolve().parent
TESTS = Path(sympy.__file__).parent / "physics" / "mechanics" / "tests"

#: the SymPy releases these expectations were made with (pyproject pins sympy to them)
SUPPORTED = ("1.14",)

FILES = ["test_kane.py", "test_kane2.py", "test_kane3.py", "test_kane4.py", "test_kane5.py",
         "test_jointsmethod.py", "test_system_class.py", "test_linearize.py",
         "test_actuator.py", "test_joint.py", "test_models.py",
         "test_linearity_of_velocity_constraints.py"]



def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(HERE / "sympy_suite"), env.get("PYTHONPATH", "")])
    return env


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory):
    """{'file::test': 'passed' | 'failed' | 'skipped'} of the swapped run."""
    if not any(sympy.__version__.startswith(v) for v in SUPPORTED):
        pytest.fail(f"SymPy {sympy.__version__} is not among the supported {SUPPORTED}: "
                    f"re-check DIFFERENT_FORM against it")
    xml = tmp_path_factory.mktemp("sympy") / "junit.xml"
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "ga_swap", "-q",
                           "-p", "no:cacheprovider", f"--junitxml={xml}",
                           *[str(TESTS / f) for f in FILES]],
                          capture_output=True, text=True, cwd=TESTS, env=_env(), timeout=3000)
    assert xml.is_file(), proc.stdout[-3000:] + proc.stderr[-3000:]
    out = {}
    for case in ET.parse(xml).getroot().iter("testcase"):
        name = f"{case.get('classname').split('.')[0]}::{case.get('name')}"
        kinds = {child.tag for child in case}
        out[name] = ("failed" if kinds & {"failure", "error"} else
                     "skipped" if "skipped" in kinds else "passed")
    return out


def test_sympy_tests_pass_with_gibbs_appell(outcomes):
    assert len(outcomes) > 250
    failed = sorted(n for n, o in outcomes.items() if o == "failed")
    assert not failed, failed
    assert not [n for n, o in outcomes.items() if o == "skipped"]


def _doctest(modules):
    """SymPy's doctest runner over modules with GibbsAppellMethod swapped in. A set
    PYTHONHASHSEED keeps the runner in this process: unset, it re-runs itself in a
    fresh interpreter, without the swap, and would test SymPy's own KanesMethod."""
    code = ("import sys, ga_swap\nfrom sympy.testing.runtests import doctest\n"
            f"sys.exit(0 if doctest(*{['sympy/physics/mechanics/' + m for m in modules]!r}) "
            f"else 1)\n")
    env = dict(_env(), PYTHONHASHSEED="0")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, timeout=600)
    assert "tests finished" in proc.stdout, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc


def test_sympy_doctests_pass_with_gibbs_appell():
    """The examples in the docstrings of KanesMethod, System, the joints and the models,
    printed forms included."""
    modules = ["kane.py", "jointsmethod.py", "joint.py", "linearize.py", "models.py", "system.py"]
    proc = _doctest(modules)
    assert proc.returncode == 0, proc.stdout[-3000:]


def test_system_docstring_example_equals_kane():
    """System's docstring example, its equations formed by both methods at each
    form_eoms(): equal after simplification."""
    import doctest

    import sympy as sm
    from sympy.physics.mechanics import KanesMethod, System

    from codegen import GibbsAppellMethod
    ns, compared = {}, 0
    for example in doctest.DocTestParser().get_examples(System.__doc__):
        source = example.source.strip()
        if source != "system.form_eoms()":
            exec(source, ns)
            continue
        system = ns["system"]
        system.form_eoms(eom_method=KanesMethod)
        kane = system.mass_matrix_full, system.forcing_full
        system.form_eoms(eom_method=GibbsAppellMethod)
        ours = system.mass_matrix_full, system.forcing_full
        for a, b in zip(kane, ours):
            assert sm.simplify(a - b) == sm.zeros(*a.shape)
        compared += 1
    assert compared == 2
