"""Figures of Jelassi et al. (2022) and theorylab's figures on its dynamics, one module per
figure or small family; importing this package registers them:

- ``_fig1a``, ``_fig5``, ``_fig6``, ``_fig7``: jelassi2022-fig1a, -fig5, -fig6, -fig7
  (Fashion-MNIST / digits stand-ins, with [`theorylab.vision`][]); ``_images``: what they
  share (data, settings, training, locality scores);
- ``_gaussian``: jelassi2022-fig1b, -fig2 (partitions, Gaussian CNN-teacher data);
- ``_fig3``, ``_fig4``: jelassi2022-fig3, -fig4 (the synthetic data of Assumption 1);
- ``_phases``, ``_phase_diagram``, ``_transfer``: jelassi2022-phases, -phase-diagram, -transfer
  (theorylab's figures on the dynamics; their former ids theorylab-phases, -phase-diagram,
  -transfer work until the next release);
- ``_flow``: jelassi2022-flow (gradient descent at several step sizes beside the gradient
  flow);
- ``_common``: what the figures on the synthetic data share.
"""

from . import (
    _fig1a,
    _fig3,
    _fig4,
    _fig5,
    _fig6,
    _fig7,
    _flow,
    _gaussian,
    _images,
    _phase_diagram,
    _phases,
    _transfer,
)

__all__ = ["_fig1a", "_fig3", "_fig4", "_fig5", "_fig6", "_fig7", "_flow", "_gaussian",
           "_images", "_phase_diagram", "_phases", "_transfer"]
