"""What every engine of Huang et al. (2025)'s problem shares: the parameters ``(Φ, Υ)``, one
evaluation, the infimum L* of the MAE loss, and the base class [`MAEEngine`][] (the array
backend of ``train.backend``/``train.device``, parameters, gradient-descent step, recorded row,
batch evaluation).

Parameters live on the host as float64 numpy arrays (checkpoints, the recorded row); an
evaluation moves them to the backend, computes there, and hands the loss, the gradients and the
attention masses back as numpy. Only (Φ, Υ), their gradients and per-query masses cross.
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass, field

import numpy as np

from theorylab.core import engine as _kernel
from theorylab.core.backend import Backend, get_backend

from ..config import ExperimentConfig
from ..data import AreaStructure, Batch, config_batch, sample_masks, zlaw_nodes
from ..model import BatchEval, mae_loss_grad, norm_factor
from ..observables import RECORD_COLUMNS, masked_query_masses, phi_summary

__all__ = ["Evaluation", "MAEEngine", "Params", "RECORD_COLUMNS", "batch_chunk_budget",
           "batch_lstar", "population_lstar"]


@dataclass
class Params:
    """FP correlations Φ (P, F) and positional correlations Υ (P, P)."""

    Phi: np.ndarray
    Ups: np.ndarray


@dataclass
class Evaluation:
    """One evaluation: loss (exact, estimated or empirical), its standard error (Monte Carlo),
    the infimum L* where computable, gradients, and the attention masses of masked queries
    averaged over global-area (``gq``) and local-area (``lq``) query patches."""

    loss: float
    loss_se: float = math.nan
    loss_star: float = math.nan
    grads: dict | None = None
    attn: dict = field(default_factory=dict)


def _ez2(cfg: ExperimentConfig) -> float:
    d = cfg.data
    if d.z_law == "values":
        v, p = zlaw_nodes("values", d.L, d.U, d.z_values, d.z_probs)
        return float(np.dot(p, v * v))
    if d.U == d.L:
        return d.L ** 2
    return (d.U ** 3 - d.L ** 3) / (3 * (d.U - d.L))


def population_lstar(cfg: ExperimentConfig, structure: AreaStructure) -> float:
    """The infimum of the population loss when masked keys stay in the softmax.

    Pointwise, ½‖F_p − x_p‖² ≥ ½z_j² when every other patch of p's own area is masked (the
    output then lies in the span of other features) and ≥ 0 otherwise; Φ[p, own] → ∞ faster
    than Υ[p, p] → ∞ approaches both bounds (attention on the unmasked own-area keys, else on
    the masked self key). So L* = E[norm · Σ_{areas A ⊂ ℳ} |A| · ½z²]. NaN when masked keys
    are left out of the softmax (the infimum is then not known in closed form)."""
    if not cfg.model.mask_keys:
        return math.nan
    P, gamma, s, norm = cfg.data.P, cfg.model.gamma, cfg.mask_size, cfg.model.loss_norm
    total = 0.0
    for k in range(structure.K):
        sizes = np.bincount(structure.labels[k])
        for C in sizes:
            C = int(C)
            if cfg.model.mask == "bernoulli":
                p_full = gamma ** C
                if norm == "mask":
                    r = np.arange(P - C + 1)
                    lb = np.array([math.lgamma(P - C + 1) - math.lgamma(x + 1)
                                   - math.lgamma(P - C - x + 1) for x in r])
                    pr = np.exp(lb + r * math.log(gamma) + (P - C - r) * math.log1p(-gamma)) \
                        if gamma < 1 else (r == P - C).astype(float)
                    e_norm = float(np.sum(pr / (C + r)))
                else:
                    e_norm = 1.0 / P if norm == "P" else 1.0
            else:
                p_full = 0.0 if C > s else math.exp(
                    math.lgamma(P - C + 1) - math.lgamma(s - C + 1) - math.lgamma(P - s + 1)
                    - (math.lgamma(P + 1) - math.lgamma(s + 1) - math.lgamma(P - s + 1)))
                e_norm = {"P": 1.0 / P, "mask": 1.0 / s, "none": 1.0}[norm]
            total += C * p_full * e_norm / structure.K
    return 0.5 * _ez2(cfg) * total


def batch_lstar(structure: AreaStructure, batch: Batch, loss_norm: str,
                mask_keys: bool = True) -> float:
    """The same infimum for a weighted batch (the empirical engine's L*)."""
    if not mask_keys:
        return math.nan
    lab = structure.labels[batch.cluster]
    Nmax = batch.z.shape[1]
    total = 0.0
    nf = norm_factor(loss_norm, batch.mask)
    for m in range(Nmax):
        in_m = lab == m
        full = np.all(~in_m | batch.mask, axis=1) & in_m.any(axis=1)
        total += float(np.sum(batch.weight * nf * full * in_m.sum(axis=1)
                              * 0.5 * batch.z[:, m] ** 2))
    return total


class MAEEngine(_kernel.Engine):
    """What every engine of this paper shares: the backend, parameters, GD step, recorded
    row."""

    name = "mae"

    def __init__(self, cfg: ExperimentConfig, structure: AreaStructure | None = None,
                 xp: Backend | None = None) -> None:
        self.cfg = cfg
        self.structure = structure or cfg.data.make_structure()
        t = cfg.train
        #: the array backend every evaluation runs on (``train.backend``, ``train.device``)
        self.xp = xp or get_backend(t.backend, t.dtype, t.device, section="train.")
        s = self.structure
        self.lr = t.lr
        #: the gradient flow's clock: one GD step is a time η = train.lr
        self.time_step = t.lr
        self.mask_keys, self.loss_norm = cfg.model.mask_keys, cfg.model.loss_norm
        self.lstar = population_lstar(cfg, s)
        self.setup()

    def setup(self) -> None:
        """What an engine builds from its config once the shared state above is set (its
        enumeration, tables, sample); raises a one-line ``ValueError`` naming the field that
        it cannot run."""

    def threads(self):
        """A context in which torch uses ``train.threads`` threads, capped at the usable cores
        (0: its default), when the backend is torch on a CPU; a no-op otherwise."""
        n = self.cfg.train.threads
        if self.xp.name != "torch" or self.xp.device != "cpu" or n <= 0:
            return contextlib.nullcontext()
        from theorylab.core.threads import capped_threads
        from theorylab.vision.nets import cpu_threads

        return cpu_threads(capped_threads(n))

    # -- draws -------------------------------------------------------------------------------
    def rng(self, *tags: int) -> np.random.Generator:
        """The generator seeded by ``train.seed`` and ``tags`` (what is drawn, and the step)."""
        return np.random.default_rng(np.random.SeedSequence([self.cfg.train.seed, *tags]))

    def sample(self, rng: np.random.Generator, n: int) -> Batch:
        """``n`` images of the config's data law with their masks ([`sample_batch`][theorylab.
        huang2024.data.sample_batch])."""
        return config_batch(rng, self.structure, self.cfg, n)

    def z_nodes(self) -> tuple[np.ndarray, np.ndarray]:
        """(nodes, probabilities) of the coefficient law ([`zlaw_nodes`][theorylab.huang2024.
        data.zlaw_nodes] with ``train.z_nodes``)."""
        d = self.cfg.data
        return zlaw_nodes(d.z_law, d.L, d.U, d.z_values, d.z_probs, self.cfg.train.z_nodes)

    def masks(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` fresh masks of the config's masking."""
        m = self.cfg.model
        return sample_masks(rng, n, self.structure.P, m.mask, m.gamma, self.cfg.mask_size)

    # -- parameters --------------------------------------------------------------------------
    def initial_params(self) -> Params:
        P, F = self.structure.P, self.structure.F
        if self.cfg.train.init == "zero":
            return Params(np.zeros((P, F)), np.zeros((P, P)))
        rng = self.rng(3)
        sc = self.cfg.train.init_scale
        return Params(sc * rng.standard_normal((P, F)), sc * rng.standard_normal((P, P)))

    def apply(self, params: Params, grads) -> Params:
        return Params(params.Phi - self.lr * grads["Phi"], params.Ups - self.lr * grads["Ups"])

    def params_to_arrays(self, params: Params) -> dict[str, np.ndarray]:
        return {"Phi": params.Phi, "Ups": params.Ups}

    def params_from_arrays(self, arrays) -> Params:
        return Params(np.asarray(arrays["Phi"], np.float64), np.asarray(arrays["Ups"], np.float64))

    def watched(self, ev) -> dict[str, object]:
        return {"loss": ev.loss}

    # -- record ------------------------------------------------------------------------------
    def phi_summary(self, params: Params) -> dict[str, float]:
        """[`phi_summary`][theorylab.huang2024.observables.phi_summary] of ``params``."""
        return phi_summary(self.structure, params.Phi)

    def record(self, params: Params, step: int, ev: Evaluation) -> dict[str, object]:
        row = {"loss": ev.loss, "loss_se": ev.loss_se, "loss_star": ev.loss_star,
               "excess_loss": ev.loss - ev.loss_star}
        row.update(self.phi_summary(params))
        for name in RECORD_COLUMNS:
            if name.startswith(("attn_", "clean_")):
                row[name] = ev.attn.get(name, math.nan)
        row["engine"] = self.name
        return row

    def attn_from_batch(self, batch: Batch, be: BatchEval) -> dict[str, float]:
        """Attention masses of masked queries averaged over the batch's weights."""
        return masked_query_masses(self.structure, batch, be.attn_own, be.attn_glob,
                                   be.attn_masked)

    def eval_batch(self, params: Params, batch: Batch, need_grad: bool, chunk: int = 0):
        """(BatchEval of the whole batch, gradients) of a weighted batch, in chunks of rows
        (each chunk's largest array ~2²² elements on a CPU, ~2²⁶ on CUDA)."""
        P, xp = self.structure.P, self.xp
        rows = chunk or max(1, batch_chunk_budget(xp.device) // max(
            1, P * P * max(self.structure.F, 4)))
        Phi, Ups = xp.asarray(params.Phi), xp.asarray(params.Ups)
        loss, gPhi, gUps = 0.0, 0.0, 0.0
        parts = []  # per chunk: per-sample losses and the three attention masses
        with self.threads():
            for sl in _kernel.iter_chunks(len(batch), rows):
                sub = Batch(batch.cluster[sl], batch.z[sl], batch.mask[sl], batch.weight[sl])
                be = mae_loss_grad(self.structure, Phi, Ups, sub, mask_keys=self.mask_keys,
                                   loss_norm=self.loss_norm, need_grad=need_grad, xp=xp)
                loss += be.loss
                if need_grad:
                    gPhi, gUps = gPhi + be.grad_Phi, gUps + be.grad_Ups
                parts.append((be.per_sample, be.attn_own, be.attn_glob, be.attn_masked))
        per, own, glob, msk = (np.concatenate(x) for x in zip(*parts))
        be = BatchEval(loss, per, None, None, own, glob, msk)
        grads = {"Phi": gPhi, "Ups": gUps} if need_grad else None
        return be, grads


def batch_chunk_budget(device: str) -> int:
    """Elements of the largest (rows, P, P·F) array of one batch chunk: 2²² on a CPU (numpy
    or torch), 2²⁶ on CUDA."""
    return 1 << (26 if device.startswith("cuda") else 22)
