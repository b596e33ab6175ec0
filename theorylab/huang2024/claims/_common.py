"""What the huang2024 claims share beyond the MAE runs: a table written out per group, a
verdict's reasons under a label, and the masked-keys reading in words."""

from __future__ import annotations

import pandas as pd

from theorylab.core.claims.verdict import Verdict

__all__ = ["per_group", "labelled", "keys"]


def per_group(t: pd.DataFrame, item, by="family", head=str, *, series: bool = False) -> str:
    """``head(key): item(row), item(row), …`` per group of `t` by `by` (in order of
    appearance), joined by "; ". `item` gets the rows of ``itertuples`` (with `series`: the
    rows of ``iterrows``, for columns named like keywords)."""
    return "; ".join(f"{head(k)}: " + ", ".join(
        item(r) for r in ((r for _, r in g.iterrows()) if series else g.itertuples()))
        for k, g in t.groupby(by, sort=False))


def labelled(label: str, v: Verdict) -> Verdict:
    """`v` with each reason under `label`, judged as the part `label`."""
    return Verdict(v.verdict, tuple(f"{label}: {r}" for r in v.reasons), (label,))


def keys(mask_keys) -> str:
    """The masked-keys reading in words: "in" (in the softmax) or "out"."""
    return "in" if mask_keys else "out"
