/*
 * cg_runtime.h -- the codegen runtime: what every generated model shares.
 *
 * Compiled once (into the Python package's extension, or beside the
 * model's C in a standalone export or an FMU), and driven by a model's
 * descriptor (cg_model.h). Arrays follow the descriptor's sizes:
 *   x [nx] states, p [np] constants, r [nr] specified inputs (may be NULL
 *   when nr is 0), dx [nx] = [q', u'].
 * Every function is reentrant: no globals, no static buffers, no
 * allocation (working arrays live on the stack or in the caller's
 * cg_integrator). Return codes are enum cg_status.
 */
#ifndef CG_RUNTIME_H
#define CG_RUNTIME_H

#include "cg_model.h"

#ifndef CG_API
#define CG_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* the shared runtime's entry points as a table (cg_model.h's CG_RUNTIME_LIST, in the
   order of the functions below); a descriptor's runtime, when not NULL, replaces it */
extern const cg_runtime cg_runtime_shared;

/* the text of a status code; the name of an integration method (NULL if unknown) and its
   properties (enum cg_method_property; -1 if unknown) */
const char *cg_status_message(int code);
const char *cg_method_name(int method);
int cg_method_properties(int method);

/* CG_OK if the runtime can drive this model (its ABI version), else CG_ERR_INPUT */
CG_API int cg_check_model(const cg_model *m);

/* dx = [q', u'], u' solved from M u' = F (or by the model's recursion, or, with
   run-time constraints, by the SVD null-space elimination of Singh & Likins) */
CG_API int cg_rhs(const cg_model *m, double t, const double *x, const double *p, const double *r,
           double *dx);
/* cg_rhs for a caller that has validated its inputs: no finiteness check of x, p, r or
   dx, and no check of the unrolled L D L^T's pivots, so NaN in gives NaN out and a
   model whose M is not positive definite gives garbage; CG_OK, or CG_ERR_MASS where a
   loop factorization fails. A model with run-time constraints keeps cg_rhs's checks. */
CG_API int cg_rhs_unchecked(const cg_model *m, double t, const double *x, const double *p,
                            const double *r, double *dx);
/* M (nu x nu, row-major; by the model's mass program, the composite-rigid-body
   algorithm, where it has one, else from eval) and F (nu) */
CG_API void cg_mass_matrix(const cg_model *m, double t, const double *x, const double *p,
                    const double *r, double *M);
/* M as the model forms it, into Mp (m->nm entries, the count returned): where M is
   symmetric (CG_SYMMETRIC) its lower triangle packed row by row, M[i][j] (j <= i) at
   i (i + 1) / 2 + j, else the full M row-major; no copy into the square */
CG_API int cg_mass_matrix_packed(const cg_model *m, double t, const double *x, const double *p,
                                 const double *r, double *Mp);
CG_API void cg_forcing(const cg_model *m, double t, const double *x, const double *p, const double *r,
                double *F);
/* inverse dynamics: tau = M ud - F (nu) for the given u' = ud (nu), the generalized
   forces that would give those accelerations (for joint speeds, the joint torques): the
   model's own program (the recursive Newton-Euler passes over a tree of bodies), else M
   and F formed. CG_ERR_INPUT for a non-finite input, CG_ERR_OUTPUT for a non-finite tau */
CG_API int cg_inverse_dynamics(const cg_model *m, double t, const double *x, const double *p,
                               const double *r, const double *ud, double *tau);
/* cg_inverse_dynamics without the finiteness checks of its inputs and of tau (CG_OK),
   for a caller that validates once; a model without its own inverse-dynamics program
   keeps the checks */
CG_API int cg_inverse_dynamics_unchecked(const cg_model *m, double t, const double *x,
                                         const double *p, const double *r, const double *ud,
                                         double *tau);

/* the analytic Jacobian of dx: J = d dx / dx (nx x nx, row-major) and, unless Jr is
   NULL, Jr = d dx / dr (nx x nr): the model's derivative parts, then M's factorization
   (CG_ERR_NO_JACOBIAN for a model with run-time constraints) */
CG_API int cg_jacobian(const cg_model *m, double t, const double *x, const double *p,
                       const double *r, double *J, double *Jr);
/* Jp = d dx / dp (nx x np, row-major), the parameter sensitivities, the same way
   (CG_ERR_NO_JACOBIAN unless the model was built with them) */
CG_API int cg_parameter_jacobian(const cg_model *m, double t, const double *x, const double *p,
                                 const double *r, double *Jp);

/* run-time constraints (nc > 0): the multipliers lambda (nc) with A^T lambda = M u' - F;
   res = [f(q, t) (nh); A u - B (nc)]; and x moved onto the constraints (Newton on f with
   the pseudoinverse of f_q until max|f| <= tol, then the speeds by least norm onto
   A u = B): CG_ERR_PROJECT if maxiter steps did not reach tol, CG_ERR_SVD, CG_ERR_INPUT
   for a model without constraints or a non-finite input, CG_ERR_OUTPUT for a non-finite
   value on the way */
CG_API int cg_constraint_forces(const cg_model *m, double t, const double *x, const double *p,
                         const double *r, double *lambda);
CG_API void cg_residuals(const cg_model *m, double t, const double *x, const double *p,
                  const double *r, double *res);
CG_API int cg_project(const cg_model *m, double t, const double *x, const double *p, const double *r,
               double tol, int maxiter, double *xout);

/* the model's outputs y (ny, in output_names' order): its generated outputs, then under
   CG_OUTPUT_FORCES the constraint forces lambda (the last nc). CG_ERR_OUTPUT where one
   is not finite */
CG_API int cg_outputs(const cg_model *m, double t, const double *x, const double *p,
                      const double *r, double *y);
/* the state just after the impact of event k (0 <= k < ne, an event with impact rows):
   Newton's law at its contact point, M (u+ - u) = J^T Lambda with J u+ = -e J u (J: the
   point's partial velocities along each normal, e: the restitution), q unchanged; x
   itself where the point does not approach (the first normal's velocity is not < 0).
   CG_ERR_IMPACT when J M^-1 J^T is singular (the point cannot move along a normal),
   CG_ERR_INPUT for an event without impact, CG_ERR_MASS for a singular M */
CG_API int cg_impact(const cg_model *m, int event, double t, const double *x, const double *p,
                     const double *r, double *xout);

/*
 * Integrators: fixed-step RK4, adaptive Dormand-Prince 5(4) with dense output,
 * and for stiff models Rosenbrock 4(3) (a finite-difference Jacobian every
 * step), the Rosenbrock-W method ROS34PW2 (one Jacobian kept over up to
 * CG_JAC_REUSE steps) and variable-order BDF (NDF orders 1-5; J kept while
 * Newton converges); for closed loops through singular positions the
 * fixed-step ALI3-P. Their properties are cg_model.h's CG_METHOD_LIST. The
 * state lives in caller-provided memory of cg_integrator_size(m) bytes
 * (aligned for double):
 *
 *   cg_integrator *s = malloc(cg_integrator_size(m));
 *   cg_integrator_init(s, m, CG_DOPRI5, t0, x0, p, 0, 0, 0, 1e-8, 1e-8, 0.0);
 *   for each output time t_k: cg_integrate_to(s, t_k, x_k);
 *   cg_integrator_warning(s): CG_NEAR_SINGULAR or CG_OK
 *
 * Specified inputs during the run: a table of n_table ascending times and
 * n_table rows of nr values, held piecewise constant (the default) or
 * linearly interpolated (cg_integrator_set), held beyond its ends; n_table = 0
 * means no inputs (allowed only when nr is 0). The table and p are read, not
 * copied: keep them alive and unchanged during the run (a table of one row, a
 * constant, is read once, here).
 */
#define CG_JAC_REUSE 20
/* two times within CG_T_SAME of max(|t|, 1) are the same: a fixed-step run has reached
   an output time, an FMU's communication point continues the run */
#define CG_T_SAME 1e-12
typedef struct cg_integrator cg_integrator;

CG_API size_t cg_integrator_size(const cg_model *m);
/* dt: the fixed step (CG_FIXED_STEP); for the adaptive methods the first step (0 =
   automatic). CG_ERR_INPUT if t0, x0, p or the table is not finite (checked once,
   here), dt or the tolerances the method reads are not positive; CG_ERR_METHOD if
   the model lacks a flag the method needs */
CG_API int cg_integrator_init(cg_integrator *s, const cg_model *m, int method, double t0,
                       const double *x0, const double *p, int n_table, const double *t_table,
                       const double *r_table, double rtol, double atol, double dt);
/* advance to t_out (forward only) and write x(t_out); the adaptive methods step past
   it and interpolate, the fixed-step ones land on it. CG_PAUSED: the call's step
   budget ran out; call again with the same t_out to go on (the steps, and so the
   results, are those of an unpaused run) */
CG_API int cg_integrate_to(cg_integrator *s, double t_out, double *x_out);
/* accepted steps, rejected steps, RHS evaluations and the time reached */
CG_API void cg_integrator_stats(const cg_integrator *s, long *steps, long *rejected, long *nfev,
                         double *t);
/* the state the run has reached (its last accepted step's end) into x; returns its time
   (after a failure: the last good state, where the failure can be looked at) */
CG_API double cg_integrator_state(const cg_integrator *s, double *x);
/* the run's step budget (default CG_MAX_STEPS), hold = 1 (piecewise constant inputs) or 0
   (interpolated), and the steps one cg_integrate_to call may take (0 = no limit) */
CG_API void cg_integrator_set(cg_integrator *s, long max_steps, int hold, long pause);
/* run-time constraints: the lowest s_k / s_1 of A's singular values met by the run's
   right-hand sides, k the rank at the start (1 without constraints), and its time:
   near 0, the run passed by a singular position, where the SVD elimination, not the
   momentum, chose the branch followed (1 for ali3p, which does not use the elimination) */
CG_API double cg_integrator_nearest_singular(const cg_integrator *s, double *t);
/* the run's warning so far: CG_NEAR_SINGULAR when that ratio fell below
   CG_NEAR_SINGULAR_RATIO (the trajectory is whole, but its branch was the SVD's choice),
   else CG_OK */
CG_API int cg_integrator_warning(const cg_integrator *s);

/*
 * What a run does besides integrating (see the guide's "Outputs, events, impacts and
 * feedback"):
 *
 * Feedback: the inputs at every right-hand side are the table's, then, with K (nr x nx,
 * row-major), r - K (x - x_ref) (x_ref NULL: zero) by the model's feedback function
 * (CG_ERR_INPUT for a descriptor without one), then the controller's (NULL: none),
 * which may overwrite r (cg_model.h's cg_controller_fn). K and data are read, not copied
 * (x_ref is read here, once); set them before the first step (the derivative at the start is evaluated again,
 * with its status returned). A non-finite input ends the run with CG_ERR_CONTROL. The
 * implicit methods form
 * J - Jr K with K alone, and differences with a controller function; ali3p holds the
 * inputs over each step at their value at its start.
 *
 * Events: cg_integrator_events asks the run to locate the sign changes of n of the
 * model's event functions (index[i] in 0 .. ne - 1; direction[i] = +1 for rising, -1
 * for falling, 0 for both; terminal[i] 0 or 1), on the method's dense output (a cubic
 * Hermite between a fixed step's ends), each to CG_EVENT_TOL (1 + |t|) in t. A sign
 * change is between values of opposite signs: a function at exactly 0 where the run
 * starts has no sign until it leaves 0. cg_integrate_to then returns CG_EVENT at each
 * event, in time order, before any output time after it; cg_integrator_event gives its
 * model index, time and state, and returns whether it is terminal. Call
 * cg_integrate_to again to go on; after a terminal event, either stop or go on from a
 * new state at the event's time with cg_integrator_restart (the method starts afresh
 * there, the counters and settings stay; the event that caused it has no sign until its
 * function leaves 0), for example the state cg_impact gives.
 */
CG_API int cg_integrator_control(cg_integrator *s, const double *K, const double *x_ref,
                                 cg_controller_fn controller, void *data);
CG_API int cg_integrator_events(cg_integrator *s, int n, const int *index, const int *direction,
                                const int *terminal);
CG_API int cg_integrator_event(const cg_integrator *s, int *index, double *t, double *x);
CG_API int cg_integrator_restart(cg_integrator *s, double t, const double *x);
/* the state after the last event's impact: cg_impact at its time and state, with the
   run's inputs there */
CG_API int cg_integrator_impact(cg_integrator *s, double *xout);
/* the outputs at (t, x) with the run's inputs there (its table and feedback) */
CG_API int cg_integrator_outputs(cg_integrator *s, double t, const double *x, double *y);

/* cg_rhs as void f(double t, double *u, double *du, void *data) (numbalsoda's signature):
   data = [the model's address in the first 8 bytes, p (np values), r (nr values)];
   du is NaN where cg_rhs fails, so that the calling solver stops */
CG_API void cg_rhs_cb(double t, double *u, double *du, void *data);

#ifdef __cplusplus
}
#endif

#endif /* CG_RUNTIME_H */
