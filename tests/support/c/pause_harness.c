/* cg_integrate_to with a step budget per call (it returns CG_PAUSED and is
   called again) against the same run without one: the outputs and counts
   must be the same bits. MODEL_HEADER and MODEL_DESCRIPTOR are set on the
   command line. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cg_runtime.h"
#include MODEL_HEADER

static int run(const cg_model *m, int method, long pause, double *out, long *stats, long *pauses)
{
    cg_integrator *s = malloc(cg_integrator_size(m));
    double x0[64], p[64], t_table[1] = {0.0}, r_table[8] = {0.25}, t;
    int i, k, code;
    for (i = 0; i < m->nx; i++) x0[i] = 0.1 * (i + 1);
    for (i = 0; i < m->np; i++) p[i] = 1.0;
    code = cg_integrator_init(s, m, method, 0.0, x0, p, m->nr ? 1 : 0, t_table, r_table,
                              method >= 2 ? 1e-8 : 1e-10, method >= 2 ? 1e-8 : 1e-10, 1e-3);
    if (code) { free(s); return code; }
    cg_integrator_set(s, 10000000L, 1, pause);
    *pauses = 0;
    for (k = 1; k <= 4; k++) {
        while ((code = cg_integrate_to(s, 0.5 * k, out + (k - 1) * m->nx)) == CG_PAUSED)
            (*pauses)++;
        if (code) { free(s); return code; }
    }
    cg_integrator_stats(s, &stats[0], &stats[1], &stats[2], &t);
    free(s);
    return 0;
}

int main(void)
{
    const cg_model *m = MODEL_DESCRIPTOR();
    int method;
    for (method = 0; method < CG_N_METHODS; method++) {
        if (method == CG_ALI3P) continue;      /* constrained models only */
        double a[4 * 64], b[4 * 64];
        long sa[3], sb[3], pa, pb;
        int ca = run(m, method, 0, a, sa, &pa), cb = run(m, method, 7, b, sb, &pb);
        printf("%d %d %d %d %ld %ld\n", method, ca, cb,
               !memcmp(a, b, 4 * m->nx * sizeof(double)) && !memcmp(sa, sb, sizeof sa), sa[0], pb);
    }
    return 0;
}
