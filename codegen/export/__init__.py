"""Exports of a model's C for other tools: the standalone C99 library and the FMI 2.0 FMU.
"""
