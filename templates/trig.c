/*
 * sin and cos of x together (the generated code computes each angle's pair
 * once). Cody-Waite reduction by pi/4 in three parts, then the Cephes minimax
 * polynomials on [-pi/4, pi/4]: within 2 ulp of glibc for |x| < 1e6 (tested),
 * libm beyond, and NaN for NaN or infinity. A quarter of libm's instructions,
 * and the same bits on every C library.
 */
static inline void cg_sincos(double x, double *sp, double *cp)
{
    static const double p1 = 7.85398125648498535156e-1, p2 = 3.77489470793079817668e-8,
                        p3 = 2.69515142907905952645e-15;
    const double a = fabs(x);
    long j;
    double y, z, zz, s, c, sv, cv;
    if (!(a < 1e6)) {
        *sp = sin(x);
        *cp = cos(x);
        return;
    }
    j = (long)(a * 1.27323954473516268615);      /* a / (pi/4), rounded up to even */
    j += j & 1;
    y = (double)j;
    z = ((a - y * p1) - y * p2) - y * p3;         /* |z| <= pi/4 */
    zz = z * z;
    c = 1.0 - 0.5 * zz + zz * zz * (((((-1.13585365213876817300e-11 * zz
        + 2.08757008419747316778e-9) * zz - 2.75573141792967388112e-7) * zz
        + 2.48015872888517045348e-5) * zz - 1.38888888888730564116e-3) * zz
        + 4.16666666666665929218e-2);
    s = z + z * zz * (((((1.58962301576546568060e-10 * zz
        - 2.50507477628578072866e-8) * zz + 2.75573136213857245213e-6) * zz
        - 1.98412698295895385996e-4) * zz + 8.33333333332211858878e-3) * zz
        - 1.66666666666666307295e-1);
    sv = (j & 2) ? c : s;                         /* octants 2, 6: sin and cos swap */
    cv = (j & 2) ? s : c;
    if (j & 4) sv = -sv;                          /* octants 4, 6: sin negative */
    if ((j + 2) & 4) cv = -cv;                    /* octants 2, 4: cos negative */
    *sp = signbit(x) ? -sv : sv;
    *cp = cv;
}
