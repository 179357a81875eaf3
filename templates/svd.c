/* SVD and pseudoinverse for the run-time constraint elimination (Singh & Likins). */

/* y = A x for A (n x n) symmetric, packed lower triangle */
static void ${name}_packed_matvec(int n, const double *A, const double *x, double *y)
{
    int i, j;
    for (i = 0; i < n; i++) y[i] = 0.0;
    for (i = 0; i < n; i++) {
        const double *Ai = A + i * (i + 1) / 2;
        for (j = 0; j < i; j++) {
            y[i] += Ai[j] * x[j];
            y[j] += Ai[j] * x[i];
        }
        y[i] += Ai[i] * x[i];
    }
}

/*
 * Singular value decomposition by one-sided Jacobi rotations (Hestenes):
 * on return A (m x n) holds U S, i.e. mutually orthogonal columns whose
 * norms are the singular values; V (n x n) is orthogonal with A_in = (U S) V^T;
 * s[n] are the singular values in descending order (columns of A and V
 * sorted with them). Any m, n (m < n included: then at least n - m of the
 * s[j] are zero and the matching columns of V span the null space of A).
 * One-sided Jacobi is accurate to high relative precision even for tiny
 * singular values, which is what the rank decision needs. Returns the number
 * of sweeps, or -1 if 60 sweeps did not converge.
 */
static int ${name}_svd(int m, int n, double *A, double *V, double *s)
{
    int i, j, k, p, q, sweep;
    double floor = 0.0;
    for (i = 0; i < m * n; i++) floor += A[i] * A[i];
    /* columns below (eps |A|_F)^2 are zero to working precision: rotating
       them would chase rounding noise forever */
    floor *= 4.93e-32;
    for (i = 0; i < n; i++)
        for (j = 0; j < n; j++) V[i * n + j] = (i == j) ? 1.0 : 0.0;
    for (sweep = 1; sweep <= 60; sweep++) {
        int rotated = 0;
        for (p = 0; p < n - 1; p++) {
            for (q = p + 1; q < n; q++) {
                double alpha = 0.0, beta = 0.0, gamma = 0.0, zeta, t, c, sn;
                for (i = 0; i < m; i++) {
                    const double ap = A[i * n + p], aq = A[i * n + q];
                    alpha += ap * ap;
                    beta += aq * aq;
                    gamma += ap * aq;
                }
                if (alpha <= floor || beta <= floor || gamma == 0.0
                    || fabs(gamma) <= 1e-15 * sqrt(alpha * beta)) continue;
                rotated = 1;
                zeta = (beta - alpha) / (2.0 * gamma);
                t = (zeta >= 0.0 ? 1.0 : -1.0) / (fabs(zeta) + sqrt(1.0 + zeta * zeta));
                c = 1.0 / sqrt(1.0 + t * t);
                sn = c * t;
                for (i = 0; i < m; i++) {
                    const double ap = A[i * n + p], aq = A[i * n + q];
                    A[i * n + p] = c * ap - sn * aq;
                    A[i * n + q] = sn * ap + c * aq;
                }
                for (i = 0; i < n; i++) {
                    const double vp = V[i * n + p], vq = V[i * n + q];
                    V[i * n + p] = c * vp - sn * vq;
                    V[i * n + q] = sn * vp + c * vq;
                }
            }
        }
        if (!rotated) break;
    }
    for (j = 0; j < n; j++) {
        double norm = 0.0;
        for (i = 0; i < m; i++) norm += A[i * n + j] * A[i * n + j];
        s[j] = sqrt(norm);
    }
    for (j = 0; j < n - 1; j++) {          /* selection sort, descending */
        int big = j;
        for (k = j + 1; k < n; k++) if (s[k] > s[big]) big = k;
        if (big != j) {
            double tmp = s[j]; s[j] = s[big]; s[big] = tmp;
            for (i = 0; i < m; i++) {
                tmp = A[i * n + j]; A[i * n + j] = A[i * n + big]; A[i * n + big] = tmp;
            }
            for (i = 0; i < n; i++) {
                tmp = V[i * n + j]; V[i * n + j] = V[i * n + big]; V[i * n + big] = tmp;
            }
        }
    }
    return sweep <= 60 ? sweep : -1;
}

/* numerical rank: singular values above rtol times the largest */
static int ${name}_rank(int n, const double *s, double rtol)
{
    int r = 0;
    while (r < n && s[r] > rtol * s[0] && s[r] > 0.0) r++;
    return r;
}

/* x = A+ b from the SVD above (A m x n holding U S, rank r): sum_j V_j (U S)_j.b / s_j^2 */
static void ${name}_pinv_apply(int m, int n, int r, const double *US, const double *V,
                               const double *s, const double *b, double *x)
{
    int i, j;
    for (i = 0; i < n; i++) x[i] = 0.0;
    for (j = 0; j < r; j++) {
        double c = 0.0;
        for (i = 0; i < m; i++) c += US[i * n + j] * b[i];
        c /= s[j] * s[j];
        for (i = 0; i < n; i++) x[i] += c * V[i * n + j];
    }
}

/* y = (A^T)+ g = A+^T g = sum_j (U S)_j (V_j.g) / s_j^2, y of length m */
static void ${name}_pinv_transpose_apply(int m, int n, int r, const double *US, const double *V,
                                         const double *s, const double *g, double *y)
{
    int i, j;
    for (i = 0; i < m; i++) y[i] = 0.0;
    for (j = 0; j < r; j++) {
        double c = 0.0;
        for (i = 0; i < n; i++) c += V[i * n + j] * g[i];
        c /= s[j] * s[j];
        for (i = 0; i < m; i++) y[i] += c * US[i * n + j];
    }
}

/* x += A+_mu b with the damped pseudoinverse V diag(s / (s^2 + mu^2)) U^T over the first r
   singular values: the Baumgarte correction fades along directions whose singular value
   approaches zero instead of being amplified by 1 / s */
static void ${name}_damped_pinv_add(int m, int n, int r, const double *US, const double *V,
                                    const double *s, double mu, const double *b, double *x)
{
    int i, j;
    for (j = 0; j < r; j++) {
        double c = 0.0;
        for (i = 0; i < m; i++) c += US[i * n + j] * b[i];
        c /= s[j] * s[j] + mu * mu;
        for (i = 0; i < n; i++) x[i] += c * V[i * n + j];
    }
}
