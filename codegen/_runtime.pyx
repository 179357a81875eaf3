# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True, embedsignature=True
"""The Python face of every generated model, compiled once with the package.

A generated model is plain C (its <name>.c and <name>.h) built into a shared
library; this module calls its functions through C function pointers. So a
new model costs one C compile, not a Cython translation plus the compile of
Cython's wrapper code (about 8 s per model on the project's machine, against
0.1 s for a small model's C; see the README).

Argument checks happen here, at the boundary: array kind, length,
contiguity, finiteness. The fast path (a contiguous float64 NumPy vector)
reads the data pointer directly, without a copy or a memoryview.
"""
cimport numpy as cnp
import numpy as np

from codegen.errors import ConvergenceError, DynamicsError

cnp.import_array()

ctypedef int (*rhs_t)(double, const double *, const double *, const double *, double *) noexcept nogil
ctypedef void (*eval_t)(double, const double *, const double *, const double *, double *) noexcept nogil
ctypedef int (*project_t)(double, const double *, const double *, const double *, double, int, double *) noexcept nogil

cdef double _EMPTY[1]


cdef inline bint _is_float_vector(object a) noexcept:
    return (cnp.PyArray_CheckExact(a)
            and cnp.PyArray_TYPE(<cnp.ndarray>a) == cnp.NPY_DOUBLE
            and cnp.PyArray_NDIM(<cnp.ndarray>a) == 1
            and cnp.PyArray_IS_C_CONTIGUOUS(<cnp.ndarray>a))


cdef class Dynamics:
    """rhs, mass_matrix and forcing of one compiled model.

    Built by codegen.build from the addresses of the model's C functions; the
    ``library`` object (a ctypes.CDLL) is kept alive as long as this object.
    """
    cdef rhs_t _rhs
    cdef eval_t _mass
    cdef eval_t _forcing
    cdef rhs_t _lambda
    cdef eval_t _residuals
    cdef project_t _project
    cdef readonly int nq, nu, nx, np, nr, nc, nh
    cdef readonly str name
    cdef readonly tuple states, constants, specifieds
    cdef readonly str mass_failure
    cdef object library

    def __init__(self, library, size_t rhs, size_t mass_matrix, size_t forcing, str name,
                 int nq, int nu, states, constants, specifieds, str mass_failure,
                 int nc=0, int nh=0, size_t constraint_forces=0, size_t residuals=0,
                 size_t project=0):
        if not (rhs and mass_matrix and forcing):
            raise ValueError(f"{name}: missing function address")
        if nc and not (constraint_forces and residuals and project):
            raise ValueError(f"{name}: missing constraint function address")
        self.library = library
        self._rhs = <rhs_t>rhs
        self._mass = <eval_t>mass_matrix
        self._forcing = <eval_t>forcing
        self._lambda = <rhs_t>constraint_forces
        self._residuals = <eval_t>residuals
        self._project = <project_t>project
        self.nc, self.nh = nc, nh
        self.name = name
        self.nq, self.nu, self.nx = nq, nu, nq + nu
        self.states, self.constants, self.specifieds = tuple(states), tuple(constants), tuple(specifieds)
        self.np, self.nr = len(self.constants), len(self.specifieds)
        self.mass_failure = mass_failure
        if len(self.states) != self.nx:
            raise ValueError(f"{name}: {len(self.states)} state names for {self.nx} states")

    # -- argument conversion ------------------------------------------------
    cdef object _vector(self, object a, Py_ssize_t n, str what):
        """a as a contiguous float64 vector of length n (the same object when it is one)."""
        if not _is_float_vector(a):
            if a is None:
                raise ValueError(f"{self.name}: {what} is required (length {n})")
            if np.iscomplexobj(a):
                raise TypeError(f"{self.name}: {what} must be real, got complex values")
            try:
                a = np.ascontiguousarray(a, dtype=np.float64)
            except (TypeError, ValueError) as exc:
                raise TypeError(f"{self.name}: {what} must be an array of numbers: {exc}") from None
            if cnp.PyArray_NDIM(<cnp.ndarray>a) != 1:
                raise ValueError(f"{self.name}: {what} must be 1-D of length {n}, "
                                 f"got shape {a.shape}")
        if cnp.PyArray_DIM(<cnp.ndarray>a, 0) != n:
            raise ValueError(f"{self.name}: {what} must have length {n}, "
                             f"got {cnp.PyArray_DIM(<cnp.ndarray>a, 0)}")
        return a

    cdef object _specified(self, double t, object x, object r):
        if self.nr == 0:
            if r is not None and len(r) != 0:
                raise ValueError(f"{self.name}: the model has no specified inputs, "
                                 f"got r of length {len(r)}")
            return None
        if r is None:
            raise ValueError(f"{self.name}: the model has specified inputs {list(self.specifieds)}: "
                             f"pass r (an array of length {self.nr} or a callable r(t, x))")
        if callable(r):
            r = r(t, x)
        return self._vector(r, self.nr, "r")

    cdef object _fail(self, int code, double t, x, p, r):
        if code == 1:
            for what, v, names in (("x", x, self.states), ("p", p, self.constants),
                                   ("r", r, self.specifieds)):
                if v is None:
                    continue
                bad = [names[i] for i in range(len(v)) if not np.isfinite(v[i])]
                if bad:
                    raise ValueError(f"{self.name}: {what} is not finite at {bad}")
            raise ValueError(f"{self.name}: t = {t} is not finite")
        if code == 2:
            what = self.mass_failure + (" on the constraints' null space" if self.nc else "")
            raise DynamicsError(f"{self.name}: {what} at t = {t}, x = {np.asarray(x).tolist()}")
        if code == 4:
            raise DynamicsError(f"{self.name}: the SVD of the constraint matrix did not converge "
                                f"at t = {t}, x = {np.asarray(x).tolist()}")
        raise DynamicsError(f"{self.name}: the result is not finite at t = {t}, "
                            f"x = {np.asarray(x).tolist()} (a singularity of the equations?)")

    # -- the functions ----------------------------------------------------------
    def rhs(self, double t, x, p, r=None, out=None):
        """x' = [q', u'] at time t, with u' solved from M u' = F in C.

        x: states, p: constants, r: specified inputs (an array, or a callable
        r(t, x); required when the model has any). out: a writable contiguous
        float64 array of length nx, written in place (no allocation).
        Usable as scipy.integrate.solve_ivp(model.rhs, span, x0, args=(p,)).
        Raises ValueError for a wrong shape or a non-finite input and
        DynamicsError when the mass matrix cannot be factored or the result
        is not finite.
        """
        x = self._vector(x, self.nx, "x")
        p = self._vector(p, self.np, "p")
        r = self._specified(t, x, r)
        if out is None:
            out = cnp.PyArray_EMPTY(1, [self.nx], cnp.NPY_DOUBLE, 0)
        elif not (_is_float_vector(out) and cnp.PyArray_ISWRITEABLE(<cnp.ndarray>out)
                  and cnp.PyArray_DIM(<cnp.ndarray>out, 0) == self.nx):
            raise ValueError(f"{self.name}: out must be a writable contiguous float64 "
                             f"array of length {self.nx}")
        cdef const double *rp = &_EMPTY[0] if r is None else <const double *>cnp.PyArray_DATA(<cnp.ndarray>r)
        cdef int code = self._rhs(t, <const double *>cnp.PyArray_DATA(<cnp.ndarray>x),
                                  <const double *>cnp.PyArray_DATA(<cnp.ndarray>p), rp,
                                  <double *>cnp.PyArray_DATA(<cnp.ndarray>out))
        if code:
            self._fail(code, t, x, p, r)
        return out

    cdef object _evaluate(self, eval_t f, double t, x, p, r, shape):
        x = self._vector(x, self.nx, "x")
        p = self._vector(p, self.np, "p")
        r = self._specified(t, x, r)
        if not (np.isfinite(t) and np.isfinite(x).all() and np.isfinite(p).all()
                and (r is None or np.isfinite(r).all())):
            self._fail(1, t, x, p, r)
        out = np.empty(shape)
        cdef const double *rp = &_EMPTY[0] if r is None else <const double *>cnp.PyArray_DATA(<cnp.ndarray>r)
        f(t, <const double *>cnp.PyArray_DATA(<cnp.ndarray>x),
          <const double *>cnp.PyArray_DATA(<cnp.ndarray>p), rp,
          <double *>cnp.PyArray_DATA(<cnp.ndarray>out))
        return out

    def mass_matrix(self, double t, x, p, r=None):
        """M at (t, x): shape (nu, nu)."""
        return self._evaluate(self._mass, t, x, p, r, (self.nu, self.nu))

    def forcing(self, double t, x, p, r=None):
        """F at (t, x): shape (nu,)."""
        return self._evaluate(self._forcing, t, x, p, r, (self.nu,))

    # -- run-time constraints ---------------------------------------------------
    cdef _need_constraints(self):
        if not self.nc:
            raise ValueError(f"{self.name}: the model has no run-time constraints")

    def constraint_forces(self, double t, x, p, r=None):
        """lambda with A^T lambda = M u' - F (nc entries): the constraint forces."""
        self._need_constraints()
        x = self._vector(x, self.nx, "x")
        p = self._vector(p, self.np, "p")
        r = self._specified(t, x, r)
        out = np.empty(self.nc)
        cdef const double *rp = &_EMPTY[0] if r is None else <const double *>cnp.PyArray_DATA(<cnp.ndarray>r)
        cdef int code = self._lambda(t, <const double *>cnp.PyArray_DATA(<cnp.ndarray>x),
                                     <const double *>cnp.PyArray_DATA(<cnp.ndarray>p), rp,
                                     <double *>cnp.PyArray_DATA(<cnp.ndarray>out))
        if code:
            self._fail(code, t, x, p, r)
        return out

    def residuals(self, double t, x, p, r=None):
        """[f(q, t) (nh entries); A u - B (nc entries)]: position and velocity residuals."""
        self._need_constraints()
        return self._evaluate(self._residuals, t, x, p, r, (self.nh + self.nc,))

    def project(self, x, p, double t=0.0, r=None, double tol=1e-12, int maxiter=50):
        """The consistent state nearest to x: Newton on f(q, t) = 0 with the
        pseudoinverse of f_q until max|f| <= tol, then the speeds by least norm
        onto A u = B. Raises ConvergenceError (with the residual) if maxiter
        iterations do not reach tol."""
        self._need_constraints()
        x = self._vector(x, self.nx, "x")
        p = self._vector(p, self.np, "p")
        r = self._specified(t, x, r)
        if not (tol > 0):
            raise ValueError(f"{self.name}: tol must be positive, got {tol}")
        out = np.empty(self.nx)
        cdef const double *rp = &_EMPTY[0] if r is None else <const double *>cnp.PyArray_DATA(<cnp.ndarray>r)
        cdef int it = self._project(t, <const double *>cnp.PyArray_DATA(<cnp.ndarray>x),
                                    <const double *>cnp.PyArray_DATA(<cnp.ndarray>p), rp, tol,
                                    maxiter, <double *>cnp.PyArray_DATA(<cnp.ndarray>out))
        if it == -2:
            if not (np.isfinite(t) and np.isfinite(x).all() and np.isfinite(p).all()):
                self._fail(1, t, x, p, r)
            raise ConvergenceError(f"{self.name}: project met a non-finite value from x = "
                                   f"{x.tolist()}")
        if it < 0:
            res = self.residuals(t, out, p, r)[:self.nh]
            raise ConvergenceError(
                f"{self.name}: project did not reach |f| <= {tol} in {maxiter} Newton "
                f"iterations from x = {x.tolist()}: max|f| = {abs(res).max() if len(res) else 0.0:.3e}"
                f" (inconsistent constraints, or too far from a consistent configuration)")
        return out
