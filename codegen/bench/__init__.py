"""Benchmarks that run this project and its peers side by side in one run."""
