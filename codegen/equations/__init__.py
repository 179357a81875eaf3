"""The neutral equations: :class:`EquationsOfMotion` (frozen, checked, with the names and order of
x, p and r) and the signals onto them (outputs, events, impacts and control laws). What the
formulation gives and the programs read; it imports neither.
"""
