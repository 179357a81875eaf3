/*
 * cg_internal.h -- shared by the runtime's sources only (not part of the API).
 */
#ifndef CG_INTERNAL_H
#define CG_INTERNAL_H

#include <math.h>
#include <string.h>

/* A fused build (codegen.Options(fused=True)) compiles the runtime into the
   model's own file: CG_FUSED names the model's descriptor, every runtime
   function is static, and the model and its sizes are compile-time constants
   to every loop and call (see cg_fused.c). */
#ifdef CG_FUSED
#if defined(__GNUC__)
#define CG_API static __attribute__((unused))
#else
#define CG_API static
#endif
#define CG_API_DATA static
#define CG_MODEL(m) (&CG_FUSED)
#define CG_FIX_MODEL(m) ((m) = &CG_FUSED)
#else
#define CG_API
#define CG_API_DATA
#define CG_MODEL(m) (m)
#define CG_FIX_MODEL(m) ((void)0)
#endif
/* the model an integrator runs, and its number of states */
#define CG_SM(s) CG_MODEL((s)->m)
#define CG_NX(s) (CG_SM(s)->nx)

#include "cg_runtime.h"
#include "cg_math.h"          /* CG_RESTRICT, CG_CLONES */

#if defined(__GNUC__) && !defined(__clang__)
/* GCC 12 takes a variable-length array that a loop over its length filled, then passed
   on as const, for possibly uninitialized: silence that false alarm in the runtime only */
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

/* a VLA length that is never zero (an empty model array is still a valid pointer) */
#define CG_LEN(n) ((n) > 0 ? (n) : 1)

/* a static helper that must not cost a call (the shared first half of two entry points) */
#if defined(__GNUC__)
#define CG_ALWAYS_INLINE static inline __attribute__((always_inline))
#elif defined(_MSC_VER)
#define CG_ALWAYS_INLINE static __forceinline
#else
#define CG_ALWAYS_INLINE static inline
#endif

/* A pivot at or below this share of its diagonal entry (or, in LU, of the matrix's
   largest entry) is zero: the matrix is singular to working precision */
#define CG_PIVOT_TOL 1e-14

/* ---- cg_linalg.c ---- */
CG_API int cg_lu_decompose(int n, double *A, int *piv);
CG_API void cg_lu_backsolve(int n, const double *A, const int *piv, double *b);
CG_API int cg_cholesky_solve(int n, double *A, double *b, double *inv);
CG_API int cg_cholesky_factor(int n, double *A, double *inv);
CG_API void cg_cholesky_backsolve(int n, const double *A, const double *inv, double *b);
CG_API void cg_cholesky_solve_rows(int n, const double *L, const double *inv, double *B, int w);
CG_API void cg_lu_solve_rows(int n, const double *A, const int *piv, double *B, int w);
CG_API void cg_packed_matvec(int n, const double *A, const double *x, double *y);
CG_API void cg_unpack(int n, const double *A, double *M);
CG_API int cg_svd(int m, int n, double *A, double *V, double *s);
CG_API int cg_rank(int n, const double *s, double rtol);
CG_API void cg_pinv_apply(int m, int n, int r, const double *US, const double *V, const double *s,
                   const double *b, double *x);
CG_API void cg_pinv_transpose_apply(int m, int n, int r, const double *US, const double *V,
                             const double *s, const double *g, double *y);
CG_API void cg_damped_pinv_add(int m, int n, int r, const double *US, const double *V, const double *s,
                        double mu, const double *b, double *x);

/* ---- cg_dynamics.c ---- */
CG_API int cg_all_finite(const double *v, int n);
CG_API int cg_finite_inputs(const cg_model *m, double t, const double *x, const double *p,
                     const double *r);
/* cg_rhs without the input check: the integrators check their inputs once per run */
CG_API int cg_dynamics_sv(const cg_model *m, double t, const double *x, const double *p,
                          const double *r, double *dx, double *sv);
CG_API int cg_dynamics(const cg_model *m, double t, const double *x, const double *p, const double *r,
                double *dx);
CG_API int cg_diagnose(const cg_model *m, double t, const double *x, const double *p,
                       const double *r, int code);

/* ---- the integrators ----
   cg_integrate.c: the API and the table of methods; cg_step.c: the step kit every
   method shares; a file per family of methods: cg_explicit.c (RK4, DOPRI5),
   cg_rosenbrock.c, cg_bdf.c, cg_ali3p.c */

/* A method, as cg_integrate_to drives it (one entry per enum cg_method) */
typedef struct cg_stepper {
    /* One attempt of size s->h from (s->t, s->x). Accepted (*accepted = 1): t and x
       move to the step's end (and f = f(t, x) with them, except in BDF, which keeps
       its own history), t_old and h_old keep the step, and the dense output is kept
       when the step reaches s->t_want. Rejected
       (*accepted = 0): s->h is the next attempt's size. A fixed step is always
       accepted. A status other than CG_OK ends the run. */
    int (*step)(cg_integrator *s, int *accepted);
    /* x(t) for t in the last accepted step [t_old, t_old + h_old], valid when that
       step reached s->t_want (DOPRI5 stores its coefficients only then; with t_want
       at -HUGE_VAL, after every step). NULL: none, the fixed-step methods land on
       each output time instead. */
    void (*interpolate)(const cg_integrator *s, double t, double *x_out);
    /* the first step by Hairer & Wanner's rule for an error estimate of this order
       (0: CG_H_START of the span) */
    int start_order;
} cg_stepper;

struct cg_integrator {
    const cg_model *m;
    const cg_stepper *stepper;       /* the method's, chosen once by cg_integrator_init */
    int method, properties, nx;      /* enum cg_method and its properties */
    double t, h, rtol, atol, dt;     /* dt: the fixed step; h: the next step */
    long max_steps, steps, rejected, nfev;
    long pause;                      /* steps per cg_integrate_to call, 0 = no limit */
    const double *p;
    int n_table, hold;
    const double *t_table, *r_table;
    double t_old, h_old;             /* last accepted step, for dense output */
    double t_want;                   /* the time cg_integrate_to is heading for */
    int jac_age;                     /* accepted steps since J was formed, -1 = none */
    double w_diag;                   /* W = w_diag I - J is factored in w (0 = none) */
    int order, n_equal;              /* BDF: current order (0 = not started), equal steps */
    double crate;                    /* BDF: Newton's convergence rate with this W (1 = unknown) */
    int have_step;
    /* run-time constraints: the rank of A at the start (a consistent state), and the
       lowest ratio s[rank - 1] / s[0] met since, with its time
       (cg_integrator_nearest_singular) */
    int rank_seen;
    double ratio_low, t_low;
    /* feedback (cg_integrator_control): r - K (x - x_ref), then the controller */
    const double *K;
    cg_controller_fn controller;
    void *control_data;
    /* events (cg_events.c): n_ev located, searched up to ev_t, where the model's event
       functions are ev_g; per located one (a slot): its model index, direction, terminal
       flag and sign at ev_t (0: none yet); the last one reported: slot, time, state */
    int n_ev, ev_last, ev_pending;   /* pending: more events may be at ev_t */
    double ev_t, ev_t_last;
    /* views into the storage after the struct (cg_integrator_size) */
    double *r;                       /* nr + 1: the inputs at the current stage */
    double *x, *f;                   /* state and its derivative at t (FSAL) */
    double *cont;                    /* 5 nx: dense output (cg_cont_dense) */
    double *jac, *ft;                /* implicit methods: J (nx x nx), df/dt */
    double *w;                       /* LU of W */
    double *D;                       /* BDF: backward differences, orders up to 5 (8 nx) */
    double *x0, *f0;                 /* a fixed step's start, for events' dense output */
    double *jr;                      /* d dx / d r (nx x nr), for J - Jr K */
    double *law_c;                   /* nr: c of the K law r = c - K x (cg_integrator_control) */
    double *ev_g, *ev_gb, *ev_gm;    /* ne each: event functions at ev_t, at b, on the way */
    double *ev_x;                    /* the last event's state */
    int *piv;
    int *ev_index, *ev_dir, *ev_term, *ev_sign;   /* ne each, per slot */
};

/* ---- cg_step.c: the step kit ---- */
/* a step below CG_H_MIN of max(|t|, 1) is under the resolution of t (CG_ERR_STEPSIZE) */
#define CG_H_MIN 1e-14
/* the first step of a method without a starting rule: CG_H_START of the span (at least 1) */
#define CG_H_START 1e-6
/* a fixed step that would leave less than CG_LAND_SLACK dt before an output time is
   stretched to land on it */
#define CG_LAND_SLACK 1e-6
/* step-size control: a new step is the old times SAFETY err^(-1/(p+1)), within
   [FACTOR_MIN, the method's maximum] (FACTOR_NAN after a non-finite error estimate) */
#define CG_SAFETY 0.9
#define CG_FACTOR_MIN 0.2
#define CG_FACTOR_NAN 0.1
#define CG_FACTOR_MAX 10.0
/* difference quotients step by sqrt(CG_DIFF_EPS) relative to the variable (at least 1) */
#define CG_DIFF_EPS 2.2e-16

/* max(|v|, 1): the scale of a time or a state entry */
static inline double cg_scale(double v)
{
    return fabs(v) > 1.0 ? fabs(v) : 1.0;
}

/* the step s->h is below the resolution of t (inline: every attempt asks) */
static inline int cg_h_too_small(const cg_integrator *s)
{
    return s->h < CG_H_MIN * cg_scale(s->t);
}

/* the factor for the next step from an error estimate err (1 = the tolerance) of a
   method whose estimate's order is -1 / exponent - 1: at most fac_max */
static inline double cg_step_factor(double err, double exponent, double fac_max)
{
    const double fac = err > 0.0 ? CG_SAFETY * pow(err, exponent) : fac_max;
    return fac > fac_max ? fac_max : fac;
}

CG_API void cg_inputs_at(cg_integrator *s, double t);
CG_API int cg_inputs(cg_integrator *s, double t, const double *x);
CG_API int cg_f(cg_integrator *s, double t, const double *x, double *dx);
CG_API double cg_err_norm(const double *e, const double *a, const double *b, int n, double rtol,
                   double atol);
CG_API int cg_first_step(cg_integrator *s, int order);
CG_API int cg_accepted(cg_integrator *s, double t, double h, double fac, int *accepted);
CG_API int cg_rejected(cg_integrator *s, double h, double err, double fac, int *accepted);
CG_API int cg_on_manifold(cg_integrator *s);
CG_API void cg_cont_dense(const cg_integrator *s, double t, double *x_out);
CG_API int cg_step_jacobian(cg_integrator *s, int with_dt);
CG_API int cg_lu_w(cg_integrator *s, double diag);
CG_API int cg_after_singular(const cg_integrator *s);

/* ---- cg_events.c: event location on the dense output ---- */
/* the state at t within the last step (t_old <= t <= t): the method's dense output, a
   fixed step's cubic Hermite (cg_cont_dense of s->cont), or s->x at its end */
CG_API void cg_state_at(const cg_integrator *s, double t, double *x);
/* a fixed step just taken from (x0, f0): its cubic Hermite into s->cont */
CG_API void cg_hermite(cg_integrator *s);
/* the event functions' signs and values at the run's (re)start; skip: a slot left
   without a sign (the event that caused a restart), else -1 */
CG_API int cg_events_start(cg_integrator *s, int skip);
/* the next event in (ev_t, b] (b <= s->t): CG_EVENT with it recorded, or CG_OK with
   ev_t moved to b; another status is the run's failure */
CG_API int cg_events_check(cg_integrator *s, double b);

/* ---- the methods' steps (cg_stepper.step) and dense outputs ---- */
CG_API int cg_rk4_step(cg_integrator *s, int *accepted);
CG_API int cg_dopri5_step(cg_integrator *s, int *accepted);
CG_API int cg_ros4_step(cg_integrator *s, int *accepted);
CG_API int cg_rosw_step(cg_integrator *s, int *accepted);
CG_API int cg_bdf_step(cg_integrator *s, int *accepted);
CG_API void cg_bdf_dense(const cg_integrator *s, double t_out, double *x_out);
CG_API int cg_ali3p_step(cg_integrator *s, int *accepted);

#endif /* CG_INTERNAL_H */
