"""codegen.bench.ocp's table and problems, without solving (the solves are checked in
tests/export/test_casadi.py): the optimum is compared within the same Hessian option, a
failed or capped route is reported, not timed, and the iiwa's problem is the URDF's."""
from __future__ import annotations

import numpy as np
import pytest

from codegen.bench.ocp import PROBLEMS, table
from codegen.robots import IIWA_URDF, from_urdf


def _row(route, hessian, objective, t_solve):
    return dict(problem="p", route=route, hessian=hessian, success=True, objective=objective,
                iterations=5, t_solve=t_solve, t_nlp_jac_g=0.1, t_nlp_hess_l=0.1, t_build=0.1,
                t_model=1.0)


def test_table_compares_within_the_same_hessian_option():
    rows = [_row("external", "exact", 1.0, 0.1), _row("sx", "exact", 1.0 + 1e-9, 0.4),
            _row("sx_expand", "exact", 1.0, 0.2), _row("external", "limited-memory", 2.0, 0.5),
            _row("sx", "limited-memory", 2.0, 1.0),
            dict(problem="p", route="sx_c", hessian="exact", success=False, iterations="–",
                 status="build > cap (300 s)")]
    lines = table(rows).splitlines()
    assert len(lines) == 2 + len(rows)
    ext = lines[2].split(" | ")
    assert ext[4] == "1.0e-09" and ext[-1].strip(" |") == "2.0x"   # against sx_expand's 0.2 s
    lbfgs = lines[5].split(" | ")
    assert lbfgs[4] == "0.0e+00" and lbfgs[-1].strip(" |") == "2.0x"
    assert "build > cap (300 s)" in lines[-1] and lines[-1].count("–") >= 8


def test_the_iiwa_problem_is_within_the_urdfs_limits():
    spec = PROBLEMS["iiwa"]
    robot = from_urdf(IIWA_URDF)
    assert len(robot.joint_names) == 7 and len(spec.x0) == 14 and spec.N > 0
    lo, hi = np.array(spec.lbq), np.array(spec.ubq)
    for x in (spec.x0, spec.xf):
        assert np.all(lo < np.array(x[:7])) and np.all(np.array(x[:7]) < hi)
    assert spec.x0[7:] == [0.0] * 7 and spec.xf[7:] == [0.0] * 7


@pytest.mark.parametrize("name", ["swingup", "move"])
def test_pendulum_problems_start_hanging(name):
    spec = PROBLEMS[name]
    n = int(spec.model[4:])
    assert spec.x0[1:n + 1] == [-np.pi / 2] * n and len(spec.x0) == 2 * (n + 1)
