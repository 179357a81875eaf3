/*
 * Example driver for ${name}.c: fixed-step RK4 in plain C, printing the trajectory.
 *
 *   cc -std=c99 -O2 ${name}_driver.c ${name}.c -lm -o ${name}_driver
 *   ./${name}_driver DT STEPS X_1 .. X_${nx} P_1 .. P_${np} [R_1 .. R_${nr}]
 *
 * Prints one line per step: t, then the states in the order of ${name}.h
 * (specified inputs are held constant). Exit status 1 on bad arguments, 2 if
 * ${name}_rhs reports an error (message on stderr).
 */
#include <stdio.h>
#include <stdlib.h>
#include "${name}.h"

static int step(double t, double h, double *x, const double *p, const double *r)
{
    double k1[${NAME}_NX], k2[${NAME}_NX], k3[${NAME}_NX], k4[${NAME}_NX], y[${NAME}_NX];
    int i, code;
    if ((code = ${name}_rhs(t, x, p, r, k1))) return code;
    for (i = 0; i < ${NAME}_NX; i++) y[i] = x[i] + 0.5 * h * k1[i];
    if ((code = ${name}_rhs(t + 0.5 * h, y, p, r, k2))) return code;
    for (i = 0; i < ${NAME}_NX; i++) y[i] = x[i] + 0.5 * h * k2[i];
    if ((code = ${name}_rhs(t + 0.5 * h, y, p, r, k3))) return code;
    for (i = 0; i < ${NAME}_NX; i++) y[i] = x[i] + h * k3[i];
    if ((code = ${name}_rhs(t + h, y, p, r, k4))) return code;
    for (i = 0; i < ${NAME}_NX; i++) x[i] += h / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
    return 0;
}

int main(int argc, char **argv)
{
    double x[${NAME}_NX], p[${NAME}_NP + 1], r[${NAME}_NR + 1], h, t = 0.0;
    long n, k;
    int i, a = 3, code;
    if (argc != 3 + ${NAME}_NX + ${NAME}_NP + ${NAME}_NR) {
        fprintf(stderr, "usage: %s DT STEPS, then %d states, %d constants, %d inputs\n",
                argv[0], ${NAME}_NX, ${NAME}_NP, ${NAME}_NR);
        return 1;
    }
    h = atof(argv[1]);
    n = atol(argv[2]);
    for (i = 0; i < ${NAME}_NX; i++) x[i] = atof(argv[a++]);
    for (i = 0; i < ${NAME}_NP; i++) p[i] = atof(argv[a++]);
    for (i = 0; i < ${NAME}_NR; i++) r[i] = atof(argv[a++]);
    for (k = 0; k <= n; k++) {
        printf("%.17g", t);
        for (i = 0; i < ${NAME}_NX; i++) printf(" %.17g", x[i]);
        printf("\n");
        if (k == n) break;
        if ((code = step(t, h, x, p, r))) {
            fprintf(stderr, "${name}_rhs failed with code %d at t = %g\n", code, t);
            return 2;
        }
        t = k * h + h;
    }
    return 0;
}
