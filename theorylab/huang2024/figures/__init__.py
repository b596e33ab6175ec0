"""Figures of Huang, Wen, Chi & Liang (2025), MAE side.

Importing this package registers them: ``_data`` (huang2024-fig2: the data model),
``_diversity`` (huang2024-fig3: attention diversity across Δ), ``_mechanism``
(huang2024-fig4: a masked patch attending through FP correlations), ``_dynamics``
(huang2024-dynamics: the two phases; huang2024-phase-diagram over Δ and γ). Shared settings and
attention maps of trained models: ``_common``. The CL side is not built yet.
"""

from . import _data, _diversity, _dynamics, _mechanism

__all__ = ["_data", "_diversity", "_dynamics", "_mechanism"]
