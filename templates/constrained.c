/*
 * Run-time elimination of the constraints A(q, t) u = B(q, t) by the SVD
 * null-space method (Singh & Likins, eqs. 9-20). With A = U S V^T of rank k
 * (singular values above ${NAME}_RANK_RTOL times the largest), V2 = the last
 * NU - k columns of V spans the null space of A, A+ = V1 S1^-1 U1^T, and
 *     u' = y + V2 z'',   (V2^T M V2) z'' = V2^T (F - M y),   y = A+ B' + A+_mu S,
 * where A u' = B' + S is the differentiated constraint with Baumgarte's term
 * S. S goes through the damped pseudoinverse (mu = ${NAME}_DAMPING times the
 * largest singular value): near a configuration where the rank drops, the
 * stabilization fades in the vanishing direction instead of being multiplied
 * by 1 / s (which would throw the motion onto another branch).
 * The constraint forces A^T lambda drop out; lambda = (A^T)+ (M u' - F).
 * Redundant rows and rank changes only change k: nothing is inverted that
 * the rank decision has not kept.
 */
#define ${NAME}_RANK_RTOL ${rank_rtol}
#define ${NAME}_DAMPING 1e-2

/* u' into ud (q' into qd) and, unless lam is null, the multipliers into lam */
static int ${name}_constrained(double t, const double *x, const double *p, const double *r,
                               double *qd, double *ud, double *lam)
{
    double M[${NAME}_NM], F[${NAME}_NU], A[${NAME}_NC * ${NAME}_NU], Bd[${NAME}_NC], S[${NAME}_NC];
    double V[${NAME}_NU * ${NAME}_NU], s[${NAME}_NU], y[${NAME}_NU], g[${NAME}_NU];
    double col[${NAME}_NU], T[${NAME}_NU * ${NAME}_NU], Mr[${NAME}_NM], z[${NAME}_NU];
    double inv[${NAME}_NU];
    int i, a, b, rank, d;
    ${name}_eval(t, x, p, r, qd, M, F, A, Bd, S);
    if (${name}_svd(${NAME}_NC, ${NAME}_NU, A, V, s) < 0) return ${NAME}_ERR_SVD;
    rank = ${name}_rank(${NAME}_NU, s, ${NAME}_RANK_RTOL);
    ${name}_pinv_apply(${NAME}_NC, ${NAME}_NU, rank, A, V, s, Bd, y);
    ${name}_damped_pinv_add(${NAME}_NC, ${NAME}_NU, rank, A, V, s, ${NAME}_DAMPING * s[0], S, y);
    d = ${NAME}_NU - rank;
    ${name}_packed_matvec(${NAME}_NU, M, y, g);
    for (i = 0; i < ${NAME}_NU; i++) g[i] = F[i] - g[i];
    for (a = 0; a < d; a++) {                        /* T = M V2, column by column */
        for (i = 0; i < ${NAME}_NU; i++) col[i] = V[i * ${NAME}_NU + rank + a];
        ${name}_packed_matvec(${NAME}_NU, M, col, T + a * ${NAME}_NU);
    }
    for (a = 0; a < d; a++) {                        /* V2^T M V2 (packed) and V2^T g */
        double sum = 0.0;
        for (b = 0; b <= a; b++) {
            double m = 0.0;
            for (i = 0; i < ${NAME}_NU; i++) m += V[i * ${NAME}_NU + rank + a] * T[b * ${NAME}_NU + i];
            Mr[a * (a + 1) / 2 + b] = m;
        }
        for (i = 0; i < ${NAME}_NU; i++) sum += V[i * ${NAME}_NU + rank + a] * g[i];
        z[a] = sum;
    }
    if (d > 0 && ${name}_cholesky_solve(d, Mr, z, inv)) return ${NAME}_ERR_MASS;
    for (i = 0; i < ${NAME}_NU; i++) {
        double sum = y[i];
        for (a = 0; a < d; a++) sum += V[i * ${NAME}_NU + rank + a] * z[a];
        ud[i] = sum;
    }
    if (lam) {
        ${name}_packed_matvec(${NAME}_NU, M, ud, g);
        for (i = 0; i < ${NAME}_NU; i++) g[i] -= F[i];
        ${name}_pinv_transpose_apply(${NAME}_NC, ${NAME}_NU, rank, A, V, s, g, lam);
    }
    return ${NAME}_OK;
}

static int ${name}_dynamics(double t, const double *x, const double *p, const double *r, double *dx)
{
    int code = ${name}_constrained(t, x, p, r, dx, dx + ${NAME}_NQ, 0);
    if (code) return code;
    return ${name}_all_finite(dx, ${NAME}_NX) ? ${NAME}_OK : ${NAME}_ERR_OUTPUT;
}

int ${name}_constraint_forces(double t, const double *x, const double *p, const double *r,
                              double *lam)
{
    double dx[${NAME}_NX];
    int code;
    if (!${name}_finite(t, x, p, r)) return ${NAME}_ERR_INPUT;
    code = ${name}_constrained(t, x, p, r, dx, dx + ${NAME}_NQ, lam);
    if (code) return code;
    return ${name}_all_finite(lam, ${NAME}_NC) ? ${NAME}_OK : ${NAME}_ERR_OUTPUT;
}

void ${name}_residuals(double t, const double *x, const double *p, const double *r, double *res)
{
    double A[${NAME}_NC * ${NAME}_NU], B[${NAME}_NC];
    int i, j;
#if ${NAME}_NH > 0
    double fq[${NAME}_NH * ${NAME}_NQ];
    ${name}_eval_position(t, x, p, r, res, fq);
#endif
    ${name}_eval_velocity(t, x, p, r, A, B);
    for (i = 0; i < ${NAME}_NC; i++) {
        double sum = -B[i];
        for (j = 0; j < ${NAME}_NU; j++) sum += A[i * ${NAME}_NU + j] * x[${NAME}_NQ + j];
        res[${NAME}_NH + i] = sum;
    }
}

int ${name}_project(double t, const double *x, const double *p, const double *r, double tol,
                    int maxiter, double *xout)
{
    double A[${NAME}_NC * ${NAME}_NU], B[${NAME}_NC], V[${NAME}_NU * ${NAME}_NU], s[${NAME}_NU];
    double w[${NAME}_NC], du[${NAME}_NU];
    int i, j, it = 0;
    for (i = 0; i < ${NAME}_NX; i++) xout[i] = x[i];
    if (!${name}_finite(t, x, p, r)) return -2;
#if ${NAME}_NH > 0
    {
        double f[${NAME}_NH], fq[${NAME}_NH * ${NAME}_NQ], Vq[${NAME}_NQ * ${NAME}_NQ];
        double sq[${NAME}_NQ], dq[${NAME}_NQ];
        for (it = 0;; it++) {                 /* Newton with the pseudoinverse of f_q */
            double norm = 0.0;
            ${name}_eval_position(t, xout, p, r, f, fq);
            for (i = 0; i < ${NAME}_NH; i++) {
                if (!isfinite(f[i])) return -2;
                if (fabs(f[i]) > norm) norm = fabs(f[i]);
            }
            if (norm <= tol) break;
            if (it >= maxiter) return -1;
            if (${name}_svd(${NAME}_NH, ${NAME}_NQ, fq, Vq, sq) < 0) return -1;
            ${name}_pinv_apply(${NAME}_NH, ${NAME}_NQ,
                               ${name}_rank(${NAME}_NQ, sq, ${NAME}_RANK_RTOL), fq, Vq, sq, f, dq);
            for (i = 0; i < ${NAME}_NQ; i++) xout[i] -= dq[i];
        }
    }
#endif
    ${name}_eval_velocity(t, xout, p, r, A, B);   /* speeds: least-norm correction onto A u = B */
    for (i = 0; i < ${NAME}_NC; i++) {
        double sum = -B[i];
        for (j = 0; j < ${NAME}_NU; j++) sum += A[i * ${NAME}_NU + j] * xout[${NAME}_NQ + j];
        w[i] = sum;
    }
    if (${name}_svd(${NAME}_NC, ${NAME}_NU, A, V, s) < 0) return -1;
    ${name}_pinv_apply(${NAME}_NC, ${NAME}_NU, ${name}_rank(${NAME}_NU, s, ${NAME}_RANK_RTOL),
                       A, V, s, w, du);
    for (i = 0; i < ${NAME}_NU; i++) xout[${NAME}_NQ + i] -= du[i];
    for (i = 0; i < ${NAME}_NX; i++) if (!isfinite(xout[i])) return -2;
    return it;
}
