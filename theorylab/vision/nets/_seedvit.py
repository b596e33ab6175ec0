"""A small ViT encoder batched over seeds: S independent models in one set of weights.

Every weight carries a leading **seed axis** of length S; model s sees only its own inputs
``x[s]`` and its own weights, so S models train in one process, one optimiser step at a time,
with batched matrix products instead of a Python loop over seeds. AdamW acts element by element,
so one AdamW over the stacked weights is S independent AdamWs; the only coupling an optimiser
could add, gradient-norm clipping, is done per seed ([`clip_grad_norm_per_seed_`][]). Seed s's
initial weights are drawn from a generator seeded by that seed alone, so a seed's run does not
depend on which other seeds share the batch.

**Architecture** (per seed; the standard small ViT of [`theorylab.vision.nets.ViT`][], no CLS
token): a linear patch embedding, learned absolute positional encodings added to the tokens,
``depth`` pre-norm blocks (multi-head softmax attention, GELU MLP, residual connections), a
final LayerNorm. Each block's attention logits carry a learned **relative-position bias** per
head, a table ``rel[s, h, δ]`` over the (2g − 1)² offsets δ = (Δrow, Δcolumn) of a g × g grid
(as in Swin), added to q·k/√d_head. An optional learned mask token replaces the embedding of
masked patches before the positions are added (SimMIM-style: a masked query carries only its
position).

**Initialisations** ([`INITS`][]):

- ``"scratch"``: PyTorch's default ``nn.Linear`` initialisation (uniform ±1/√fan_in for weights
  and biases), positional encodings N(0, 0.02²), mask token 0, LayerNorm 1 and 0, and a zero
  relative bias: attention starts near uniform (q·k of random weights is small), the state of a
  ViT trained from scratch.
- ``"local"``: the same, with the relative bias of every head of every block set to the
  Gaussian window ``−|δ|² / (2σ²)`` (σ in patches): every query starts attending its own
  neighbourhood, in every layer and head, whatever the content (a structured, "impulse"-like
  locality initialisation in the spirit of ConViT's local positional attention; the
  content logits of the random weights are a perturbation of about 0.3 in logit units).

The encoder returns tokens; the heads of an objective (a pixel decoder, a projection MLP) are
[`SeedLinear`][theorylab.vision.nets.SeedLinear] / [`SeedMLP`][theorylab.vision.nets.SeedMLP]
modules with the same seed axis.
"""

from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn import functional

__all__ = ["INITS", "SeedLinear", "SeedLayerNorm", "SeedMLP", "SeedBlock", "SeedViT",
           "relative_offsets", "local_bias", "clip_grad_norm_per_seed_", "decay_groups",
           "patchify_seeds"]

#: The initialisations of [`SeedViT`][] (module docstring).
INITS = ("scratch", "local")


def _uniform(gens: list[torch.Generator], shape: tuple[int, ...], bound: float) -> torch.Tensor:
    """(S, *shape) float32 uniform on [−bound, bound], row s from generator s."""
    return torch.stack([(torch.rand(shape, generator=g) * 2 - 1) * bound for g in gens])


def _normal(gens: list[torch.Generator], shape: tuple[int, ...], std: float) -> torch.Tensor:
    return torch.stack([torch.randn(shape, generator=g) * std for g in gens])


class SeedLinear(nn.Module):
    """``y[s] = x[s] @ W[s] + b[s]`` for S seeds; `x` ``(S, ..., fan_in)``. Initialised as
    ``nn.Linear`` (uniform ±1/√fan_in), seed s from generator s."""

    def __init__(self, gens: list[torch.Generator], fan_in: int, fan_out: int) -> None:
        super().__init__()
        k = 1.0 / math.sqrt(fan_in)
        self.weight = nn.Parameter(_uniform(gens, (fan_in, fan_out), k))
        self.bias = nn.Parameter(_uniform(gens, (fan_out,), k))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        S = x.shape[0]
        flat = x.reshape(S, -1, x.shape[-1])
        out = torch.baddbmm(self.bias[:, None, :], flat, self.weight)
        return out.reshape(*x.shape[:-1], out.shape[-1])


class SeedLayerNorm(nn.Module):
    """LayerNorm over the last axis with a per-seed affine map (1 and 0 at the start)."""

    def __init__(self, S: int, dim: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(S, dim))
        self.bias = nn.Parameter(torch.zeros(S, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shape = (x.shape[0],) + (1,) * (x.ndim - 2) + (x.shape[-1],)
        return (functional.layer_norm(x, x.shape[-1:]) * self.weight.reshape(shape)
                + self.bias.reshape(shape))


class SeedMLP(nn.Module):
    """Linear, GELU, linear, per seed."""

    def __init__(self, gens: list[torch.Generator], dim: int, hidden: int, out: int) -> None:
        super().__init__()
        self.fc1 = SeedLinear(gens, dim, hidden)
        self.fc2 = SeedLinear(gens, hidden, out)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(functional.gelu(self.fc1(x)))


def relative_offsets(g: int) -> torch.Tensor:
    """(g², g²) int64 index of the offset between query q and key k of a g × g grid (row-major
    patches) into a table of the (2g − 1)² offsets: ``(Δrow + g − 1)(2g − 1) + Δcol + g − 1``,
    Δ = key − query."""
    r = torch.arange(g).repeat_interleave(g)
    c = torch.arange(g).repeat(g)
    dr = r[None, :] - r[:, None]
    dc = c[None, :] - c[:, None]
    return (dr + g - 1) * (2 * g - 1) + dc + g - 1


def local_bias(g: int, sigma: float) -> torch.Tensor:
    """The (2g − 1)² table of the Gaussian window −|δ|²/(2σ²) over the offsets δ of a g × g
    grid (in patches), in the order of [`relative_offsets`][]."""
    if not (math.isfinite(sigma) and sigma > 0):
        raise ValueError(f"sigma: must be a finite number > 0 (got {sigma!r})")
    d = torch.arange(-(g - 1), g, dtype=torch.float64)
    sq = d[:, None] ** 2 + d[None, :] ** 2
    return (-sq / (2 * sigma ** 2)).reshape(-1).float()


class SeedBlock(nn.Module):
    """Pre-norm block: ``x + Attn(LN(x))`` then ``x + MLP(LN(x))``, for S seeds, with a learned
    relative-position bias table per head (``rel``: ``(S, heads, (2g − 1)²)``)."""

    def __init__(self, gens: list[torch.Generator], dim: int, heads: int, hidden: int,
                 grid: int) -> None:
        super().__init__()
        S = len(gens)
        self.heads, self.head_dim = heads, dim // heads
        self.norm1 = SeedLayerNorm(S, dim)
        self.qkv = SeedLinear(gens, dim, 3 * dim)
        self.proj = SeedLinear(gens, dim, dim)
        self.norm2 = SeedLayerNorm(S, dim)
        self.mlp = SeedMLP(gens, dim, hidden, dim)
        self.rel = nn.Parameter(torch.zeros(S, heads, (2 * grid - 1) ** 2))
        self.register_buffer("rel_index", relative_offsets(grid), persistent=False)

    def bias(self) -> torch.Tensor:
        """(S, heads, P, P) relative-position bias of the attention logits."""
        return self.rel[:, :, self.rel_index]

    def _qkv(self, x: torch.Tensor):
        S, B, N, D = x.shape
        qkv = self.qkv(x).reshape(S, B, N, 3, self.heads, self.head_dim)
        return qkv.permute(3, 0, 1, 4, 2, 5).unbind(0)  # each (S, B, heads, N, head_dim)

    def attention(self, x: torch.Tensor) -> torch.Tensor:
        """(S, B, heads, N, N) attention of this block's input tokens `x` (S, B, N, D)."""
        q, k, _ = self._qkv(self.norm1(x))
        logits = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)
        return (logits + self.bias()[:, None]).softmax(dim=-1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        S, B, N, D = x.shape
        q, k, v = self._qkv(self.norm1(x))
        out = functional.scaled_dot_product_attention(q, k, v, attn_mask=self.bias()[:, None])
        x = x + self.proj(out.transpose(2, 3).reshape(S, B, N, D))
        return x + self.mlp(self.norm2(x))


def patchify_seeds(images: torch.Tensor, p: int) -> torch.Tensor:
    """(S, B, C, H, W) images → (S, B, (H/p)(W/p), C·p²) patches, row-major."""
    S, B, C, H, W = images.shape
    x = images.reshape(S, B, C, H // p, p, W // p, p)
    return x.permute(0, 1, 3, 5, 2, 4, 6).reshape(S, B, (H // p) * (W // p), C * p * p)


class SeedViT(nn.Module):
    """S ViT encoders (module docstring) on ``image_size``² images of ``in_chans`` channels cut
    into ``patch_size``² patches.

    **Arguments:**

    - `seeds`: one model per seed; seed s's initial weights come from a generator seeded by s.
    - `image_size`, `patch_size` (divides it), `in_chans`: the images.
    - `dim` (divisible by `heads`), `depth`, `heads`, `mlp_ratio`: the blocks.
    - `init`: one of [`INITS`][]; `sigma`: the width of the ``"local"`` window in patches.
    """

    def __init__(self, seeds: tuple[int, ...], *, image_size: int = 28, patch_size: int = 4,
                 in_chans: int = 1, dim: int = 48, depth: int = 3, heads: int = 4,
                 mlp_ratio: float = 2.0, init: str = "local", sigma: float = 1.0) -> None:
        super().__init__()
        if image_size % patch_size:
            raise ValueError(f"patch_size: must divide image_size={image_size} "
                             f"(got {patch_size})")
        if dim % heads:
            raise ValueError(f"heads: must divide dim={dim} (got {heads})")
        if init not in INITS:
            raise ValueError(f"init: must be one of {list(INITS)} (got {init!r})")
        gens = [torch.Generator().manual_seed(int(s)) for s in seeds]
        S = len(gens)
        self.seeds = tuple(int(s) for s in seeds)
        self.patch_size, self.grid = patch_size, image_size // patch_size
        self.num_patches = self.grid ** 2
        self.dim, self.heads, self.init = dim, heads, init
        self.embed = SeedLinear(gens, in_chans * patch_size ** 2, dim)
        self.pos = nn.Parameter(_normal(gens, (self.num_patches, dim), 0.02))
        self.mask_token = nn.Parameter(torch.zeros(S, dim))
        hidden = int(round(dim * mlp_ratio))
        self.blocks = nn.ModuleList(SeedBlock(gens, dim, heads, hidden, self.grid)
                                    for _ in range(depth))
        self.norm = SeedLayerNorm(S, dim)
        if init == "local":
            table = local_bias(self.grid, sigma)
            with torch.no_grad():
                for blk in self.blocks:
                    blk.rel.copy_(table.expand_as(blk.rel))

    def tokens(self, images: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        """(S, B, P, dim) input tokens of images (S, B, C, H, W); `mask` (S, B, P) bool: those
        patches' embeddings replaced by the mask token."""
        x = self.embed(patchify_seeds(images, self.patch_size))
        if mask is not None:
            x = torch.where(mask[..., None], self.mask_token[:, None, None, :].to(x.dtype), x)
        return x + self.pos[:, None]

    def forward(self, images: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        """(S, B, P, dim) output tokens (after the final LayerNorm)."""
        x = self.tokens(images, mask)
        for blk in self.blocks:
            x = blk(x)
        return self.norm(x)

    @torch.no_grad()
    def attentions(self, images: torch.Tensor) -> torch.Tensor:
        """(depth, S, B, heads, P, P) attention of every block on clean (unmasked) images."""
        x = self.tokens(images)
        out = []
        for blk in self.blocks:
            out.append(blk.attention(x))
            x = blk(x)
        return torch.stack(out)


def clip_grad_norm_per_seed_(params, max_norm: float) -> torch.Tensor:
    """Scale the gradients of the seed-stacked `params` (leading axis S) so that each seed's
    gradient norm over all of them is at most `max_norm` (as ``clip_grad_norm_`` does for
    one model); returns the (S,) norms before clipping."""
    grads = [p.grad for p in params if p.grad is not None]
    if not grads:
        return torch.zeros(0)
    sq = sum(g.reshape(g.shape[0], -1).pow(2).sum(1) for g in grads)
    norms = sq.sqrt()
    scale = (max_norm / (norms + 1e-6)).clamp(max=1.0)
    for g in grads:
        g.mul_(scale.reshape((-1,) + (1,) * (g.ndim - 1)))
    return norms


def decay_groups(model: nn.Module, weight_decay: float) -> list[dict]:
    """AdamW parameter groups: weight decay on the weight matrices (``SeedLinear.weight``,
    three axes with the seed axis), none on biases, LayerNorms, positional encodings, the
    mask token and the relative-position bias (decaying the bias would pull every head
    towards uniform attention, a drift towards global attention that is the same for every
    objective and not the objective's)."""
    decay, rest = [], []
    for name, p in model.named_parameters():
        (decay if name.endswith("weight") and p.ndim == 3 else rest).append(p)
    return [{"params": decay, "weight_decay": weight_decay},
            {"params": rest, "weight_decay": 0.0}]
