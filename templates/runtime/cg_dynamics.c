/*
 * cg_dynamics.c -- the right-hand side of any model: its equations (through the
 * descriptor), the solve for u', the run-time constraint elimination, and the
 * status texts.
 */
#include "cg_internal.h"

#define CG_MESSAGE_CASE(symbol, value, text) case symbol: return text;
const char *cg_status_message(int code)
{
    switch (code) {
    CG_STATUS_LIST(CG_MESSAGE_CASE)
    default: return "unknown status";
    }
}
#undef CG_MESSAGE_CASE

CG_API int cg_check_model(const cg_model *m)
{
    return m && m->abi_version == CG_ABI_VERSION && m->eval ? CG_OK : CG_ERR_INPUT;
}

CG_API int cg_finite_inputs(const cg_model *m, double t, const double *x, const double *p,
                     const double *r)
{
    return isfinite(t) && cg_all_finite(x, m->nx) && cg_all_finite(p, m->np)
           && (m->nr == 0 || cg_all_finite(r, m->nr));
}

/* Which part failed, for an error the fast path met (mass matrix, non-finite result):
   q' not finite is the kinematics' singularity, M or F not finite an overflow or a
   singularity of the equations; otherwise the code stands. Evaluated again, since the
   fast path's arrays are factored or gone: errors are rare, the fast path is not. */
CG_API int cg_diagnose(const cg_model *m, double t, const double *x, const double *p,
                       const double *r, int code)
{
    double qd[CG_LEN(m->nq)], M[CG_LEN(m->nm)], F[CG_LEN(m->nu)];
    double A[CG_LEN(m->nc * m->nu)], Bd[CG_LEN(m->nc)], S[CG_LEN(m->nc)];
    m->eval(t, x, p, r, qd, M, F, m->nc ? A : 0, m->nc ? Bd : 0, m->nc ? S : 0);
    if (!cg_all_finite(qd, m->nq)) return CG_ERR_KINEMATICS;
    if (!cg_all_finite(M, m->nm) || !cg_all_finite(F, m->nu)) return CG_ERR_OUTPUT;
    if (m->nc && !(cg_all_finite(A, m->nc * m->nu) && cg_all_finite(Bd, m->nc)
                   && cg_all_finite(S, m->nc))) return CG_ERR_OUTPUT;
    return code;
}

/* 1 when a pivot of the unrolled L D L^T is not above CG_PIVOT_TOL of its diagonal entry
   of M: M is not positive definite */
static inline int cg_small_pivot(double pivot, double diagonal)
{
    return !(pivot > CG_PIVOT_TOL * fabs(diagonal));
}

/* M u' = F with u' into F: the unrolled L D L^T, Cholesky of the packed M, or LU of the
   full M. 1 when M is not positive definite (cg_small_pivot; the unrolled one's pivots
   only with check) or singular. M is overwritten by the loop versions. */
static inline int cg_solve_mass(const cg_model *m, double *M, double *F, int check)
{
    const int nu = m->nu;
    int i;
    if (m->flags & CG_UNROLLED) {
        double D[CG_LEN(nu)];
        m->ldl(M, F, D);
        if (check)
            for (i = 0; i < nu; i++)
                if (cg_small_pivot(D[i], M[i * (i + 3) / 2])) return 1;
        return 0;
    }
    if (m->flags & CG_SYMMETRIC) {
        double inv[CG_LEN(nu)];
        return cg_cholesky_solve(nu, M, F, inv);
    } else {
        int piv[CG_LEN(nu)];
        if (cg_lu_decompose(nu, M, piv)) return 1;
        cg_lu_backsolve(nu, M, piv, F);
        return 0;
    }
}

/*
 * Run-time elimination of the constraints A(q, t) u = B(q, t) by the SVD
 * null-space method (Singh & Likins, eqs. 9-20). With A = U S V^T of rank k
 * (singular values above rank_rtol times the largest), V2 = the last
 * nu - k columns of V spans the null space of A, A+ = V1 S1^-1 U1^T, and
 *     u' = y + V2 z'',   (V2^T M V2) z'' = V2^T (F - M y),   y = A+ B' + A+_mu S,
 * where A u' = B' + S is the differentiated constraint with Baumgarte's term
 * S. S goes through the damped pseudoinverse (mu = CG_DAMPING times the
 * largest singular value): near a configuration where the rank drops, the
 * stabilization fades in the vanishing direction instead of being multiplied
 * by 1 / s (which would throw the motion onto another branch).
 * The constraint forces A^T lambda drop out; lambda = (A^T)+ (M u' - F).
 * Redundant rows and rank changes only change k: nothing is inverted that
 * the rank decision has not kept.
 */
#define CG_DAMPING 1e-2

static int cg_constrained(const cg_model *m, double t, const double *x, const double *p,
                          const double *r, double *qd, double *ud, double *lam, double *sv)
{
    const int nu = m->nu, nc = m->nc;
    double M[CG_LEN(m->nm)], F[CG_LEN(nu)], A[CG_LEN(nc * nu)], Bd[CG_LEN(nc)], S[CG_LEN(nc)];
    double V[CG_LEN(nu * nu)], s[CG_LEN(nu)], y[CG_LEN(nu)], g[CG_LEN(nu)];
    double col[CG_LEN(nu)], T[CG_LEN(nu * nu)], Mr[CG_LEN(m->nm)], z[CG_LEN(nu)];
    double inv[CG_LEN(nu)];
    int i, a, b, rank, d;
    m->eval(t, x, p, r, qd, M, F, A, Bd, S);
    if (cg_svd(nc, nu, A, V, s) < 0) return CG_ERR_SVD;
    rank = cg_rank(nu, s, m->rank_rtol);
    if (sv) for (i = 0; i < nu; i++) sv[i] = s[i];
    cg_pinv_apply(nc, nu, rank, A, V, s, Bd, y);
    cg_damped_pinv_add(nc, nu, rank, A, V, s, CG_DAMPING * s[0], S, y);
    d = nu - rank;
    cg_packed_matvec(nu, M, y, g);
    for (i = 0; i < nu; i++) g[i] = F[i] - g[i];
    for (a = 0; a < d; a++) {                        /* T = M V2, column by column */
        for (i = 0; i < nu; i++) col[i] = V[i * nu + rank + a];
        cg_packed_matvec(nu, M, col, T + a * nu);
    }
    for (a = 0; a < d; a++) {                        /* V2^T M V2 (packed) and V2^T g */
        double sum = 0.0;
        for (b = 0; b <= a; b++) {
            double v = 0.0;
            for (i = 0; i < nu; i++) v += V[i * nu + rank + a] * T[b * nu + i];
            Mr[a * (a + 1) / 2 + b] = v;
        }
        for (i = 0; i < nu; i++) sum += V[i * nu + rank + a] * g[i];
        z[a] = sum;
    }
    if (d > 0 && cg_cholesky_solve(d, Mr, z, inv)) return CG_ERR_MASS;
    for (i = 0; i < nu; i++) {
        double sum = y[i];
        for (a = 0; a < d; a++) sum += V[i * nu + rank + a] * z[a];
        ud[i] = sum;
    }
    if (lam) {
        cg_packed_matvec(nu, M, ud, g);
        for (i = 0; i < nu; i++) g[i] -= F[i];
        cg_pinv_transpose_apply(nc, nu, rank, A, V, s, g, lam);
    }
    return CG_OK;
}

/* dx of a model without run-time constraints: the recursion, or M u' = F solved (by the
   model's eval_ldl where it has one); 1 where M is not positive definite (a pivot of the
   recursion not positive, e.g. a zero mass, or cg_small_pivot's), its pivots looked at
   only with check */
static inline int cg_free_dynamics(const cg_model *m, double t, const double *x,
                                   const double *p, const double *r, double *dx, int check)
{
    const int nu = m->nu;
    double *qd = dx, *ud = dx + m->nq;
    int i;
    if (m->flags & CG_TREE) {
        double D[CG_LEN(nu)];
        m->tree(t, x, p, r, qd, ud, D);
        if (check)
            for (i = 0; i < nu; i++) if (!(D[i] > 0.0)) return 1;
        return 0;
    } else if (m->eval_ldl) {
        double D[CG_LEN(nu)], Md[CG_LEN(nu)];
        m->eval_ldl(t, x, p, r, qd, ud, D, Md);
        if (check)
            for (i = 0; i < nu; i++) if (cg_small_pivot(D[i], Md[i])) return 1;
        return 0;
    } else {
        double M[CG_LEN(m->nm)];
        m->eval(t, x, p, r, qd, M, ud, 0, 0, 0);
        return cg_solve_mass(m, M, ud, check);
    }
}

CG_API int cg_dynamics(const cg_model *m, double t, const double *x, const double *p, const double *r,
                double *dx)
{
    return cg_dynamics_sv(m, t, x, p, r, dx, 0);
}

/* cg_dynamics, and with run-time constraints the singular values of A into sv (nu,
   descending; NULL: not wanted) */
CG_API int cg_dynamics_sv(const cg_model *m, double t, const double *x, const double *p,
                          const double *r, double *dx, double *sv)
{
    CG_FIX_MODEL(m);
    int code = CG_OK;
    if (m->nc) code = cg_constrained(m, t, x, p, r, dx, dx + m->nq, 0, sv);
    else if (cg_free_dynamics(m, t, x, p, r, dx, 1)) code = CG_ERR_MASS;
    if (code == CG_OK && !cg_all_finite(dx, m->nx)) code = CG_ERR_OUTPUT;
    return code == CG_OK || code == CG_ERR_SVD ? code : cg_diagnose(m, t, x, p, r, code);
}

CG_API int cg_rhs(const cg_model *m, double t, const double *x, const double *p, const double *r,
           double *dx)
{
    CG_FIX_MODEL(m);
    if (!cg_finite_inputs(m, t, x, p, r)) return CG_ERR_INPUT;
    return cg_dynamics(m, t, x, p, r, dx);
}

CG_API int cg_rhs_unchecked(const cg_model *m, double t, const double *x, const double *p,
                            const double *r, double *dx)
{
    CG_FIX_MODEL(m);
    if (m->nc) return cg_rhs(m, t, x, p, r, dx);
    return cg_free_dynamics(m, t, x, p, r, dx, 0) ? CG_ERR_MASS : CG_OK;
}

CG_API int cg_mass_matrix_packed(const cg_model *m, double t, const double *x, const double *p,
                                 const double *r, double *Mp)
{
    CG_FIX_MODEL(m);
    if (m->mass) {
        m->mass(t, x, p, r, Mp);
    } else {     /* the work arrays in this block only: a mass function needs none */
        const int nu = m->nu, nc = m->nc;
        double qd[CG_LEN(m->nq)], F[CG_LEN(nu)];
        double A[CG_LEN(nc * nu)], Bd[CG_LEN(nc)], S[CG_LEN(nc)];
        m->eval(t, x, p, r, qd, Mp, F, nc ? A : 0, nc ? Bd : 0, nc ? S : 0);
    }
    return m->nm;
}

CG_API void cg_mass_matrix(const cg_model *m, double t, const double *x, const double *p,
                    const double *r, double *M)
{
    CG_FIX_MODEL(m);
    const int nu = m->nu;
    double Ms[CG_LEN(m->nm)];
    int i;
    cg_mass_matrix_packed(m, t, x, p, r, Ms);
    if (m->flags & CG_SYMMETRIC) cg_unpack(nu, Ms, M);
    else for (i = 0; i < nu * nu; i++) M[i] = Ms[i];
}

CG_API void cg_forcing(const cg_model *m, double t, const double *x, const double *p, const double *r,
                double *F)
{
    CG_FIX_MODEL(m);
    const int nu = m->nu, nc = m->nc;
    double Ms[CG_LEN(m->nm)], qd[CG_LEN(m->nq)];
    double A[CG_LEN(nc * nu)], Bd[CG_LEN(nc)], S[CG_LEN(nc)];
    m->eval(t, x, p, r, qd, Ms, F, nc ? A : 0, nc ? Bd : 0, nc ? S : 0);
}

CG_API int cg_inverse_dynamics(const cg_model *m, double t, const double *x, const double *p,
                               const double *r, const double *ud, double *tau)
{
    CG_FIX_MODEL(m);
    const int nu = m->nu, nc = m->nc;
    int i, j;
    if (!cg_finite_inputs(m, t, x, p, r) || !cg_all_finite(ud, nu)) return CG_ERR_INPUT;
    if (m->inverse_dynamics) {
        m->inverse_dynamics(t, x, p, r, ud, tau);
    } else {
        double Ms[CG_LEN(m->nm)], qd[CG_LEN(m->nq)], F[CG_LEN(nu)];
        double A[CG_LEN(nc * nu)], Bd[CG_LEN(nc)], S[CG_LEN(nc)];
        m->eval(t, x, p, r, qd, Ms, F, nc ? A : 0, nc ? Bd : 0, nc ? S : 0);
        if (m->flags & CG_SYMMETRIC) {
            cg_packed_matvec(nu, Ms, ud, tau);
        } else {
            for (i = 0; i < nu; i++) {
                double sum = 0.0;
                for (j = 0; j < nu; j++) sum += Ms[i * nu + j] * ud[j];
                tau[i] = sum;
            }
        }
        for (i = 0; i < nu; i++) tau[i] -= F[i];
    }
    return cg_all_finite(tau, nu) ? CG_OK : CG_ERR_OUTPUT;
}

CG_API int cg_inverse_dynamics_unchecked(const cg_model *m, double t, const double *x,
                                         const double *p, const double *r, const double *ud,
                                         double *tau)
{
    CG_FIX_MODEL(m);
    if (!m->inverse_dynamics) return cg_inverse_dynamics(m, t, x, p, r, ud, tau);
    m->inverse_dynamics(t, x, p, r, ud, tau);
    return CG_OK;
}

CG_API int cg_constraint_forces(const cg_model *m, double t, const double *x, const double *p,
                         const double *r, double *lambda)
{
    CG_FIX_MODEL(m);
    double dx[CG_LEN(m->nx)];
    int code;
    if (!m->nc) return CG_ERR_INPUT;
    if (!cg_finite_inputs(m, t, x, p, r)) return CG_ERR_INPUT;
    code = cg_constrained(m, t, x, p, r, dx, dx + m->nq, lambda, 0);
    if (code == CG_OK && !cg_all_finite(lambda, m->nc)) code = CG_ERR_OUTPUT;
    return code == CG_OK || code == CG_ERR_SVD ? code : cg_diagnose(m, t, x, p, r, code);
}

CG_API void cg_residuals(const cg_model *m, double t, const double *x, const double *p,
                  const double *r, double *res)
{
    CG_FIX_MODEL(m);
    const int nq = m->nq, nu = m->nu, nc = m->nc, nh = m->nh;
    double A[CG_LEN(nc * nu)], B[CG_LEN(nc)], fq[CG_LEN(nh * nq)];
    int i, j;
    if (nh) m->position(t, x, p, r, res, fq);
    m->velocity(t, x, p, r, A, B);
    for (i = 0; i < nc; i++) {
        double sum = -B[i];
        for (j = 0; j < nu; j++) sum += A[i * nu + j] * x[nq + j];
        res[nh + i] = sum;
    }
}

CG_API int cg_project(const cg_model *m, double t, const double *x, const double *p, const double *r,
               double tol, int maxiter, double *xout)
{
    CG_FIX_MODEL(m);
    const int nq = m->nq, nu = m->nu, nc = m->nc, nh = m->nh, nx = m->nx;
    double A[CG_LEN(nc * nu)], B[CG_LEN(nc)], V[CG_LEN(nu * nu)], s[CG_LEN(nu)];
    double w[CG_LEN(nc)], du[CG_LEN(nu)];
    int i, j, it;
    for (i = 0; i < nx; i++) xout[i] = x[i];
    if (!m->nc || !cg_finite_inputs(m, t, x, p, r)) return CG_ERR_INPUT;
    if (nh) {
        double f[CG_LEN(nh)], fq[CG_LEN(nh * nq)], Vq[CG_LEN(nq * nq)], sq[CG_LEN(nq)];
        double dq[CG_LEN(nq)];
        for (it = 0;; it++) {                 /* Newton with the pseudoinverse of f_q */
            double norm = 0.0;
            m->position(t, xout, p, r, f, fq);
            for (i = 0; i < nh; i++) {
                if (!isfinite(f[i])) return CG_ERR_OUTPUT;
                if (fabs(f[i]) > norm) norm = fabs(f[i]);
            }
            if (norm <= tol) break;
            if (it >= maxiter) return CG_ERR_PROJECT;
            if (cg_svd(nh, nq, fq, Vq, sq) < 0) return CG_ERR_SVD;
            cg_pinv_apply(nh, nq, cg_rank(nq, sq, m->rank_rtol), fq, Vq, sq, f, dq);
            for (i = 0; i < nq; i++) xout[i] -= dq[i];
        }
    }
    m->velocity(t, xout, p, r, A, B);         /* speeds: least-norm correction onto A u = B */
    for (i = 0; i < nc; i++) {
        double sum = -B[i];
        for (j = 0; j < nu; j++) sum += A[i * nu + j] * xout[nq + j];
        w[i] = sum;
    }
    if (cg_svd(nc, nu, A, V, s) < 0) return CG_ERR_SVD;
    cg_pinv_apply(nc, nu, cg_rank(nu, s, m->rank_rtol), A, V, s, w, du);
    for (i = 0; i < nu; i++) xout[nq + i] -= du[i];
    return cg_all_finite(xout, nx) ? CG_OK : CG_ERR_OUTPUT;
}

CG_API int cg_outputs(const cg_model *m, double t, const double *x, const double *p,
                      const double *r, double *y)
{
    CG_FIX_MODEL(m);
    const int forces = (m->flags & CG_OUTPUT_FORCES) ? m->nc : 0;
    int code;
    if (!cg_finite_inputs(m, t, x, p, r)) return CG_ERR_INPUT;
    if (m->outputs) m->outputs(t, x, p, r, y);
    if (forces && (code = cg_constraint_forces(m, t, x, p, r, y + m->ny - forces))) return code;
    return cg_all_finite(y, m->ny) ? CG_OK : CG_ERR_OUTPUT;
}

/* Newton's impact law at event k's contact rows (J, vn, e from the model):
   M (u+ - u) = J^T Lambda and J u+ + (vn - J u) = -e vn, so
   (J M^-1 J^T) Lambda = -(1 + e) vn and u+ = u + M^-1 J^T Lambda; q stays. Only a
   point that approaches (its first row's vn < 0) strikes: else x is unchanged. */
CG_API int cg_impact(const cg_model *m, int event, double t, const double *x, const double *p,
                     const double *r, double *xout)
{
    CG_FIX_MODEL(m);
    const int nq = m->nq, nu = m->nu, nj = m->nj;
    int a, n, i, j, k;
    if (!m->impacts || event < 0 || event >= m->ne) return CG_ERR_INPUT;
    a = m->impact_start[event];
    n = m->impact_start[event + 1] - a;
    if (n <= 0 || !cg_finite_inputs(m, t, x, p, r)) return CG_ERR_INPUT;
    {
        double J[CG_LEN(nj * nu)], vn[CG_LEN(nj)], e[CG_LEN(nj)], M[CG_LEN(nu * nu)];
        double W[CG_LEN(n * nu)], G[CG_LEN(n * n)], lam[CG_LEN(n)];
        int piv[CG_LEN(nu)], gpiv[CG_LEN(n)];
        m->impacts(t, x, p, r, J, vn, e);
        for (i = 0; i < m->nx; i++) xout[i] = x[i];
        if (!(vn[a] < 0.0)) return isfinite(vn[a]) ? CG_OK : CG_ERR_OUTPUT;   /* it leaves */
        cg_mass_matrix(m, t, x, p, r, M);
        if (!cg_all_finite(M, nu * nu) || !cg_all_finite(J + a * nu, n * nu)
            || !cg_all_finite(vn + a, n) || !cg_all_finite(e + a, n)) return CG_ERR_OUTPUT;
        if (cg_lu_decompose(nu, M, piv)) return CG_ERR_MASS;
        for (k = 0; k < n; k++) {          /* W's rows: M^-1 J_k^T */
            for (j = 0; j < nu; j++) W[k * nu + j] = J[(a + k) * nu + j];
            cg_lu_backsolve(nu, M, piv, W + k * nu);
        }
        for (i = 0; i < n; i++) {
            for (k = 0; k < n; k++) {
                double sum = 0.0;
                for (j = 0; j < nu; j++) sum += J[(a + i) * nu + j] * W[k * nu + j];
                G[i * n + k] = sum;
            }
            lam[i] = -(1.0 + e[a + i]) * vn[a + i];
        }
        if (cg_lu_decompose(n, G, gpiv)) return CG_ERR_IMPACT;
        cg_lu_backsolve(n, G, gpiv, lam);
        for (j = 0; j < nu; j++) {
            double sum = x[nq + j];
            for (k = 0; k < n; k++) sum += W[k * nu + j] * lam[k];
            xout[nq + j] = sum;
        }
    }
    return cg_all_finite(xout, m->nx) ? CG_OK : CG_ERR_OUTPUT;
}

CG_API void cg_rhs_cb(double t, double *u, double *du, void *data)
{
    const cg_model *m;
    const double *p = (const double *)data + 1;
    int i;
    memcpy(&m, data, sizeof m);
    if (cg_rhs(m, t, u, p, p + m->np, du) != CG_OK)
        for (i = 0; i < m->nx; i++) du[i] = NAN;
}
