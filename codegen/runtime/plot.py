"""Plots of a run with matplotlib (the ``plot`` extra), imported only when asked for."""
from __future__ import annotations

import numpy as np

__all__ = ["plot"]


def _matplotlib():
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise ImportError("run.plot needs matplotlib: pip install 'gibbs-appell-codegen[plot]'") from None
    return Figure


def _energy(run, energy):
    names = [energy] if isinstance(energy, str) else list(energy)
    missing = [n for n in names if n not in run.outputs]
    if missing:
        raise ValueError(f"energy: {', '.join(map(repr, missing))} not among the run's outputs "
                         f"({', '.join(run.outputs) or 'none'}); generate(..., outputs="
                         f"{{'T': 'kinetic_energy', 'V': 'potential_energy'}}) adds them")
    total = sum(np.asarray(run.outputs[n], dtype=float) for n in names)
    if total.ndim != 1:
        raise ValueError(f"energy: {', '.join(names)} must be scalar outputs")
    return " + ".join(names), (total - total[0]) / max(abs(total[0]), 1e-300)


def plot(run, states=None, outputs=(), energy=None, path=None):
    """A matplotlib Figure of a run: the chosen states (all by default; [] for none) in
    one panel, each named output in its own, and the energy drift (E - E0) / |E0| of
    ``energy`` (an output's name, or names to add, e.g. ("T", "V")). path: also saved
    there (any format matplotlib writes). Bad names are refused before anything is
    drawn."""
    states = list(run.states) if states is None else [states] if isinstance(states, str) \
        else list(states)
    unknown = [s for s in states if s not in run.states]
    if unknown:
        raise ValueError(f"{', '.join(map(repr, unknown))} not among the run's states "
                         f"({', '.join(run.states)})")
    outputs = [outputs] if isinstance(outputs, str) else list(outputs)
    missing = [o for o in outputs if o not in run.outputs]
    if missing:
        raise ValueError(f"{', '.join(map(repr, missing))} not among the run's outputs "
                         f"({', '.join(o for o in run.outputs if not o.startswith('anim_')) or 'none'})")
    drift = _energy(run, energy) if energy is not None else None
    Figure = _matplotlib()
    panels = (1 if states else 0) + len(outputs) + (1 if drift else 0)
    if panels == 0:
        raise ValueError("nothing to plot: name states, outputs or energy")
    fig = Figure(figsize=(7, 2.2 * panels + 0.6), layout="constrained")
    axes = list(np.atleast_1d(fig.subplots(panels, 1, sharex=True)))
    if states:
        ax = axes.pop(0)
        for s in states:
            ax.plot(run.t, run[s], label=s)
        ax.set_ylabel("state")
        ax.legend(loc="best", fontsize="small", ncol=max(1, len(states) // 6))
    for name in outputs:
        ax = axes.pop(0)
        values = np.asarray(run.outputs[name], dtype=float).reshape(len(run.t), -1)
        ax.plot(run.t, values)
        ax.set_ylabel(name)
    if drift:
        ax = axes.pop(0)
        ax.plot(run.t, drift[1])
        ax.set_ylabel(f"drift of {drift[0]}")
    fig.axes[-1].set_xlabel("t [s]")
    if path is not None:
        fig.savefig(path)
    return fig
