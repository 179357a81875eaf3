"""The models every compiled-path test shares, formed and compiled once per session."""
from codegen import examples as ex

MODELS = {
    "dumbbell": ex.dumbbell,
    "rolling_disk": ex.rolling_disk,
    "pendulum3": lambda: ex.n_pendulum_on_cart(3),
    "chain2": lambda: ex.spatial_chain(2),
    "disk_contact": ex.rolling_disk_contact,
}


