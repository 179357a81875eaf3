/*
 * cg_model.h -- the contract between a generated model and the codegen runtime,
 * in one place.
 *
 * A generated model is C that evaluates its equations, plus one descriptor,
 * `const cg_model *<name>_model(void)`, that tells programs everything about
 * it: this ABI version, the sizes, the name tables, the flags and the
 * function pointers. The runtime (cg_runtime.h: the right-hand side with its
 * solve, the constraint elimination, the integrators) works on any
 * descriptor.
 *
 * Every list of the contract is an X-macro below, written once: the status
 * codes with their texts, the descriptor's flags, the integration methods
 * with their properties, the kinds of generated function with their
 * signatures, and the runtime's entry points. C expands them here (the enums,
 * the typedefs, the descriptor's fields, the runtime's table) and in the
 * runtime (its texts, its method table); codegen.abi reads this file, so
 * that Python renders the same lists into the generated C (function.j2's
 * signatures, the descriptor's pointer order), the Cython declarations
 * (codegen/_contract.pxi) and its own checks. To add a status, a flag, a
 * method, a kind of function or an entry point, add its line to the list;
 * bump CG_ABI_VERSION when the descriptor or the runtime's table changes.
 */
#ifndef CG_MODEL_H
#define CG_MODEL_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* a model built against another version is refused by the runtime and rebuilt by the cache */
#define CG_ABI_VERSION 14

/* a macro's value as a string literal, for the texts below */
#define CG_STR(x) CG_STR_(x)
#define CG_STR_(x) #x

/* After every step of a model with configuration constraints, |f| must stay within
   CG_MANIFOLD_FACTOR times the run's tolerance (the larger of rtol and atol) and never
   less than CG_MANIFOLD_TOL, what simulate asks of a start (CG_ERR_MANIFOLD). */
#define CG_MANIFOLD_TOL 1e-6
#define CG_MANIFOLD_FACTOR 1e3
/* A run whose constraint matrix's s_k / s_1 (k: the rank at the start) fell below this
   passed by a singular position (CG_NEAR_SINGULAR, cg_integrator_warning) */
#define CG_NEAR_SINGULAR_RATIO 1e-2
/* the steps (accepted and rejected) a run may take, unless cg_integrator_set says otherwise */
#define CG_MAX_STEPS 10000000L
/* an event's time is located to within CG_EVENT_TOL (1 + |t|) on the dense output (four
   units in the last place, as SciPy's solve_ivp asks of its root finder) */
#define CG_EVENT_TOL 8.9e-16

/* X(symbol, value, message): every status code. The runtime's functions return the
   codes from 0 up; the negative ones are given by the Python side */
#define CG_STATUS_LIST(X) \
    X(CG_REDUCE_FAILED, -3, "the sweep's reduction raised") \
    X(CG_INTERRUPTED, -1, "interrupted") \
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
    X(CG_NEAR_SINGULAR, 13, "the run passed by a singular position of the constraints (s_k / s_1 below " CG_STR(CG_NEAR_SINGULAR_RATIO) "), where the SVD elimination, not the motion, chose the branch followed (method='ali3p' follows the motion)") \
    X(CG_ERR_MANIFOLD, 14, "the state left its configuration constraints (|f| above " CG_STR(CG_MANIFOLD_FACTOR) " times the tolerance, and above " CG_STR(CG_MANIFOLD_TOL) "): stabilize (baumgarte_alpha, baumgarte_beta) or tighten the tolerances") \
    X(CG_ERR_PROJECT, 15, "the projection onto the constraints did not reach its tolerance in maxiter Newton steps") \
    X(CG_EVENT, 16, "an event was located (cg_integrator_event says which); call cg_integrate_to again to go on") \
    X(CG_TERMINAL_EVENT, 17, "a terminal event ended the run") \
    X(CG_MAX_EVENTS, 18, "the run ended at its max_events-th event") \
    X(CG_ERR_CONTROL, 19, "the controller gave a non-finite input") \
    X(CG_ERR_IMPACT, 20, "the impact's contact Jacobian is zero here (J M^-1 J^T is singular): the contact point cannot move along its normal") \
    X(CG_ERR_RESET, 21, "the state after the reset is not finite")

/* X(symbol, value, meaning): the descriptor's flags */
#define CG_FLAG_LIST(X) \
    X(CG_SYMMETRIC, 1, "M is symmetric, stored as its packed lower triangle (else full, row-major)") \
    X(CG_TREE, 2, "u' comes from the articulated-body recursion (tree), not from M") \
    X(CG_UNROLLED, 4, "M u' = F has an unrolled L D L^T (ldl)") \
    X(CG_QDOT_IS_U, 8, "the speeds are the coordinates' rates: q' = u") \
    X(CG_HOLONOMIC, 16, "run-time constraints, every row from a configuration constraint (0 < nh == nc)") \
    X(CG_OUTPUT_FORCES, 32, "the last nc outputs are the constraint forces lambda, which the runtime computes (cg_outputs)") \
    X(CG_JACOBIAN_UD, 64, "the jacobian function solves u' itself, into ud (else it reads u' there)")

/* X(symbol, value, meaning): the properties of an integration method */
#define CG_PROPERTY_LIST(X) \
    X(CG_FIXED_STEP, 1, "steps of dt (> 0), the last before each output time stretched or shortened to land on it; else adaptive steps to rtol and atol, with a dense output") \
    X(CG_TOLERANCES, 2, "reads rtol and atol (each > 0)") \
    X(CG_FORMS_JACOBIAN, 4, "forms df/dx: the model's analytic Jacobian, else by differences") \
    X(CG_KEEPS_BRANCH, 8, "keeps run-time constraints by its own projections, not by the SVD elimination, and so follows the motion through singular positions (never CG_NEAR_SINGULAR)")

/* X(symbol, value, name, properties, needs): the integration methods of
   cg_integrator_init, their properties and the flags a model needs for them
   (else CG_ERR_METHOD) */
#define CG_METHOD_LIST(X) \
    X(CG_RK4, 0, "rk4", CG_FIXED_STEP, 0) \
    X(CG_DOPRI5, 1, "dopri5", CG_TOLERANCES, 0) \
    X(CG_ROSENBROCK, 2, "rosenbrock", CG_TOLERANCES | CG_FORMS_JACOBIAN, 0) \
    X(CG_ROSW, 3, "rosw", CG_TOLERANCES | CG_FORMS_JACOBIAN, 0) \
    X(CG_BDF, 4, "bdf", CG_TOLERANCES | CG_FORMS_JACOBIAN, 0) \
    X(CG_ALI3P, 5, "ali3p", CG_FIXED_STEP | CG_TOLERANCES | CG_KEEPS_BRANCH, \
      CG_HOLONOMIC | CG_QDOT_IS_U | CG_SYMMETRIC)

#define CG_ENUM_ITEM(symbol, value, text) symbol = value,
#define CG_METHOD_ITEM(symbol, value, name, properties, needs) symbol = value,
enum cg_status { CG_STATUS_LIST(CG_ENUM_ITEM) CG_N_STATUS };   /* CG_N_STATUS: above every code */
enum cg_flag { CG_FLAG_LIST(CG_ENUM_ITEM) };
enum cg_method_property { CG_PROPERTY_LIST(CG_ENUM_ITEM) };
enum cg_method { CG_METHOD_LIST(CG_METHOD_ITEM) CG_N_METHODS };
#undef CG_METHOD_ITEM
#undef CG_ENUM_ITEM

/* the arguments every model function of time and state takes first */
#define CG_MODEL_INPUTS double t, const double *x, const double *p, const double *r

/* an output its caller may pass as NULL: the function then forms none of it */
#define CG_OPTIONAL

/* X(kind, parameters): the functions a generated model provides. Each kind is the
   type cg_<kind>_fn and the descriptor's field <kind>, in this order, NULL where the
   model has none. Its outputs are its non-const pointers, the arrays it writes. */
#define CG_FUNCTION_LIST(X) \
    /* q' into qd, M, F and, for run-time constraints (nc > 0), A, B' into Bd and \
       Baumgarte's term into S (A u' = B' + S); A, Bd, S are NULL otherwise. Never NULL */ \
    X(eval, (CG_MODEL_INPUTS, double *qd, double *M, double *F, double *A, double *Bd, \
             double *S)) \
    /* the mass matrix alone into M (stored as eval's), by the composite-rigid-body \
       algorithm over the tree of bodies; NULL where the model has none (the runtime \
       then takes M from eval) */ \
    X(mass, (CG_MODEL_INPUTS, double *M)) \
    /* q' and u' by the recursion, the pivots (each > 0 for a positive definite M) into \
       D; NULL unless CG_TREE */ \
    X(tree, (CG_MODEL_INPUTS, double *qd, double *ud, double *D)) \
    /* M u' = F by the unrolled L D L^T: u' into F, the pivots into D; NULL unless \
       CG_UNROLLED */ \
    X(ldl, (const double *M, double *F, double *D)) \
    /* eval and ldl in one call, M's entries kept from the one for the other instead of \
       stored and loaded again: q' into qd, u' into ud, the pivots into D and M's \
       diagonal into Md (for the pivots' check); NULL unless CG_UNROLLED, nc is 0, eval \
       is small enough to inline and M large enough beside it (codegen.emit.sources) */ \
    X(eval_ldl, (CG_MODEL_INPUTS, double *qd, double *ud, double *D, double *Md)) \
    /* configuration constraints f(q, t) and their Jacobian f_q (nh x nq, row-major); \
       NULL unless nh > 0 */ \
    X(position, (CG_MODEL_INPUTS, double *f, double *fq)) \
    /* A and B of the constraints A u = B (nc x nu, row-major; nc); NULL unless nc > 0 */ \
    X(velocity, (CG_MODEL_INPUTS, double *A, double *B)) \
    /* the analytic Jacobian's parts at x and u' (given in ud, or under CG_JACOBIAN_UD \
       solved into it): dq'/dx (nq x nx) into Jq, dF/dx - (dM/dx) u' (nu x nx) into R, \
       and the same over r (nq x nr, nu x nr; NULL for none: cg_jacobian without Jr); \
       under CG_JACOBIAN_UD also M's factor into L (nl entries) for the columns \
       function. With a columns function, R's zeros that it writes before reading \
       them (state 1) may be left unwritten: R is for it to solve in place. NULL \
       with run-time constraints */ \
    X(jacobian, (CG_MODEL_INPUTS, double *ud, double *Jq, double *R, \
                 double *CG_OPTIONAL Jqr, double *CG_OPTIONAL Rr, double *L)) \
    /* the same over the constants: dq'/dp (nq x np) into Jqp, dF/dp - (dM/dp) ud \
       (nu x np) into Rp; NULL unless asked for */ \
    X(parameter_jacobian, (CG_MODEL_INPUTS, const double *ud, double *Jqp, double *Rp)) \
    /* B <- M^-1 B at x for a block B of w columns (nu x w, row-major), by the \
       articulated-body recursion or M's factors column by column: the Jacobian's solve \
       where it costs less than the dense one; NULL otherwise (cg_jacobian then factors \
       M). state: 1 when B is the Jacobian's R (w = nx), whose columns are zero by \
       structure off the rows of their joint's path to the root and subtree, which \
       the function may skip; 0 for any other block. L: M's factor as the jacobian \
       function left it, where the columns function reads it (nl > 0 and the model \
       has no parameter_jacobian); else unused (NULL) */ \
    X(columns, (CG_MODEL_INPUTS, double *B, int w, int state, const double *L)) \
    /* the outputs the model was generated with (ny entries, output_names; without the \
       constraint forces the runtime appends under CG_OUTPUT_FORCES); NULL if none */ \
    X(outputs, (CG_MODEL_INPUTS, double *y)) \
    /* the event functions g (ne entries, event_names), whose sign changes the \
       integrators locate; NULL if none */ \
    X(events, (CG_MODEL_INPUTS, double *g)) \
    /* the impacts' contact Jacobians: for each of the nj rows (the rows of event k are \
       impact_start[k] .. impact_start[k + 1] - 1), the partial velocities of the contact \
       point along a normal over the speeds into J (nj x nu, row-major), that velocity \
       into vn and the coefficient of restitution into e; NULL if no event has an impact */ \
    X(impacts, (CG_MODEL_INPUTS, double *J, double *vn, double *e)) \
    /* inverse dynamics: tau = M ud - F at x for the given u' (nu each), by the \
       recursive Newton-Euler passes over the tree of bodies (or M and F formed); NULL \
       with run-time constraints */ \
    X(inverse_dynamics, (CG_MODEL_INPUTS, const double *ud, double *tau)) \
    /* the linear feedback law r = c - K x (K: nr x nx, row-major), unrolled over the \
       model's sizes: the runtime's K law at every right-hand side \
       (cg_integrator_control); NULL if nr is 0 */ \
    X(feedback, (const double *x, const double *K, const double *c, double *r))

#define CG_FUNCTION_TYPE(kind, parameters) typedef void (*cg_##kind##_fn) parameters;
CG_FUNCTION_LIST(CG_FUNCTION_TYPE)
#undef CG_FUNCTION_TYPE

struct cg_model;
struct cg_integrator;

/* X(name, parameters): the functions a caller gives the runtime, each the type
   cg_<name>_fn. controller: a feedback law run at every right-hand side of an
   integration (cg_integrator_control): r holds the inputs of the moment (the table's, or
   the linear law's) on entry, and the law writes the inputs to apply there; data is the
   pointer given with it */
#define CG_CALLBACK_LIST(X) \
    X(controller, (double t, const double *x, const double *p, double *r, void *data))

#define CG_CALLBACK_TYPE(name, parameters) typedef void (*cg_##name##_fn) parameters;
CG_CALLBACK_LIST(CG_CALLBACK_TYPE)
#undef CG_CALLBACK_TYPE

/* X(type, name, parameters): the runtime's entry points, cg_<name> in cg_runtime.h
   (their meaning is there), and in this order the fields of cg_runtime */
#define CG_RUNTIME_LIST(X) \
    X(int, rhs, (const struct cg_model *m, CG_MODEL_INPUTS, double *dx)) \
    X(void, mass_matrix, (const struct cg_model *m, CG_MODEL_INPUTS, double *M)) \
    X(void, forcing, (const struct cg_model *m, CG_MODEL_INPUTS, double *F)) \
    X(int, constraint_forces, (const struct cg_model *m, CG_MODEL_INPUTS, double *lambda)) \
    X(void, residuals, (const struct cg_model *m, CG_MODEL_INPUTS, double *res)) \
    X(int, project, (const struct cg_model *m, CG_MODEL_INPUTS, double tol, int maxiter, \
                     double *xout)) \
    X(int, jacobian, (const struct cg_model *m, CG_MODEL_INPUTS, double *J, double *Jr)) \
    X(int, parameter_jacobian, (const struct cg_model *m, CG_MODEL_INPUTS, double *Jp)) \
    X(size_t, integrator_size, (const struct cg_model *m)) \
    X(int, integrator_init, (struct cg_integrator *s, const struct cg_model *m, int method, \
                             double t0, const double *x0, const double *p, int n_table, \
                             const double *t_table, const double *r_table, double rtol, \
                             double atol, double dt)) \
    X(int, integrate_to, (struct cg_integrator *s, double t_out, double *x_out)) \
    X(void, integrator_stats, (const struct cg_integrator *s, long *steps, long *rejected, \
                               long *nfev, double *t)) \
    X(void, integrator_set, (struct cg_integrator *s, long max_steps, int hold, long pause)) \
    X(int, outputs, (const struct cg_model *m, CG_MODEL_INPUTS, double *y)) \
    X(int, impact, (const struct cg_model *m, int event, CG_MODEL_INPUTS, double *xout)) \
    X(int, integrator_control, (struct cg_integrator *s, const double *K, const double *x_ref, \
                                cg_controller_fn controller, void *data)) \
    X(int, integrator_events, (struct cg_integrator *s, int n, const int *index, \
                               const int *direction, const int *terminal)) \
    X(int, integrator_event, (const struct cg_integrator *s, int *index, double *t, double *x)) \
    X(int, integrator_restart, (struct cg_integrator *s, double t, const double *x)) \
    X(int, integrator_impact, (struct cg_integrator *s, double *xout)) \
    X(int, integrator_outputs, (struct cg_integrator *s, double t, const double *x, double *y)) \
    X(int, inverse_dynamics, (const struct cg_model *m, CG_MODEL_INPUTS, const double *ud, \
                              double *tau))

/* The runtime's entry points as a table. The shared runtime's is cg_runtime_shared; a
   fused build carries its own, specialized for the model, in its descriptor. */
#define CG_RUNTIME_FIELD(type, name, parameters) type (*name) parameters;
typedef struct cg_runtime {
    CG_RUNTIME_LIST(CG_RUNTIME_FIELD)
} cg_runtime;
#undef CG_RUNTIME_FIELD

#define CG_FUNCTION_FIELD(kind, parameters) cg_##kind##_fn kind;
typedef struct cg_model {
    int abi_version;                   /* CG_ABI_VERSION of the model's build */
    const char *name;
    int nq, nu, nx, np, nr;            /* coordinates, speeds, states, constants, inputs */
    int nc, nh;                        /* run-time constraint rows, of which holonomic */
    int nm;                            /* stored entries of M (see CG_SYMMETRIC) */
    int flags;                         /* enum cg_flag */
    double rank_rtol;                  /* constraints: singular values below this share of the largest are zero */
    long operation_count;              /* of the equations, after common subexpressions */
    const char *const *state_names;    /* nx, np, nr names, each table NULL-terminated */
    const char *const *constant_names;
    const char *const *specified_names;
    CG_FUNCTION_LIST(CG_FUNCTION_FIELD)   /* the model's functions, by kind */
    const cg_runtime *runtime;         /* a fused build's own runtime, else NULL (the shared one) */
    int ny, ne, nj;                    /* outputs, event functions, impact rows */
    const char *const *output_names;   /* ny and ne names, NULL-terminated */
    const char *const *event_names;
    const int *impact_start;           /* ne + 1 offsets into the impact rows (NULL if nj is 0) */
    int nl;                            /* entries of M's factor the jacobian function leaves in L */
} cg_model;
#undef CG_FUNCTION_FIELD

#ifdef __cplusplus
}
#endif

#endif /* CG_MODEL_H */
