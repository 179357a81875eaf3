/* ---- the integrators' driver and API (see ${name}.h) ----------------------- */

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
