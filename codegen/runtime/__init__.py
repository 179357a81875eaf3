"""The compiled model in Python: the Cython runtime (``_runtime``), :class:`CompiledModel`, a
run's arguments checked, its results, linearization on a manifold, sweeps and plots.
"""
