# Cython's declarations of the C contract, rendered from templates/runtime/cg_model.h by
# templates/python/contract.pxi.j2 (codegen.emit.render.cython_contract()). Do not edit: change the
# header, then render this file again; tests/runtime/test_runtime_abi.py checks that it is current.

cdef extern from "cg_model.h":
    long CG_ABI_VERSION
    double CG_MANIFOLD_TOL
    double CG_MANIFOLD_FACTOR
    double CG_NEAR_SINGULAR_RATIO
    long CG_MAX_STEPS
    double CG_EVENT_TOL
    int CG_REDUCE_FAILED
    int CG_INTERRUPTED
    int CG_OK
    int CG_ERR_INPUT
    int CG_ERR_MASS
    int CG_ERR_OUTPUT
    int CG_ERR_SVD
    int CG_ERR_STEPS
    int CG_ERR_STEPSIZE
    int CG_ERR_JACOBIAN
    int CG_PAUSED
    int CG_ERR_KINEMATICS
    int CG_ERR_NO_JACOBIAN
    int CG_ERR_NEWTON
    int CG_ERR_METHOD
    int CG_NEAR_SINGULAR
    int CG_ERR_MANIFOLD
    int CG_ERR_PROJECT
    int CG_EVENT
    int CG_TERMINAL_EVENT
    int CG_MAX_EVENTS
    int CG_ERR_CONTROL
    int CG_ERR_IMPACT
    int CG_ERR_RESET
    int CG_N_STATUS
    int CG_SYMMETRIC
    int CG_TREE
    int CG_UNROLLED
    int CG_QDOT_IS_U
    int CG_HOLONOMIC
    int CG_OUTPUT_FORCES
    int CG_JACOBIAN_UD
    int CG_FIXED_STEP
    int CG_TOLERANCES
    int CG_FORMS_JACOBIAN
    int CG_KEEPS_BRANCH
    int CG_RK4
    int CG_DOPRI5
    int CG_ROSENBROCK
    int CG_ROSW
    int CG_BDF
    int CG_ALI3P
    int CG_N_METHODS

    ctypedef struct cg_integrator "struct cg_integrator":
        pass

    ctypedef void (*cg_eval_fn)(double t, const double *x, const double *p, const double *r, double *qd, double *M, double *F, double *A, double *Bd, double *S) noexcept nogil
    ctypedef void (*cg_mass_fn)(double t, const double *x, const double *p, const double *r, double *M) noexcept nogil
    ctypedef void (*cg_tree_fn)(double t, const double *x, const double *p, const double *r, double *qd, double *ud, double *D) noexcept nogil
    ctypedef void (*cg_ldl_fn)(const double *M, double *F, double *D) noexcept nogil
    ctypedef void (*cg_eval_ldl_fn)(double t, const double *x, const double *p, const double *r, double *qd, double *ud, double *D, double *Md) noexcept nogil
    ctypedef void (*cg_position_fn)(double t, const double *x, const double *p, const double *r, double *f, double *fq) noexcept nogil
    ctypedef void (*cg_velocity_fn)(double t, const double *x, const double *p, const double *r, double *A, double *B) noexcept nogil
    ctypedef void (*cg_jacobian_fn)(double t, const double *x, const double *p, const double *r, double *ud, double *Jq, double *R, double *Jqr, double *Rr, double *L) noexcept nogil
    ctypedef void (*cg_parameter_jacobian_fn)(double t, const double *x, const double *p, const double *r, const double *ud, double *Jqp, double *Rp) noexcept nogil
    ctypedef void (*cg_columns_fn)(double t, const double *x, const double *p, const double *r, double *B, int w, int state, const double *L) noexcept nogil
    ctypedef void (*cg_outputs_fn)(double t, const double *x, const double *p, const double *r, double *y) noexcept nogil
    ctypedef void (*cg_events_fn)(double t, const double *x, const double *p, const double *r, double *g) noexcept nogil
    ctypedef void (*cg_impacts_fn)(double t, const double *x, const double *p, const double *r, double *J, double *vn, double *e) noexcept nogil
    ctypedef void (*cg_inverse_dynamics_fn)(double t, const double *x, const double *p, const double *r, const double *ud, double *tau) noexcept nogil
    ctypedef void (*cg_feedback_fn)(const double *x, const double *K, const double *c, double *r) noexcept nogil
    ctypedef void (*cg_controller_fn)(double t, const double *x, const double *p, double *r, void *data) noexcept nogil

    ctypedef struct cg_runtime:
        int (*rhs)(const cg_model *m, double t, const double *x, const double *p, const double *r, double *dx) noexcept nogil
        void (*mass_matrix)(const cg_model *m, double t, const double *x, const double *p, const double *r, double *M) noexcept nogil
        void (*forcing)(const cg_model *m, double t, const double *x, const double *p, const double *r, double *F) noexcept nogil
        int (*constraint_forces)(const cg_model *m, double t, const double *x, const double *p, const double *r, double *lambda_) noexcept nogil
        void (*residuals)(const cg_model *m, double t, const double *x, const double *p, const double *r, double *res) noexcept nogil
        int (*project)(const cg_model *m, double t, const double *x, const double *p, const double *r, double tol, int maxiter, double *xout) noexcept nogil
        int (*jacobian)(const cg_model *m, double t, const double *x, const double *p, const double *r, double *J, double *Jr) noexcept nogil
        int (*parameter_jacobian)(const cg_model *m, double t, const double *x, const double *p, const double *r, double *Jp) noexcept nogil
        size_t (*integrator_size)(const cg_model *m) noexcept nogil
        int (*integrator_init)(cg_integrator *s, const cg_model *m, int method, double t0, const double *x0, const double *p, int n_table, const double *t_table, const double *r_table, double rtol, double atol, double dt) noexcept nogil
        int (*integrate_to)(cg_integrator *s, double t_out, double *x_out) noexcept nogil
        void (*integrator_stats)(const cg_integrator *s, long *steps, long *rejected, long *nfev, double *t) noexcept nogil
        void (*integrator_set)(cg_integrator *s, long max_steps, int hold, long pause) noexcept nogil
        int (*outputs)(const cg_model *m, double t, const double *x, const double *p, const double *r, double *y) noexcept nogil
        int (*impact)(const cg_model *m, int event, double t, const double *x, const double *p, const double *r, double *xout) noexcept nogil
        int (*integrator_control)(cg_integrator *s, const double *K, const double *x_ref, cg_controller_fn controller, void *data) noexcept nogil
        int (*integrator_events)(cg_integrator *s, int n, const int *index, const int *direction, const int *terminal) noexcept nogil
        int (*integrator_event)(const cg_integrator *s, int *index, double *t, double *x) noexcept nogil
        int (*integrator_restart)(cg_integrator *s, double t, const double *x) noexcept nogil
        int (*integrator_impact)(cg_integrator *s, double *xout) noexcept nogil
        int (*integrator_outputs)(cg_integrator *s, double t, const double *x, double *y) noexcept nogil
        int (*inverse_dynamics)(const cg_model *m, double t, const double *x, const double *p, const double *r, const double *ud, double *tau) noexcept nogil

    ctypedef struct cg_model:
        int abi_version
        const char *name
        int nq
        int nu
        int nx
        int np
        int nr
        int nc
        int nh
        int nm
        int flags
        double rank_rtol
        long operation_count
        const char * const *state_names
        const char * const *constant_names
        const char * const *specified_names
        cg_eval_fn eval
        cg_mass_fn mass
        cg_tree_fn tree
        cg_ldl_fn ldl
        cg_eval_ldl_fn eval_ldl
        cg_position_fn position
        cg_velocity_fn velocity
        cg_jacobian_fn jacobian
        cg_parameter_jacobian_fn parameter_jacobian
        cg_columns_fn columns
        cg_outputs_fn outputs
        cg_events_fn events
        cg_impacts_fn impacts
        cg_inverse_dynamics_fn inverse_dynamics
        cg_feedback_fn feedback
        const cg_runtime *runtime
        int ny
        int ne
        int nj
        const char * const *output_names
        const char * const *event_names
        const int *impact_start
        int nl
