/* Two generated models and one copy of the runtime in one program: each model
   is its descriptor, so nothing clashes. Prints each model's name, cg_rhs's code and
   x'[0], cg_inverse_dynamics' code and tau[0], cg_jacobian's code, then the unchecked
   entries': whether cg_rhs_unchecked and cg_inverse_dynamics_unchecked give the same
   bits (1) and their codes, and cg_rhs_unchecked's code and whether x' is finite for a
   NaN in x, then J's entries in hexadecimal (every bit). */
#include <math.h>
#include <string.h>
#include <stdio.h>
#include "cg_runtime.h"
#include "disk.h"
#include "pend.h"

static void show(const cg_model *m)
{
    double x[32], p[32], r[8] = {0.0}, dx[32], ud[32], tau[32], J[32 * 32], dx2[32], tau2[32];
    int i, code, inverse, jacobian, code2, inverse2, nan_code, finite = 1;
    for (i = 0; i < m->nx; i++) x[i] = 0.1 * (i + 1);
    for (i = 0; i < m->np; i++) p[i] = 1.0;
    for (i = 0; i < m->nu; i++) ud[i] = 0.2 * (i + 1);
    code = cg_rhs(m, 0.0, x, p, r, dx);
    inverse = cg_inverse_dynamics(m, 0.0, x, p, r, ud, tau);
    jacobian = cg_jacobian(m, 0.0, x, p, r, J, NULL);
    code2 = cg_rhs_unchecked(m, 0.0, x, p, r, dx2);
    inverse2 = cg_inverse_dynamics_unchecked(m, 0.0, x, p, r, ud, tau2);
    printf("%s %d %.17g %d %.17g %d", m->name, code, dx[0], inverse, tau[0], jacobian);
    printf(" %d %d %d %d", !memcmp(dx, dx2, m->nx * sizeof(double)), code2,
           !memcmp(tau, tau2, m->nu * sizeof(double)), inverse2);
    x[m->nq] = NAN;
    nan_code = cg_rhs_unchecked(m, 0.0, x, p, r, dx2);
    for (i = 0; i < m->nx; i++) finite = finite && isfinite(dx2[i]);
    printf(" %d %d", nan_code, finite);
    for (i = 0; i < (jacobian ? 0 : m->nx * m->nx); i++) printf(" %a", J[i]);
    printf("\n");
}

int main(void)
{
    show(disk_model());
    show(pend_model());
    return 0;
}
