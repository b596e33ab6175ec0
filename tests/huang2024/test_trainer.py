"""Runs of the second paper's MAE model through its trainer: gradient flow beside gradient
descent (``train.mode = "flow"``) on the exact population loss, its GD-to-flow gap of order
η, and the refusal of a flow without a deterministic gradient."""

import pytest

from theorylab.analysis import flow_gap
from theorylab.huang2024 import config_from_dict

#: as tests/jelassi2022/test_trainer.py: Euler's order 1, with room for its O(η) correction
#: (measured slope 1.006 on this ladder).
SLOPE_TOLERANCE = 0.05


def _config(**train):
    return config_from_dict({
        "data": {"P": 8, "C1": 4, "C": 2, "z_law": "values", "z_values": [0.5, 1.5]},
        "model": {"mask_keys": True, "loss_norm": "P"},
        "train": {"engine": "population-exact", "lr": 8.0, "steps": 10, **train}}).resolved()


def test_gd_to_flow_gap_shrinks_at_order_eta():
    table, fit = flow_gap(_config(), [1 / 8, 1 / 4, 1 / 2, 1], horizon=80.0,
                          columns=["phi_own_lq", "phi_glob_lq", "attn_own_lq"])
    assert table.gap.is_monotonic_decreasing
    assert abs(fit["slope"] - 1.0) < SLOPE_TOLERANCE, (fit, table)


@pytest.mark.parametrize("train", [{"engine": "population-montecarlo"},
                                   {"engine": "empirical", "resample_masks": True}])
def test_flow_needs_a_deterministic_gradient(train):
    with pytest.raises(ValueError, match="train.mode: 'flow' needs a deterministic gradient"):
        _config(mode="flow", **train)
