/*
 * cg_math.h -- inline arithmetic of the generated models: integer powers as
 * products and sin/cos pairs (one evaluation per angle, two angles per SSE2
 * instruction stream), and the compiler attributes their code takes.
 * Header-only: every model includes it, the runtime too (cg_internal.h, for
 * CG_CLONES and CG_RESTRICT); nothing links.
 */
#ifndef CG_MATH_H
#define CG_MATH_H

#include <math.h>
#include <string.h>

/* A large generated function is split into parts the compiler must keep apart:
   register allocation over one function of thousands of statements costs
   minutes, over parts of a few hundred seconds (codegen.emit.PART_STATEMENTS) */
#if defined(__GNUC__)
#define CG_NOINLINE __attribute__((noinline))
#elif defined(_MSC_VER)
#define CG_NOINLINE __declspec(noinline)
#else
#define CG_NOINLINE
#endif
/* every call in the function inlined into it (noinline callees excepted): eval and the
   unrolled L D L^T in one body (cg_model.h's eval_ldl), where an array one writes and the
   other reads becomes registers (the UR5's unchecked right-hand side: 1,797 instructions
   a call with the two functions apart, 1,670 in one) */
#if defined(__GNUC__)
#define CG_FLATTEN __attribute__((flatten))
#else
#define CG_FLATTEN
#endif
/* a part runs scalar: GCC's SLP vectorizer (on at -O2 since GCC 12) pairs the scratch
   array's adjacent slots into vector loads and stores, and the pairs' register pressure
   costs spills (the iiwa's Jacobian parts: 12.9k instructions with it, 11.6k without) */
#if defined(__GNUC__) && !defined(__clang__)
#define CG_SCALAR __attribute__((optimize("no-tree-slp-vectorize")))
#else
#define CG_SCALAR
#endif
/* GCC's scheduling before register allocation, weighed against the registers it takes
   (off by default on x86): the whole inverse dynamics and eval_ldl
   (codegen.emit.layout.SCHEDULED), whose statements are written depth first, each after
   the one it reads, and so run long chains of latencies (the UR5's inverse dynamics:
   1.88x CppADCodeGen's RNEA in time without it, 2.02x with, though it runs 36 more
   instructions). docs/design.md gives the figures, and the kinds it slows. */
#if defined(__GNUC__) && !defined(__clang__)
#define CG_SCHEDULED __attribute__((optimize("schedule-insns", "sched-pressure")))
#else
#define CG_SCHEDULED
#endif
/* a part in a file of its own (a large model's, compiled beside the others): seen by
   the model's other files, not outside its library, and compiled for size as the build
   compiles its file (codegen.emit.PART_FLAGS), whatever the flags of the compile, so that
   the standalone export's own build runs the same code (Talos's inverse dynamics in parts:
   at -O3 1.35 us a call, for size 0.87 us; the code's size, about the instruction cache's,
   is what costs) */
#if defined(__GNUC__) && !defined(__clang__)
#define CG_SMALL __attribute__((optimize("Os", "no-tree-slp-vectorize")))
#else
#define CG_SMALL CG_SCALAR
#endif
/* The Jacobian's functions and a tree's mass matrix (codegen.emit.layout.CLONED), and
   the runtime's finiteness check of their output (cg_all_finite), compiled twice, the
   loader picking the AVX2 copy where the processor has it (GCC's target_clones, an
   ifunc of glibc): their straight-line code runs at the rate the processor decodes it,
   AVX's three-operand encoding is a fifth shorter, and the column solve's four columns
   side by side take one instruction where SSE2 takes two. The AVX2 copy (x86-64-v3,
   GCC 11 on; before, AVX) contracts a * b + c into one fused multiply-add, whatever the
   compile's -std, so that every build of a model runs the same code on a processor. Its
   results then differ from the SSE2 copy's in the last bits, as a BLAS's do between
   processors; the right-hand side, whose bits decide the branch a mechanism takes
   through a singular configuration, is not cloned. docs/design.md gives the figures. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__GLIBC__) \
    && defined(__ELF__)
#if __GNUC__ >= 11
#define CG_CLONES __attribute__((target_clones("arch=x86-64-v3", "default"), \
                                 optimize("fp-contract=fast")))
#else
#define CG_CLONES __attribute__((target_clones("avx", "default")))
#endif
#else
#define CG_CLONES
#endif
/* C99's restrict, spelled as C++ compilers take it: the Jacobian's parts (codegen.emit),
   whose arrays cg_jacobian passes disjoint, and the runtime's kernels */
/* two doubles side by side in one SSE2 register, GCC's and Clang's vector extension: the
   inverse dynamics of mirrored limbs (codegen.algorithms.lanes). Other compilers, or
   CG_NO_LANES, compile the model's scalar program instead. */
#if defined(__GNUC__) && !defined(CG_NO_LANES)
#define CG_LANES 1
typedef double cg_v2 __attribute__((vector_size(16)));
#endif

#ifdef __cplusplus
#define CG_RESTRICT __restrict
#else
#define CG_RESTRICT restrict
#endif
#if defined(__GNUC__) && !defined(_WIN32)
#define CG_PART CG_NOINLINE CG_SMALL __attribute__((visibility("hidden")))
#else
#define CG_PART CG_NOINLINE CG_SMALL
#endif

/* a value the compiler must take as computed here (an empty asm): the column solve's
   entries of M's factor, read from the Jacobian's L (codegen.emit), which GCC's SLP
   vectorizer otherwise takes as one group of loads, then finding the columns' four
   lanes not worth vectorizing (Talos's column solve: 122k instructions a call, 50k
   through this) */
#if defined(__GNUC__) && defined(__x86_64__)
static inline double cg_value(double v) { __asm__("" : "+x"(v)); return v; }
#else
static inline double cg_value(double v) { return v; }
#endif

/* n entries of a set to 0: the structural zeros of a large output (a Jacobian's are
   three in four of its entries), one fill where a store each took an 11-byte instruction
   (Solo12's Jacobian: 1.3k of them, 14 KB of code a call) */
#define cg_zero(a, n) memset((a), 0, (size_t)(n) * sizeof(double))

/* a pointer into a part's scratch array that the compiler must keep in a register of its
   own (an empty asm): GCC folds w + k back into w's register and a displacement of four
   bytes beyond w[15]; from a window's base the part's most read slots are one byte away
   (codegen.emit.layout.part_windows) */
#if defined(__GNUC__) && defined(__x86_64__)
static inline double *cg_window(double *p) { __asm__("" : "+r"(p)); return p; }
#else
static inline double *cg_window(double *p) { return p; }
#endif

static inline double cg_sq(double a) { return a * a; }
static inline double cg_cube(double a) { return a * a * a; }

/* a**n for an integer n by repeated squaring */
static inline double cg_powi(double a, int n)
{
    double result = 1.0;
    int k = n < 0 ? -n : n;
    while (k) {
        if (k & 1) result *= a;
        a *= a;
        k >>= 1;
    }
    return n < 0 ? 1.0 / result : result;
}

/* the constants of cg_sincos and cg_sincos2 (each twice: cg_sincos2 reads both lanes):
   the reduction by pi/4 in three parts, then the Cephes minimax polynomials for cos and sin */
#if defined(__GNUC__)
__attribute__((aligned(16)))
#endif
static const double cg_sincos_k[][2] = {
    {-0.0, -0.0}, {1e6, 1e6}, {1.27323954473516268615, 1.27323954473516268615},
    {7.85398125648498535156e-1, 7.85398125648498535156e-1},
    {3.77489470793079817668e-8, 3.77489470793079817668e-8},
    {2.69515142907905952645e-15, 2.69515142907905952645e-15},
    {-1.13585365213876817300e-11, -1.13585365213876817300e-11},
    {2.08757008419747316778e-9, 2.08757008419747316778e-9},
    {-2.75573141792967388112e-7, -2.75573141792967388112e-7},
    {2.48015872888517045348e-5, 2.48015872888517045348e-5},
    {-1.38888888888730564116e-3, -1.38888888888730564116e-3},
    {4.16666666666665929218e-2, 4.16666666666665929218e-2},
    {1.0, 1.0}, {0.5, 0.5},
    {1.58962301576546568060e-10, 1.58962301576546568060e-10},
    {-2.50507477628578072866e-8, -2.50507477628578072866e-8},
    {2.75573136213857245213e-6, 2.75573136213857245213e-6},
    {-1.98412698295895385996e-4, -1.98412698295895385996e-4},
    {8.33333333332211858878e-3, 8.33333333332211858878e-3},
    {-1.66666666666666307295e-1, -1.66666666666666307295e-1}};

/*
 * sin and cos of x together (the generated code computes each angle's pair
 * once). Cody-Waite reduction by pi/4 in three parts, then the Cephes minimax
 * polynomials on [-pi/4, pi/4]: within 2 ulp of glibc for |x| < 1e6 (tested),
 * libm beyond, and NaN for NaN or infinity. A quarter of libm's instructions,
 * and the same bits on every C library.
 */
static inline void cg_sincos(double x, double *sp, double *cp)
{
#define CG_K(i) cg_sincos_k[i][0]
#define CG_STEP(v, i) ((v) * zz + CG_K(i))
    const double a = fabs(x);
    long j;
    double y, z, zz, s, c, sv, cv;
    if (!(a < CG_K(1))) {
        *sp = sin(x);
        *cp = cos(x);
        return;
    }
    j = (long)(a * CG_K(2));                     /* a / (pi/4), rounded up to even */
    j += j & 1;
    y = (double)j;
    z = ((a - y * CG_K(3)) - y * CG_K(4)) - y * CG_K(5);   /* |z| <= pi/4 */
    zz = z * z;
    c = CG_STEP(CG_STEP(CG_STEP(CG_STEP(CG_STEP(CG_K(6), 7), 8), 9), 10), 11);
    c = CG_K(12) - CG_K(13) * zz + zz * zz * c;
    s = CG_STEP(CG_STEP(CG_STEP(CG_STEP(CG_STEP(CG_K(14), 15), 16), 17), 18), 19);
    s = z + z * zz * s;
#undef CG_STEP
#undef CG_K
    sv = (j & 2) ? c : s;                         /* octants 2, 6: sin and cos swap */
    cv = (j & 2) ? s : c;
    if (j & 4) sv = -sv;                          /* octants 4, 6: sin negative */
    if ((j + 2) & 4) cv = -cv;                    /* octants 2, 4: cos negative */
    *sp = signbit(x) ? -sv : sv;
    *cp = cv;
}

/*
 * cg_sincos of two angles at once, in the two lanes of SSE2 (every x86-64
 * CPU has it): the same operations in the same order lane by lane, so the
 * same bits as two cg_sincos calls, in about half the instructions and with
 * no branch on the octant. Either angle at or beyond 1e6 (or not finite)
 * sends both through cg_sincos.
 */
#if defined(__SSE2__) && defined(__GNUC__)
#include <emmintrin.h>
/* the rare path out of line, so that the inlined body stays small */
static __attribute__((noinline)) void cg_sincos2_far(double x0, double x1, double *s0, double *c0,
                                                      double *s1, double *c1)
{
    cg_sincos(x0, s0, c0);
    cg_sincos(x1, s1, c1);
}

#define CG_K(i) _mm_load_pd(k[i])
static inline __attribute__((always_inline)) void cg_sincos2(double x0, double x1, double *s0,
                                                             double *c0, double *s1, double *c1)
{
    const double (*k)[2] = cg_sincos_k;
    __m128d x, sign, a, y, z, zz, s, c, swap, sv, cv;
    __m128i j, jj;
    /* the table through a pointer the compiler cannot see through: each constant is then
       one 16-byte operand of the instruction that reads it, where GCC 12 builds a vector
       constant {v, v} from v by a scalar load and a shuffle (a sixth of the function) */
    __asm__("" : "+r"(k));
    x = _mm_set_pd(x1, x0);
    sign = CG_K(0);
    a = _mm_andnot_pd(sign, x);
    if (__builtin_expect(_mm_movemask_pd(_mm_cmplt_pd(a, CG_K(1))) != 3, 0)) {
        cg_sincos2_far(x0, x1, s0, c0, s1, c1);
        return;
    }
    j = _mm_cvttpd_epi32(_mm_mul_pd(a, CG_K(2)));
    j = _mm_add_epi32(j, _mm_and_si128(j, _mm_set1_epi32(1)));
    y = _mm_cvtepi32_pd(j);
    z = _mm_sub_pd(_mm_sub_pd(_mm_sub_pd(a, _mm_mul_pd(y, CG_K(3))), _mm_mul_pd(y, CG_K(4))),
                   _mm_mul_pd(y, CG_K(5)));
    zz = _mm_mul_pd(z, z);
#define CG_STEP(v, i) _mm_add_pd(_mm_mul_pd(v, zz), CG_K(i))
    c = CG_STEP(CG_STEP(CG_STEP(CG_STEP(CG_STEP(CG_K(6), 7), 8), 9), 10), 11);
    c = _mm_add_pd(_mm_sub_pd(CG_K(12), _mm_mul_pd(CG_K(13), zz)), _mm_mul_pd(_mm_mul_pd(zz, zz), c));
    s = CG_STEP(CG_STEP(CG_STEP(CG_STEP(CG_STEP(CG_K(14), 15), 16), 17), 18), 19);
#undef CG_STEP
    s = _mm_add_pd(z, _mm_mul_pd(_mm_mul_pd(z, zz), s));
    jj = _mm_shuffle_epi32(j, _MM_SHUFFLE(1, 1, 0, 0));         /* each lane's j in 64 bits */
    swap = _mm_castsi128_pd(_mm_cmpeq_epi32(_mm_and_si128(jj, _mm_set1_epi32(2)),
                                            _mm_set1_epi32(2)));
    swap = _mm_and_pd(swap, _mm_xor_pd(s, c));                  /* s ^ c where they swap */
    sv = _mm_xor_pd(s, swap);
    cv = _mm_xor_pd(c, swap);
    /* sign flips: bit 2 of j (resp. j + 2) moved to bit 63, and the sign of x */
    sv = _mm_xor_pd(sv, _mm_castsi128_pd(_mm_slli_epi64(_mm_and_si128(jj, _mm_set1_epi32(4)), 61)));
    sv = _mm_xor_pd(sv, _mm_and_pd(x, sign));
    cv = _mm_xor_pd(cv, _mm_castsi128_pd(_mm_slli_epi64(
        _mm_and_si128(_mm_add_epi32(jj, _mm_set1_epi32(2)), _mm_set1_epi32(4)), 61)));
    _mm_storel_pd(s0, sv);
    _mm_storeh_pd(s1, sv);
    _mm_storel_pd(c0, cv);
    _mm_storeh_pd(c1, cv);
}
#undef CG_K
#else
static inline void cg_sincos2(double x0, double x1, double *s0, double *c0, double *s1, double *c1)
{
    cg_sincos(x0, s0, c0);
    cg_sincos(x1, s1, c1);
}
#endif

#endif /* CG_MATH_H */
