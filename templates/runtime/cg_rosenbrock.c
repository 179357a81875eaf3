/*
 * cg_rosenbrock.c -- the linearly implicit methods: Rosenbrock 4(3) and the
 * Rosenbrock-W method ROS34PW2, one step function over their tableaux, with a
 * cubic Hermite dense output (cg_cont_dense). J and W are the step kit's.
 */
#include "cg_internal.h"

/* A four-stage linearly implicit method in the W-form of Hairer & Wanner
   (IV.7.25): W g_i = f(t + t_i h, x + sum_j a_ij g_j) + sum_j c_ij g_j / h
   + d_i h df/dt with W = I / (gam h) - J; x_new = x + sum_i m_i g_i, error
   estimate sum_i e_i g_i. */
typedef struct cg_tableau {
    double gam, a[4][3], c[4][3], t[4], d[4], m[4], e[4];
    double err_exp;        /* -1 / (order of the estimate + 1) */
    int reuse_f4;          /* the last stage evaluates f where the third did */
    int keep_j;            /* a W-method: J kept over steps, and W with it while h stays */
} cg_tableau;

/* the largest growth of a step */
#define CG_ROS_FACTOR_MAX 5.0

/* the Rosenbrock methods' W = I / (gam h) - J; when it is singular the
   attempt is rejected with half the step (and a new J to come) */
static int cg_factor_w(cg_integrator *s, double gam, int *accepted)
{
    if (!cg_lu_w(s, 1.0 / (gam * s->h))) return 0;
    s->h *= 0.5;
    s->rejected++;
    s->jac_age = -1;
    *accepted = 0;
    return 1;
}

/* a linearly implicit attempt accepted: f at the new state (which the next
   step starts from) and a cubic Hermite dense output between (x, f) and it */
static int cg_implicit_accepted(cg_integrator *s, const double *ynew, double fac,
                                int *accepted)
{
    const int nx = CG_NX(s);
    double f1[nx];
    const double h = s->h, t = s->t, *x = s->x, *f0 = s->f;
    int i, code;
    if ((code = cg_f(s, t + h, ynew, f1))) return code;
    for (i = 0; i < nx; i++) {
        const double dy = ynew[i] - x[i];
        s->cont[i] = x[i];
        s->cont[nx + i] = dy;
        s->cont[2 * nx + i] = h * f0[i] - dy;
        s->cont[3 * nx + i] = dy - h * f1[i] - (h * f0[i] - dy);
        s->cont[4 * nx + i] = 0.0;
        s->x[i] = ynew[i];
        s->f[i] = f1[i];
    }
    return cg_accepted(s, t, h, fac, accepted);
}

/* Rosenbrock 4(3): the Kaps-Rentrop form with Shampine's coefficients
   (order 4, an embedded order-3 estimate); it needs the exact J for its
   order, so a new J every attempt */
static const cg_tableau cg_ros4 = {
    0.5,
    {{0, 0, 0}, {2.0, 0, 0}, {48.0 / 25.0, 6.0 / 25.0, 0}, {48.0 / 25.0, 6.0 / 25.0, 0}},
    {{0, 0, 0}, {-8.0, 0, 0}, {372.0 / 25.0, 12.0 / 5.0, 0},
     {-112.0 / 125.0, -54.0 / 125.0, -2.0 / 5.0}},
    {0, 1.0, 3.0 / 5.0, 3.0 / 5.0}, {0.5, -1.5, 121.0 / 50.0, 29.0 / 250.0},
    {19.0 / 9.0, 0.5, 25.0 / 108.0, 125.0 / 108.0}, {17.0 / 54.0, 7.0 / 36.0, 0, 125.0 / 108.0},
    -0.25, 1, 0};

/* ROS34PW2 of Rang & Angermann (2005): order 3 with an embedded order-2
   estimate, L-stable, stiffly accurate, and a W-method: its order holds with
   any matrix in place of J. The paper's (alpha, gamma, b, b^) transformed to
   the W-form in 40-digit arithmetic, rounded. */
static const cg_tableau cg_ros34pw2 = {
    0.435866521508459,
    {{0, 0, 0}, {2.0, 0, 0}, {1.4192173174557647, -0.25923221167296971, 0},
     {4.1847604823191607, -0.28519201735549591, 2.2942803602790417}},
    {{0, 0, 0}, {-4.5885607205580835, 0, 0}, {-4.1847604823191607, 0.28519201735549591, 0},
     {-6.3681792001283578, -6.7956209444668362, 2.8700986043310561}},
    {0, 0.87173304301691801, 0.73157995778885238, 1.0},
    {0.435866521508459, -0.43586652150845901, -0.41333337623388649, 0},
    {4.1847604823191601, -0.28519201735549587, 2.2942803602790414, 1.0},
    {0.27774994764796811, -1.403239895175999, 1.7726301276675507, 0.5},
    -1.0 / 3.0, 0, 1};

/* one attempt of a linearly implicit method; the W-method keeps J (and
   df/dt) until a step is rejected or CG_JAC_REUSE steps have passed,
   and W's LU while h stays: 3 RHS calls per attempt, f at the new state
   on acceptance, a cubic Hermite dense output */
static int cg_implicit_step(cg_integrator *s, const cg_tableau *tb, int *accepted)
{
    const int nx = CG_NX(s);
    double g[4][nx], fy[nx], y[nx], ynew[nx], e[nx];
    const double h = s->h, t = s->t, *x = s->x, *ft = s->ft;
    double err, fac;
    int i, j, k, code;
    if (!tb->keep_j || s->jac_age < 0 || s->jac_age >= CG_JAC_REUSE) {
        if ((code = cg_step_jacobian(s, 1))) return code;
        s->w_diag = 0.0;
    }
    if (s->w_diag != 1.0 / (tb->gam * h) && cg_factor_w(s, tb->gam, accepted))
        return cg_after_singular(s);
    for (k = 0; k < 4; k++) {
        if (k > 0 && !(k == 3 && tb->reuse_f4)) {
            for (i = 0; i < nx; i++) {
                double v = x[i];
                for (j = 0; j < k; j++) v += tb->a[k][j] * g[j][i];
                y[i] = v;
            }
            if ((code = cg_f(s, t + tb->t[k] * h, y, fy))) return code;
        }
        for (i = 0; i < nx; i++) {
            double v = (k == 0 ? s->f[i] : fy[i]) + h * tb->d[k] * ft[i], w = 0.0;
            for (j = 0; j < k; j++) w += tb->c[k][j] * g[j][i];
            g[k][i] = v + w / h;
        }
        cg_lu_backsolve(nx, s->w, s->piv, g[k]);
    }
    for (i = 0; i < nx; i++) {
        ynew[i] = x[i] + tb->m[0] * g[0][i] + tb->m[1] * g[1][i] + tb->m[2] * g[2][i]
                  + tb->m[3] * g[3][i];
        e[i] = tb->e[0] * g[0][i] + tb->e[1] * g[1][i] + tb->e[2] * g[2][i] + tb->e[3] * g[3][i];
    }
    err = cg_err_norm(e, x, ynew, nx, s->rtol, s->atol);
    fac = cg_step_factor(err, tb->err_exp, CG_ROS_FACTOR_MAX);
    if (!(err <= 1.0)) {
        if (s->jac_age > 0) s->jac_age = -1;   /* perhaps the kept J: a new one for the retry */
        return cg_rejected(s, h, err, fac, accepted);
    }
    s->jac_age++;
    /* a W-method's step that would grow by less than 20 % stays, and so does
       W's LU (the rule of Hairer & Wanner's RADAU5) */
    if (tb->keep_j && fac >= 1.0 && fac <= 1.2) fac = 1.0;
    return cg_implicit_accepted(s, ynew, fac, accepted);
}

CG_API int cg_ros4_step(cg_integrator *s, int *accepted)
{
    return cg_implicit_step(s, &cg_ros4, accepted);
}

CG_API int cg_rosw_step(cg_integrator *s, int *accepted)
{
    return cg_implicit_step(s, &cg_ros34pw2, accepted);
}
