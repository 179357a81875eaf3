/*
 * M u' = F for the symmetric M (packed lower triangle) by the unrolled L D L^T
 * of ${name}_ldl; F is overwritten by u'. Returns 1 when a pivot is not
 * positive or falls below 1e-14 of its diagonal entry (M is not positive
 * definite to working precision: the same test as the loop version), else 0.
 */
static int ${name}_solve_unrolled(const double *M, double *F)
{
    double D[${NAME}_NU];
    int i;
    ${name}_ldl(M, F, D);
    for (i = 0; i < ${NAME}_NU; i++)
        if (!(D[i] > 1e-14 * fabs(M[i * (i + 3) / 2]))) return 1;
    return 0;
}
