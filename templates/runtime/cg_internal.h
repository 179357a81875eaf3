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

#if defined(__GNUC__) && !defined(__clang__)
/* GCC 12 takes a variable-length array that a loop over its length filled, then passed
   on as const, for possibly uninitialized: silence that false alarm in the runtime only */
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

/* a VLA length that is never zero (an empty model array is still a valid pointer) */
#define CG_LEN(n) ((n) > 0 ? (n) : 1)

/* C99's restrict, spelled as C++ compilers take it */
#ifdef __cplusplus
#define CG_RESTRICT __restrict
#else
#define CG_RESTRICT restrict
#endif

/* a static helper that must not cost a call (the shared first half of two entry points) */
#if defined(__GNUC__)
#define CG_ALWAYS_INLINE static inline __attribute__((always_inline))
#elif defined(_MSC_VER)
#define CG_ALWAYS_INLINE static __forceinline
#else
#define CG_ALWAYS_INLINE static inline
#endif

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

/* ---- the integrators (cg_explicit.c, cg_rosenbrock.c, cg_bdf.c, cg_integrate.c) ---- */
struct cg_integrator {
    const cg_model *m;
    int method, nx;
    double t, h, rtol, atol, dt;     /* dt: RK4 step, h: next adaptive step */
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
    /* views into the storage after the struct (cg_integrator_size) */
    double *r;                       /* nr + 1: the inputs at the current stage */
    double *x, *f;                   /* state and its derivative at t (FSAL) */
    double *cont;                    /* 5 nx: dense output */
    double *jac, *ft;                /* implicit methods: J (nx x nx), df/dt */
    double *w;                       /* LU of W */
    double *D;                       /* BDF: backward differences, orders up to 5 (8 nx) */
    int *piv;
};

CG_API void cg_inputs_at(cg_integrator *s, double t);
CG_API int cg_diagnose(const cg_model *m, double t, const double *x, const double *p,
                       const double *r, int code);
CG_API int cg_f(cg_integrator *s, double t, const double *x, double *dx);
CG_API double cg_err_norm(const double *e, const double *a, const double *b, int n, double rtol,
                   double atol);
CG_API int cg_first_step(cg_integrator *s, int p);
#define CG_MANIFOLD_TOL 1e-6
#define CG_MANIFOLD_FACTOR 1e3
CG_API int cg_on_manifold(cg_integrator *s);
CG_API int cg_accepted(cg_integrator *s, double t, double h, double fac, int *accepted);
CG_API int cg_rejected(cg_integrator *s, double h, double err, double fac, int *accepted);
CG_API int cg_rk4_step(cg_integrator *s, double h);
CG_API int cg_dopri5_step(cg_integrator *s, int *accepted);
CG_API int cg_step_jacobian(cg_integrator *s, int with_dt);
CG_API int cg_lu_w(cg_integrator *s, double diag);
CG_API int cg_after_singular(const cg_integrator *s);

/* A four-stage linearly implicit method in the W-form of Hairer & Wanner
   (IV.7.25): W g_i = f(t + t_i h, x + sum_j a_ij g_j) + sum_j c_ij g_j / h
   + d_i h df/dt with W = I / (gam h) - J; x_new = x + sum_i m_i g_i, error
   estimate sum_i e_i g_i (cg_rosenbrock.c). */
typedef struct cg_tableau {
    double gam, a[4][3], c[4][3], t[4], d[4], m[4], e[4];
    double err_exp;        /* -1 / (order of the estimate + 1) */
    int reuse_f4;          /* the last stage evaluates f where the third did */
    int keep_j;            /* a W-method: J kept over steps, and W with it while h stays */
} cg_tableau;
#ifdef CG_FUSED
static const cg_tableau cg_ros4, cg_ros34pw2;
#else
extern const cg_tableau cg_ros4, cg_ros34pw2;
#endif
CG_API int cg_implicit_step(cg_integrator *s, const cg_tableau *tb, int *accepted);
CG_API int cg_bdf_step(cg_integrator *s, int *accepted);
CG_API int cg_ali3p_applies(const cg_model *m);
CG_API int cg_ali3p_step(cg_integrator *s, double h);
CG_API void cg_bdf_dense(const cg_integrator *s, double t_out, double *x_out);

#endif /* CG_INTERNAL_H */
