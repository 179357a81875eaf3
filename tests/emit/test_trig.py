"""Where a function's sin/cos pairs are computed (codegen.emit.trig.trig_plan)."""
import sympy as sm

from codegen.emit import trig


def _statements():
    """Six statements as ordered_statements gives them: q0..q2 are inputs, t0 and t1
    temporaries; the coordinates' sines are first read late, sin(t0) after t0."""
    q0, q1, q2, t0, t1 = sm.symbols("q0 q1 q2 t0 t1")
    return [(t0, q0 + q1, "", 0),
            (t1, 2 * t0, "", 0),
            (None, t1 + 1, "y", 0),
            (None, sm.sin(q0) * sm.cos(q1), "y", 1),
            (None, sm.sin(t0) + sm.cos(q2), "y", 2),
            (None, sm.cos(q0), "y", 3)], (q0, q1, q2, t0)


def test_hoisted_pairs_of_coordinates_come_first_the_others_at_first_use():
    statements, (q0, q1, q2, t0) = _statements()
    def groups(plan):       # the order within a statement is SymPy's order of its terms
        return {k: [set(g) for g in gs] for k, gs in plan.items()}
    plan, last = trig.trig_plan(statements)
    # each before its first use: q0 with q1 (both ready), then q2 with t0 at statement 4
    assert groups(plan) == {3: [{q0, q1}], 4: [{t0, q2}]}
    plan, last_hoisted = trig.trig_plan(statements, hoist=True)
    # the three coordinates at statement 0, in order of first use; t0 waits for its value
    assert groups(plan) == {0: [{q0, q1}, {q2}], 4: [{t0}]}
    assert last_hoisted == last == {(q0, "s"): 3, (q1, "c"): 3, (t0, "s"): 4, (q2, "c"): 4,
                                    (q0, "c"): 5}
    # every argument computed once, and numbered in the order computed (cg_s<k>, cg_c<k>)
    assert sorted(trig.trig_numbers(plan).values()) == [0, 1, 2, 3]
    assert trig.trig_numbers(plan)[t0] == 3


def test_the_kinds_hoisted_leave_the_recursion_alone():
    """The recursion measured 3 % slower with its pairs first (trig.HOIST_TRIG)."""
    assert {"eval", "mass", "inverse_dynamics"} <= trig.HOIST_TRIG
    assert "tree" not in trig.HOIST_TRIG


def test_many_coordinates_stay_at_their_first_use():
    """Beyond HOIST_MOST coordinates, hoisting would hold all their values through the
    function (Atlas's 30 spilled): each pair is then placed as without hoist."""
    q = sm.symbols(f"q0:{trig.HOIST_MOST + 1}")
    t = sm.Symbol("t")
    statements = [(t, q[0] * q[1], "", 0)] + [(None, sm.sin(a) + t, "y", i)
                                              for i, a in enumerate(q)]
    assert trig.trig_plan(statements, hoist=True) == trig.trig_plan(statements)
    assert 0 not in trig.trig_plan(statements, hoist=True)[0]
    few = statements[:trig.HOIST_MOST + 1]         # t and HOIST_MOST coordinates
    assert len(trig.trig_plan(few, hoist=True)[0][0]) == (trig.HOIST_MOST + 1) // 2
