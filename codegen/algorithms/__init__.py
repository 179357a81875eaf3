"""The algorithms as programs, one per file: the articulated-body recursion (``aba``), the
composite-rigid-body mass matrix (``crba``), Newton-Euler (``rnea``) and its derivatives, the
unrolled L D L^T (``ldlt``), the Jacobian and its column solve; ``plan`` picks a model's set.
"""
