"""Derived predictions for the first paper's model (placeholder re-exports; see the modules)."""

from .phase_one import (
    PhaseIIPrediction,
    PhaseIPrediction,
    _exchangeable,
    m3_closed_form,
    phase_i,
    phase_ii,
    reduced_moments,
)

__all__ = ["PhaseIPrediction", "PhaseIIPrediction", "m3_closed_form", "phase_i", "phase_ii",
           "reduced_moments", "_exchangeable"]
