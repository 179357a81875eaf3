/*
 * General solve for a mass matrix that is not symmetric (e.g. KanesMethod's
 * with nonholonomic constraint rows), M full row-major: Gaussian elimination
 * with partial pivoting in place; b is overwritten by the solution. Returns 1
 * when a pivot falls below 1e-14 of the largest entry of M (singular to
 * working precision), else 0.
 */
static int ${name}_lu_solve(double *A, double *b)
{
    const int n = ${NAME}_NU;
    int i, j, k;
    double scale = 0.0;
    for (i = 0; i < n * n; i++) if (fabs(A[i]) > scale) scale = fabs(A[i]);
    for (k = 0; k < n; k++) {
        int piv = k;
        for (i = k + 1; i < n; i++) if (fabs(A[i * n + k]) > fabs(A[piv * n + k])) piv = i;
        if (!(fabs(A[piv * n + k]) > 1e-14 * scale)) return 1;
        if (piv != k) {
            double tmp;
            for (j = 0; j < n; j++) {
                tmp = A[k * n + j]; A[k * n + j] = A[piv * n + j]; A[piv * n + j] = tmp;
            }
            tmp = b[k]; b[k] = b[piv]; b[piv] = tmp;
        }
        for (i = k + 1; i < n; i++) {
            const double f = A[i * n + k] / A[k * n + k];
            for (j = k + 1; j < n; j++) A[i * n + j] -= f * A[k * n + j];
            b[i] -= f * b[k];
        }
    }
    for (i = n - 1; i >= 0; i--) {
        double s = b[i];
        for (j = i + 1; j < n; j++) s -= A[i * n + j] * b[j];
        b[i] = s / A[i * n + i];
    }
    return 0;
}

static void ${name}_unpack(const double *A, double *M)
{
    int i;
    for (i = 0; i < ${NAME}_NU * ${NAME}_NU; i++) M[i] = A[i];
}
