/*
 * cg_jacobian.c -- the analytic Jacobian of a model's right-hand side.
 *
 * With M u' = F, at a state where u' is known (the model's own solve):
 *     d q'/dx = Jq,     M du'/dx = dF/dx - (dM/dx) u' = R
 * (and the same over the specified inputs). The model's C gives Jq and R
 * (symbolic derivatives of its parts, codegen.jacobian); here M is factored
 * once (Cholesky, or LU when it is not symmetric) and solved for every
 * column of R.
 */
#include "cg_internal.h"

/* the columns of R (nu x ncol, row-major) solved with M's factors into rows nq.. of J (ncol wide) */
static void cg_solve_columns(const cg_model *m, const double *M, const double *inv,
                             const int *piv, const double *R, int ncol, double *J)
{
    const int nq = m->nq, nu = m->nu;
    double col[CG_LEN(nu)];
    int i, k;
    for (k = 0; k < ncol; k++) {
        for (i = 0; i < nu; i++) col[i] = R[i * ncol + k];
        if (m->flags & CG_SYMMETRIC) cg_cholesky_backsolve(nu, M, inv, col);
        else cg_lu_backsolve(nu, M, piv, col);
        for (i = 0; i < nu; i++) J[(nq + i) * ncol + k] = col[i];
    }
}

CG_API int cg_jacobian(const cg_model *m, double t, const double *x, const double *p,
                       const double *r, double *J, double *Jr)
{
    CG_FIX_MODEL(m);
    const int nq = m->nq, nu = m->nu, nx = m->nx, nr = m->nr;
    double dx[CG_LEN(nx)], Jq[CG_LEN(nq * nx)], R[CG_LEN(nu * nx)];
    double Jqr[CG_LEN(nq * nr)], Rr[CG_LEN(nu * nr)];
    double M[CG_LEN(m->nm)], F[CG_LEN(nu)], inv[CG_LEN(nu)];
    int piv[CG_LEN(nu)], i, code;
    if (!m->jacobian) return CG_ERR_NO_JACOBIAN;
    if (!cg_finite_inputs(m, t, x, p, r)) return CG_ERR_INPUT;
    if ((code = cg_dynamics(m, t, x, p, r, dx))) return code;
    m->jacobian(t, x, p, r, dx + nq, Jq, R, Jqr, Rr);
    m->eval(t, x, p, r, dx, M, F, 0, 0, 0);
    if ((m->flags & CG_SYMMETRIC) ? cg_cholesky_factor(nu, M, inv) : cg_lu_decompose(nu, M, piv))
        return CG_ERR_MASS;
    for (i = 0; i < nq * nx; i++) J[i] = Jq[i];
    cg_solve_columns(m, M, inv, piv, R, nx, J);
    if (!cg_all_finite(J, nx * nx)) return CG_ERR_OUTPUT;
    if (Jr && nr) {
        for (i = 0; i < nq * nr; i++) Jr[i] = Jqr[i];
        cg_solve_columns(m, M, inv, piv, Rr, nr, Jr);
        if (!cg_all_finite(Jr, nx * nr)) return CG_ERR_OUTPUT;
    }
    return CG_OK;
}
