"""From formed model to loaded module: the build (``build.generate``), the options, the cache with
its content-hash key, the C compiler, atomic files and the names' checks.
"""
