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
error falls like exp(−c/h) (tested against the enumeration to 1e-10). The sum is written once
against the array backend ([`theorylab.core.backend`][]: numpy, torch on a CPU or CUDA), with
its gradient by a reverse pass written out (the chain rule through every step of the sum, in
reverse order; tested against torch autograd of the same sum); only the query types' rows and
their gradients cross to the host. Queries with identical rows (Φ, Υ and
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
from types import SimpleNamespace

import numpy as np

from ..observables import attention_means
from ._base import Evaluation, MAEEngine, Params

__all__ = ["LaplaceEngine"]

#: The integrand is covered down to this fraction at both ends of the t-range.
_TAIL = 1e-18
#: The most nodes of the trapezoid rule in y = ln t (a run's logits span tens of units: some
#: 10^4 nodes at the default step); beyond it the parameters have overflowed, and the
#: evaluation raises ``OverflowError`` (the trainer's divergence stop).
_MAX_NODES = 1e7
#: Elements of the largest per-chunk array (bounds memory: ~25 such arrays are alive in the
#: reverse pass, 2e6 float64 elements = 16 MB each).
CHUNK_ELEMENTS = 2_000_000


class LaplaceEngine(MAEEngine):
    """Exact population loss and gradient at any P (see the module docstring)."""

    name = "population-laplace"

    def setup(self) -> None:
        cfg = self.cfg
        if cfg.model.mask != "bernoulli":
            raise ValueError("model.mask: population-laplace needs Bernoulli masks (a "
                             "fixed-size mask couples the areas)")
        if cfg.model.loss_norm == "mask":
            raise ValueError("model.loss_norm: population-laplace supports 'P' and 'none' "
                             "(1/|ℳ| couples the areas)")
        self.nodes, self.zprobs = self.z_nodes()
        self.atom, self.atom_area = self.structure.atoms()
        self.n_atoms = self.atom_area.shape[1]
        self.atom_size = np.bincount(self.atom, minlength=self.n_atoms)
        self.members = [np.flatnonzero(self.atom == a) for a in range(self.n_atoms)]
        self.h = cfg.train.laplace_step
        self.gamma = cfg.model.gamma
        self.nf = 1.0 / self.structure.P if cfg.model.loss_norm == "P" else 1.0

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
        with self.threads():
            return self._evaluate(params, need_grad)

    def _evaluate(self, params: Params, need_grad: bool):
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
                                params.Ups[reps, reps], reps, mult, need_grad)
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
        grads = {"Phi": gPhi, "Ups": gUps} if need_grad else None
        return Evaluation(loss, loss_star=self.lstar, grads=grads,
                          attn=attention_means(sums, wsum))

    def t_grid(self, k, phi_np, ua_np, upp_np, reps):
        """What the t-integral of cluster k's query types ``reps`` needs besides the logits:
        the other keys per atom (nT, atoms), the area of each atom, each type's own area, the
        common shift M of the logits (per type) and the nodes y = ln t of the trapezoid rule
        (covering the integrand down to ``_TAIL`` at both ends)."""
        s = self.structure
        incl = self.mask_keys
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
        nodes = (y_hi - y_lo) / self.h
        if not nodes <= _MAX_NODES:  # logits spread beyond any float: the parameters blew up
            raise OverflowError(f"the Laplace grid would need {nodes:.3g} nodes (the logits "
                                f"span {-float(lo.min()):.3g})")
        ys = np.arange(y_lo, y_hi + self.h, self.h)
        return counts, area, own, M, ys

    def type_masses(self, masses: np.ndarray, own: np.ndarray) -> list[tuple]:
        """(own, global, masked) attention of each query type from its integrated masses on the
        unmasked keys of every area (nT, N): the masked keys hold the rest when they are in
        the softmax."""
        return [(masses[i, own[i]], masses[i, 0],
                 1.0 - masses[i].sum() if self.mask_keys else 0.0) for i in range(len(own))]

    def _cluster(self, k, phi_np, ua_np, upp_np, reps, mult, need_grad):
        """Loss Σ_types mult·(weighted loss), per-type attention masses and gradients for the
        query types ``reps`` of cluster k."""
        xp, s = self.xp, self.structure
        nT, N = phi_np.shape
        incl = self.mask_keys
        counts, area, own, M, ys = self.t_grid(k, phi_np, ua_np, upp_np, reps)
        weight_np = mult * self.gamma * self.nf / s.K
        ez2 = float(np.dot(self.zprobs, self.nodes ** 2))
        total = float(np.sum(weight_np)) * 0.5 * ez2
        const = _Constants(
            z=xp.asarray(self.nodes), logpz=xp.asarray(np.log(self.zprobs)),
            c=xp.asarray(counts)[:, None, :, None],  # (nT, 1, n_atoms, 1)
            onehot=xp.asarray(area[:, None] == np.arange(N)[None, :]),  # (n_atoms, N)
            aidx=xp.asindex(area), own=xp.asindex(own), weight=xp.asarray(weight_np),
            lg1=math.log1p(-self.gamma) if self.gamma < 1 else -math.inf,  # ln P[unmasked]
            lg0=math.log(self.gamma),  # ln P[masked]
            incl=incl, h=self.h)
        # the logits of unmasked (u) and masked (w) keys of every atom, shifted by M, and the
        # self key's term: the same for every t
        Mt = xp.asarray(M)
        phi, ua, upp = xp.asarray(phi_np), xp.asarray(ua_np), xp.asarray(upp_np)
        u = (const.z[None, None, :] * phi[:, const.aidx][:, :, None] + ua[:, :, None]
             - Mt[:, None, None])[:, None]  # (nT, 1, n_atoms, nz)
        w = (ua - Mt[:, None])[:, None, :, None]  # (nT, 1, n_atoms, 1)
        Zs = xp.exp(upp - Mt) if incl else xp.zeros((nT,))
        masses = np.zeros((nT, N))
        gu = xp.zeros(tuple(u.shape)) if need_grad else None
        gw = xp.zeros(tuple(w.shape)) if need_grad else None
        gZs = xp.zeros((nT,)) if need_grad else None
        t_chunk = max(1, CHUNK_ELEMENTS // (nT * self.n_atoms * len(self.nodes)))
        for start in range(0, len(ys), t_chunk):
            t = xp.exp(xp.asarray(ys[start:start + t_chunk]))  # (nt,)
            chunk, Bm, back = _laplace_chunk(xp, const, t, u, w, Zs, need_grad)
            total += chunk
            masses += xp.to_numpy(Bm)
            if need_grad:
                gu, gw, gZs = gu + back[0], gw + back[1], gZs + back[2]
        attn = self.type_masses(masses, own)
        grads = None
        if need_grad:
            # u = z·Φ[p, area(a)] + Υ_a − M, w = Υ_a − M, Zs = exp(Υ[p, p] − M)
            gu = gu[:, 0]  # (nT, n_atoms, nz)
            gphi = xp.einsum("tgz,z,gm->tm", gu, const.z, const.onehot)
            gua = xp.sum(gu, axis=2) + gw[:, 0, :, 0]
            gupp = gZs * Zs if incl else xp.zeros((nT,))
            grads = (xp.to_numpy(gphi), xp.to_numpy(gua), xp.to_numpy(gupp))
        return total, attn, grads


#: What [`_laplace_chunk`][] needs of a cluster's query types besides t and the logits.
_Constants = SimpleNamespace


def _laplace_chunk(xp, k: _Constants, t, u, w, Zs, need_grad: bool):
    """One chunk of t-nodes of the integral: (its part of the loss as a float, the attention
    integrals Bm (nT, N), and with ``need_grad`` the gradients of that part in (u, w, Zs)).

    Shapes: u (nT, 1, atoms, nz), w (nT, 1, atoms, 1), Zs (nT,), t (nt,). The reverse pass
    follows the forward pass line by line, backwards."""
    tt = t[None, :, None, None]
    eu, ew = xp.exp(u), xp.exp(w)
    # Z_a = n e^u + (c − n) e^w = c e^w + n (e^u − e^w) with n ~ Bin(c, 1 − γ): the binomial
    # generating function in closed form; under exp(−tZ_a) the count is binomial again with
    # the tilted probability q
    d = eu - ew if k.incl else eu
    lx = k.lg1 - tt * d  # ln((1 − γ) e^{−t d})
    q = xp.sigmoid(lx - k.lg0)
    le0 = k.c * xp.logaddexp(k.lg0, lx)
    if k.incl:
        le0 = le0 - tt * k.c * ew
    cq = k.c * q
    r1 = cq * eu  # E_tilted[N_a]
    v2 = cq * (1 - q) + cq * cq
    r2 = v2 * eu * eu  # E_tilted[N_a²]
    logE0 = xp.einsum("atgz,gm->atmz", le0, k.onehot)
    S1 = xp.einsum("atgz,gm->atmz", r1, k.onehot)
    S1sq = xp.einsum("atgz,gm->atmz", r1 * r1, k.onehot)
    S2 = xp.einsum("atgz,gm->atmz", r2, k.onehot)
    R2 = S1 * S1 - S1sq + S2
    lw = k.logpz[None, None, None, :] + logE0
    logA0 = xp.logsumexp(lw, -1)  # (nT, nt, N)
    sz = xp.exp(lw - logA0[..., None])
    z2 = k.z * k.z
    a1 = xp.sum(sz * z2 * S1, axis=-1)
    a2 = xp.sum(sz * z2 * R2, axis=-1)
    b1 = xp.sum(sz * S1, axis=-1)
    base = xp.exp(xp.sum(logA0, axis=-1) - t[None, :] * Zs[:, None])  # (nT, nt)
    wt = k.h * t[None, :] * base  # dt = t dy
    nT = wt.shape[0]
    a1_own = a1[xp.arange(nT), :, k.own]  # (nT, nt): a1 at each type's own area
    I1 = xp.sum(wt * a1_own, axis=1)
    I2 = xp.sum(wt[..., None] * t[None, :, None] * a2, axis=1)  # (nT, N)
    Bm = xp.sum(wt[..., None] * b1, axis=1)  # (nT, N)
    chunk = xp.item(xp.sum(k.weight * (-I1 + 0.5 * xp.sum(I2, axis=1))))
    if not need_grad:
        return chunk, Bm, None
    # -- reverse pass: g_x = ∂(chunk)/∂x -----------------------------------------------------
    W = k.weight[:, None]  # (nT, 1)
    g_wt = W * (-a1_own + 0.5 * t[None, :] * xp.sum(a2, axis=-1))  # (nT, nt)
    g_a1 = xp.zeros(tuple(a1.shape))
    g_a1[xp.arange(nT), :, k.own] = -(W * wt)
    g_a2 = (0.5 * W * wt * t[None, :])[..., None]  # (nT, nt, 1), the same for every m
    g_base = g_wt * k.h * t[None, :]
    g_logA0_sum = g_base * base  # (nT, nt): ∂/∂(Σ_m logA0)
    g_Zs = -xp.sum(g_logA0_sum * t[None, :], axis=1)  # (nT,)
    # a1, a2 through sz, S1, R2; sz = softmax_z(lw), logA0 = logsumexp_z(lw)
    g_sz = z2 * (g_a1[..., None] * S1 + g_a2[..., None] * R2)
    g_S1 = g_a1[..., None] * sz * z2
    g_R2 = g_a2[..., None] * sz * z2
    g_lw = sz * (g_sz - xp.sum(sz * g_sz, axis=-1, keepdims=True) + g_logA0_sum[..., None, None])
    g_S1 = g_S1 + 2 * S1 * g_R2
    g_S1sq, g_S2 = -g_R2, g_R2
    # the per-area sums back to the atoms (einsum with the one-hot area of each atom)
    g_le0 = xp.einsum("atmz,gm->atgz", g_lw, k.onehot)
    g_r1 = xp.einsum("atmz,gm->atgz", g_S1, k.onehot) \
        + 2 * r1 * xp.einsum("atmz,gm->atgz", g_S1sq, k.onehot)
    g_r2 = xp.einsum("atmz,gm->atgz", g_S2, k.onehot)
    # r1 = c q e^u, r2 = (c q (1 − q) + c² q²) e^{2u}
    g_q = g_r1 * k.c * eu + g_r2 * eu * eu * k.c * (1 - 2 * q + 2 * cq)
    g_eu = g_r1 * cq + g_r2 * 2 * v2 * eu
    # le0 = c logaddexp(lg0, lx) [− t c e^w]; q = σ(lx − lg0), and ∂ logaddexp/∂lx = q
    g_lx = g_le0 * k.c * q + g_q * q * (1 - q)
    g_d = -tt * g_lx
    g_eu = g_eu + g_d
    g_u = xp.sum(g_eu * eu, axis=1, keepdims=True)  # over t: u does not depend on it
    if k.incl:
        g_ew = -g_d - g_le0 * tt * k.c
        g_w = xp.sum(g_ew * ew, axis=(1, 3), keepdims=True)
    else:
        g_w = xp.zeros(tuple(w.shape))
    return chunk, Bm, (g_u, g_w, g_Zs)
