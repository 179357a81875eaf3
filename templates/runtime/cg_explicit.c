/*
 * cg_explicit.c -- the integrators' shared parts (inputs, error norm, step
 * bookkeeping, the first step) and the explicit methods RK4 and Dormand-Prince 5(4).
 */
#include "cg_internal.h"

/* specified inputs at time t from the table: held or linearly interpolated */
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

CG_API int cg_f(cg_integrator *s, double t, const double *x, double *dx)
{
    const cg_model *m = CG_SM(s);
    int code;
    cg_inputs_at(s, t);
    s->nfev++;
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

/* Hairer & Wanner's starting step for a method whose error estimate has order p */
CG_API int cg_first_step(cg_integrator *s, int p)
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
                                       : pow(0.01 / (d1 > d2 ? d1 : d2), 1.0 / (p + 1));
    s->h = 100.0 * h0 < h1 ? 100.0 * h0 : h1;
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
        int i;
        cg_inputs_at(s, s->t);
        m->position(s->t, s->x, s->p, s->r, f, fq);
        for (i = 0; i < m->nh; i++)
            if (!(fabs(f[i]) <= bound)) return CG_ERR_MANIFOLD;
    }
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
    s->h = h * (fac < 0.2 ? 0.2 : fac);
    *accepted = 1;
    if (!cg_all_finite(s->x, CG_NX(s))) return CG_ERR_OUTPUT;   /* overflow */
    return cg_on_manifold(s);
}

/* ... or rejected: retry with a smaller step (a tenth for a non-finite error) */
CG_API int cg_rejected(cg_integrator *s, double h, double err, double fac, int *accepted)
{
    if (!(err == err)) fac = 0.1;
    s->h = h * (fac < 0.2 ? 0.2 : fac);
    s->rejected++;
    *accepted = 0;
    return CG_OK;
}

/* one RK4 step of size h from (t, x), f = f(t, x) given; new f at the end */
CG_API int cg_rk4_step(cg_integrator *s, double h)
{
    const int nx = CG_NX(s);
    double k2[nx], k3[nx], k4[nx], y[nx];
    int i, code;
    const double t = s->t;
    for (i = 0; i < nx; i++) y[i] = s->x[i] + 0.5 * h * s->f[i];
    if ((code = cg_f(s, t + 0.5 * h, y, k2))) return code;
    for (i = 0; i < nx; i++) y[i] = s->x[i] + 0.5 * h * k2[i];
    if ((code = cg_f(s, t + 0.5 * h, y, k3))) return code;
    for (i = 0; i < nx; i++) y[i] = s->x[i] + h * k3[i];
    if ((code = cg_f(s, t + h, y, k4))) return code;
    for (i = 0; i < nx; i++)
        s->x[i] += h / 6.0 * (s->f[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
    s->t = t + h;
    s->steps++;
    if (!cg_all_finite(s->x, nx)) return CG_ERR_OUTPUT;   /* overflow */
    if ((code = cg_on_manifold(s))) return code;
    return cg_f(s, s->t, s->x, s->f);
}

/* one Dormand-Prince 5(4) attempt; accepted steps update x, f, t and the dense output */
CG_API int cg_dopri5_step(cg_integrator *s, int *accepted)
{
    static const double a21 = 1.0 / 5.0, a31 = 3.0 / 40.0, a32 = 9.0 / 40.0,
        a41 = 44.0 / 45.0, a42 = -56.0 / 15.0, a43 = 32.0 / 9.0,
        a51 = 19372.0 / 6561.0, a52 = -25360.0 / 2187.0, a53 = 64448.0 / 6561.0, a54 = -212.0 / 729.0,
        a61 = 9017.0 / 3168.0, a62 = -355.0 / 33.0, a63 = 46732.0 / 5247.0, a64 = 49.0 / 176.0,
        a65 = -5103.0 / 18656.0,
        a71 = 35.0 / 384.0, a73 = 500.0 / 1113.0, a74 = 125.0 / 192.0, a75 = -2187.0 / 6784.0,
        a76 = 11.0 / 84.0,
        e1 = 71.0 / 57600.0, e3 = -71.0 / 16695.0, e4 = 71.0 / 1920.0, e5 = -17253.0 / 339200.0,
        e6 = 22.0 / 525.0, e7 = -1.0 / 40.0,
        d1 = -12715105075.0 / 11282082432.0, d3 = 87487479700.0 / 32700410799.0,
        d4 = -10690763975.0 / 1880347072.0, d5 = 701980252875.0 / 199316789632.0,
        d6 = -1453857185.0 / 822651844.0, d7 = 69997945.0 / 29380423.0;
    const int nx = CG_NX(s);
    double k2[nx], k3[nx], k4[nx], k5[nx], k6[nx],
        k7[nx], y[nx], ynew[nx], e[nx];
    const double h = s->h, t = s->t, *x = s->x, *k1 = s->f;
    double err, fac;
    int i, code;
    for (i = 0; i < nx; i++) y[i] = x[i] + h * a21 * k1[i];
    if ((code = cg_f(s, t + h / 5.0, y, k2))) return code;
    for (i = 0; i < nx; i++) y[i] = x[i] + h * (a31 * k1[i] + a32 * k2[i]);
    if ((code = cg_f(s, t + 0.3 * h, y, k3))) return code;
    for (i = 0; i < nx; i++) y[i] = x[i] + h * (a41 * k1[i] + a42 * k2[i] + a43 * k3[i]);
    if ((code = cg_f(s, t + 0.8 * h, y, k4))) return code;
    for (i = 0; i < nx; i++)
        y[i] = x[i] + h * (a51 * k1[i] + a52 * k2[i] + a53 * k3[i] + a54 * k4[i]);
    if ((code = cg_f(s, t + h * 8.0 / 9.0, y, k5))) return code;
    for (i = 0; i < nx; i++)
        y[i] = x[i] + h * (a61 * k1[i] + a62 * k2[i] + a63 * k3[i] + a64 * k4[i] + a65 * k5[i]);
    if ((code = cg_f(s, t + h, y, k6))) return code;
    for (i = 0; i < nx; i++)
        ynew[i] = x[i] + h * (a71 * k1[i] + a73 * k3[i] + a74 * k4[i] + a75 * k5[i] + a76 * k6[i]);
    if ((code = cg_f(s, t + h, ynew, k7))) return code;
    for (i = 0; i < nx; i++)
        e[i] = h * (e1 * k1[i] + e3 * k3[i] + e4 * k4[i] + e5 * k5[i] + e6 * k6[i] + e7 * k7[i]);
    err = cg_err_norm(e, x, ynew, nx, s->rtol, s->atol);
    fac = err > 0.0 ? 0.9 * pow(err, -0.2) : 10.0;
    if (fac > 10.0) fac = 10.0;
    if (!(err <= 1.0)) return cg_rejected(s, h, err, fac, accepted);   /* also NaN */
    if (t + h >= s->t_want)                    /* Hairer's dense output coefficients, for */
        for (i = 0; i < nx; i++) {     /* the step that reaches the requested time */
            const double dy = ynew[i] - x[i], bspl = h * k1[i] - dy;
            s->cont[i] = x[i];
            s->cont[nx + i] = dy;
            s->cont[2 * nx + i] = bspl;
            s->cont[3 * nx + i] = dy - h * k7[i] - bspl;
            s->cont[4 * nx + i] = h * (d1 * k1[i] + d3 * k3[i] + d4 * k4[i] + d5 * k5[i]
                                               + d6 * k6[i] + d7 * k7[i]);
        }
    for (i = 0; i < nx; i++) {
        s->x[i] = ynew[i];
        s->f[i] = k7[i];                       /* first same as last */
    }
    return cg_accepted(s, t, h, fac, accepted);
}
