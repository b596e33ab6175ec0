"""The one phase-reading function (``theorylab.huang2024.phases.phase_readings``) on hand-made
trajectories (each definition), on recorded steps that are not consecutive, without a config,
and on ``theorylab run``'s output; and the Δ setting of a config (``data.Delta``)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from theorylab.huang2024 import config_from_dict, load_config, run_experiment
from theorylab.huang2024.data import information_gap, sizes_for_gap
from theorylab.huang2024.phases import READINGS, read_phases
from theorylab.huang2024.setups import FAMILIES, family_sizes, ladder


def _traj(steps, glob, own, attn, excess):
    return pd.DataFrame({"step": steps, "phi_glob_lq": glob, "phi_own_lq": own,
                         "attn_own_lq": attn, "attn_glob_lq": np.full(len(steps), 0.3),
                         "loss": np.asarray(excess) + 0.1, "loss_star": 0.1})


def test_each_reading_on_a_hand_made_run():
    # Φ_glob falls by 0.3, 0.2, 0.1, 0.05 …, Φ_own grows by 0.05, 0.1, 0.15, …: the own growth
    # first catches up with the global fall at step 3 (0.15 ≥ 0.1)
    s = np.arange(8)
    glob = np.cumsum([0, -0.3, -0.2, -0.1, -0.05, -0.02, -0.01, 0.0])
    own = np.cumsum([0, 0.05, 0.1, 0.15, 0.3, 0.5, 0.7, 0.9])
    attn = np.array([0.1, 0.1, 0.15, 0.2, 0.3, 0.5, 0.7, 0.8])
    ex = np.array([1.0, 0.8, 0.6, 0.4, 0.2, 0.1, 0.04, 0.02])
    r = read_phases(_traj(s, glob, own, attn, ex), C=4, gamma=0.5)
    assert set(r) == set(READINGS)
    assert r["t_I"] == 3 and r["phase_I"] and r["phi_glob_end_I"] == pytest.approx(glob[3])
    assert r["attn_glob_end_I"] == pytest.approx(0.3)
    assert r["t_II"] == 5  # first attention ≥ ½(1 − 0.5³) = 0.4375
    assert r["T_star"] == 6  # first relative excess ≤ 0.05
    assert r["phi_own_T"] == pytest.approx(own[6]) and r["attn_own_T"] == 0.7
    assert r["attn_own_max"] == 0.875 and r["attn_gap_T"] == pytest.approx(0.175)
    assert r["len_I"] == 3 and r["len_II"] == 2 and r["resolution"] == 1
    # no Phase I: the first step already raises Φ_own by more than Φ_glob falls
    r2 = read_phases(_traj(s, glob * 0.1, own, attn, ex), C=4, gamma=0.5)
    assert not r2["phase_I"] and r2["t_I"] == 1 and r2["len_I"] == 0
    # not reached: NaN (censored)
    r3 = read_phases(_traj(s, glob, own, attn * 0.1, np.linspace(1, 0.5, 8)), C=4, gamma=0.5)
    assert math.isnan(r3["t_II"]) and math.isnan(r3["T_star"])


def test_recorded_steps_need_not_be_consecutive_and_cfg_is_optional():
    s = np.array([0, 1, 2, 4, 8, 16])
    glob = np.array([0, -0.3, -0.5, -0.7, -0.8, -0.8])
    own = np.array([0, 0.05, 0.1, 0.3, 1.0, 2.0])
    r = read_phases(_traj(s, glob, own, np.linspace(0, 0.9, 6), np.geomspace(1, 0.01, 6)))
    # per-step increments: (0.2, 0.1)/2 at step 4 → 0.1 ≥ 0.1
    assert r["t_I"] == 4 and r["phase_I"] and r["T_star"] == 8 and r["resolution"] == 4
    assert math.isnan(r["t_II"]) and math.isnan(r["attn_own_max"])  # no C, γ


def test_reads_the_output_of_theorylab_run(tmp_path):
    cfg = config_from_dict({"data": {"P": 16, "C1": 14, "C": 2},
                            "train": {"engine": "population-reduced", "z_nodes": 4,
                                      "lr": 32.0, "steps": 60, "record": "all"}})
    run_experiment(cfg, out=tmp_path, progress=False)
    tr = pd.read_csv(tmp_path / "trajectory.csv")
    r = read_phases(tr, load_config(tmp_path / "config.toml"))
    assert r["phase_I"] and math.isfinite(r["t_I"]) and math.isfinite(r["t_II"])
    assert r["attn_own_max"] == pytest.approx(0.5)


# -- Δ as a setting -----------------------------------------------------------------------------
def test_delta_setting_gives_admissible_sizes_and_records_the_rounding():
    for P in (16, 81, 256, 4096, 65536, 10 ** 8):
        for D in (0.65, 0.05, -0.25):
            d = config_from_dict({"data": {"P": P, "kappa_c": 0.25, "Delta": D}}).data
            C1, C = d.global_size, d.local_size
            assert C <= C1 < P and (P - C1) % C == 0 and C == round(P ** 0.25)
            assert d.delta == pytest.approx(information_gap(P, C1, C))
            assert d.delta_rounding == pytest.approx(d.delta - D)
            # the closest admissible global size: its lattice neighbours are not closer
            for nb in (C1 - C, C1 + C):
                if C <= nb < P:
                    assert abs(information_gap(P, nb, C) - D) >= abs(d.delta - D) - 1e-12
    # with the global size given, the local size is chosen
    C1, C = sizes_for_gap(4096, 0.3, C1=1000)
    assert C1 == 1000 and (4096 - 1000) % C == 0
    # resolved configs hold the sizes, not Δ
    r = config_from_dict({"data": {"P": 256, "kappa_c": 0.25, "Delta": 0.65}}).resolved()
    assert (r.data.C1, r.data.C, r.data.Delta) == (196, 4, None)


@pytest.mark.parametrize("data,msg", [
    ({"P": 64, "Delta": 0.3}, "data.Delta: give it with exactly one"),
    ({"P": 64, "Delta": 0.3, "C": 4, "C1": 20}, "data.Delta: give it with exactly one"),
    ({"P": 64, "Delta": 3.0, "C": 4}, "data.Delta"),
    ({"P": 64, "C": 4}, "data.C1"),
])
def test_delta_setting_bad_input_names_the_field(data, msg):
    with pytest.raises(ValueError, match=msg):
        config_from_dict({"data": data})


def test_ladder_families_hold_delta_and_kappa_c():
    for fam, f in FAMILIES.items():
        for P in ladder(False):
            C1, C = family_sizes(fam, P)
            assert C == round(P ** 0.25)
            assert abs(information_gap(P, C1, C) - f.Delta) < 0.007
    assert family_sizes("neg", 256) == (16, 4)  # κ_s = 1/2 exactly on P = n⁴
