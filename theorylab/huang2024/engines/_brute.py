"""``population-brute``: the population MAE loss of Huang et al. (2025) as a finite sum over
every cluster, every coefficient vector (a discrete law) and every mask; the reference, tiny P
only."""

from __future__ import annotations

import math

import numpy as np

from ..data import Batch, coefficient_vectors
from ._base import Evaluation, MAEEngine, Params

__all__ = ["BruteEngine"]


class BruteEngine(MAEEngine):
    """Every cluster × coefficient vector × mask enumerated (the reference; tiny P)."""

    name = "population-brute"

    def setup(self) -> None:
        self.batch = self._enumerate()

    def _enumerate(self) -> Batch:
        cfg, s = self.cfg, self.structure
        P = s.P
        nodes, probs = self.z_nodes()
        if cfg.model.mask == "bernoulli":
            n_masks = 2 ** P
        else:
            n_masks = math.comb(P, cfg.mask_size)
        Nmax = int(s.n_areas.max())
        total = sum(len(nodes) ** int(n) for n in s.n_areas) * n_masks
        if total > cfg.train.max_configs:
            raise ValueError(f"train.max_configs: brute force needs {total} configurations "
                             f"(> {cfg.train.max_configs}); use population-exact or montecarlo")
        bits = (np.arange(2 ** P)[:, None] >> np.arange(P)[None, :]) & 1
        masks = bits.astype(bool)
        if cfg.model.mask == "bernoulli":
            g = cfg.model.gamma
            mp = np.prod(np.where(masks, g, 1 - g), axis=1)
        else:
            masks = masks[masks.sum(axis=1) == cfg.mask_size]
            mp = np.full(len(masks), 1.0 / len(masks))
        cl, zz, mm, ww = [], [], [], []
        for k in range(s.K):
            N = int(s.n_areas[k])
            zc, pz = coefficient_vectors(nodes, probs, N)
            zk = np.zeros((len(zc), Nmax))
            zk[:, :N] = zc
            nz, nm = len(zc), len(masks)
            cl.append(np.full(nz * nm, k))
            zz.append(np.repeat(zk, nm, axis=0))
            mm.append(np.tile(masks, (nz, 1)))
            ww.append(np.repeat(pz, nm) * np.tile(mp, nz) / s.K)
        return Batch(np.concatenate(cl), np.concatenate(zz), np.concatenate(mm),
                     np.concatenate(ww))

    def evaluate(self, params: Params, step: int, *, need_grad: bool, record: bool):
        be, grads = self.eval_batch(params, self.batch, need_grad)
        attn = self.attn_from_batch(self.batch, be) if record else {}
        return Evaluation(be.loss, loss_star=self.lstar, grads=grads, attn=attn)
