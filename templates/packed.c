/* packed lower triangle -> full row-major symmetric matrix */
static void ${name}_unpack(const double *A, double *M)
{
    const int n = ${NAME}_NU;
    int i, j;
    for (i = 0; i < n; i++)
        for (j = 0; j <= i; j++) {
            const double v = A[i * (i + 1) / 2 + j];
            M[i * n + j] = v;
            M[j * n + i] = v;
        }
}
