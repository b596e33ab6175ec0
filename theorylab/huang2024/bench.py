"""The second paper's benchmark (``python -m theorylab.bench --paper huang2024``): one GD step of
the exact population engine ``population-exact`` on numpy, on torch (``--device``), and a plain
torch-autograd implementation of the same population loss, timed interleaved in one run.

- [`AutogradExactLoss`][]: the baseline. The exact population loss written as a
  straightforward torch expression (logits of every key class, log-counts added, a logsumexp
  softmax, output, squared error, weighted sum over count rows and coefficient vectors) of the
  full Φ and Υ, the gradient by ``loss.backward()``. It uses the engine's enumeration tables
  (count rows, coefficient vectors, their probabilities), not its code. Unchunked: its
  largest tensors hold (queries of an atom) × (count rows) × (coefficient vectors) ×
  (2·atoms + 1) values, about 0.26 GB each at P = 576 and 0.8 GB at P = 1024, and autograd
  keeps several of them.
- [`bench_config`][]: the timed problem at P (one cluster, a global area of P − 4 patches and
  a local area of 4, so Δ > 0 and a query's count rows grow like 5P; the coefficient law
  {0.5, 1.5}, Bernoulli masks γ = 0.5, masked keys in, ``loss_norm = "P"``).
- [`bench_exact`][]: one row per P: the three step times, their ratios to the baseline, and
  the largest differences of loss and gradients to the numpy engine (measured before timing).
- [`run`][]: the command line's table, starting with the machine line.
"""

from __future__ import annotations

import math
import statistics

import numpy as np

from theorylab.core.backend import get_backend
from theorylab.core.bench import interleaved_times, machine_line, print_and_save

from .config import ExperimentConfig, config_from_dict
from .data import AreaStructure, Batch
from .engines import ExactEngine, ExchangeableSum, Params
from .model import BatchEval, norm_factor

__all__ = ["AutogradExactLoss", "QUICK_SIZES", "SIZES", "autograd_batch_loss", "bench_config",
           "bench_exact", "check_sizes", "run"]

#: P of the default run and of ``--quick``
SIZES = (64, 256, 576)
QUICK_SIZES = (16, 64)


def bench_config(P: int, backend: str = "numpy", device: str = "cpu") -> ExperimentConfig:
    """The timed problem at P (module docstring); P ≥ 6."""
    return config_from_dict({
        "data": {"P": P, "C1": P - 4, "C": 4, "z_law": "values", "z_values": [0.5, 1.5]},
        "model": {"mask": "bernoulli", "gamma": 0.5, "mask_keys": True, "loss_norm": "P"},
        "train": {"engine": "population-exact", "backend": backend, "device": device,
                  "lr": 2.0 * P, "max_configs": 10**12}})


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


def _state(engine: ExactEngine) -> Params:
    """A non-trivial state: two GD steps from Q = 0 (Υ stays constant on atoms)."""
    params = engine.initial_params()
    for step in range(2):
        params = engine.apply(params, engine.evaluate(params, step, need_grad=True,
                                                      record=False).grads)
    return params


def bench_exact(P: int, device: str = "cpu", *, repeats: int = 3,
                max_seconds: float | None = 60.0) -> dict:
    """One row: the numpy engine's, the torch engine's and the autograd baseline's step at P,
    timed interleaved (medians), after checking that all three agree."""
    import torch

    cn, ct = bench_config(P), bench_config(P, "torch", device)
    s = cn.data.make_structure()
    en, et = ExactEngine(cn, s), ExactEngine(ct, s)
    base = AutogradExactLoss(en, device)
    params = _state(en)
    a = en.evaluate(params, 0, need_grad=True, record=False)
    b = et.evaluate(params, 0, need_grad=True, record=False)
    lc, gp, gu = base.loss_grad(params)

    def diff(loss, gPhi, gUps):
        return max(abs(loss - a.loss), float(np.abs(gPhi - a.grads["Phi"]).max()),
                   float(np.abs(gUps - a.grads["Ups"]).max()))

    def step(engine):
        return lambda: engine.apply(params, engine.evaluate(params, 0, need_grad=True,
                                                            record=False).grads)

    def autograd_step():
        _l, gPhi, gUps = base.loss_grad(params)
        return en.apply(params, {"Phi": gPhi, "Ups": gUps})

    sync = torch.cuda.synchronize if device.startswith("cuda") else (lambda: None)
    t = interleaved_times({"numpy": step(en), "torch": step(et), "autograd": autograd_step},
                          sync, repeats=repeats, max_seconds=max_seconds)
    med = {k: statistics.median(v) for k, v in t.items()}
    rows = int(sum(len(en.plans[p][3]) for p in range(P)))
    return {"device": device, "P": P, "count_rows": rows, "timed": len(t["numpy"]),
            "numpy_s": med["numpy"], "torch_s": med["torch"], "autograd_s": med["autograd"],
            "numpy/autograd": med["numpy"] / med["autograd"],
            "torch/autograd": med["torch"] / med["autograd"],
            "torch_vs_numpy": diff(b.loss, b.grads["Phi"], b.grads["Ups"]),
            "autograd_vs_numpy": diff(lc, gp, gu), "loss": a.loss}


def run(args) -> list[dict]:
    """The command line's run: one row per P (``args.sizes``, else [`SIZES`][] or
    [`QUICK_SIZES`][] with ``--quick``), printed with the machine line; ``--out`` keeps it."""
    import torch

    sizes = args.sizes or (QUICK_SIZES if args.quick else SIZES)
    print(machine_line(args.device, {"paper": "huang2024", "engine": "population-exact",
                                     "dtype": "float64"}), flush=True)
    rows = []
    for P in sizes:
        row = bench_exact(P, args.device, repeats=args.repeats, max_seconds=args.max_seconds)
        rows.append(row)
        print(f"P={P}: numpy {row['numpy_s']:.4g} s, torch {row['torch_s']:.4g} s, autograd "
              f"{row['autograd_s']:.4g} s (torch/autograd {row['torch/autograd']:.3g}); "
              f"|torch - numpy| <= {row['torch_vs_numpy']:.2g}", flush=True)
        if args.device.startswith("cuda"):
            torch.cuda.empty_cache()
    print_and_save(rows, args.out)
    return rows


def check_sizes(sizes) -> None:
    """``ValueError("--sizes: ...")`` unless every P is ≥ 6 (a global area of P − 4 ≥ 2
    patches and a local area of 4)."""
    for P in sizes or ():
        if P < 6:
            raise ValueError(f"--sizes: every P must be >= 6 (got {P})")
