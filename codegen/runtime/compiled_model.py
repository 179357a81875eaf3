"""The object users hold: a built model's functions and names."""
from __future__ import annotations

import ctypes
from pathlib import Path

import numpy as np

from ._runtime import Dynamics
from .manifold import manifold_linearization, tangent_basis
from .results import SimulationResult

__all__ = ["CompiledModel", "SimulationResult"]


class CompiledModel:
    """A generated, compiled and loaded model.

    Attributes
    ----------
    rhs(t, x, p, r=None, out=None)
        x' = [q', u'], with u' solved from M u' = F in C. ``out=`` writes in
        place without allocating. ``r`` (specified inputs, an array or a
        callable ``r(t, x)``) is required when the model has any. Usable as
        ``solve_ivp(model.rhs, span, x0, args=(p,))``.
    mass_matrix(t, x, p, r=None), forcing(t, x, p, r=None)
        M (nu x nu) and F (nu).
    inverse_dynamics(t, x, udot, p, r=None)
        tau = M udot - F (nu): the generalized forces that give the accelerations
        udot (a robot's joint torques), by the Newton-Euler passes over a tree of
        bodies, else from M and F.
    states, constants, specifieds : list of str
        Names in the order of x, p and r: plain names without "(t)", the same
        as in the C name tables and the header.
    nq, nu, nx : int
        Numbers of coordinates, speeds and states.
    source_dir : Path
        The folder with <name>.c, <name>.h, the shared library and manifest.json.
    operation_count : int
        Operations of the generated code after common subexpression elimination.

    simulate(t_span, x0, p, r=None, method='dopri5', rtol=1e-8, atol=1e-8, dt=None,
    t_eval=None, ...), simulate_batch(...), rhs_batch(t, X, P, R=None)
        Whole integrations in C (RK4, Dormand-Prince 5(4), and for stiff models
        BDF, Rosenbrock 4(3), Rosenbrock-W) and
        batches over both cores; each covers the whole t_span, t_eval only picking the
        output times, as solve_ivp's; see their docstrings (and what still differs).
    rhs_address, callback_data(p, r)
        A C function pointer for other solvers (numbalsoda's signature).

    outputs(t, x, p, r=None), output_names, output_shapes
        The outputs generate compiled (``outputs=``): {name: value}, each of its
        shape (a float, a (3,) position, a (3, 3) orientation); x may be a trajectory
        (N, nx). ``SimulationResult.outputs`` holds them at a run's output times.
    event_names, event_functions(t, x, p, r=None), impact(event, t, x, p, r=None)
        The events generate compiled (``events=``), their functions g, and the state
        after an event's generated impact (``impacts=``).
    restitutions(p, x=None, t=0.0, r=None)
        {event: e}: each impact's restitution with the constants p (a run refuses one
        outside [0, 1], naming it).

    Models with run-time constraints (nc > 0 rows, nh of them holonomic) also have
    constraint_forces(t, x, p, r=None) (lambda with A^T lambda = M u' - F),
    residuals(t, x, p, r=None) ([f; A u - B]) and project(x, p, t=0, r=None,
    tol=1e-12, maxiter=50) (the nearest consistent state).

    A model pickles as its sources, flags and key, never its shared library:
    unpickled in another process or on another machine, it loads from that
    side's cache (codegen.pipeline.cache.cache_root) or is compiled there once
    (codegen.runtime.sweep sends models to Dask workers this way). codegen.pipeline.cache
    registers this pickling (copyreg) when it loads the first model.
    """

    def __init__(self, dynamics: Dynamics, manifest: dict, folder: Path):
        self.dynamics = dynamics
        self.manifest = manifest
        self.name = dynamics.name
        self.source_dir = Path(folder)
        self.states = list(dynamics.states)
        self.constants = list(dynamics.constants)
        self.specifieds = list(dynamics.specifieds)
        self.nq, self.nu = dynamics.nq, dynamics.nu
        self.nc, self.nh = dynamics.nc, dynamics.nh
        self.operation_count = dynamics.operation_count
        self.key = manifest.get("key")
        # the compiled methods themselves: no Python layer in between
        self.rhs = dynamics.rhs
        self.mass_matrix = dynamics.mass_matrix
        self.forcing = dynamics.forcing
        self.inverse_dynamics = dynamics.inverse_dynamics
        self.simulate = dynamics.simulate
        self.simulate_batch = dynamics.simulate_batch
        self.rhs_batch = dynamics.rhs_batch
        self.jacobian = dynamics.jacobian
        self.input_jacobian = dynamics.input_jacobian
        self.parameter_jacobian = dynamics.parameter_jacobian
        self.linearize = dynamics.linearize
        self.outputs = dynamics.outputs
        self.output_names = dynamics.output_names
        self.output_shapes = dict(dynamics.output_shapes)
        self.event_names = list(dynamics.event_names)
        self.event_functions = dynamics.event_functions
        self.impact = dynamics.impact
        self.restitutions = dynamics.restitutions
        if self.nc:
            self.constraint_forces = dynamics.constraint_forces
            self.residuals = dynamics.residuals
            self.project = dynamics.project
            self.linearize = self._linearize_on_manifold

    def _linearize_on_manifold(self, x, p, r=None, t: float = 0.0) -> tuple:
        """(A, B) of the equations on the constraint manifold at a consistent state
        x (see codegen.runtime.manifold.manifold_linearization): A dx is the rates' change
        for a consistent perturbation dx, and A is zero across the constraints;
        ``tangent_basis`` gives T with Tᵀ A T the minimal model at an equilibrium."""
        x, rv = self._consistent(x, p, r, t)
        A, B, _ = manifold_linearization(lambda z: self.rhs(t, z, p, rv),
                                         lambda z: self.residuals(t, z, p, rv), x,
                                         len(self.specifieds),
                                         rv, lambda s: self.rhs(t, x, p, s))
        return A, B

    def tangent_basis(self, x, p, r=None, t: float = 0.0) -> np.ndarray:
        """T (nx x m): orthonormal columns spanning the consistent first-order
        perturbations of the consistent state x (m = nx - rank of the constraints'
        Jacobian there)."""
        x, rv = self._consistent(x, p, r, t)
        return tangent_basis(lambda z: self.residuals(t, z, p, rv), x)[0]

    def _consistent(self, x, p, r, t) -> tuple:
        x = np.array(x, float)
        rv = r(t, x) if callable(r) else r
        rv = None if rv is None else np.array(rv, float)
        res = np.abs(self.residuals(t, x, p, rv)).max()
        if res > 1e-8 * max(1.0, np.abs(x).max()):
            raise ValueError(f"{self.name}: x violates the constraints (max residual {res:.3g}); "
                             f"linearize at a consistent state, e.g. model.project(x, p)")
        return x, rv

    @classmethod
    def from_library(cls, path: Path, manifest: dict, folder: Path) -> "CompiledModel":
        """Load a model's shared library and take its descriptor, <name>_model()."""
        name = manifest["name"]
        try:
            library = ctypes.CDLL(str(path))
        except OSError as exc:
            raise ImportError(f"{path} cannot be loaded: {exc}") from None
        try:
            describe = getattr(library, f"{name}_model")
        except AttributeError:
            raise ImportError(f"{path} has no descriptor {name}_model(): it is not a model "
                              f"library of this codegen version; regenerate it") from None
        describe.restype = ctypes.c_void_p
        describe.argtypes = []
        return cls(Dynamics(library, describe() or 0, str(path)), manifest, folder)

    @property
    def nx(self) -> int:
        return self.nq + self.nu

    def sweep(self, t_span, X0=None, P=None, R=None, **kwargs):
        """Many runs on a Dask cluster: codegen.runtime.sweep.sweep(self, ...)."""
        from .sweep import sweep
        return sweep(self, t_span, X0, P, R, **kwargs)

    @property
    def rhs_address(self) -> int:
        """Address of the runtime's ``void cg_rhs_cb(double t, double *u, double *du, void *data)``.

        The signature numbalsoda (and other C solvers) take, with
        ``data = callback_data(p, r)`` (the model's descriptor, p, r; keep it
        alive while the solver runs). Where the rhs fails, du is NaN so that
        the solver stops. The library stays loaded as long as this model object.
        """
        return self.dynamics.rhs_address

    def parameters(self, values=None, **more) -> np.ndarray:
        """p from values ({name or SymPy symbol: number}, and keywords), in the order
        of ``constants``; the generator's own constants (baumgarte_alpha,
        baumgarte_beta) default to ``manifest['defaults']``. A missing, unknown or
        twice-given name is a ValueError that names it."""
        given = {}
        for key, value in list(dict(values or {}).items()) + list(more.items()):
            name = key if isinstance(key, str) else getattr(key, "name", None)
            if not isinstance(name, str):
                raise TypeError(f"{self.name}: parameters() takes names or SymPy symbols as "
                                f"keys, got {key!r}")
            if name in given:
                raise ValueError(f"{self.name}: parameters() got {name} twice")
            given[name] = value
        unknown = sorted(set(given) - set(self.constants))
        if unknown:
            raise ValueError(f"{self.name}: {', '.join(unknown)} is not a constant of the model "
                             f"(constants: {', '.join(self.constants)})")
        defaults = self.manifest.get("defaults", {})
        missing = [c for c in self.constants if c not in given and c not in defaults]
        if missing:
            raise ValueError(f"{self.name}: parameters() has no value for {', '.join(missing)}")
        return np.array([float(given.get(c, defaults.get(c))) for c in self.constants])

    def callback_data(self, p, r=None):
        """The data array for rhs_address: the descriptor's address in the first
        8 bytes, then p and r, as one contiguous float64 vector."""
        p = np.asarray(p, dtype=np.float64).ravel()
        r = np.zeros(0) if r is None else np.asarray(r, dtype=np.float64).ravel()
        if p.shape != (len(self.constants),) or r.shape != (len(self.specifieds),):
            raise ValueError(f"{self.name}: callback_data needs {len(self.constants)} constants "
                             f"and {len(self.specifieds)} inputs, got {p.shape[0]} and {r.shape[0]}")
        head = np.array([self.dynamics.model_address], dtype=np.uint64).view(np.float64)
        return np.concatenate([head, p, r])

    def __repr__(self):
        return (f"<CompiledModel {self.name!r}: {self.nq} coordinates, {self.nu} speeds, "
                f"{len(self.constants)} constants, {len(self.specifieds)} specifieds; "
                f"{self.source_dir}>")
