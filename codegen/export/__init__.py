"""Exports of a model's C for other tools: the standalone C99 library, the FMI 2.0 and
FMI 3.0 FMUs and CasADi's external functions with exact first and second derivatives.
"""
