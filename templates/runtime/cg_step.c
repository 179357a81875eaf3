/*
 * cg_step.c -- the step kit every integration method shares: the right-hand side
 * with the inputs of the moment, the error norm, the step-size control and the
 * bookkeeping of an accepted or rejected step, the check that a run keeps its
 * constraints, the dense output of the methods that store one in s->cont, and for
 * the implicit methods the Jacobian and the LU of W = diag I - J.
 */
#include "cg_internal.h"

/* ---- evaluations ---- */

/* specified inputs at time t from the table into s->r: held or linearly interpolated */
CG_API void cg_inputs_at(cg_integrator *s, double t)
{
    const int nr = CG_SM(s)->nr;
    int i, lo = 0, hi = s->n_table - 1;
    if (s->n_table <= 0) return;
    if (t <= s->t_table[0] || s->n_table == 1) { lo = hi = 0; }
    else if (t >= s->t_table[hi]) { lo = hi; }
    else {
        while (hi - lo > 1) {                  /* bisection: t_table[lo] <= t < t_table[hi] */
            const int mid = (lo + hi) / 2;
            if (s->t_table[mid] <= t) lo = mid; else hi = mid;
        }
    }
    for (i = 0; i < nr; i++) {
        const double a = s->r_table[lo * nr + i];
        if (s->hold || lo == hi) s->r[i] = a;
        else {
            const double w = (t - s->t_table[lo]) / (s->t_table[hi] - s->t_table[lo]);
            s->r[i] = a + w * (s->r_table[hi * nr + i] - a);
        }
    }
}

/* the inputs at (t, x) into s->r. Open loop, a constant r (a table of one row) stays
   in s->r from cg_integrator_init. With K, r = r_ref + K x_ref - K x by the model's
   own law (cg_model's feedback, its sizes compiled in), whose c = r_ref + K x_ref is
   formed once when r_ref is a constant; then the controller; CG_ERR_CONTROL where they
   give a non-finite input */
CG_ALWAYS_INLINE int cg_inputs_inline(cg_integrator *s, double t, const double *x)
{
    const cg_model *m = CG_SM(s);
    const int nr = m->nr;
    double *r = s->r, z;
    int i;
    if (!s->K) {                     /* a constant stays, unless a controller wrote on it */
        if (s->n_table > 1 || s->controller) cg_inputs_at(s, t);
        if (!s->controller) return CG_OK;
    } else if (s->n_table > 1) {     /* r_ref from the table at t */
        double c[CG_LEN(nr)];
        cg_inputs_at(s, t);
        for (i = 0; i < nr; i++) c[i] = r[i] + s->law_c[i];
        m->feedback(x, s->K, c, r);
    } else {
        m->feedback(x, s->K, s->law_c, r);
    }
    if (s->controller) s->controller(t, x, s->p, r, s->control_data);
    z = r[0] * 0.0;                  /* NaN for a non-finite input (nr > 0 with a law) */
    for (i = 1; i < nr; i++) z += r[i] * 0.0;
    return z == 0.0 ? CG_OK : CG_ERR_CONTROL;
}

CG_API int cg_inputs(cg_integrator *s, double t, const double *x)
{
    return cg_inputs_inline(s, t, x);
}

/* dx = f(t, x) with the inputs at t, counted; with run-time constraints, the lowest
   ratio of singular values met (cg_integrator_nearest_singular) */
CG_API int cg_f(cg_integrator *s, double t, const double *x, double *dx)
{
    const cg_model *m = CG_SM(s);
    int code;
    s->nfev++;
    if ((code = cg_inputs_inline(s, t, x)))             /* a feedback's non-finite input, */
        return cg_all_finite(x, CG_NX(s)) ? code : CG_ERR_OUTPUT;   /* else the overflow */
    if (m->nc) {            /* how near the constraints come to a rank drop */
        double sv[CG_LEN(m->nu)];
        code = cg_dynamics_sv(m, t, x, s->p, s->r, dx, sv);
        if (code == CG_OK && sv[0] > 0.0) {
            const int rank = cg_rank(m->nu, sv, m->rank_rtol);
            double ratio;
            if (s->rank_seen == 0) s->rank_seen = rank > 0 ? rank : 1;    /* at the start */
            ratio = sv[s->rank_seen - 1] / sv[0];
            if (ratio < s->ratio_low) {
                s->ratio_low = ratio;
                s->t_low = t;
            }
        }
    } else {
        code = cg_dynamics(m, t, x, s->p, s->r, dx);    /* inputs checked by init */
    }
    /* a stage state that is not finite is the integration overflowing, whatever
       the dynamics then reports (a NaN pivot, say) */
    if (code && !cg_all_finite(x, CG_NX(s))) return CG_ERR_OUTPUT;
    return code;
}

/* ---- the error norm ---- */

/* one term of the error norm */
static inline double cg_err_term(double e, double a, double b, double rtol, double atol)
{
    const double big = fabs(a) > fabs(b) ? fabs(a) : fabs(b);
    const double w = e / (atol + rtol * big);
    return w * w;
}

/* RMS of e scaled by atol + rtol max(|a|, |b|). Two entries per pass into
   four partial sums: the compiler pairs them into SSE2 lanes (one division
   for two), and the next step waits on this sum, not on a serial one. */
CG_API double cg_err_norm(const double *e, const double *a, const double *b, int nx, double rtol,
                   double atol)
{
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    int i = 0;
    for (; i + 3 < nx; i += 4) {
        s0 += cg_err_term(e[i], a[i], b[i], rtol, atol);
        s1 += cg_err_term(e[i + 1], a[i + 1], b[i + 1], rtol, atol);
        s2 += cg_err_term(e[i + 2], a[i + 2], b[i + 2], rtol, atol);
        s3 += cg_err_term(e[i + 3], a[i + 3], b[i + 3], rtol, atol);
    }
    for (; i < nx; i++) s0 += cg_err_term(e[i], a[i], b[i], rtol, atol);
    return sqrt(((s0 + s1) + (s2 + s3)) / nx);
}

/* ---- step-size control ---- */

/* Hairer & Wanner's starting step (II.4) for a method whose error estimate has this
   order */
CG_API int cg_first_step(cg_integrator *s, int order)
{
    const int nx = CG_NX(s);
    double d0 = 0.0, d1 = 0.0, d2 = 0.0, h0, h1, y1[nx], f1[nx];
    int i, code;
    for (i = 0; i < nx; i++) {
        const double sc = s->atol + s->rtol * fabs(s->x[i]);
        d0 += (s->x[i] / sc) * (s->x[i] / sc);
        d1 += (s->f[i] / sc) * (s->f[i] / sc);
    }
    d0 = sqrt(d0 / nx);
    d1 = sqrt(d1 / nx);
    h0 = (d0 < 1e-5 || d1 < 1e-5) ? 1e-6 : 0.01 * d0 / d1;
    for (i = 0; i < nx; i++) y1[i] = s->x[i] + h0 * s->f[i];
    if ((code = cg_f(s, s->t + h0, y1, f1))) return code;
    for (i = 0; i < nx; i++) {
        const double sc = s->atol + s->rtol * fabs(s->x[i]);
        d2 += ((f1[i] - s->f[i]) / sc) * ((f1[i] - s->f[i]) / sc);
    }
    d2 = sqrt(d2 / nx) / h0;
    h1 = (d1 <= 1e-15 && d2 <= 1e-15) ? (h0 * 1e-3 > 1e-6 ? h0 * 1e-3 : 1e-6)
                                       : pow(0.01 / (d1 > d2 ? d1 : d2), 1.0 / (order + 1));
    s->h = 100.0 * h0 < h1 ? 100.0 * h0 : h1;
    return CG_OK;
}

/* bookkeeping of an adaptive step: accepted (dense output already stored) ... */
CG_API int cg_accepted(cg_integrator *s, double t, double h, double fac, int *accepted)
{
    s->t_old = t;
    s->h_old = h;
    s->t = t + h;
    s->have_step = 1;
    s->steps++;
    s->h = h * (fac < CG_FACTOR_MIN ? CG_FACTOR_MIN : fac);
    *accepted = 1;
    if (!cg_all_finite(s->x, CG_NX(s))) return CG_ERR_OUTPUT;   /* overflow */
    return cg_on_manifold(s);
}

/* ... or rejected: retry with a smaller step (CG_FACTOR_NAN for a non-finite error) */
CG_API int cg_rejected(cg_integrator *s, double h, double err, double fac, int *accepted)
{
    if (!(err == err)) fac = CG_FACTOR_NAN;
    s->h = h * (fac < CG_FACTOR_MIN ? CG_FACTOR_MIN : fac);
    s->rejected++;
    *accepted = 0;
    return CG_OK;
}

/* CG_OK while the state at s->t keeps its configuration constraints: |f| within
   CG_MANIFOLD_FACTOR times the run's tolerance, and never less than CG_MANIFOLD_TOL
   (what simulate asks of a start); else CG_ERR_MANIFOLD: a run does not go on off its
   constraints. Checked after every accepted step. */
CG_API int cg_on_manifold(cg_integrator *s)
{
    const cg_model *m = CG_SM(s);
    if (m->nh) {
        double f[CG_LEN(m->nh)], fq[CG_LEN(m->nh * m->nq)];
        const double tol = s->rtol > s->atol ? s->rtol : s->atol;
        const double bound = CG_MANIFOLD_FACTOR * tol > CG_MANIFOLD_TOL
                             ? CG_MANIFOLD_FACTOR * tol : CG_MANIFOLD_TOL;
        int i, code;
        if ((code = cg_inputs(s, s->t, s->x))) return code;
        m->position(s->t, s->x, s->p, s->r, f, fq);
        for (i = 0; i < m->nh; i++)
            if (!(fabs(f[i]) <= bound)) return CG_ERR_MANIFOLD;
    }
    return CG_OK;
}

/* ---- dense output ---- */

/* x(t) in the last step from s->cont, the five coefficients of Hairer's DOPRI5
   interpolant (a cubic Hermite's with cont[4] = 0):
   x = c0 + th (c1 + (1 - th) (c2 + th (c3 + (1 - th) c4))), th = (t - t_old) / h_old */
CG_API void cg_cont_dense(const cg_integrator *s, double t, double *x_out)
{
    const int nx = CG_NX(s);
    const double th = (t - s->t_old) / s->h_old, th1 = 1.0 - th;
    int i;
    for (i = 0; i < nx; i++)
        x_out[i] = s->cont[i] + th * (s->cont[nx + i] + th1 * (s->cont[2 * nx + i]
                   + th * (s->cont[3 * nx + i] + th1 * s->cont[4 * nx + i])));
}

/* ---- the implicit methods' Jacobian and W ---- */

/* J = df/dx (row-major, into s->jac) and, with_dt, df/dt (s->ft) at the
   current (t, x): the model's analytic Jacobian when it has one (under the linear law
   r - K (x - x_ref), J - Jr K), else forward differences from f = s->f (nx RHS calls,
   also under a controller function); df/dt by a difference (1 call) */
CG_API int cg_step_jacobian(cg_integrator *s, int with_dt)
{
    const int nx = CG_NX(s);
    double xp[nx], fp[nx];
    const double t = s->t, *x = s->x, *f0 = s->f;
    double dt;
    int i, j, code;
    if (CG_SM(s)->jacobian && !s->controller) {   /* the model's analytic Jacobian */
        const int nr = CG_SM(s)->nr;
        if ((code = cg_inputs(s, t, x))) return code;
        s->nfev++;
        code = cg_jacobian(CG_SM(s), t, x, s->p, s->r, s->jac, s->K ? s->jr : 0);
        if (code && !cg_all_finite(x, nx)) return CG_ERR_OUTPUT;
        if (code) return code;
        if (s->K)                    /* the closed loop: d r / d x = -K */
            for (i = 0; i < nx; i++)
                for (j = 0; j < nx; j++) {
                    double sum = 0.0;
                    int k;
                    for (k = 0; k < nr; k++) sum += s->jr[i * nr + k] * s->K[k * nx + j];
                    s->jac[i * nx + j] -= sum;
                }
    } else for (j = 0; j < nx; j++) {   /* else forward differences, nx evaluations */
        const double dx = sqrt(CG_DIFF_EPS) * cg_scale(x[j]);
        for (i = 0; i < nx; i++) xp[i] = x[i];
        xp[j] += dx;
        if ((code = cg_f(s, t, xp, fp))) return code;
        for (i = 0; i < nx; i++) s->jac[i * nx + j] = (fp[i] - f0[i]) / dx;
    }
    s->jac_age = 0;
    if (!with_dt) return CG_OK;
    dt = sqrt(CG_DIFF_EPS) * cg_scale(t);
    if ((code = cg_f(s, t + dt, x, fp))) return code;
    for (i = 0; i < nx; i++) s->ft[i] = (fp[i] - f0[i]) / dt;
    return CG_OK;
}

/* W = diag I - J, LU-factored into s->w, s->piv and kept with its diagonal
   (s->w_diag; 0 = none) while J and the diagonal stay; 1 when it is singular */
CG_API int cg_lu_w(cg_integrator *s, double diag)
{
    const int nx = CG_NX(s);
    int i;
    for (i = 0; i < nx * nx; i++) s->w[i] = -s->jac[i];
    for (i = 0; i < nx; i++) s->w[i * nx + i] += diag;
    s->w_diag = cg_lu_decompose(nx, s->w, s->piv) ? 0.0 : diag;
    return s->w_diag == 0.0;
}

/* the step a singular W left: an error once it is below the resolution of t */
CG_API int cg_after_singular(const cg_integrator *s)
{
    return cg_h_too_small(s) ? CG_ERR_JACOBIAN : CG_OK;
}
