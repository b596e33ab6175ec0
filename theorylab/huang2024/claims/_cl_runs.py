"""The temperature variant shared by the CL claims (thm4.4, thm4.4-plateau); their runs are
``setups.cl_measure`` (shared with the figures)."""

from __future__ import annotations

from theorylab.core.claims import Reading, Variant

from ..setups import TAU, TAUS

__all__ = ["VARIANTS"]

VARIANTS = (
    Variant("temperature",
            Reading(TAU, f"τ = {TAU:g} (the notes' §9 CL setting)", "paper notes"),
            tuple(Reading(t, f"τ = {t:g}", "project choice") for t in TAUS if t != TAU),
            "the InfoNCE temperature was not read (notes §3.3, UNCERTAIN); in the reduced CL "
            "model a finite plateau of global attention exists only below τ_c ≈ 0.25 "
            "(predictions.cl_plateau), so whether CL's global attention tends to 1 depends on "
            "it"),
)

