"""The scratch array of a parted function (codegen.emit.layout.scratch_layout): slots reused by
liveness, checked by replaying the statements; the compiled results against Pinocchio."""
import re

import numpy as np
import pytest
import sympy as sm

import codegen.emit.layout as emit
import codegen.emit.trig as trig
import codegen.algorithms.jacobian as jacobian
from codegen import GibbsAppellMethod, Options, generate
from codegen import examples as ex
from codegen.pipeline.build import model_sources, neutral_equations
from codegen.algorithms.plan import build_programs
from codegen.equations.signals import Signals

N = 8


@pytest.fixture(scope="module")
def parted(tmp_path_factory):
    """The 8-link pendulum on a cart with its Jacobian, every function over 60 statements
    in parts of 40: (model, compiled module, sources)."""
    model = ex.n_pendulum_on_cart(N)
    ga = GibbsAppellMethod(**model.kwargs)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(emit, "PART_LIMIT", 60)
        mp.setattr(emit, "PART_OPERATIONS", {"tree": 60, "inverse_dynamics": 60})
        mp.setattr(emit, "PART_STATEMENTS", 40)
        mp.setattr(emit, "OPERATION_PART_STATEMENTS", 40)
        # forward mode's Jacobian, the larger program (test_slots_are_reused_...)
        mp.setattr(jacobian, "_analytic_program", lambda *args: None)
        _, src = model_sources(ga, "slots8", options=Options(jacobian=True))
        mod = generate(ga, "slots8", output_dir=tmp_path_factory.mktemp("slots"), jacobian=True)
    return model, mod, src


def _replay(statements, plan, local, slots):
    """Every read of a value in the scratch array finds it there: the statements replayed
    in order (each statement's sin/cos pairs first, which read their arguments), each slot
    holding the value last written to it."""
    numbers = trig.trig_numbers(plan)
    held = {}
    for k, (sym, expr, _, _) in enumerate(statements):
        reads = set()
        for group in plan.get(k, []):
            for arg in group:
                reads |= arg.free_symbols
                for kind in "sc":
                    if (numbers[arg], kind) in slots:
                        held[slots[numbers[arg], kind]] = (numbers[arg], kind)
        reads |= expr.free_symbols
        reads |= {(numbers[n.args[0]], "s" if isinstance(n, sm.sin) else "c")
                  for n in sm.preorder_traversal(expr) if isinstance(n, (sm.sin, sm.cos))}
        for value in reads & set(slots):
            assert held.get(slots[value]) == value, (k, value)
        if sym is not None and sym not in local:
            held[slots[sym]] = sym


def test_slots_are_reused_and_never_clobbered(monkeypatch):
    """The Jacobian program's crossing values share slots: the scratch array is well under
    the temporaries' count and under the crossing values', and replaying the statements finds each value in its slot when read."""
    monkeypatch.setattr(emit, "PART_STATEMENTS", 40)
    # forward mode's program: the analytic one (codegen.algorithms.rnea_derivatives) has fewer
    # values crossing parts (135 on this pendulum)
    monkeypatch.setattr(jacobian, "_analytic_program", lambda *args: None)
    eq = neutral_equations(GibbsAppellMethod(**ex.n_pendulum_on_cart(N).kwargs), "slots",
                           None, None, Signals())
    program = build_programs(eq, Options.unrolled_limit, True, False)["jacobian"]
    statements = emit.ordered_statements(program, True)
    plan, last_trig = trig.trig_plan(statements)
    local, slots, size = emit.scratch_layout(statements, plan, last_trig)
    # 8-link pendulum: 285 temporaries; 253 values (and sin/cos) read in a later part, 137 slots
    assert len(slots) > 200 and size < len(slots) * 0.6 and size < len(program.temporaries) / 2
    assert sorted(set(slots.values())) == list(range(size))
    _replay(statements, plan, local, slots)
    # the layout is the same on a second run (deterministic sources)
    assert emit.scratch_layout(statements, plan, last_trig) == (local, slots, size)


def test_parted_functions_agree_with_pinocchio(parted):
    """Forced into parts over a reused scratch array, the right-hand side and the Jacobian
    equal Pinocchio's ABA and its derivatives on the same chain."""
    pytest.importorskip("pinocchio")
    from codegen.bench.jacobian import _pinocchio, derivatives_difference
    from codegen.bench.simulate import from_relative, to_relative
    model, mod, src = parted
    text = "".join(src.files.values())
    sizes = [int(s) for s in re.findall(r"double w\[(\d+)\];", text)]
    # a slot stored through w or through one of the part's windows into it (cg_window)
    temporaries = len(re.findall(r"\n    (?:w|cg_w\d+)\[-?\d+\] = ", text))
    assert len(sizes) >= 3 and "slots8_jacobian_part" in text and "slots8_tree_part" in text
    assert "cg_sincos2(x[angle[2 * i]]" in text       # the coordinates' sin/cos loop, checked too
    assert "= cg_window(w + " in text                 # and the parts' windows into w
    # the inverse dynamics in parts is not scheduled (CG_SCHEDULED: a whole function's)
    assert "slots8_inverse_dynamics_part" in text
    assert not re.search(r"CG_SCHEDULED (?:static )?void", text)
    assert sum(sizes) < 0.6 * temporaries        # slots shared (283 for 505 stores)
    # a value that only names another (an input, a temporary, a sine or cosine) or its
    # negative is read as that value, not copied from slot to slot
    slot = r"(?:w|cg_w\d+)\[-?\d+\]"
    assert not re.findall(rf"\n    {slot} = -?{slot};", text)
    assert not re.findall(rf"\n    {slot} = -?x\[\d+\];", text)
    pin, pm, data = _pinocchio(N, model.parameter_values)
    p = mod.parameters(model.parameter_values)
    r = np.array([0.3])
    for seed in (1, 2):
        x = np.random.default_rng(seed).uniform(-1, 1, mod.nx)
        q, v = to_relative(x, N)
        tau = np.zeros(N + 1)
        tau[0] = r[0]
        a = from_relative(np.array(pin.aba(pm, data, q, v, tau)))
        np.testing.assert_allclose(mod.rhs(0.0, x, p, r)[N + 1:], a, rtol=1e-9,
                                   atol=1e-9 * abs(a).max())
        assert derivatives_difference(mod.jacobian(0.0, x, p, r), pin, pm, data, q, v,
                                      tau) < 1e-9


def test_looped_sin_cos_have_slots(monkeypatch):
    """The coordinates' sin/cos computed in one loop before the first statement
    (trig.trig_loop) each have a slot, written before any read: the replay finds them."""
    monkeypatch.setattr(emit, "PART_STATEMENTS", 40)
    eq = neutral_equations(GibbsAppellMethod(**ex.n_pendulum_on_cart(N).kwargs), "slots",
                           None, None, Signals())
    program = build_programs(eq, Options.unrolled_limit, True, False)["jacobian"]
    statements = emit.ordered_statements(program, True)
    angles = {s for s, n in program.names.items()
              if any(i.name == n and i.array == "x" for i in program.inputs)}
    plan, last_trig = trig.trig_plan(statements, angles)
    pairs = [g for g in plan[0] if len(g) == 2 and set(g) <= angles]
    assert len(pairs) >= 2 and plan[0][:len(pairs)] == pairs
    local, slots, size = emit.scratch_layout(statements, plan, last_trig, 40, 2 * len(pairs))
    numbers = trig.trig_numbers(plan)
    assert all((numbers[a], kind) in slots for g in pairs for a in g for kind in "sc")
    _replay(statements, plan, local, slots)


def test_windows_reach_their_slots_by_one_byte():
    """A part's windows (emit.part_windows): every slot a window takes is within a one-byte
    displacement of its base and goes through that window alone; the busiest slots are
    taken first, a slot read too rarely stays on w."""
    def st(lhs, rhs):
        return dict(lhs=lhs, rhs=rhs, sincos=[])
    chunk = [st(f"w[{k}]", f"w[{k + 1}]*w[{k + 2}] + w[900]") for k in range(100, 140)]
    chunk.append(st("R[0]", "w[5]"))                    # read once: no window of its own
    bases, out = emit.part_windows(chunk)
    assert 0 < len(bases) <= emit.WINDOWS and len(set(bases)) == len(bases)
    assert "w[5]" in out[-1]["rhs"]
    text = " ".join(s["lhs"] + " " + s["rhs"] for s in out)
    seen = {}           # each slot through one pointer: the rewritten names back to slots
    for b, k in re.findall(r"cg_w(\d+)\[(-?\d+)\]", text):
        assert -emit.WINDOW // 2 <= int(k) < emit.WINDOW // 2
        slot = bases[int(b)] + int(k)
        assert seen.setdefault(slot, b) == b
    assert not set(seen) & {int(k) for k in re.findall(r"\bw\[(\d+)\]", text)}
    assert 900 in seen                                  # read by every statement
    assert emit.part_windows([st("w[1]", "2.0")]) == ((), [st("w[1]", "2.0")])


def test_an_alias_is_read_where_its_reader_cancels_it(monkeypatch):
    """z = -t is an alias (layout.aliases): v t + v z reads v as printed, though v t - v t
    would cancel, so the layout must keep v readable there (the bicycle's Jacobian once
    printed an undeclared local this way); the printed statement names t's value twice."""
    from codegen.programs.program import Input, Program
    x0, x1 = sm.symbols("x0 x1", real=True)
    t, z, v, u = sm.symbols("t z v u", real=True)
    program = Program(inputs=[Input("x0", "x", 0, "x0"), Input("x1", "x", 1, "x1")],
                      names={x0: "x0", x1: "x1"},
                      temporaries=[(t, x0 * x1), (v, x0 + x1), (z, -t),
                                   (u, sm.Add(sm.Mul(v, t), sm.Mul(v, z), evaluate=False))],
                      outputs=[("F", [u * x0, z])])
    assert emit.aliases(program) == {z: -t}
    statements = emit.ordered_statements(program, True)
    assert [st[0] for st in statements if st[0] is not None] == [t, v, u]
    read = next(st[1] for st in statements if st[0] == u)
    assert {t, v} <= read.free_symbols
    monkeypatch.setattr(emit, "PART_OPERATIONS", {"eval": 0})     # in parts of two statements
    monkeypatch.setattr(emit, "OPERATION_PART_STATEMENTS", 2)
    data = emit.function_data("eval", "f", program, "test")
    assert len(data["parts"]) == 3
    rhs = {st["lhs"].split()[-1]: st["rhs"] for part in data["parts"] for st in part["statements"]}
    printed = "\n".join(rhs.values())
    assert "z" not in printed and printed.count("(-") == 2     # u's and F[1]'s z, as -t
