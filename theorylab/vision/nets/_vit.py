"""A small Vision Transformer, with vanilla or positional attention, in plain torch.

Positional attention follows Definition 3.2 of Jelassi, Sander & Li (2022): the attention logits
of every layer are computed from the learned positional encodings only,
`A = (P W_Q)(P W_K)ᵀ / √d_head` (one matrix per head, the same for every input), while the
values come from the token stream, `V = X W_V`. The positional encodings are then *not* added to
the tokens (Definition 3.2, item 3: `V = XᵀW_V`). MLP, LayerNorm and residual connections are
unchanged. In the vanilla ViT (Definition 3.1) P is added to the patch embeddings and the
logits come from the tokens. Both use mean pooling over tokens (no CLS token).

**Label: RECONSTRUCTED.** The paper's Figures 6-7 only say that the "positional attention" ViT
computes its attention logits from the positional encodings (Definition 3.2 is a one-layer
model); the multi-layer network here -- positional attention in *every* layer, depth, width,
heads, pre-norm LayerNorm, GELU MLP, residual connections, mean pooling, the Gaussian
initialisation of P -- is our choice, not read in the paper. The vanilla ViT is a standard small
ViT, scaled down (the paper uses timm's ViT-tiny / ViT-small).
"""

from __future__ import annotations

import math

import torch
from torch import nn

from theorylab.vision.nets._patch import patchify

__all__ = ["Attention", "Block", "ViT", "cosine_similarity_matrix"]


class Attention(nn.Module):
    """Multi-head self-attention whose logits come from the tokens or from positions only.

    **Arguments:**

    - `dim`: token width, divisible by `heads`.
    - `heads`: number of heads.
    - `positional`: if True, logits are `(P W_Q)(P W_K)ᵀ/√d_head` from the positional encodings
      `P` (shape `(D, pos_dim)`) passed to `forward`; they do not depend on the input `x`.
    - `pos_dim`: width of `P` (default `dim`); only used when `positional`.
    """

    def __init__(self, dim: int, heads: int, *, positional: bool = False,
                 pos_dim: int | None = None) -> None:
        super().__init__()
        if dim % heads:
            raise ValueError(f"dim={dim} must be divisible by heads={heads}")
        self.dim, self.heads, self.head_dim = dim, heads, dim // heads
        self.positional = positional
        src_dim = (pos_dim or dim) if positional else dim
        self.qk = nn.Linear(src_dim, 2 * dim)
        self.v = nn.Linear(dim, dim)
        self.proj = nn.Linear(dim, dim)

    def logits(self, x: torch.Tensor, pos: torch.Tensor | None = None) -> torch.Tensor:
        """Attention logits `(B, heads, D, D)`; batch dimension 1 when `positional`."""
        if self.positional:
            if pos is None:
                raise ValueError("positional attention needs the positional encodings `pos`")
            src = pos.unsqueeze(0)  # (1, D, pos_dim): no dependence on x
        else:
            src = x
        b, n, _ = src.shape
        q, k = self.qk(src).reshape(b, n, 2, self.heads, self.head_dim).permute(2, 0, 3, 1, 4)
        return q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)

    def attention(self, x: torch.Tensor, pos: torch.Tensor | None = None) -> torch.Tensor:
        """Row-stochastic attention `S`, `(B, heads, D, D)`; B = 1 when positional."""
        return self.logits(x, pos).softmax(dim=-1)

    def forward(self, x: torch.Tensor, pos: torch.Tensor | None = None) -> torch.Tensor:
        b, n, _ = x.shape
        S = self.attention(x, pos)
        v = self.v(x).reshape(b, n, self.heads, self.head_dim).transpose(1, 2)
        out = (S @ v).transpose(1, 2).reshape(b, n, self.dim)
        return self.proj(out)


class Block(nn.Module):
    """Pre-norm transformer block: `x + Attn(LN(x))`, then `x + MLP(LN(x))` with GELU."""

    def __init__(self, dim: int, heads: int, mlp_ratio: float, *, positional: bool) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = Attention(dim, heads, positional=positional)
        self.norm2 = nn.LayerNorm(dim)
        hidden = int(round(dim * mlp_ratio))
        self.mlp = nn.Sequential(nn.Linear(dim, hidden), nn.GELU(), nn.Linear(hidden, dim))

    def forward(self, x: torch.Tensor, pos: torch.Tensor | None = None) -> torch.Tensor:
        x = x + self.attn(self.norm1(x), pos)
        return x + self.mlp(self.norm2(x))


class ViT(nn.Module):
    """Small Vision Transformer for square grey or colour images.

    With `positional_attention=True` this is the multi-layer positional-attention ViT of our
    Figures 6-7, RECONSTRUCTED (see the module docstring): the paper fixes only that the
    attention logits come from the positional encodings; the rest of the architecture is ours.

    **Arguments:**

    - `image_size`: image side H = W in pixels.
    - `patch_size`: patch side p (divides `image_size`); D = (H/p)² tokens.
    - `num_classes`: number of output logits.
    - `in_chans`: image channels.
    - `dim`, `depth`, `heads`, `mlp_ratio`: width, number of blocks, heads, MLP expansion.
    - `positional_attention`: if True every block uses positional attention (see module doc).
    - `pos_init_std`: standard deviation of the Gaussian initialisation of P.
    """

    def __init__(self, image_size: int, patch_size: int, num_classes: int, *, in_chans: int = 1,
                 dim: int = 64, depth: int = 2, heads: int = 4, mlp_ratio: float = 2.0,
                 positional_attention: bool = False, pos_init_std: float = 0.02) -> None:
        super().__init__()
        if image_size % patch_size:
            raise ValueError(f"patch_size={patch_size} must divide image_size={image_size}")
        self.image_size, self.patch_size = image_size, patch_size
        self.grid = image_size // patch_size
        self.num_patches = self.grid**2
        self.positional_attention = positional_attention
        self.embed = nn.Linear(in_chans * patch_size**2, dim)
        self.pos = nn.Parameter(torch.randn(self.num_patches, dim) * pos_init_std)
        self.blocks = nn.ModuleList(
            Block(dim, heads, mlp_ratio, positional=positional_attention) for _ in range(depth)
        )
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, num_classes)

    @property
    def P(self) -> torch.Tensor:
        """Learned positional encodings, one row per patch: `(D, dim)` (the paper's Pᵀ)."""
        return self.pos

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        x = self.embed(patchify(images, self.patch_size))
        pos = self.pos if self.positional_attention else None  # logits from P, or P added
        if pos is None:
            x = x + self.pos
        for blk in self.blocks:
            x = blk(x, pos)
        return self.head(self.norm(x).mean(dim=1))


def cosine_similarity_matrix(P: torch.Tensor) -> torch.Tensor:
    """Cosine similarities `⟨p_i, p_j⟩ / (‖p_i‖‖p_j‖)` of the rows of `P` `(D, k)`, in [−1, 1].

    This is the paper's PᵀP "normalised to [−1, 1]" (Figure 1a), with P stored row-per-patch.
    """
    Pn = P / P.norm(dim=-1, keepdim=True).clamp_min(1e-12)
    return (Pn @ Pn.T).clamp(-1.0, 1.0)
