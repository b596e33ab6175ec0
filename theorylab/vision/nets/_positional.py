"""A one-layer positional-attention network on patch vectors (a plain container of tensors):
the attention logits come from learned positional encodings only, the same for every input."""

from __future__ import annotations

import math

import torch

__all__ = ["PositionalAttention1"]


class PositionalAttention1:
    """One layer of positional attention with cubic activation, on inputs ``X`` ``(n, D, d)``.

    Head h has attention ``S_h = softmax((P W_Q^h)(P W_K^h)ᵀ / √d_h)`` (positional encodings
    ``P`` ``(D, pos_dim)``), values ``X_j V_h`` and output
    ``F(X) = Σ_i ⟨a, σ(Σ_h Σ_j S_h[i, j] V_hᵀ X_j)⟩`` with σ(z) = z³. Every tensor is drawn
    from `generator` (standard normal, scaled by 1/√fan-in; ``P`` unscaled) and moved to
    `device`."""

    def __init__(self, D: int, d: int, *, heads: int, head_dim: int, hidden: int,
                 pos_dim: int, generator: torch.Generator, device="cpu") -> None:
        def randn(*shape, scale):
            return (torch.randn(*shape, generator=generator) * scale).to(device
                                                                          ).requires_grad_()

        self.P = randn(D, pos_dim, scale=1.0)
        self.WQ = randn(heads, pos_dim, head_dim, scale=1 / math.sqrt(pos_dim))
        self.WK = randn(heads, pos_dim, head_dim, scale=1 / math.sqrt(pos_dim))
        self.V = randn(heads, d, hidden, scale=1 / math.sqrt(d * heads))
        self.a = randn(hidden, scale=1 / math.sqrt(hidden))
        self.H, self.dh, self.D = heads, head_dim, D

    def parameters(self) -> list[torch.Tensor]:
        return [self.P, self.WQ, self.WK, self.V, self.a]

    def attention(self) -> torch.Tensor:
        """``(heads, D, D)``: the attention of every head (input-independent)."""
        q = torch.einsum("ip,hpe->hie", self.P, self.WQ)
        k = torch.einsum("ip,hpe->hie", self.P, self.WK)
        return (q @ k.transpose(1, 2) / math.sqrt(self.dh)).softmax(dim=-1)

    def __call__(self, X: torch.Tensor) -> torch.Tensor:
        n, D, d = X.shape
        S = self.attention()
        vals = (X.reshape(n * D, d) @ self.V.permute(1, 0, 2).reshape(d, -1)).reshape(
            n, D, self.H, -1)
        vals = vals.permute(0, 2, 1, 3).reshape(n, self.H * D, -1)  # (n, H·D, m)
        z = S.permute(1, 0, 2).reshape(D, self.H * D) @ vals  # (n, D, m)
        return ((z**3) @ self.a).sum(dim=1)
