/* ---- integrators (see ${name}.h) ------------------------------------------ */

/* specified inputs at time t from the table: held or linearly interpolated */
static void ${name}_inputs_at(${name}_integrator *s, double t)
{
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
    for (i = 0; i < ${NAME}_NR; i++) {
        const double a = s->r_table[lo * ${NAME}_NR + i];
        if (s->hold || lo == hi) s->r[i] = a;
        else {
            const double w = (t - s->t_table[lo]) / (s->t_table[hi] - s->t_table[lo]);
            s->r[i] = a + w * (s->r_table[hi * ${NAME}_NR + i] - a);
        }
    }
}

static int ${name}_f(${name}_integrator *s, double t, const double *x, double *dx)
{
    int code;
    ${name}_inputs_at(s, t);
    s->nfev++;
    code = ${name}_dynamics(t, x, s->p, s->r, dx);   /* inputs checked by init */
    /* a stage state that is not finite is the integration overflowing, whatever
       the dynamics then reports (a NaN pivot, say) */
    if (code && !${name}_all_finite(x, ${NAME}_NX)) return ${NAME}_ERR_OUTPUT;
    return code;
}

/* one term of the error norm */
static inline double ${name}_err_term(double e, double a, double b, double rtol, double atol)
{
    const double big = fabs(a) > fabs(b) ? fabs(a) : fabs(b);
    const double w = e / (atol + rtol * big);
    return w * w;
}

/* RMS of e scaled by atol + rtol max(|a|, |b|). Two entries per pass into
   four partial sums: the compiler pairs them into SSE2 lanes (one division
   for two), and the next step waits on this sum, not on a serial one. */
static double ${name}_err_norm(const double *e, const double *a, const double *b,
                               double rtol, double atol)
{
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    int i = 0;
    for (; i + 3 < ${NAME}_NX; i += 4) {
        s0 += ${name}_err_term(e[i], a[i], b[i], rtol, atol);
        s1 += ${name}_err_term(e[i + 1], a[i + 1], b[i + 1], rtol, atol);
        s2 += ${name}_err_term(e[i + 2], a[i + 2], b[i + 2], rtol, atol);
        s3 += ${name}_err_term(e[i + 3], a[i + 3], b[i + 3], rtol, atol);
    }
    for (; i < ${NAME}_NX; i++) s0 += ${name}_err_term(e[i], a[i], b[i], rtol, atol);
    return sqrt(((s0 + s1) + (s2 + s3)) / ${NAME}_NX);
}

int ${name}_integrator_init(${name}_integrator *s, int method, double t0, const double *x0,
                            const double *p, int n_table, const double *t_table,
                            const double *r_table, double rtol, double atol, double dt)
{
    int i;
    if (method < ${NAME}_RK4 || method > ${NAME}_BDF) return ${NAME}_ERR_INPUT;
    if (${NAME}_NR > 0 && n_table <= 0) return ${NAME}_ERR_INPUT;
    if (!${name}_finite(t0, x0, p, ${NAME}_NR ? r_table : 0)) return ${NAME}_ERR_INPUT;
    for (i = 0; i < n_table; i++)              /* the whole input table, once */
        if (!isfinite(t_table[i]) || !${name}_all_finite(r_table + i * ${NAME}_NR, ${NAME}_NR))
            return ${NAME}_ERR_INPUT;
    s->method = method;
    s->t = t0;
    s->t_want = -HUGE_VAL;                   /* until integrate_to: every step keeps a dense output */
    s->rtol = rtol;
    s->atol = atol;
    s->dt = dt;
    s->h = dt;
    s->max_steps = 10000000L;
    s->pause = 0;
    s->jac_age = -1;
    s->w_diag = 0.0;
    s->order = 0;
    s->steps = s->rejected = s->nfev = 0;
    s->p = p;
    s->n_table = n_table;
    s->hold = 1;
    s->t_table = t_table;
    s->r_table = r_table;
    s->have_step = 0;
    for (i = 0; i < ${NAME}_NX; i++) s->x[i] = x0[i];
    if (method == ${NAME}_RK4 && !(dt > 0.0)) return ${NAME}_ERR_INPUT;
    if (method != ${NAME}_RK4 && !(rtol > 0.0 && atol > 0.0)) return ${NAME}_ERR_INPUT;
    return ${name}_f(s, t0, s->x, s->f);
}

/* Hairer & Wanner's starting step for a method whose error estimate has order p */
static int ${name}_first_step(${name}_integrator *s, int p)
{
    double d0 = 0.0, d1 = 0.0, d2 = 0.0, h0, h1, y1[${NAME}_NX], f1[${NAME}_NX];
    int i, code;
    for (i = 0; i < ${NAME}_NX; i++) {
        const double sc = s->atol + s->rtol * fabs(s->x[i]);
        d0 += (s->x[i] / sc) * (s->x[i] / sc);
        d1 += (s->f[i] / sc) * (s->f[i] / sc);
    }
    d0 = sqrt(d0 / ${NAME}_NX);
    d1 = sqrt(d1 / ${NAME}_NX);
    h0 = (d0 < 1e-5 || d1 < 1e-5) ? 1e-6 : 0.01 * d0 / d1;
    for (i = 0; i < ${NAME}_NX; i++) y1[i] = s->x[i] + h0 * s->f[i];
    if ((code = ${name}_f(s, s->t + h0, y1, f1))) return code;
    for (i = 0; i < ${NAME}_NX; i++) {
        const double sc = s->atol + s->rtol * fabs(s->x[i]);
        d2 += ((f1[i] - s->f[i]) / sc) * ((f1[i] - s->f[i]) / sc);
    }
    d2 = sqrt(d2 / ${NAME}_NX) / h0;
    h1 = (d1 <= 1e-15 && d2 <= 1e-15) ? (h0 * 1e-3 > 1e-6 ? h0 * 1e-3 : 1e-6)
                                       : pow(0.01 / (d1 > d2 ? d1 : d2), 1.0 / (p + 1));
    s->h = 100.0 * h0 < h1 ? 100.0 * h0 : h1;
    return ${NAME}_OK;
}

/* bookkeeping of an adaptive step: accepted (dense output already stored) ... */
static int ${name}_accepted(${name}_integrator *s, double t, double h, double fac, int *accepted)
{
    s->t_old = t;
    s->h_old = h;
    s->t = t + h;
    s->have_step = 1;
    s->steps++;
    s->h = h * (fac < 0.2 ? 0.2 : fac);
    *accepted = 1;
    return ${name}_all_finite(s->x, ${NAME}_NX) ? ${NAME}_OK : ${NAME}_ERR_OUTPUT;   /* overflow */
}

/* ... or rejected: retry with a smaller step (a tenth for a non-finite error) */
static int ${name}_rejected(${name}_integrator *s, double h, double err, double fac, int *accepted)
{
    if (!(err == err)) fac = 0.1;
    s->h = h * (fac < 0.2 ? 0.2 : fac);
    s->rejected++;
    *accepted = 0;
    return ${NAME}_OK;
}

/* one RK4 step of size h from (t, x), f = f(t, x) given; new f at the end */
static int ${name}_rk4_step(${name}_integrator *s, double h)
{
    double k2[${NAME}_NX], k3[${NAME}_NX], k4[${NAME}_NX], y[${NAME}_NX];
    int i, code;
    const double t = s->t;
    for (i = 0; i < ${NAME}_NX; i++) y[i] = s->x[i] + 0.5 * h * s->f[i];
    if ((code = ${name}_f(s, t + 0.5 * h, y, k2))) return code;
    for (i = 0; i < ${NAME}_NX; i++) y[i] = s->x[i] + 0.5 * h * k2[i];
    if ((code = ${name}_f(s, t + 0.5 * h, y, k3))) return code;
    for (i = 0; i < ${NAME}_NX; i++) y[i] = s->x[i] + h * k3[i];
    if ((code = ${name}_f(s, t + h, y, k4))) return code;
    for (i = 0; i < ${NAME}_NX; i++)
        s->x[i] += h / 6.0 * (s->f[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
    s->t = t + h;
    s->steps++;
    if (!${name}_all_finite(s->x, ${NAME}_NX)) return ${NAME}_ERR_OUTPUT;   /* overflow */
    return ${name}_f(s, s->t, s->x, s->f);
}

/* one Dormand-Prince 5(4) attempt; accepted steps update x, f, t and the dense output */
static int ${name}_dopri5_step(${name}_integrator *s, int *accepted)
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
    double k2[${NAME}_NX], k3[${NAME}_NX], k4[${NAME}_NX], k5[${NAME}_NX], k6[${NAME}_NX],
        k7[${NAME}_NX], y[${NAME}_NX], ynew[${NAME}_NX], e[${NAME}_NX];
    const double h = s->h, t = s->t, *x = s->x, *k1 = s->f;
    double err, fac;
    int i, code;
    for (i = 0; i < ${NAME}_NX; i++) y[i] = x[i] + h * a21 * k1[i];
    if ((code = ${name}_f(s, t + h / 5.0, y, k2))) return code;
    for (i = 0; i < ${NAME}_NX; i++) y[i] = x[i] + h * (a31 * k1[i] + a32 * k2[i]);
    if ((code = ${name}_f(s, t + 0.3 * h, y, k3))) return code;
    for (i = 0; i < ${NAME}_NX; i++) y[i] = x[i] + h * (a41 * k1[i] + a42 * k2[i] + a43 * k3[i]);
    if ((code = ${name}_f(s, t + 0.8 * h, y, k4))) return code;
    for (i = 0; i < ${NAME}_NX; i++)
        y[i] = x[i] + h * (a51 * k1[i] + a52 * k2[i] + a53 * k3[i] + a54 * k4[i]);
    if ((code = ${name}_f(s, t + h * 8.0 / 9.0, y, k5))) return code;
    for (i = 0; i < ${NAME}_NX; i++)
        y[i] = x[i] + h * (a61 * k1[i] + a62 * k2[i] + a63 * k3[i] + a64 * k4[i] + a65 * k5[i]);
    if ((code = ${name}_f(s, t + h, y, k6))) return code;
    for (i = 0; i < ${NAME}_NX; i++)
        ynew[i] = x[i] + h * (a71 * k1[i] + a73 * k3[i] + a74 * k4[i] + a75 * k5[i] + a76 * k6[i]);
    if ((code = ${name}_f(s, t + h, ynew, k7))) return code;
    for (i = 0; i < ${NAME}_NX; i++)
        e[i] = h * (e1 * k1[i] + e3 * k3[i] + e4 * k4[i] + e5 * k5[i] + e6 * k6[i] + e7 * k7[i]);
    err = ${name}_err_norm(e, x, ynew, s->rtol, s->atol);
    fac = err > 0.0 ? 0.9 * pow(err, -0.2) : 10.0;
    if (fac > 10.0) fac = 10.0;
    if (!(err <= 1.0)) return ${name}_rejected(s, h, err, fac, accepted);   /* also NaN */
    if (t + h >= s->t_want)                    /* Hairer's dense output coefficients, for */
        for (i = 0; i < ${NAME}_NX; i++) {     /* the step that reaches the requested time */
            const double dy = ynew[i] - x[i], bspl = h * k1[i] - dy;
            s->cont[i] = x[i];
            s->cont[${NAME}_NX + i] = dy;
            s->cont[2 * ${NAME}_NX + i] = bspl;
            s->cont[3 * ${NAME}_NX + i] = dy - h * k7[i] - bspl;
            s->cont[4 * ${NAME}_NX + i] = h * (d1 * k1[i] + d3 * k3[i] + d4 * k4[i] + d5 * k5[i]
                                               + d6 * k6[i] + d7 * k7[i]);
        }
    for (i = 0; i < ${NAME}_NX; i++) {
        s->x[i] = ynew[i];
        s->f[i] = k7[i];                       /* first same as last */
    }
    return ${name}_accepted(s, t, h, fac, accepted);
}
