/* ---- variable-order BDF (NDF) ----------------------------------------------
   The quasi-constant step size numerical differentiation formulas of
   Shampine & Reichelt (MATLAB's ode15s), orders 1 to 5, in the difference
   form of SciPy's BDF: s->D holds the backward differences of the solution,
   rescaled whenever h changes; a simplified Newton iteration on
   (I - c J) dy = c f - psi - d with c = h / alpha_k; J (by differences) is
   kept until the Newton iteration fails to converge with it, and W's LU
   while h and the order stay. The order moves by one after k + 1 steps of
   equal size, to the neighbour whose error estimate allows the larger step. */
#define ${NAME}_BDF_MAX_ORDER 5
#define ${NAME}_BDF_NEWTON 4

/* kappa_k (Shampine & Reichelt's NDF), gamma_k = sum_{i<=k} 1/i,
   alpha_k = (1 - kappa_k) gamma_k and the error constants
   kappa_k gamma_k + 1 / (k + 1), for k = 0..5 */
#define ${NAME}_G1 1.0
#define ${NAME}_G2 (1.0 + 1.0 / 2.0)
#define ${NAME}_G3 (${NAME}_G2 + 1.0 / 3.0)
#define ${NAME}_G4 (${NAME}_G3 + 1.0 / 4.0)
#define ${NAME}_G5 (${NAME}_G4 + 1.0 / 5.0)
static const double ${name}_bdf_gamma[6] = {0.0, ${NAME}_G1, ${NAME}_G2, ${NAME}_G3, ${NAME}_G4,
                                            ${NAME}_G5};
static const double ${name}_bdf_alpha[6] = {
    0.0, (1.0 + 0.1850) * ${NAME}_G1, (1.0 + 1.0 / 9.0) * ${NAME}_G2, (1.0 + 0.0823) * ${NAME}_G3,
    (1.0 + 0.0415) * ${NAME}_G4, ${NAME}_G5};
static const double ${name}_bdf_error_const[6] = {
    1.0, -0.1850 * ${NAME}_G1 + 1.0 / 2.0, -1.0 / 9.0 * ${NAME}_G2 + 1.0 / 3.0,
    -0.0823 * ${NAME}_G3 + 1.0 / 4.0, -0.0415 * ${NAME}_G4 + 1.0 / 5.0, 1.0 / 6.0};

/* R(order, factor): the matrix that rescales backward differences to the step h * factor */
static void ${name}_bdf_R(int order, double factor, double R[6][6])
{
    static const double inv[6] = {0.0, 1.0, 1.0 / 2.0, 1.0 / 3.0, 1.0 / 4.0, 1.0 / 5.0};
    int i, j;
    for (j = 0; j <= order; j++) R[0][j] = 1.0;
    for (i = 1; i <= order; i++) {
        R[i][0] = 0.0;
        for (j = 1; j <= order; j++) R[i][j] = R[i - 1][j] * (i - 1 - factor * j) * inv[i];
    }
}

/* D[0..order] <- (R U)^T D[0..order]: the differences for the step h * factor.
   U = R(order, 1) is upper triangular and its own inverse, and column 0 of
   R U is e_0: D[0], the solution, stays, and a factor of 1 changes nothing. */
static void ${name}_bdf_rescale(${name}_integrator *s, double factor)
{
    double R[6][6], U[6][6], RU[6][6], old[6];
    const int order = s->order;
    int i, j, k, n;
    if (factor == 1.0) return;
    ${name}_bdf_R(order, factor, R);
    ${name}_bdf_R(order, 1.0, U);
    for (i = 0; i <= order; i++)
        for (j = 1; j <= order; j++) {
            double v = 0.0;
            for (k = 0; k <= j; k++) v += R[i][k] * U[k][j];
            RU[i][j] = v;
        }
    for (n = 0; n < ${NAME}_NX; n++) {
        for (k = 0; k <= order; k++) old[k] = s->D[k * ${NAME}_NX + n];
        for (j = 1; j <= order; j++) {
            double v = 0.0;
            for (k = 0; k <= order; k++) v += RU[k][j] * old[k];
            s->D[j * ${NAME}_NX + n] = v;
        }
    }
}

/* a new step size h * factor (and so a new W to come) */
static void ${name}_bdf_new_h(${name}_integrator *s, double factor)
{
    ${name}_bdf_rescale(s, factor);
    s->h *= factor;
    s->n_equal = 0;
}

/* one BDF attempt */
static int ${name}_bdf_step(${name}_integrator *s, int *accepted)
{
    double ypred[${NAME}_NX], psi[${NAME}_NX], y[${NAME}_NX], d[${NAME}_NX], dy[${NAME}_NX],
        f[${NAME}_NX], err[${NAME}_NX];
    const double rtol = s->rtol, atol = s->atol, *D = s->D;
    const double newton_tol = fmax(10.0 * 2.220446049250313e-16 / rtol, fmin(0.03, sqrt(rtol)));
    double h, t_new, c, alpha, dy_norm, dy_norm_old = -1.0, rate = 0.0, safety, error_norm,
        factor;
    int i, k, order, code, converged = 0, n_iter = 0;
    if (s->order == 0) {                       /* the first step: order 1 from (x, h f) */
        s->order = 1;
        s->n_equal = 0;
        for (i = 0; i < ${NAME}_NX; i++) {
            s->D[i] = s->x[i];
            s->D[${NAME}_NX + i] = s->h * s->f[i];
        }
    }
    order = s->order;
    h = s->h;
    t_new = s->t + h;
    alpha = ${name}_bdf_alpha[order];
    c = h / alpha;
    for (i = 0; i < ${NAME}_NX; i++) {
        double v = 0.0, w = 0.0;
        for (k = 0; k <= order; k++) v += D[k * ${NAME}_NX + i];
        for (k = 1; k <= order; k++) w += D[k * ${NAME}_NX + i] * ${name}_bdf_gamma[k];
        ypred[i] = v;
        psi[i] = w / alpha;
        y[i] = v;
        d[i] = 0.0;
    }
    if (s->jac_age < 0) {                      /* the first J, at (t, x) */
        if ((code = ${name}_jacobian(s, 0))) return code;
        s->w_diag = 0.0;
    }
    if (s->w_diag != 1.0 / c && ${name}_lu_w(s, 1.0 / c)) {
        ${name}_bdf_new_h(s, 0.5);             /* singular: a smaller step */
        s->rejected++;
        *accepted = 0;
        return ${name}_after_singular(s);
    }
    /* W = I / c - J, so W dy = f - (psi + d) / c is (I - c J) dy = c f - psi - d */
    for (k = 0; k < ${NAME}_BDF_NEWTON; k++) {
        code = ${name}_f(s, t_new, y, f);
        /* an iterate where f is not finite: no convergence (a smaller step),
           unless the prediction itself overflowed */
        if (code == ${NAME}_ERR_OUTPUT && ${name}_all_finite(ypred, ${NAME}_NX)) break;
        if (code) return code;
        for (i = 0; i < ${NAME}_NX; i++) dy[i] = f[i] - (psi[i] + d[i]) / c;
        ${name}_lu_backsolve(${NAME}_NX, s->w, s->piv, dy);
        dy_norm = ${name}_err_norm(dy, ypred, ypred, rtol, atol);
        n_iter = k + 1;
        if (dy_norm_old >= 0.0) rate = dy_norm / dy_norm_old;
        if (dy_norm_old >= 0.0 && (rate >= 1.0 || pow(rate, ${NAME}_BDF_NEWTON - k) / (1.0 - rate)
                                                     * dy_norm > newton_tol))
            break;                             /* diverging, or too slow to make it */
        for (i = 0; i < ${NAME}_NX; i++) {
            y[i] += dy[i];
            d[i] += dy[i];
        }
        if (dy_norm == 0.0 || (dy_norm_old >= 0.0 && rate / (1.0 - rate) * dy_norm < newton_tol)) {
            converged = 1;
            break;
        }
        if (!(dy_norm == dy_norm)) break;      /* NaN */
        dy_norm_old = dy_norm;
    }
    *accepted = 0;
    if (!converged) {
        s->rejected++;
        if (s->jac_age != 0) {                 /* a J from an earlier step: a new one, same h */
            if ((code = ${name}_f(s, s->t, s->x, s->f))) return code;
            if ((code = ${name}_jacobian(s, 0))) return code;
            s->w_diag = 0.0;
        } else {
            ${name}_bdf_new_h(s, 0.5);
        }
        return ${NAME}_OK;
    }
    safety = 0.9 * (2 * ${NAME}_BDF_NEWTON + 1) / (2 * ${NAME}_BDF_NEWTON + n_iter);
    for (i = 0; i < ${NAME}_NX; i++) err[i] = ${name}_bdf_error_const[order] * d[i];
    error_norm = ${name}_err_norm(err, y, y, rtol, atol);
    if (!(error_norm <= 1.0)) {
        factor = error_norm == error_norm ? fmax(0.2, safety * pow(error_norm, -1.0 / (order + 1)))
                                          : 0.1;
        ${name}_bdf_new_h(s, factor);
        s->rejected++;
        return ${NAME}_OK;
    }
    /* accepted: the new differences (D[order + 2] for the order test) */
    s->t_old = s->t;
    s->h_old = h;
    s->t = t_new;
    s->have_step = 1;
    s->steps++;
    s->n_equal++;
    if (s->jac_age == 0) s->jac_age = 1;       /* J is now from an earlier step */
    for (i = 0; i < ${NAME}_NX; i++) {
        s->x[i] = y[i];
        s->D[(order + 2) * ${NAME}_NX + i] = d[i] - s->D[(order + 1) * ${NAME}_NX + i];
        s->D[(order + 1) * ${NAME}_NX + i] = d[i];
        for (k = order; k >= 0; k--) s->D[k * ${NAME}_NX + i] += s->D[(k + 1) * ${NAME}_NX + i];
    }
    *accepted = 1;
    if (!${name}_all_finite(s->x, ${NAME}_NX)) return ${NAME}_ERR_OUTPUT;   /* overflow */
    if (s->n_equal >= order + 1) {             /* order and step: the largest allowed step */
        double norms[3], best = 0.0;
        int j, pick = 1;
        norms[1] = error_norm;
        norms[0] = norms[2] = HUGE_VAL;
        if (order > 1) {
            for (i = 0; i < ${NAME}_NX; i++)
                err[i] = ${name}_bdf_error_const[order - 1] * s->D[order * ${NAME}_NX + i];
            norms[0] = ${name}_err_norm(err, y, y, rtol, atol);
        }
        if (order < ${NAME}_BDF_MAX_ORDER) {
            for (i = 0; i < ${NAME}_NX; i++)
                err[i] = ${name}_bdf_error_const[order + 1] * s->D[(order + 2) * ${NAME}_NX + i];
            norms[2] = ${name}_err_norm(err, y, y, rtol, atol);
        }
        for (j = 0; j < 3; j++) {
            const double fj = norms[j] == HUGE_VAL ? 0.0
                              : norms[j] > 0.0 ? pow(norms[j], -1.0 / (order + j)) : HUGE_VAL;
            if (fj > best) { best = fj; pick = j; }
        }
        s->order = order + pick - 1;
        ${name}_bdf_new_h(s, fmin(10.0, safety * best));
    }
    return ${NAME}_OK;
}

/* x(t_out) for t_out in the last step, from the interpolating polynomial in D */
static void ${name}_bdf_dense(const ${name}_integrator *s, double t_out, double *x_out)
{
    double p[${NAME}_BDF_MAX_ORDER];
    int i, j;
    for (j = 0; j < s->order; j++)
        p[j] = (j ? p[j - 1] : 1.0) * (t_out - (s->t - s->h * j)) / (s->h * (1 + j));
    for (i = 0; i < ${NAME}_NX; i++) {
        double v = s->D[i];
        for (j = 0; j < s->order; j++) v += s->D[(j + 1) * ${NAME}_NX + i] * p[j];
        x_out[i] = v;
    }
}
