"""``cl-montecarlo``: the contrastive (CL) objective of Huang et al. (2025) (module
[`cl`][theorylab.huang2024.cl]) on a fresh seeded batch of ``train.mc_samples`` images per
step, two independently masked views each."""

from __future__ import annotations

import math

import numpy as np

from ..cl import CLBatch, CLEval, cl_loss_grad
from ..observables import clean_batch, clean_masses, view_masses
from ._base import Evaluation, MAEEngine, Params

__all__ = ["CLMonteCarloEngine"]


class CLMonteCarloEngine(MAEEngine):
    """GD on (Φ, Υ) with the exact gradient of a batch's InfoNCE loss (the backward pass
    written out in [`cl_loss_grad`][theorylab.huang2024.cl.cl_loss_grad]). ``loss_se`` is the
    standard error of the mean of the per-image losses (an approximation: images share
    negatives, so the per-image losses are not independent). It records the MAE engines'
    columns where they mean something: Φ own/global, and the attention masses of every query
    patch of the views; ``loss_star`` and ``excess_loss`` are NaN (no infimum is known). It
    also records the attention on clean images (``clean_*``, [`clean_masses`][theorylab.
    huang2024.observables.clean_masses])."""

    name = "cl-montecarlo"

    def setup(self) -> None:
        cfg = self.cfg
        if cfg.model.objective != "cl":
            raise ValueError(f"train.engine: cl-montecarlo needs model.objective = 'cl' (got "
                             f"{cfg.model.objective!r})")
        self.lstar = math.nan
        #: the clean read-out images (observables.clean_batch), the same at every step
        self.clean = clean_batch(self.structure, cfg.data)
        m = cfg.model
        self.loss_kw = {"temperature": m.temperature, "negatives": cfg.cl_negatives,
                        "symmetric": m.cl_symmetric, "mask_keys": m.mask_keys,
                        "pooling": m.pooling}

    def draw(self, step: int) -> CLBatch:
        """The images and both views of a step (seeded by ``train.seed`` and the step)."""
        rng = self.rng(17, step)
        b = self.sample(rng, self.cfg.train.mc_samples)
        return CLBatch(b.cluster, b.z, b.mask, self.masks(rng, len(b)))

    def eval_cl(self, params: Params, batch: CLBatch, need_grad: bool) -> CLEval:
        with self.threads():
            return cl_loss_grad(self.structure, params.Phi, params.Ups, batch,
                                need_grad=need_grad, xp=self.xp, **self.loss_kw)

    def attn_from_views(self, batch: CLBatch, ce: CLEval) -> dict[str, float]:
        """Attention masses of every query of both views, averaged over images, views and the
        query patches of each kind (global-area ``gq``, local-area ``lq``)."""
        return view_masses(self.structure, batch.cluster, ce.attn_own, ce.attn_glob,
                           ce.attn_masked)

    def evaluate(self, params: Params, step: int, *, need_grad: bool, record: bool):
        batch = self.draw(step)
        ce = self.eval_cl(params, batch, need_grad)
        x = ce.per_sample
        se = float(np.std(x, ddof=1) / math.sqrt(len(x)))
        grads = {"Phi": ce.grad_Phi, "Ups": ce.grad_Ups} if need_grad else None
        attn = {}
        if record:
            attn = {**self.attn_from_views(batch, ce),
                    **clean_masses(self.structure, params.Phi, params.Ups, *self.clean)}
        return Evaluation(ce.loss, loss_se=se, loss_star=math.nan, grads=grads, attn=attn)
