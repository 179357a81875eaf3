/*
 * Run-time constraints A(q, t) u = B(q, t): ${NAME}_NC rows, the first
 * ${NAME}_NH from the configuration constraints f(q, t) = 0. They are
 * eliminated inside ${name}_rhs (SVD null-space method); the constants
 * baumgarte_alpha (and baumgarte_beta) in p set the stabilization
 * A u' = B' - 2 alpha (A u - B) - beta^2 f (0 switches it off).
 */
#define ${NAME}_NC ${nc}
#define ${NAME}_NH ${nh}

/* lambda with A^T lambda = M u' - F (${NAME}_NC entries). Returns ${NAME}_OK or an error code. */
int ${name}_constraint_forces(double t, const double *x, const double *p, const double *r, double *lambda);

/* res = [f(q, t) (${NAME}_NH entries); A u - B (${NAME}_NC entries)]. */
void ${name}_residuals(double t, const double *x, const double *p, const double *r, double *res);

/* xout = x moved onto the constraints: Newton on f(q, t) = 0 with the pseudoinverse of
 * f_q until max|f| <= tol, then u corrected by least norm onto A u = B. Returns the Newton
 * iterations taken, -1 if maxiter did not reach tol, -2 for a non-finite value. */
int ${name}_project(double t, const double *x, const double *p, const double *r, double tol,
                    int maxiter, double *xout);
