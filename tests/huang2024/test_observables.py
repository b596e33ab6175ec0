"""The recorded observables of the second paper's runs: the clean-image attention of a CL run
(``clean_*`` columns) is the Thm 4.4 checks' read-out, number for number; MAE runs leave it
empty."""

import numpy as np
import pytest

from theorylab.huang2024 import load_config, run_experiment
from theorylab.huang2024.observables import CLEAN_COLUMNS
from theorylab.huang2024.setups import cl_run_one


def test_cl_runs_record_the_clean_attention_of_the_claims():
    cfg = load_config("examples/huang2024_cl.toml").replace(
        data={"P": 24, "C1": 10, "C": 2}, train={"steps": 4, "record": "all"}).resolved()
    tr = run_experiment(cfg, progress=False).trajectory
    ref = cl_run_one(cfg, 1)  # reads sparser in the first half of the run: the steps it has
    at = tr.set_index("step").loc[ref.step]
    for col, claim in zip(CLEAN_COLUMNS, ("attn_glob_lq", "attn_own_lq", "attn_glob_gq")):
        np.testing.assert_allclose(at[col], ref[claim], rtol=0, atol=1e-15)
    s = cfg.data
    # Q⁰ = 0: uniform attention, C_m/P (a sum of 24 softmax weights: rounding)
    assert tr.clean_glob_lq.iloc[0] == pytest.approx(s.C1 / s.P, abs=1e-14)
    assert tr.clean_glob_lq.iloc[-1] > tr.clean_glob_lq.iloc[0]  # CL moves it (Thm 4.4)


def test_mae_runs_leave_the_clean_columns_empty():
    cfg = load_config("examples/huang2024_mae_delta_pos.toml").replace(
        data={"P": 16, "C1": 8, "C": 2}, train={"steps": 2})
    tr = run_experiment(cfg, progress=False).trajectory
    assert tr[list(CLEAN_COLUMNS)].isna().all().all()
