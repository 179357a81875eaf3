/*
 * cg_jacobian.c -- the analytic Jacobian of a model's right-hand side.
 *
 * With M u' = F, at a state where u' is known (solved with M's factors):
 *     d q'/dx = Jq,     M du'/dx = dF/dx - (dM/dx) u' = R
 * (and the same over the specified inputs). The model's C gives Jq and R
 * (forward-mode derivatives of its program, codegen.jacobian) straight into
 * J's rows; here M is factored once (Cholesky, or LU when it is not
 * symmetric) and R is solved in place, all its columns at once.
 */
#include "cg_internal.h"

/* M Z = B in place for B (nu x w, row-major) with M's factors */
static void cg_solve_block(const cg_model *m, const double *M, const double *inv,
                           const int *piv, double *B, int w)
{
    if (m->flags & CG_SYMMETRIC) cg_cholesky_solve_rows(m->nu, M, inv, B, w);
    else cg_lu_solve_rows(m->nu, M, piv, B, w);
}

CG_API int cg_jacobian(const cg_model *m, double t, const double *x, const double *p,
                       const double *r, double *J, double *Jr)
{
    CG_FIX_MODEL(m);
    const int nq = m->nq, nu = m->nu, nx = m->nx, nr = m->nr;
    double dx[CG_LEN(nx)], scratch[CG_LEN(Jr ? 0 : nx * nr)];
    double M[CG_LEN(m->nm)], inv[CG_LEN(nu)];
    int piv[CG_LEN(nu)], code = CG_OK;
    double *Jin = Jr ? Jr : scratch;
    if (!m->jacobian) return CG_ERR_NO_JACOBIAN;
    if (!cg_finite_inputs(m, t, x, p, r)) return CG_ERR_INPUT;
    /* q', M and F, then u' with the factors that serve the Jacobian too */
    m->eval(t, x, p, r, dx, M, dx + nq, 0, 0, 0);
    if ((m->flags & CG_SYMMETRIC) ? cg_cholesky_factor(nu, M, inv) : cg_lu_decompose(nu, M, piv))
        code = CG_ERR_MASS;
    else
        cg_solve_block(m, M, inv, piv, dx + nq, 1);
    if (code == CG_OK && !cg_all_finite(dx, nx)) code = CG_ERR_OUTPUT;
    if (code) return cg_diagnose(m, t, x, p, r, code);
    /* [Jq; R] straight into J's rows, [Jqr; Rr] into Jr's, then R and Rr solved in place */
    m->jacobian(t, x, p, r, dx + nq, J, J + nq * nx, Jin, Jin + nq * nr);
    cg_solve_block(m, M, inv, piv, J + nq * nx, nx);
    if (!cg_all_finite(J, nx * nx)) return CG_ERR_OUTPUT;
    if (Jr && nr) {
        cg_solve_block(m, M, inv, piv, Jr + nq * nr, nr);
        if (!cg_all_finite(Jr, nx * nr)) return CG_ERR_OUTPUT;
    }
    return CG_OK;
}
