/*
 * cg_explicit.c -- the explicit methods: RK4 (fixed step) and Dormand-Prince 5(4)
 * with Hairer's dense output (cg_cont_dense).
 */
#include "cg_internal.h"

/* one RK4 step of size s->h from (t, x), f = f(t, x) given; new f at the end */
CG_API int cg_rk4_step(cg_integrator *s, int *accepted)
{
    const int nx = CG_NX(s);
    double k2[nx], k3[nx], k4[nx], y[nx];
    int i, code;
    const double t = s->t, h = s->h;
    *accepted = 1;
    for (i = 0; i < nx; i++) y[i] = s->x[i] + 0.5 * h * s->f[i];
    if ((code = cg_f(s, t + 0.5 * h, y, k2))) return code;
    for (i = 0; i < nx; i++) y[i] = s->x[i] + 0.5 * h * k2[i];
    if ((code = cg_f(s, t + 0.5 * h, y, k3))) return code;
    for (i = 0; i < nx; i++) y[i] = s->x[i] + h * k3[i];
    if ((code = cg_f(s, t + h, y, k4))) return code;
    for (i = 0; i < nx; i++)
        s->x[i] += h / 6.0 * (s->f[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
    s->t_old = t;
    s->h_old = h;
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
    fac = cg_step_factor(err, -0.2, CG_FACTOR_MAX);
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
