"""Tests of the synthetic figures (Figures 3, 4 and theorylab's phases / phase diagram /
transfer): registration (and the former ids), a quick render of Figure 3, the phase detector
and the seed helper."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd

from theorylab.core import figures
from theorylab.core.figures import run_figures
from theorylab.jelassi2022.config import DataConfig
from theorylab.jelassi2022.data import make_wstar
from theorylab.jelassi2022.figures._common import positive_v0_seed
from theorylab.jelassi2022.figures._fig4 import fig4_config
from theorylab.jelassi2022.observables import fair_error
from theorylab.papers import load_all_figures

load_all_figures()  # every paper's figures registered

MY_IDS = {  # id → the module of the figure
    "jelassi2022-fig3": "_fig3",
    "jelassi2022-fig4": "_fig4",
    "jelassi2022-phases": "_phases",
    "jelassi2022-phase-diagram": "_phase_diagram",
    "jelassi2022-transfer": "_transfer",
}


def test_synthetic_ids_are_registered_with_captions():
    ids = [spec.id for spec in figures.list_figures()]
    for fid in MY_IDS:
        assert fid in ids
        spec = figures.get_figure(fid)
        assert spec.caption and spec.data_source and spec.title
        assert spec.module == f"theorylab.jelassi2022.figures.{MY_IDS[fid]}"
    assert figures.get_figure("jelassi2022-fig3").paper_figure == "Figure 3"
    assert figures.get_figure("jelassi2022-fig4").paper_figure == "Figure 4"
    for fid in ("jelassi2022-fig4", "jelassi2022-phases", "jelassi2022-transfer"):
        assert "RECONSTRUCTED" in figures.get_figure(fid).caption


def test_former_ids_still_name_the_renamed_figures():
    """theorylab's own figures were renamed to the paper's prefix; the former ids keep working
    for one release (docs/reproducing.md)."""
    for old in ("phases", "phase-diagram", "transfer"):
        assert figures.resolve_id(f"theorylab-{old}") == f"jelassi2022-{old}"
        assert figures.get_figure(f"theorylab-{old}").id == f"jelassi2022-{old}"
        assert figures.renamed_ids()[f"theorylab-{old}"] == f"jelassi2022-{old}"
    assert figures.resolve_id("jelassi2022-fig3") == "jelassi2022-fig3"


def test_quick_fig3_renders_pdf_and_png(tmp_path):
    manifest = run_figures(["jelassi2022-fig3"], out=tmp_path, quick=True)
    for ext in ("pdf", "png"):
        path = tmp_path / f"jelassi2022-fig3.{ext}"
        assert path.exists() and path.stat().st_size > 1000
    entry = json.loads((tmp_path / "manifest.json").read_text())["figures"]["jelassi2022-fig3"]
    head = entry["headline"]
    assert head["label"] == 1 and head["n_minus"] > head["n_plus"]
    assert head["n_plus"] >= 4  # the whole signal set (C = 4) carries y = +1
    assert manifest["figures"]["jelassi2022-fig3"]["headline"] == head


def _synthetic_trajectory() -> pd.DataFrame:
    """Three phases by construction: A static until 1000, γ − ρ rises to 3 by 5000, the error
    settles at 0.11 from 6000 on."""
    step = np.unique(np.round(np.geomspace(1, 20_000, 200)).astype(int))
    step = np.concatenate([[0], step])
    t = step.astype(float)
    gap = np.where(t < 1000, 0.0, 3.0 * np.clip((t - 1000) / 4000, 0, 1))
    err = np.where(t < 6000, 0.14, 0.11)
    return pd.DataFrame({"step": step, "gamma": gap / 2, "rho": -gap / 2, "error": err,
                         "tie_mass": np.zeros_like(t), "error_fair": err})


def test_phase_readings_on_a_synthetic_trajectory():
    """t_I where α first reaches 10‖v⁰‖, t_II where γ − ρ first reaches 1, t_III from that t_II
    where the error settles at its target; no config: t_PA from γ, ρ is not read (NaN), a
    target error gives t_III; a flat run has no phase time."""
    from theorylab.jelassi2022.phases import read_phases

    tr = _synthetic_trajectory()
    step = tr["step"].to_numpy()
    path = tr.assign(alpha=np.where(step >= 2000, 0.2, 0.01), beta=0.0)
    ph = read_phases(path, target_error=0.11)
    assert ph["t_I"] == step[step >= 2000][0]
    gap = (tr.gamma - tr.rho).to_numpy()
    assert ph["t_II"] == step[gap >= 1.0][0]  # γ − ρ = 3(t − 1000)/4000 reaches 1 at 2333
    assert ph["t_III"] == step[step >= 6000][0]
    assert math.isnan(ph["t_PA"])
    flat = path.assign(gamma=0.0, rho=0.0, alpha=0.01)
    assert all(math.isnan(read_phases(flat, target_error=0.11)[k])
               for k in ("t_I", "t_II", "t_III"))


def test_fair_error_breaks_ties_by_a_coin():
    tr = pd.DataFrame({"error": [0.2, 0.1], "tie_mass": [0.1, np.nan]})
    assert np.allclose(fair_error(tr["error"], tr["tie_mass"]), [0.15, 0.1])


def test_positive_v0_seed_gives_positive_alignment():
    cfg = fig4_config(quick=True, device="cpu", seed=0)
    seed = cfg.train.seed
    assert seed == positive_v0_seed(cfg.data, cfg.train.v0_scale, 0)
    g = np.random.default_rng(np.random.SeedSequence([seed, 12])).standard_normal(cfg.data.d)
    assert g @ make_wstar(cfg.data) > 0
    data = DataConfig(D=10, C=2, partition=[[0, 8], [1, 5], [2, 4], [3, 7], [6, 9]], seed=1)
    assert positive_v0_seed(data, 0.05, 3) >= 3


def test_phase_times_do_not_depend_on_the_horizon():
    """A longer run with the same prefix, ending at another gap, gives the same times (the
    readings are absolute thresholds)."""
    from theorylab.jelassi2022.phases import read_phases

    tr = _synthetic_trajectory()
    step = tr["step"].to_numpy()
    path = tr.assign(alpha=np.where(step >= 2000, 0.2, 0.01))
    longer = path.copy()
    longer.loc[longer.index[-1], "gamma"] += 10.0
    a, b = read_phases(path, target_error=0.11), read_phases(longer, target_error=0.11)
    assert (a["t_I"], a["t_II"], a["t_III"]) == (b["t_I"], b["t_II"], b["t_III"])
