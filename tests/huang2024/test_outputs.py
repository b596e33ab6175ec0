"""The huang2024 run outputs as documented: every trajectory column has a row in
docs/huang2024-outputs.md, the config reference gives the local size's default as the config
computes it, and a run without L* says why in its summary line."""

from __future__ import annotations

import re
from pathlib import Path

from theorylab.huang2024 import config_from_dict
from theorylab.huang2024.trainer import TRAJECTORY_SCHEMA, run_experiment

DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_every_trajectory_column_is_documented():
    text = (DOCS / "huang2024-outputs.md").read_text()
    rows = set(re.findall(r"`(\w+)`", "\n".join(line.split("|")[1] for line in text.splitlines()
                                                 if line.startswith("| `"))))
    missing = [c for c in TRAJECTORY_SCHEMA if c not in rows]
    assert not missing, missing


def test_config_reference_local_size_default():
    # P = 64, κ_s = 0.8 (C1 = 28), κ_c = 0.25 (C = 3; round(P^κ_s) would be 28)
    cfg = config_from_dict({"data": {"P": 64, "kappa_s": 0.8, "kappa_c": 0.25}}).resolved()
    assert (cfg.data.C1, cfg.data.C) == (round(64 ** 0.8), round(64 ** 0.25))
    row = [line for line in (DOCS / "config.md").read_text().splitlines()
           if line.startswith("| `C` |") and "round(P^" in line]
    assert len(row) == 1 and "unset: `round(P^κ_c)`" in row[0]


def _summary(mask_keys: bool) -> str:
    cfg = config_from_dict({
        "data": {"P": 6, "C1": 4, "C": 2, "z_law": "values", "z_values": [1.0]},
        "model": {"mask_keys": mask_keys},
        "train": {"engine": "population-exact", "steps": 1}}).resolved()
    return run_experiment(cfg, progress=False).summary()


def test_summary_says_why_excess_is_missing():
    out = _summary(False)
    assert "excess=n/a (L* has no closed form with masked keys left out" in out
    assert "nan" not in out.split("excess=")[1].split(")")[0]
    assert re.search(r"excess=\d", _summary(True))
