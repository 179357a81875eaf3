/* Linear algebra: only <math.h>, no allocation (callers pass workspaces), reentrant. */

/*
 * Symmetric positive definite solve, A (n x n) packed as its lower triangle
 * row by row (A[i][j] at i*(i+1)/2 + j, j <= i). Cholesky A = L L^T in place
 * (one division per row: inv[i] = 1 / L[i][i]), then the two triangular
 * solves; b is overwritten by the solution. Returns 1 when a pivot is not
 * positive or falls below 1e-14 of its diagonal entry (A is not positive
 * definite to working precision), else 0. inv: workspace of n doubles.
 */
static int ${name}_cholesky_solve(int n, double *A, double *b, double *inv)
{
    int i, j, k;
    for (i = 0; i < n; i++) {
        double *Li = A + i * (i + 1) / 2;
        for (j = 0; j < i; j++) {
            const double *Lj = A + j * (j + 1) / 2;
            double s = Li[j];
            for (k = 0; k < j; k++) s -= Li[k] * Lj[k];
            Li[j] = s * inv[j];
        }
        {
            double s = Li[i];
            for (k = 0; k < i; k++) s -= Li[k] * Li[k];
            if (!(s > 1e-14 * fabs(Li[i]))) return 1;
            Li[i] = sqrt(s);
            inv[i] = 1.0 / Li[i];
        }
    }
    for (i = 0; i < n; i++) {
        const double *Li = A + i * (i + 1) / 2;
        double s = b[i];
        for (k = 0; k < i; k++) s -= Li[k] * b[k];
        b[i] = s * inv[i];
    }
    for (i = n - 1; i >= 0; i--) {
        double s = b[i];
        for (k = i + 1; k < n; k++) s -= A[k * (k + 1) / 2 + i] * b[k];
        b[i] = s * inv[i];
    }
    return 0;
}
