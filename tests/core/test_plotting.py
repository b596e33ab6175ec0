"""theorylab.core.plotting: which columns get a panel, the step axis, the phase marks; and
theorylab.core.markdown: the stray ``*`` of formulas written in text."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from theorylab.core.markdown import escape_stray_stars, stray_stars
from theorylab.core.plotting import (
    ROUNDING,
    choose_panels,
    constant_to_rounding,
    equal_to_rounding,
    log_steps,
    phase_marks,
)


def test_rounding_noise_and_duplicates_are_notes_not_panels():
    steps = np.arange(50)
    table = pd.DataFrame({
        "step": steps, "alpha": np.linspace(0.01, 2.0, 50),
        "beta": 4e-16 * np.sin(steps),               # rounding around 0
        "cos": 1.0 - 1e-16 * (steps % 2),             # ≡ 1
        "phi_own_gq": np.tanh(steps / 10.0),
        "phi_glob_gq": np.tanh(steps / 10.0) + 1e-15,  # equal to rounding
        "gamma": steps ** 2 / 100.0})
    panels = choose_panels(table, ["alpha", "beta", "cos", "phi_own_gq", "phi_glob_gq", "gamma"])
    assert panels.panels == [["alpha"], ["phi_own_gq", "phi_glob_gq"], ["gamma"]]
    assert set(panels.constant) == {"beta", "cos"}
    assert any("beta ≈ 0" in n and "cos ≈ 1" in n for n in panels.notes)
    assert any("phi_own_gq = phi_glob_gq" in n for n in panels.notes)
    limited = choose_panels(table, ["alpha", "gamma", "phi_own_gq"], limit=2)
    assert len(limited.panels) == 2 and "phi_own_gq" in limited.notes[-1]


def test_rounding_thresholds_are_relative_to_the_scale():
    assert constant_to_rounding([1e6, 1e6 + 1e-5])        # 1e-11 of the scale
    assert not constant_to_rounding([0.0, 1e-8])           # small but real
    assert constant_to_rounding([math.nan, math.nan])
    assert equal_to_rounding([1.0, math.nan], [1.0 + ROUNDING / 2, math.nan])
    assert not equal_to_rounding([1.0, math.nan], [1.0, 2.0])
    assert not equal_to_rounding([0.0, 1.0], [0.0, 1.001])


def test_log_step_axis_for_plateau_and_escape_only():
    log_grid = np.unique(np.round(np.geomspace(1, 20000, 60))).astype(int)
    steps = np.concatenate([[0], log_grid])
    escape = 1.0 / (1.0 + np.exp(-(steps - 1300) / 50.0))
    assert log_steps(pd.DataFrame({"step": steps, "a": escape}), [["a"]])  # a log record
    linear = np.arange(0, 20001, 100)
    early = pd.DataFrame({"step": linear, "a": 1 - np.exp(-linear / 200.0)})  # fast start
    late = pd.DataFrame({"step": linear, "a": linear / 20000.0})               # steady
    assert log_steps(early, [["a"]]) and not log_steps(late, [["a"]])
    short = pd.DataFrame({"step": np.arange(40), "a": np.exp(-np.arange(40))})
    assert not log_steps(short, [["a"]])  # less than two decades of steps


def test_phase_marks_keep_reached_times_in_order():
    marks = phase_marks({"t_II": 40.0, "t_I": 12, "T_star": math.nan, "phase_I": True,
                         "t_far": 1e9, "phi_glob_end_I": -0.8}, [0, 10, 100])
    assert marks == {"t_I": 12.0, "t_II": 40.0}
    assert phase_marks(None, [0, 1]) == {}


@pytest.mark.parametrize("text, escaped", [
    ("a*_glob = E_z[e^{zφ*}/(e^{zφ*} + 1)]", r"a\*_glob = E_z[e^{zφ\*}/(e^{zφ\*} + 1)]"),
    ("T*, the step ... T*", r"T\*, the step ... T\*"),
    ("| T* exponent | 0.36 |", r"| T\* exponent | 0.36 |"),
    ("an *engine check*: **Two halves.**", "an *engine check*: **Two halves.**"),
    ("* a list item with *emphasis*", "* a list item with *emphasis*"),
    ("code `a*b*c`, math $T^*$ and $$w^*$$", "code `a*b*c`, math $T^*$ and $$w^*$$"),
    ("```python\nx = a*b*c\n```\nw* after", "```python\nx = a*b*c\n```\nw\\* after"),
    (r"already w\* escaped", r"already w\* escaped"),
])
def test_stray_stars_are_escaped_and_emphasis_kept(text, escaped):
    assert escape_stray_stars(text) == escaped
    assert stray_stars(escape_stray_stars(text)) == []
