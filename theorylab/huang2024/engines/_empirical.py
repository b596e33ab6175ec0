"""``empirical``: full-batch gradient descent on ``train.n_train`` fixed seeded samples of
Huang et al. (2025)'s data (masks fixed, or fresh per step with ``train.resample_masks``)."""

from __future__ import annotations

import numpy as np

from ..data import Batch, sample_batch, sample_masks
from ._base import Evaluation, MAEEngine, Params, batch_lstar

__all__ = ["EmpiricalEngine"]


class EmpiricalEngine(MAEEngine):
    """Full-batch GD on ``n_train`` seeded samples; L* is the batch's own infimum."""

    name = "empirical"

    def setup(self) -> None:
        cfg = self.cfg
        rng = np.random.default_rng(np.random.SeedSequence([cfg.train.seed, 11]))
        d = cfg.data
        self.batch = sample_batch(rng, self.structure, cfg.train.n_train, law=d.z_law, L=d.L,
                                  U=d.U, values=d.z_values, probs=d.z_probs,
                                  mask_kind=cfg.model.mask, gamma=cfg.model.gamma,
                                  mask_size=cfg.mask_size)

    def batch_at(self, step: int) -> Batch:
        if not self.cfg.train.resample_masks:
            return self.batch
        rng = np.random.default_rng(np.random.SeedSequence([self.cfg.train.seed, 13, step]))
        b = self.batch
        mask = sample_masks(rng, len(b), self.structure.P, self.cfg.model.mask,
                            self.cfg.model.gamma, self.cfg.mask_size)
        return Batch(b.cluster, b.z, mask, b.weight)

    def evaluate(self, params: Params, step: int, *, need_grad: bool, record: bool):
        batch = self.batch_at(step)
        be, grads = self.eval_batch(params, batch, need_grad)
        attn = self.attn_from_batch(batch, be) if record else {}
        ls = batch_lstar(self.structure, batch, self.loss_norm, self.mask_keys)
        return Evaluation(be.loss, loss_star=ls, grads=grads, attn=attn)
