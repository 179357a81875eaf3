"""Straight-line programs: :class:`Program` (temporaries and outputs over named inputs), the
common-subexpression elimination, and the operation counts the plan is decided on.
"""
