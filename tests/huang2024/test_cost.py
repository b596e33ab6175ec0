"""The second paper's cost model (its `Paper.cost`): a large config is timed on a smaller one of
the same engine (a valid config with the same local area size, or fewer samples)."""

import pytest

from theorylab.huang2024 import PAPER, config_from_dict
from theorylab.huang2024.cost import DIRECT_WORK


@pytest.mark.parametrize("data, model, train", [
    ({"P": 1024, "C1": 720, "C": 4}, {}, {"engine": "population-laplace", "z_nodes": 8}),
    ({"P": 256, "C1": 192, "C": 4}, {}, {"engine": "population-montecarlo",
                                         "mc_samples": 4096}),
    ({"P": 128, "C1": 32, "C": 8, "K": 4}, {"objective": "cl", "cl_negatives": 15},
     {"engine": "cl-montecarlo", "mc_samples": 512}),
])
def test_a_large_config_is_timed_on_a_smaller_one(data, model, train):
    cfg = config_from_dict({"data": data, "model": {"loss_norm": "P", **model},
                            "train": {"steps": 10, **train}})
    big = PAPER.cost(cfg)
    assert big.work > DIRECT_WORK and big.smaller is not None
    small = big.smaller()
    assert small.work < big.work and small.engine.split(" ")[0] == train["engine"]
    assert small.build().name == train["engine"]


def test_a_small_config_is_timed_as_it_is():
    cfg = config_from_dict({"data": {"P": 8, "C1": 4, "C": 2, "z_law": "values",
                                     "z_values": [1.0]},
                            "train": {"engine": "population-exact", "steps": 3}})
    model = PAPER.cost(cfg)
    assert model.smaller is None and model.records == 4 and model.memory > 0
