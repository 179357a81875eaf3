/* Test harness: the runtime's inline trig (cg_math.h) and an unrolled L D L^T
   of codegen.solve (ldl_rendered.c, see linalg_lib.py) exposed to ctypes; the
   linear algebra of cg_linalg.c is compiled beside it and public already. */
#include "cg_math.h"
#include "ldl_rendered.c"

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
/* the unrolled solve with the runtime's pivot test: 1 when M is not positive definite */
int cgt_ldl_public(const double *M, double *F)
{
    double D[LDL_N];
    int i;
    cgtl_ldl(M, F, D);
    for (i = 0; i < LDL_N; i++) if (!(D[i] > 1e-14 * fabs(M[i * (i + 3) / 2]))) return 1;
    return 0;
}
