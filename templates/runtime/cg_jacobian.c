/*
 * cg_jacobian.c -- the analytic Jacobian of a model's right-hand side.
 *
 * With M u' = F, at a state where u' is known (solved with M's factors):
 *     d q'/dx = Jq,     M du'/dx = dF/dx - (dM/dx) u' = R
 * (and the same over the specified inputs). The model's C gives Jq and R
 * (forward-mode derivatives of its program, codegen.jacobian) straight into
 * J's rows; here R is solved in place: by the model's columns function (the
 * articulated-body recursion over each column, O(n) each) where it has one,
 * else with M factored once (Cholesky, or LU when it is not symmetric), all
 * its columns at once. The
 * parameter sensitivities d dx / dp are the same over the constants.
 */
#include "cg_internal.h"

/* M Z = B in place for B (nu x w, row-major) with M's factors */
static void cg_solve_block(const cg_model *m, const double *M, const double *inv,
                           const int *piv, double *B, int w)
{
    if (m->flags & CG_SYMMETRIC) cg_cholesky_solve_rows(m->nu, M, inv, B, w);
    else cg_lu_solve_rows(m->nu, M, piv, B, w);
}

/* dx = [q'; u'] at (t, x) with M's factors left in M (and inv, piv) for the
   derivative solves; CG_OK or the diagnosed failure. Inlined: as a call it cost
   the 12-link Jacobian 0.1 us (5 %) */
CG_ALWAYS_INLINE int cg_factored_dynamics(const cg_model *m, double t, const double *x, const double *p,
                                const double *r, double *dx, double *M, double *inv, int *piv)
{
    const int nq = m->nq, nu = m->nu;
    int code = CG_OK;
    if (!cg_finite_inputs(m, t, x, p, r)) return CG_ERR_INPUT;
    m->eval(t, x, p, r, dx, M, dx + nq, 0, 0, 0);
    if ((m->flags & CG_SYMMETRIC) ? cg_cholesky_factor(nu, M, inv) : cg_lu_decompose(nu, M, piv))
        code = CG_ERR_MASS;
    else
        cg_solve_block(m, M, inv, piv, dx + nq, 1);
    if (code == CG_OK && !cg_all_finite(dx, m->nx)) code = CG_ERR_OUTPUT;
    return code ? cg_diagnose(m, t, x, p, r, code) : CG_OK;
}

/* u' (with q') into dx, and with no columns function M's factors for the solves that
   follow; CG_OK or the diagnosed failure. With one, the model's own dynamics give u'
   and a pivot that is not positive is reported there, so the recursion's solve never
   meets one */
static int cg_jacobian_start(const cg_model *m, double t, const double *x, const double *p,
                             const double *r, double *dx, double *M, double *inv, int *piv)
{
    return m->columns ? cg_rhs(m, t, x, p, r, dx)
                      : cg_factored_dynamics(m, t, x, p, r, dx, M, inv, piv);
}

/* whether the jacobian function solves u' itself (CG_JACOBIAN_UD, with M's factors in
   the columns function): then no right-hand side runs first, and one runs only to
   diagnose a Jacobian that is not finite (a mass matrix that is not positive definite) */
static int cg_jacobian_solves(const cg_model *m)
{
    return (m->flags & CG_JACOBIAN_UD) && m->columns;
}

/* B (nu x w, row-major) <- M^-1 B: column by column through the model's columns
   function (state: B is R, whose structural zeros it may skip; L: M's factor from the
   jacobian function, where it reads it), or with M's factors */
static void cg_jacobian_solve(const cg_model *m, double t, const double *x, const double *p,
                              const double *r, const double *M, const double *inv,
                              const int *piv, const double *L, double *B, int w, int state)
{
    if (m->columns) m->columns(t, x, p, r, B, w, state, L);
    else cg_solve_block(m, M, inv, piv, B, w);
}

CG_API int cg_jacobian(const cg_model *m, double t, const double *x, const double *p,
                       const double *r, double *J, double *Jr)
{
    CG_FIX_MODEL(m);
    const int nq = m->nq, nu = m->nu, nx = m->nx, nr = m->nr;
    double dx[CG_LEN(nx)], M[CG_LEN(m->columns ? 0 : m->nm)], inv[CG_LEN(nu)];
    double L[CG_LEN(m->nl)];
    int piv[CG_LEN(nu)], code;
    if (!m->jacobian) return CG_ERR_NO_JACOBIAN;
    if (cg_jacobian_solves(m)) {
        if (!cg_finite_inputs(m, t, x, p, r)) return CG_ERR_INPUT;
    } else if ((code = cg_jacobian_start(m, t, x, p, r, dx, M, inv, piv))) return code;
    /* [Jq; R] straight into J's rows, [Jqr; Rr] into Jr's (none without Jr: the
       function forms no input block, Talos's Jacobian 0.2 us faster), then R and Rr
       solved in place (R by the columns function where there is one: some of R's
       zeros are its to write) */
    m->jacobian(t, x, p, r, dx + nq, J, J + nq * nx, Jr, Jr ? Jr + nq * nr : NULL, L);
    cg_jacobian_solve(m, t, x, p, r, M, inv, piv, L, J + nq * nx, nx, 1);
    if (!cg_all_finite(J, nx * nx)) {
        /* the right-hand side's own diagnosis first (a singular M, a kinematic one) */
        if (cg_jacobian_solves(m) && (code = cg_rhs(m, t, x, p, r, dx))) return code;
        return CG_ERR_OUTPUT;
    }
    if (Jr && nr) {
        cg_jacobian_solve(m, t, x, p, r, M, inv, piv, L, Jr + nq * nr, nr, 0);
        if (!cg_all_finite(Jr, nx * nr)) return CG_ERR_OUTPUT;
    }
    return CG_OK;
}

CG_API int cg_parameter_jacobian(const cg_model *m, double t, const double *x, const double *p,
                                 const double *r, double *Jp)
{
    CG_FIX_MODEL(m);
    const int nq = m->nq, nu = m->nu, nx = m->nx, np = m->np;
    double dx[CG_LEN(nx)], M[CG_LEN(m->columns ? 0 : m->nm)], inv[CG_LEN(nu)];
    int piv[CG_LEN(nu)], code;
    if (!m->parameter_jacobian) return CG_ERR_NO_JACOBIAN;
    if ((code = cg_jacobian_start(m, t, x, p, r, dx, M, inv, piv))) return code;
    m->parameter_jacobian(t, x, p, r, dx + nq, Jp, Jp + nq * np);
    /* no factor here: with a parameter_jacobian the columns function forms its own */
    cg_jacobian_solve(m, t, x, p, r, M, inv, piv, 0, Jp + nq * np, np, 0);
    return cg_all_finite(Jp, nx * np) ? CG_OK : CG_ERR_OUTPUT;
}
