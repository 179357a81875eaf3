"""codegen.formulation.grouping, Khalil's grouping of inertial parameters, checked against
Pinocchio on the shared iiwa and HyQ. Each grouped hinge child keeps no mass and no first
moment along its axis. The Newton–Euler passes over the grouped inertias give pin.rnea's
joint forces. The articulated-body recursion gives pin.aba's accelerations, with the same
pivots as over the bodies' own inertias (the checked API compares them with M's diagonal).
Both take fewer operations."""
import numpy as np
import pytest

from codegen import GibbsAppellMethod
from codegen import examples as ex
from codegen import equations_of
from codegen.algorithms.aba import tree_program
from codegen.algorithms.rnea import inverse_program
from codegen.formulation.grouping import first_moment
from codegen.robots import from_urdf

pin = pytest.importorskip("pinocchio")
from robot_oracle import program_function, program_states, shared  # noqa: E402


def _formed(model, grouped=True):
    eom = GibbsAppellMethod(**model.kwargs).to_equations(
        constants=model.constants, specifieds=model.specifieds)
    if not grouped:             # a fresh eom: no program of it is cached yet
        for nd in eom.tree.nodes:
            nd.Wg = nd.bg = None
    return eom


@pytest.mark.parametrize("name", ["iiwa", "hyq"])
def test_grouped_inertias_give_pinocchios_forces(name):
    path = shared(name)
    model = from_urdf(path)
    eom, own = _formed(model), _formed(model, grouped=False)
    hinges = [nd for nd in eom.tree.nodes if nd.parent >= 0 and len(nd.speeds) == 1]
    assert hinges and all(nd.Wg is not None for nd in hinges)
    for nd in hinges:
        W = np.zeros((6, 6))
        W[nd.rows, :] = np.array(nd.Wg, dtype=float)
        axis = [i for i in range(3) if i in nd.rows and nd.s[nd.rows.index(i)][0] != 0]
        assert len(axis) == 1
        assert all(W[i, i] == 0 for i in range(3, 6) if i in nd.rows)       # no mass
        if all(i in nd.rows for i in range(3)):
            assert first_moment(W)[axis[0]] == 0                          # none along e
    inverse, forward = inverse_program(eom), tree_program(eom)
    inverse_own, forward_own = inverse_program(own), tree_program(own)
    assert inverse.operation_count < 0.95 * inverse_own.operation_count
    assert forward.operation_count < 0.97 * forward_own.operation_count
    pm = pin.buildModelFromUrdf(path)
    pd = pm.createData()
    rng = np.random.default_rng(17)
    for a, q, v, tau in program_states(model, rng, 3):
        got, own_run = program_function(forward)(a), program_function(forward_own)(a)
        want = pin.aba(pm, pd, q, v, tau)
        assert np.abs(np.array(got["ud"]) - want).max() <= 1e-9 * np.abs(want).max()
        assert np.allclose(got["D"], own_run["D"], rtol=1e-12, atol=0)
        udot = rng.uniform(-1.0, 1.0, len(v))
        a.update(ud=udot)
        want = pin.rnea(pm, pd, q, v, udot) - tau          # M u' - F, the torques in F
        got = np.array(program_function(inverse)(a)["tau"])
        assert np.abs(got - want).max() <= 1e-9 * np.abs(want).max()


def test_symbolic_inertias_keep_their_own():
    """A model whose inertias are parameters (p at run time) is not grouped: its
    parameters would enter the sums as expressions."""
    tree = equations_of(GibbsAppellMethod(**ex.spatial_chain(3).kwargs)).tree
    assert all(nd.Wg is None and nd.bg is None for nd in tree.nodes)
