"""Engines of Huang et al. (2025)'s MAE problem on the kernel's engine interface.

All engines hold the reduced coordinates ``(Φ, Υ)`` of Q (module [`model`][theorylab.huang2024
.model]) and take gradient-descent steps ``Φ ← Φ − η ∂L/∂Φ``, ``Υ ← Υ − η ∂L/∂Υ``, which is GD
on Q restricted to the blocks that the loss depends on (the other blocks of Q get no gradient).

- ``population-brute``: the population loss as a finite sum over every cluster, every
  coefficient vector (a discrete law) and every mask: the reference, tiny P only.
- ``population-exact``: the same sum per masked query p, reduced by exchangeability. For a
  query p, the keys q ≠ p of one *atom* (a cell of the common refinement of the clusters'
  partitions; for K = 1 an area) are exchangeable under the data and mask laws; when
  Υ[p, ·] is constant on each atom minus {p} (true at Q⁰ = 0 and kept exactly by GD, since
  then every key of the atom gets the same gradient), the loss depends on the mask only
  through the number of unmasked keys per atom, which is binomial (Bernoulli masks) or
  multivariate hypergeometric (fixed-size masks). Φ is arbitrary. The sum runs over
  Π_a (c_a + 1) counts × |z-law|^{N_k} coefficient vectors per (query, cluster); states that
  break the symmetry are refused.
- ``population-laplace`` (module [`laplace`][theorylab.huang2024.laplace]): the same exact sum at
  any P (Bernoulli masks, ``loss_norm`` P or none) through 1/Z = ∫ e^{−tZ} dt and closed-form
  binomial generating functions, up to a trapezoid rule in ln t (~1e-15).
- ``population-montecarlo``: the same loss and gradient estimated on a fresh seeded batch per
  step, with the standard error of the loss.
- ``empirical``: full-batch GD on ``n_train`` fixed seeded samples (masks fixed, or fresh per
  step with ``train.resample_masks``).
- ``cl-montecarlo`` (``model.objective = "cl"``): the InfoNCE loss of module
  [`cl`][theorylab.huang2024.cl] on a fresh seeded batch of ``mc_samples`` images (two
  independently masked views each) per step, gradients by torch autograd, with the standard
  error of the loss over the batch's images. It records the MAE engines' columns where they
  mean something: Φ own/global, and the attention masses of every query patch of the views
  (not only masked ones: every CL query is positional); ``loss_star`` and ``excess_loss`` are
  NaN (no infimum is known).
"""

from __future__ import annotations

import math

import numpy as np

from .cl import CLBatch, cl_loss_grad
from .config import ExperimentConfig
from .data import AreaStructure, Batch, mask_count_probs, sample_batch, sample_masks, zlaw_nodes
from .engine_base import (
    RECORD_COLUMNS,
    Evaluation,
    MAEEngine,
    Params,
    batch_lstar,
    population_lstar,
)
from .laplace import LaplaceEngine

__all__ = [
    "BruteEngine",
    "CLMonteCarloEngine",
    "EmpiricalEngine",
    "Evaluation",
    "ExactEngine",
    "LaplaceEngine",
    "MonteCarloEngine",
    "Params",
    "RECORD_COLUMNS",
    "batch_lstar",
    "make_engine",
    "population_lstar",
]

class BruteEngine(MAEEngine):
    """Every cluster × coefficient vector × mask enumerated (the reference; tiny P)."""

    name = "population-brute"

    def __init__(self, cfg: ExperimentConfig, structure: AreaStructure | None = None) -> None:
        super().__init__(cfg, structure)
        self.batch = self._enumerate()

    def _enumerate(self) -> Batch:
        cfg, s = self.cfg, self.structure
        d, P = cfg.data, s.P
        nodes, probs = zlaw_nodes(d.z_law, d.L, d.U, d.z_values, d.z_probs, cfg.train.z_nodes)
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
            idx = np.stack(np.meshgrid(*[np.arange(len(nodes))] * N, indexing="ij"),
                           -1).reshape(-1, N)
            zk = np.zeros((len(idx), Nmax))
            zk[:, :N] = nodes[idx]
            pz = np.prod(probs[idx], axis=1)
            nz, nm = len(idx), len(masks)
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


class MonteCarloEngine(MAEEngine):
    """A fresh seeded batch of ``mc_samples`` per step: unbiased loss and gradient, with the
    standard error of the loss."""

    name = "population-montecarlo"

    def draw(self, step: int) -> Batch:
        cfg = self.cfg
        rng = np.random.default_rng(np.random.SeedSequence([cfg.train.seed, 7, step]))
        d = cfg.data
        return sample_batch(rng, self.structure, cfg.train.mc_samples, law=d.z_law, L=d.L, U=d.U,
                            values=d.z_values, probs=d.z_probs, mask_kind=cfg.model.mask,
                            gamma=cfg.model.gamma, mask_size=cfg.mask_size)

    def evaluate(self, params: Params, step: int, *, need_grad: bool, record: bool):
        batch = self.draw(step)
        be, grads = self.eval_batch(params, batch, need_grad)
        x = be.per_sample
        se = float(np.std(x, ddof=1) / math.sqrt(len(x)))
        attn = self.attn_from_batch(batch, be) if record else {}
        return Evaluation(be.loss, loss_se=se, loss_star=self.lstar, grads=grads, attn=attn)


class EmpiricalEngine(MAEEngine):
    """Full-batch GD on ``n_train`` seeded samples; L* is the batch's own infimum."""

    name = "empirical"

    def __init__(self, cfg: ExperimentConfig, structure: AreaStructure | None = None) -> None:
        super().__init__(cfg, structure)
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


class ExactEngine(MAEEngine):
    """The population loss and gradient summed exactly per masked query, over the numbers of
    unmasked keys per atom and the coefficient vectors (see the module docstring for when the
    reduction applies)."""

    name = "population-exact"

    def __init__(self, cfg: ExperimentConfig, structure: AreaStructure | None = None) -> None:
        super().__init__(cfg, structure)
        s, d = self.structure, cfg.data
        self.nodes, self.zprobs = zlaw_nodes(d.z_law, d.L, d.U, d.z_values, d.z_probs,
                                             cfg.train.z_nodes)
        self.atom, self.atom_area = s.atoms()
        P = s.P
        self.pmask = cfg.model.gamma if cfg.model.mask == "bernoulli" else cfg.mask_size / P
        self.plans = []
        total = 0
        for p in range(P):
            others = np.delete(np.arange(P), p)
            groups = [others[self.atom[others] == a] for a in range(self.atom_area.shape[1])]
            groups = [(a, g) for a, g in enumerate(groups) if len(g)]
            G = np.array([a for a, _ in groups], dtype=np.int64)
            c = np.array([len(g) for _, g in groups], dtype=np.int64)
            members = [g for _, g in groups]
            n = np.stack(np.meshgrid(*[np.arange(x + 1) for x in c], indexing="ij"),
                         -1).reshape(-1, len(c))
            pn = mask_count_probs(cfg.model.mask, P, cfg.model.gamma, cfg.mask_size, c, n)
            keep = pn > 0
            n, pn = n[keep], pn[keep]
            self.plans.append((G, c, members, n, pn))
            total += len(n) * sum(len(self.nodes) ** int(N) for N in s.n_areas)
        if total > cfg.train.max_configs:
            raise ValueError(f"train.max_configs: the exact sum needs {total} configurations "
                             f"(> {cfg.train.max_configs}); use population-montecarlo")
        self.zconf = []
        for k in range(s.K):
            N = int(s.n_areas[k])
            idx = np.stack(np.meshgrid(*[np.arange(len(self.nodes))] * N, indexing="ij"),
                           -1).reshape(-1, N)
            self.zconf.append((self.nodes[idx], np.prod(self.zprobs[idx], axis=1)))
        self._torch_sum = None  # the torch tensors of the sum, built on first use

    def check_symmetric(self, Ups: np.ndarray) -> None:
        for p, (_G, _c, members, _n, _pn) in enumerate(self.plans):
            for g in members:
                v = Ups[p, g]
                if np.ptp(v) > 1e-12 * (1 + np.abs(v).max()):
                    raise ValueError(
                        f"population-exact: Υ[{p}, ·] is not constant on an atom (spread "
                        f"{np.ptp(v):.3g}); the exchangeable sum does not apply to this state")

    def count_norm(self, c: np.ndarray, n: np.ndarray) -> np.ndarray:
        """The loss normalisation of each row of unmasked-key counts ``n`` (rows, atoms) of a
        masked query whose atoms hold ``c`` other keys: 1/P, 1/|ℳ| (the query and its masked
        keys) or 1."""
        if self.loss_norm == "P":
            return np.full(len(n), 1.0 / self.structure.P)
        if self.loss_norm == "mask":
            return 1.0 / (1.0 + (c - n).sum(axis=1))
        return np.ones(len(n))

    def _query(self, p: int, k: int, Phi, Ups, need_grad: bool):
        G, c, members, n, pn = self.plans[p]
        zc, pz = self.zconf[k]
        s = self.structure
        off = int(s.offset[k])
        j = int(s.labels[k, p])
        area = self.atom_area[k, G]  # (nG,) the area (in cluster k) of each atom
        Nk = int(s.n_areas[k])
        ua = np.array([Ups[p, g[0]] for g in members])  # Υ on each atom
        zg = zc[:, area]  # (Cz, nG)
        phig = Phi[p, off + area]
        u = (zg * phig + ua)[None, :, :]  # (1, Cz, nG) logits of unmasked keys
        w = ua[None, None, :]  # masked keys
        selfv = Ups[p, p]
        nU = n[:, None, :].astype(np.float64)  # (Cn, 1, nG)
        nM = (c - n)[:, None, :].astype(np.float64)
        incl = self.mask_keys
        cand = [np.where(nU > 0, u, -np.inf).max(axis=2)]
        if incl:
            cand.append(np.broadcast_to(np.where(nM > 0, w, -np.inf).max(axis=2), cand[0].shape))
            cand.append(np.full(cand[0].shape, selfv))
        M = np.max(np.stack(cand), axis=0)
        M = np.where(np.isfinite(M), M, 0.0)[..., None]  # (Cn, Cz, 1)
        EU = nU * np.exp(u - M)
        EM = nM * np.exp(w - M) if incl else np.zeros_like(EU)
        ES = np.exp(selfv - M[..., 0]) if incl else np.zeros(M.shape[:2])
        Z = EU.sum(axis=2) + EM.sum(axis=2) + ES
        invZ = np.where(Z > 0, 1.0 / np.where(Z > 0, Z, 1.0), 0.0)[..., None]
        AU, AM, AS = EU * invZ, EM * invZ, ES * invZ[..., 0]
        onehot = (area[:, None] == np.arange(Nk)[None, :]).astype(np.float64)  # (nG, Nk)
        sm = AU @ onehot  # (Cn, Cz, Nk)
        zj = zc[:, j]
        tgt = np.zeros(Nk)
        tgt[j] = 1.0
        resid = zc[None, :, :] * sm - zj[None, :, None] * tgt
        lossc = 0.5 * np.sum(resid * resid, axis=2)  # (Cn, Cz)
        nf = self.count_norm(c, n)
        wq = self.pmask / s.K
        wcond = pn[:, None] * pz[None, :]  # P[config | p masked, cluster k]
        wl = wcond * nf[:, None] * wq
        loss = float(np.sum(wl * lossc))
        attn = (float(np.sum(wcond * sm[..., j])), float(np.sum(wcond * sm[..., 0])),
                float(np.sum(wcond * (AM.sum(axis=2) + AS))))
        if not need_grad:
            return loss, attn, None
        h = zg[None, :, :] * resid[:, :, area]  # (Cn, Cz, nG) ∂ℓ/∂attn of an unmasked key
        H = np.sum(AU * h, axis=2, keepdims=True)
        dU = AU * (h - H)  # total over the unmasked keys of each atom
        dM = AM * (-H)
        dS = AS * (-H[..., 0])
        gphi = np.einsum("ab,abg,gm->m", wl, dU * zg[None, :, :], onehot)
        gatom = np.einsum("ab,abg->g", wl, dU + dM)
        gself = float(np.sum(wl * dS))
        return loss, attn, (off, gphi, members, gatom / c, gself)

    def evaluate(self, params: Params, step: int, *, need_grad: bool, record: bool):
        self.check_symmetric(params.Ups)
        if self.cfg.train.backend == "torch":
            return self._evaluate_torch(params, need_grad)
        s = self.structure
        P = s.P
        gPhi, gUps = np.zeros_like(params.Phi), np.zeros_like(params.Ups)
        loss = 0.0
        sums = {f"{a}_{t}": 0.0 for a in ("own", "glob", "masked") for t in ("gq", "lq")}
        wsum = {"gq": 0.0, "lq": 0.0}
        for k in range(s.K):
            for p in range(P):
                lq, attn, g = self._query(p, k, params.Phi, params.Ups, need_grad)
                loss += lq
                tag = "gq" if s.labels[k, p] == 0 else "lq"
                wsum[tag] += 1.0
                for name, v in zip(("own", "glob", "masked"), attn):
                    sums[f"{name}_{tag}"] += v
                if g is not None:
                    off, gphi, members, gper, gself = g
                    gPhi[p, off:off + len(gphi)] += gphi
                    for mem, v in zip(members, gper):
                        gUps[p, mem] += v
                    gUps[p, p] += gself
        attn = {f"attn_{key}": (v / wsum[key[-2:]] if wsum[key[-2:]] else math.nan)
                for key, v in sums.items()}
        grads = {"Phi": gPhi, "Ups": gUps} if need_grad else None
        return Evaluation(loss, loss_star=self.lstar, grads=grads, attn=attn)


    def _evaluate_torch(self, params: Params, need_grad: bool) -> Evaluation:
        """The same sum on torch (``train.device``), module [`exact_torch`][theorylab
        .huang2024.exact_torch]."""
        if self._torch_sum is None:
            from .exact_torch import TorchExactSum

            self._torch_sum = TorchExactSum(self, self.cfg.train.device)
        loss, sums, wsum, g = self._torch_sum.evaluate(params.Phi, params.Ups, need_grad)
        attn = {f"attn_{key}": (v / wsum[key[-2:]] if wsum[key[-2:]] else math.nan)
                for key, v in sums.items()}
        grads = {"Phi": g[0], "Ups": g[1]} if need_grad else None
        return Evaluation(loss, loss_star=self.lstar, grads=grads, attn=attn)


class CLMonteCarloEngine(MAEEngine):
    """The CL objective (module [`cl`][theorylab.huang2024.cl]) on a fresh seeded batch of
    ``mc_samples`` images per step, two independently masked views each; GD on (Φ, Υ) with the
    torch-autograd gradient of the batch's InfoNCE loss. ``loss_se`` is the standard error of
    the mean of the per-image losses (an approximation: images share negatives, so the
    per-image losses are not independent)."""

    name = "cl-montecarlo"

    def __init__(self, cfg: ExperimentConfig, structure: AreaStructure | None = None) -> None:
        if cfg.model.objective != "cl":
            raise ValueError(f"train.engine: cl-montecarlo needs model.objective = 'cl' (got "
                             f"{cfg.model.objective!r})")
        super().__init__(cfg, structure)
        self.lstar = math.nan
        m = cfg.model
        self.loss_kw = {"temperature": m.temperature, "negatives": cfg.cl_negatives,
                        "symmetric": m.cl_symmetric, "mask_keys": m.mask_keys,
                        "pooling": m.pooling, "device": cfg.train.device}

    def draw(self, step: int) -> CLBatch:
        """The images and both views of a step (seeded by ``train.seed`` and the step)."""
        cfg = self.cfg
        rng = np.random.default_rng(np.random.SeedSequence([cfg.train.seed, 17, step]))
        d = cfg.data
        b = sample_batch(rng, self.structure, cfg.train.mc_samples, law=d.z_law, L=d.L, U=d.U,
                         values=d.z_values, probs=d.z_probs, mask_kind=cfg.model.mask,
                         gamma=cfg.model.gamma, mask_size=cfg.mask_size)
        mask2 = sample_masks(rng, len(b), self.structure.P, cfg.model.mask, cfg.model.gamma,
                             cfg.mask_size)
        return CLBatch(b.cluster, b.z, b.mask, mask2)

    def eval_cl(self, params: Params, batch: CLBatch, need_grad: bool):
        import torch

        threads = self.cfg.train.threads
        old = torch.get_num_threads()
        if threads:
            torch.set_num_threads(threads)
        try:
            return cl_loss_grad(self.structure, params.Phi, params.Ups, batch,
                                need_grad=need_grad, **self.loss_kw)
        finally:
            torch.set_num_threads(old)

    def attn_from_views(self, batch: CLBatch, ce) -> dict[str, float]:
        """Attention masses of every query of both views, averaged over images, views and the
        query patches of each kind (global-area ``gq``, local-area ``lq``)."""
        lab = self.structure.labels[batch.cluster]  # (B, P)
        out = {}
        for tag, sel in (("gq", lab == 0), ("lq", lab != 0)):
            n = 2 * sel.sum()
            for name, arr in (("own", ce.attn_own), ("glob", ce.attn_glob),
                              ("masked", ce.attn_masked)):
                out[f"attn_{name}_{tag}"] = (float(np.sum(arr * sel[:, None, :]) / n) if n
                                            else math.nan)
        return out

    def evaluate(self, params: Params, step: int, *, need_grad: bool, record: bool):
        batch = self.draw(step)
        ce = self.eval_cl(params, batch, need_grad)
        x = ce.per_sample
        se = float(np.std(x, ddof=1) / math.sqrt(len(x)))
        grads = {"Phi": ce.grad_Phi, "Ups": ce.grad_Ups} if need_grad else None
        attn = self.attn_from_views(batch, ce) if record else {}
        return Evaluation(ce.loss, loss_se=se, loss_star=math.nan, grads=grads, attn=attn)


ENGINE_CLASSES = {
    "population-brute": BruteEngine,
    "population-exact": ExactEngine,
    "population-laplace": LaplaceEngine,
    "population-montecarlo": MonteCarloEngine,
    "empirical": EmpiricalEngine,
    "cl-montecarlo": CLMonteCarloEngine,
}


def make_engine(cfg: ExperimentConfig, structure: AreaStructure | None = None) -> MAEEngine:
    """The engine named by ``cfg.train.engine``, once
    [`check_resources`][theorylab.huang2024.resources.check_resources] has found that it fits."""
    if cfg.train.engine == "population-reduced":
        # holds seven numbers per query class, never the (P×P) arrays the check sizes
        from ._reduced_engine import ReducedEngine

        if cfg.train.backend == "torch":
            from theorylab.core.backend import check_device

            check_device(cfg.train.device, "train.")
        return ReducedEngine(cfg, structure)
    from .resources import check_resources

    structure = check_resources(cfg, structure)
    return ENGINE_CLASSES[cfg.train.engine](cfg, structure)
