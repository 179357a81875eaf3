/* a mass matrix stored full (not symmetric): LU solve, and unpacking is a copy */
static int ${name}_solve_mass(double *M, double *F)
{
    int piv[${NAME}_NU];
    if (${name}_lu_decompose(${NAME}_NU, M, piv)) return 1;
    ${name}_lu_backsolve(${NAME}_NU, M, piv, F);
    return 0;
}

static void ${name}_unpack(const double *A, double *M)
{
    int i;
    for (i = 0; i < ${NAME}_NU * ${NAME}_NU; i++) M[i] = A[i];
}
