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

/* one BDF attempt */
CG_API int cg_bdf_step(cg_integrator *s, int *accepted)
{
    const int nx = CG_NX(s);
    double ypred[nx], psi[nx], y[nx], d[nx], dy[nx],
        f[nx], err[nx];
    const double rtol = s->rtol, atol = s->atol, *D = s->D;
    /* Newton stops when its remaining error is this fraction of the step's error
       tolerance: rtol^(1/4), at most 0.01. SciPy's sqrt(rtol), 1e-4 at rtol = 1e-8,
       took up to twice the RHS calls for errors at t = 1 on the stiff benchmark
       within a factor of 3 of these. */
    const double newton_tol = fmax(10.0 * 2.220446049250313e-16 / rtol, fmin(0.01, sqrt(sqrt(rtol))));
    double h, t_new, c, alpha, dy_norm, dy_norm_old = -1.0, rate = 0.0, safety, error_norm,
        factor, rho, scale;
    int i, k, order, code, converged = 0, n_iter = 0;
    if (s->order == 0) {                       /* the first step: order 1 from (x, h f) */
        s->order = 1;
        s->n_equal = 0;
        for (i = 0; i < nx; i++) {
            s->D[i] = s->x[i];
            s->D[nx + i] = s->h * s->f[i];
        }
    }
    order = s->order;
    h = s->h;
    t_new = s->t + h;
    alpha = cg_bdf_alpha[order];
    c = h / alpha;
    for (i = 0; i < nx; i++) {
        double v = 0.0, w = 0.0;
        for (k = 0; k <= order; k++) v += D[k * nx + i];
        for (k = 1; k <= order; k++) w += D[k * nx + i] * cg_bdf_gamma[k];
        ypred[i] = v;
        psi[i] = w / alpha;
        y[i] = v;
        d[i] = 0.0;
    }
    if (s->jac_age < 0) {                      /* the first J, at (t, x) */
        if ((code = cg_step_jacobian(s, 0))) return code;
        s->w_diag = 0.0;
    }
    rho = c * s->w_diag;                       /* c / c_W (0: no W) */
    if (!(fabs(rho - 1.0) <= CG_BDF_W_DRIFT)) {
        /* Newton's rate grows with the step; after a new J it is unknown */
        s->crate = rho > 0.0 ? fmin(1.0, s->crate * fmax(1.0, rho)) : 1.0;
        if (cg_lu_w(s, 1.0 / c)) {
            cg_bdf_new_h(s, 0.5);         /* singular: a smaller step */
            s->rejected++;
            *accepted = 0;
            return cg_after_singular(s);
        }
        rho = 1.0;
    }
    scale = 2.0 * rho / (1.0 + rho);
    /* W = I / c - J, so W dy = f - (psi + d) / c is (I - c J) dy = c f - psi - d */
    for (k = 0; k < CG_BDF_NEWTON; k++) {
        code = cg_f(s, t_new, y, f);
        /* an iterate where f is not finite: no convergence (a smaller step),
           unless the prediction itself overflowed */
        if (code == CG_ERR_OUTPUT && cg_all_finite(ypred, nx)) break;
        if (code) return code;
        for (i = 0; i < nx; i++) dy[i] = f[i] - (psi[i] + d[i]) / c;
        cg_lu_backsolve(nx, s->w, s->piv, dy);
        if (rho != 1.0)
            for (i = 0; i < nx; i++) dy[i] *= scale;
        dy_norm = cg_err_norm(dy, ypred, ypred, nx, rtol, atol);
        n_iter = k + 1;
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
            break;                             /* diverging, or too slow to make it */
        for (i = 0; i < nx; i++) {
            y[i] += dy[i];
            d[i] += dy[i];
        }
        if (dy_norm == 0.0 || (rate > 0.0 && rate < 1.0 && rate / (1.0 - rate) * dy_norm < newton_tol)) {
            converged = 1;
            break;
        }
        if (!(dy_norm == dy_norm)) break;      /* NaN */
        dy_norm_old = dy_norm;
    }
    *accepted = 0;
    if (!converged) {
        s->rejected++;
        if (s->jac_age != 0) {                 /* a J from an earlier step: a new one, same h */
            if ((code = cg_f(s, s->t, s->x, s->f))) return code;
            if ((code = cg_step_jacobian(s, 0))) return code;
            s->w_diag = 0.0;
        } else {
            cg_bdf_new_h(s, 0.5);
        }
        return CG_OK;
    }
    safety = 0.9 * (2 * CG_BDF_NEWTON + 1) / (2 * CG_BDF_NEWTON + n_iter);
    for (i = 0; i < nx; i++) err[i] = cg_bdf_error_const[order] * d[i];
    error_norm = cg_err_norm(err, y, y, nx, rtol, atol);
    if (!(error_norm <= 1.0)) {
        factor = error_norm == error_norm ? fmax(0.2, safety * cg_inv_root(error_norm, order + 1))
                                          : 0.1;
        cg_bdf_new_h(s, factor);
        s->rejected++;
        return CG_OK;
    }
    /* accepted: the new differences (D[order + 2] for the order test) */
    s->t_old = s->t;
    s->h_old = h;
    s->t = t_new;
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
    *accepted = 1;
    if (!cg_all_finite(s->x, nx)) return CG_ERR_OUTPUT;   /* overflow */
    if ((code = cg_on_manifold(s))) return code;
    if (s->n_equal >= order + 1) {             /* order and step: the largest allowed step */
        double norms[3], best = 0.0;
        int j, pick = 1;
        norms[1] = error_norm;
        norms[0] = norms[2] = HUGE_VAL;
        if (order > 1) {
            for (i = 0; i < nx; i++)
                err[i] = cg_bdf_error_const[order - 1] * s->D[order * nx + i];
            norms[0] = cg_err_norm(err, y, y, nx, rtol, atol);
        }
        if (order < CG_BDF_MAX_ORDER) {
            for (i = 0; i < nx; i++)
                err[i] = cg_bdf_error_const[order + 1] * s->D[(order + 2) * nx + i];
            norms[2] = cg_err_norm(err, y, y, nx, rtol, atol);
        }
        for (j = 0; j < 3; j++) {
            const double fj = norms[j] == HUGE_VAL ? 0.0
                              : norms[j] > 0.0 ? cg_inv_root(norms[j], order + j) : HUGE_VAL;
            if (fj > best) { best = fj; pick = j; }
        }
        factor = fmin(10.0, safety * best);
        if (pick == 1 && factor >= 1.0 && factor < CG_BDF_MIN_RAISE) {
            s->n_equal = 0;                    /* not worth a rescaling: h stays */
        } else {
            s->order = order + pick - 1;
            cg_bdf_new_h(s, factor);
        }
    }
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
