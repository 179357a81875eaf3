"""Parameter sweeps and Monte Carlo on Dask: many runs of one compiled model.

``sweep(model, t_span, X0, P, R, ...)`` splits a table of runs (initial
states X0, constants P, constant inputs R; one row per run, or one row for
all) into chunks, runs each chunk with ``simulate_batch`` on a Dask worker
(so each worker uses all its cores through OpenMP), and returns the results
in input order with a status per run.

Choices, and why:

- The model travels as its sources (CompiledModel pickles as sources, flags
  and cache key, never the shared library): a worker on another machine
  loads it from its own cache ($CODEGEN_CACHE, else ~/.cache/codegen) or
  compiles it there once per process.
- Reductions run on the worker, so trajectories need not travel: "final",
  "max", "min", "mean" over the output times (of the states and of each
  output), or a callable f(t, x) -> value or f(t, x, outputs) -> value (x:
  that run's states at t_eval, outputs: its {name: values at t_eval}). A
  callable that raises marks its run with status REDUCE_FAILED and the
  message; the sweep goes on.
- Events, impacts and feedback as in simulate_batch: each run's events come
  back in ``events``; the feedback is a matrix K (a C function's address
  means nothing in another process: compile the law into the model with
  generate(..., control=...) instead).
- A run that fails (DynamicsError, step-size underflow) has its C status and
  message; it never fails the sweep. A worker that dies mid-sweep has its
  chunks run again elsewhere (Dask reschedules them, and ``retries`` covers
  errors raised in a task); each chunk's result is placed by its index, so
  no run is lost or counted twice.
- Without a client, a LocalCluster on 127.0.0.1 is started for the call and
  closed after it: one single-threaded worker process per core, each with
  OMP_NUM_THREADS=1 (the cores are the workers'; one OpenMP team per worker
  would oversubscribe them). Given a client or a scheduler address, the
  cluster is the caller's.
- ``deadline`` (seconds, None: no limit) bounds the wait: a cluster whose
  workers never start a chunk (none connected, all lost) raises TimeoutError
  naming the unfinished rows, after cancelling them, rather than waiting
  forever.
- Inputs are checked before anything is sent: a wrong column count or a
  non-finite entry is refused naming the argument, row and column, and so is a
  restitution outside [0, 1] of an impact the runs apply.
- Every run covers the whole t_span, as solve_ivp's and simulate_batch's do: t_eval
  only picks the output times (see simulate for what still differs from solve_ivp).
"""
from __future__ import annotations

import inspect
import math
import os
import warnings
from dataclasses import dataclass, field

import numpy as np

from ..abi import CONSTANTS, STATUS, STATUS_CODE
from .run_arguments import DEFAULT_MAX_EVENTS

__all__ = ["sweep", "SweepResult", "REDUCE_FAILED", "REDUCTIONS"]

#: the status of a run whose reduction callable raised (cg_model.h's CG_REDUCE_FAILED)
REDUCE_FAILED = STATUS_CODE["CG_REDUCE_FAILED"]

#: reductions by name over one run's states at t_eval, x of shape (len(t_eval), nx)
REDUCTIONS = {
    "final": lambda t, x: x[-1],
    "max": lambda t, x: x.max(axis=0),
    "min": lambda t, x: x.min(axis=0),
    "mean": lambda t, x: x.mean(axis=0),
}


@dataclass
class SweepResult:
    """What sweep returns, in input order. values: (N, len(t), nx) without a
    reduction, (N, nx) with a named one, a list of N objects with a callable
    (None where it failed). status: 0 = ok, a C status code, -1 = interrupted,
    REDUCE_FAILED; messages: the text of each status. outputs: the model's outputs,
    {name: (N, len(t)) + shape} without a reduction, reduced over t with a named one
    ((N,) + shape), empty with a callable. events: a list of (name, t, x) per run."""
    t: np.ndarray
    values: object
    status: np.ndarray
    messages: list
    outputs: dict = field(default_factory=dict)
    events: list = field(default_factory=list)

    @property
    def success(self) -> bool:
        return bool(np.all(self.status == 0))

    def failures(self) -> dict:
        """run index -> message, for every run that did not succeed."""
        return {int(i): self.messages[i] for i in np.flatnonzero(self.status)}


def _table(model, A, width: int, names: list, what: str):
    """A as (rows, width) float64, or None; errors name the argument, row and column."""
    if A is None:
        return None
    try:
        A = np.array(A, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{model.name}: {what} must be a table of numbers: {exc}") from None
    if A.ndim == 1:
        A = A.reshape(1, -1)
    if A.ndim != 2 or A.shape[1] != width:
        raise ValueError(f"{model.name}: {what} must have {width} columns ({', '.join(names)}), "
                         f"got shape {A.shape}")
    bad = np.argwhere(~np.isfinite(A))
    if len(bad):
        i, j = bad[0]
        raise ValueError(f"{model.name}: {what} row {i}, column {j} ({names[j]}) is not finite "
                         f"({A[i, j]})")
    return A


def _rows(tables: dict) -> int:
    """The number of runs: the row count shared by every table of more than one row."""
    counts = {what: len(A) for what, A in tables.items() if A is not None and len(A) > 1}
    if len(set(counts.values())) > 1:
        raise ValueError(f"the tables have different numbers of rows: {counts}")
    return next(iter(counts.values()), 1)


def _takes_outputs(f) -> bool:
    """A reduction callable of three parameters: f(t, x, outputs)."""
    try:
        return len(inspect.signature(f).parameters) >= 3
    except (TypeError, ValueError):
        return False


def _run_chunk(model, first: int, t_span, X0, P, R, options: dict, reduce):
    """One chunk on a worker: simulate_batch, then the reduction per run: (values,
    status, messages, outputs, events)."""
    batch = model.simulate_batch(t_span, X0, P, R, **options)
    t, X, status = batch
    status = np.asarray(status, dtype=int).copy()
    messages = list(getattr(batch, "messages", None)
                    or [STATUS.get(int(s), f"status {s}") for s in status])
    if reduce is None:
        return X, status, messages, batch.outputs, batch.events
    if isinstance(reduce, str):
        f = REDUCTIONS[reduce]
        values = np.array([f(t, X[i]) for i in range(len(X))], dtype=float)
        outputs = {name: np.array([f(t, Y[i]) for i in range(len(Y))], dtype=float)
                   for name, Y in batch.outputs.items()}
        return values, status, messages, outputs, batch.events
    with_outputs, values = _takes_outputs(reduce), []
    for i in range(len(X)):
        try:
            values.append(reduce(t, X[i], {k: Y[i] for k, Y in batch.outputs.items()})
                          if with_outputs else reduce(t, X[i]))
        except Exception as exc:                      # the user's callable: any error
            values.append(None)
            status[i] = REDUCE_FAILED
            messages[i] = (f"run {first + i}: the reduction raised "
                           f"{type(exc).__name__}: {exc}")
    return values, status, messages, {}, batch.events


def _connect(client, timeout: float):
    """(client, cluster to close or None): the given client, one connected to an
    address, or a LocalCluster on 127.0.0.1 for this call."""
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise ImportError("sweep needs Dask's distributed scheduler: pip install "
                          "'gibbs-appell-codegen[distributed]'") from None
    if client is None:
        cluster = LocalCluster(n_workers=os.cpu_count() or 1, threads_per_worker=1,
                               processes=True, host="127.0.0.1", dashboard_address=None,
                               env={"OMP_NUM_THREADS": "1"})
        return Client(cluster), cluster
    if isinstance(client, str):
        try:
            return Client(client, timeout=timeout), None
        except (OSError, TimeoutError) as exc:
            raise ConnectionError(f"cannot reach the Dask scheduler at {client}: {exc}") from None
    return client, None


def sweep(model, t_span, X0=None, P=None, R=None, *, method: str = "dopri5",
          rtol: float = 1e-8, atol: float = 1e-8, dt=None, t_eval=None,
          max_steps: int = CONSTANTS["CG_MAX_STEPS"], reduce=None, client=None,
          chunk_size: int | None = None, retries: int = 2, progress: bool = False,
          timeout: float = 10.0, events=None, max_events: int = DEFAULT_MAX_EVENTS,
          controller=None, x_ref=None, deadline: float | None = None) -> SweepResult:
    """Run a compiled model over a table of runs on a Dask cluster.

    X0 (N, nx), P (N, np), R (N, nr): a row per run, or one row (or a vector)
    shared by all runs; X0 defaults to zeros. method, rtol, atol, dt, t_eval,
    max_steps, events, max_events, controller (a matrix K), x_ref: as in
    ``simulate_batch``: each run integrates over the whole t_span, t_eval only
    picks its output times (values has len(t_eval) rows per run, a run per row,
    solve_ivp's y transposed). reduce: None (every run's states at t_eval), "final",
    "max", "min", "mean", or a callable f(t, x) or f(t, x, outputs), applied on
    the worker. client: a ``distributed.Client``, a scheduler address such as
    "tcp://127.0.0.1:8786", or None for a LocalCluster started and closed for
    this call. chunk_size: runs per task (default: about 8 tasks per worker
    thread). progress: a tqdm bar over completed chunks (if tqdm is installed).
    deadline: seconds to wait for the results (None: no limit); past it, the
    unfinished chunks are cancelled and TimeoutError names their rows.
    timeout: seconds to connect to a scheduler given by its address.
    """
    if deadline is not None and not (isinstance(deadline, (int, float)) and deadline > 0):
        raise ValueError(f"deadline must be a positive number of seconds, got {deadline!r}")
    nx, nr = model.nx, len(model.specifieds)
    if controller is not None and not isinstance(controller, (list, tuple, np.ndarray)):
        raise TypeError(f"{model.name}: sweep's controller is a matrix K: a C function's "
                        f"address means nothing to a Dask worker's process; compile the law "
                        f"into the model with generate(..., control=...)")
    if controller is not None and R is None and nr:
        R = np.zeros(nr)                            # the reference inputs: zero
    tables = dict(X0=_table(model, X0, nx, model.states, "X0"),
                  P=_table(model, P, len(model.constants), model.constants, "P"),
                  R=_table(model, R, nr, model.specifieds, "R") if nr or R is not None else None)
    if tables["P"] is None:
        raise ValueError(f"{model.name}: P (the constants {model.constants}) is required")
    if nr and tables["R"] is None:
        raise ValueError(f"{model.name}: R (the inputs {model.specifieds}) is required")
    n = _rows(tables)
    if tables["X0"] is None:
        tables["X0"] = np.zeros((1, nx))
    full = {k: (np.broadcast_to(A, (n, A.shape[1])) if A is not None else None)
            for k, A in tables.items()}
    options = dict(method=method, rtol=rtol, atol=atol, dt=dt, t_eval=t_eval, max_steps=max_steps,
                   events=events, max_events=max_events, controller=controller, x_ref=x_ref)
    # the run arguments checked here, before anything is sent (no run is made)
    t_out, _, _ = model.simulate_batch(t_span, np.empty((0, nx)), full["P"][0],
                                       full["R"][0] if nr else None, **options)
    if not (reduce is None or callable(reduce) or reduce in REDUCTIONS):
        raise ValueError(f"reduce must be None, one of {list(REDUCTIONS)} or a callable, "
                         f"got {reduce!r}")
    if isinstance(reduce, str) and len(t_out) == 0:
        raise ValueError(f"{model.name}: reduce={reduce!r} needs output times: t_eval is empty")
    _check_restitutions(model, full["P"], events)
    # a LocalCluster's nannies set OMP_NUM_THREADS and PYTHONHASHSEED in this process
    environ = dict(os.environ)
    dask_client, cluster = _connect(client, timeout)
    try:
        if chunk_size is None:
            threads = sum(dask_client.nthreads().values()) or 1
            chunk_size = max(1, math.ceil(n / (8 * threads)))
        starts = list(range(0, n, chunk_size))
        futures = {}
        for k, first in enumerate(starts):
            rows = slice(first, min(first + chunk_size, n))
            futures[dask_client.submit(
                _run_chunk, model, first, t_span, np.ascontiguousarray(full["X0"][rows]),
                np.ascontiguousarray(full["P"][rows]),
                np.ascontiguousarray(full["R"][rows]) if nr else None, options, reduce,
                retries=retries, pure=False)] = k
        parts = [None] * len(starts)
        from distributed import as_completed
        bar = _bar(progress, len(starts), dask_client)
        try:
            for future in as_completed(futures, timeout=deadline):
                parts[futures[future]] = future.result()
                if bar is not None:
                    bar.update(1)
        except TimeoutError:                  # as_completed's, past the deadline
            late = [k for k, part in enumerate(parts) if part is None]
            dask_client.cancel([f for f, k in futures.items() if k in late])
            rows = ", ".join(f"{starts[k]}-{min(starts[k] + chunk_size, n) - 1}"
                             for k in late[:5]) + (" ..." if len(late) > 5 else "")
            workers = len(dask_client.scheduler_info().get("workers", {}))
            raise TimeoutError(f"{model.name}: sweep: {len(late)} of {len(starts)} chunks "
                               f"(rows {rows}) not finished within the deadline of "
                               f"{deadline} s; the cluster has {workers} workers") from None
        finally:
            if bar is not None:
                bar.close()
    finally:
        if cluster is not None:
            dask_client.close()
            cluster.close()
            restore_environ(environ)
    status = np.concatenate([part[1] for part in parts])
    messages = [m for part in parts for m in part[2]]
    if reduce is None or isinstance(reduce, str):
        values = np.concatenate([part[0] for part in parts])
    else:
        values = [v for part in parts for v in part[0]]
    outputs = {name: np.concatenate([part[3][name] for part in parts])
               for name in parts[0][3]} if parts else {}
    events = [e for part in parts for e in part[4]]
    return SweepResult(t=np.asarray(t_out), values=values, status=status, messages=messages,
                       outputs=outputs, events=events)


def _check_restitutions(model, P, events) -> None:
    """Every distinct row of P gives the impacts the runs apply (terminal, with an
    impact) a restitution in [0, 1], else ValueError naming the row and the constants it
    comes from (Dynamics.check_restitutions, before any run)."""
    if not any(model.dynamics.impact_events):
        return
    rows, first = np.unique(P, axis=0, return_index=True)
    for row, i in zip(rows, first):
        model.dynamics.check_restitutions(row, events, where=f"P row {i}: ")


def restore_environ(environ: dict) -> None:
    """os.environ as it was: the cluster was this call's, so are its settings."""
    for key in set(os.environ) - set(environ):
        del os.environ[key]
    for key, value in environ.items():
        if os.environ.get(key) != value:
            os.environ[key] = value


def _bar(progress, total, client):
    if not progress:
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:
        link = getattr(client, "dashboard_link", None)
        warnings.warn("progress=True needs tqdm (pip install tqdm)"
                      + (f"; the Dask dashboard is at {link}" if link else ""), stacklevel=3)
        return None
    return tqdm(total=total, unit="chunk", desc="sweep")
