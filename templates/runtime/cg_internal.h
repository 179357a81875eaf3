/*
 * cg_internal.h -- shared by the runtime's sources only (not part of the API).
 */
#ifndef CG_INTERNAL_H
#define CG_INTERNAL_H

#include <math.h>
#include <string.h>
#include "cg_runtime.h"

#if defined(__GNUC__) && !defined(__clang__)
/* GCC 12 takes a variable-length array that a loop over its length filled, then passed
   on as const, for possibly uninitialized: silence that false alarm in the runtime only */
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

/* a VLA length that is never zero (an empty model array is still a valid pointer) */
#define CG_LEN(n) ((n) > 0 ? (n) : 1)

/* ---- cg_linalg.c ---- */
int cg_lu_decompose(int n, double *A, int *piv);
void cg_lu_backsolve(int n, const double *A, const int *piv, double *b);
int cg_cholesky_solve(int n, double *A, double *b, double *inv);
void cg_packed_matvec(int n, const double *A, const double *x, double *y);
void cg_unpack(int n, const double *A, double *M);
int cg_svd(int m, int n, double *A, double *V, double *s);
int cg_rank(int n, const double *s, double rtol);
void cg_pinv_apply(int m, int n, int r, const double *US, const double *V, const double *s,
                   const double *b, double *x);
void cg_pinv_transpose_apply(int m, int n, int r, const double *US, const double *V,
                             const double *s, const double *g, double *y);
void cg_damped_pinv_add(int m, int n, int r, const double *US, const double *V, const double *s,
                        double mu, const double *b, double *x);

/* ---- cg_dynamics.c ---- */
int cg_all_finite(const double *v, int n);
int cg_finite_inputs(const cg_model *m, double t, const double *x, const double *p,
                     const double *r);
/* cg_rhs without the input check: the integrators check their inputs once per run */
int cg_dynamics(const cg_model *m, double t, const double *x, const double *p, const double *r,
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
    int have_step;
    /* views into the storage after the struct (cg_integrator_size) */
    double *r;                       /* nr + 1: the inputs at the current stage */
    double *x, *f;                   /* state and its derivative at t (FSAL) */
    double *cont;                    /* 5 nx: dense output */
    double *jac, *ft;                /* implicit methods: J (nx x nx), df/dt */
    double *w;                       /* LU of W */
    double *D;                       /* BDF: backward differences, orders up to 5 (8 nx) */
    int *piv;
};

int cg_f(cg_integrator *s, double t, const double *x, double *dx);
double cg_err_norm(const double *e, const double *a, const double *b, int n, double rtol,
                   double atol);
int cg_first_step(cg_integrator *s, int p);
int cg_accepted(cg_integrator *s, double t, double h, double fac, int *accepted);
int cg_rejected(cg_integrator *s, double h, double err, double fac, int *accepted);
int cg_rk4_step(cg_integrator *s, double h);
int cg_dopri5_step(cg_integrator *s, int *accepted);
int cg_jacobian(cg_integrator *s, int with_dt);
int cg_lu_w(cg_integrator *s, double diag);
int cg_after_singular(const cg_integrator *s);

typedef struct cg_tableau cg_tableau;
extern const cg_tableau cg_ros4, cg_ros34pw2;
int cg_implicit_step(cg_integrator *s, const cg_tableau *tb, int *accepted);
int cg_bdf_step(cg_integrator *s, int *accepted);
void cg_bdf_dense(const cg_integrator *s, double t_out, double *x_out);

#endif /* CG_INTERNAL_H */
