"""The first paper's cost model (its `Paper.cost`): the work of each engine, the smaller config
timed in place of a large one (same engine, valid), the memoised phase-III target of the phase
readings, and the guard of ``predictions.phase_ii`` at a size where it would take hours."""

import math

import pytest

from theorylab.jelassi2022 import PAPER
from theorylab.jelassi2022.cost import (
    DIRECT_WORK,
    cost_model,
    exchangeable_guard,
    exchangeable_rows,
)
from theorylab.jelassi2022.phases import PA_TARGET_MAX_ROWS, pa_target
from theorylab.jelassi2022.predictions import phase_ii
from theorylab.jelassi2022.setups import reference_config

from ._helpers import small_config


def test_a_small_config_is_timed_as_it_is():
    model = PAPER.cost(reference_config(steps=500))
    assert model.smaller is None and model.work <= DIRECT_WORK
    assert model.steps == 500 and model.memory > 0 and not model.flow
    assert PAPER.cost(reference_config(steps=5, mode="flow")).flow


@pytest.mark.parametrize("data, train", [
    ({"D": 64, "C": 4, "L": None}, {"method": "exchangeable"}),
    ({"D": 16, "C": 2, "L": None}, {"method": "brute"}),
    ({}, {"method": "montecarlo", "mc_samples": 10_000_000}),
    ({}, {"engine": "empirical", "method": "auto", "n_train": 2_000_000}),
])
def test_a_large_config_is_timed_on_a_smaller_one_of_the_same_engine(data, train):
    cfg = reference_config(steps=100).replace(data={"partition": "random", **data},
                                              train=train)
    model = cost_model(cfg)
    assert model.work > DIRECT_WORK and model.smaller is not None
    small = model.smaller()
    assert small.work < model.work and small.smaller is None
    assert small.engine.split(" ")[0] == model.engine.split(" ")[0]
    assert small.build().name == small.build().name  # buildable: a valid config


def test_pa_target_is_memoised_and_skipped_where_it_is_too_costly():
    cfg = reference_config(steps=10)
    first = pa_target(cfg)
    assert 0 < first < 0.5 and pa_target(cfg.replace(train={"seed": 3})) == first
    big = small_config(D=64, C=4)
    assert exchangeable_rows(64, 4) > PA_TARGET_MAX_ROWS and math.isnan(pa_target(big))


def test_phase_ii_says_it_would_take_too_long_and_refuses(monkeypatch):
    import theorylab.jelassi2022.cost as cost

    # a limit of 1 s (instead of 10 min): refused on any machine, never run for real
    monkeypatch.setattr(cost, "DERIVED_LIMIT_S", 1.0)
    big = reference_config(steps=10).replace(data={"D": 64, "C": 4, "L": None,
                                                   "partition": "random"})
    with pytest.raises(ValueError, match=r"predictions.phase_ii: would take about .* "
                                         r"allow_long=True"):
        phase_ii(big)
    assert exchangeable_guard(reference_config(steps=10), 40, "small")() is None  # no-op
