
/*
 * Integrators over ${name}_rhs, in C: fixed-step RK4, adaptive Dormand-Prince
 * 5(4) with dense output, and for stiff models, with a finite-difference
 * Jacobian: Rosenbrock 4(3) (the Kaps-Rentrop form with Shampine's
 * coefficients; a new J every step), the Rosenbrock-W method ROS34PW2
 * (order 3; one J kept over up to ${NAME}_JAC_REUSE steps) and variable-order
 * BDF (Shampine's NDF, orders 1-5, quasi-constant step; J kept while the
 * Newton iteration converges with it).
 * All state lives in the caller's ${name}_integrator: reentrant, no allocation.
 * It holds two NX x NX matrices for the implicit methods (J and the LU of
 * W): ${name}_integrator_size() bytes, best kept off small thread stacks.
 *
 *   ${name}_integrator s;
 *   ${name}_integrator_init(&s, ${NAME}_DOPRI5, t0, x0, p, 0, 0, 0, 1e-8, 1e-8, 0.0);
 *   for each output time t_k: ${name}_integrate_to(&s, t_k, x_k);
 *
 * Specified inputs during the run: a table of n_table times (ascending) and
 * n_table rows of ${NAME}_NR values, held piecewise constant (hold = 1) or
 * linearly interpolated (hold = 0) and held beyond its ends; n_table = 0
 * means no inputs (allowed only when ${NAME}_NR is 0).
 */
#define ${NAME}_RK4 0
#define ${NAME}_DOPRI5 1
#define ${NAME}_ROSENBROCK 2
#define ${NAME}_ROSW 3
#define ${NAME}_BDF 4
/* accepted steps over which ROSW keeps one J */
#define ${NAME}_JAC_REUSE 20

/* integrate_to return codes beyond those of ${name}_rhs */
#define ${NAME}_ERR_STEPS 5      /* max_steps reached */
#define ${NAME}_ERR_STEPSIZE 6   /* step size underflow (stiff or singular) */
#define ${NAME}_ERR_JACOBIAN 7   /* an implicit method's Newton matrix is singular */
/* not an error: the call's step budget (integrator_set) ran out before t_out;
   the run is intact, and calling integrate_to again with the same t_out goes on */
#define ${NAME}_PAUSED 8

typedef struct {
    int method;
    double t, h, rtol, atol, dt;     /* dt: RK4 step, h: next adaptive step */
    long max_steps, steps, rejected, nfev;
    long pause;                      /* steps per integrate_to call, 0 = no limit */
    const double *p;
    int n_table, hold;
    const double *t_table, *r_table;
    double r[${NAME}_NR + 1];
    double x[${NAME}_NX], f[${NAME}_NX];   /* state and its derivative at t (FSAL) */
    double t_old, h_old;                   /* last accepted step, for dense output */
    double t_want;                         /* the time integrate_to is heading for */
    double cont[5 * ${NAME}_NX];
    double jac[${NAME}_NX * ${NAME}_NX], ft[${NAME}_NX];   /* implicit methods: J, df/dt */
    int jac_age;                           /* accepted steps since J was formed, -1 = none */
    double w[${NAME}_NX * ${NAME}_NX], w_diag;   /* LU of w_diag I - J (w_diag 0 = none) */
    int piv[${NAME}_NX];
    double D[8 * ${NAME}_NX];               /* BDF: backward differences, orders up to 5 */
    int order, n_equal;                    /* BDF: current order (0 = not started), equal steps */
    int have_step;
} ${name}_integrator;

/* Set up a run from (t0, x0). dt: the RK4 step; for the adaptive methods the
   first step (0 = chosen automatically). Returns ${NAME}_OK or an error code
   (${NAME}_ERR_INPUT if t0, x0, p or any entry of the input table is not
   finite: they are checked here, once, and not again on each RHS call). */
int ${name}_integrator_init(${name}_integrator *s, int method, double t0, const double *x0,
                            const double *p, int n_table, const double *t_table,
                            const double *r_table, double rtol, double atol, double dt);

/* Advance to t_out and write x(t_out) into x_out: forward only (t_out not
   before the last step; ${NAME}_ERR_INPUT otherwise). The adaptive methods
   step past t_out and interpolate. max_steps (default 10^7
   after init) bounds the accepted plus rejected steps of the whole run.
   With a step budget per call (integrator_set), ${NAME}_PAUSED says it ran
   out first: the caller can look at the time reached (integrator_stats),
   check for an interrupt or update a progress display, and call again; the
   steps, and so the results, are the same as without the budget.
   ${NAME}_ERR_OUTPUT: an RHS result, an accepted state or x_out is not
   finite (e.g. a state that overflowed). */
int ${name}_integrate_to(${name}_integrator *s, double t_out, double *x_out);

/* sizeof(${name}_integrator), for callers that allocate it opaquely */
size_t ${name}_integrator_size(void);
/* accepted steps, rejected steps, rhs evaluations and the time reached so far */
void ${name}_integrator_stats(const ${name}_integrator *s, long *steps, long *rejected, long *nfev,
                              double *t);
/* the step budget of the run; 1 = hold inputs piecewise constant, 0 = interpolate;
   the steps one integrate_to call may take before it returns ${NAME}_PAUSED
   (0 = no limit, the default after init) */
void ${name}_integrator_set(${name}_integrator *s, long max_steps, int hold, long pause);

/* ${name}_rhs as void f(double t, double *u, double *du, void *data) (numbalsoda's
   signature) with data = [p, r]; du is NaN where ${name}_rhs fails. */
void ${name}_rhs_cb(double t, double *u, double *du, void *data);
