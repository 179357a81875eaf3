"""codegen.formulation.tree: the transport check on the bodies' velocities (O(1) a body) and its
fallback on the partial-velocity columns, each able to refuse a wrong transport."""
import sympy as sm

import codegen.formulation.tree as tree_module
from codegen.formulation.tree import tree_of

u0, u1, q1, l, t = sm.symbols("u0 u1 q1 l t")
Z = sm.S.Zero


def _two_bodies(extra=Z):
    """A hinge about z at the origin (speed u0), and on its x axis at x = l + q1 a slider
    along x (speed u1): [(G, W, h)], their velocities (ω; v), and the true offset r.
    extra: a velocity of the slider free of the speeds (a motion in time)."""
    x = l + q1
    Gp = [[Z, Z], [Z, Z], [sm.S.One, Z], [Z, Z], [Z, Z], [Z, Z]]
    Gc = [[Z, Z], [Z, Z], [sm.S.One, Z], [Z, sm.S.One], [x, Z], [Z, Z]]
    W = [[sm.S.One if i == j else Z for j in range(6)] for i in range(6)]
    h = [Z] * 6
    Vp = [Z, Z, u0, Z, Z, Z]
    Vc = [Z, Z, u0, u1 + extra, u0 * x, Z]
    return [(Gp, W, h), (Gc, W, h)], [Vp, Vc], [x, Z, Z]


def _tree(bodies, velocities, r, why=None):
    return tree_of(bodies, [Z, Z], 2, lambda k, parent: (sm.eye(3), r), why=why,
                   speeds=[u0, u1], velocities=velocities)


def test_transport_checked_on_velocities_alone(monkeypatch):
    """A true transport passes on the velocities, six numbers a body: the partial
    velocities' columns, O(n) a body, are not read."""
    checked = []
    real = tree_module._transported
    monkeypatch.setattr(tree_module, "_transported",
                        lambda exprs, m, numeric: checked.append(len(exprs))
                        or real(exprs, m, numeric))
    bodies, V, r = _two_bodies()
    found = _tree(bodies, V, r)
    assert found is not None and [nd.parent for nd in found.nodes] == [-1, 0]
    assert checked == [24]                 # R, r, the parent's (ω; v), the child's less s u


def test_wrong_transport_refused():
    """An offset or a rotation that does not carry the parent's motion is refused, with
    the velocities (their check fails, and so do the columns') and without."""
    bodies, V, r = _two_bodies()
    for wrong in ([l, Z, Z], [-r[0], Z, Z], [r[0], sm.S.One, Z]):
        for velocities in (V, None):
            why = []
            assert _tree(bodies, velocities, wrong, why) is None
            assert why == ["a body does not carry its parent's motion rigidly"]
    turned = tree_of(bodies, [Z, Z], 2, lambda k, parent: (sm.diag(-1, -1, 1), r),
                     speeds=[u0, u1], velocities=V)
    assert turned is None
    # a child whose velocity (and its partial velocity) the transport does not carry:
    # its hinge's lever counted twice
    Gc = [row[:] for row in bodies[1][0]]
    Gc[4][0] = 2 * r[0]
    V_bad = [V[0], V[1][:4] + [2 * u0 * r[0], Z]]
    assert _tree([bodies[0], (Gc, *bodies[1][1:])], V_bad, r) is None


def test_motion_in_time_falls_back_to_the_columns():
    """A joint moving in time (a velocity free of the speeds) fails the velocities' check
    but its partial velocities are transported: the columns decide, and still refuse a
    wrong offset."""
    bodies, V, r = _two_bodies(extra=sm.cos(t))
    assert _tree(bodies, V, r) is not None
    assert _tree(bodies, V, [l, Z, Z]) is None
