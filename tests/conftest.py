import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "support"))

import pytest  # noqa: E402

from codegen import GibbsAppellMethod, generate  # noqa: E402


@pytest.fixture(scope="session")
def outdir(tmp_path_factory):
    return tmp_path_factory.mktemp("generated")


@pytest.fixture(scope="session")
def built(outdir):
    """Every model of built_models formed and compiled once per session."""
    from built_models import MODELS
    out = {}
    for name, builder in MODELS.items():
        model = builder()
        ga = GibbsAppellMethod(**model.kwargs)
        out[name] = (model, ga, generate(ga, name, output_dir=outdir))
    return out


@pytest.fixture(scope="module")
def disk(built):
    """The compiled rolling disk of the session's models."""
    return built["rolling_disk"][2]


@pytest.fixture(scope="module")
def pend(built):
    """The compiled pendulum on a cart (n = 3) of the session's models."""
    return built["pendulum3"][2]


@pytest.fixture(scope="session")
def hybrid(tmp_path_factory):
    """The models with outputs, events, impacts and feedback (hybrid_models), each
    compiled on first use, once per session."""
    import hybrid_models
    out, built = tmp_path_factory.mktemp("hybrid"), {}

    def get(name):
        if name not in built:
            built[name] = getattr(hybrid_models, name)(out)
        return built[name]
    return get
