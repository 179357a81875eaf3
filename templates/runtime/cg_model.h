/*
 * cg_model.h -- the contract between a generated model and the codegen runtime.
 *
 * A generated model is C that evaluates its equations, plus one descriptor,
 * `const cg_model *<name>_model(void)`, that tells programs everything about
 * it: this ABI version, the sizes, the name tables, the flags and the
 * function pointers. The runtime (cg_runtime.h: the right-hand side with its
 * solve, the constraint elimination, the integrators) works on any
 * descriptor. The enums below are the one definition of status codes and
 * integration methods: the runtime's message table, the Python module
 * (codegen.abi reads this file) and the FMU wrapper all expand these lists.
 */
#ifndef CG_MODEL_H
#define CG_MODEL_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* a model built against another version is refused by the runtime and rebuilt by the cache */
#define CG_ABI_VERSION 4

/* X(symbol, value, message): the status codes of every runtime function */
#define CG_STATUS_LIST(X) \
    X(CG_OK, 0, "ok") \
    X(CG_ERR_INPUT, 1, "non-finite input") \
    X(CG_ERR_MASS, 2, "the mass matrix is not positive definite (or is singular)") \
    X(CG_ERR_OUTPUT, 3, "non-finite result: the equations overflow or are singular here") \
    X(CG_ERR_SVD, 4, "the SVD of the constraint matrix did not converge") \
    X(CG_ERR_STEPS, 5, "max_steps reached") \
    X(CG_ERR_STEPSIZE, 6, "step size underflow (stiff, or singular)") \
    X(CG_ERR_JACOBIAN, 7, "an implicit method's Newton matrix is singular") \
    X(CG_PAUSED, 8, "paused: the call's step budget ran out") \
    X(CG_ERR_KINEMATICS, 9, "q' is not finite: the kinematic equations are singular here") \
    X(CG_ERR_NO_JACOBIAN, 10, "the model has no analytic Jacobian (run-time constraints, or built without one)") \
    X(CG_ERR_NEWTON, 11, "the positions of a step did not converge (ali3p: a locked configuration, or dt too large)") \
    X(CG_ERR_METHOD, 12, "ali3p needs holonomic constraints only, q' = u and a symmetric M") \
    X(CG_NEAR_SINGULAR, 13, "the run passed by a singular position of the constraints, where the SVD elimination, not the motion, chose the branch followed (method='ali3p' follows the motion)") \
    X(CG_ERR_MANIFOLD, 14, "the state left its configuration constraints (|f| above 1000 times the tolerance, and above 1e-6): stabilize (baumgarte_alpha, baumgarte_beta) or tighten the tolerances")

/* X(symbol, value, name): the integration methods of cg_integrator_init */
#define CG_METHOD_LIST(X) \
    X(CG_RK4, 0, "rk4") \
    X(CG_DOPRI5, 1, "dopri5") \
    X(CG_ROSENBROCK, 2, "rosenbrock") \
    X(CG_ROSW, 3, "rosw") \
    X(CG_BDF, 4, "bdf") \
    X(CG_ALI3P, 5, "ali3p")

#define CG_ENUM_ITEM(symbol, value, text) symbol = value,
enum cg_status { CG_STATUS_LIST(CG_ENUM_ITEM) CG_N_STATUS };
enum cg_method { CG_METHOD_LIST(CG_ENUM_ITEM) CG_N_METHODS };
#undef CG_ENUM_ITEM

/* descriptor flags */
enum cg_flag {
    CG_SYMMETRIC = 1,   /* M is symmetric, stored as its packed lower triangle (else full, row-major) */
    CG_TREE = 2,        /* u' comes from the articulated-body recursion (tree), not from M */
    CG_UNROLLED = 4,    /* M u' = F has an unrolled L D L^T (ldl) */
    CG_QDOT_IS_U = 8    /* the speeds are the coordinates' rates: q' = u */
};

/* q' into qd, M, F and, for run-time constraints (nc > 0), A, B' into Bd and
   Baumgarte's term into S (A u' = B' + S); A, Bd, S are NULL otherwise */
typedef void (*cg_eval_fn)(double t, const double *x, const double *p, const double *r,
                           double *qd, double *M, double *F, double *A, double *Bd, double *S);
/* q' and u' by the recursion, the pivots (each > 0 for a positive definite M) into D */
typedef void (*cg_tree_fn)(double t, const double *x, const double *p, const double *r,
                           double *qd, double *ud, double *D);
/* M u' = F by the unrolled L D L^T: u' into F, the pivots into D */
typedef void (*cg_ldl_fn)(const double *M, double *F, double *D);
/* configuration constraints f(q, t) and their Jacobian f_q (nh x nq, row-major) */
typedef void (*cg_position_fn)(double t, const double *x, const double *p, const double *r,
                               double *f, double *fq);
/* A and B of the constraints A u = B (nc x nu, row-major; nc) */
typedef void (*cg_velocity_fn)(double t, const double *x, const double *p, const double *r,
                               double *A, double *B);
/* the analytic Jacobian's parts at x, u' = ud given: dq'/dx (nq x nx) into Jq,
   dF/dx - (dM/dx) ud (nu x nx) into R, and the same over r (nq x nr, nu x nr) */
typedef void (*cg_jacobian_fn)(double t, const double *x, const double *p, const double *r,
                               const double *ud, double *Jq, double *R, double *Jqr, double *Rr);
/* the same over the constants: dq'/dp (nq x np) into Jqp, dF/dp - (dM/dp) ud (nu x np)
   into Rp */
typedef void (*cg_parameter_jacobian_fn)(double t, const double *x, const double *p,
                                         const double *r, const double *ud, double *Jqp,
                                         double *Rp);

struct cg_model;
struct cg_integrator;

/* The runtime's entry points as a table (their meaning: cg_runtime.h). The
   shared runtime's is cg_runtime_shared; a fused build carries its own,
   specialized for the model, in its descriptor. */
typedef struct cg_runtime {
    int (*rhs)(const struct cg_model *m, double t, const double *x, const double *p,
               const double *r, double *dx);
    void (*mass_matrix)(const struct cg_model *m, double t, const double *x, const double *p,
                        const double *r, double *M);
    void (*forcing)(const struct cg_model *m, double t, const double *x, const double *p,
                    const double *r, double *F);
    int (*constraint_forces)(const struct cg_model *m, double t, const double *x,
                             const double *p, const double *r, double *lambda);
    void (*residuals)(const struct cg_model *m, double t, const double *x, const double *p,
                      const double *r, double *res);
    int (*project)(const struct cg_model *m, double t, const double *x, const double *p,
                   const double *r, double tol, int maxiter, double *xout);
    int (*jacobian)(const struct cg_model *m, double t, const double *x, const double *p,
                    const double *r, double *J, double *Jr);
    int (*parameter_jacobian)(const struct cg_model *m, double t, const double *x,
                              const double *p, const double *r, double *Jp);
    size_t (*integrator_size)(const struct cg_model *m);
    int (*integrator_init)(struct cg_integrator *s, const struct cg_model *m, int method,
                           double t0, const double *x0, const double *p, int n_table,
                           const double *t_table, const double *r_table, double rtol,
                           double atol, double dt);
    int (*integrate_to)(struct cg_integrator *s, double t_out, double *x_out);
    void (*integrator_stats)(const struct cg_integrator *s, long *steps, long *rejected,
                             long *nfev, double *t);
    void (*integrator_set)(struct cg_integrator *s, long max_steps, int hold, long pause);
} cg_runtime;

typedef struct cg_model {
    int abi_version;                   /* CG_ABI_VERSION of the model's build */
    const char *name;
    int nq, nu, nx, np, nr;            /* coordinates, speeds, states, constants, inputs */
    int nc, nh;                        /* run-time constraint rows, of which holonomic */
    int nm;                            /* stored entries of M (see CG_SYMMETRIC) */
    int flags;                         /* cg_flag */
    double rank_rtol;                  /* constraints: singular values below this share of the largest are zero */
    long operation_count;              /* of the equations, after common subexpressions */
    const char *const *state_names;    /* nx, np, nr names, each table NULL-terminated */
    const char *const *constant_names;
    const char *const *specified_names;
    cg_eval_fn eval;
    cg_tree_fn tree;                   /* NULL unless CG_TREE */
    cg_ldl_fn ldl;                     /* NULL unless CG_UNROLLED */
    cg_position_fn position;           /* NULL unless nh > 0 */
    cg_velocity_fn velocity;           /* NULL unless nc > 0 */
    cg_jacobian_fn jacobian;           /* NULL with run-time constraints */
    cg_parameter_jacobian_fn parameter_jacobian;   /* NULL unless asked for */
    const cg_runtime *runtime;         /* a fused build's own runtime, else NULL (the shared one) */
} cg_model;

#ifdef __cplusplus
}
#endif

#endif /* CG_MODEL_H */
