"""Outputs compiled with the model: against SymPy's own evaluation of the same
expressions, along runs and batches, the ready outputs (energies, constraint forces), in
the standalone C (cg_outputs) and in the FMU (causality="output", event indicators) run
by FMPy."""
import os
import shutil
import subprocess

import numpy as np
import pytest
import sympy as sm

from codegen import GibbsAppellMethod, examples as ex, export_c, export_fmu, generate

CC = shutil.which("gcc") or shutil.which("cc")


def test_outputs_equal_sympys_evaluation(hybrid):
    """Each output, evaluated in C, against lambdify of the very expression, at random
    states; the Matrix outputs keep their shapes."""
    pd = hybrid("pendulum")
    mod, p, (q, u, m, g, l) = pd["mod"], pd["p"], pd["symbols"]
    (N, A), (O, P) = pd["frames"], pd["points"]
    assert mod.output_names == ["T", "V", "V_loads", "p", "R", "qd"]
    assert mod.output_shapes == {"T": (), "V": (), "V_loads": (), "p": (3,), "R": (3, 3), "qd": ()}
    exprs = {"T": m * l**2 * u**2 / 2, "V": m * g * l * sm.sin(q), "V_loads": m * g * l * sm.sin(q),
             "p": P.pos_from(O).to_matrix(N), "R": N.dcm(A), "qd": u}
    values = dict(zip(mod.constants, p))
    rng = np.random.default_rng(1)
    X = rng.uniform(-3, 3, (5, 2))
    out = mod.outputs(0.0, X, p)
    for name, e in exprs.items():
        f = sm.lambdify((q, u), sm.sympify(e).subs({s: values[str(s)] for s in (m, g, l)}))
        want = np.array([np.array(f(*x), dtype=float).reshape(mod.output_shapes[name]) for x in X])
        assert out[name].shape == (5,) + mod.output_shapes[name]
        assert np.abs(out[name] - want).max() < 1e-13, name
    one = mod.outputs(0.0, X[0], p)
    assert isinstance(one["T"], float) and one["R"].shape == (3, 3)


def test_outputs_along_runs_and_batches(hybrid):
    pd = hybrid("pendulum")
    mod, p = pd["mod"], pd["p"]
    res = mod.simulate((0, 2), [0.3, 0.0], p, rtol=1e-11, atol=1e-11)
    again = mod.outputs(res.t, res.x, p)
    for name in mod.output_names:
        assert np.array_equal(res.outputs[name], again[name])
    energy = res.outputs["T"] + res.outputs["V"]
    assert np.abs(energy - energy[0]).max() < 1e-9                 # conservative
    t, X, status = batch = mod.simulate_batch((0, 2), np.array([[0.3, 0.0], [0.5, 0.1]]), p,
                                              rtol=1e-11, atol=1e-11)
    assert np.array_equal(batch.outputs["R"][0], res.outputs["R"])
    assert batch.outputs["R"].shape == (2, len(t), 3, 3)


def test_ready_outputs_of_a_nonholonomic_and_a_constrained_model(tmp_path):
    """The rolling disk's kinetic energy over its independent speeds (the dependent ones
    eliminated) conserves T + V; the four-bar's constraint forces equal
    mod.constraint_forces along its run."""
    disk = ex.rolling_disk_contact()
    ga = GibbsAppellMethod(**disk.kwargs)
    mod = generate(ga, "out_disk", output_dir=tmp_path, outputs={"T": "kinetic_energy"})
    p = mod.parameters(disk.parameter_values)
    res = mod.simulate((0, 2), disk.initial_state, p, rtol=1e-11, atol=1e-11)
    V = disk.potential_energy
    V = sm.lambdify(list(ga.q), V.subs({s: disk.parameter_values[str(s)] for s in V.free_symbols
                                        if str(s) in disk.parameter_values}))
    energy = res.outputs["T"] + np.array([V(*x[:5]) for x in res.x])
    assert np.abs(energy - energy[0]).max() < 1e-8 * abs(energy[0])
    bar = ex.four_bar()
    ga = GibbsAppellMethod(**bar.kwargs)
    mod = generate(ga, "out_fourbar", output_dir=tmp_path,
                   outputs={"lam": "constraint_forces", "T": "kinetic_energy"})
    p = mod.parameters(bar.parameter_values)
    x0 = mod.project(np.array(bar.initial_state, dtype=float), p)
    res = mod.simulate((0, 1), x0, p, rtol=1e-10, atol=1e-10, t_eval=np.linspace(0, 1, 11))
    assert mod.output_names == ["T", "lam"] and res.outputs["lam"].shape == (11, mod.nc)
    for k in range(11):
        assert np.abs(res.outputs["lam"][k] - mod.constraint_forces(res.t[k], res.x[k], p)).max() \
            < 1e-10


def test_the_standalone_c_prints_cg_outputs(hybrid, tmp_path):
    pd = hybrid("pendulum")
    q, u, m, g, l = pd["symbols"]
    (N, A), (O, P) = pd["frames"], pd["points"]
    folder = export_c(pd["ga"], "c_pend", tmp_path,
                      outputs={"T": "kinetic_energy", "p": P.pos_from(O).to_matrix(N)})
    files = sorted(f for f in os.listdir(folder) if f.endswith(".c") and f != "cg_fused.c")
    subprocess.run([CC, "-std=c99", "-Wall", "-Wextra", "-pedantic", "-Werror", "-O2", *files,
                    "-lm", "-o", "drv"], cwd=folder, check=True)
    p = pd["p"]
    lines = subprocess.run(["./drv", "dopri5", "0.1", "5", "0.4", "0.0", *map(str, p)], cwd=folder,
                           check=True, capture_output=True, text=True).stdout.splitlines()
    rows = np.array([[float(v) for v in line.split()] for line in lines])
    assert rows.shape == (6, 1 + 2 + 4)
    out = pd["mod"].outputs(rows[:, 0], rows[:, 1:3], p)
    assert np.abs(rows[:, 3] - out["T"]).max() < 1e-14
    assert np.abs(rows[:, 4:] - out["p"]).max() < 1e-14


def test_the_fmu_outputs_and_event_indicators_in_fmpy(hybrid, tmp_path):
    """The bouncing ball's FMU: outputs as causality="output", the floor and apex as event
    indicators, the impact in fmi2NewDiscreteStates. FMPy's Model Exchange (CVode, its
    own root finding on the indicators) against simulate: the same impact times and
    heights; its Co-Simulation (our integrator, events located in fmi2DoStep) too."""
    fmpy = pytest.importorskip("fmpy")
    from fmpy.validation import validate_fmu
    b = hybrid("ball")
    path = export_fmu(b["ga"], "fmu_ball", tmp_path, start_values=dict(y=1.0, v=0.0, **b["values"]),
                      **b["kw"])
    assert validate_fmu(str(path)) == []
    md = fmpy.read_model_description(str(path))
    assert md.numberOfEventIndicators == 2
    assert [v.name for v in md.modelVariables if v.causality == "output"] == ["E", "h"]
    res = b["mod"].simulate((0, 3), [1.0, 0.0], b["p"], rtol=1e-10, atol=1e-10,
                            t_eval=np.linspace(0, 3, 301))
    events = np.array([e[1] for e in res.events])        # the impacts and the apexes
    me_run = fmpy.simulate_fmu(str(path), fmi_type="ModelExchange", stop_time=3,
                               output_interval=0.01, relative_tolerance=1e-10, output=["h", "E"])
    t = np.asarray(me_run["time"])
    found = np.unique(t[1:][np.diff(t) == 0])             # FMPy records an event's both sides
    found = found[np.r_[True, np.diff(found) > 1e-6]]     # and the gap's reopening just after
    assert len(found) == len(events) >= 8
    assert np.abs(found - events).max() < 1e-6
    regular = np.r_[True, np.diff(t) != 0] & np.r_[np.diff(t) != 0, True]
    assert np.abs(np.interp(res.t, t[regular], me_run["h"][regular]) - res.outputs["h"]).max() < 1e-5
    cs_run = fmpy.simulate_fmu(str(path), fmi_type="CoSimulation", stop_time=3,
                               output_interval=0.01, output=["h", "E"])
    assert np.abs(cs_run["h"] - np.interp(cs_run["time"], res.t, res.outputs["h"])).max() < 1e-6


EVENTS_IN_C = r"""
#include <stdio.h>
#include <stdlib.h>
#include "c_ball.h"
#include "cg_runtime.h"

/* the ball dropped from 1 m: each impact located and applied in C, as docs/c-api.md shows */
int main(void)
{
    const cg_model *m = c_ball_model();
    cg_integrator *s = malloc(cg_integrator_size(m));
    double x[C_BALL_NX] = {1.0, 0.0}, p[3] = {1.0, 9.81, 0.9}, xe[C_BALL_NX], te;
    int code, k, j, idx[1] = {0}, dir[1] = {-1}, term[1] = {1};
    code = cg_integrator_init(s, m, CG_DOPRI5, 0.0, x, p, 0, NULL, NULL, 1e-12, 1e-12, 0.0);
    if (code == CG_OK) code = cg_integrator_events(s, 1, idx, dir, term);
    for (j = 1; code == CG_OK && j <= 50; j++) {
        while ((code = cg_integrate_to(s, 0.1 * j, x)) == CG_EVENT) {
            if (cg_integrator_event(s, &k, &te, xe)) {
                printf("%s %.17g %.17g\n", m->event_names[k], te, xe[1]);
                if ((code = cg_integrator_impact(s, xe)) == CG_OK)
                    code = cg_integrator_restart(s, te, xe);
                if (code != CG_OK) break;
            }
        }
    }
    free(s);
    return code == CG_OK ? 0 : 2;
}
"""


def test_events_and_impacts_in_the_standalone_c(hybrid, tmp_path):
    """A C program on the exported ball locates its impacts and applies them with the
    runtime alone: the same impact times and speeds as simulate."""
    b = hybrid("ball")
    folder = export_c(b["ga"], "c_ball", tmp_path, driver=False, **b["kw"])
    (folder / "main.c").write_text(EVENTS_IN_C)
    files = sorted(f for f in os.listdir(folder) if f.endswith(".c") and f != "cg_fused.c")
    subprocess.run([CC, "-std=c99", "-Wall", "-Wextra", "-pedantic", "-Werror", "-O2", *files,
                    "-lm", "-o", "events"], cwd=folder, check=True)
    lines = subprocess.run(["./events"], cwd=folder, check=True, capture_output=True,
                           text=True).stdout.splitlines()
    res = b["mod"].simulate((0, 5), [1.0, 0.0], b["p"], rtol=1e-12, atol=1e-12,
                            events={"floor": {}})
    ours = np.array([[float(v) for v in line.split()[1:]] for line in lines])
    want = np.array([[t, x[1]] for _, t, x in res.events])
    assert ours.shape == want.shape and len(ours) >= 8
    assert np.abs(ours - want).max() < 1e-12


def test_outputs_of_a_kanes_method(tmp_path):
    """A formed KanesMethod's equations take outputs and events too (by the states' names)."""
    import sympy.physics.mechanics as me
    model = ex.n_pendulum_on_cart(1)
    km = me.KanesMethod(**model.kwargs)
    km.kanes_equations(model.bodies, model.loads)
    q1 = model.q_ind[1]
    mod = generate(km, "kane_out", output_dir=tmp_path, outputs={"c": sm.cos(q1), "qd": q1.diff()},
                   events={"level": q1})
    p = mod.parameters(model.parameter_values)
    out = mod.outputs(0.0, [0.1, 0.4, 0.2, -0.3], p, [0.0])
    assert out["c"] == pytest.approx(np.cos(0.4), abs=1e-15) and out["qd"] == -0.3
    assert mod.event_functions(0.0, [0.1, 0.4, 0.2, -0.3], p, [0.0])[0] == 0.4
