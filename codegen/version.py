"""The package's version, one definition (pyproject.toml reads it too)."""
__version__ = "0.1.0"
