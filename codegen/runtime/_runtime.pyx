# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True, embedsignature=True
"""The Python face of every generated model, compiled once with the package.

It holds the codegen runtime (templates/runtime: the solve, the constraint
elimination, the integrators, compiled into this extension) and drives a
generated model through its descriptor (cg_model.h): a new model costs one
compile of its own small C file.

Argument checks happen here, at the boundary: array kind, length, byte
order, contiguity, finiteness. The fast path (a contiguous, aligned,
native-endian float64 NumPy vector) reads the data pointer directly, without
a copy or a memoryview.
"""
from libc.math cimport isfinite, NAN
from libc.stdlib cimport calloc, free, realloc
from libc.string cimport memcpy
cimport numpy as cnp
from cpython.exc cimport PyErr_CheckSignals
from cython.parallel cimport prange, threadid
from openmp cimport omp_get_max_threads

cdef extern from "Python.h":
    # the same two functions without Cython's exception propagation, for the
    # parallel loop: an interrupt there becomes a status, not a raise mid-loop
    int _signals_pending "PyErr_CheckSignals"()
    void _clear_error "PyErr_Clear"()

include "_contract.pxi"

cdef extern from "cg_runtime.h" nogil:
    const cg_runtime cg_runtime_shared
    const char *cg_status_message(int code)
    const char *cg_method_name(int method)
    int cg_method_properties(int method)
    int cg_check_model(const cg_model *m)
    double cg_integrator_nearest_singular(const cg_integrator *s, double *t)
    int cg_integrator_warning(const cg_integrator *s)
    double cg_integrator_state(const cg_integrator *s, double *x)
    void cg_rhs_cb(double t, double *u, double *du, void *data)

import numpy as np

from codegen.errors import CacheError, ConvergenceError, DynamicsError
from codegen.runtime.results import BatchResult, SimulationResult
from codegen.runtime.run_arguments import (DEFAULT_MAX_EVENTS, ControllerGuard, checked_reset, count,
                                           event_settings, feedback, method_error,
                                           reset_never_called, restitution_error, t_eval_error)
from codegen.equations.signals import shapes_of

cnp.import_array()

#: the runtime's own ABI version and methods ({name: id}), from its C
ABI_VERSION = CG_ABI_VERSION
METHODS = {cg_method_name(i).decode(): i for i in range(CG_N_METHODS)}
# the budget simulate gives each integrate_to call: Ctrl-C and the progress bar
# are served within that many steps however far apart the output times are
cdef enum:
    PAUSE_STEPS = 2000


def status_message(int code):
    """The runtime's text for a status code (cg_model.h's CG_STATUS_LIST)."""
    return cg_status_message(code).decode()


cdef double _EMPTY[1]


cdef inline const double *_data(object a) noexcept:
    """The data of a checked float64 vector; a valid dummy pointer for None (no inputs)."""
    return &_EMPTY[0] if a is None else <const double *>cnp.PyArray_DATA(<cnp.ndarray>a)


cdef inline bint _is_float_matrix(object a, Py_ssize_t rows, Py_ssize_t cols) noexcept:
    """An (rows, cols) array the C can write in place: float64, contiguous, writable, native."""
    return (cnp.PyArray_CheckExact(a)
            and cnp.PyArray_TYPE(<cnp.ndarray>a) == cnp.NPY_DOUBLE
            and cnp.PyArray_NDIM(<cnp.ndarray>a) == 2
            and cnp.PyArray_DIM(<cnp.ndarray>a, 0) == rows
            and cnp.PyArray_DIM(<cnp.ndarray>a, 1) == cols
            and cnp.PyArray_IS_C_CONTIGUOUS(<cnp.ndarray>a)
            and cnp.PyArray_ISALIGNED(<cnp.ndarray>a)
            and cnp.PyArray_ISWRITEABLE(<cnp.ndarray>a)
            and cnp.PyArray_ISNOTSWAPPED(<cnp.ndarray>a))


cdef inline bint _is_float_vector(object a) noexcept:
    """A vector the C can read in place: float64, 1-D, contiguous, aligned, native byte order."""
    return (cnp.PyArray_CheckExact(a)
            and cnp.PyArray_TYPE(<cnp.ndarray>a) == cnp.NPY_DOUBLE
            and cnp.PyArray_NDIM(<cnp.ndarray>a) == 1
            and cnp.PyArray_IS_C_CONTIGUOUS(<cnp.ndarray>a)
            and cnp.PyArray_ISALIGNED(<cnp.ndarray>a)
            and cnp.PyArray_ISNOTSWAPPED(<cnp.ndarray>a))


cdef inline bint _finite(object a) noexcept:
    """Every entry of a (None or a contiguous float64 vector) is finite."""
    if a is None:
        return True
    cdef const double *d = _data(a)
    cdef Py_ssize_t i, n = cnp.PyArray_DIM(<cnp.ndarray>a, 0)
    for i in range(n):
        if not isfinite(d[i]):
            return False
    return True


cdef bint _ascending_within(const double[::1] v, double lo, double hi) noexcept:
    """v finite, ascending and within [lo, hi]: one pass (NaN fails every test)."""
    cdef Py_ssize_t i
    cdef double prev = lo
    for i in range(v.shape[0]):
        if not (v[i] >= prev and v[i] <= hi and v[i] - v[i] == 0.0):
            return False
        prev = v[i]
    return True


def _entries(a):
    """The number of entries of a (one for what NumPy cannot shape)."""
    try:
        return np.size(a)
    except (TypeError, ValueError):
        return 1


# the input table of a model without inputs: never written (the C reads const tables)
_NO_TIMES, _NO_VALUES = np.zeros(1), np.zeros((1, 1))


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


cdef tuple _names(const char * const * table, int n):
    return tuple(table[i].decode() for i in range(n))


cdef struct Watched:
    cg_controller_fn fn          # the user's C controller and its data
    void *data
    const int *raised            # ControllerGuard.flag: its Python body raised
    int nr
    double t_raised              # the first right-hand side after it raised (NaN: none)


cdef void _watched_controller(double t, const double *x, const double *p, double *r,
                              void *data) noexcept nogil:
    """The user's controller, then, once its Python body has raised, non-finite inputs:
    the run ends at this right-hand side (CG_ERR_CONTROL) rather than run on without it."""
    cdef Watched *w = <Watched *>data
    cdef int i
    if not w.raised[0]:
        w.fn(t, x, p, r, w.data)
    if w.raised[0]:
        if w.t_raised != w.t_raised:
            w.t_raised = t
        for i in range(w.nr):
            r[i] = NAN


# where a run failed, for its message (Dynamics._diagnose)
cdef enum:
    AT_STEP = 0          # stepping: the right-hand side or an event function
    AT_OUTPUT = 1        # the outputs at an output time
    AT_IMPACT = 2        # an event's generated impact, or the restart after it


include "_eventlog.pxi"


cdef class Dynamics:
    """rhs, mass_matrix, forcing and the simulations of one compiled model.

    Built by codegen.runtime.compiled_model from the address of the model's descriptor
    (``<name>_model()``); the ``library`` object (a ctypes.CDLL) is kept
    alive as long as this object.
    """
    cdef const cg_model *m
    cdef const cg_runtime *rt          # the model's own (fused) runtime, else the shared one
    cdef readonly bint fused
    cdef readonly size_t integrator_size
    cdef readonly size_t model_address
    cdef readonly int nq, nu, nx, np, nr, nc, nh
    cdef readonly str name
    cdef readonly tuple states, constants, specifieds
    cdef readonly bint symmetric
    cdef readonly long operation_count
    cdef readonly str mass_failure
    cdef readonly int ny, ne
    cdef readonly tuple output_entries, event_names, impact_events
    cdef readonly dict output_shapes
    cdef tuple _output_slices           # (name, shape, first entry, end)
    cdef object _impacts                # intc (ne,): 1 where the event has an impact
    cdef object library

    def __init__(self, library, size_t model_address, str where):
        if not model_address:
            raise ImportError(f"{where}: the descriptor is a null pointer")
        self.m = <const cg_model *>model_address
        if self.m.abi_version != CG_ABI_VERSION:
            raise CacheError(f"{where} was built for runtime ABI {self.m.abi_version}, this "
                             f"runtime is ABI {CG_ABI_VERSION}: regenerate the model")
        if cg_check_model(self.m):
            raise ImportError(f"{where}: the descriptor has no equations")
        self.library = library
        self.model_address = model_address
        self.name = self.m.name.decode()
        self.nq, self.nu, self.nx = self.m.nq, self.m.nu, self.m.nx
        self.np, self.nr, self.nc, self.nh = self.m.np, self.m.nr, self.m.nc, self.m.nh
        self.states = _names(self.m.state_names, self.nx)
        self.constants = _names(self.m.constant_names, self.np)
        self.specifieds = _names(self.m.specified_names, self.nr)
        self.symmetric = (self.m.flags & CG_SYMMETRIC) != 0
        self.operation_count = self.m.operation_count
        self.mass_failure = ("the mass matrix is not positive definite" if self.symmetric
                             else "the mass matrix is singular")
        self.fused = self.m.runtime != NULL
        self.rt = self.m.runtime if self.fused else &cg_runtime_shared
        self.integrator_size = self.rt.integrator_size(self.m)
        self.ny, self.ne = self.m.ny, self.m.ne
        self.output_entries = _names(self.m.output_names, self.ny)
        self.event_names = _names(self.m.event_names, self.ne)
        self.output_shapes = shapes_of(self.output_entries)
        slices, a = [], 0
        for name, shape in self.output_shapes.items():
            b = a + int(np.prod(shape, dtype=int))
            slices.append((name, shape, a, b))
            a = b
        self._output_slices = tuple(slices)
        self.impact_events = tuple(self.m.impact_start != NULL
                                   and self.m.impact_start[k + 1] > self.m.impact_start[k]
                                   for k in range(self.ne))
        self._impacts = np.array(self.impact_events + (False,), dtype=np.intc)

    @property
    def rhs_address(self):
        """Address of cg_rhs_cb (numbalsoda's signature); its data: callback_data(p, r)."""
        return <size_t>&cg_rhs_cb

    # -- argument conversion ------------------------------------------------
    cdef object _floats(self, object a, str what):
        """a as a contiguous native float64 array: complex values and non-numbers refused
        (NumPy would drop an imaginary part with only a warning)."""
        if a is None:
            raise ValueError(f"{self.name}: {what} is required")
        return self._real(a, what)

    cdef object _real(self, object a, str what):
        """a as a contiguous float64 array, complex values and non-numbers refused
        (np.asarray's dtype says what np.iscomplexobj would, at a fifth of its cost)."""
        if isinstance(a, dict):          # p by name: the model's parameters() orders it
            raise TypeError(f"{self.name}: {what} must be an array of numbers, got a dict"
                            + (": mod.parameters({...}) puts named values in the order of "
                               "mod.constants" if what in ("p", "P") else ""))
        try:
            a = np.asarray(a)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{self.name}: {what} must be an array of numbers: {exc}") from None
        if a.dtype.kind == "c":
            raise TypeError(f"{self.name}: {what} must be real, got complex values")
        try:
            return np.ascontiguousarray(a, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{self.name}: {what} must be an array of numbers: {exc}") from None

    cdef object _vector(self, object a, Py_ssize_t n, str what):
        """a as a contiguous float64 vector of length n (the same object when it is one)."""
        if not _is_float_vector(a):
            if a is None:
                raise ValueError(f"{self.name}: {what} is required (length {n})")
            a = self._real(a, what)
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

    cdef object _fail(self, int code, double t, x, p, r, str xname="x", ev_index=None):
        """Raise for a failed call at (t, x): ValueError naming a non-finite input, else
        DynamicsError with the status. xname: what x is called (x0 at a run's start);
        ev_index: a run's located events, so that a non-finite one is named."""
        if code == CG_ERR_INPUT:
            for what, v, names in ((xname, x, self.states), ("p", p, self.constants),
                                   ("r", r, self.specifieds)):
                if v is None:
                    continue
                bad = [names[i] for i in range(len(v)) if not np.isfinite(v[i])]
                if bad:
                    raise ValueError(f"{self.name}: {what} is not finite at {bad}")
            raise ValueError(f"{self.name}: t = {t} is not finite")
        where = f"at t = {t}, x = {np.asarray(x).tolist()}"
        if code == CG_ERR_MASS:
            what = self.mass_failure + (" on the constraints' null space" if self.nc else "")
            raise DynamicsError(f"{self.name}: {what} {where}")
        if ev_index is not None and code == CG_ERR_OUTPUT:
            message = self._diagnose(code, AT_STEP, t, x, p, r, ev_index, None)
            if message != status_message(code):
                raise DynamicsError(f"{self.name}: {message}")
        raise DynamicsError(f"{self.name}: {status_message(code)} {where}")

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
                             f"array of length {self.nx} in native byte order")
        cdef int code = self.rt.rhs(self.m, t, _data(x), _data(p), _data(r),
                               <double *>cnp.PyArray_DATA(<cnp.ndarray>out))
        if code:
            self._fail(code, t, x, p, r)
        return out

    cdef object _evaluate(self, int which, double t, x, p, r, shape):
        x = self._vector(x, self.nx, "x")
        p = self._vector(p, self.np, "p")
        r = self._specified(t, x, r)
        if not (isfinite(t) and _finite(x) and _finite(p) and _finite(r)):
            self._fail(CG_ERR_INPUT, t, x, p, r)
        out = np.empty(shape)
        cdef double *o = <double *>cnp.PyArray_DATA(<cnp.ndarray>out)
        if which == 0:
            self.rt.mass_matrix(self.m, t, _data(x), _data(p), _data(r), o)
        elif which == 1:
            self.rt.forcing(self.m, t, _data(x), _data(p), _data(r), o)
        else:
            self.rt.residuals(self.m, t, _data(x), _data(p), _data(r), o)
        return out

    def mass_matrix(self, double t, x, p, r=None):
        """M at (t, x): shape (nu, nu)."""
        return self._evaluate(0, t, x, p, r, (self.nu, self.nu))

    def forcing(self, double t, x, p, r=None):
        """F at (t, x): shape (nu,)."""
        return self._evaluate(1, t, x, p, r, (self.nu,))

    def inverse_dynamics(self, double t, x, udot, p, r=None):
        """tau = M u' - F at (t, x) for the accelerations udot (nu): the generalized
        forces (a robot's joint torques) that give them; shape (nu,). By the Newton-Euler
        passes over a tree of bodies, else from M and F."""
        x = self._vector(x, self.nx, "x")
        ud = self._vector(udot, self.nu, "udot")
        p = self._vector(p, self.np, "p")
        r = self._specified(t, x, r)
        if not _finite(ud):
            bad = [self.states[self.nq + i] for i in range(self.nu) if not np.isfinite(ud[i])]
            raise ValueError(f"{self.name}: udot is not finite at the derivatives of {bad}")
        out = cnp.PyArray_EMPTY(1, [self.nu], cnp.NPY_DOUBLE, 0)
        cdef int code = self.rt.inverse_dynamics(self.m, t, _data(x), _data(p), _data(r),
                                                 _data(ud),
                                                 <double *>cnp.PyArray_DATA(<cnp.ndarray>out))
        if code:
            self._fail(code, t, x, p, r)
        return out

    # -- the analytic Jacobian ----------------------------------------------------
    def jacobian(self, double t, x, p, r=None, out=None):
        """d x'/d x at (t, x): shape (nx, nx), analytic (the model's derivative parts
        and M's factorization, no finite differences). out: a writable C-contiguous
        float64 (nx, nx) array, written in place (no allocation)."""
        return self._jacobians(t, x, p, r, False, out)[0]

    def input_jacobian(self, double t, x, p, r=None):
        """d x'/d r at (t, x): shape (nx, nr)."""
        return self._jacobians(t, x, p, r, True, None)[1]

    def parameter_jacobian(self, double t, x, p, r=None, out=None):
        """d x'/d p at (t, x): shape (nx, np), the sensitivities to the constants in
        p's order, analytic as jacobian is. Needs a model built with
        parameter_jacobian=True. out: a writable C-contiguous float64 (nx, np) array."""
        x = self._vector(x, self.nx, "x")
        p = self._vector(p, self.np, "p")
        r = self._specified(t, x, r)
        out = self._out_matrix(out, self.np)
        if self.np == 0:
            return out
        cdef int code = self.rt.parameter_jacobian(self.m, t, _data(x), _data(p), _data(r),
                                                   <double *>cnp.PyArray_DATA(<cnp.ndarray>out))
        if code == CG_ERR_NO_JACOBIAN:
            raise ValueError(f"{self.name}: the model was built without its parameter "
                             f"Jacobian" + (" (a model with run-time constraints has none)"
                                            if self.nc else
                                            "; regenerate it with parameter_jacobian=True"))
        if code:
            self._fail(code, t, x, p, r)
        return out

    def linearize(self, x, p, r=None, double t=0.0):
        """(A, B) with d x'/d x = A and d x'/d r = B at (t, x, r): the linearization of
        the compiled equations over the model's state (codegen.GibbsAppellMethod.linearize
        is its symbolic counterpart)."""
        return self._jacobians(t, x, p, r, True, None)

    cdef object _out_matrix(self, out, Py_ssize_t cols):
        """A new (nx, cols) float64 array, or out checked to be one the C can write."""
        cdef cnp.npy_intp dims[2]
        dims[0] = self.nx
        dims[1] = cols
        if out is None:
            return cnp.PyArray_EMPTY(2, dims, cnp.NPY_DOUBLE, 0)
        if not _is_float_matrix(out, self.nx, cols):
            raise ValueError(f"{self.name}: out must be a writable C-contiguous float64 "
                             f"array of shape ({self.nx}, {cols}) in native byte order")
        return out

    cdef tuple _jacobians(self, double t, x, p, r, bint with_inputs, J):
        x = self._vector(x, self.nx, "x")
        p = self._vector(p, self.np, "p")
        r = self._specified(t, x, r)
        J = self._out_matrix(J, self.nx)
        Jr = self._out_matrix(None, self.nr) if with_inputs else None
        cdef int code = self.rt.jacobian(self.m, t, _data(x), _data(p), _data(r),
                                         <double *>cnp.PyArray_DATA(<cnp.ndarray>J),
                                         <double *>cnp.PyArray_DATA(<cnp.ndarray>Jr)
                                         if with_inputs else NULL)
        if code == CG_ERR_NO_JACOBIAN:
            raise ValueError(f"{self.name}: the model has run-time constraints and so no "
                             f"analytic Jacobian off them; linearize gives its linearization on "
                             f"the constraint manifold" if self.nc else
                             f"{self.name}: the model was built without its Jacobian "
                             f"(jacobian=False, or a large model under the default "
                             f"jacobian=None); regenerate it with jacobian=True to have one")
        if code:
            self._fail(code, t, x, p, r)
        return J, Jr

    # -- outputs, events and impacts ------------------------------------------------
    @property
    def output_names(self):
        """The outputs' names (generate's outputs=), in order."""
        return list(self.output_shapes)

    def outputs(self, t, x, p, r=None):
        """The outputs at (t, x): {name: value} (a float, or an array of the output's
        shape). x may also be a trajectory (N, nx) with t of shape (N,) (or one t for
        all): each value then has a leading axis N. r: as in rhs (a constant vector)."""
        x = self._floats(x, "x")
        single = x.ndim == 1
        X = x.reshape(1, -1) if single else x
        if X.ndim != 2 or X.shape[1] != self.nx:
            raise ValueError(f"{self.name}: x must have shape ({self.nx},) or (N, {self.nx}), "
                             f"got {x.shape}")
        cdef Py_ssize_t n = X.shape[0], i
        T = self._floats(t, "t")
        if T.shape not in ((), (1,), (n,)):
            raise ValueError(f"{self.name}: t must be one time or {n} times (one per row of x), "
                             f"got shape {T.shape}")
        T = np.broadcast_to(T, (n,))
        p = self._vector(p, self.np, "p")
        Y = np.empty((n, self.ny))
        cdef int code
        for i in range(n):
            xi = np.ascontiguousarray(X[i])
            ri = self._specified(T[i], xi, r)
            yi = Y[i]
            code = self.rt.outputs(self.m, T[i], _data(xi), _data(p), _data(ri),
                                   <double *>cnp.PyArray_DATA(<cnp.ndarray>yi))
            if code:
                self._fail(code, T[i], xi, p, ri)
        out = {}
        for name, shape, a, b in self._output_slices:
            v = Y[:, a:b].reshape((n,) + shape)
            out[name] = (float(v[0]) if shape == () else v[0]) if single else v
        return out

    def event_functions(self, double t, x, p, r=None):
        """The event functions g at (t, x), in event_names' order (shape (ne,))."""
        x = self._vector(x, self.nx, "x")
        p = self._vector(p, self.np, "p")
        r = self._specified(t, x, r)
        if not (isfinite(t) and _finite(x) and _finite(p) and _finite(r)):
            self._fail(CG_ERR_INPUT, t, x, p, r)
        out = np.empty(self.ne)
        if self.ne:
            self.m.events(t, _data(x), _data(p), _data(r),
                          <double *>cnp.PyArray_DATA(<cnp.ndarray>out))
        return out

    def impact(self, str event, double t, x, p, r=None):
        """The state just after the impact of event (generate's impacts=) at (t, x):
        Newton's law at its contact point, q unchanged. Raises DynamicsError where the
        contact Jacobian is zero (CG_ERR_IMPACT)."""
        if event not in self.event_names or not self.impact_events[self.event_names.index(event)]:
            raise ValueError(f"{self.name}: {event!r} is not an event with an impact (impacts: "
                             f"{[e for e, i in zip(self.event_names, self.impact_events) if i]})")
        x = self._vector(x, self.nx, "x")
        p = self._vector(p, self.np, "p")
        r = self._specified(t, x, r)
        if not (isfinite(t) and _finite(x) and _finite(p) and _finite(r)):
            self._fail(CG_ERR_INPUT, t, x, p, r)
        self._check_restitution(t, x, p, r, (self.event_names.index(event),))
        out = np.empty(self.nx)
        cdef int code = self.rt.impact(self.m, self.event_names.index(event), t, _data(x), _data(p),
                                       _data(r), <double *>cnp.PyArray_DATA(<cnp.ndarray>out))
        if code:
            self._fail(code, t, x, p, r)
        return out

    def restitutions(self, p, x=None, double t=0.0, r=None):
        """{event: e}: the restitution of each event's generated impact with the constants
        p (at (t, x), zero by default, for a restitution that depends on the state)."""
        x = np.zeros(self.nx) if x is None else self._vector(x, self.nx, "x")
        p = self._vector(p, self.np, "p")
        r = self._specified(t, x, r) if self.nr or r is not None else None
        e = self._restitution_values(t, x, p, r)
        return {self.event_names[k]: float(e[self.m.impact_start[k]])
                for k in range(self.ne) if self.impact_events[k]}

    def check_restitutions(self, p, events=None, x=None, double t=0.0, r=None,
                           str where=""):
        """Refuse, before a run, a restitution outside [0, 1] of an impact a run with these
        events would apply (a terminal event's), with the constants p (at (t, x), zero by
        default): a ValueError names the impact, its value and the constants it comes from,
        after where."""
        ev_index, _, ev_term = event_settings(self.name, self.event_names, self.impact_events,
                                              events)
        if not self.m.nj:
            return
        x = np.zeros(self.nx) if x is None else self._vector(x, self.nx, "x")
        p = self._vector(p, self.np, "p")
        r = self._specified(t, x, r) if self.nr or r is not None else None
        self._check_restitution(t, x, p, r, [ev_index[j] for j in range(len(ev_index))
                                             if ev_term[j]], where)

    cdef object _restitution_values(self, double t, x, p, r):
        """The impacts' e, one per contact row (the model's impacts function)."""
        cdef Py_ssize_t nj = self.m.nj
        J = np.empty(max(nj * self.nu, 1))
        vn, e = np.empty(max(nj, 1)), np.empty(max(nj, 1))
        if self.m.impacts != NULL and nj:
            self.m.impacts(t, _data(x), _data(p), _data(r), <double *>cnp.PyArray_DATA(J),
                           <double *>cnp.PyArray_DATA(vn), <double *>cnp.PyArray_DATA(e))
        return e

    cdef _check_restitution(self, double t, x, p, r, events, str where=""):
        """The restitutions of the impacts of events (model indices) in [0, 1], else a
        ValueError that names the impact, its value and the constants it comes from: a
        negative one lets the contact pass through, one above 1 adds energy."""
        if self.m.impacts == NULL or not self.m.nj:
            return
        e = self._restitution_values(t, x, p, r)
        for k in events:
            if not self.impact_events[k]:
                continue
            v = float(e[self.m.impact_start[k]])
            if 0.0 <= v <= 1.0:
                continue
            sources = []
            for j in range(self.np):            # which constants move it
                q = np.array(p, dtype=np.float64)
                q[j] = q[j] + 1.0 if np.isfinite(q[j]) else 0.5
                w = float(self._restitution_values(t, x, q, r)[self.m.impact_start[k]])
                if not (w == v or (w != w and v != v)):
                    sources.append(f"{self.constants[j]} = {float(p[j])!r}")
            raise ValueError(restitution_error(self.name, self.event_names[k], v, sources, where))

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
        cdef int code = self.rt.constraint_forces(self.m, t, _data(x), _data(p), _data(r),
                                             <double *>cnp.PyArray_DATA(<cnp.ndarray>out))
        if code:
            self._fail(code, t, x, p, r)
        return out

    def residuals(self, double t, x, p, r=None):
        """[f(q, t) (nh entries); A u - B (nc entries)]: position and velocity residuals."""
        self._need_constraints()
        return self._evaluate(2, t, x, p, r, (self.nh + self.nc,))

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
        cdef int code = self.rt.project(self.m, t, _data(x), _data(p), _data(r), tol, maxiter,
                                        <double *>cnp.PyArray_DATA(<cnp.ndarray>out))
        if code == CG_ERR_INPUT:
            self._fail(CG_ERR_INPUT, t, x, p, r)
        if code == CG_ERR_OUTPUT:
            raise ConvergenceError(f"{self.name}: project met a non-finite value from x = "
                                   f"{x.tolist()}")
        if code:
            res = self.residuals(t, out, p, r)[:self.nh]
            raise ConvergenceError(
                f"{self.name}: project did not reach |f| <= {tol} in {maxiter} Newton "
                f"iterations from x = {x.tolist()}: max|f| = {abs(res).max() if len(res) else 0.0:.3e}"
                f" (inconsistent constraints, or too far from a consistent configuration)")
        return out

    # -- simulation in C ----------------------------------------------------------
    cdef _check_start(self, double t0, x0, p, r0, str where=""):
        """A constrained model's run starts on its constraints (to CG_MANIFOLD_TOL,
        1e-6, relative to the state's size): the elimination keeps the residuals where
        they start, so an off-constraint x0 would run a different mechanism."""
        if not self.nc:
            return
        res = np.abs(self.residuals(t0, x0, p, r0))
        tol = CG_MANIFOLD_TOL * (1.0 + np.abs(x0).max())
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
            return _NO_TIMES, _NO_VALUES
        if r is None:
            raise ValueError(f"{self.name}: the model has specified inputs {list(self.specifieds)}: "
                             f"pass r, a vector of {self.nr} or a table (times, values)")
        if callable(r):
            raise TypeError(f"{self.name}: simulate runs in C and cannot call Python for r; "
                            f"give r as a table (times, values) instead")
        if isinstance(r, tuple) and len(r) == 2:
            times = self._floats(r[0], "the input table's times")
            values = self._floats(r[1], "the input table's values")
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
        default every dt (the fixed-step methods: rk4, ali3p) or 101 points."""
        if method not in METHODS:
            raise ValueError(method_error(self.name, method, METHODS))
        cdef int properties = cg_method_properties(METHODS[method])
        if properties & CG_TOLERANCES and not (0 < rtol and isfinite(rtol)
                                               and 0 < atol and isfinite(atol)):
            raise ValueError(f"{self.name}: rtol and atol must be positive and finite, "
                             f"got rtol = {rtol}, atol = {atol}")
        cdef double t0, t1
        try:
            t0, t1 = t_span
        except (TypeError, ValueError):
            t0 = t1 = NAN
        if not (isfinite(t0) and isfinite(t1) and t1 > t0):
            raise ValueError(f"{self.name}: t_span must be two finite times (t0, t1) with t1 > t0, "
                             f"got {t_span!r}")
        if properties & CG_FIXED_STEP:
            if dt is None or not (0 < dt and isfinite(dt)):
                raise ValueError(f"{self.name}: {method} needs a positive, finite step dt, "
                                 f"got {dt!r}")
            if t_eval is None:
                t_eval = np.append(np.arange(t0, t1, dt), t1)
        else:
            if dt is not None and not (0 < dt and isfinite(dt)):
                # an adaptive method chooses its own steps, but a bad dt is still a mistake
                raise ValueError(f"{self.name}: dt must be a positive, finite step, got {dt!r} "
                                 f"({method} chooses its own steps: dt is for rk4 and ali3p)")
            if t_eval is None:
                t_eval = np.linspace(t0, t1, 101)
        t_eval = self._floats(t_eval, "t_eval")
        if t_eval.ndim != 1 or not _ascending_within(t_eval, t0, t1):
            raise ValueError(t_eval_error(self.name, t_eval, t0, t1))
        return t0, t1, t_eval

    def simulate(self, t_span, x0, p, r=None, str method="dopri5", double rtol=1e-8,
                 double atol=1e-8, dt=None, t_eval=None, max_steps=CG_MAX_STEPS,
                 bint hold=True, progress=False, events=None, reset=None,
                 max_events=DEFAULT_MAX_EVENTS, controller=None, x_ref=None,
                 controller_data=None):
        """Integrate from t_span[0] to t_span[1] in C; returns a SimulationResult.

        As scipy.integrate.solve_ivp does, the run covers the whole t_span whatever
        t_eval holds: t_eval only picks the output times (each in t_span, ascending,
        else ValueError), events are located over the whole span, and only a terminal
        event (or a failure) ends the run before t_span[1].

        method: 'rk4' (fixed step dt, required), 'dopri5' (adaptive Dormand-Prince
        5(4), rtol/atol, dense output), or for stiff models 'bdf' (variable-order
        NDF/BDF 1-5, SciPy's BDF algorithm in C with CVODE's reuse of the Newton
        matrix: the fewest RHS calls, one Jacobian kept while Newton converges),
        'rosenbrock' (linearly implicit 4(3), a Jacobian every step: small
        models, tight tolerances) or 'rosw' (Rosenbrock-W ROS34PW2, order 3, one Jacobian
        kept over up to 20 steps); for closed loops through singular positions
        'ali3p' (fixed step dt: the index-3 augmented Lagrangian with
        projections, positions converged to atol; holonomic constraints and
        q' = u only). t_eval: output times (default: 101 evenly spaced points;
        for rk4 and ali3p every dt; may be empty: events only). r: the specified
        inputs, a constant vector or a table (times, values) held piecewise constant
        (hold=True) or linearly interpolated. progress=True shows a tqdm bar if
        tqdm is installed. Ctrl-C stops at the next output point and returns the
        part computed, with status -1 (CG_INTERRUPTED). A model with run-time
        constraints must start on them (to 1e-6): project(x0, p) gives the nearest
        such state. A run with run-time constraints that passed by a singular
        position ends with status CG_NEAR_SINGULAR (13), its trajectory whole.

        The result's ``outputs`` holds the model's outputs at t_eval (generate's
        outputs=). Events (generate's events=) are located in C on the method's
        dense output, each to 1e-15 (1 + |t|) in t, and listed in the result's
        ``events`` as (name, t, x): events=None locates every event, both ways,
        terminal where it has an impact; or {name: {"direction": -1, 0 or 1,
        "terminal": bool}} (as solve_ivp's) for those named. A run that starts
        with g = 0 does not count that as a crossing. At a terminal event the run
        goes on from ``reset(name, t, x, p) -> x`` when reset is given, else from
        the event's generated impact (its restitution, checked at the start, in
        [0, 1]), else it ends there (status CG_TERMINAL_EVENT, 17, t_eval cut at
        the event). The run ends at its max_events-th event (CG_MAX_EVENTS, 18).
        Both count as success. An exception raised in reset propagates as itself,
        with the event's name and time added as a note. An event function or an
        output that turns non-finite ends the run (status 3) with a message naming it.

        controller: feedback in C at every right-hand side: a matrix K (nr x nx)
        for r = r_ref - K (x - x_ref) (r_ref: r, zero by default; x_ref: zero by
        default), or a C function void f(double t, const double *x, const double *p,
        double *r, void *data) (see codegen.runtime.run_arguments); a non-finite input ends the run
        with CG_ERR_CONTROL (19). A ctypes callback whose Python body raises ends the
        run at that call, and simulate raises its exception (noted with the controller
        and the time).

        Where this still differs from solve_ivp, and why:

        - x has shape (len(t), nx), a row per output time (solve_ivp's y is (n,
          len(t))): the C writes a state per output time, and ``res['q1']`` reads a
          column.
        - t_eval=None gives 101 evenly spaced times (every dt for the fixed-step
          methods), not the solver's own steps: the run in C keeps no step history.
          t_eval may repeat a time or be empty (solve_ivp wants it strictly increasing).
        - rtol = atol = 1e-8 by default (solve_ivp: 1e-3 and 1e-6), for answers
          good to compare; method names are this runtime's ('dopri5' is RK45's
          Dormand-Prince pair; there is no Radau, LSODA or DOP853).
        - t_span runs forward only (t1 > t0): the integrators step forward.
        - events are the model's compiled functions by name, set by a dict rather than
          a function's attributes; events=None locates all of them (solve_ivp: none).
          They come back as one time-ordered list of (name, t, x), not t_events and
          y_events per function.
        - status: 0 reached t_span[1], 17 a terminal event, 18 max_events (all
          success), -1 interrupted, else the C failure (solve_ivp: 0, 1, -1). A
          failure mid-run is a status with the output times reached, not an exception.
        - At a terminal event, t holds the output times before it, as solve_ivp's
          with t_eval; the state at the event is ``events[-1][2]``.
        - p is an argument of its own (no args=); there is no max_step, first_step,
          dense_output or vectorized (the adaptive methods choose their first step;
          dt is the fixed-step methods' step); max_steps bounds the steps.
        """
        cdef long steps_bound = count(self.name, "max_steps", max_steps)
        cdef long events_bound = count(self.name, "max_events", max_events)
        t0, t1, t_eval = self._run_args(method, t_span, dt, t_eval, rtol, atol, steps_bound)
        x0 = self._vector(x0, self.nx, "x0").copy()
        p = self._vector(p, self.np, "p")
        K, xref, address, data, keep = feedback(self.name, self.nx, self.nr, controller, x_ref,
                                                controller_data)
        if r is None and controller is not None and self.nr:
            r = np.zeros(self.nr)                   # the reference inputs: zero
        times, values = self._input_table(r, t0)
        ev_index, ev_dir, ev_term = event_settings(self.name, self.event_names,
                                                   self.impact_events, events)
        if reset is not None and not callable(reset):
            raise TypeError(f"{self.name}: reset must be a callable reset(name, t, x, p) -> x")
        refusal = reset_never_called(self.name, self.event_names, ev_index, ev_term) \
            if reset is not None else None
        if refusal:
            raise ValueError(refusal)
        r0 = values[0] if self.nr else None
        if not (_finite(x0) and _finite(p) and _finite(r0)):
            self._fail(CG_ERR_INPUT, t0, x0, p, r0, "x0")
        self._check_start(t0, x0, p, r0)
        if reset is None and self.m.nj:
            self._check_restitution(t0, x0, p, r0, [ev_index[i] for i in range(len(ev_index))
                                                    if ev_term[i]])
        cdef cnp.npy_intp dims[2]
        dims[0] = (self.integrator_size + 7) // 8                      # aligned for double
        cdef cnp.ndarray buf = cnp.PyArray_ZEROS(1, dims, cnp.NPY_DOUBLE, 0)
        cdef cg_integrator *s = <cg_integrator *>cnp.PyArray_DATA(buf)
        dims[0] = len(t_eval)
        dims[1] = self.nx
        cdef cnp.ndarray xs = cnp.PyArray_EMPTY(2, dims, cnp.NPY_DOUBLE, 0)
        cdef cnp.ndarray ys = np.empty((len(t_eval), self.ny))
        cdef cnp.ndarray scratch = np.empty(self.nx)
        # raw pointers, not memoryviews: acquiring two views cost a run about 0.5 us
        cdef const double *tv = <const double *>cnp.PyArray_DATA(<cnp.ndarray>t_eval)
        cdef double *xv = <double *>cnp.PyArray_DATA(xs)
        cdef double *yv = <double *>cnp.PyArray_DATA(ys)
        cdef double *sv = <double *>cnp.PyArray_DATA(scratch)
        cdef Py_ssize_t nx = self.nx, ny = self.ny, n_out = len(t_eval)
        # solve_ivp's span: past the last output time the run goes on to t1 (its events)
        cdef bint tail = n_out == 0 or tv[n_out - 1] < t1
        cdef cnp.ndarray x_end = np.empty(self.nx) if tail else scratch    # the state at t1
        cdef Watched watch
        guard = None
        if address:                  # a C function, called through _watched_controller
            guard = ControllerGuard(self.name, controller)
            watch.fn = <cg_controller_fn><size_t>address
            watch.data = <void *><size_t>data
            watch.raised = <const int *>cnp.PyArray_DATA(<cnp.ndarray>guard.flag)
            watch.nr = self.nr
            watch.t_raised = NAN
            address, data = <size_t>&_watched_controller, <size_t>&watch
        cdef int code = self.rt.integrator_init(s, self.m, METHODS[method], t0, _data(x0), _data(p),
                                           len(times) if self.nr else 0, _data(times),
                                           _data(values), rtol, atol,
                                           float(dt) if dt is not None else 0.0)
        if code:
            self._fail(code, t0, x0, p, r0)
        self.rt.integrator_set(s, steps_bound, 1 if hold else 0, PAUSE_STEPS)
        bar = _progress_bar(self.name, t0, t1) if progress else None
        cdef Py_ssize_t k, done = 0
        cdef long steps = 0, rejected = 0, nfev = 0
        cdef double t_now = t0, t_k
        cdef double *x_k
        cdef EventLog log
        cdef bint impacts = reset is None
        cdef const int *has_impact = <const int *>cnp.PyArray_DATA(self._impacts)
        cdef int stage = AT_STEP
        log.n = log.cap = log.impact_failed = 0
        log.nx = self.nx
        log.index = NULL
        log.t = log.x = NULL
        residuals = (lambda z: self.residuals(t_now, z, p, r0)) if self.nc else None
        status = 0
        fault = None                 # (t, x) where the run failed
        if guard is not None:
            guard.__enter__()
        try:
            code = self._start_run(s, K, xref, address, data, ev_index, ev_dir, ev_term)
            if code:
                if guard is not None:
                    guard.raise_caught(watch.t_raised)
                self._fail(code, t0, x0, p, r0, "x0", ev_index)
            for k in range(n_out + tail):
                t_k = tv[k] if k < n_out else t1
                x_k = xv + k * nx if k < n_out else <double *>cnp.PyArray_DATA(x_end)
                while True:
                    with nogil:
                        code = _advance(self.rt, s, t_k, x_k, &log, events_bound,
                                        impacts, has_impact, sv)
                    if bar is not None:
                        self.rt.integrator_stats(s, &steps, &rejected, &nfev, &t_now)
                        bar.update(min(t_now, t1) - t0 - bar.n)
                    PyErr_CheckSignals()
                    if code == CG_PAUSED:
                        continue
                    if code == CG_TERMINAL_EVENT and reset is not None:
                        t_now = log.t[log.n - 1]
                        x_new = checked_reset(self.name, reset, self.event_names[log.index[log.n - 1]],
                                              t_now, _log_state(&log, log.n - 1), p, self.nx,
                                              residuals)
                        code = self.rt.integrator_restart(s, t_now, _data(x_new))
                        if code == 0:
                            continue
                    break
                if code == 0 and ny and k < n_out:
                    code = self.rt.integrator_outputs(s, t_k, x_k, yv + k * ny)
                    if code:
                        stage = AT_OUTPUT
                        fault = (t_k, xs[k].copy())
                if code:
                    status = code
                    if fault is None and log.impact_failed:
                        stage = AT_IMPACT
                        fault = (log.t[log.n - 1], _log_state(&log, log.n - 1))
                    elif fault is None:
                        t_now = cg_integrator_state(s, sv)
                        fault = (t_now, scratch.copy())
                    break
                if k < n_out:
                    done = k + 1
        except KeyboardInterrupt:
            status = CG_INTERRUPTED
        finally:
            if guard is not None:
                guard.__exit__(None, None, None)
            if bar is not None:
                bar.close()
            found = _log_list(&log, self.event_names)
        if guard is not None:
            guard.raise_caught(watch.t_raised)
        self.rt.integrator_stats(s, &steps, &rejected, &nfev, &t_now)
        cdef double t_near
        cdef double ratio = cg_integrator_nearest_singular(s, &t_near)
        if status == 0:
            status = cg_integrator_warning(s)
        message = status_message(status)
        if status == CG_NEAR_SINGULAR:
            message += f": singular values down to {ratio:.1e} of the largest at t = {t_near:.6g}"
        elif status in (CG_TERMINAL_EVENT, CG_MAX_EVENTS):
            last = found[len(found) - 1]
            message += f": {last[0]!r} at t = {last[1]:.17g}"
        elif fault is not None:
            message = self._diagnose(status, stage, fault[0], fault[1], p,
                                     self._inputs_at(times, values, fault[0], hold), ev_index,
                                     found[len(found) - 1][0] if found else None)
        trajectory = xs if done == n_out else xs[:done].copy()
        outputs = {name: ys[:done, a:b].reshape((done,) + shape)
                   for name, shape, a, b in self._output_slices}
        # positional: SimulationResult's field order (t, x, states, status, message,
        # nsteps, nrejected, nfev, method)
        return SimulationResult(t_eval[:done].copy(), trajectory, list(self.states), status,
                                message, steps, rejected, nfev, method, outputs, found)

    cdef object _inputs_at(self, times, values, double t, bint hold):
        """The table's inputs at t (None without inputs), for a failure's message."""
        if not self.nr:
            return None
        cdef Py_ssize_t i = max(int(np.searchsorted(times, t, side="right")) - 1, 0)
        if hold or len(times) == 1 or i + 1 >= len(times):
            return np.ascontiguousarray(values[i])
        return np.ascontiguousarray([np.interp(t, times, values[:, j]) for j in range(self.nr)])

    cdef str _diagnose(self, int code, int stage, double t, x, p, r, ev_index, last_event):
        """A failed run's message: for a non-finite value (CG_ERR_OUTPUT), what gave it at
        the failure's state (t, x): an event function, an output or an impact, named, so
        that the equations of motion are not blamed for them."""
        base = status_message(code)
        if code != CG_ERR_OUTPUT or x is None or not np.isfinite(x).all() or not _finite(r):
            return base
        where = f"at t = {t:.17g}, x = {np.asarray(x).tolist()}"
        if stage == AT_IMPACT and last_event is not None:
            return (f"the impact of event {last_event!r} gave a non-finite state {where} "
                    f"(the state before it)")
        if stage == AT_OUTPUT and self.ny:
            y = np.empty(self.ny)
            self.rt.outputs(self.m, t, _data(x), _data(p), _data(r),
                            <double *>cnp.PyArray_DATA(<cnp.ndarray>y))
            bad = [name for name, shape, a, b in self._output_slices
                   if not np.isfinite(y[a:b]).all()]
            if bad:
                return (f"output {', '.join(map(repr, bad))} is not finite {where}: the run "
                        f"stopped there (its expression, not the equations of motion)")
            return base
        if self.ne and len(ev_index):
            g = np.empty(self.ne)
            self.m.events(t, _data(x), _data(p), _data(r), <double *>cnp.PyArray_DATA(g))
            bad = [self.event_names[k] for k in ev_index if not isfinite(g[k])]
            if bad:
                return (f"event {', '.join(map(repr, bad))} is not finite {where}: the run "
                        f"stopped there (its function, not the equations of motion)")
        return base

    cdef int _start_run(self, cg_integrator *s, K, xref, size_t address, size_t data,
                        ev_index, ev_dir, ev_term) except -1:
        """A started run's feedback and events (before its first step)."""
        cdef int code = 0
        if K is not None or address:
            code = self.rt.integrator_control(s, _data(K) if K is not None else NULL,
                                              _data(xref) if xref is not None else NULL,
                                              <cg_controller_fn>address, <void *>data)
        cdef Py_ssize_t n = len(ev_index)
        if n == 0 or code:
            return code
        return self.rt.integrator_events(s, <int>n, <const int *>cnp.PyArray_DATA(ev_index),
                                         <const int *>cnp.PyArray_DATA(ev_dir),
                                         <const int *>cnp.PyArray_DATA(ev_term))

    def rhs_batch(self, double t, X, P, R=None, out=None):
        """x' for many states at once, in C over both cores (OpenMP), without the GIL.

        X: (N, nx); P: (np,) for all or (N, np); R: None, (nr,) or (N, nr).
        Returns (N, nx). Raises for the first row whose rhs fails, naming it.
        """
        X = self._floats(X, "X")
        if X.ndim != 2 or X.shape[1] != self.nx:
            raise ValueError(f"{self.name}: X must have shape (N, {self.nx}), got {X.shape}")
        cdef Py_ssize_t n = X.shape[0], i
        Pm = self._rows(P, n, self.np, "P")
        Rm = self._rows(R, n, self.nr, "R") if self.nr else np.zeros((n, 1))
        if out is None:
            out = np.empty((n, self.nx))
        elif not (isinstance(out, np.ndarray) and out.shape == (n, self.nx)
                  and out.dtype == np.dtype("=f8") and out.flags.c_contiguous
                  and out.flags.aligned and out.flags.writeable):
            raise ValueError(f"{self.name}: out must be a writable C-contiguous float64 array "
                             f"of shape ({n}, {self.nx}) in native byte order")
        cdef const double[:, ::1] xv = X, pv = Pm, rv = Rm
        cdef double[:, ::1] ov = out
        cdef int[::1] codes = np.zeros(n, dtype=np.intc)
        cdef const cg_model *model = self.m
        cdef const cg_runtime *rt = self.rt
        cdef int np_ = self.np
        if n == 0:
            return out
        for i in prange(n, nogil=True, schedule="static"):
            codes[i] = rt.rhs(model, t, &xv[i, 0], &pv[i, 0] if np_ else &_EMPTY[0], &rv[i, 0],
                              &ov[i, 0])
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
        A = self._floats(A, what)
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
                       double atol=1e-8, dt=None, t_eval=None, max_steps=CG_MAX_STEPS,
                       events=None, max_events=DEFAULT_MAX_EVENTS, controller=None,
                       x_ref=None, controller_data=None):
        """Many simulations in C over both cores (OpenMP), without the GIL.

        X0: (N, nx) initial states; P: (np,) or (N, np); R: constant inputs,
        (nr,) or (N, nr). t_span and t_eval as in simulate: every run covers the whole
        t_span (as solve_ivp's), t_eval only picks the output times. Returns
        (t_eval, X, status): X of shape (N, len(t_eval), nx) (solve_ivp's y
        transposed, a run per row) and one status code per run (0 = ok;
        a failed run keeps NaN after its failure; CG_NEAR_SINGULAR, 13, as in
        simulate, marks a run with run-time constraints that passed near a
        singular position, its trajectory whole). Ctrl-C stops every run within
        a few thousand steps and returns what is done: the runs it cut short, or
        that had not started, have status -1.

        The returned tuple also has ``outputs`` ({name: (N, len(t_eval)) + shape}),
        ``events`` (a list of (name, t, x) per run) and ``messages`` (each run's
        status in words; a non-finite event function, output or impact named as in
        simulate). events, max_events, controller, x_ref and controller_data as in
        simulate: every run locates its events in C, goes on through the generated
        impacts (their restitution checked per row before the runs), and ends at a
        terminal event without one (its status CG_TERMINAL_EVENT, 17); the
        feedback is the same for every run (a C controller is called from several
        threads at once; if its Python body raises, every run ends and the
        exception is raised).
        """
        cdef long steps_bound = count(self.name, "max_steps", max_steps)
        cdef long events_bound = count(self.name, "max_events", max_events)
        t0, t1, t_eval = self._run_args(method, t_span, dt, t_eval, rtol, atol, steps_bound)
        X0 = self._floats(X0, "X0")
        if X0.ndim != 2 or X0.shape[1] != self.nx:
            raise ValueError(f"{self.name}: X0 must have shape (N, {self.nx}), got {X0.shape}")
        cdef Py_ssize_t n = X0.shape[0], i, k
        if R is None and controller is not None and self.nr:
            R = np.zeros(self.nr)                   # the reference inputs: zero
        Pm = self._rows(P, n, self.np, "P")
        if not self.nr and R is not None and _entries(R) != 0:
            raise ValueError(f"{self.name}: the model has no specified inputs, got R")
        try:
            Rm = self._rows(R, n, self.nr, "R") if self.nr else np.zeros((n, 1))
        except TypeError as exc:
            if isinstance(R, tuple) and len(R) == 2:      # simulate's (times, values) table
                raise TypeError(f"{exc} (simulate_batch takes constant inputs, a row per run "
                                f"or one for all; a table (times, values) is simulate's)") from None
            raise
        K, xref, address, data, keep = feedback(self.name, self.nx, self.nr, controller, x_ref,
                                                controller_data)
        ev_index, ev_dir, ev_term = event_settings(self.name, self.event_names,
                                                   self.impact_events, events)
        struck = [ev_index[j] for j in range(len(ev_index)) if ev_term[j]] if self.m.nj else []
        for i in range(n if self.nc or struck else 0):
            # rows with a non-finite entry fail in C, with their status
            if np.isfinite(X0[i]).all() and np.isfinite(Pm[i]).all() and np.isfinite(Rm[i]).all():
                if self.nc:
                    self._check_start(t0, X0[i], Pm[i], Rm[i] if self.nr else None, f"row {i}: ")
                if struck:
                    self._check_restitution(t0, X0[i], Pm[i], Rm[i] if self.nr else None, struck,
                                            f"row {i}: ")
        cdef Py_ssize_t m = len(t_eval), nx = self.nx
        out = np.full((n, m, self.nx), np.nan)
        Y = np.full((n, m, self.ny), np.nan)
        # one integrator per thread, not per run: a thread's runs follow one another, and
        # an implicit method's integrator holds two nx-by-nx matrices
        cdef size_t size = (self.integrator_size + 7) // 8 * 8   # each aligned for double
        cdef cnp.ndarray bufs = np.zeros((omp_get_max_threads(), size // 8))
        cdef unsigned char *base = <unsigned char *>cnp.PyArray_DATA(bufs)
        # per thread: an event's state (nx + 1), then the state at t1 past the last t_eval
        cdef Py_ssize_t width = 2 * self.nx + 1
        cdef cnp.ndarray scratch = np.zeros((omp_get_max_threads(), width))
        cdef double *sbase = <double *>cnp.PyArray_DATA(scratch)
        cdef const double[:, ::1] xv = X0, pv = Pm, rv = Rm
        cdef double[:, :, ::1] ov = out
        cdef double[:, :, ::1] yv = Y
        cdef const double[::1] tv = t_eval
        cdef const double[::1] t_table = np.array([t0])
        cdef int[::1] codes = np.zeros(n, dtype=np.intc)
        # where each failed run failed (Dynamics._diagnose): stage, time and state
        fault_stage_a = np.zeros(n, dtype=np.intc)
        fault_t_a = np.full(n, np.nan)
        fault_x_a = np.full((n, max(self.nx, 1)), np.nan)
        cdef int[::1] fault_stage = fault_stage_a
        cdef double[::1] fault_t = fault_t_a
        cdef double[:, ::1] fault_x = fault_x_a
        cdef int meth = METHODS[method], nr_table = 1 if self.nr else 0, code, np_ = self.np
        cdef int ny = self.ny, n_ev = len(ev_index), tid, stage, j
        cdef bint tail = m == 0 or tv[m - 1] < t1
        cdef double t_k
        cdef double *x_k
        cdef const int *ei = <const int *>cnp.PyArray_DATA(ev_index)
        cdef const int *ed = <const int *>cnp.PyArray_DATA(ev_dir)
        cdef const int *et = <const int *>cnp.PyArray_DATA(ev_term)
        cdef const int *has_impact = <const int *>cnp.PyArray_DATA(self._impacts)
        cdef const double *Kp = _data(K) if K is not None else NULL
        cdef const double *xrp = _data(xref) if xref is not None else NULL
        cdef cg_controller_fn fn = <cg_controller_fn><size_t>address
        cdef void *fdata = <void *><size_t>data
        cdef Watched watch
        guard = None
        if address:                  # a C function, called through _watched_controller
            guard = ControllerGuard(self.name, controller, any_thread=True)
            watch.fn = fn
            watch.data = fdata
            watch.raised = <const int *>cnp.PyArray_DATA(<cnp.ndarray>guard.flag)
            watch.nr = self.nr
            watch.t_raised = NAN
            fn, fdata = _watched_controller, <void *>&watch
        cdef double h = float(dt) if dt is not None else 0.0
        cdef const cg_model *model = self.m
        cdef const cg_runtime *rt = self.rt
        cdef cg_integrator *s
        cdef double start = t0, end = t1
        cdef int[::1] stop = np.zeros(1, dtype=np.intc)     # shared by the threads
        cdef EventLog *logs = <EventLog *>calloc(n if n > 0 else 1, sizeof(EventLog))
        if logs == NULL:
            raise MemoryError()
        if guard is not None:
            guard.__enter__()
        try:
            for i in prange(n, nogil=True, schedule="dynamic"):
                logs[i].nx = model.nx
                if stop[0]:
                    codes[i] = CG_INTERRUPTED              # interrupted before it started
                    continue
                tid = threadid()
                s = <cg_integrator *>(base + tid * size)
                stage = AT_STEP
                code = rt.integrator_init(s, model, meth, start, &xv[i, 0],
                                          &pv[i, 0] if np_ else &_EMPTY[0], nr_table, &t_table[0],
                                          &rv[i, 0], rtol, atol, h)
                if code == 0:
                    rt.integrator_set(s, steps_bound, 1, PAUSE_STEPS)
                    if Kp != NULL or fn != NULL:
                        code = rt.integrator_control(s, Kp, xrp, fn, fdata)
                    if n_ev and code == 0:
                        code = rt.integrator_events(s, n_ev, ei, ed, et)
                    if code != 0:                          # at the start: the state is x0
                        fault_t[i] = start
                        for j in range(nx):
                            fault_x[i, j] = xv[i, j]
                if code == 0:
                    for k in range(m + tail):
                        t_k = tv[k] if k < m else end
                        x_k = &ov[i, k, 0] if k < m else sbase + tid * width + nx + 1
                        while True:
                            code = _advance(rt, s, t_k, x_k, &logs[i], events_bound,
                                            True, has_impact, sbase + tid * width)
                            if code != CG_PAUSED:
                                break
                            if tid == 0:                   # the calling thread, where signals land
                                with gil:
                                    if _signals_pending() != 0:
                                        _clear_error()
                                        stop[0] = 1
                            if stop[0]:
                                code = CG_INTERRUPTED
                                break
                        if code == 0 and ny and k < m:
                            code = rt.integrator_outputs(s, t_k, x_k, &yv[i, k, 0])
                            if code != 0:
                                stage = AT_OUTPUT
                                fault_t[i] = t_k
                                for j in range(nx):
                                    fault_x[i, j] = x_k[j]
                        if code != 0:
                            if stage == AT_OUTPUT:
                                pass
                            elif logs[i].impact_failed:
                                stage = AT_IMPACT
                                fault_t[i] = logs[i].t[logs[i].n - 1]
                                for j in range(nx):
                                    fault_x[i, j] = logs[i].x[(logs[i].n - 1) * nx + j]
                            else:
                                fault_t[i] = cg_integrator_state(s, &fault_x[i, 0])
                            break
                    if code == 0:
                        code = cg_integrator_warning(s)
                codes[i] = code
                fault_stage[i] = stage
            found = [_log_list(&logs[i], self.event_names) for i in range(n)]
        finally:
            if guard is not None:
                guard.__exit__(None, None, None)
            for i in range(n):
                free(logs[i].index)
                free(logs[i].t)
                free(logs[i].x)
            free(logs)
        status = np.asarray(codes).copy()
        if guard is not None:
            ended = np.flatnonzero(status == CG_ERR_CONTROL)
            guard.raise_caught(watch.t_raised, f"{len(ended)} of the {n} runs "
                                               f"({', '.join(map(str, ended[:10]))}"
                                               f"{' ...' if len(ended) > 10 else ''})")
        messages = []
        for i in range(n):
            if status[i] in (CG_TERMINAL_EVENT, CG_MAX_EVENTS) and found[i]:
                last = found[i][len(found[i]) - 1]
                messages.append(f"{status_message(status[i])}: {last[0]!r} at t = {last[1]:.17g}")
            elif status[i] == CG_ERR_OUTPUT and isfinite(fault_t[i]):
                messages.append(self._diagnose(status[i], fault_stage[i], fault_t[i],
                                               fault_x_a[i, :self.nx], Pm[i],
                                               Rm[i] if self.nr else None, ev_index,
                                               found[i][len(found[i]) - 1][0] if found[i]
                                               else None))
            else:
                messages.append(status_message(status[i]))
        outputs = {name: Y[:, :, a:b].reshape((n, m) + shape)
                   for name, shape, a, b in self._output_slices}
        return BatchResult(t_eval, out, status, outputs, found, messages)
