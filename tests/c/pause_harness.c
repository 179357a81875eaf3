/* integrate_to with a step budget per call (it returns <NAME>_PAUSED and is
   called again) against the same run without one: the outputs and counts
   must be the same bits. M, MODEL_NX, MODEL_NP, MODEL_NR, MODEL_PAUSED are set
   on the command line. */
#include <stdio.h>
#include <string.h>
#include MODEL_HEADER

#define CAT2(a, b) a##_##b
#define CAT(a, b) CAT2(a, b)
#define FN(x) CAT(M, x)

static int run(int method, long pause, double *out, long *stats, long *pauses)
{
    FN(integrator) s;
    double x0[MODEL_NX], p[MODEL_NP], t_table[1] = {0.0}, r_table[MODEL_NR + 1] = {0.25}, t;
    int i, k, code;
    for (i = 0; i < MODEL_NX; i++) x0[i] = 0.1 * (i + 1);
    for (i = 0; i < MODEL_NP; i++) p[i] = 1.0;
    code = FN(integrator_init)(&s, method, 0.0, x0, p, MODEL_NR ? 1 : 0, t_table, r_table,
                               method >= 2 ? 1e-8 : 1e-10, method >= 2 ? 1e-8 : 1e-10, 1e-3);
    if (code) return code;
    FN(integrator_set)(&s, 10000000L, 1, pause);
    *pauses = 0;
    for (k = 1; k <= 4; k++) {
        while ((code = FN(integrate_to)(&s, 0.5 * k, out + (k - 1) * MODEL_NX)) == MODEL_PAUSED)
            (*pauses)++;
        if (code) return code;
    }
    FN(integrator_stats)(&s, &stats[0], &stats[1], &stats[2], &t);
    return 0;
}

int main(void)
{
    int method;
    for (method = 0; method <= 4; method++) {
        double a[4 * MODEL_NX], b[4 * MODEL_NX];
        long sa[3], sb[3], pa, pb;
        int ca = run(method, 0, a, sa, &pa), cb = run(method, 7, b, sb, &pb);
        printf("%d %d %d %d %ld %ld\n", method, ca, cb,
               !memcmp(a, b, sizeof a) && !memcmp(sa, sb, sizeof sa), sa[0], pb);
    }
    return 0;
}
