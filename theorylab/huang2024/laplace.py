"""``population-laplace``: the exact population MAE loss at any P, through 1/Z = ∫ e^{−tZ} dt.

Huang et al. (2025)'s reconstruction loss (RECONSTRUCTED; module [`model`][theorylab.huang2024
.model]) of a masked query p is, with N_m the (unnormalised) attention on the unmasked keys of
area m, Z the softmax denominator and s_m = N_m / Z,

    ½‖F_p − x_p‖² = ½ z_j² − z_j² N_j / Z + ½ Σ_m z_m² N_m² / Z².

Under Bernoulli masks and i.i.d. area coefficients, N_m and Z = Z_self + Σ_m Z_m are sums of
independent per-area parts, so with 1/Z = ∫₀^∞ e^{−tZ} dt and 1/Z² = ∫₀^∞ t e^{−tZ} dt every
expectation is a one-dimensional integral of products of per-area expectations; each of those
is an expectation over the number n of unmasked keys per atom (binomial; the exchangeability of
``population-exact``), in closed form because the atom's part of Z, Z_a = c e^w + n (e^u − e^w),
is linear in n (the binomial generating function), and a finite sum over the nodes of the
coefficient law (u, w: the logits of an unmasked and a masked key of the atom, c its number of
keys). The t-integral is evaluated by the trapezoid rule in y = ln t on a range that covers
the integrand down to ~1e-18 (step
``train.laplace_step``); the integrand is analytic in a strip around the real y-axis, so the
error falls like exp(−c/h) (tested against the enumeration to 1e-10). Gradients are torch
autograd of this sum (float64), on the CPU with ``train.backend = "numpy"`` (the engine's
tensors are torch's either way) and on ``train.device`` (cpu, cuda) with ``"torch"``; only the
query types' rows and their gradients cross to the host. Queries with identical rows (Φ, Υ and
atom) are evaluated once, so a symmetric state (e.g. Q⁰ = 0 with K = 1) costs one evaluation
per area; the cost per query type is (t-nodes) × (atoms) × (coefficient nodes), independent of
the area sizes.

Applies when: masks are Bernoulli (fixed-size masks couple the areas), ``loss_norm`` is ``"P"``
or ``"none"`` (1/|ℳ| couples them too), and Υ[p, ·] is constant on every atom minus {p} (as
for ``population-exact``). Exact for a finite coefficient law (``z_law = "values"``); for a
uniform law, the coefficient expectation is a Gauss–Legendre quadrature of ``train.z_nodes``
nodes (the integrand is analytic in z, so the error falls geometrically with the nodes).
"""

from __future__ import annotations

import math

import numpy as np

from theorylab.core.threads import capped_threads

from .config import ExperimentConfig
from .data import AreaStructure, zlaw_nodes
from .engine_base import Evaluation, MAEEngine, Params

__all__ = ["LaplaceEngine"]

#: The integrand is covered down to this fraction at both ends of the t-range.
_TAIL = 1e-18
#: Elements of the largest per-chunk tensor (bounds memory: ~10 such tensors are kept for
#: autograd, 2e6 float64 elements = 16 MB each).
_CHUNK_ELEMENTS = 2_000_000


class LaplaceEngine(MAEEngine):
    """Exact population loss and gradient at any P (see the module docstring)."""

    name = "population-laplace"

    def __init__(self, cfg: ExperimentConfig, structure: AreaStructure | None = None) -> None:
        super().__init__(cfg, structure)
        if cfg.model.mask != "bernoulli":
            raise ValueError("model.mask: population-laplace needs Bernoulli masks (a "
                             "fixed-size mask couples the areas)")
        if cfg.model.loss_norm == "mask":
            raise ValueError("model.loss_norm: population-laplace supports 'P' and 'none' "
                             "(1/|ℳ| couples the areas)")
        d = cfg.data
        self.nodes, self.zprobs = zlaw_nodes(d.z_law, d.L, d.U, d.z_values, d.z_probs,
                                             cfg.train.z_nodes)
        self.atom, self.atom_area = self.structure.atoms()
        self.n_atoms = self.atom_area.shape[1]
        self.atom_size = np.bincount(self.atom, minlength=self.n_atoms)
        self.members = [np.flatnonzero(self.atom == a) for a in range(self.n_atoms)]
        self.h = cfg.train.laplace_step
        self.gamma = cfg.model.gamma
        self.nf = 1.0 / self.structure.P if cfg.model.loss_norm == "P" else 1.0
        self.device = cfg.train.device if cfg.train.backend == "torch" else "cpu"

    def atom_values(self, Ups: np.ndarray) -> np.ndarray:
        """Υ[p, atom a] (P, n_atoms), 0 where the atom has no key other than p; raises
        ``ValueError`` when Υ[p, ·] is not constant on an atom minus {p}."""
        P = self.structure.P
        out = np.zeros((P, self.n_atoms))
        for a, mem in enumerate(self.members):
            sub = Ups[:, mem]
            own = self.atom[:, None] == a  # rows p inside this atom
            valid = ~(own & (np.arange(P)[:, None] == mem[None, :]))
            hi = np.where(valid, sub, -np.inf).max(axis=1)
            lo = np.where(valid, sub, np.inf).min(axis=1)
            ok = np.isfinite(hi)
            spread = np.where(ok, hi - lo, 0.0)
            if np.any(spread > 1e-12 * (1 + np.abs(np.where(ok, hi, 0.0)))):
                p = int(np.argmax(spread))
                raise ValueError(f"population-laplace: Υ[{p}, ·] is not constant on an atom "
                                 f"(spread {spread[p]:.3g}); the exchangeable sum does not apply")
            out[:, a] = np.where(ok, hi, 0.0)
        return out

    def evaluate(self, params: Params, step: int, *, need_grad: bool, record: bool):
        import torch

        threads = torch.get_num_threads()
        if self.cfg.train.threads > 0:
            torch.set_num_threads(capped_threads(self.cfg.train.threads))
        try:
            return self._evaluate(params, need_grad, torch)
        finally:
            torch.set_num_threads(threads)

    def _evaluate(self, params: Params, need_grad: bool, torch):
        s = self.structure
        P, K = s.P, s.K
        Ua = self.atom_values(params.Ups)
        gPhi, gUps = np.zeros_like(params.Phi), np.zeros_like(params.Ups)
        loss = 0.0
        sums = {f"{a}_{t}": 0.0 for a in ("own", "glob", "masked") for t in ("gq", "lq")}
        wsum = {"gq": 0.0, "lq": 0.0}
        for k in range(K):
            off, N = int(s.offset[k]), int(s.n_areas[k])
            types: dict[bytes, list[int]] = {}
            for p in range(P):
                key = (np.int64(self.atom[p]).tobytes() + params.Phi[p, off:off + N].tobytes()
                       + Ua[p].tobytes() + params.Ups[p, p].tobytes())
                types.setdefault(key, []).append(p)
            groups = list(types.values())
            reps = np.array([g[0] for g in groups])
            mult = np.array([len(g) for g in groups], dtype=np.float64)
            res = self._cluster(k, params.Phi[reps, off:off + N], Ua[reps],
                                params.Ups[reps, reps], reps, mult, need_grad, torch)
            lk, attn, grads = res
            loss += lk
            type_of = np.empty(P, dtype=np.int64)
            for gi, g in enumerate(groups):
                type_of[g] = gi
            is_glob = s.labels[k] == 0
            attn = np.asarray(attn)[type_of]  # (P, 3): own, glob, masked per query
            for tag, sel in (("gq", is_glob), ("lq", ~is_glob)):
                wsum[tag] += float(sel.sum())
                for i, name in enumerate(("own", "glob", "masked")):
                    sums[f"{name}_{tag}"] += float(attn[sel, i].sum())
            if grads is not None:
                gphi, gua, gupp = grads
                per = 1.0 / mult[type_of]
                gPhi[:, off:off + N] += gphi[type_of] * per[:, None]
                cnt = self.atom_size[None, :] - (self.atom[:, None] == np.arange(self.n_atoms))
                g_atom = np.where(cnt > 0, gua[type_of] * per[:, None] / np.maximum(cnt, 1), 0.0)
                gk = g_atom[:, self.atom]  # every key q ≠ p of atom a gets its share
                gk[np.arange(P), np.arange(P)] = gupp[type_of] * per  # the self key
                gUps += gk
        attn = {f"attn_{key}": (v / wsum[key[-2:]] if wsum[key[-2:]] else math.nan)
                for key, v in sums.items()}
        grads = {"Phi": gPhi, "Ups": gUps} if need_grad else None
        return Evaluation(loss, loss_star=self.lstar, grads=grads, attn=attn)

    def _cluster(self, k, phi_np, ua_np, upp_np, reps, mult, need_grad, torch):
        """Loss Σ_types mult·(weighted loss), per-type attention masses and gradients for the
        query types ``reps`` of cluster k."""
        s = self.structure
        nT, N = phi_np.shape
        incl = self.mask_keys
        dt = torch.float64
        dev = self.device
        phi = torch.tensor(phi_np, dtype=dt, device=dev, requires_grad=need_grad)
        ua = torch.tensor(ua_np, dtype=dt, device=dev, requires_grad=need_grad)
        upp = torch.tensor(upp_np, dtype=dt, device=dev, requires_grad=need_grad)
        z = torch.tensor(self.nodes, dtype=dt, device=dev)
        logpz = torch.log(torch.tensor(self.zprobs, dtype=dt, device=dev))
        counts = self.atom_size[None, :] - (self.atom[reps][:, None] == np.arange(self.n_atoms))
        area = self.atom_area[k]  # (n_atoms,)
        own = s.labels[k, reps]  # (nT,)
        # the common shift M and the smallest single-key term (both per type; constants)
        u_all = self.nodes[None, None, :] * phi_np[:, area, None] + ua_np[:, :, None]
        present = counts > 0
        cand_hi = [np.where(present[:, :, None], u_all, -np.inf).max(axis=(1, 2))]
        cand_lo = [np.where(present[:, :, None], u_all, np.inf).min(axis=(1, 2))]
        if incl:
            cand_hi += [np.where(present, ua_np, -np.inf).max(axis=1), upp_np]
            cand_lo += [np.where(present, ua_np, np.inf).min(axis=1), upp_np]
        M = np.max(np.stack(cand_hi), axis=0)
        lo = np.min(np.stack(cand_lo), axis=0) - M  # log of the smallest single-key term
        P = s.P
        # below t_lo the integrands are ≤ t·E[z²N] ≤ t·P·U²: the tail [0, t_lo] is ≤ _TAIL
        y_lo = math.log(_TAIL / ((P + 1) * max(1.0, self.cfg.data.U ** 2)))
        y_hi = math.log(-math.log(_TAIL) + 4.0) - float(lo.min()) + 1.0
        ys = np.arange(y_lo, y_hi + self.h, self.h)
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
        t_chunk = max(1, _CHUNK_ELEMENTS // (nT * self.n_atoms * len(self.nodes)))
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
        attn = []
        for i in range(nT):
            j = own[i]
            masked = 1.0 - masses[i].sum() if incl else 0.0
            attn.append((masses[i, j], masses[i, 0], masked))
        grads = None
        if need_grad:
            def g(x, shape):
                return x.grad.cpu().numpy().copy() if x.grad is not None else np.zeros(shape)

            grads = (g(phi, (nT, N)), g(ua, (nT, self.n_atoms)), g(upp, (nT,)))
        return total, attn, grads
