"""Small VGG-like and ResNet-like CNNs in plain torch (stand-ins for Figure 5's VGG and ResNet)."""

from __future__ import annotations

import torch
from torch import nn

__all__ = ["SmallResNet", "SmallVGG"]


def _conv_bn_relu(cin: int, cout: int) -> list[nn.Module]:
    return [nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU()]


class SmallVGG(nn.Module):
    """VGG-like CNN: stages of two 3×3 conv-BN-ReLU layers, each followed by 2×2 max pooling.

    **Arguments:**

    - `num_classes`: output logits.
    - `in_chans`: image channels.
    - `widths`: channels of each stage (one max-pool per stage), then global average pooling
      and a linear classifier.
    """

    def __init__(self, num_classes: int, *, in_chans: int = 1,
                 widths: tuple[int, ...] = (16, 32, 64)) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        cin = in_chans
        for w in widths:
            layers += _conv_bn_relu(cin, w) + _conv_bn_relu(w, w) + [nn.MaxPool2d(2)]
            cin = w
        self.features = nn.Sequential(*layers)
        self.head = nn.Linear(cin, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x).mean(dim=(-2, -1)))


class _BasicBlock(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.short = nn.Identity()
        if stride != 1 or cin != cout:
            self.short = nn.Sequential(nn.Conv2d(cin, cout, 1, stride=stride, bias=False),
                                       nn.BatchNorm2d(cout))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.relu(self.bn1(self.conv1(x)))
        return torch.relu(self.bn2(self.conv2(out)) + self.short(x))


class SmallResNet(nn.Module):
    """ResNet-like CNN: a 3×3 stem, then one basic residual block per stage (stride 2 after the
    first stage), global average pooling and a linear classifier.

    **Arguments:**

    - `num_classes`: output logits.
    - `in_chans`: image channels.
    - `widths`: channels of each stage.
    """

    def __init__(self, num_classes: int, *, in_chans: int = 1,
                 widths: tuple[int, ...] = (16, 32, 64)) -> None:
        super().__init__()
        self.stem = nn.Sequential(*_conv_bn_relu(in_chans, widths[0]))
        ins = (widths[0], *widths[:-1])  # each stage's input width
        self.blocks = nn.Sequential(*(_BasicBlock(c, w, stride=1 if i == 0 else 2)
                                      for i, (c, w) in enumerate(zip(ins, widths))))
        self.head = nn.Linear(widths[-1], num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.blocks(self.stem(x)).mean(dim=(-2, -1)))
