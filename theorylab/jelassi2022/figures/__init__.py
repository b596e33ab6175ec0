"""Figures of Jelassi et al. (2022) and theorylab's figures on its dynamics.

Importing this package registers them: ``_images`` (jelassi2022-fig1a, -fig5, -fig6, -fig7 on
Fashion-MNIST / digits stand-ins, with [`theorylab.vision`][]), ``_gaussian`` (jelassi2022-fig1b,
-fig2: partitions, Gaussian CNN-teacher data), ``_synthetic`` (jelassi2022-fig3, -fig4,
theorylab-phases, -phase-diagram, -transfer on the engines of this paper).
"""

from . import _gaussian, _images, _synthetic

__all__ = ["_gaussian", "_images", "_synthetic"]
