"""``empirical``: full-batch gradient descent on ``train.n_train`` fixed seeded samples of
Huang et al. (2025)'s data (masks fixed, or fresh per step with ``train.resample_masks``)."""

from __future__ import annotations

from ..data import Batch
from ._base import Evaluation, MAEEngine, Params, batch_lstar

__all__ = ["EmpiricalEngine"]


class EmpiricalEngine(MAEEngine):
    """Full-batch GD on ``n_train`` seeded samples; L* is the batch's own infimum."""

    name = "empirical"

    def setup(self) -> None:
        self.batch = self.sample(self.rng(11), self.cfg.train.n_train)

    def batch_at(self, step: int) -> Batch:
        if not self.cfg.train.resample_masks:
            return self.batch
        b = self.batch
        return Batch(b.cluster, b.z, self.masks(self.rng(13, step), len(b)), b.weight)

    def evaluate(self, params: Params, step: int, *, need_grad: bool, record: bool):
        batch = self.batch_at(step)
        be, grads = self.eval_batch(params, batch, need_grad)
        attn = self.attn_from_batch(batch, be) if record else {}
        ls = batch_lstar(self.structure, batch, self.loss_norm, self.mask_keys)
        return Evaluation(be.loss, loss_star=ls, grads=grads, attn=attn)
