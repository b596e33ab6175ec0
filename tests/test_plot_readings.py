"""The plots a researcher shows (``theorylab.analysis.plots`` and ``.diagrams``): a reading
against a sweep axis with seed intervals and the fitted slope, heat-map cells without Phase I
in a colour and legend entry of their own, and the parameters' symbols on the axes."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import theorylab.analysis.diagrams as diagrams
import theorylab.analysis.plots as plots
from theorylab.analysis import (
    linear_law,
    plot_reading,
    power_law,
    reading_points,
    seed_interval,
    symbol,
)
from theorylab.analysis.labels import axis_label
from theorylab.commands import main


def _ladder_table(path: Path, slope: float, noise: float) -> Path:
    """A bare sweep table (``.csv``): y = 3·P^slope·e^(noise·z) for P in 16…256, 3 seeds."""
    rng = np.random.default_rng(7)
    P = np.repeat([16, 32, 64, 128, 256], 3)
    seed = np.tile([0, 1, 2], 5)
    y = 3.0 * P.astype(float) ** slope * np.exp(noise * rng.standard_normal(P.size))
    pd.DataFrame({"data.P": P, "train.seed": seed, "t_I": y}).to_csv(path, index=False)
    return path


@pytest.fixture
def drawn(monkeypatch, tmp_path):
    """The figures the plots save (their PNGs are still written)."""
    figures = []
    real = plots.save

    def keep(fig, out, **kw):
        figures.append(fig)
        return real(fig, out, **kw)

    monkeypatch.setattr(plots, "save", keep)
    monkeypatch.setattr(diagrams, "save", keep)
    return figures


def test_power_law_recovers_a_known_slope_and_its_interval():
    P = np.repeat([16.0, 32.0, 64.0, 128.0, 256.0], 3)
    exact = power_law(pd.DataFrame({"P": P, "y": 3.0 * P ** 0.75}), "P", "y")
    # noise-free data: the slope to rounding (ln of float64 values: ~1e-15 relative)
    assert exact["slope"] == pytest.approx(0.75, abs=1e-12)
    assert exact["slope_hi"] - exact["slope_lo"] < 1e-10
    rng = np.random.default_rng(0)
    noisy = pd.DataFrame({"P": P,
                          "y": 3.0 * P ** 0.75 * np.exp(0.05 * rng.standard_normal(15))})
    fit = power_law(noisy, "P", "y")
    # the interval is slope ± t(0.975, n − 2)·se, the textbook 95 % interval of an OLS slope
    half = stats.t.ppf(0.975, 13) * fit["slope_se"]
    assert fit["slope_lo"] == pytest.approx(fit["slope"] - half, rel=1e-12)
    assert fit["n"] == 15 and abs(fit["slope"] - 0.75) < 4 * fit["slope_se"]
    # and it covers the true slope in 95 % of repeated experiments: 400 draws, binomial sd
    # 1.1 %, so [91.5 %, 98.5 %] is ±3.2 sd (a fixed generator: the count is deterministic)
    covered = 0
    for _ in range(400):
        y = 3.0 * P ** 0.75 * np.exp(0.05 * rng.standard_normal(15))
        f = power_law(pd.DataFrame({"P": P, "y": y}), "P", "y")
        covered += f["slope_lo"] < 0.75 < f["slope_hi"]
    assert 366 <= covered <= 394, covered
    # a straight line: the linear fit of y = 2 − 0.5 x
    line = linear_law(pd.DataFrame({"x": [1.0, 2, 3, 4], "y": [1.5, 1.0, 0.5, 0.0]}), "x", "y")
    assert line["slope"] == pytest.approx(-0.5, abs=1e-12)


def test_seed_intervals_are_declared_by_the_number_of_seeds():
    mean, lo, hi, kind = seed_interval([1.0, 2.0, 3.0])
    half = stats.t.ppf(0.975, 2) * 1.0 / math.sqrt(3)  # sd 1 of three values
    assert (mean, kind) == (2.0, "t95") and lo == pytest.approx(2 - half, rel=1e-12)
    assert seed_interval([1.0, 5.0, np.nan]) == (3.0, 1.0, 5.0, "minmax")
    assert seed_interval([4.0]) == (4.0, 4.0, 4.0, "one")
    assert seed_interval([np.nan])[3] == "none"


def test_reading_points_keep_the_reason_of_a_missing_phase():
    rows = pd.DataFrame({"P": [16, 16, 64, 64], "value": [np.nan, np.nan, 5.0, 7.0],
                         "reason": ["no Phase I in this run: ...", "no Phase I in this run: ...",
                                    "", ""]})
    points = reading_points(rows, "P").set_index("P")
    assert points.loc[16, "finite"] == 0 and points.loc[16, "missing"].startswith("no Phase I")
    assert points.loc[64, ["mean", "low", "high", "kind"]].tolist() == [6.0, 5.0, 7.0, "minmax"]


def test_plot_reading_prints_the_fitted_slope_and_the_seed_interval(tmp_path, drawn):
    table = _ladder_table(tmp_path / "ladder.csv", slope=0.5, noise=0.02)
    out = plot_reading(table, "t_I", "data.P", log=True)
    assert out == tmp_path / "ladder-t_I-data.P.png" and out.read_bytes()[:4] == b"\x89PNG"
    ax = drawn[-1].axes[0]
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    fit = power_law(pd.read_csv(table), "data.P", "t_I")
    shown = f"{fit['slope']:.3f} ± {(fit['slope_hi'] - fit['slope_lo']) / 2:.3f}"
    assert any(f"log–log slope {shown}" in t and "15 runs" in t for t in legend), legend
    assert any("95 % t-interval of the mean over 3 seeds" in t for t in legend), legend
    assert ax.get_xscale() == ax.get_yscale() == "log"
    assert ax.get_xlabel() == "data.P"  # a bare table names no paper: the key itself
    # the command line: the same plot, the fit and --log
    assert main(["plot", str(table), "--reading", "t_I", "--x", "data.P", "--log", "--out",
                 str(tmp_path / "cli.png")]) == 0


def test_symbols_of_config_keys_columns_and_readings():
    assert symbol("data.C1", "huang2024") == "$C_1$"
    assert symbol("model.gamma", "huang2024") == r"$\gamma$"
    assert symbol("data.Delta", "huang2024") == r"$\Delta$"
    assert symbol("train.lr_v", "jelassi2022") == r"$\eta_v$"
    assert symbol("train.lr") == r"$\eta$"            # a key every paper has
    assert symbol("data.unknown", "huang2024") == "data.unknown"  # none: the key itself
    assert axis_label("t_I", "huang2024") == r"$t_{\rm I}$ (steps)"  # a time reading
    assert axis_label("phi_glob_end_I", "huang2024") == r"$\Phi_{\rm glob}(t_{\rm I})$"


@pytest.fixture(scope="module")
def grid_sweep(tmp_path_factory) -> Path:
    """huang2024 at P = 16 over C1 (Δ < 0 at C1 = 4: no Phase I) × γ, 8 steps each."""
    from theorylab import sweep

    store = tmp_path_factory.mktemp("grid") / "store"
    sweep({"base_config": {"experiment": {"paper": "huang2024"},
                           "data": {"P": 16, "K": 1, "C": 2, "areas": "contiguous"},
                           "train": {"engine": "population-laplace", "z_nodes": 4, "lr": 32.0,
                                     "steps": 8}},
           "sweep": {"axes": {"data.C1": [4, 12], "model.gamma": [0.3, 0.6]}, "keep": "final"}},
          out=store, workers=0, progress=False)
    return store


def test_a_heat_map_cell_without_phase_I_has_its_own_colour_and_legend(grid_sweep, tmp_path,
                                                                         drawn):
    from matplotlib.colors import to_rgba
    from matplotlib.patches import Rectangle

    out = tmp_path / "tI.png"
    assert main(["plot", str(grid_sweep), "--value", "t_I", "--x", "data.C1", "--y",
                 "model.gamma", "--out", str(out)]) == 0
    ax = drawn[-1].axes[0]
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("$C_1$", r"$\gamma$")
    assert not ax.xaxis._major_tick_kw.get("gridOn", False) and not any(
        line.get_visible() for line in ax.get_xgridlines() + ax.get_ygridlines())
    cells = [p for p in ax.patches if isinstance(p, Rectangle)]
    # C1 = 4 (Δ < 0): both γ cells hatched grey, at x = 0; C1 = 12 has t_I and no patch
    assert sorted((round(p.get_x() + 0.5), round(p.get_y() + 0.5)) for p in cells) == [
        (0, 0), (0, 1)]
    grey = to_rgba("#bdbdbd")
    assert all(p.get_facecolor() == grey and p.get_hatch() == "//" for p in cells)
    image = ax.images[0]
    assert bool(np.ma.getmaskarray(image.get_array())[:, 0].all())  # no colour under them
    assert not any(np.allclose(image.cmap(v)[:3], grey[:3], atol=0.05)
                   for v in np.linspace(0, 1, 256))  # grey is no colour of the map
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == ["no Phase I"]
    # the reading against C1: the same runs as crosses on the floor, with their legend entry
    assert main(["plot", str(grid_sweep), "--reading", "t_I", "--x", "data.C1", "--out",
                 str(tmp_path / "r.png")]) == 0
    legend = [t.get_text() for t in drawn[-1].axes[0].get_legend().get_texts()]
    assert any(t.endswith("no Phase I") for t in legend), legend


def test_a_heat_map_writes_each_cells_seed_spread(tmp_path, drawn):
    """A cell over three seeds: its mean and ± half its 95 % t-interval, said in the title."""
    seeds = [0, 1, 2]
    table = pd.DataFrame([{"data.q": q, "data.d": d, "train.seed": s, "loss": q * d + s}
                          for q in (0.1, 0.3) for d in (10, 20) for s in seeds])
    table.to_csv(tmp_path / "t.csv", index=False)
    assert main(["plot", str(tmp_path / "t.csv"), "--value", "loss", "--x", "data.q", "--y",
                 "data.d"]) == 0
    ax = drawn[-1].axes[0]
    half = stats.t.ppf(0.975, 2) * 1.0 / math.sqrt(3)  # seeds add 0, 1, 2: sd 1
    texts = sorted(t.get_text() for t in ax.texts)
    assert texts[0] == f"2\n±{half:.2g}"  # q = 0.1, d = 10: 0.1·10 + mean(0, 1, 2)
    assert "mean over 3 seeds" in ax.get_title() and "95 % t-interval" in ax.get_title()
