"""Plain torch-autograd baselines of the second paper's engines: the same losses written as
straightforward torch expressions, gradients by ``loss.backward()``. The benchmarks time the
engines (hand-written backward passes on the kernel's backend) against them, after checking
that both give the same numbers.

- [`AutogradExactLoss`][]: the exact population loss of ``population-exact`` (logits of every
  key class, log-counts added, a logsumexp softmax, output, squared error, weighted sum over
  count rows and coefficient vectors) of the full Φ and Υ. It uses the engine's enumeration
  tables (count rows, coefficient vectors, their probabilities), not its code. Unchunked: its
  largest tensors hold (queries of an atom) × (count rows) × (coefficient vectors) ×
  (2·atoms + 1) values, about 0.26 GB each at P = 576 and 0.8 GB at P = 1024, and autograd
  keeps several of them.
- [`AutogradLaplace`][]: ``population-laplace`` whose per-cluster t-integral is a torch
  expression differentiated by autograd (the engine's reverse pass is written out).
- [`autograd_batch_loss`][]: the batch loss of the Monte Carlo and empirical engines.
"""

from __future__ import annotations

import math

import numpy as np

from theorylab.core.backend import get_backend

from ..data import AreaStructure, Batch
from ..engines import ExactEngine, ExchangeableSum, LaplaceEngine, Params
from ..engines._laplace import CHUNK_ELEMENTS
from ..model import BatchEval, norm_factor

__all__ = ["AutogradExactLoss", "AutogradLaplace", "autograd_batch_loss"]


class AutogradExactLoss:
    """The population loss of an [`ExactEngine`][theorylab.huang2024.engines.ExactEngine]'s
    problem as a plain torch expression, gradients by autograd (see the module)."""

    def __init__(self, engine: ExactEngine, device: str = "cpu") -> None:
        import torch

        self.torch, self.device, self.engine = torch, device, engine
        xp = get_backend("torch", device=device)
        self.tables = ExchangeableSum(engine, xp).groups  # the enumeration, as tensors
        P = engine.structure.P
        self.avg = []  # per group: (queries, atoms, P) averaging of Υ[p, ·] over each atom
        for g in self.tables:
            A = np.zeros((len(g["ps"]), len(g["c"]), P))
            for i, p in enumerate(g["ps"]):
                for a, mem in enumerate(engine.plans[p][2]):
                    A[i, a, mem] = 1.0 / len(mem)
            self.avg.append(torch.as_tensor(A, dtype=torch.float64, device=device))

    def loss(self, Phi, Ups):
        """The loss at torch tensors Φ (P, F), Υ (P, P) (differentiable)."""
        torch = self.torch
        total = torch.zeros((), dtype=torch.float64, device=self.device)
        incl = self.engine.mask_keys
        for g, A in zip(self.tables, self.avg):
            ps = g["ps_t"]
            ua = torch.einsum("qap,qp->qa", A, Ups[ps])  # Υ on each atom (its mean)
            u = g["zg"][None] * Phi[ps[:, None], g["cols"][None, :]][:, None, :] + ua[:, None]
            q, Cz, nG = u.shape
            Cn = g["nU"].shape[0]
            shape = (q, Cn, Cz, nG)
            logits = torch.cat([u[:, None].expand(shape), ua[:, None, None].expand(shape),
                                Ups[ps, ps][:, None, None, None].expand(q, Cn, Cz, 1)], dim=3)
            counts = torch.cat([g["nU"].expand(Cn, Cz, nG), g["nM"].expand(Cn, Cz, nG),
                                torch.ones((Cn, Cz, 1), dtype=u.dtype, device=self.device)],
                               dim=2)
            if not incl:
                counts = torch.cat([counts[..., :nG], torch.zeros_like(counts[..., nG:])], 2)
            a = logits + torch.log(counts)[None]
            # no key in the softmax (masked keys out, all masked): the output is 0; such rows
            # get a finite stand-in for logZ (a logsumexp of only −inf has a NaN gradient)
            empty = (counts.sum(dim=2, keepdim=True) == 0)[None]
            logZ = torch.logsumexp(torch.where(empty, torch.zeros_like(a), a), dim=3,
                                   keepdim=True)
            attn = torch.exp(a[..., :nG] - logZ)
            out = g["zc"][None, None] * (attn @ g["onehot"])  # (q, Cn, Cz, Nk)
            target = torch.zeros_like(out)
            target[..., g["j"]] = g["zj"][None, None]
            lossc = 0.5 * torch.sum((out - target) ** 2, dim=3)
            total = total + torch.sum(g["wl"] * lossc)
        return total

    def loss_grad(self, params: Params) -> tuple[float, np.ndarray, np.ndarray]:
        """(loss, ∂L/∂Φ, ∂L/∂Υ) at ``params`` (numpy in and out)."""
        torch = self.torch
        Phi = torch.tensor(params.Phi, dtype=torch.float64, device=self.device,
                           requires_grad=True)
        Ups = torch.tensor(params.Ups, dtype=torch.float64, device=self.device,
                           requires_grad=True)
        loss = self.loss(Phi, Ups)
        loss.backward()
        return float(loss.detach()), Phi.grad.cpu().numpy(), Ups.grad.cpu().numpy()


def autograd_batch_loss(structure: AreaStructure, Phi: np.ndarray, Ups: np.ndarray,
                        batch: Batch, *, mask_keys: bool = True, loss_norm: str = "P",
                        need_grad: bool = True, device: str = "cpu") -> BatchEval:
    """The baseline of the batch loss: the forward pass of
    [`mae_loss_grad`][theorylab.huang2024.model.mae_loss_grad] as a plain torch expression
    (``device`` cpu or cuda, float64), gradients by ``loss.backward()``; inputs and outputs are
    numpy arrays."""
    import torch

    dt = torch.float64
    B, P = batch.mask.shape
    Phi_t = torch.tensor(Phi, dtype=dt, device=device, requires_grad=need_grad)
    Ups_t = torch.tensor(Ups, dtype=dt, device=device, requires_grad=need_grad)
    lab_np = structure.labels[batch.cluster]
    lab = torch.as_tensor(lab_np, device=device)
    feat = torch.as_tensor(structure.offset[batch.cluster][:, None] + lab_np, device=device)
    mask = torch.as_tensor(batch.mask, device=device)
    unm = ~mask
    z = torch.as_tensor(batch.z, dtype=dt, device=device)
    zfull = torch.gather(z, 1, lab)  # (B, P): z of each patch's area
    zq = zfull * unm
    phik = Phi_t[:, feat].permute(1, 0, 2)  # (B, P_query, P_key)
    logits = Ups_t[None] + zq[:, None, :] * phik
    allowed = torch.ones_like(mask) if mask_keys else unm
    logits = torch.where(allowed[:, None, :], logits, torch.tensor(-math.inf, dtype=dt,
                                                                    device=device))
    mx = torch.amax(logits, dim=2, keepdim=True).detach()
    mx = torch.where(torch.isfinite(mx), mx, torch.zeros_like(mx))
    e = torch.exp(logits - mx)
    Z = e.sum(dim=2, keepdim=True)
    attn = e / torch.where(Z > 0, Z, torch.ones_like(Z))
    onehot = torch.nn.functional.one_hot(lab, batch.z.shape[1]).to(dt)  # (B, P, N)
    s = torch.einsum("bpq,bqm->bpm", attn * unm[:, None, :], onehot)
    resid = z[:, None, :] * s - zfull[:, :, None] * onehot
    lq = 0.5 * torch.sum(resid * resid, dim=2)
    nf = torch.as_tensor(norm_factor(loss_norm, batch.mask), dtype=dt, device=device)
    per_sample = nf * torch.sum(lq * mask, dim=1)
    loss = torch.sum(torch.as_tensor(batch.weight, dtype=dt, device=device) * per_sample)
    gPhi = gUps = None
    if need_grad:
        loss.backward()
        gPhi, gUps = Phi_t.grad.cpu().numpy(), Ups_t.grad.cpu().numpy()

    def np_(x):
        return x.detach().cpu().numpy()

    return BatchEval(float(loss.detach()), np_(per_sample), gPhi, gUps,
                     np_(torch.sum(s * onehot, dim=2)), np_(s[:, :, 0]),
                     np_(torch.sum(attn * mask[:, None, :], dim=2)))


class AutogradLaplace(LaplaceEngine):
    """``population-laplace`` with its per-cluster sum as plain torch on the engine's device
    (``train.backend = "torch"``), gradients by autograd; everything else is the engine's."""

    def _cluster(self, k, phi_np, ua_np, upp_np, reps, mult, need_grad):
        """The engine's per-cluster sum as plain torch, gradients by ``backward()``."""
        import torch

        s = self.structure
        nT, N = phi_np.shape
        incl = self.mask_keys
        dt = torch.float64
        dev = self.xp.device
        phi = torch.tensor(phi_np, dtype=dt, device=dev, requires_grad=need_grad)
        ua = torch.tensor(ua_np, dtype=dt, device=dev, requires_grad=need_grad)
        upp = torch.tensor(upp_np, dtype=dt, device=dev, requires_grad=need_grad)
        z = torch.tensor(self.nodes, dtype=dt, device=dev)
        logpz = torch.log(torch.tensor(self.zprobs, dtype=dt, device=dev))
        counts, area, own, M, ys = self.t_grid(k, phi_np, ua_np, upp_np, reps)
        Mt = torch.tensor(M, dtype=dt, device=dev)
        weight = torch.tensor(mult * self.gamma * self.nf / s.K, dtype=dt, device=dev)
        ez2 = float(np.dot(self.zprobs, self.nodes ** 2))
        total = float(np.sum(mult * self.gamma * self.nf / s.K)) * 0.5 * ez2
        masses = np.zeros((nT, N))
        lg1 = math.log1p(-self.gamma) if self.gamma < 1 else -math.inf  # ln P[unmasked]
        lg0 = math.log(self.gamma)  # ln P[masked]
        c = torch.tensor(counts, dtype=dt, device=dev)[:, None, :, None]  # (nT, 1, n_atoms, 1)
        aidx = torch.tensor(area, dtype=torch.long, device=dev)
        onehot_area = torch.tensor((area[:, None] == np.arange(N)[None, :]).astype(np.float64),
                                   dtype=dt, device=dev)  # (n_atoms, N)
        own_t = torch.tensor(own, dtype=torch.long, device=dev)
        t_chunk = max(1, CHUNK_ELEMENTS // (nT * self.n_atoms * len(self.nodes)))
        for start in range(0, len(ys), t_chunk):
            y = torch.tensor(ys[start:start + t_chunk], dtype=dt, device=dev)
            t = torch.exp(y)  # (nt,)
            nt = t.shape[0]
            tt = t[None, :, None, None]
            # logits of unmasked (u) and masked (w) keys of every atom, shifted by M
            u = (z[None, None, :] * phi[:, aidx][:, :, None] + ua[:, :, None]
                 - Mt[:, None, None])[:, None]  # (nT, 1, n_atoms, nz)
            w = (ua - Mt[:, None])[:, None, :, None]
            eu = torch.exp(u)
            # Z_a = n e^u + (c − n) e^w = c e^w + n (e^u − e^w) with n ~ Bin(c, 1 − γ): the
            # binomial generating function in closed form; under exp(−tZ_a) the count is
            # binomial again with the tilted probability q
            d = eu - torch.exp(w) if incl else eu
            lx = lg1 - tt * d  # ln((1 − γ) e^{−t d})
            le0 = c * torch.logaddexp(torch.full_like(lx, lg0), lx)
            if incl:
                le0 = le0 - tt * c * torch.exp(w)
            q = torch.sigmoid(lx - lg0)
            r1 = c * q * eu  # E_tilted[N_a]
            r2 = (c * q * (1 - q) + (c * q) ** 2) * eu * eu  # E_tilted[N_a²]
            logE0 = torch.einsum("atgz,gm->atmz", le0, onehot_area)
            S1 = torch.einsum("atgz,gm->atmz", r1, onehot_area)
            S1sq = torch.einsum("atgz,gm->atmz", r1 * r1, onehot_area)
            S2 = torch.einsum("atgz,gm->atmz", r2, onehot_area)
            R2 = S1 * S1 - S1sq + S2
            lw = logpz[None, None, None, :] + logE0
            logA0 = torch.logsumexp(lw, dim=-1)  # (nT, nt, N)
            sz = torch.exp(lw - logA0[..., None])
            a1 = torch.sum(sz * z ** 2 * S1, dim=-1)
            a2 = torch.sum(sz * z ** 2 * R2, dim=-1)
            b1 = torch.sum(sz * S1, dim=-1)
            Zs = torch.exp(upp - Mt) if incl else torch.zeros_like(upp)
            base = torch.exp(logA0.sum(dim=-1) - t[None, :] * Zs[:, None])  # (nT, nt)
            wt = self.h * t[None, :] * base  # dt = t dy
            I1 = torch.sum(wt * torch.gather(a1, 2, own_t[:, None, None].expand(nT, nt, 1))[..., 0],
                           dim=1)
            I2 = torch.sum(wt[..., None] * t[None, :, None] * a2, dim=1)  # (nT, N)
            Bm = torch.sum(wt[..., None] * b1, dim=1)  # (nT, N)
            chunk = torch.sum(weight * (-I1 + 0.5 * I2.sum(dim=1)))
            total += float(chunk.detach())
            masses += Bm.detach().cpu().numpy()
            if need_grad and chunk.requires_grad:
                chunk.backward()
        attn = self.type_masses(masses, own)
        grads = None
        if need_grad:
            def g(x, shape):
                return x.grad.cpu().numpy().copy() if x.grad is not None else np.zeros(shape)

            grads = (g(phi, (nT, N)), g(ua, (nT, self.n_atoms)), g(upp, (nT,)))
        return total, attn, grads
