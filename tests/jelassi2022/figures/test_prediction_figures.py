"""The derived predictions drawn on the synthetic figures, the phase labels, and Figure 5's
generated reading."""

import math
from pathlib import Path

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

from theorylab.core.figures import FigureContext, get_figure, new_figure  # noqa: E402
from theorylab.jelassi2022.figures._common import (  # noqa: E402
    draw_phase_lines,
    draw_predictions,
    measured_against_predicted,
    predicted_curves,
)
from theorylab.jelassi2022.figures._fig5 import fig5_reading  # noqa: E402
from theorylab.jelassi2022.predictions import phase_i, phase_ii  # noqa: E402
from theorylab.jelassi2022.setups import reference_config  # noqa: E402


def _overlap(a, b) -> bool:
    return not (a.x1 <= b.x0 or b.x1 <= a.x0 or a.y1 <= b.y0 or b.y1 <= a.y0)


def test_phase_labels_do_not_overlap_when_times_are_close():
    # the reference run's operational times: t_II and t_III 3% apart
    fig = new_figure((5.5, 3.8))
    ax = fig.subplots()
    ax.set_xscale("log")
    ax.set_xlim(1, 2e4)
    draw_phase_lines(ax, {"t_I": 1448.0, "t_II": 5657.0, "t_III": 5848.0, "t_x": math.nan})
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    r = canvas.get_renderer()
    boxes = [t.get_window_extent(r) for t in ax.texts]
    assert len(boxes) == 3
    assert not any(_overlap(boxes[i], boxes[j]) for i in range(3) for j in range(i + 1, 3))
    # no phase line runs through a label (a label written rightwards from t_II would be crossed
    # by the t_III line 3% further right)
    xs = [ax.transData.transform((v, 1.0))[0] for v in (1448.0, 5657.0, 5848.0)]
    for b in boxes:
        assert not any(b.x0 + 0.5 < x < b.x1 - 0.5 for x in xs)


def test_predicted_curves_follow_the_derived_expressions():
    cfg = reference_config(steps=20_000).resolved()
    pred = predicted_curves(cfg, 20_000)
    p1, p2 = phase_i(cfg), phase_ii(cfg)
    assert pred["t_blowup"] == p1.t_blowup and pred["alpha_star"] == p2.alpha_star
    st, a = pred["steps"], pred["alpha"]
    assert a[0] == p1.alpha(st[0])  # phase I: the blow-up solution
    assert np.all(a <= pred["alpha_star"]) and a[-1] == pred["alpha_star"]  # then α*
    late = st > pred["t_alpha_star"]
    gap = pred["gap"][late]
    ok = np.isfinite(gap)
    # phase II: linear at r_II, cut where γ − ρ would pass 1
    np.testing.assert_allclose(np.diff(gap[ok]) / np.diff(st[late][ok]), p2.rate, rtol=1e-9)
    assert np.nanmax(pred["gap"]) <= 1.0 and not ok.all()
    fig = new_figure((4, 3))
    ax = fig.subplots()
    draw_predictions(ax, pred, 20_000)
    styles = [ln.get_linestyle() for ln in ax.lines]
    # dashed α, dotted linear γ − ρ, dash-dot slow flow, and the t_blowup mark
    assert len(ax.lines) == 4 and all(st != "-" for st in styles[:3])
    # the slow flow reaches γ − ρ = 1 at its t_II, after the blow-up
    assert pred["slow_gap"][-1] == pytest.approx(1.0, abs=1e-6)
    assert pred["slow_steps"][0] == pred["t_blowup"] < pred["t_II_slow"]


def test_measured_against_predicted_on_a_trajectory():
    import pandas as pd

    pred = {"alpha_star": 2.0}
    tr = pd.DataFrame({"step": [0, 10, 100, 200, 400], "alpha": [0.1, 0.5, 1.99, 2.0, 1.9],
                       "gamma": [0, 0, 0.0, 0.1, 0.4], "rho": [0, 0, 0.0, -0.1, -0.2]})
    m = measured_against_predicted(tr, pred)
    assert m["t_alpha_half_star"] == 100 and m["alpha_max"] == 2.0
    assert m["rate_window"] == [100, 200] and m["rate_II"] == 0.2 / 100


GRID = [2, 4, 8, 16]


def _acc(vit, vgg, res):
    return {"ViT (patch 2)": dict(zip(GRID, vit)), "VGG-like": dict(zip(GRID, vgg)),
            "ResNet-like": dict(zip(GRID, res))}


def test_fig5_reading_says_not_reproduced_with_the_measured_numbers():
    # the committed full run's accuracies (fractions) and correlation
    acc = _acc([0.79, 0.7905, 0.787, 0.794], [0.859, 0.867, 0.866, 0.8815],
               [0.8605, 0.859, 0.8655, 0.8735])
    text = fig5_reading(acc, GRID, 0.019)
    assert text[0].startswith("The paper's effect is not reproduced at this scale")
    assert "loses 2.2 points" in text[0] and "ResNet-like CNN loses 1.3 points" in text[0]
    assert "about 30 and 23" in text[0]
    assert "below the weaker CNN at every g" in text[0]
    assert "+0.019" in text[1] and "no recovered structure" in text[1]


def test_fig5_reading_says_reproduced_on_paper_like_numbers():
    acc = _acc([0.636, 0.636, 0.637, 0.636], [0.467, 0.570, 0.666, 0.762],
               [0.573, 0.662, 0.732, 0.799])
    text = fig5_reading(acc, GRID, -0.6)
    assert text[0].startswith("The paper's effect is reproduced at this scale")
    assert "carry the original grid's neighbourhoods" in text[1]


def test_fig2_x_label_names_the_optimiser(tmp_path):
    res = get_figure("jelassi2022-fig2").func(FigureContext(out=Path(tmp_path), quick=True))
    label = res.figure.axes[0].get_xlabel()
    assert label == "Adam step (full batch)"
