"""Numerical oracles shared by the tests: KanesMethod at random states."""
import numpy as np
import sympy as sm
import sympy.physics.mechanics as me

t = me.dynamicsymbols._t


def one_link_pendulum(names=("m", "l", "g")):
    """The quick start's one-link pendulum, its mass, length and gravity named as given:
    (keywords for KanesMethod or GibbsAppellMethod, its pieces by name)."""
    from types import SimpleNamespace
    q, u = me.dynamicsymbols("q u")
    m, l, g = (sm.Symbol(n) for n in names)
    N = me.ReferenceFrame("N")
    A = N.orientnew("A", "Axis", [q, N.z])
    O = me.Point("O")
    O.set_vel(N, 0)
    P = O.locatenew("P", l * A.x)
    P.v2pt_theory(O, N, A)
    kw = dict(frame=N, q_ind=[q], u_ind=[u], kd_eqs=[u - q.diff()],
              bodies=[me.Particle("p", P, m)], forcelist=[(P, -m * g * N.y)])
    return kw, SimpleNamespace(q=q, u=u, N=N, A=A, O=O, P=P, m=m, l=l, g=g)


def random_values(symbols, rng, low=0.5, high=1.5):
    return {s: float(rng.uniform(low, high)) for s in symbols}


def free_functions(exprs):
    """Functions of time (and their derivatives) in exprs, sorted by name."""
    out = set()
    for e in exprs:
        out |= {f for f in e.atoms(sm.Function) if f.args == (t,)}
        out |= e.atoms(sm.Derivative)
    return sorted(out, key=str)


def evaluate(M, F, values):
    """M^-1 F at numeric values (a dict over symbols, functions and derivatives)."""
    # derivatives first so that q(t) inside q'(t) is not replaced on its own
    derivs = {k: v for k, v in values.items() if isinstance(k, sm.Derivative)}
    rest = {k: v for k, v in values.items() if k not in derivs}
    Mn = np.array(M.xreplace(derivs).xreplace(rest).evalf(), dtype=float)
    Fn = np.array(F.xreplace(derivs).xreplace(rest).evalf(), dtype=float).ravel()
    return np.linalg.solve(Mn, Fn)


def kane_state(model, ga, rng):
    """A random consistent state: q, independent u, dependent u from the constraints."""
    vals = random_values(model.constants, rng)
    vals.update(random_values(model.q_ind + model.q_dependent, rng, 0.2, 1.2))
    vals.update(random_values(model.u_ind, rng, -1.0, 1.0))
    for r in model.specifieds:
        vals[r] = float(rng.uniform(-1, 1))
        vals[r.diff(t)] = float(rng.uniform(-1, 1))
    if model.u_dependent:
        A = sm.Matrix(model.velocity_constraints).jacobian(model.u_dependent)
        sub = {k: v for k, v in vals.items()}
        zero = {u: 0 for u in model.u_dependent}
        b = sm.Matrix(model.velocity_constraints).xreplace(zero)
        kd = me.KanesMethod(model.frame, model.q_ind, model.u_ind + model.u_dependent,
                            kd_eqs=model.kd_eqs)
        qd = kd.kindiffdict()
        A, b = A.xreplace(qd).xreplace(sub), b.xreplace(qd).xreplace(sub)
        Ab = A.xreplace(zero)
        sol = np.linalg.solve(np.array(Ab.evalf(), dtype=float),
                              -np.array(b.evalf(), dtype=float).ravel())
        vals.update(dict(zip(model.u_dependent, sol)))
    return vals


def kane_accelerations(model, vals):
    """Independent-speed accelerations from KanesMethod on the same description."""
    km = me.KanesMethod(**model.kwargs)
    km.kanes_equations(model.bodies, model.loads)
    ud = evaluate(km.mass_matrix, km.forcing, vals)
    return ud[:len(model.u_ind)]
