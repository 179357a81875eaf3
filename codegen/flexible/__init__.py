"""Flexible bodies in the floating frame of reference: mode data, inertia invariants
and the body's terms of the Gibbs–Appell function (see :mod:`codegen.flexible.body`)."""
from .beams import beam_modes, beam_roots
from .modes import Modes, fe_modes

__all__ = ["Modes", "beam_modes", "beam_roots", "fe_modes"]
