static int ${name}_dynamics(double t, const double *x, const double *p, const double *r, double *dx)
{
    double M[${NAME}_NM];
    double F[${NAME}_NU];
    double work[${NAME}_NU];
    int i;
    (void)work;
    ${name}_eval(t, x, p, r, dx, M, F);
    if (${solve_call}) return ${NAME}_ERR_MASS;
    for (i = 0; i < ${NAME}_NU; i++) dx[${NAME}_NQ + i] = F[i];
    if (!${name}_all_finite(dx, ${NAME}_NX)) return ${NAME}_ERR_OUTPUT;
    return ${NAME}_OK;
}
