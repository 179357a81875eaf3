/*
 * cg_ali3p.c -- the index-3 augmented Lagrangian with projections (ALI3-P; Bayo &
 * Ledesma 1996, Cuadrado, Cardenal & Bayo 1997), the formulation that produces the
 * IFToMM benchmark references. For models whose constraints are all holonomic,
 * f(q, t) = 0, and whose speeds are the coordinates' rates (q' = u).
 *
 * The SVD elimination (cg_dynamics.c) solves for u' at each state; where the rank
 * of f_q drops (a four-bar passing its flat position) it divides by singular values
 * near zero, and a small velocity error along the vanishing direction can carry the
 * motion onto another branch. ALI3-P never divides by them: the positions of each
 * step solve, with the trapezoidal rule
 *
 *     q' = 2/h q + q'^,  q'' = 4/h^2 q + q''^     (the ^ terms: the last step's)
 *
 * the penalized equations at the step's end,
 *
 *     M q'' + f_q^T (alpha f + lambda) - F = 0,    lambda <- lambda + alpha f,
 *
 * by Newton with the matrix P = M + (h^2 / 4) alpha f_q^T f_q, which stays positive
 * definite through a rank drop; the configuration is enforced on f = 0 itself, so
 * the branch followed is the one the step's prediction reaches, as momentum does.
 * Then the speeds and the accelerations are projected, mass-orthogonally, onto
 * A u = B and A u' = B':
 *
 *     P u = M u* + (h^2/4) alpha A^T B,    P u' = M u'* + (h^2/4) alpha A^T B',
 *
 * each refined with P until A u = B (A u' = B') holds to atol (cg_refine).
 *
 * Fixed step dt (second order). The penalty is scaled to the model:
 * (h^2/4) alpha = CG_ALI3P_WEIGHT times the ratio of M's and f_q^T f_q's largest
 * diagonals (1e4, measured on the N four-bar: smaller weights converge slowly next
 * to the flat position, larger ones turn the roundoff of f into force noise). Newton stops when no coordinate moves by more than atol (after
 * CG_ALI3P_ITER iterations: CG_ALI3P_SLACK atol, else CG_ERR_NEWTON). lambda (the multipliers, nh) lives in
 * the integrator's ft array, x' in f as for the other methods.
 */
#include "cg_internal.h"

#ifndef CG_ALI3P_WEIGHT
#define CG_ALI3P_WEIGHT 1e4
#endif
#define CG_ALI3P_ITER 100
#define CG_ALI3P_SLACK 100.0

/* P = M + c J^T J (packed lower; J: nh x nq, row-major) */
static void cg_penalized(int nq, int nh, const double *M, const double *J, double c, double *P)
{
    int i, j, k;
    for (i = 0; i < nq; i++)
        for (j = 0; j <= i; j++) {
            double sum = 0.0;
            for (k = 0; k < nh; k++) sum += J[k * nq + i] * J[k * nq + j];
            P[i * (i + 1) / 2 + j] = M[i * (i + 1) / 2 + j] + c * sum;
        }
}

/* y += c J^T w */
static void cg_add_jt(int nq, int nh, const double *J, double c, const double *w, double *y)
{
    int i, k;
    for (k = 0; k < nh; k++)
        for (i = 0; i < nq; i++) y[i] += c * J[k * nq + i] * w[k];
}

/* v <- v + P^-1 c J^T (b - J v) until max|J v - b| <= tol (at most CG_ALI3P_ITER
   times): the penalized projection meets J v = b only to O(1 / (c sigma^2)), which
   next to a singular position (sigma small) is not enough; each pass is a back
   substitution with P's factors, no model evaluation */
static void cg_refine(int nq, int nh, const double *P, const double *inv, const double *J,
                      double c, const double *b, double tol, double *v)
{
    double w[CG_LEN(nh)], d[CG_LEN(nq)];
    int i, k, it;
    for (it = 0; it < CG_ALI3P_ITER; it++) {
        double worst = 0.0;
        for (k = 0; k < nh; k++) {
            double sum = b[k];
            for (i = 0; i < nq; i++) sum -= J[k * nq + i] * v[i];
            w[k] = sum;
            if (fabs(sum) > worst) worst = fabs(sum);
        }
        if (worst <= tol) return;
        for (i = 0; i < nq; i++) d[i] = 0.0;
        cg_add_jt(nq, nh, J, c, w, d);
        cg_cholesky_backsolve(nq, P, inv, d);
        for (i = 0; i < nq; i++) v[i] += d[i];
    }
}

/* the trapezoidal rule's speeds (into y after the positions) and accelerations at the
   positions y: q' = 2/h q + dh, q'' = 4/h^2 q + ddh */
static void cg_trapezoid(int nq, double h, const double *dh, const double *ddh, double *y,
                         double *a)
{
    int i;
    for (i = 0; i < nq; i++) {
        y[nq + i] = 2.0 / h * y[i] + dh[i];
        a[i] = 4.0 / (h * h) * y[i] + ddh[i];
    }
}

/* one step of size s->h (cg_model.h's CG_METHOD_LIST: for models with the flags
   CG_HOLONOMIC, CG_QDOT_IS_U and CG_SYMMETRIC) */
CG_API int cg_ali3p_step(cg_integrator *s, int *accepted)
{
    const cg_model *m = CG_SM(s);
    const int nq = m->nq, nh = m->nh, nx = m->nx, nm = nq * (nq + 1) / 2;
    const double h = s->h, t = s->t + h, *p = s->p, *r;
    double *lam = s->ft;
    double y[CG_LEN(nx)], dh[CG_LEN(nq)], ddh[CG_LEN(nq)], a[CG_LEN(nq)], g[CG_LEN(nq)];
    double M[CG_LEN(nm)], P[CG_LEN(nm)], F[CG_LEN(nq)], qd[CG_LEN(nq)], inv[CG_LEN(nq)];
    double f[CG_LEN(nh)], J[CG_LEN(nh * nq)], B[CG_LEN(nh)], Bd[CG_LEN(nh)], S[CG_LEN(nh)];
    double c = 0.0, alpha = 0.0;
    int i, it, code;
    *accepted = 1;
    if ((code = cg_inputs(s, t, s->x))) return code;   /* feedback: from the step's start */
    r = s->r;
    for (i = 0; i < nq; i++) {
        const double q0 = s->x[i], v0 = s->x[nq + i], a0 = s->f[nq + i];
        dh[i] = -(2.0 / h * q0 + v0);
        ddh[i] = -(4.0 / (h * h) * q0 + 4.0 / h * v0 + a0);
        y[i] = q0 + h * v0 + 0.5 * h * h * a0;            /* the prediction */
    }
    for (it = 0;; it++) {
        double move = 0.0;
        cg_trapezoid(nq, h, dh, ddh, y, a);
        m->eval(t, y, p, r, qd, M, F, J, Bd, S);
        m->position(t, y, p, r, f, J);
        s->nfev++;
        if (it == 0) {
            double mmax = 0.0, jmax = 0.0;
            for (i = 0; i < nq; i++) {
                double sum = 0.0;
                int k;
                for (k = 0; k < nh; k++) sum += J[k * nq + i] * J[k * nq + i];
                if (M[i * (i + 3) / 2] > mmax) mmax = M[i * (i + 3) / 2];
                if (sum > jmax) jmax = sum;
            }
            c = CG_ALI3P_WEIGHT * mmax / (jmax > 0.0 ? jmax : 1.0);
            alpha = 4.0 * c / (h * h);
        }
        cg_packed_matvec(nq, M, a, g);                      /* g = -(h^2/4) residual */
        for (i = 0; i < nh; i++) B[i] = alpha * f[i] + lam[i];
        for (i = 0; i < nq; i++) g[i] = F[i] - g[i];
        cg_add_jt(nq, nh, J, -1.0, B, g);
        for (i = 0; i < nq; i++) g[i] *= 0.25 * h * h;
        cg_penalized(nq, nh, M, J, c, P);
        if (cg_cholesky_solve(nq, P, g, inv)) return CG_ERR_JACOBIAN;
        for (i = 0; i < nq; i++) {
            y[i] += g[i];
            if (fabs(g[i]) > move) move = fabs(g[i]);
        }
        if (!cg_all_finite(y, nq)) return CG_ERR_OUTPUT;
        m->position(t, y, p, r, f, J);
        for (i = 0; i < nh; i++) lam[i] += alpha * f[i];
        if (move <= s->atol) break;
        if (it + 1 >= CG_ALI3P_ITER) {
            /* next to a singular position the multipliers converge slowly along the
               direction the constraints barely see, and q with them: accepted within
               CG_ALI3P_SLACK atol */
            if (move <= CG_ALI3P_SLACK * s->atol) break;
            return CG_ERR_NEWTON;
        }
    }
    /* the speeds, then the accelerations, projected with one factorization of P */
    cg_trapezoid(nq, h, dh, ddh, y, a);
    m->eval(t, y, p, r, qd, M, F, J, Bd, S);
    m->velocity(t, y, p, r, J, B);
    cg_penalized(nq, nh, M, J, c, P);
    if (cg_cholesky_factor(nq, P, inv)) return CG_ERR_JACOBIAN;
    cg_packed_matvec(nq, M, y + nq, g);
    cg_add_jt(nq, nh, J, c, B, g);
    cg_cholesky_backsolve(nq, P, inv, g);
    cg_refine(nq, nh, P, inv, J, c, B, s->atol, g);
    for (i = 0; i < nq; i++) y[nq + i] = g[i];
    m->eval(t, y, p, r, qd, M, F, J, Bd, S);               /* B' at the projected speeds */
    s->nfev += 2;
    cg_packed_matvec(nq, M, a, g);
    cg_add_jt(nq, nh, J, c, Bd, g);
    cg_cholesky_backsolve(nq, P, inv, g);
    cg_refine(nq, nh, P, inv, J, c, Bd, s->atol, g);
    for (i = 0; i < nx; i++) s->x[i] = y[i];
    for (i = 0; i < nq; i++) {
        s->f[i] = qd[i];
        s->f[nq + i] = g[i];
    }
    s->t_old = s->t;
    s->h_old = h;
    s->t = t;
    s->steps++;
    if (!(cg_all_finite(s->x, nx) && cg_all_finite(s->f, nx))) return CG_ERR_OUTPUT;
    return cg_on_manifold(s);
}
