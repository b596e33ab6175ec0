"""The engines, data and states the first paper's benchmarks time: problem (E)'s empirical
engine and its plain torch-autograd baseline, problem (P)'s population engines at a fixed
partition-symmetric state, and the work counts of one empirical step."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

__all__ = ["STATE", "AutogradBaseline", "autograd_for", "blas_read", "empirical_config",
           "engine_pass", "grad_mismatch", "make_empirical_engine", "mc_states",
           "population_engine", "step_bytes", "step_flops"]


# -- configuration and engine -------------------------------------------------------------------
def empirical_config(
    D: int, d: int, N: int, *, C: int = 2, backend: str = "torch", device: str = "cpu",
    dtype: str = "float64", seed: int = 0, alpha0: float = 0.01, offdiag0: float = 0.0,
):
    """A resolved [`ExperimentConfig`][theorylab.jelassi2022.config.ExperimentConfig] for
    problem (E) with
    ``n_train = N``, ``n_test = 1`` and the default automatic chunks (``chunk_size = 0``: one
    chunk on a GPU when it fits, cache-sized chunks on a CPU)."""
    from theorylab.jelassi2022.config import DataConfig, ExperimentConfig, TrainConfig

    return ExperimentConfig(
        data=DataConfig(D=D, C=C, partition="random", d=d, q=0.2, seed=seed),
        train=TrainConfig(
            engine="empirical", backend=backend, device=device, dtype=dtype, n_train=N,
            n_test=1, chunk_size=0, seed=seed, alpha0=alpha0, offdiag0=offdiag0,
        ),
    ).resolved()


def make_empirical_engine(cfg, train=None):
    """The empirical engine of ``cfg`` (optionally on a given
    [`Sample`][theorylab.jelassi2022.data.Sample])."""
    from theorylab.core.backend import get_backend
    from theorylab.jelassi2022.data import make_wstar
    from theorylab.jelassi2022.engines import EmpiricalEngine

    t = cfg.train
    partition = cfg.data.make_partition()
    wstar = make_wstar(cfg.data)
    xp = get_backend(t.backend, t.dtype, t.device)
    return EmpiricalEngine(cfg, xp, partition, wstar, train=train)


class AutogradBaseline:
    """Plain torch-autograd GD on the empirical risk of eq. (T), the reference to beat.

    F(X_n) = Σ_i σ(κ·(S·U_n)_i), S = softmax(A/τ), U_n = X_n·v; loss = mean_n log(1 + e^{−y_n F});
    ``loss.backward()``; the diagonal of A is masked out of the gradient (Simplification 3.1).

    **Arguments:**

    - `X`: (N, D, d) tensor; `y`: (N,) labels ±1; `A0`: (D, D) and `v0`: (d,) initial values
      (numpy or torch; copied to X's device and dtype); `model`: the
      [`PositionalAttentionModel`][theorylab.jelassi2022.model.PositionalAttentionModel];
      `lr_A`, `lr_v`: learning rates.
    """

    def __init__(self, X, y, A0, v0, model, lr_A: float, lr_v: float) -> None:
        import torch

        self.torch = torch
        self.X = X
        self.y = torch.as_tensor(y).to(device=X.device, dtype=X.dtype)
        kw = {"device": X.device, "dtype": X.dtype}
        self.A = torch.as_tensor(np.asarray(A0) if not torch.is_tensor(A0) else A0).to(**kw)
        self.v = torch.as_tensor(np.asarray(v0) if not torch.is_tensor(v0) else v0).to(**kw)
        self.A.requires_grad_(True)
        self.v.requires_grad_(True)
        D = self.A.shape[0]
        self.mask = 1.0 - torch.eye(D, **kw)
        self.model = model
        self.lr_A, self.lr_v = lr_A, lr_v

    def loss(self):
        torch, m = self.torch, self.model
        S = torch.softmax(self.A / m.temperature, dim=1)
        U = self.X @ self.v  # (N, D)
        H = m.value_scale * (U @ S.T)  # H_ni = κ Σ_j S_ij U_nj
        F = m.activation(H).sum(dim=1)
        return torch.logaddexp(torch.zeros_like(F), -self.y * F).mean()  # exact logistic loss

    def grads(self):
        """(∂L/∂A with zero diagonal, ∂L/∂v) at the current parameters."""
        self.A.grad = None
        self.v.grad = None
        self.loss().backward()
        return self.A.grad * self.mask, self.v.grad

    def step(self):
        """One GD step from the current parameters; returns the new (A, v) and leaves the
        current ones unchanged (benchmarks time repeated steps from one state)."""
        gA, gv = self.grads()
        with self.torch.no_grad():
            return self.A - self.lr_A * gA, self.v - self.lr_v * gv


def autograd_for(engine, params) -> AutogradBaseline:
    """An [`AutogradBaseline`][] on the engine's training data, device and dtype, at ``params``."""
    import torch

    xp = engine.xp
    X = engine.X if torch.is_tensor(engine.X) else torch.from_numpy(engine.X)
    y = engine.y if torch.is_tensor(engine.y) else torch.from_numpy(np.asarray(engine.y))
    A, v = (xp.to_numpy(params["A"]), xp.to_numpy(params["v"]))
    return AutogradBaseline(X, y, A, v, engine.model, engine.lr_A, engine.lr_v)


def grad_mismatch(engine, params) -> float:
    """Largest relative difference max|g_engine − g_autograd| / max|g_autograd| over ∂A and ∂v."""
    base = autograd_for(engine, params)
    gA, gv = base.grads()
    ev = engine.evaluate(params, 0, need_grad=True, record=False)
    out = 0.0
    for mine, ref in ((ev.grads["A"], gA), (ev.grads["v"], gv)):
        a = np.asarray(engine.xp.to_numpy(mine), dtype=np.float64)
        b = ref.detach().cpu().double().numpy()
        out = max(out, float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300)))
    return out


# -- work counts --------------------------------------------------------------------------------
def step_flops(N: int, D: int, d: int, activation_degree: int = 3) -> float:
    """Floating-point operations of one empirical GD step (multiply and add counted apart).

    2NDd for U = X·v, 2NDd for ∂L/∂v = Σ ∂L/∂U·X, 6ND² for the three attention products
    (H = U·Sᵀ, ∂L/∂U = G·S, ∂L/∂S = Gᵀ·U), 4·degree·ND for σ and σ' by Horner, ~20ND for the
    loss, tie test and G; the O(D²) softmax and the O(d) update are neglected.
    """
    return 4.0 * N * D * d + 6.0 * N * D * D + (4.0 * activation_degree + 20.0) * N * D


def step_bytes(N: int, D: int, d: int, itemsize: int) -> float:
    """Bytes of X read by one step: X is read twice (U = X·v, then ∂L/∂v)."""
    return 2.0 * N * D * d * itemsize


def blas_read(engine, params) -> Callable[[], object]:
    """One read of the engine's X by torch's matrix–vector product, X viewed as (N·D, d) times v
    (zero-copy on a CPU). Timed next to autograd it bounds what any step can gain: a step must
    read all of X at least once (∂L/∂v = Xᵀ ∂L/∂U for a generic ∂L/∂U), so no step that reads
    X at this rate is more than ``autograd ÷ this`` faster than autograd."""
    import torch

    X = engine.X if torch.is_tensor(engine.X) else torch.from_numpy(engine.X)
    v = params["v"] if torch.is_tensor(params["v"]) else torch.from_numpy(np.asarray(params["v"]))
    X2 = X.reshape(-1, X.shape[-1])
    return lambda: torch.mv(X2, v)


def engine_pass(engine) -> str:
    """Which training pass the empirical engine ran: "fused", "two-pass", or "two-pass (fused
    not eligible)" (see [`theorylab.jelassi2022.engines.fused`][])."""
    from theorylab.jelassi2022.engines.fused import fused_eligible, pass_choices

    if not fused_eligible(engine.xp, engine.X, engine.streamed):
        return "two-pass (fused not eligible)"
    if engine.pass_impl != "auto":
        return engine.pass_impl
    X = engine.xp.to_numpy(engine.X)
    return pass_choices().cache.get(pass_choices().shape_class(X), "auto (not measured yet)")


def population_engine(D: int, C: int, method: str, *, backend: str = "torch",
                      device: str = "cpu", dtype: str = "float64", mc_samples: int = 100_000,
                      q: float = 0.2):
    """An engine for problem (P) (``method``: brute, exchangeable or montecarlo) with a random
    partition of D into sets of C (the same partition for every method at given D, C)."""
    from theorylab.core.backend import get_backend
    from theorylab.jelassi2022.config import DataConfig, ExperimentConfig, TrainConfig
    from theorylab.jelassi2022.data import make_wstar
    from theorylab.jelassi2022.engines import BruteForceEngine, ExchangeableEngine, MonteCarloEngine

    cfg = ExperimentConfig(
        data=DataConfig(D=D, C=C, partition="random", d=64, q=q),
        train=TrainConfig(engine="population", method=method, backend=backend, device=device,
                          dtype=dtype, mc_samples=mc_samples, mc_resample=True, chunk_size=0,
                          max_configs=10**9),
    ).resolved()
    cls = {"brute": BruteForceEngine, "exchangeable": ExchangeableEngine,
           "montecarlo": MonteCarloEngine}[method]
    xp = get_backend(backend, dtype, device)
    return cls(cfg, xp, cfg.data.make_partition(), make_wstar(cfg.data))


#: a partition-symmetric state with γ ≠ ρ, the state the population steps are timed from
STATE = {"gamma": 0.3, "rho": -0.05, "alpha": 0.4}


def mc_states(engine) -> dict[str, dict]:
    """The Monte Carlo engine's two timed states at [`STATE`][]: ``"aligned"``, v = α·w* (the
    aligned shortcut: no noise draws), and ``"general"``, v = α·w* + 1e-9·e with a unit e ⊥ w*
    (the general path); A partition-symmetric in both."""
    from theorylab.jelassi2022.observables import symmetric_A

    A = engine.xp.asarray(symmetric_A(engine.D, engine.partition, engine.diag, STATE["gamma"],
                                      STATE["rho"]))
    v = STATE["alpha"] * engine.wstar
    e = np.random.default_rng(0).standard_normal(v.shape)
    e -= (e @ engine.wstar) * engine.wstar
    e /= np.linalg.norm(e)
    return {"aligned": {"A": A, "v": v}, "general": {"A": A, "v": v + 1e-9 * e}}
