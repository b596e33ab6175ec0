"""What the huang2024 claims share beyond the MAE runs: a table written out per group, a
verdict's reasons under a label, the masked-keys reading in words, and the formats of an
interval and of a value per rung."""

from __future__ import annotations

import pandas as pd

from theorylab.core.claims.verdict import Verdict

__all__ = ["per_group", "labelled", "keys", "interval", "slashed"]

def per_group(t: pd.DataFrame, item, by="family", head=str, *, series: bool = False) -> str:
    """``head(key): item(row), item(row), …`` per group of `t` by `by` (in order of
    appearance), joined by "; ". `item` gets the rows of ``itertuples`` (with `series`: the
    rows of ``iterrows``, for columns named like keywords)."""
    return "; ".join(f"{head(k)}: " + ", ".join(
        item(r) for r in ((r for _, r in g.iterrows()) if series else g.itertuples()))
        for k, g in t.groupby(by, sort=False))


def labelled(label: str, v: Verdict, *more: str) -> Verdict:
    """`v` with each reason under `label` (then the reasons `more` as they are), judged as the
    part `label`."""
    return Verdict(v.verdict, tuple(f"{label}: {r}" for r in v.reasons) + more, (label,))


def keys(mask_keys) -> str:
    """The masked-keys reading in words: "in" (in the softmax) or "out"."""
    return "in" if mask_keys else "out"


def interval(r, name: str, fmt: str = ".3f") -> str:
    """``"m [lo, hi]"`` of the columns `name`, `name`_lo and `name`_hi of a row `r`."""
    m, lo, hi = (getattr(r, name + k) for k in ("", "_lo", "_hi"))
    return f"{m:{fmt}} [{lo:{fmt}}, {hi:{fmt}}]"


def slashed(t: pd.DataFrame, name: str, fmt: str) -> str:
    """The column `name` of the rows of `t`, each formatted by `fmt`, joined by "/"."""
    return "/".join(f"{x:{fmt}}" for x in t[name])
