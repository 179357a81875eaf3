"""Mirrored limbs side by side (codegen.algorithms.lanes): HyQ's inverse dynamics with its
left and right legs paired, compiled, against pin.rnea; the scalar program kept for
compilers without GCC's vector extension; a robot without mirrored limbs keeps its own."""
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "support"))

import codegen.emit.layout as layout
from codegen import GibbsAppellMethod, generate
from codegen.algorithms.lanes import lane_program
from codegen.programs.pairs import program_values
from codegen.algorithms.aba import tree_program
from codegen.algorithms.rnea import inverse_program
from codegen.algorithms.crba import composite_programs
from codegen.robots import from_urdf
from robot_oracle import (SIXTEEN, pin, pin_dynamics, pin_model, program_states, random_state,
                          relative_error, robot_path, shared)

# the robots of the sixteen whose legs pair (Solo12, ANYmal, the Go2, the A1, Laikago, the
# B1 and Talos hang them from a free-flying base, whose motion both lanes read)
PAIRED = ["solo12", "anymal", "go2", "a1", "laikago", "b1", "atlas", "talos"]


RUNTIME = os.path.join(os.path.dirname(__file__), "..", "..", "templates", "runtime")


def _equations(name):
    model = from_urdf(shared(name))
    eom = GibbsAppellMethod(**model.kwargs).to_equations(
        constants=model.constants, specifieds=model.specifieds)
    return model, eom


def _check_hyq_against_rnea(model, mod, seed):
    """The compiled HyQ's inverse dynamics against pin.rnea at three random states."""
    pm = pin_model(shared("hyq"))
    pd = pm.createData()
    p = mod.parameters(model.parameter_values)
    rng = np.random.default_rng(seed)
    for _ in range(3):
        x, tau = random_state(model, rng)
        q, v = model.to_pinocchio(x)
        udot = rng.uniform(-1.0, 1.0, len(v))
        assert relative_error(mod.inverse_dynamics(0.0, x, udot, p, tau) + tau,
                              pin.rnea(pm, pd, q, v, udot)) < 1e-9


def test_hyq_legs_pair_left_with_right():
    """Four legs, two pairs (the front legs, the hind legs); the program over pairs has
    fewer operations than the scalar one, and is the same each time it is formed."""
    _, eom = _equations("hyq")
    scalar = inverse_program(eom)
    lanes = lane_program(eom, scalar)
    assert lanes is not None and lanes.vectors
    names = {str(s) for s in lanes.vectors}
    assert any(n.startswith("cg_v0_2_") for n in names) and any(n.startswith("cg_v1_3_")
                                                               for n in names)
    assert lanes.operation_count < 0.7 * scalar.operation_count
    again = lane_program(eom, inverse_program(eom))
    assert [(str(s), str(e)) for s, e in again.temporaries] == \
        [(str(s), str(e)) for s, e in lanes.temporaries]


def test_a_single_arm_has_no_pair():
    _, eom = _equations("iiwa")
    assert lane_program(eom, inverse_program(eom)) is None


@pytest.mark.skipif(pin is None, reason="Pinocchio is not installed")
def test_hyq_inverse_dynamics_by_pairs_equals_pinocchio(outdir):
    """Compiled with the pairs (GCC), the inverse dynamics equals pin.rnea at random
    states; the source's scalar program compiles where CG_NO_LANES (another compiler)
    leaves the pairs out."""
    model, _ = _equations("hyq")
    mod = generate(GibbsAppellMethod(**model.kwargs), "hyq_lanes", output_dir=outdir,
                   jacobian=False)
    source = (outdir / "hyq_lanes" / "hyq_lanes.c").read_text()
    assert "#if defined(CG_LANES)" in source and "#if !defined(CG_LANES)" in source
    _check_hyq_against_rnea(model, mod, seed=11)
    cc = shutil.which("cc") or shutil.which("gcc")
    for define in ("-DCG_NO_LANES", "-UCG_NO_LANES"):
        run = subprocess.run([cc, "-std=c99", "-fsyntax-only", "-Wall", "-Werror", define,
                              "-I", str(outdir / "hyq_lanes"), "-I", RUNTIME,
                              str(outdir / "hyq_lanes" / "hyq_lanes.c")],
                             capture_output=True, text=True)
        assert run.returncode == 0, run.stderr[:2000]


@pytest.mark.skipif(pin is None, reason="Pinocchio is not installed")
def test_pairs_in_parts_equal_pinocchio(outdir, monkeypatch):
    """HyQ's program over pairs forced into parts: the pairs stay in one part, named apart from
    the scalar program's parts, and the inverse dynamics still equals pin.rnea. (Talos's, in
    parts by size with scalar parts around its pairs, is compiled against pin.rnea in
    tests/oracles/test_robots.py.)"""
    monkeypatch.setattr(layout, "LANE_PART_OPERATIONS", 100)
    monkeypatch.setitem(layout.PART_OPERATIONS, "inverse_dynamics", 100)
    model, _ = _equations("hyq")
    mod = generate(GibbsAppellMethod(**model.kwargs), "hyq_lanes_parted", output_dir=outdir,
                   jacobian=False)
    source = (outdir / "hyq_lanes_parted" / "hyq_lanes_parted.c").read_text()
    assert "hyq_lanes_parted_inverse_dynamics_lanes_part0(" in source     # all pairs: one part
    assert "hyq_lanes_parted_inverse_dynamics_part1(" in source
    _check_hyq_against_rnea(model, mod, seed=12)


def _paired(name, program_of, fraction):
    """One of the sixteen's scalar program (program_of) and its program over pairs, which has
    fewer than fraction of its operations; Pinocchio's model; the inputs by C name."""
    _, _, floating, options = SIXTEEN[name]
    path = robot_path(name)
    model = from_urdf(path, floating_base=floating, **options)
    eom = GibbsAppellMethod(**model.kwargs).to_equations(
        constants=model.constants, specifieds=model.specifieds)
    scalar = program_of(eom)
    lanes = lane_program(eom, scalar)
    assert lanes is not None and lanes.operation_count < fraction * scalar.operation_count
    objects = {n: o for o, n in lanes.names.items()}
    return model, floating, scalar, lanes, pin_model(path, floating), objects


@pytest.mark.skipif(pin is None, reason="Pinocchio is not installed")
@pytest.mark.parametrize("name", PAIRED)
def test_legged_robots_by_pairs_equal_pinocchio(name):
    """Each quadruped's program over pairs (run in Python, Pack and Lane included) against
    pin.rnea at two random states, the scalar program beside it."""
    model, floating, scalar, lanes, pm, objects = _paired(name, inverse_program, 0.95)
    pd = pm.createData()
    rng = np.random.default_rng(7)
    for a, q, v, tau in program_states(model, rng, 2):
        udot = rng.uniform(-1.0, 1.0, len(v))
        a.update(ud=udot)
        inputs = {objects[i.name]: a[i.array][i.index] for i in lanes.inputs}
        full = np.concatenate([np.zeros(6) if floating else [], tau])
        assert relative_error(program_values(lanes, inputs) + full,
                              pin.rnea(pm, pd, q, v, udot)) < 1e-9
        assert relative_error(program_values(lanes, inputs), program_values(scalar, inputs)) \
            < 1e-12


@pytest.mark.skipif(pin is None, reason="Pinocchio is not installed")
@pytest.mark.parametrize("name, fraction", [(n, 0.75) for n in (
    "hyq", "solo12", "anymal", "go2", "a1", "laikago", "b1")] + [("atlas", 0.95), ("talos", 0.9)])
def test_recursions_by_pairs_equal_pinocchio(name, fraction):
    """The articulated-body recursion with the legs side by side: the legs' inward passes
    before the base's, their outward passes after it, both over pairs (the base's
    acceleration read by both lanes), against pin.aba at two random states. The humanoids
    pair their legs alone (Talos's once an order of terms that failed left none behind)."""
    model, floating, scalar, lanes, pm, objects = _paired(name, tree_program, fraction)
    start = sum(len(e) for n, e in lanes.outputs[:[n for n, _ in lanes.outputs].index("ud")])
    pd = pm.createData()
    rng = np.random.default_rng(8)
    for a, q, v, tau in program_states(model, rng, 2):
        inputs = {objects[i.name]: a[i.array][i.index] for i in lanes.inputs}
        full = np.concatenate([np.zeros(6) if floating else [], tau])
        values = program_values(lanes, inputs)
        assert relative_error(values[start:start + len(v)], pin.aba(pm, pd, q, v, full)) < 1e-9
        assert relative_error(values, program_values(scalar, inputs)) < 1e-12


@pytest.mark.skipif(pin is None, reason="Pinocchio is not installed")
@pytest.mark.parametrize("name, kind, fraction", [
    ("hyq", "mass", 0.7), ("hyq", "eval", 0.7), ("solo12", "mass", 0.8),
    ("solo12", "eval", 0.8), ("anymal", "mass", 0.8), ("talos", "mass", 0.95)])
def test_composite_programs_by_pairs_equal_pinocchio(name, kind, fraction):
    """The composite-rigid-body programs with the limbs side by side: M's entries within a
    limb, and between a limb and its ancestors, by pairs ("mass"; "eval" with q' and F),
    against pin.crba and pin.rnea at two random states, the scalar program beside them."""
    model, floating, scalar, lanes, pm, objects = _paired(
        name, lambda eom: composite_programs(eom)[kind], fraction)
    rng = np.random.default_rng(9)
    for a, q, v, tau in program_states(model, rng, 2):
        inputs = {objects[i.name]: a[i.array][i.index] for i in lanes.inputs}
        values = program_values(lanes, inputs)
        M, F = pin_dynamics(model, pm, a["x"], tau)
        got, start = {}, 0
        for n, exprs in lanes.outputs:
            got[n], start = values[start:start + len(exprs)], start + len(exprs)
        assert relative_error(got["M"], M[np.tril_indices(len(M))]) < 1e-9
        if kind == "eval":
            assert relative_error(got["F"], F) < 1e-9
        assert relative_error(values, program_values(scalar, inputs)) < 1e-12
