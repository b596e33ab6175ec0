"""Figures of Huang, Wen, Chi & Liang (2025), MAE side.

Importing this package registers them: ``_data`` (huang2024-fig2: the data model),
``_diversity`` (huang2024-fig3: attention diversity across Δ), ``_mechanism``
(huang2024-fig4: a masked patch attending through FP correlations), ``_dynamics``
(huang2024-dynamics: the two phases and the CL trajectory; huang2024-phase-diagram over Δ and
γ, MAE and CL), ``_rates`` (huang2024-rates: the Lemma 5.1 rates at initialisation, engine
against derived, over P), ``_cl`` (cached CL runs; huang2024-fig1: attention maps of MAE and CL,
synthetic and real ViTs), ``_asymptotics`` (huang2024-asymptotics: Theorems 4.1–4.2 on ladders
of P; huang2024-cl-temperature: CL's global attention per τ). Shared attention maps of trained
models: ``_common``; shared configs and runs: ``theorylab.huang2024.setups``.
"""

from . import _asymptotics, _cl, _data, _diversity, _dynamics, _mechanism, _rates

__all__ = ["_asymptotics", "_cl", "_data", "_diversity", "_dynamics", "_mechanism", "_rates"]
