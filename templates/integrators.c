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

/* J = df/dx (row-major, into s->jac) and df/dt (s->ft) at the current (t, x),
   by forward differences from f = s->f: nx + 1 RHS calls */
static int ${name}_jacobian(${name}_integrator *s)
{
    double xp[${NAME}_NX], fp[${NAME}_NX];
    const double t = s->t, *x = s->x, *f0 = s->f;
    double dt;
    int i, j, code;
    for (j = 0; j < ${NAME}_NX; j++) {
        const double dx = sqrt(2.2e-16) * (fabs(x[j]) > 1.0 ? fabs(x[j]) : 1.0);
        for (i = 0; i < ${NAME}_NX; i++) xp[i] = x[i];
        xp[j] += dx;
        if ((code = ${name}_f(s, t, xp, fp))) return code;
        for (i = 0; i < ${NAME}_NX; i++) s->jac[i * ${NAME}_NX + j] = (fp[i] - f0[i]) / dx;
    }
    dt = sqrt(2.2e-16) * (fabs(t) > 1.0 ? fabs(t) : 1.0);
    if ((code = ${name}_f(s, t + dt, x, fp))) return code;
    for (i = 0; i < ${NAME}_NX; i++) s->ft[i] = (fp[i] - f0[i]) / dt;
    s->jac_age = 0;
    return ${NAME}_OK;
}

/* W = diag I - J, LU-factored into s->w, s->piv and kept with its diagonal
   (s->w_diag; 0 = none) while J and the diagonal stay; 1 when it is singular */
static int ${name}_lu_w(${name}_integrator *s, double diag)
{
    int i;
    for (i = 0; i < ${NAME}_NX * ${NAME}_NX; i++) s->w[i] = -s->jac[i];
    for (i = 0; i < ${NAME}_NX; i++) s->w[i * ${NAME}_NX + i] += diag;
    s->w_diag = ${name}_lu_decompose(${NAME}_NX, s->w, s->piv) ? 0.0 : diag;
    return s->w_diag == 0.0;
}

/* the Rosenbrock methods' W = I / (gam h) - J; when it is singular the
   attempt is rejected with half the step (and a new J to come) */
static int ${name}_factor_w(${name}_integrator *s, double gam, int *accepted)
{
    if (!${name}_lu_w(s, 1.0 / (gam * s->h))) return 0;
    s->h *= 0.5;
    s->rejected++;
    s->jac_age = -1;
    *accepted = 0;
    return 1;
}

/* a linearly implicit attempt accepted: f at the new state (which the next
   step starts from) and a cubic Hermite dense output between (x, f) and it */
static int ${name}_implicit_accepted(${name}_integrator *s, const double *ynew, double fac,
                                     int *accepted)
{
    double f1[${NAME}_NX];
    const double h = s->h, t = s->t, *x = s->x, *f0 = s->f;
    int i, code;
    if ((code = ${name}_f(s, t + h, ynew, f1))) return code;
    for (i = 0; i < ${NAME}_NX; i++) {
        const double dy = ynew[i] - x[i];
        s->cont[i] = x[i];
        s->cont[${NAME}_NX + i] = dy;
        s->cont[2 * ${NAME}_NX + i] = h * f0[i] - dy;
        s->cont[3 * ${NAME}_NX + i] = dy - h * f1[i] - (h * f0[i] - dy);
        s->cont[4 * ${NAME}_NX + i] = 0.0;
        s->x[i] = ynew[i];
        s->f[i] = f1[i];
    }
    return ${name}_accepted(s, t, h, fac, accepted);
}

/* the step a singular W left: an error once it is below the resolution of t */
static int ${name}_after_singular(const ${name}_integrator *s)
{
    return s->h > 1e-14 * (fabs(s->t) > 1.0 ? fabs(s->t) : 1.0) ? ${NAME}_OK : ${NAME}_ERR_JACOBIAN;
}

/* A four-stage linearly implicit method in the W-form of Hairer & Wanner
   (IV.7.25): W g_i = f(t + t_i h, x + sum_j a_ij g_j) + sum_j c_ij g_j / h
   + d_i h df/dt with W = I / (gam h) - J; x_new = x + sum_i m_i g_i, error
   estimate sum_i e_i g_i. */
typedef struct {
    double gam, a[4][3], c[4][3], t[4], d[4], m[4], e[4];
    double err_exp;        /* -1 / (order of the estimate + 1) */
    int reuse_f4;          /* the last stage evaluates f where the third did */
    int keep_j;            /* a W-method: J kept over steps, and W with it while h stays */
} ${name}_tableau;

/* Rosenbrock 4(3): the Kaps-Rentrop form with Shampine's coefficients
   (order 4, an embedded order-3 estimate); it needs the exact J for its
   order, so a new J every attempt */
static const ${name}_tableau ${name}_ros4 = {
    0.5,
    {{0, 0, 0}, {2.0, 0, 0}, {48.0 / 25.0, 6.0 / 25.0, 0}, {48.0 / 25.0, 6.0 / 25.0, 0}},
    {{0, 0, 0}, {-8.0, 0, 0}, {372.0 / 25.0, 12.0 / 5.0, 0},
     {-112.0 / 125.0, -54.0 / 125.0, -2.0 / 5.0}},
    {0, 1.0, 3.0 / 5.0, 3.0 / 5.0}, {0.5, -1.5, 121.0 / 50.0, 29.0 / 250.0},
    {19.0 / 9.0, 0.5, 25.0 / 108.0, 125.0 / 108.0}, {17.0 / 54.0, 7.0 / 36.0, 0, 125.0 / 108.0},
    -0.25, 1, 0};

/* ROS34PW2 of Rang & Angermann (2005): order 3 with an embedded order-2
   estimate, L-stable, stiffly accurate, and a W-method: its order holds with
   any matrix in place of J. The paper's (alpha, gamma, b, b^) transformed to
   the W-form in 40-digit arithmetic, rounded. */
static const ${name}_tableau ${name}_ros34pw2 = {
    0.435866521508459,
    {{0, 0, 0}, {2.0, 0, 0}, {1.4192173174557647, -0.25923221167296971, 0},
     {4.1847604823191607, -0.28519201735549591, 2.2942803602790417}},
    {{0, 0, 0}, {-4.5885607205580835, 0, 0}, {-4.1847604823191607, 0.28519201735549591, 0},
     {-6.3681792001283578, -6.7956209444668362, 2.8700986043310561}},
    {0, 0.87173304301691801, 0.73157995778885238, 1.0},
    {0.435866521508459, -0.43586652150845901, -0.41333337623388649, 0},
    {4.1847604823191601, -0.28519201735549587, 2.2942803602790414, 1.0},
    {0.27774994764796811, -1.403239895175999, 1.7726301276675507, 0.5},
    -1.0 / 3.0, 0, 1};

/* one attempt of a linearly implicit method; the W-method keeps J (and
   df/dt) until a step is rejected or ${NAME}_JAC_REUSE steps have passed,
   and W's LU while h stays: 3 RHS calls per attempt, f at the new state
   on acceptance, a cubic Hermite dense output */
static int ${name}_implicit_step(${name}_integrator *s, const ${name}_tableau *tb, int *accepted)
{
    double g[4][${NAME}_NX], fy[${NAME}_NX], y[${NAME}_NX], ynew[${NAME}_NX], e[${NAME}_NX];
    const double h = s->h, t = s->t, *x = s->x, *ft = s->ft;
    double err, fac;
    int i, j, k, code;
    if (!tb->keep_j || s->jac_age < 0 || s->jac_age >= ${NAME}_JAC_REUSE) {
        if ((code = ${name}_jacobian(s))) return code;
        s->w_diag = 0.0;
    }
    if (s->w_diag != 1.0 / (tb->gam * h) && ${name}_factor_w(s, tb->gam, accepted))
        return ${name}_after_singular(s);
    for (k = 0; k < 4; k++) {
        if (k > 0 && !(k == 3 && tb->reuse_f4)) {
            for (i = 0; i < ${NAME}_NX; i++) {
                double v = x[i];
                for (j = 0; j < k; j++) v += tb->a[k][j] * g[j][i];
                y[i] = v;
            }
            if ((code = ${name}_f(s, t + tb->t[k] * h, y, fy))) return code;
        }
        for (i = 0; i < ${NAME}_NX; i++) {
            double v = (k == 0 ? s->f[i] : fy[i]) + h * tb->d[k] * ft[i], w = 0.0;
            for (j = 0; j < k; j++) w += tb->c[k][j] * g[j][i];
            g[k][i] = v + w / h;
        }
        ${name}_lu_backsolve(${NAME}_NX, s->w, s->piv, g[k]);
    }
    for (i = 0; i < ${NAME}_NX; i++) {
        ynew[i] = x[i] + tb->m[0] * g[0][i] + tb->m[1] * g[1][i] + tb->m[2] * g[2][i]
                  + tb->m[3] * g[3][i];
        e[i] = tb->e[0] * g[0][i] + tb->e[1] * g[1][i] + tb->e[2] * g[2][i] + tb->e[3] * g[3][i];
    }
    err = ${name}_err_norm(e, x, ynew, s->rtol, s->atol);
    fac = err > 0.0 ? 0.9 * pow(err, tb->err_exp) : 5.0;
    if (fac > 5.0) fac = 5.0;
    if (!(err <= 1.0)) {
        if (s->jac_age > 0) s->jac_age = -1;   /* perhaps the kept J: a new one for the retry */
        return ${name}_rejected(s, h, err, fac, accepted);
    }
    s->jac_age++;
    /* a W-method's step that would grow by less than 20 % stays, and so does
       W's LU (the rule of Hairer & Wanner's RADAU5) */
    if (tb->keep_j && fac >= 1.0 && fac <= 1.2) fac = 1.0;
    return ${name}_implicit_accepted(s, ynew, fac, accepted);
}

/* ---- variable-order BDF (NDF) ----------------------------------------------
   The quasi-constant step size numerical differentiation formulas of
   Shampine & Reichelt (MATLAB's ode15s), orders 1 to 5, in the difference
   form of SciPy's BDF: s->D holds the backward differences of the solution,
   rescaled whenever h changes; a simplified Newton iteration on
   (I - c J) dy = c f - psi - d with c = h / alpha_k; J (by differences) is
   kept until the Newton iteration fails to converge with it, and W's LU
   while h and the order stay. The order moves by one after k + 1 steps of
   equal size, to the neighbour whose error estimate allows the larger step. */
#define ${NAME}_BDF_MAX_ORDER 5
#define ${NAME}_BDF_NEWTON 4

/* kappa_k (Shampine & Reichelt's NDF), gamma_k = sum_{i<=k} 1/i,
   alpha_k = (1 - kappa_k) gamma_k and the error constants
   kappa_k gamma_k + 1 / (k + 1), for k = 0..5 */
#define ${NAME}_G1 1.0
#define ${NAME}_G2 (1.0 + 1.0 / 2.0)
#define ${NAME}_G3 (${NAME}_G2 + 1.0 / 3.0)
#define ${NAME}_G4 (${NAME}_G3 + 1.0 / 4.0)
#define ${NAME}_G5 (${NAME}_G4 + 1.0 / 5.0)
static const double ${name}_bdf_gamma[6] = {0.0, ${NAME}_G1, ${NAME}_G2, ${NAME}_G3, ${NAME}_G4,
                                            ${NAME}_G5};
static const double ${name}_bdf_alpha[6] = {
    0.0, (1.0 + 0.1850) * ${NAME}_G1, (1.0 + 1.0 / 9.0) * ${NAME}_G2, (1.0 + 0.0823) * ${NAME}_G3,
    (1.0 + 0.0415) * ${NAME}_G4, ${NAME}_G5};
static const double ${name}_bdf_error_const[6] = {
    1.0, -0.1850 * ${NAME}_G1 + 1.0 / 2.0, -1.0 / 9.0 * ${NAME}_G2 + 1.0 / 3.0,
    -0.0823 * ${NAME}_G3 + 1.0 / 4.0, -0.0415 * ${NAME}_G4 + 1.0 / 5.0, 1.0 / 6.0};

/* R(order, factor): the matrix that rescales backward differences to the step h * factor */
static void ${name}_bdf_R(int order, double factor, double R[6][6])
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
static void ${name}_bdf_rescale(${name}_integrator *s, double factor)
{
    double R[6][6], U[6][6], RU[6][6], old[6];
    const int order = s->order;
    int i, j, k, n;
    if (factor == 1.0) return;
    ${name}_bdf_R(order, factor, R);
    ${name}_bdf_R(order, 1.0, U);
    for (i = 0; i <= order; i++)
        for (j = 1; j <= order; j++) {
            double v = 0.0;
            for (k = 0; k <= j; k++) v += R[i][k] * U[k][j];
            RU[i][j] = v;
        }
    for (n = 0; n < ${NAME}_NX; n++) {
        for (k = 0; k <= order; k++) old[k] = s->D[k * ${NAME}_NX + n];
        for (j = 1; j <= order; j++) {
            double v = 0.0;
            for (k = 0; k <= order; k++) v += RU[k][j] * old[k];
            s->D[j * ${NAME}_NX + n] = v;
        }
    }
}

/* a new step size h * factor (and so a new W to come) */
static void ${name}_bdf_new_h(${name}_integrator *s, double factor)
{
    ${name}_bdf_rescale(s, factor);
    s->h *= factor;
    s->n_equal = 0;
}

/* one BDF attempt */
static int ${name}_bdf_step(${name}_integrator *s, int *accepted)
{
    double ypred[${NAME}_NX], psi[${NAME}_NX], y[${NAME}_NX], d[${NAME}_NX], dy[${NAME}_NX],
        f[${NAME}_NX], err[${NAME}_NX];
    const double rtol = s->rtol, atol = s->atol, *D = s->D;
    const double newton_tol = fmax(10.0 * 2.220446049250313e-16 / rtol, fmin(0.03, sqrt(rtol)));
    double h, t_new, c, alpha, dy_norm, dy_norm_old = -1.0, rate = 0.0, safety, error_norm,
        factor;
    int i, k, order, code, converged = 0, n_iter = 0;
    if (s->order == 0) {                       /* the first step: order 1 from (x, h f) */
        s->order = 1;
        s->n_equal = 0;
        for (i = 0; i < ${NAME}_NX; i++) {
            s->D[i] = s->x[i];
            s->D[${NAME}_NX + i] = s->h * s->f[i];
        }
    }
    order = s->order;
    h = s->h;
    t_new = s->t + h;
    alpha = ${name}_bdf_alpha[order];
    c = h / alpha;
    for (i = 0; i < ${NAME}_NX; i++) {
        double v = 0.0, w = 0.0;
        for (k = 0; k <= order; k++) v += D[k * ${NAME}_NX + i];
        for (k = 1; k <= order; k++) w += D[k * ${NAME}_NX + i] * ${name}_bdf_gamma[k];
        ypred[i] = v;
        psi[i] = w / alpha;
        y[i] = v;
        d[i] = 0.0;
    }
    if (s->jac_age < 0) {                      /* the first J, at (t, x) */
        if ((code = ${name}_jacobian(s))) return code;
        s->w_diag = 0.0;
    }
    if (s->w_diag != 1.0 / c && ${name}_lu_w(s, 1.0 / c)) {
        ${name}_bdf_new_h(s, 0.5);             /* singular: a smaller step */
        s->rejected++;
        *accepted = 0;
        return ${name}_after_singular(s);
    }
    /* W = I / c - J, so W dy = f - (psi + d) / c is (I - c J) dy = c f - psi - d */
    for (k = 0; k < ${NAME}_BDF_NEWTON; k++) {
        code = ${name}_f(s, t_new, y, f);
        /* an iterate where f is not finite: no convergence (a smaller step),
           unless the prediction itself overflowed */
        if (code == ${NAME}_ERR_OUTPUT && ${name}_all_finite(ypred, ${NAME}_NX)) break;
        if (code) return code;
        for (i = 0; i < ${NAME}_NX; i++) dy[i] = f[i] - (psi[i] + d[i]) / c;
        ${name}_lu_backsolve(${NAME}_NX, s->w, s->piv, dy);
        dy_norm = ${name}_err_norm(dy, ypred, ypred, rtol, atol);
        n_iter = k + 1;
        if (dy_norm_old >= 0.0) rate = dy_norm / dy_norm_old;
        if (dy_norm_old >= 0.0 && (rate >= 1.0 || pow(rate, ${NAME}_BDF_NEWTON - k) / (1.0 - rate)
                                                     * dy_norm > newton_tol))
            break;                             /* diverging, or too slow to make it */
        for (i = 0; i < ${NAME}_NX; i++) {
            y[i] += dy[i];
            d[i] += dy[i];
        }
        if (dy_norm == 0.0 || (dy_norm_old >= 0.0 && rate / (1.0 - rate) * dy_norm < newton_tol)) {
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
            if ((code = ${name}_f(s, s->t, s->x, s->f))) return code;
            if ((code = ${name}_jacobian(s))) return code;
            s->w_diag = 0.0;
        } else {
            ${name}_bdf_new_h(s, 0.5);
        }
        return ${NAME}_OK;
    }
    safety = 0.9 * (2 * ${NAME}_BDF_NEWTON + 1) / (2 * ${NAME}_BDF_NEWTON + n_iter);
    for (i = 0; i < ${NAME}_NX; i++) err[i] = ${name}_bdf_error_const[order] * d[i];
    error_norm = ${name}_err_norm(err, y, y, rtol, atol);
    if (!(error_norm <= 1.0)) {
        factor = error_norm == error_norm ? fmax(0.2, safety * pow(error_norm, -1.0 / (order + 1)))
                                          : 0.1;
        ${name}_bdf_new_h(s, factor);
        s->rejected++;
        return ${NAME}_OK;
    }
    /* accepted: the new differences (D[order + 2] for the order test) */
    s->t_old = s->t;
    s->h_old = h;
    s->t = t_new;
    s->have_step = 1;
    s->steps++;
    s->n_equal++;
    if (s->jac_age == 0) s->jac_age = 1;       /* J is now from an earlier step */
    for (i = 0; i < ${NAME}_NX; i++) {
        s->x[i] = y[i];
        s->D[(order + 2) * ${NAME}_NX + i] = d[i] - s->D[(order + 1) * ${NAME}_NX + i];
        s->D[(order + 1) * ${NAME}_NX + i] = d[i];
        for (k = order; k >= 0; k--) s->D[k * ${NAME}_NX + i] += s->D[(k + 1) * ${NAME}_NX + i];
    }
    *accepted = 1;
    if (!${name}_all_finite(s->x, ${NAME}_NX)) return ${NAME}_ERR_OUTPUT;   /* overflow */
    if (s->n_equal >= order + 1) {             /* order and step: the largest allowed step */
        double norms[3], best = 0.0;
        int j, pick = 1;
        norms[1] = error_norm;
        norms[0] = norms[2] = HUGE_VAL;
        if (order > 1) {
            for (i = 0; i < ${NAME}_NX; i++)
                err[i] = ${name}_bdf_error_const[order - 1] * s->D[order * ${NAME}_NX + i];
            norms[0] = ${name}_err_norm(err, y, y, rtol, atol);
        }
        if (order < ${NAME}_BDF_MAX_ORDER) {
            for (i = 0; i < ${NAME}_NX; i++)
                err[i] = ${name}_bdf_error_const[order + 1] * s->D[(order + 2) * ${NAME}_NX + i];
            norms[2] = ${name}_err_norm(err, y, y, rtol, atol);
        }
        for (j = 0; j < 3; j++) {
            const double fj = norms[j] == HUGE_VAL ? 0.0
                              : norms[j] > 0.0 ? pow(norms[j], -1.0 / (order + j)) : HUGE_VAL;
            if (fj > best) { best = fj; pick = j; }
        }
        s->order = order + pick - 1;
        ${name}_bdf_new_h(s, fmin(10.0, safety * best));
    }
    return ${NAME}_OK;
}

/* x(t_out) for t_out in the last step, from the interpolating polynomial in D */
static void ${name}_bdf_dense(const ${name}_integrator *s, double t_out, double *x_out)
{
    double p[${NAME}_BDF_MAX_ORDER];
    int i, j;
    for (j = 0; j < s->order; j++)
        p[j] = (j ? p[j - 1] : 1.0) * (t_out - (s->t - s->h * j)) / (s->h * (1 + j));
    for (i = 0; i < ${NAME}_NX; i++) {
        double v = s->D[i];
        for (j = 0; j < s->order; j++) v += s->D[(j + 1) * ${NAME}_NX + i] * p[j];
        x_out[i] = v;
    }
}

int ${name}_integrate_to(${name}_integrator *s, double t_out, double *x_out)
{
    int i, code;
    /* steps + rejected at which this call pauses (never without a budget) */
    const long pause_at = s->pause > 0 ? s->steps + s->rejected + s->pause : -1;
    if (!(t_out == t_out)) return ${NAME}_ERR_INPUT;
    if (t_out < (s->have_step ? s->t_old : s->t)) return ${NAME}_ERR_INPUT;   /* forward only */
    if (s->method == ${NAME}_RK4) {
        while (t_out - s->t > 1e-12 * (fabs(t_out) > 1.0 ? fabs(t_out) : 1.0)) {
            double h = s->dt;
            if (s->t + h > t_out) h = t_out - s->t;      /* land on t_out */
            if (s->steps >= s->max_steps) return ${NAME}_ERR_STEPS;
            if (s->steps == pause_at) return ${NAME}_PAUSED;
            if ((code = ${name}_rk4_step(s, h))) return code;
        }
        for (i = 0; i < ${NAME}_NX; i++) x_out[i] = s->x[i];
        return ${NAME}_OK;
    }
    if (t_out == s->t || (!s->have_step && t_out <= s->t)) {
        for (i = 0; i < ${NAME}_NX; i++) x_out[i] = s->x[i];    /* at the current time */
        return ${NAME}_OK;
    }
    if (!(s->h > 0.0)) {
        if (s->method == ${NAME}_DOPRI5 || s->method == ${NAME}_BDF) {
            if ((code = ${name}_first_step(s, s->method == ${NAME}_BDF ? 1 : 4))) return code;
        } else {
            s->h = 1e-6 * (t_out - s->t > 1.0 ? t_out - s->t : 1.0);
        }
    }
    s->t_want = t_out;                 /* only the step that reaches it needs a dense output */
    while (t_out > s->t) {
        int accepted;
        if (s->steps + s->rejected >= s->max_steps) return ${NAME}_ERR_STEPS;
        if (s->steps + s->rejected == pause_at) return ${NAME}_PAUSED;
        if (s->h < 1e-14 * (fabs(s->t) > 1.0 ? fabs(s->t) : 1.0)) return ${NAME}_ERR_STEPSIZE;
        code = s->method == ${NAME}_DOPRI5 ? ${name}_dopri5_step(s, &accepted)
               : s->method == ${NAME}_BDF  ? ${name}_bdf_step(s, &accepted)
               : ${name}_implicit_step(s, s->method == ${NAME}_ROSENBROCK ? &${name}_ros4
                                                                          : &${name}_ros34pw2,
                                        &accepted);
        if (code) return code;
    }
    if (s->method == ${NAME}_BDF) ${name}_bdf_dense(s, t_out, x_out);
    else {                             /* dense output inside the last step [t_old, t] */
        const double th = (t_out - s->t_old) / s->h_old, th1 = 1.0 - th;
        for (i = 0; i < ${NAME}_NX; i++)
            x_out[i] = s->cont[i] + th * (s->cont[${NAME}_NX + i] + th1 * (s->cont[2 * ${NAME}_NX + i]
                       + th * (s->cont[3 * ${NAME}_NX + i] + th1 * s->cont[4 * ${NAME}_NX + i])));
    }
    /* near overflow the interpolant can overflow between finite ends */
    return ${name}_all_finite(x_out, ${NAME}_NX) ? ${NAME}_OK : ${NAME}_ERR_OUTPUT;
}

size_t ${name}_integrator_size(void) { return sizeof(${name}_integrator); }

void ${name}_integrator_stats(const ${name}_integrator *s, long *steps, long *rejected, long *nfev,
                              double *t)
{
    *steps = s->steps;
    *rejected = s->rejected;
    *nfev = s->nfev;
    *t = s->t;
}

void ${name}_integrator_set(${name}_integrator *s, long max_steps, int hold, long pause)
{
    s->max_steps = max_steps;
    s->hold = hold;
    s->pause = pause;
}

/* ${name}_rhs with the signature numbalsoda (and other C solvers) take:
   data = [p (${NAME}_NP values), r (${NAME}_NR values)]. On an error code of
   ${name}_rhs, du is filled with NaN so that the calling solver stops. */
void ${name}_rhs_cb(double t, double *u, double *du, void *data)
{
    const double *p = (const double *)data;
    int i;
    if (${name}_rhs(t, u, p, p + ${NAME}_NP, du) != ${NAME}_OK)
        for (i = 0; i < ${NAME}_NX; i++) du[i] = NAN;
}
