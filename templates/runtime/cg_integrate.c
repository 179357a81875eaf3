/*
 * cg_integrate.c -- the integrators' API: the state's layout, cg_integrator_init,
 * and cg_integrate_to, which steps with the chosen method to each output time.
 */
#include "cg_internal.h"

/* the doubles after the struct: r, x, f, cont, jac, ft, w, D (then the pivots) */
static size_t cg_doubles(const cg_model *m)
{
    const size_t nx = (size_t)m->nx;
    return (size_t)m->nr + 1 + nx * (1 + 1 + 5 + 1 + 8) + 2 * nx * nx;
}

CG_API size_t cg_integrator_size(const cg_model *m)
{
    CG_FIX_MODEL(m);
    return sizeof(cg_integrator) + cg_doubles(m) * sizeof(double)
           + (size_t)CG_LEN(m->nx) * sizeof(int);
}

CG_API int cg_integrator_init(cg_integrator *s, const cg_model *m, int method, double t0,
                       const double *x0, const double *p, int n_table, const double *t_table,
                       const double *r_table, double rtol, double atol, double dt)
{
    const int nx = CG_MODEL(m)->nx, nr = CG_MODEL(m)->nr;
    double *d = (double *)(s + 1);   /* sizeof(cg_integrator) is a multiple of its alignment */
    int i;
    s->m = m;
    s->nx = nx;
    s->r = d;
    s->x = s->r + nr + 1;
    s->f = s->x + nx;
    s->cont = s->f + nx;
    s->jac = s->cont + 5 * nx;
    s->ft = s->jac + nx * nx;
    s->w = s->ft + nx;
    s->D = s->w + nx * nx;
    s->piv = (int *)(s->D + 8 * nx);
    if (method < 0 || method >= CG_N_METHODS) return CG_ERR_INPUT;
    if (nr > 0 && n_table <= 0) return CG_ERR_INPUT;
    if (!cg_finite_inputs(m, t0, x0, p, nr ? r_table : 0)) return CG_ERR_INPUT;
    for (i = 0; i < n_table; i++)              /* the whole input table, once */
        if (!isfinite(t_table[i]) || !cg_all_finite(r_table + i * nr, nr))
            return CG_ERR_INPUT;
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
    s->crate = 1.0;
    s->steps = s->rejected = s->nfev = 0;
    s->p = p;
    s->n_table = n_table;
    s->hold = 1;
    s->t_table = t_table;
    s->r_table = r_table;
    s->have_step = 0;
    s->rank_seen = 0;
    s->ratio_low = 1.0;
    s->t_low = t0;
    for (i = 0; i < nx; i++) s->x[i] = x0[i];
    if ((method == CG_RK4 || method == CG_ALI3P) && !(dt > 0.0)) return CG_ERR_INPUT;
    if (method != CG_RK4 && !(rtol > 0.0 && atol > 0.0)) return CG_ERR_INPUT;
    if (method == CG_ALI3P) {
        if (!cg_ali3p_applies(CG_MODEL(m))) return CG_ERR_METHOD;
        for (i = 0; i < nx; i++) s->ft[i] = 0.0;         /* the multipliers */
    }
    return cg_f(s, t0, s->x, s->f);
}


CG_API int cg_integrate_to(cg_integrator *s, double t_out, double *x_out)
{
    const int nx = CG_NX(s);
    int i, code;
    /* steps + rejected at which this call pauses (never without a budget) */
    const long pause_at = s->pause > 0 ? s->steps + s->rejected + s->pause : -1;
    if (!(t_out == t_out)) return CG_ERR_INPUT;
    if (t_out < (s->have_step ? s->t_old : s->t)) return CG_ERR_INPUT;   /* forward only */
    if (s->method == CG_RK4 || s->method == CG_ALI3P) {         /* fixed steps */
        while (t_out - s->t > 1e-12 * (fabs(t_out) > 1.0 ? fabs(t_out) : 1.0)) {
            double h = s->dt;
            /* land on t_out, stretching the step rather than leaving a sliver after it
               (ali3p divides by h^2) */
            if (s->t + h > t_out - 1e-6 * s->dt) h = t_out - s->t;
            if (s->steps >= s->max_steps) return CG_ERR_STEPS;
            if (s->steps == pause_at) return CG_PAUSED;
            code = s->method == CG_RK4 ? cg_rk4_step(s, h) : cg_ali3p_step(s, h);
            if (code) return code;
        }
        for (i = 0; i < nx; i++) x_out[i] = s->x[i];
        return CG_OK;
    }
    if (t_out == s->t || (!s->have_step && t_out <= s->t)) {
        for (i = 0; i < nx; i++) x_out[i] = s->x[i];    /* at the current time */
        return CG_OK;
    }
    if (!(s->h > 0.0)) {
        if (s->method == CG_DOPRI5 || s->method == CG_BDF) {
            if ((code = cg_first_step(s, s->method == CG_BDF ? 1 : 4))) return code;
        } else {
            s->h = 1e-6 * (t_out - s->t > 1.0 ? t_out - s->t : 1.0);
        }
    }
    s->t_want = t_out;                 /* only the step that reaches it needs a dense output */
    while (t_out > s->t) {
        int accepted;
        if (s->steps + s->rejected >= s->max_steps) return CG_ERR_STEPS;
        if (s->steps + s->rejected == pause_at) return CG_PAUSED;
        if (s->h < 1e-14 * (fabs(s->t) > 1.0 ? fabs(s->t) : 1.0)) return CG_ERR_STEPSIZE;
        code = s->method == CG_DOPRI5 ? cg_dopri5_step(s, &accepted)
               : s->method == CG_BDF  ? cg_bdf_step(s, &accepted)
               : cg_implicit_step(s, s->method == CG_ROSENBROCK ? &cg_ros4 : &cg_ros34pw2,
                                  &accepted);
        if (code) return code;
    }
    if (s->method == CG_BDF) cg_bdf_dense(s, t_out, x_out);
    else {                             /* dense output inside the last step [t_old, t] */
        const double th = (t_out - s->t_old) / s->h_old, th1 = 1.0 - th;
        for (i = 0; i < nx; i++)
            x_out[i] = s->cont[i] + th * (s->cont[nx + i] + th1 * (s->cont[2 * nx + i]
                       + th * (s->cont[3 * nx + i] + th1 * s->cont[4 * nx + i])));
    }
    /* near overflow the interpolant can overflow between finite ends */
    return cg_all_finite(x_out, nx) ? CG_OK : CG_ERR_OUTPUT;
}

CG_API void cg_integrator_stats(const cg_integrator *s, long *steps, long *rejected, long *nfev,
                         double *t)
{
    *steps = s->steps;
    *rejected = s->rejected;
    *nfev = s->nfev;
    *t = s->t;
}

CG_API double cg_integrator_nearest_singular(const cg_integrator *s, double *t)
{
    *t = s->t_low;
    return s->method == CG_ALI3P ? 1.0 : s->ratio_low;   /* ali3p keeps its own branch */
}

CG_API void cg_integrator_set(cg_integrator *s, long max_steps, int hold, long pause)
{
    s->max_steps = max_steps;
    s->hold = hold;
    s->pause = pause;
}
