/*
 * cg_events.c -- event location on an integration's dense output (the model's event
 * functions g(t, x, p, r), cg_model.h's "events"), after SUNDIALS CVODE's root finding
 * (cvRcheck1-3): each function's sign is kept at the last point searched (ev_t); after a
 * step, the functions at its end (or at the output time within it) show which changed
 * sign; the earliest change is bracketed to CG_EVENT_TOL by the Illinois method on the
 * dense output and reported at the bracket's right end, where the sign has changed.
 * Changes against a function's direction pass silently; events at one time are
 * reported one by one.
 */
#include "cg_internal.h"

/* the sign of v: +1, -1, or 0 for an exact zero */
static int cg_sign(double v)
{
    return (v > 0.0) - (v < 0.0);
}

/* a sign change from a to b (signs) that slot i reports */
static int cg_reports(const cg_integrator *s, int i, int a, int b)
{
    const int dir = s->ev_dir[i];
    return a != 0 && b == -a && (dir == 0 || dir == b);
}

/* the model's event functions at (t, x) into g, with the run's inputs there; only the
   located ones must be finite (an event the run does not locate cannot end it) */
static int cg_event_values(cg_integrator *s, double t, const double *x, double *g)
{
    const cg_model *m = CG_SM(s);
    double z = 0.0;
    int i, code;
    if ((code = cg_inputs(s, t, x))) return code;
    m->events(t, x, s->p, s->r, g);
    for (i = 0; i < s->n_ev; i++) z += g[s->ev_index[i]] * 0.0;   /* NaN for a non-finite value */
    return z == 0.0 ? CG_OK : CG_ERR_OUTPUT;
}

CG_API void cg_state_at(const cg_integrator *s, double t, double *x)
{
    const int nx = CG_NX(s);
    int i;
    if (t == s->t) for (i = 0; i < nx; i++) x[i] = s->x[i];
    else if (s->stepper->interpolate) s->stepper->interpolate(s, t, x);
    else cg_cont_dense(s, t, x);
}

CG_API void cg_hermite(cg_integrator *s)
{
    const int nx = CG_NX(s);
    const double h = s->h_old;
    int i;
    for (i = 0; i < nx; i++) {
        const double dy = s->x[i] - s->x0[i];
        s->cont[i] = s->x0[i];
        s->cont[nx + i] = dy;
        s->cont[2 * nx + i] = h * s->f0[i] - dy;
        s->cont[3 * nx + i] = dy - h * s->f[i] - (h * s->f0[i] - dy);
        s->cont[4 * nx + i] = 0.0;
    }
}

CG_API int cg_events_start(cg_integrator *s, int skip)
{
    int i, code;
    s->ev_t = s->t;
    s->ev_pending = 0;
    if (!s->n_ev) return CG_OK;
    if ((code = cg_event_values(s, s->t, s->x, s->ev_g))) return code;
    for (i = 0; i < s->n_ev; i++)
        s->ev_sign[i] = i == skip ? 0 : cg_sign(s->ev_g[s->ev_index[i]]);
    return CG_OK;
}

/* report the first slot whose sign at ev_t (ev_g) is a change it reports, and look again
   at the next call (ev_pending); the other slots take their sign there (a change against
   a direction passes) */
static int cg_report_at_ev_t(cg_integrator *s)
{
    int i;
    for (i = 0; i < s->n_ev; i++) {
        const int now = cg_sign(s->ev_g[s->ev_index[i]]);
        if (cg_reports(s, i, s->ev_sign[i], now)) {
            s->ev_sign[i] = now;
            s->ev_last = i;
            s->ev_t_last = s->ev_t;
            s->ev_pending = 1;
            cg_state_at(s, s->ev_t, s->ev_x);
            return CG_EVENT;
        }
        if (now != 0) s->ev_sign[i] = now;
    }
    s->ev_pending = 0;
    return CG_OK;
}

/* slot i's change of sign in (a, b], ga and gb its function's values at a and b: the
   Illinois method on the dense output down to a bracket of CG_EVENT_TOL (1 + |t|), a
   point at 0 counting as not yet changed; the right end, where the sign has changed,
   into *root */
static int cg_locate(cg_integrator *s, int i, double a, double ga, double b, double gb,
                     double *root)
{
    const int k = s->ev_index[i], nx = CG_NX(s), changed = -s->ev_sign[i];
    const double tol = CG_EVENT_TOL * (1.0 + fabs(b));
    double x[nx];
    int side = 0, code;
    while (b - a > tol) {
        double t = b - gb * (b - a) / (gb - ga), g;      /* the secant */
        if (!(t > a + 0.5 * tol && t < b - 0.5 * tol)) t = 0.5 * (a + b);
        cg_state_at(s, t, x);
        if ((code = cg_event_values(s, t, x, s->ev_gm))) return code;
        g = s->ev_gm[k];
        if (cg_sign(g) == changed) {                     /* the change is in (a, t] */
            b = t;
            gb = g;
            if (side == -1) ga *= 0.5;                   /* Illinois: the stuck end halved */
            side = -1;
        } else {
            a = t;
            ga = g;
            if (side == 1) gb *= 0.5;
            side = 1;
        }
    }
    *root = b;
    return CG_OK;
}

CG_API int cg_events_check(cg_integrator *s, double b)
{
    const int nx = CG_NX(s);
    double x[nx], first = b;
    const double *xb = s->x;
    int i, code, found = -1;
    if (s->ev_pending && (code = cg_report_at_ev_t(s))) return code;   /* more at ev_t */
    if (!(b > s->ev_t)) return CG_OK;
    if (b != s->t) {                                     /* an output time within the step */
        cg_state_at(s, b, x);
        xb = x;
    }
    if ((code = cg_event_values(s, b, xb, s->ev_gb))) return code;
    for (i = 0; i < s->n_ev; i++) {                      /* the earliest reported change */
        const int k = s->ev_index[i];
        double root;
        if (!cg_reports(s, i, s->ev_sign[i], cg_sign(s->ev_gb[k]))) continue;
        if ((code = cg_locate(s, i, s->ev_t, s->ev_g[k], b, s->ev_gb[k], &root))) return code;
        if (found < 0 || root < first) {
            first = root;
            found = i;
        }
    }
    if (found >= 0 && first < b) {                       /* the functions at the event */
        cg_state_at(s, first, x);
        if ((code = cg_event_values(s, first, x, s->ev_g))) return code;
        s->ev_t = first;
    } else {                                             /* g at b: ev_g's storage swapped */
        double *g = s->ev_g;
        s->ev_g = s->ev_gb;
        s->ev_gb = g;
        s->ev_t = b;
        if (found < 0) {                                 /* no event: the signs at b */
            for (i = 0; i < s->n_ev; i++) {
                const int now = cg_sign(s->ev_g[s->ev_index[i]]);
                if (now != 0) s->ev_sign[i] = now;
            }
            return CG_OK;
        }
    }
    return cg_report_at_ev_t(s);
}

CG_API int cg_integrator_events(cg_integrator *s, int n, const int *index, const int *direction,
                                const int *terminal)
{
    const cg_model *m = CG_SM(s);
    int i;
    s->n_ev = 0;
    s->ev_last = -1;
    s->ev_pending = 0;
    if (n < 0 || n > m->ne || (n > 0 && !m->events)) return CG_ERR_INPUT;
    for (i = 0; i < n; i++) {
        if (index[i] < 0 || index[i] >= m->ne) return CG_ERR_INPUT;
        s->ev_index[i] = index[i];
        s->ev_dir[i] = direction ? cg_sign((double)direction[i]) : 0;
        s->ev_term[i] = terminal ? terminal[i] != 0 : 0;
    }
    s->n_ev = n;
    return cg_events_start(s, -1);
}

CG_API int cg_integrator_event(const cg_integrator *s, int *index, double *t, double *x)
{
    const int nx = CG_NX(s);
    int i;
    if (s->ev_last < 0) return -1;
    *index = s->ev_index[s->ev_last];
    *t = s->ev_t_last;
    if (x) for (i = 0; i < nx; i++) x[i] = s->ev_x[i];
    return s->ev_term[s->ev_last];
}

CG_API int cg_integrator_impact(cg_integrator *s, double *xout)
{
    int code;
    if (s->ev_last < 0) return CG_ERR_INPUT;
    if ((code = cg_inputs(s, s->ev_t_last, s->ev_x))) return code;
    return cg_impact(CG_SM(s), s->ev_index[s->ev_last], s->ev_t_last, s->ev_x, s->p, s->r, xout);
}
