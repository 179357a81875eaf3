"""What the robot oracles share: URDF files (the shared benchmark robots, example-robot-data),
Pinocchio's models and dynamics at a state, and programs run as Python code."""
import math
import os

import numpy as np
import pytest
import sympy as sm

from codegen.robots.catalog import BENCHMARK_ROBOTS, example_robot_data

pin = pytest.importorskip("pinocchio")

SHARED = os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared", "robots")
SHARED = SHARED if os.path.isdir(SHARED) else "/work/shared/robots"


ERD = example_robot_data()


def erd(relative):
    if ERD is None:
        pytest.skip("example-robot-data is not installed (pip install example-robot-data)")
    return os.path.join(ERD, relative)


def shared(name):
    path = os.path.join(SHARED, f"{name}.urdf")
    if not os.path.exists(path):
        pytest.skip(f"{path} is not here")
    return path


#: the sixteen robots whose forward dynamics the suite checks against pin.aba, as
#: codegen.robots.catalog.BENCHMARK_ROBOTS lists them (where, path, floating_base,
#: from_urdf's options): the benchmark's eight and eight more from example-robot-data.
#: The joint names of the UR5, Panda, Atlas, Talos, Go2, A1, iCub, G1, Laikago, B1 and
#: SO-100 do not sort in Pinocchio's tree order (urdfdom's order of each link's
#: children): a default order sorted by name would give them the wrong inputs.
SIXTEEN = dict(
    BENCHMARK_ROBOTS,
    go2=("erd", "go2_description/urdf/go2.urdf", True, {}),
    a1=("erd", "a1_description/urdf/a1.urdf", True, {}),
    icub=("erd", "icub_description/robots/icub_reduced.urdf", True, {}),
    g1=("erd", "g1_description/urdf/g1_29dof_rev_1_0.urdf", True, {}),
    laikago=("erd", "laikago_description/urdf/laikago.urdf", True, {}),
    # its base inertia is outside the triangle inequality as written (Pinocchio loads it)
    b1=("erd", "b1_description/urdf/b1.urdf", True, {"check_inertia": False}),
    so100=("erd", "so_arm_description/urdf/so100.urdf", False, {}),
    z1=("erd", "z1_description/urdf/z1.urdf", False, {}))


def robot_path(name):
    """The URDF file of one of SIXTEEN (skips the test where it is not installed)."""
    where, relative = SIXTEEN[name][:2]
    return shared(relative.removesuffix(".urdf")) if where == "shared" else erd(relative)


def pin_model(path, floating_base=False, mimic=True):
    if floating_base:
        return pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer(), mimic=mimic)
    return pin.buildModelFromUrdf(path, mimic=mimic)


def program_states(model, rng, count):
    """(a, q, v, tau) at count random states: a program's inputs {x, p, r}, Pinocchio's q
    and v, the joint torques."""
    p = [model.parameter_values[str(c)] for c in model.constants]
    for _ in range(count):
        x, tau = random_state(model, rng)
        q, v = model.to_pinocchio(x)
        yield {"x": x, "p": p, "r": tau}, q, v, tau


def random_state(model, rng):
    x = np.array(model.initial_state, dtype=float)
    nq = len(model.q_ind)
    x[:nq] = rng.uniform(-1.5, 1.5, nq)
    if model.floating_base:
        quat = rng.normal(size=4)
        x[3:7] = quat / np.linalg.norm(quat)
    x[nq:] = rng.uniform(-1.0, 1.0, len(model.u_ind))
    return x, rng.uniform(-1.0, 1.0, len(model.specifieds))


def pin_dynamics(model, pm, x, tau, damping=None):
    """Pinocchio's (M, tau - b - damping v) at our state x."""
    pd = pm.createData()
    q, v = model.to_pinocchio(x)
    M = pin.crba(pm, pd, q)
    M = np.triu(M) + np.triu(M, 1).T
    tau = np.concatenate([np.zeros(6) if model.floating_base else [], tau])
    F = tau - pin.rnea(pm, pd, q, v, np.zeros(pm.nv))
    if damping is not None:
        F -= damping * v
    return M, F


def relative_error(ours, theirs):
    return np.abs(ours - theirs).max() / max(1.0, np.abs(theirs).max())




def program_function(program):
    """A Program as a Python function of its input arrays {name: array} -> {output: list}."""
    local, code = python_printer()
    by_name = {n: o for o, n in program.names.items()}
    lines = [f"    {local(by_name[i.name])} = a[{i.array!r}][{i.index}]" for i in program.inputs]
    lines += [f"    {local(s)} = {code(e)}" for s, e in program.temporaries]
    lines.append("    return {" + ", ".join(f"{array!r}: [{', '.join(code(e) for e in exprs)}]"
                                           for array, exprs in program.outputs) + "}")
    namespace = {"math": math}
    exec("def f(a):\n" + "\n".join(lines), namespace)
    return namespace["f"]



def python_printer():
    """(local, code): a Python name for each symbol or function of time, and an
    expression as Python code over those names."""
    from sympy.printing.pycode import PythonCodePrinter
    names = {}
    printer = PythonCodePrinter({"fully_qualified_modules": True})

    def local(s):
        return names.setdefault(s, f"v{len(names)}")

    def code(e):
        e = sm.sympify(e)
        atoms = e.free_symbols | e.atoms(sm.core.function.AppliedUndef)
        return printer.doprint(e.xreplace({a: sm.Symbol(local(a)) for a in atoms}))
    return local, code


def evaluator(eom):
    """(x, p, r) -> (M, F): the formulation's intermediates, M and F as Python code."""
    args = list(eom.q) + list(eom.u) + list(eom.constants) + list(eom.specifieds)
    local, code = python_printer()
    for a in args:
        local(a)
    n = eom.nu
    lines = [f"    {local(item.symbol)} = {code(item.expr)}" for item in eom.intermediates]
    lines.append(f"    return [{', '.join(code(eom.M[i, k]) for i in range(n) for k in range(n))}], "
                 f"[{', '.join(code(e) for e in eom.F)}]")
    namespace = {"math": math}
    exec(f"def f({', '.join(local(a) for a in args)}):\n" + "\n".join(lines), namespace)

    def run(x, p, r):
        M, F = namespace["f"](*x, *p, *r)
        return np.array(M).reshape(n, n), np.array(F)
    return run
