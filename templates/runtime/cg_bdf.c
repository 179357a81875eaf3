/*
 * cg_bdf.c -- variable-order BDF (NDF).
   The quasi-constant step size numerical differentiation formulas of
   Shampine & Reichelt (MATLAB's ode15s), orders 1 to 5, in the difference
   form of SciPy's BDF: s->D holds the backward differences of the solution,
   rescaled whenever h changes; a simplified Newton iteration on
   (I - c J) dy = c f - psi - d with c = h / alpha_k; J (the model's analytic
   Jacobian, else differences) is kept until the Newton iteration fails to
   converge with it. The order moves by one after k + 1 steps of equal size,
   to the neighbour whose error estimate allows the larger step.
   Where it departs from SciPy's BDF, as CVODE and LSODE do, to save RHS
   calls, factorizations and rescalings:
   - W's LU is kept while c stays within 30 % of the c it was formed with;
     each Newton correction is then scaled by 2 rho / (1 + rho), rho = c / c_W,
     which is off by the same factor in the stiff limit (where the unscaled
     correction is exact) and in the non-stiff one (where rho times it is);
   - Newton's convergence rate is carried from step to step (s->crate), so
     that the first iterate can be accepted; it is raised with the step when W
     is formed anew, and unknown (1) after a new J;
   - Newton's tolerance is rtol^(1/4) of the error tolerance, at most 0.01;
   - a step that may grow by less than 20 % (at the same order) is kept.
 */
#include <float.h>
#include "cg_internal.h"

#define CG_BDF_MAX_ORDER 5
#define CG_BDF_NEWTON 4
#define CG_BDF_W_DRIFT 0.3           /* |c / c_W - 1| beyond which W is factored anew */
#define CG_BDF_MIN_RAISE 1.2         /* a smaller growth of h is not taken */

/* kappa_k (Shampine & Reichelt's NDF), gamma_k = sum_{i<=k} 1/i,
   alpha_k = (1 - kappa_k) gamma_k and the error constants
   kappa_k gamma_k + 1 / (k + 1), for k = 0..5 */
#define CG_G1 1.0
#define CG_G2 (1.0 + 1.0 / 2.0)
#define CG_G3 (CG_G2 + 1.0 / 3.0)
#define CG_G4 (CG_G3 + 1.0 / 4.0)
#define CG_G5 (CG_G4 + 1.0 / 5.0)
static const double cg_bdf_gamma[6] = {0.0, CG_G1, CG_G2, CG_G3, CG_G4,
                                            CG_G5};
static const double cg_bdf_alpha[6] = {
    0.0, (1.0 + 0.1850) * CG_G1, (1.0 + 1.0 / 9.0) * CG_G2, (1.0 + 0.0823) * CG_G3,
    (1.0 + 0.0415) * CG_G4, CG_G5};
static const double cg_bdf_error_const[6] = {
    1.0, -0.1850 * CG_G1 + 1.0 / 2.0, -1.0 / 9.0 * CG_G2 + 1.0 / 3.0,
    -0.0823 * CG_G3 + 1.0 / 4.0, -0.0415 * CG_G4 + 1.0 / 5.0, 1.0 / 6.0};

/* R(order, factor): the matrix that rescales backward differences to the step h * factor */
/* x^(-1/k) for x > 0 and the orders' k = 1..6: square and cube roots where
   they serve, which cost a fraction of pow's time (called several times a step) */
static double cg_inv_root(double x, int k)
{
    switch (k) {
    case 1: return 1.0 / x;
    case 2: return 1.0 / sqrt(x);
    case 3: return 1.0 / cbrt(x);
    case 4: return 1.0 / sqrt(sqrt(x));
    case 6: return 1.0 / sqrt(cbrt(x));
    default: return pow(x, -1.0 / k);
    }
}

/* x^k for a small k >= 0 */
static double cg_ipow(double x, int k)
{
    double v = 1.0;
    while (k-- > 0) v *= x;
    return v;
}

static void cg_bdf_R(int order, double factor, double R[6][6])
{
    static const double inv[6] = {0.0, 1.0, 1.0 / 2.0, 1.0 / 3.0, 1.0 / 4.0, 1.0 / 5.0};
    int i, j;
    for (j = 0; j <= order; j++) R[0][j] = 1.0;
    for (i = 1; i <= order; i++) {
        R[i][0] = 0.0;
        for (j = 1; j <= order; j++) R[i][j] = R[i - 1][j] * (i - 1 - factor * j) * inv[i];
    }
}

/* D[0..order] <- (R U)^T D[0..order]: the differences for the step h * factor.
   U = R(order, 1) is upper triangular and its own inverse, and column 0 of
   R U is e_0: D[0], the solution, stays, and a factor of 1 changes nothing. */
static void cg_bdf_rescale(cg_integrator *s, double factor)
{
    const int nx = CG_NX(s);
    double R[6][6], U[6][6], RU[6][6], old[6];
    const int order = s->order;
    int i, j, k, n;
    if (factor == 1.0) return;
    cg_bdf_R(order, factor, R);
    cg_bdf_R(order, 1.0, U);
    for (i = 0; i <= order; i++)
        for (j = 1; j <= order; j++) {
            double v = 0.0;
            for (k = 0; k <= j; k++) v += R[i][k] * U[k][j];
            RU[i][j] = v;
        }
    for (n = 0; n < nx; n++) {
        for (k = 0; k <= order; k++) old[k] = s->D[k * nx + n];
        for (j = 1; j <= order; j++) {
            double v = 0.0;
            for (k = 0; k <= order; k++) v += RU[k][j] * old[k];
            s->D[j * nx + n] = v;
        }
    }
}

/* a new step size h * factor (and so a new W to come) */
static void cg_bdf_new_h(cg_integrator *s, double factor)
{
    cg_bdf_rescale(s, factor);
    s->h *= factor;
    s->n_equal = 0;
}

/* the first step: order 1 from (x, h f) */
static void cg_bdf_start(cg_integrator *s)
{
    const int nx = CG_NX(s);
    int i;
    s->order = 1;
    s->n_equal = 0;
    for (i = 0; i < nx; i++) {
        s->D[i] = s->x[i];
        s->D[nx + i] = s->h * s->f[i];
    }
}

/* the prediction of the step's end, ypred = sum_k D[k], and psi = sum_k gamma_k D[k]
   / alpha (the history's part of the corrector equation) */
static void cg_bdf_predict(const cg_integrator *s, double *ypred, double *psi)
{
    const int nx = CG_NX(s), order = s->order;
    const double alpha = cg_bdf_alpha[order], *D = s->D;
    int i, k;
    for (i = 0; i < nx; i++) {
        double v = 0.0, w = 0.0;
        for (k = 0; k <= order; k++) v += D[k * nx + i];
        for (k = 1; k <= order; k++) w += D[k * nx + i] * cg_bdf_gamma[k];
        ypred[i] = v;
        psi[i] = w / alpha;
    }
}

/* W = I / c - J for this step: the kept LU while c stays within CG_BDF_W_DRIFT of the
   c it was formed with, else a new one. *rho = c / c_W; 1 when W is singular */
static int cg_bdf_w(cg_integrator *s, double c, double *rho)
{
    *rho = c * s->w_diag;                      /* c / c_W (0: no W) */
    if (fabs(*rho - 1.0) <= CG_BDF_W_DRIFT) return 0;
    /* Newton's rate grows with the step; after a new J it is unknown */
    s->crate = *rho > 0.0 ? fmin(1.0, s->crate * fmax(1.0, *rho)) : 1.0;
    *rho = 1.0;
    return cg_lu_w(s, 1.0 / c);
}

/* The simplified Newton iteration on (I - c J) dy = c f - psi - d, W dy = f - (psi +
   d) / c from y = ypred, d = 0, at most CG_BDF_NEWTON iterations, each correction
   scaled by 2 rho / (1 + rho) when W was formed with another c. *n_iter: the
   iterations it took to converge, 0 if it did not. */
static int cg_bdf_newton(cg_integrator *s, double t_new, double c, double rho,
                         const double *ypred, const double *psi, double *y, double *d,
                         int *n_iter)
{
    const int nx = CG_NX(s);
    double f[nx], dy[nx];
    const double rtol = s->rtol, scale = 2.0 * rho / (1.0 + rho);
    /* Newton stops when its remaining error is this fraction of the step's error
       tolerance: rtol^(1/4), at most 0.01. SciPy's sqrt(rtol), 1e-4 at rtol = 1e-8,
       took up to twice the RHS calls for errors at t = 1 on the stiff benchmark
       within a factor of 3 of these. */
    const double newton_tol = fmax(10.0 * DBL_EPSILON / rtol, fmin(0.01, sqrt(sqrt(rtol))));
    double dy_norm, dy_norm_old = -1.0, rate;
    int i, k, code;
    *n_iter = 0;
    for (i = 0; i < nx; i++) {
        y[i] = ypred[i];
        d[i] = 0.0;
    }
    for (k = 0; k < CG_BDF_NEWTON; k++) {
        code = cg_f(s, t_new, y, f);
        /* an iterate where f is not finite: no convergence (a smaller step),
           unless the prediction itself overflowed */
        if (code == CG_ERR_OUTPUT && cg_all_finite(ypred, nx)) return CG_OK;
        if (code) return code;
        for (i = 0; i < nx; i++) dy[i] = f[i] - (psi[i] + d[i]) / c;
        cg_lu_backsolve(nx, s->w, s->piv, dy);
        if (rho != 1.0)
            for (i = 0; i < nx; i++) dy[i] *= scale;
        dy_norm = cg_err_norm(dy, ypred, ypred, nx, rtol, s->atol);
        if (dy_norm_old >= 0.0) {
            rate = dy_norm / dy_norm_old;
            s->crate = fmax(0.3 * s->crate, rate);
        } else {
            /* the first iterate: the rate seen so far, at most 0.5 (when it is
               unknown, the correction itself must be below the tolerance) */
            rate = fmin(s->crate, 0.5);
        }
        if (dy_norm_old >= 0.0 && (rate >= 1.0 || cg_ipow(rate, CG_BDF_NEWTON - k) / (1.0 - rate)
                                                     * dy_norm > newton_tol))
            return CG_OK;                      /* diverging, or too slow to make it */
        for (i = 0; i < nx; i++) {
            y[i] += dy[i];
            d[i] += dy[i];
        }
        if (dy_norm == 0.0 || (rate > 0.0 && rate < 1.0 && rate / (1.0 - rate) * dy_norm < newton_tol)) {
            *n_iter = k + 1;
            return CG_OK;
        }
        if (!(dy_norm == dy_norm)) return CG_OK;    /* NaN */
        dy_norm_old = dy_norm;
    }
    return CG_OK;
}

/* Newton did not converge: with a J from an earlier step, a new J for the same h;
   else half the step */
static int cg_bdf_retry(cg_integrator *s)
{
    int code;
    s->rejected++;
    if (s->jac_age != 0) {
        if ((code = cg_f(s, s->t, s->x, s->f))) return code;
        if ((code = cg_step_jacobian(s, 0))) return code;
        s->w_diag = 0.0;
    } else {
        cg_bdf_new_h(s, 0.5);
    }
    return CG_OK;
}

/* The order and the step after an accepted step, once k + 1 steps of equal size have
   passed: the neighbour order (or this one) whose error estimate allows the largest
   step; y: the new state, error_norm: its error at this order */
static void cg_bdf_next_order(cg_integrator *s, const double *y, double error_norm,
                              double safety)
{
    const int nx = CG_NX(s), order = s->order;
    double err[nx], norms[3], best = 0.0, factor;
    int i, j, pick = 1;
    norms[1] = error_norm;
    norms[0] = norms[2] = HUGE_VAL;
    if (order > 1) {
        for (i = 0; i < nx; i++)
            err[i] = cg_bdf_error_const[order - 1] * s->D[order * nx + i];
        norms[0] = cg_err_norm(err, y, y, nx, s->rtol, s->atol);
    }
    if (order < CG_BDF_MAX_ORDER) {
        for (i = 0; i < nx; i++)
            err[i] = cg_bdf_error_const[order + 1] * s->D[(order + 2) * nx + i];
        norms[2] = cg_err_norm(err, y, y, nx, s->rtol, s->atol);
    }
    for (j = 0; j < 3; j++) {
        const double fj = norms[j] == HUGE_VAL ? 0.0
                          : norms[j] > 0.0 ? cg_inv_root(norms[j], order + j) : HUGE_VAL;
        if (fj > best) { best = fj; pick = j; }
    }
    factor = fmin(CG_FACTOR_MAX, safety * best);
    if (pick == 1 && factor >= 1.0 && factor < CG_BDF_MIN_RAISE) {
        s->n_equal = 0;                        /* not worth a rescaling: h stays */
    } else {
        s->order = order + pick - 1;
        cg_bdf_new_h(s, factor);
    }
}

/* the step accepted: the new differences (D[order + 2] for the order test) and state */
static int cg_bdf_accept(cg_integrator *s, double h, const double *y, const double *d)
{
    const int nx = CG_NX(s), order = s->order;
    int i, k;
    s->t_old = s->t;
    s->h_old = h;
    s->t += h;
    s->have_step = 1;
    s->steps++;
    s->n_equal++;
    if (s->jac_age == 0) s->jac_age = 1;       /* J is now from an earlier step */
    for (i = 0; i < nx; i++) {
        s->x[i] = y[i];
        s->D[(order + 2) * nx + i] = d[i] - s->D[(order + 1) * nx + i];
        s->D[(order + 1) * nx + i] = d[i];
        for (k = order; k >= 0; k--) s->D[k * nx + i] += s->D[(k + 1) * nx + i];
    }
    if (!cg_all_finite(s->x, nx)) return CG_ERR_OUTPUT;   /* overflow */
    return cg_on_manifold(s);
}

/* one BDF attempt: predict, correct by Newton, then the error test and, accepted,
   the new differences and perhaps a new order and step */
CG_API int cg_bdf_step(cg_integrator *s, int *accepted)
{
    const int nx = CG_NX(s);
    double ypred[nx], psi[nx], y[nx], d[nx], err[nx];
    double h, c, rho, safety, error_norm;
    int i, code, n_iter;
    *accepted = 0;
    if (s->order == 0) cg_bdf_start(s);
    h = s->h;
    c = h / cg_bdf_alpha[s->order];
    cg_bdf_predict(s, ypred, psi);
    if (s->jac_age < 0) {                      /* the first J, at (t, x) */
        if ((code = cg_step_jacobian(s, 0))) return code;
        s->w_diag = 0.0;
    }
    if (cg_bdf_w(s, c, &rho)) {
        cg_bdf_new_h(s, 0.5);                  /* singular: a smaller step */
        s->rejected++;
        return cg_after_singular(s);
    }
    if ((code = cg_bdf_newton(s, s->t + h, c, rho, ypred, psi, y, d, &n_iter))) return code;
    if (!n_iter) return cg_bdf_retry(s);
    safety = CG_SAFETY * (2 * CG_BDF_NEWTON + 1) / (2 * CG_BDF_NEWTON + n_iter);
    for (i = 0; i < nx; i++) err[i] = cg_bdf_error_const[s->order] * d[i];
    error_norm = cg_err_norm(err, y, y, nx, s->rtol, s->atol);
    if (!(error_norm <= 1.0)) {
        cg_bdf_new_h(s, error_norm == error_norm
                        ? fmax(CG_FACTOR_MIN, safety * cg_inv_root(error_norm, s->order + 1))
                        : CG_FACTOR_NAN);
        s->rejected++;
        return CG_OK;
    }
    *accepted = 1;
    if ((code = cg_bdf_accept(s, h, y, d))) return code;
    if (s->n_equal >= s->order + 1) cg_bdf_next_order(s, y, error_norm, safety);
    return CG_OK;
}

/* x(t_out) for t_out in the last step, from the interpolating polynomial in D */
CG_API void cg_bdf_dense(const cg_integrator *s, double t_out, double *x_out)
{
    const int nx = CG_NX(s);
    double p[CG_BDF_MAX_ORDER];
    int i, j;
    for (j = 0; j < s->order; j++)
        p[j] = (j ? p[j - 1] : 1.0) * (t_out - (s->t - s->h * j)) / (s->h * (1 + j));
    for (i = 0; i < nx; i++) {
        double v = s->D[i];
        for (j = 0; j < s->order; j++) v += s->D[(j + 1) * nx + i] * p[j];
        x_out[i] = v;
    }
}
