"""Flexible bodies in the floating frame of reference: mode data, inertia invariants
and the body's terms of the Gibbs–Appell function (see :mod:`codegen.flexible.terms`)."""
from .beams import beam_modes, beam_roots
from .body import FlexibleBody
from .invariants import Invariants, invariants
from .modes import Modes, fe_modes
from .terms import BodyTerms, body_terms

__all__ = ["FlexibleBody", "Modes", "beam_modes", "beam_roots", "fe_modes", "Invariants",
           "invariants", "BodyTerms", "body_terms"]
