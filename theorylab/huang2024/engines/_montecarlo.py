"""``population-montecarlo``: the population MAE loss and gradient of Huang et al. (2025)
estimated on a fresh seeded batch per step, with the standard error of the loss."""

from __future__ import annotations

import math

import numpy as np

from ..data import Batch
from ._base import Evaluation, MAEEngine, Params

__all__ = ["MonteCarloEngine"]


class MonteCarloEngine(MAEEngine):
    """A fresh seeded batch of ``mc_samples`` per step: unbiased loss and gradient, with the
    standard error of the loss."""

    name = "population-montecarlo"

    def draw(self, step: int) -> Batch:
        return self.sample(self.rng(7, step), self.cfg.train.mc_samples)

    def evaluate(self, params: Params, step: int, *, need_grad: bool, record: bool):
        batch = self.draw(step)
        be, grads = self.eval_batch(params, batch, need_grad)
        x = be.per_sample
        se = float(np.std(x, ddof=1) / math.sqrt(len(x)))
        attn = self.attn_from_batch(batch, be) if record else {}
        return Evaluation(be.loss, loss_se=se, loss_star=self.lstar, grads=grads, attn=attn)
