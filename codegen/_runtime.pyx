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
from cpython.exc cimport PyErr_CheckSignals
from cython.parallel cimport prange, threadid
from openmp cimport omp_get_max_threads

cdef extern from "Python.h":
    # the same two functions without Cython's exception propagation, for the
    # parallel loop: an interrupt there becomes a status, not a raise mid-loop
    int _signals_pending "PyErr_CheckSignals"()
    void _clear_error "PyErr_Clear"()

import numpy as np

from codegen.errors import ConvergenceError, DynamicsError

cnp.import_array()

ctypedef int (*rhs_t)(double, const double *, const double *, const double *, double *) noexcept nogil
ctypedef void (*eval_t)(double, const double *, const double *, const double *, double *) noexcept nogil
ctypedef int (*project_t)(double, const double *, const double *, const double *, double, int, double *) noexcept nogil
ctypedef int (*init_t)(void *, int, double, const double *, const double *, int, const double *,
                       const double *, double, double, double) noexcept nogil
ctypedef int (*step_to_t)(void *, double, double *) noexcept nogil
ctypedef size_t (*size_t_fn)() noexcept nogil
ctypedef void (*stats_t)(const void *, long *, long *, long *, double *) noexcept nogil
ctypedef void (*set_t)(void *, long, int, long) noexcept nogil

METHODS = {"rk4": 0, "dopri5": 1, "rosenbrock": 2, "rosw": 3, "bdf": 4}
STATUS = {0: "ok", 1: "non-finite input", 2: "mass matrix not positive definite",
          3: "non-finite result", 4: "constraint SVD did not converge",
          5: "max_steps reached", 6: "step size underflow", 7: "singular Newton matrix",
          -1: "interrupted"}
# integrate_to's "step budget of this call spent" (templates/integrators.h), and the
# budget simulate gives each call: Ctrl-C and the progress bar are served within
# that many steps however far apart the output times are
cdef enum:
    PAUSED = 8
    PAUSE_STEPS = 2000

cdef double _EMPTY[1]


cdef inline const double *_data(object a) noexcept:
    """The data of a checked float64 vector; a valid dummy pointer for None (no inputs)."""
    return &_EMPTY[0] if a is None else <const double *>cnp.PyArray_DATA(<cnp.ndarray>a)


cdef inline bint _is_float_vector(object a) noexcept:
    return (cnp.PyArray_CheckExact(a)
            and cnp.PyArray_TYPE(<cnp.ndarray>a) == cnp.NPY_DOUBLE
            and cnp.PyArray_NDIM(<cnp.ndarray>a) == 1
            and cnp.PyArray_IS_C_CONTIGUOUS(<cnp.ndarray>a))


cdef bint _ascending_within(const double[::1] v, double lo, double hi) noexcept:
    """v finite, ascending and within [lo, hi]: one pass (NaN fails every test)."""
    cdef Py_ssize_t i
    cdef double prev = lo
    for i in range(v.shape[0]):
        if not (v[i] >= prev and v[i] <= hi and v[i] - v[i] == 0.0):
            return False
        prev = v[i]
    return True


def _progress_bar(name, double t0, double t1):
    """A tqdm bar over the simulated time, or None (with a warning) without tqdm."""
    try:
        from tqdm import tqdm
    except ImportError:
        import warnings
        warnings.warn("progress=True needs tqdm (pip install tqdm); running without a bar",
                      stacklevel=3)
        return None
    return tqdm(total=t1 - t0, desc=name, unit="s (simulated)",
                bar_format="{l_bar}{bar}| {n:.4g}/{total:.4g} s [{elapsed}<{remaining}]")


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
    cdef init_t _init
    cdef step_to_t _step_to
    cdef stats_t _stats
    cdef set_t _set
    cdef readonly size_t integrator_size
    cdef readonly size_t rhs_address
    cdef readonly int nq, nu, nx, np, nr, nc, nh
    cdef readonly str name
    cdef readonly tuple states, constants, specifieds
    cdef readonly str mass_failure
    cdef object library

    def __init__(self, library, size_t rhs, size_t mass_matrix, size_t forcing, str name,
                 int nq, int nu, states, constants, specifieds, str mass_failure,
                 int nc=0, int nh=0, size_t constraint_forces=0, size_t residuals=0,
                 size_t project=0, size_t integrator_init=0, size_t integrate_to=0,
                 size_t integrator_size=0, size_t integrator_stats=0, size_t integrator_set=0,
                 size_t rhs_cb=0):
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
        if not (integrator_init and integrate_to and integrator_size and integrator_stats
                and integrator_set and rhs_cb):
            raise ValueError(f"{name}: missing integrator function address")
        self._init = <init_t>integrator_init
        self._step_to = <step_to_t>integrate_to
        self._stats = <stats_t>integrator_stats
        self._set = <set_t>integrator_set
        self.integrator_size = (<size_t_fn>integrator_size)()
        self.rhs_address = rhs_cb
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
        cdef int code = self._rhs(t, _data(x), _data(p), _data(r),
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
        f(t, _data(x), _data(p), _data(r), <double *>cnp.PyArray_DATA(<cnp.ndarray>out))
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
        cdef int code = self._lambda(t, _data(x), _data(p), _data(r),
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
        cdef int it = self._project(t, _data(x), _data(p), _data(r), tol, maxiter,
                                    <double *>cnp.PyArray_DATA(<cnp.ndarray>out))
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

    # -- simulation in C ----------------------------------------------------------
    cdef _check_start(self, double t0, x0, p, r0, str where=""):
        """A constrained model's run starts on its constraints (to 1e-6, relative
        to the state's size): the elimination keeps the residuals where they
        start, so an off-constraint x0 would run a different mechanism."""
        if not self.nc:
            return
        res = np.abs(self.residuals(t0, x0, p, r0))
        tol = 1e-6 * (1.0 + np.abs(x0).max())
        if res.max() > tol:
            pos = res[:self.nh].max() if self.nh else 0.0
            raise ValueError(f"{self.name}: {where}x0 is off the constraints (max|f| = {pos:.3g}, "
                             f"max|A u - B| = {res[self.nh:].max():.3g}, allowed {tol:.1e}): "
                             f"start from project(x0, p), the nearest consistent state")

    cdef tuple _input_table(self, r, double t0):
        """(times, values) of the specified inputs: a constant vector or a (times, values) table."""
        if self.nr == 0:
            if r is not None and len(r) != 0:
                raise ValueError(f"{self.name}: the model has no specified inputs")
            return np.zeros(1), np.zeros((1, 1))
        if r is None:
            raise ValueError(f"{self.name}: the model has specified inputs {list(self.specifieds)}: "
                             f"pass r, a vector of {self.nr} or a table (times, values)")
        if callable(r):
            raise TypeError(f"{self.name}: simulate runs in C and cannot call Python for r; "
                            f"give r as a table (times, values) instead")
        if isinstance(r, tuple) and len(r) == 2:
            times = np.ascontiguousarray(r[0], dtype=np.float64)
            values = np.ascontiguousarray(r[1], dtype=np.float64)
            if values.ndim == 1 and self.nr == 1:
                values = values.reshape(-1, 1)
            if times.ndim != 1 or values.shape != (times.shape[0], self.nr) or times.shape[0] == 0:
                raise ValueError(f"{self.name}: the input table needs times of shape (k,) and "
                                 f"values of shape (k, {self.nr}), got {times.shape} and {values.shape}")
            if not _ascending_within(times, -np.inf, np.inf) or not np.isfinite(values).all():
                raise ValueError(f"{self.name}: the input table times must be ascending and "
                                 f"all entries finite")
            return times, values
        v = self._vector(r, self.nr, "r")
        return np.array([t0]), v.reshape(1, self.nr).copy()

    cdef tuple _run_args(self, str method, t_span, dt, t_eval, double rtol, double atol,
                         long max_steps):
        """A run's arguments checked; returns (t0, t1, t_eval), t_eval by
        default every dt (rk4) or 101 points."""
        if method not in METHODS:
            raise ValueError(f"{self.name}: method must be one of {list(METHODS)}, got {method!r}")
        if max_steps < 1:
            raise ValueError(f"{self.name}: max_steps must be at least 1, got {max_steps}")
        if method != "rk4" and not (0 < rtol < np.inf and 0 < atol < np.inf):
            raise ValueError(f"{self.name}: rtol and atol must be positive and finite, "
                             f"got rtol = {rtol}, atol = {atol}")
        try:
            t0, t1 = (float(v) for v in t_span)
        except (TypeError, ValueError):
            t0 = t1 = np.nan
        if not (np.isfinite(t0) and np.isfinite(t1) and t1 > t0):
            raise ValueError(f"{self.name}: t_span must be two finite times (t0, t1) with t1 > t0, "
                             f"got {t_span!r}")
        if method == "rk4":
            if dt is None or not (0 < dt < np.inf):
                raise ValueError(f"{self.name}: rk4 needs a positive, finite step dt, got {dt!r}")
            if t_eval is None:
                t_eval = np.append(np.arange(t0, t1, dt), t1)
        elif t_eval is None:
            t_eval = np.linspace(t0, t1, 101)
        t_eval = np.ascontiguousarray(t_eval, dtype=np.float64)
        if t_eval.ndim != 1 or len(t_eval) == 0 or not _ascending_within(t_eval, t0, t1):
            raise ValueError(f"{self.name}: t_eval must be finite, ascending and inside t_span")
        return t0, t1, t_eval

    def simulate(self, t_span, x0, p, r=None, str method="dopri5", double rtol=1e-8,
                 double atol=1e-8, dt=None, t_eval=None, long max_steps=10_000_000,
                 bint hold=True, progress=False):
        """Integrate from t_span[0] to t_span[1] in C; returns a SimulationResult.

        method: 'rk4' (fixed step dt, required), 'dopri5' (adaptive Dormand-Prince
        5(4), rtol/atol, dense output), or for stiff models 'bdf' (variable-order
        NDF/BDF 1-5, SciPy's BDF algorithm in C: the fewest RHS calls, one
        Jacobian kept while Newton converges), 'rosenbrock' (linearly implicit
        4(3), a finite-difference Jacobian every step: small models, tight
        tolerances) or 'rosw' (Rosenbrock-W ROS34PW2, order 3, one Jacobian
        kept over up to 20 steps). t_eval: output times (default:
        101 evenly spaced points; for rk4 every dt). r: the specified inputs, a
        constant vector or a table (times, values) held piecewise constant
        (hold=True) or linearly interpolated. progress=True shows a tqdm bar if
        tqdm is installed. Ctrl-C stops at the next output point and returns the
        part computed, with status -1. A model with run-time constraints must
        start on them (to 1e-6): project(x0, p) gives the nearest such state.
        """
        from codegen.runtime import SimulationResult
        t0, t1, t_eval = self._run_args(method, t_span, dt, t_eval, rtol, atol, max_steps)
        x0 = self._vector(x0, self.nx, "x0").copy()
        p = self._vector(p, self.np, "p")
        times, values = self._input_table(r, t0)
        self._check_start(t0, x0, p, values[0] if self.nr else None)
        cdef cnp.ndarray buf = np.zeros(self.integrator_size, dtype=np.uint8)
        cdef void *s = cnp.PyArray_DATA(buf)
        cdef cnp.ndarray xs = np.empty((len(t_eval), self.nx))
        cdef double[::1] tv = t_eval
        cdef double[:, ::1] xv = xs
        cdef int code = self._init(s, METHODS[method], t0, _data(x0), _data(p),
                                   len(times) if self.nr else 0, _data(times), _data(values), rtol, atol,
                                   float(dt) if dt is not None else 0.0)
        if code:
            if code == 1:
                self._fail(1, t0, x0, p, values[0] if self.nr else None)
            self._fail(code, t0, x0, p, None)
        self._set(s, max_steps, 1 if hold else 0, PAUSE_STEPS)
        bar = _progress_bar(self.name, t0, t1) if progress else None
        cdef Py_ssize_t k, done = 0
        cdef long steps = 0, rejected = 0, nfev = 0
        cdef double t_now = t0
        status = 0
        try:
            for k in range(len(t_eval)):
                while True:
                    with nogil:
                        code = self._step_to(s, tv[k], &xv[k, 0])
                    if bar is not None:
                        self._stats(s, &steps, &rejected, &nfev, &t_now)
                        bar.update(min(t_now, t1) - t0 - bar.n)
                    PyErr_CheckSignals()
                    if code != PAUSED:
                        break
                if code:
                    status = code
                    break
                done = k + 1
        except KeyboardInterrupt:
            status = -1
        finally:
            if bar is not None:
                bar.close()
        self._stats(s, &steps, &rejected, &nfev, &t_now)
        return SimulationResult(t=t_eval[:done].copy(), x=xs[:done].copy(), states=list(self.states),
                                status=status, message=STATUS.get(status, f"error {status}"),
                                nsteps=steps, nrejected=rejected, nfev=nfev, method=method)

    def rhs_batch(self, double t, X, P, R=None, out=None):
        """x' for many states at once, in C over both cores (OpenMP), without the GIL.

        X: (N, nx); P: (np,) for all or (N, np); R: None, (nr,) or (N, nr).
        Returns (N, nx). Raises for the first row whose rhs fails, naming it.
        """
        X = np.ascontiguousarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != self.nx:
            raise ValueError(f"{self.name}: X must have shape (N, {self.nx}), got {X.shape}")
        cdef Py_ssize_t n = X.shape[0], i
        Pm = self._rows(P, n, self.np, "P")
        Rm = self._rows(R, n, self.nr, "R") if self.nr else np.zeros((n, 1))
        if out is None:
            out = np.empty((n, self.nx))
        elif not (isinstance(out, np.ndarray) and out.shape == (n, self.nx) and out.dtype == np.float64
                  and out.flags.c_contiguous and out.flags.writeable):
            raise ValueError(f"{self.name}: out must be a writable C-contiguous float64 array "
                             f"of shape ({n}, {self.nx})")
        cdef double[:, ::1] xv = X, pv = Pm, rv = Rm, ov = out
        cdef int[::1] codes = np.zeros(n, dtype=np.intc)
        cdef rhs_t f = self._rhs
        cdef int np_ = self.np
        if n == 0:
            return out
        for i in prange(n, nogil=True, schedule="static"):
            codes[i] = f(t, &xv[i, 0], &pv[i, 0] if np_ else &_EMPTY[0], &rv[i, 0], &ov[i, 0])
        bad = np.flatnonzero(np.asarray(codes))
        if len(bad):
            i = bad[0]
            try:
                self._fail(codes[i], t, X[i], Pm[i], Rm[i] if self.nr else None)
            except (ValueError, DynamicsError) as exc:
                raise type(exc)(f"row {i}: {exc}") from None
        return out

    cdef object _rows(self, A, Py_ssize_t n, int width, str what):
        """A as (n, width): one row broadcast, or n rows."""
        if A is None:
            raise ValueError(f"{self.name}: {what} is required")
        A = np.ascontiguousarray(A, dtype=np.float64)
        if A.ndim == 1:
            if A.shape[0] != width:
                raise ValueError(f"{self.name}: {what} must have {width} entries per row, got {A.shape[0]}")
            A = np.broadcast_to(A, (n, width)).copy()      # writable, also for n = 0
        if A.shape != (n, width):
            raise ValueError(f"{self.name}: {what} must have shape ({n}, {width}) or ({width},), "
                             f"got {A.shape}")
        if width == 0:
            return np.zeros((n, 1))
        return A

    def simulate_batch(self, t_span, X0, P, R=None, str method="dopri5", double rtol=1e-8,
                       double atol=1e-8, dt=None, t_eval=None, long max_steps=10_000_000):
        """Many simulations in C over both cores (OpenMP), without the GIL.

        X0: (N, nx) initial states; P: (np,) or (N, np); R: constant inputs,
        (nr,) or (N, nr). t_eval as in simulate. Returns (t_eval, X, status):
        X of shape (N, len(t_eval), nx) and one status code per run (0 = ok;
        a failed run keeps NaN after its failure). Ctrl-C stops every run within
        a few thousand steps and returns what is done: the runs it cut short, or
        that had not started, have status -1.
        """
        t0, t1, t_eval = self._run_args(method, t_span, dt, t_eval, rtol, atol, max_steps)
        X0 = np.ascontiguousarray(X0, dtype=np.float64)
        if X0.ndim != 2 or X0.shape[1] != self.nx:
            raise ValueError(f"{self.name}: X0 must have shape (N, {self.nx}), got {X0.shape}")
        cdef Py_ssize_t n = X0.shape[0], i, k
        Pm = self._rows(P, n, self.np, "P")
        Rm = self._rows(R, n, self.nr, "R") if self.nr else np.zeros((n, 1))
        if self.nc:          # rows with a non-finite entry fail in C, with their status
            for i in range(n):
                if np.isfinite(X0[i]).all() and np.isfinite(Pm[i]).all() and np.isfinite(Rm[i]).all():
                    self._check_start(t0, X0[i], Pm[i], Rm[i] if self.nr else None, f"row {i}: ")
        cdef Py_ssize_t m = len(t_eval)
        out = np.full((n, m, self.nx), np.nan)
        # one integrator per thread, not per run: a thread's runs follow one another, and
        # an implicit method's integrator holds two nx-by-nx matrices
        cdef cnp.ndarray bufs = np.zeros((omp_get_max_threads(), self.integrator_size),
                                         dtype=np.uint8)
        cdef unsigned char *base = <unsigned char *>cnp.PyArray_DATA(bufs)
        cdef size_t size = self.integrator_size
        cdef double[:, ::1] xv = X0, pv = Pm, rv = Rm
        cdef double[:, :, ::1] ov = out
        cdef double[::1] tv = t_eval
        cdef double[::1] t_table = np.array([t0])
        cdef int[::1] codes = np.zeros(n, dtype=np.intc)
        cdef int meth = METHODS[method], nr_table = 1 if self.nr else 0, code, np_ = self.np
        cdef double h = float(dt) if dt is not None else 0.0
        cdef init_t init = self._init
        cdef step_to_t step_to = self._step_to
        cdef set_t setter = self._set
        cdef void *s
        cdef double start = t0
        cdef int[::1] stop = np.zeros(1, dtype=np.intc)     # shared by the threads
        for i in prange(n, nogil=True, schedule="dynamic"):
            if stop[0]:
                codes[i] = -1                          # interrupted before it started
                continue
            s = <void *>(base + threadid() * size)
            code = init(s, meth, start, &xv[i, 0], &pv[i, 0] if np_ else &_EMPTY[0], nr_table,
                        &t_table[0], &rv[i, 0], rtol, atol, h)
            if code == 0:
                setter(s, max_steps, 1, PAUSE_STEPS)
                for k in range(m):
                    while True:
                        code = step_to(s, tv[k], &ov[i, k, 0])
                        if code != PAUSED:
                            break
                        if threadid() == 0:            # the calling thread, where signals land
                            with gil:
                                if _signals_pending() != 0:
                                    _clear_error()
                                    stop[0] = 1
                        if stop[0]:
                            code = -1
                            break
                    if code != 0:
                        break
            codes[i] = code
        return t_eval, out, np.asarray(codes).copy()
