/* Test harness: exposes the static routines of templates/svd.c and
   templates/cholesky.c (rendered with name = cgt), and an unrolled LDL^T of
   codegen.solve with templates/ldl.c (name = cgtl, see linalg_lib.py) and the
   cg_sincos of templates/trig.c, to ctypes. */
#include <math.h>
#define CGT_NU 1
#include "cholesky_rendered.c"
#include "svd_rendered.c"
#include "ldl_rendered.c"
#include "trig_rendered.c"

int cgt_svd_public(int m, int n, double *A, double *V, double *s) { return cgt_svd(m, n, A, V, s); }
int cgt_rank_public(int n, const double *s, double rtol) { return cgt_rank(n, s, rtol); }
void cgt_pinv_public(int m, int n, int r, const double *US, const double *V, const double *s,
                     const double *b, double *x) { cgt_pinv_apply(m, n, r, US, V, s, b, x); }
void cgt_pinvt_public(int m, int n, int r, const double *US, const double *V, const double *s,
                      const double *g, double *y) { cgt_pinv_transpose_apply(m, n, r, US, V, s, g, y); }
void cgt_damped_public(int m, int n, int r, const double *US, const double *V, const double *s,
                       double mu, const double *b, double *x) { cgt_damped_pinv_add(m, n, r, US, V, s, mu, b, x); }
int cgt_cholesky_public(int n, double *A, double *b, double *inv) { return cgt_cholesky_solve(n, A, b, inv); }
void cgt_sincos_public(int n, const double *x, double *s, double *c)
{
    int i;
    for (i = 0; i < n; i++) cg_sincos(x[i], s + i, c + i);
}
void cgt_sincos2_public(int n, const double *x, double *s, double *c)
{
    int i;
    for (i = 0; i + 1 < n; i += 2) cg_sincos2(x[i], x[i + 1], s + i, c + i, s + i + 1, c + i + 1);
}
int cgt_ldl_public(const double *M, double *F) { return cgtl_solve_unrolled(M, F); }
void cgt_matvec_public(int n, const double *A, const double *x, double *y) { cgt_packed_matvec(n, A, x, y); }
/* keep the unused unpack of cholesky.c referenced */
void cgt_unpack_public(const double *A, double *M) { cgt_unpack(A, M); }
