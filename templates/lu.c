/*
 * General dense solve A x = b (A n x n, row-major): LU with partial pivoting
 * in place, pivots in piv. Used for a mass matrix that is not symmetric (e.g.
 * KanesMethod's with nonholonomic constraint rows) and for the Rosenbrock
 * integrators' W = I / (gamma h) - J. lu_decompose returns 1 when a pivot falls below
 * 1e-14 of the largest entry of A (singular to working precision), else 0;
 * A then holds the factors for lu_backsolve (not A's layout).
 */
static int ${name}_lu_decompose(int n, double *A, int *piv)
{
    int i, j, k;
    double scale = 0.0;
    for (i = 0; i < n * n; i++) if (fabs(A[i]) > scale) scale = fabs(A[i]);
    for (k = 0; k < n; k++) {
        int best = k;
        double inv;
        for (i = k + 1; i < n; i++) if (fabs(A[i * n + k]) > fabs(A[best * n + k])) best = i;
        piv[k] = best;
        if (!(fabs(A[best * n + k]) > 1e-14 * scale)) return 1;
        if (best != k)
            for (j = 0; j < n; j++) {
                const double tmp = A[k * n + j];
                A[k * n + j] = A[best * n + j];
                A[best * n + j] = tmp;
            }
        /* the pivot's reciprocal is kept on the diagonal: one division per
           column here and none in the solves, which are the hot part when
           one factorization serves many solves */
        inv = A[k * n + k] = 1.0 / A[k * n + k];
        for (i = k + 1; i < n; i++) {
            const double f = (A[i * n + k] *= inv);
            for (j = k + 1; j < n; j++) A[i * n + j] -= f * A[k * n + j];
        }
    }
    for (i = 0; i < n; i++)                 /* the factors column by column, for the solves */
        for (j = i + 1; j < n; j++) {
            const double tmp = A[i * n + j];
            A[i * n + j] = A[j * n + i];
            A[j * n + i] = tmp;
        }
    return 0;
}

/* b <- A^-1 b from lu_decompose's factors (stored by columns, reciprocal
   pivots on the diagonal). The row swaps first, then both triangles by
   columns: each solved entry is subtracted from the entries below (above) it,
   which are independent of one another and contiguous in memory, instead of
   a dot product per row that waits on every term. */
static void ${name}_lu_backsolve(int n, const double *A, const int *piv, double *b)
{
    int i, j;
    for (i = 0; i < n; i++) {
        const double tmp = b[piv[i]];
        b[piv[i]] = b[i];
        b[i] = tmp;
    }
    for (j = 0; j < n; j++) {
        const double bj = b[j], *col = A + j * n;
        for (i = j + 1; i < n; i++) b[i] -= col[i] * bj;
    }
    for (j = n - 1; j >= 0; j--) {
        const double *col = A + j * n, bj = (b[j] *= col[j]);
        for (i = 0; i < j; i++) b[i] -= col[i] * bj;
    }
}
