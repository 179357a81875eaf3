"""codegen.bench.scale's peers: PyDy (Cython) timed under the cap, and refused where its
accelerations are not ours."""
import pytest

pytest.importorskip("pydy")

from codegen.bench.rhs import disagreement, run
from codegen.bench.scale import ours, pydy


def test_pydy_checked_and_capped():
    mine = ours(2, False, 600)
    assert "call_ours" in mine and len(mine["xdot"]) == 6
    theirs = pydy(2, 300, mine["xdot"])
    assert theirs["call"] > 0 and theirs["generate"] > 0, theirs
    assert disagreement(theirs["xdot"], mine["xdot"]) is None
    wrong = [v * (1 + 1e-6) + 1e-6 for v in mine["xdot"]]
    assert disagreement(theirs["xdot"], wrong).startswith("accelerations disagree with ours by")
    assert run("pydy", 2, 0.01, ops=False) == {"error": "> 0.01 s", "capped": True}
