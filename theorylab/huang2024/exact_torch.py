"""``population-exact`` on torch (``train.backend = "torch"``, ``train.device`` cpu or cuda).

The same exchangeable sum as [`ExactEngine`][theorylab.huang2024.engines.ExactEngine] (its
docstring says when it applies), in float64 with the same hand-derived gradient (softmax
backward, no autograd), vectorised over the queries of one atom: queries p of the same atom
share the counts table (the other keys of their atom number c − 1 for each of them), the
coefficient vectors, the area of every key atom and the target area, so one set of tensors
(queries, count rows, coefficient vectors, atoms) serves them all. Queries are taken in chunks
of at most [`CHUNK_ELEMENTS`][] elements per working tensor (at least one query per chunk).
Softmax max-subtracted; the tensors stay on the device for the whole evaluation, and only Φ,
Υ (in) and their gradients (out) cross to the host. Equal to the numpy engine to rounding
(tests/huang2024/test_h24_exact_torch.py).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["CHUNK_ELEMENTS", "TorchExactSum", "query_groups"]

#: Elements of the largest working tensor (queries × count rows × coefficient vectors × atoms)
#: of one chunk; about 25 such tensors are alive at once (2²² float64 elements = 32 MiB each).
CHUNK_ELEMENTS = 1 << 22


def query_groups(engine) -> list[tuple[int, np.ndarray]]:
    """(atom, queries p of that atom): the queries that share one plan."""
    atom = engine.atom
    return [(int(a), np.flatnonzero(atom == a)) for a in np.unique(atom)]


class TorchExactSum:
    """The exact population loss, gradients and attention masses of ``engine`` (an
    [`ExactEngine`][theorylab.huang2024.engines.ExactEngine]) on torch ``device``."""

    def __init__(self, engine, device: str = "cpu") -> None:
        import torch

        self.torch, self.device, self.engine = torch, device, engine
        s = engine.structure
        dt = torch.float64
        self.dt = dt

        def T(x, dtype=dt):
            return torch.as_tensor(np.asarray(x), dtype=dtype, device=device)

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
                rep = np.empty((len(ps), len(G)), dtype=np.int64)
                for i, p in enumerate(ps):
                    rep[i] = [m[0] for m in engine.plans[p][2]]
                # the column of the key atom within G, per key q (the query's own column is
                # overwritten by the self gradient)
                pos = np.zeros(s.P, dtype=np.int64)
                pos[np.isin(engine.atom, G)] = np.searchsorted(
                    G, engine.atom[np.isin(engine.atom, G)])
                nf = engine.count_norm(c, n)
                wcond = pn[:, None] * pz[None, :]
                wq = engine.pmask / s.K
                self.groups.append({
                    "k": k, "off": off, "Nk": Nk, "j": j, "glob": j == 0,
                    "ps": ps, "ps_t": T(ps, torch.long), "rep": T(rep, torch.long),
                    "pos": T(pos, torch.long), "cols": T(off + area, torch.long),
                    "c": T(c), "nU": T(n)[:, None, :], "nM": T(c - n)[:, None, :],
                    "zg": T(zc[:, area]), "zc": T(zc), "zj": T(zc[:, j]),
                    "onehot": T(area[:, None] == np.arange(Nk)[None, :]),
                    "area_t": T(area, torch.long),
                    "wcond": T(wcond), "wl": T(wcond * (nf * wq)[:, None]),
                    "per_query": len(n) * len(zc) * len(G),
                })

    def evaluate(self, Phi: np.ndarray, Ups: np.ndarray, need_grad: bool):
        """(loss, attention sums {"own_gq": ..., ...} with the query counts per tag,
        gradients (Φ, Υ) as numpy arrays or None)."""
        torch = self.torch
        Phi_t = torch.as_tensor(Phi, dtype=self.dt, device=self.device)
        Ups_t = torch.as_tensor(Ups, dtype=self.dt, device=self.device)
        gPhi = torch.zeros_like(Phi_t) if need_grad else None
        gUps = torch.zeros_like(Ups_t) if need_grad else None
        loss = torch.zeros((), dtype=self.dt, device=self.device)
        zero = torch.zeros((), dtype=self.dt, device=self.device)
        sums = {f"{a}_{t}": zero for a in ("own", "glob", "masked") for t in ("gq", "lq")}
        wsum = {"gq": 0.0, "lq": 0.0}
        for g in self.groups:
            tag = "gq" if g["glob"] else "lq"
            nq = len(g["ps"])
            wsum[tag] += nq
            step = max(1, CHUNK_ELEMENTS // max(1, g["per_query"]))
            for lo in range(0, nq, step):
                sl = slice(lo, min(nq, lo + step))
                lq, attn, grads = self._chunk(g, sl, Phi_t, Ups_t, need_grad)
                loss = loss + lq
                for name, v in zip(("own", "glob", "masked"), attn):
                    sums[f"{name}_{tag}"] = sums[f"{name}_{tag}"] + v
                if grads is not None:
                    gphi, rows = grads
                    ps = g["ps_t"][sl]
                    gPhi[ps[:, None], g["off"] + torch.arange(g["Nk"], device=self.device)] \
                        += gphi
                    gUps[ps] += rows
        out_sums = {key: float(v) for key, v in sums.items()}
        grads = (gPhi.cpu().numpy(), gUps.cpu().numpy()) if need_grad else None
        return float(loss), out_sums, wsum, grads

    def _chunk(self, g, sl, Phi_t, Ups_t, need_grad):
        """Loss, summed attention masses and gradients of the queries ``g["ps"][sl]``."""
        torch = self.torch
        ps = g["ps_t"][sl]
        nq = ps.shape[0]
        ua = torch.gather(Ups_t[ps], 1, g["rep"][sl])[:, None, None, :]  # (q, 1, 1, nG)
        phig = Phi_t[ps[:, None], g["cols"][None, :]]  # (q, nG)
        zg = g["zg"]  # (Cz, nG)
        u = zg[None, None] * phig[:, None, None, :] + ua  # (q, 1, Cz, nG) unmasked keys
        selfv = Ups_t[ps, ps][:, None, None]  # (q, 1, 1)
        nU, nM = g["nU"][None], g["nM"][None]  # (1, Cn, 1, nG)
        incl = self.engine.mask_keys
        ninf = torch.tensor(-math.inf, dtype=self.dt, device=self.device)
        M = torch.where(nU > 0, u, ninf).amax(dim=3)  # (q, Cn, Cz)
        if incl:
            M = torch.maximum(M, torch.where(nM > 0, ua, ninf).amax(dim=3))
            M = torch.maximum(M, selfv)
        M = torch.where(torch.isfinite(M), M, torch.zeros_like(M))[..., None]
        EU = nU * torch.exp(u - M)  # (q, Cn, Cz, nG)
        Z = EU.sum(dim=3)
        if incl:
            EM = nM * torch.exp(ua - M)
            ES = torch.exp(selfv - M[..., 0])
            Z = Z + EM.sum(dim=3) + ES
        pos = Z > 0
        invZ = torch.where(pos, 1.0 / torch.where(pos, Z, torch.ones_like(Z)),
                           torch.zeros_like(Z))[..., None]
        AU = EU * invZ
        sm = AU @ g["onehot"]  # (q, Cn, Cz, Nk)
        j = g["j"]
        resid = g["zc"][None, None] * sm
        resid[..., j] -= g["zj"][None, None]
        lossc = 0.5 * torch.sum(resid * resid, dim=3)  # (q, Cn, Cz)
        wl, wcond = g["wl"], g["wcond"]
        loss = torch.sum(wl * lossc)
        masked = (EM.sum(dim=3) + ES) * invZ[..., 0] if incl else torch.zeros_like(Z)
        attn = (torch.sum(wcond * sm[..., j]), torch.sum(wcond * sm[..., 0]),
                torch.sum(wcond * masked))
        if not need_grad:
            return loss, attn, None
        h = zg[None, None] * resid[..., g["area_t"]]  # (q, Cn, Cz, nG) ∂ℓ/∂attn of a key
        H = torch.sum(AU * h, dim=3, keepdim=True)
        dU = AU * (h - H)  # total over the unmasked keys of each atom
        wl4 = wl[None, :, :, None]
        gphi = torch.sum(wl4 * dU * zg[None, None], dim=(1, 2)) @ g["onehot"]  # (q, Nk)
        gatom = torch.sum(wl4 * dU, dim=(1, 2))  # (q, nG)
        gself = torch.zeros(nq, dtype=self.dt, device=self.device)
        if incl:
            gatom = gatom - torch.sum(wl4 * (EM * invZ) * H, dim=(1, 2))
            gself = -torch.sum(wl * ES * invZ[..., 0] * H[..., 0], dim=(1, 2))
        rows = (gatom / g["c"])[:, g["pos"]]  # (q, P): every key q' ≠ p gets its atom's share
        rows[torch.arange(nq, device=self.device), ps] = gself
        return loss, attn, (gphi, rows)
