/* Two generated models and one copy of the runtime in one program: each model
   is its descriptor, so nothing clashes. Prints each model's name and x'[0]. */
#include <stdio.h>
#include "cg_runtime.h"
#include "disk.h"
#include "pend.h"

static void show(const cg_model *m)
{
    double x[32], p[32], r[8] = {0.0}, dx[32];
    int i, code;
    for (i = 0; i < m->nx; i++) x[i] = 0.1 * (i + 1);
    for (i = 0; i < m->np; i++) p[i] = 1.0;
    code = cg_rhs(m, 0.0, x, p, r, dx);
    printf("%s %d %.17g\n", m->name, code, dx[0]);
}

int main(void)
{
    show(disk_model());
    show(pend_model());
    return 0;
}
