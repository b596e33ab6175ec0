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

import statistics

import numpy as np

from theorylab.core.bench import interleaved_times, machine_line, print_and_save
from theorylab.core.faults import keeping

from .config import ExperimentConfig, config_from_dict
from .engine_base import Params
from .engines import ExactEngine
from .exact_torch import TorchExactSum

__all__ = ["AutogradExactLoss", "QUICK_SIZES", "SIZES", "bench_config", "bench_exact",
           "check_sizes", "run"]

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
        self.tables = TorchExactSum(engine, device).groups  # the enumeration, as tensors
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
    estimates = check_sizes(sizes, args.device)
    print(machine_line(args.device, {"paper": "huang2024", "engine": "population-exact",
                                     "dtype": "float64"}), flush=True)
    rows: list[dict] = []
    with keeping(lambda: measured_so_far(rows)):
        for P, estimate in zip(sizes, estimates):
            print(f"{estimate}; measuring ...", flush=True)
            try:
                row = bench_exact(P, args.device, repeats=args.repeats,
                                  max_seconds=args.max_seconds)
            except KeyboardInterrupt:
                if rows:  # the sizes measured so far: their table, as a full run prints it
                    print_and_save(rows, None)
                raise
            rows.append(row)
            print(f"P={P}: numpy {row['numpy_s']:.4g} s, torch {row['torch_s']:.4g} s, "
                  f"autograd {row['autograd_s']:.4g} s (torch/autograd "
                  f"{row['torch/autograd']:.3g}); |torch - numpy| <= "
                  f"{row['torch_vs_numpy']:.2g}", flush=True)
            if args.device.startswith("cuda"):
                torch.cuda.empty_cache()
        print_and_save(rows, args.out)
    return rows


def measured_so_far(rows: list[dict]) -> str | None:
    """What a stopped run keeps: the sizes measured (printed above), for a fault's message."""
    if not rows:
        return None
    return (f"the rows of P = {', '.join(str(r['P']) for r in rows)} (printed above; no CSV "
            "written)")


def check_sizes(sizes, device: str = "cpu") -> list[str]:
    """Every P of ``sizes`` checked by the engine's own validator and resource check, before
    anything is measured: ``ValueError("--sizes: P=...: <the field's message>")`` for a P whose
    timed problem ([`bench_config`][]) is not a valid configuration (a global area of P − 4
    must hold the local area of 4: P >= 8) or does not fit this machine (the estimate is
    named). Returns one line per P with its estimate (count rows, memory)."""
    from .resources import check_resources, exact_log10_rows, memory_estimate

    lines = []
    for P in sizes or ():
        try:
            cfg = bench_config(P, "torch" if device != "cpu" else "numpy", device)
            structure = check_resources(cfg)
            need, _info = memory_estimate(cfg, structure)
        except ValueError as e:
            raise ValueError(f"--sizes: P={P}: {e}") from None
        from theorylab.core.resources import format_bytes

        log_rows, _groups = exact_log10_rows(structure)
        lines.append(f"P={P}: about {10 ** log_rows:.3g} count rows, about "
                     f"{format_bytes(need)} for the engine (the autograd baseline holds "
                     "several times more)")
    return lines
