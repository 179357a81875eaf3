# The events a run met, kept in C (a run of a batch has no GIL), and the loop that
# advances a run through them: included by _runtime.pyx.

cdef struct EventLog:
    int n, cap, nx
    int impact_failed            # the run failed at the last event's impact (or restart)
    int *index
    double *t
    double *x


cdef int _log_event(EventLog *log, int index, double t, const double *x) noexcept nogil:
    """Append an event to log, growing it; 1 if memory ran out."""
    cdef int cap
    cdef void *a
    cdef void *b
    cdef void *c
    if log.n == log.cap:
        cap = 16 if log.cap == 0 else 2 * log.cap
        a = realloc(log.index, cap * sizeof(int))
        if a != NULL:
            log.index = <int *>a
        b = realloc(log.t, cap * sizeof(double))
        if b != NULL:
            log.t = <double *>b
        c = realloc(log.x, cap * (log.nx if log.nx > 0 else 1) * sizeof(double))
        if c != NULL:
            log.x = <double *>c
        if a == NULL or b == NULL or c == NULL:
            return 1
        log.cap = cap
    log.index[log.n] = index
    log.t[log.n] = t
    memcpy(log.x + log.n * log.nx, x, log.nx * sizeof(double))
    log.n += 1
    return 0


cdef object _log_state(EventLog *log, int i):
    return np.array(<double[:log.nx]>(log.x + i * log.nx)) if log.nx else np.zeros(0)


cdef list _log_list(EventLog *log, tuple names):
    """The events as (name, t, x) tuples; the log freed."""
    out = [(names[log.index[i]], log.t[i], _log_state(log, i)) for i in range(log.n)]
    free(log.index)
    free(log.t)
    free(log.x)
    log.index = NULL
    log.t = log.x = NULL
    log.n = log.cap = 0
    log.impact_failed = 0
    return out


cdef int _advance(const cg_runtime *rt, cg_integrator *s, double t_out, double *x_out,
                  EventLog *log, long max_events, bint impacts, const int *has_impact,
                  double *scratch) noexcept nogil:
    """cg_integrate_to t_out, each event logged, a terminal one with an impact applied and
    the run restarted after it (impacts): CG_OK, CG_PAUSED, CG_TERMINAL_EVENT (a terminal
    event the caller resets or ends at), CG_MAX_EVENTS, or a failure."""
    cdef int code, index, terminal
    cdef double t
    while True:
        code = rt.integrate_to(s, t_out, x_out)
        if code != CG_EVENT:
            return code
        terminal = rt.integrator_event(s, &index, &t, scratch)
        if _log_event(log, index, t, scratch) or log.n >= max_events:
            return CG_MAX_EVENTS
        if terminal:
            if not (impacts and has_impact[index]):
                return CG_TERMINAL_EVENT
            code = rt.integrator_impact(s, scratch)
            if code == 0:
                code = rt.integrator_restart(s, t, scratch)
            if code:
                log.impact_failed = 1
                return code
