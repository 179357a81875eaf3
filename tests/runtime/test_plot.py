"""run.plot: a matplotlib figure of states, outputs and the energy drift."""
import numpy as np
import pytest


def test_plot_states_outputs_and_energy_drift(hybrid, tmp_path):
    pytest.importorskip("matplotlib")
    pd = hybrid("pendulum")
    run = pd["mod"].simulate((0, 1), [0.3, 0.0], pd["p"], rtol=1e-10, atol=1e-10,
                             t_eval=np.linspace(0, 1, 51))
    fig = run.plot(outputs=["T", "p"], energy=("T", "V"), path=tmp_path / "run.png")
    assert (tmp_path / "run.png").stat().st_size > 1000
    assert [ax.get_ylabel() for ax in fig.axes] == ["state", "T", "p", "drift of T + V"]
    drift = fig.axes[3].lines[0].get_ydata()
    assert np.abs(drift).max() < 1e-8 and len(fig.axes[2].lines) == 3     # p is a 3-vector
    with pytest.raises(ValueError, match=r"'nope' not among the run's states \(q, u\)"):
        run.plot(states=["nope"])
    with pytest.raises(ValueError, match=r"energy: 'E' not among the run's outputs"):
        run.plot(energy="E")
    with pytest.raises(ValueError, match="'W' not among the run's outputs"):
        run.plot(outputs=["W"])
