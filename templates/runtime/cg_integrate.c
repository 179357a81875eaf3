/*
 * cg_integrate.c -- the integrators' API: the table of methods, the state's layout,
 * cg_integrator_init, and cg_integrate_to, which steps with the chosen method to
 * each output time. A method is its line in cg_model.h's CG_METHOD_LIST (name,
 * properties, the flags it needs) and its stepper here; nothing else names it.
 */
#include "cg_internal.h"

/* the methods' steppers, by enum cg_method: step, dense output, starting rule */
static const cg_stepper cg_steppers[CG_N_METHODS] = {
    [CG_RK4] = {cg_rk4_step, 0, 0},
    [CG_DOPRI5] = {cg_dopri5_step, cg_cont_dense, 4},
    [CG_ROSENBROCK] = {cg_ros4_step, cg_cont_dense, 0},
    [CG_ROSW] = {cg_rosw_step, cg_cont_dense, 0},
    [CG_BDF] = {cg_bdf_step, cg_bdf_dense, 1},
    [CG_ALI3P] = {cg_ali3p_step, 0, 0},
};

#define CG_NAME_CASE(symbol, value, name, properties, needs) case symbol: return name;
#define CG_PROPERTIES_CASE(symbol, value, name, properties, needs) \
    case symbol: return properties;
#define CG_NEEDS_CASE(symbol, value, name, properties, needs) case symbol: return needs;
const char *cg_method_name(int method)
{
    switch (method) {
    CG_METHOD_LIST(CG_NAME_CASE)
    default: return 0;
    }
}

int cg_method_properties(int method)
{
    switch (method) {
    CG_METHOD_LIST(CG_PROPERTIES_CASE)
    default: return -1;
    }
}

/* the descriptor flags a method needs */
static int cg_method_needs(int method)
{
    switch (method) {
    CG_METHOD_LIST(CG_NEEDS_CASE)
    default: return 0;
    }
}
#undef CG_NAME_CASE
#undef CG_PROPERTIES_CASE
#undef CG_NEEDS_CASE

/* the doubles after the struct: r, x, f, cont, jac, ft, w, D, x0, f0, jr, law_c, ev_g,
   ev_gb, ev_gm, ev_x (then the ints: the pivots, ev_index, ev_dir, ev_term, ev_sign) */
static size_t cg_doubles(const cg_model *m)
{
    const size_t nx = (size_t)m->nx, ne = (size_t)m->ne;
    return 2 * ((size_t)m->nr + 1) + nx * (1 + 1 + 5 + 1 + 8 + 3) + 2 * nx * nx + nx * m->nr
           + 3 * ne;
}

CG_API size_t cg_integrator_size(const cg_model *m)
{
    CG_FIX_MODEL(m);
    return sizeof(cg_integrator) + cg_doubles(m) * sizeof(double)
           + (size_t)(CG_LEN(m->nx) + 4 * m->ne) * sizeof(int);
}

/* the run's state at (t, x): the method starts afresh there (its first step, BDF's order
   1, a new J), the settings and counters stay */
static int cg_start(cg_integrator *s, double t, const double *x)
{
    int i;
    s->t = t;
    s->t_want = -HUGE_VAL;                   /* until integrate_to: every step keeps a dense output */
    s->h = s->properties & CG_FIXED_STEP ? s->dt : 0.0;
    s->jac_age = -1;
    s->w_diag = 0.0;
    s->order = 0;
    s->crate = 1.0;
    s->have_step = 0;
    for (i = 0; i < s->nx; i++) {
        s->x[i] = x[i];
        s->ft[i] = 0.0;    /* ali3p's multipliers start at 0; the Rosenbrock methods write df/dt there first */
    }
    return cg_f(s, t, s->x, s->f);
}

CG_API int cg_integrator_init(cg_integrator *s, const cg_model *m, int method, double t0,
                       const double *x0, const double *p, int n_table, const double *t_table,
                       const double *r_table, double rtol, double atol, double dt)
{
    const int nx = CG_MODEL(m)->nx, nr = CG_MODEL(m)->nr;
    double *d = (double *)(s + 1);   /* sizeof(cg_integrator) is a multiple of its alignment */
    int i, needs;
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
    s->x0 = s->D + 8 * nx;
    s->f0 = s->x0 + nx;
    s->jr = s->f0 + nx;
    s->law_c = s->jr + nx * nr;
    s->ev_g = s->law_c + nr + 1;
    s->ev_gb = s->ev_g + CG_MODEL(m)->ne;
    s->ev_gm = s->ev_gb + CG_MODEL(m)->ne;
    s->ev_x = s->ev_gm + CG_MODEL(m)->ne;
    s->piv = (int *)(s->ev_x + nx);
    s->ev_index = s->piv + CG_LEN(nx);
    s->ev_dir = s->ev_index + CG_MODEL(m)->ne;
    s->ev_term = s->ev_dir + CG_MODEL(m)->ne;
    s->ev_sign = s->ev_term + CG_MODEL(m)->ne;
    s->K = 0;
    s->controller = 0;
    s->control_data = 0;
    s->n_ev = 0;
    s->ev_last = -1;
    s->ev_pending = 0;
    if (method < 0 || method >= CG_N_METHODS) return CG_ERR_INPUT;
    if (nr > 0 && n_table <= 0) return CG_ERR_INPUT;
    if (!cg_finite_inputs(m, t0, x0, p, nr ? r_table : 0)) return CG_ERR_INPUT;
    for (i = 0; i < n_table; i++)              /* the whole input table, once */
        if (!isfinite(t_table[i]) || !cg_all_finite(r_table + i * nr, nr))
            return CG_ERR_INPUT;
    s->method = method;
    s->properties = cg_method_properties(method);
    s->stepper = &cg_steppers[method];
    s->t = t0;
    s->rtol = rtol;
    s->atol = atol;
    s->dt = dt;
    s->max_steps = CG_MAX_STEPS;
    s->pause = 0;
    s->steps = s->rejected = s->nfev = 0;
    s->p = p;
    s->n_table = n_table;
    s->hold = 1;
    s->t_table = t_table;
    s->r_table = r_table;
    cg_inputs_at(s, t0);             /* a constant (one row) stays in s->r from here */
    s->rank_seen = 0;
    s->ratio_low = 1.0;
    s->t_low = t0;
    for (i = 0; i < nx; i++) s->x[i] = x0[i];
    if ((s->properties & CG_FIXED_STEP) && !(dt > 0.0)) return CG_ERR_INPUT;
    if ((s->properties & CG_TOLERANCES) && !(rtol > 0.0 && atol > 0.0)) return CG_ERR_INPUT;
    needs = cg_method_needs(method);
    if ((CG_MODEL(m)->flags & needs) != needs) return CG_ERR_METHOD;
    return cg_start(s, t0, x0);
}

CG_API int cg_integrator_restart(cg_integrator *s, double t, const double *x)
{
    int code;
    if (!(isfinite(t) && cg_all_finite(x, s->nx))) return CG_ERR_RESET;
    if ((code = cg_start(s, t, x))) return code;
    return cg_events_start(s, s->ev_last);
}

CG_API int cg_integrator_control(cg_integrator *s, const double *K, const double *x_ref,
                                 cg_controller_fn controller, void *data)
{
    const cg_model *m = CG_SM(s);
    const int nr = m->nr, nx = CG_NX(s);
    int i, j;
    if (nr && K && !m->feedback) return CG_ERR_INPUT;   /* a descriptor without the law */
    s->K = nr ? K : 0;
    for (i = 0; i < nr; i++) {       /* the law's c: K x_ref, and a constant r_ref folded in */
        double sum = 0.0;
        if (s->K && x_ref) for (j = 0; j < nx; j++) sum += K[i * nx + j] * x_ref[j];
        s->law_c[i] = sum + (s->n_table == 1 ? s->r_table[i] : 0.0);
    }
    s->controller = nr ? controller : 0;
    s->control_data = data;
    s->jac_age = -1;
    cg_inputs_at(s, s->t);           /* the table's again, should a law have gone */
    return cg_f(s, s->t, s->x, s->f);           /* the derivative at the start, closed */
}

CG_API int cg_integrator_outputs(cg_integrator *s, double t, const double *x, double *y)
{
    int code;
    if ((code = cg_inputs(s, t, x))) return code;
    return cg_outputs(CG_SM(s), t, x, s->p, s->r, y);
}

/* a fixed-step method to t_out: steps of dt, the last stretched or shortened to land
   on t_out (rather than leave a sliver after it: ali3p divides by h^2) */
static int cg_fixed_to(cg_integrator *s, double t_out, double *x_out, long pause_at)
{
    const int nx = CG_NX(s);
    int i, accepted, code;
    for (;;) {
        /* events: up to the step's end, which lands on t_out */
        if (s->n_ev && (code = cg_events_check(s, s->t))) return code;
        if (!(t_out - s->t > CG_T_SAME * cg_scale(t_out))) break;
        s->h = s->t + s->dt > t_out - CG_LAND_SLACK * s->dt ? t_out - s->t : s->dt;
        if (s->steps >= s->max_steps) return CG_ERR_STEPS;
        if (s->steps == pause_at) return CG_PAUSED;
        if (s->n_ev)                 /* the step's start, for its cubic Hermite */
            for (i = 0; i < nx; i++) {
                s->x0[i] = s->x[i];
                s->f0[i] = s->f[i];
            }
        if ((code = s->stepper->step(s, &accepted))) return code;
        if (s->n_ev) cg_hermite(s);
    }
    for (i = 0; i < nx; i++) x_out[i] = s->x[i];
    return CG_OK;
}

/* an adaptive method to t_out: steps past it, then its dense output at t_out */
static int cg_adaptive_to(cg_integrator *s, double t_out, double *x_out, long pause_at)
{
    const int nx = CG_NX(s);
    const cg_stepper *st = s->stepper;
    int i, accepted, code;
    if (t_out == s->t || (!s->have_step && t_out <= s->t)) {
        if (s->n_ev && t_out == s->t && (code = cg_events_check(s, t_out))) return code;
        for (i = 0; i < nx; i++) x_out[i] = s->x[i];    /* at the current time */
        return CG_OK;
    }
    if (!(s->h > 0.0)) {
        if (st->start_order) {
            if ((code = cg_first_step(s, st->start_order))) return code;
        } else {
            s->h = CG_H_START * (t_out - s->t > 1.0 ? t_out - s->t : 1.0);
        }
    }
    /* only the step that reaches t_out needs a dense output, unless events are located */
    s->t_want = s->n_ev ? -HUGE_VAL : t_out;
    for (;;) {
        if (s->n_ev && (code = cg_events_check(s, t_out < s->t ? t_out : s->t))) return code;
        if (!(t_out > s->t)) break;
        if (s->steps + s->rejected >= s->max_steps) return CG_ERR_STEPS;
        if (s->steps + s->rejected == pause_at) return CG_PAUSED;
        if (cg_h_too_small(s)) return CG_ERR_STEPSIZE;
        if ((code = st->step(s, &accepted))) return code;
    }
    if (t_out == s->t) {               /* the step ended on it (or nothing was stepped) */
        for (i = 0; i < nx; i++) x_out[i] = s->x[i];
        return CG_OK;
    }
    st->interpolate(s, t_out, x_out);  /* inside the last step [t_old, t] */
    /* near overflow the interpolant can overflow between finite ends */
    return cg_all_finite(x_out, nx) ? CG_OK : CG_ERR_OUTPUT;
}

CG_API int cg_integrate_to(cg_integrator *s, double t_out, double *x_out)
{
    /* steps + rejected at which this call pauses (never without a budget) */
    const long pause_at = s->pause > 0 ? s->steps + s->rejected + s->pause : -1;
    if (!(t_out == t_out)) return CG_ERR_INPUT;
    if (t_out < (s->have_step ? s->t_old : s->t)) return CG_ERR_INPUT;   /* forward only */
    return s->properties & CG_FIXED_STEP ? cg_fixed_to(s, t_out, x_out, pause_at)
                                         : cg_adaptive_to(s, t_out, x_out, pause_at);
}

CG_API void cg_integrator_stats(const cg_integrator *s, long *steps, long *rejected, long *nfev,
                         double *t)
{
    *steps = s->steps;
    *rejected = s->rejected;
    *nfev = s->nfev;
    *t = s->t;
}

CG_API double cg_integrator_state(const cg_integrator *s, double *x)
{
    int i;
    for (i = 0; i < s->nx; i++) x[i] = s->x[i];
    return s->t;
}

CG_API double cg_integrator_nearest_singular(const cg_integrator *s, double *t)
{
    *t = s->t_low;
    return s->properties & CG_KEEPS_BRANCH ? 1.0 : s->ratio_low;
}

CG_API int cg_integrator_warning(const cg_integrator *s)
{
    double t;
    return cg_integrator_nearest_singular(s, &t) < CG_NEAR_SINGULAR_RATIO ? CG_NEAR_SINGULAR
                                                                            : CG_OK;
}

CG_API void cg_integrator_set(cg_integrator *s, long max_steps, int hold, long pause)
{
    s->max_steps = max_steps;
    s->hold = hold;
    s->pause = pause;
}
