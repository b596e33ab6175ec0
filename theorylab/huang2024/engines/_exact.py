"""``population-exact``: the population MAE loss of Huang et al. (2025) and its gradient summed
exactly per masked query, reduced by exchangeability.

For a query p, the keys q ≠ p of one *atom* (a cell of the common refinement of the clusters'
partitions; for K = 1 an area) are exchangeable under the data and mask laws; when Υ[p, ·] is
constant on each atom minus {p} (true at Q⁰ = 0 and kept exactly by GD, since then every key of
the atom gets the same gradient), the loss depends on the mask only through the number of
unmasked keys per atom, which is binomial (Bernoulli masks) or multivariate hypergeometric
(fixed-size masks). Φ is arbitrary. The sum runs over Π_a (c_a + 1) counts × |z-law|^{N_k}
coefficient vectors per (query, cluster); states that break the symmetry are refused.

The sum is written once against the array backend ([`theorylab.core.backend`][]; numpy, torch
on a CPU or CUDA), with the hand-derived gradient (softmax backward, no autograd), vectorised
over the queries of one atom: queries p of the same atom share the counts table (the other keys
of their atom number c − 1 for each of them), the coefficient vectors, the area of every key
atom and the target area, so one set of arrays (queries, count rows, coefficient vectors,
atoms) serves them all ([`ExchangeableSum`][]). Queries are taken in chunks of at most
[`chunk_elements`][] elements per working array (at least one query per chunk). Softmax
max-subtracted; the tables stay on the device for the whole run, and only Φ, Υ (in) and their
gradients (out) cross to the host.
"""

from __future__ import annotations

import math

import numpy as np

from theorylab.core.backend import Backend

from ..data import coefficient_vectors, index_grid, mask_count_probs
from ..observables import attention_means
from ._base import Evaluation, MAEEngine, Params

__all__ = ["ExactEngine", "ExchangeableSum", "chunk_elements", "query_groups"]


def chunk_elements(device: str) -> int:
    """Elements of the largest working array (queries × count rows × coefficient vectors ×
    atoms) of one chunk: 2²⁰ on a CPU, 2²² on CUDA; about 25 such arrays are alive at once
    (2²² float64 elements = 32 MiB each)."""
    return 1 << (22 if device.startswith("cuda") else 20)


def query_groups(engine) -> list[tuple[int, np.ndarray]]:
    """(atom, queries p of that atom): the queries that share one plan."""
    atom = engine.atom
    return [(int(a), np.flatnonzero(atom == a)) for a in np.unique(atom)]


class ExactEngine(MAEEngine):
    """The population loss and gradient summed exactly per masked query, over the numbers of
    unmasked keys per atom and the coefficient vectors (see the module docstring for when the
    reduction applies)."""

    name = "population-exact"

    def setup(self) -> None:
        cfg = self.cfg
        s = self.structure
        self.nodes, self.zprobs = self.z_nodes()
        self.atom, self.atom_area = s.atoms()
        P = s.P
        self.pmask = cfg.model.gamma if cfg.model.mask == "bernoulli" else cfg.mask_size / P
        self.plans = []
        total = 0
        for p in range(P):
            others = np.delete(np.arange(P), p)
            G = np.unique(self.atom[others])  # the atoms that hold another key
            members = [others[self.atom[others] == a] for a in G]
            c = np.array([len(g) for g in members], dtype=np.int64)
            n = index_grid(c + 1)
            pn = mask_count_probs(cfg.model.mask, P, cfg.model.gamma, cfg.mask_size, c, n)
            keep = pn > 0
            n, pn = n[keep], pn[keep]
            self.plans.append((G, c, members, n, pn))
            total += len(n) * sum(len(self.nodes) ** int(N) for N in s.n_areas)
        if total > cfg.train.max_configs:
            raise ValueError(f"train.max_configs: the exact sum needs {total} configurations "
                             f"(> {cfg.train.max_configs}); use population-montecarlo")
        self.zconf = [coefficient_vectors(self.nodes, self.zprobs, int(N)) for N in s.n_areas]
        self._sum = None  # the tables of the sum on the backend, built on first use

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

    @property
    def exchangeable_sum(self) -> ExchangeableSum:
        """The tables of the sum on this engine's backend (built on first use)."""
        if self._sum is None:
            self._sum = ExchangeableSum(self, self.xp)
        return self._sum

    def evaluate(self, params: Params, step: int, *, need_grad: bool, record: bool):
        self.check_symmetric(params.Ups)
        with self.threads():
            loss, sums, counts, g = self.exchangeable_sum.evaluate(params.Phi, params.Ups,
                                                                   need_grad)
        grads = {"Phi": g[0], "Ups": g[1]} if need_grad else None
        return Evaluation(loss, loss_star=self.lstar, grads=grads,
                          attn=attention_means(sums, counts))


class ExchangeableSum:
    """The exact population loss, gradients and attention masses of ``engine`` (an
    [`ExactEngine`][]) on the backend ``xp``: its count and coefficient tables, grouped by
    (cluster, atom of the query), as backend arrays."""

    def __init__(self, engine: ExactEngine, xp: Backend) -> None:
        self.xp, self.engine = xp, engine
        s = engine.structure
        self.chunk = chunk_elements(xp.device)
        T, I = xp.asarray, xp.asindex  # noqa: E741
        self.groups = []  # one entry per (cluster, atom)
        for k in range(s.K):
            zc, pz = engine.zconf[k]
            off, Nk = int(s.offset[k]), int(s.n_areas[k])
            for _atom, ps in query_groups(engine):
                G, c, members, n, pn = engine.plans[ps[0]]
                for p in ps[1:]:  # every query of the atom has the same counts (a check)
                    if not np.array_equal(engine.plans[p][1], c):
                        raise AssertionError("population-exact: plans differ within an atom")
                area = engine.atom_area[k, G]
                j = int(s.labels[k, ps[0]])
                # a representative key of every atom, per query (not the query itself)
                rep = np.array([[m[0] for m in engine.plans[p][2]] for p in ps], dtype=np.int64)
                # the column of the key atom within G, per key q (the query's own column is
                # overwritten by the self gradient)
                pos = np.zeros(s.P, dtype=np.int64)
                inG = np.isin(engine.atom, G)
                pos[inG] = np.searchsorted(G, engine.atom[inG])
                nf = engine.count_norm(c, n)
                wcond = pn[:, None] * pz[None, :]
                wq = engine.pmask / s.K
                self.groups.append({
                    "k": k, "off": off, "Nk": Nk, "j": j, "glob": j == 0,
                    "ps": ps, "ps_t": I(ps), "rep": I(rep), "pos": I(pos),
                    "cols": I(off + area), "cols_k": I(off + np.arange(Nk)),
                    "c": T(c), "nU": T(n)[:, None, :], "nM": T(c - n)[:, None, :],
                    "zg": T(zc[:, area]), "zc": T(zc), "zj": T(zc[:, j]),
                    "onehot": T(area[:, None] == np.arange(Nk)[None, :]),
                    "area_t": I(area),
                    "wcond": T(wcond), "wl": T(wcond * (nf * wq)[:, None]),
                    "per_query": len(n) * len(zc) * len(G),
                })

    def evaluate(self, Phi: np.ndarray, Ups: np.ndarray, need_grad: bool):
        """(loss, attention sums {"own_gq": ..., ...}, the query counts per tag {"gq": n,
        "lq": n}, gradients (Φ, Υ) as numpy arrays or None)."""
        xp = self.xp
        Phi_t, Ups_t = xp.asarray(Phi), xp.asarray(Ups)
        gPhi = xp.zeros(tuple(Phi.shape)) if need_grad else None
        gUps = xp.zeros(tuple(Ups.shape)) if need_grad else None
        loss = 0.0
        sums = {f"{a}_{t}": 0.0 for a in ("own", "glob", "masked") for t in ("gq", "lq")}
        counts = {"gq": 0.0, "lq": 0.0}
        for g in self.groups:
            tag = "gq" if g["glob"] else "lq"
            nq = len(g["ps"])
            counts[tag] += nq
            step = max(1, self.chunk // max(1, g["per_query"]))
            for lo in range(0, nq, step):
                sl = slice(lo, min(nq, lo + step))
                lq, attn, grads = self._chunk(g, sl, Phi_t, Ups_t, need_grad)
                loss = loss + lq
                for name, v in zip(("own", "glob", "masked"), attn):
                    sums[f"{name}_{tag}"] = sums[f"{name}_{tag}"] + v
                if grads is not None:
                    gphi, rows = grads
                    ps = g["ps_t"][sl]
                    gPhi[ps[:, None], g["cols_k"][None, :]] += gphi
                    gUps[ps] += rows
        out_sums = {key: xp.item(v) if not isinstance(v, float) else v
                    for key, v in sums.items()}
        loss = xp.item(loss) if not isinstance(loss, float) else loss
        grads = (xp.to_numpy(gPhi), xp.to_numpy(gUps)) if need_grad else None
        return loss, out_sums, counts, grads

    def _chunk(self, g, sl, Phi_t, Ups_t, need_grad):
        """Loss, summed attention masses and gradients of the queries ``g["ps"][sl]``."""
        xp = self.xp
        ps = g["ps_t"][sl]
        nq = ps.shape[0]
        ua = xp.take_along_axis(Ups_t[ps], g["rep"][sl], 1)[:, None, None, :]  # (q, 1, 1, nG)
        phig = Phi_t[ps[:, None], g["cols"][None, :]]  # (q, nG)
        zg = g["zg"]  # (Cz, nG)
        u = zg[None, None] * phig[:, None, None, :] + ua  # (q, 1, Cz, nG) unmasked keys
        selfv = Ups_t[ps, ps][:, None, None]  # (q, 1, 1)
        nU, nM = g["nU"][None], g["nM"][None]  # (1, Cn, 1, nG)
        incl = self.engine.mask_keys
        M = xp.max(xp.where(nU > 0, u, -math.inf), axis=3)  # (q, Cn, Cz)
        if incl:
            M = xp.maximum(M, xp.max(xp.where(nM > 0, ua, -math.inf), axis=3))
            M = xp.maximum(M, selfv)
        M = xp.where(xp.isfinite(M), M, 0.0)[..., None]
        EU = nU * xp.exp(u - M)  # (q, Cn, Cz, nG)
        Z = xp.sum(EU, axis=3)
        if incl:
            EM = nM * xp.exp(ua - M)
            ES = xp.exp(selfv - M[..., 0])
            Z = Z + xp.sum(EM, axis=3) + ES
        pos = Z > 0
        invZ = xp.where(pos, 1.0 / xp.where(pos, Z, 1.0), 0.0)[..., None]
        AU = EU * invZ
        sm = AU @ g["onehot"]  # (q, Cn, Cz, Nk)
        j = g["j"]
        resid = g["zc"][None, None] * sm
        resid[..., j] = resid[..., j] - g["zj"][None, None]
        lossc = 0.5 * xp.sum(resid * resid, axis=3)  # (q, Cn, Cz)
        wl, wcond = g["wl"], g["wcond"]
        loss = xp.sum(wl * lossc)
        masked = (xp.sum(EM, axis=3) + ES) * invZ[..., 0] if incl else None
        attn = (xp.sum(wcond * sm[..., j]), xp.sum(wcond * sm[..., 0]),
                xp.sum(wcond * masked) if incl else 0.0)
        if not need_grad:
            return loss, attn, None
        h = zg[None, None] * resid[..., g["area_t"]]  # (q, Cn, Cz, nG) ∂ℓ/∂attn of a key
        H = xp.sum(AU * h, axis=3, keepdims=True)
        dU = AU * (h - H)  # total over the unmasked keys of each atom
        wl4 = wl[None, :, :, None]
        gphi = xp.sum(wl4 * dU * zg[None, None], axis=(1, 2)) @ g["onehot"]  # (q, Nk)
        gatom = xp.sum(wl4 * dU, axis=(1, 2))  # (q, nG)
        gself = xp.zeros((nq,))
        if incl:
            gatom = gatom - xp.sum(wl4 * (EM * invZ) * H, axis=(1, 2))
            gself = -xp.sum(wl * ES * invZ[..., 0] * H[..., 0], axis=(1, 2))
        rows = (gatom / g["c"])[:, g["pos"]]  # (q, P): every key q' ≠ p gets its atom's share
        rows[xp.arange(nq), ps] = gself
        return loss, attn, (gphi, rows)
