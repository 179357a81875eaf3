/*
 * cg_linalg.c -- the runtime's linear algebra: LU with partial pivoting (a mass
 * matrix that is not symmetric, and the implicit integrators' W), Cholesky of
 * a packed symmetric matrix (mass matrices too large for the unrolled L D L^T),
 * and the SVD with its pseudoinverses (the run-time constraint elimination);
 * the finiteness test of an array. No allocation: callers pass every array.
 */
#include "cg_internal.h"

/*
 * 1 when all of n values are finite. Their sum is finite only if each is (an infinity
 * or a NaN stays in it), so one addition a value decides, and only a sum that
 * overflowed, which finite values can give, needs the test value by value. GCC's
 * vector type: sixteen values a pass in four sums of four (two SSE2 or one AVX
 * instruction each; as scalar code the check was 8 % of Solo12's Jacobian).
 */
#if defined(__GNUC__)
typedef double cg_v4 __attribute__((vector_size(32)));
#endif
CG_CLONES CG_API int cg_all_finite(const double *v, int n)
{
    double sum = 0.0;
    int i = 0;
#if defined(__GNUC__)
    cg_v4 z0 = {0.0}, z1 = {0.0}, z2 = {0.0}, z3 = {0.0}, a, b, c, d;
    for (; i + 15 < n; i += 16) {
        memcpy(&a, v + i, sizeof a);              /* unaligned loads */
        memcpy(&b, v + i + 4, sizeof b);
        memcpy(&c, v + i + 8, sizeof c);
        memcpy(&d, v + i + 12, sizeof d);
        z0 += a, z1 += b, z2 += c, z3 += d;
    }
    z0 = (z0 + z1) + (z2 + z3);
    sum = (z0[0] + z0[1]) + (z0[2] + z0[3]);
#endif
    for (; i < n; i++) sum += v[i];
    if (sum - sum == 0.0) return 1;
    for (i = 0; i < n; i++)
        if (!isfinite(v[i])) return 0;
    return 1;
}

/*
 * General dense solve A x = b (A n x n, row-major): LU with partial pivoting
 * in place, pivots in piv. Used for a mass matrix that is not symmetric (e.g.
 * KanesMethod's with nonholonomic constraint rows) and for the Rosenbrock
 * integrators' W = I / (gamma h) - J. lu_decompose returns 1 when a pivot falls below
 * CG_PIVOT_TOL of the largest entry of A (singular to working precision), else 0;
 * A then holds the factors for lu_backsolve (not A's layout).
 */
CG_API int cg_lu_decompose(int n, double *A, int *piv)
{
    int i, j, k;
    double scale = 0.0;
    for (i = 0; i < n * n; i++) if (fabs(A[i]) > scale) scale = fabs(A[i]);
    for (k = 0; k < n; k++) {
        int best = k;
        double inv;
        for (i = k + 1; i < n; i++) if (fabs(A[i * n + k]) > fabs(A[best * n + k])) best = i;
        piv[k] = best;
        if (!(fabs(A[best * n + k]) > CG_PIVOT_TOL * scale)) return 1;
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
CG_API void cg_lu_backsolve(int n, const double *A, const int *piv, double *b)
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


/*
 * Symmetric positive definite solve, A (n x n) packed as its lower triangle
 * row by row (A[i][j] at i*(i+1)/2 + j, j <= i). Cholesky A = L L^T in place
 * (one division per row: inv[i] = 1 / L[i][i]), then the two triangular
 * solves; b is overwritten by the solution. Returns 1 when a pivot is not
 * positive or falls below CG_PIVOT_TOL of its diagonal entry (A is not positive
 * definite to working precision), else 0. inv: workspace of n doubles.
 * cg_cholesky_factor and cg_cholesky_backsolve are its two halves, for one
 * factorization and many right-hand sides.
 */
CG_API int cg_cholesky_factor(int n, double *A, double *inv)
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
            if (!(s > CG_PIVOT_TOL * fabs(Li[i]))) return 1;
            Li[i] = sqrt(s);
            inv[i] = 1.0 / Li[i];
        }
    }
    return 0;
}

/* b <- A^-1 b from cg_cholesky_factor's L (packed) and reciprocal pivots */
CG_API void cg_cholesky_backsolve(int n, const double *A, const double *inv, double *b)
{
    int i, k;
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
}

/* y <- (y - sum_j a[j] B[j*w + .]) * scale over w entries. Each block of eight
   columns stays in registers while all cnt rows are subtracted, so y is read and
   written once; eight columns are eight independent chains of subtractions
   (four SSE2 registers), enough to hide their latency, where four leave the
   solve latency-bound */
static void cg_combine_rows(double *CG_RESTRICT y, const double *CG_RESTRICT B,
                            const double *CG_RESTRICT a, int cnt, int w, double scale)
{
    int c = 0, j;
    for (; c + 8 <= w; c += 8) {
        double s0 = y[c], s1 = y[c + 1], s2 = y[c + 2], s3 = y[c + 3];
        double s4 = y[c + 4], s5 = y[c + 5], s6 = y[c + 6], s7 = y[c + 7];
        for (j = 0; j < cnt; j++) {
            const double *b = B + j * w + c, f = a[j];
            s0 -= f * b[0];
            s1 -= f * b[1];
            s2 -= f * b[2];
            s3 -= f * b[3];
            s4 -= f * b[4];
            s5 -= f * b[5];
            s6 -= f * b[6];
            s7 -= f * b[7];
        }
        y[c] = s0 * scale;
        y[c + 1] = s1 * scale;
        y[c + 2] = s2 * scale;
        y[c + 3] = s3 * scale;
        y[c + 4] = s4 * scale;
        y[c + 5] = s5 * scale;
        y[c + 6] = s6 * scale;
        y[c + 7] = s7 * scale;
    }
    for (; c + 2 <= w; c += 2) {
        double s0 = y[c], s1 = y[c + 1];
        for (j = 0; j < cnt; j++) {
            const double *b = B + j * w + c, f = a[j];
            s0 -= f * b[0];
            s1 -= f * b[1];
        }
        y[c] = s0 * scale;
        y[c + 1] = s1 * scale;
    }
    for (; c < w; c++) {
        double s = y[c];
        for (j = 0; j < cnt; j++) s -= a[j] * B[j * w + c];
        y[c] = s * scale;
    }
}

/* B (n x w, row-major) <- A^-1 B from cg_cholesky_factor's L: row i of the
   forward pass combines rows 0..i-1, of the backward pass rows i+1..n-1 (whose
   coefficients, a column of the packed L, are gathered first) */
CG_API void cg_cholesky_solve_rows(int n, const double *L, const double *inv, double *B, int w)
{
    double col[CG_LEN(n)];
    int i, k;
    for (i = 0; i < n; i++)
        cg_combine_rows(B + i * w, B, L + i * (i + 1) / 2, i, w, inv[i]);
    for (i = n - 1; i >= 0; i--) {
        for (k = i + 1; k < n; k++) col[k - i - 1] = L[k * (k + 1) / 2 + i];
        cg_combine_rows(B + i * w, B + (i + 1) * w, col, n - i - 1, w, inv[i]);
    }
}

/* B (n x w, row-major) <- A^-1 B from lu_decompose's factors (column-major,
   reciprocal pivots on the diagonal), row by row as in cg_cholesky_solve_rows */
CG_API void cg_lu_solve_rows(int n, const double *A, const int *piv, double *B, int w)
{
    double col[CG_LEN(n)];
    int i, j, c;
    for (i = 0; i < n; i++)
        if (piv[i] != i)
            for (c = 0; c < w; c++) {
                const double tmp = B[piv[i] * w + c];
                B[piv[i] * w + c] = B[i * w + c];
                B[i * w + c] = tmp;
            }
    for (i = 1; i < n; i++) {
        for (j = 0; j < i; j++) col[j] = A[j * n + i];
        cg_combine_rows(B + i * w, B, col, i, w, 1.0);
    }
    for (i = n - 1; i >= 0; i--) {
        for (j = i + 1; j < n; j++) col[j - i - 1] = A[j * n + i];
        cg_combine_rows(B + i * w, B + (i + 1) * w, col, n - i - 1, w, A[i * n + i]);
    }
}

CG_API int cg_cholesky_solve(int n, double *A, double *b, double *inv)
{
    if (cg_cholesky_factor(n, A, inv)) return 1;
    cg_cholesky_backsolve(n, A, inv, b);
    return 0;
}


/* y = A x for A (n x n) symmetric, packed lower triangle */
CG_API void cg_packed_matvec(int n, const double *A, const double *x, double *y)
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
CG_API int cg_svd(int m, int n, double *A, double *V, double *s)
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
CG_API int cg_rank(int n, const double *s, double rtol)
{
    int r = 0;
    while (r < n && s[r] > rtol * s[0] && s[r] > 0.0) r++;
    return r;
}

/* x = A+ b from the SVD above (A m x n holding U S, rank r): sum_j V_j (U S)_j.b / s_j^2 */
CG_API void cg_pinv_apply(int m, int n, int r, const double *US, const double *V,
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
CG_API void cg_pinv_transpose_apply(int m, int n, int r, const double *US, const double *V,
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
CG_API void cg_damped_pinv_add(int m, int n, int r, const double *US, const double *V,
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

/* packed lower triangle (n x n) -> full row-major symmetric matrix */
CG_API void cg_unpack(int n, const double *A, double *M)
{
    int i, j;
    for (i = 0; i < n; i++)
        for (j = 0; j <= i; j++) {
            const double v = A[i * (i + 1) / 2 + j];
            M[i * n + j] = v;
            M[j * n + i] = v;
        }
}
