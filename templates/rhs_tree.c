/* the tree's recursion (codegen.recursive) gives q' and u' directly; a pivot
   that is not positive means M is not positive definite (e.g. a zero mass) */
static int ${name}_dynamics(double t, const double *x, const double *p, const double *r, double *dx)
{
    double D[${NAME}_NU];
    int i;
    ${name}_tree(t, x, p, r, dx, dx + ${NAME}_NQ, D);
    for (i = 0; i < ${NAME}_NU; i++) if (!(D[i] > 0.0)) return ${NAME}_ERR_MASS;
    if (!${name}_all_finite(dx, ${NAME}_NX)) return ${NAME}_ERR_OUTPUT;
    return ${NAME}_OK;
}
