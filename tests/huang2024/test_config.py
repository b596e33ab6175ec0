"""Configuration of Huang et al. (2025) runs: validation, Δ, area structures, TOML round trip."""

from __future__ import annotations

import math

import numpy as np
import pytest

from theorylab.huang2024 import config_from_dict, config_to_toml, information_gap, load_config
from theorylab.huang2024.data import contiguous_labels

BASE = {"data": {"P": 16, "C1": 8, "C": 2}}


def cfg_with(**sections):
    d = {k: dict(v) for k, v in BASE.items()}
    for k, v in sections.items():
        d.setdefault(k, {}).update(v)
    return config_from_dict(d)


@pytest.mark.parametrize("section, changes, message", [
    ("data", {"P": 10, "areas": "contiguous"},
     "data.P: must be a perfect square for contiguous areas (got 10)"),
    ("data", {"C": 3}, "data.C: must divide P − C1 = 8 (got C=3)"),
    ("data", {"C": 17}, "data.C: must be <= 16"),
    ("data", {"C1": 2, "C": 4}, "data.C: local areas must not exceed the global area"),
    ("data", {"C1": 16}, "data.C1: the global area must leave room"),
    ("data", {"kappa_s": 0.5}, "data.C1: give C1 or kappa_s, not both"),
    ("data", {"L": 0.0}, "data.L: must be > 0.0"),
    ("data", {"U": 0.1}, "data.U: must be >= 0.5"),
    ("data", {"z_law": "values"}, "data.z_values: a non-empty list is required"),
    ("data", {"z_law": "values", "z_values": [0.5, 2.0]}, "data.z_values: must be <= 1.5"),
    ("data", {"z_law": "values", "z_values": [0.5, 1.0], "z_probs": [0.5, 0.6]},
     "data.z_probs: must sum to 1"),
    ("data", {"K": 9, "areas": "contiguous"}, "data.K: contiguous areas support at most 8"),
    ("data", {"bogus": 1}, "data.bogus: unknown field"),
    ("model", {"gamma": 0.0}, "model.gamma: must be > 0.0"),
    ("model", {"mask": "bernoulli", "mask_size": 3}, "model.mask_size: only used with"),
    ("model", {"mask": "fixed", "mask_size": 17}, "model.mask_size: must be <= P=16"),
    ("model", {"loss_norm": "mean"}, "model.loss_norm: must be one of"),
    ("model", {"mask_keys": 1}, "model.mask_keys: must be true or false"),
    ("train", {"engine": "exact"}, "train.engine: must be one of"),
    ("train", {"lr": -1.0}, "train.lr: must be >= 0.0"),
    ("train", {"resample_masks": True}, "train.resample_masks: only used by engine"),
    ("train", {"device": "cuda"}, "train.device: backend 'numpy' runs on 'cpu' only"),
    ("train", {"device": "gpu", "backend": "torch"}, "train.device: must be 'cpu', 'cuda'"),
    ("train", {"threads": -1}, "train.threads: must be >= 0"),
    ("train", {"laplace_step": 0.0}, "train.laplace_step: must be > 0.0"),
])
def test_bad_values_raise_one_line_errors_naming_the_field(section, changes, message):
    with pytest.raises(ValueError) as err:
        cfg_with(**{section: changes})
    text = str(err.value)
    assert text.startswith(message) and "\n" not in text


def test_missing_sizes_and_other_paper():
    with pytest.raises(ValueError, match=r"^data\.C1: give the global area size"):
        config_from_dict({"data": {"P": 16, "C": 2}})
    with pytest.raises(ValueError, match=r"^experiment\.paper: unknown paper 'jelassi2022'"):
        config_from_dict({"experiment": {"paper": "jelassi2022"}, **BASE})


def test_delta_from_actual_sizes_and_kappas():
    cfg = config_from_dict({"data": {"P": 256, "C1": 192, "C": 4}})
    ks, kc = math.log(192) / math.log(256), 0.25
    assert cfg.delta == pytest.approx(2 * ks - kc - 1, abs=1e-15)  # rounding only
    assert cfg.delta == pytest.approx(0.646, abs=1e-3)  # the notes' Δ > 0 check setting
    assert config_from_dict({"data": {"P": 256, "C1": 32, "C": 16}}).delta == pytest.approx(-0.25)
    k = config_from_dict({"data": {"P": 64, "kappa_s": 0.93, "kappa_c": 1 / 3}})
    assert (k.data.global_size, k.data.local_size) == (48, 4)  # round(64^0.93 = 47.8)
    assert k.delta == information_gap(64, 48, 4)
    r = k.resolved()
    assert (r.data.C1, r.data.C, r.data.kappa_s) == (48, 4, None)
    with pytest.raises(ValueError, match=r"^data\.C: must divide P − C1 = 22"):
        config_from_dict({"data": {"P": 64, "kappa_s": 0.9, "kappa_c": 1 / 3}})


@pytest.mark.parametrize("areas", ["random", "contiguous"])
def test_area_structures(areas):
    cfg = config_from_dict({"data": {"P": 36, "K": 3, "C1": 12, "C": 4, "areas": areas}})
    s = cfg.data.make_structure()
    assert s.labels.shape == (3, 36) and list(s.n_areas) == [7, 7, 7] and s.F == 21
    for k in range(3):
        sizes = np.bincount(s.labels[k])
        assert sizes[0] == 12 and np.all(sizes[1:] == 4)
    assert len({tuple(r) for r in s.labels}) == 3  # the clusters' partitions differ


def test_contiguous_areas_are_connected():
    side = 6
    labels = contiguous_labels(36, 12, 4, 8)
    for lab in labels:
        for m in range(lab.max() + 1):
            cells = {divmod(int(i), side) for i in np.flatnonzero(lab == m)}
            seen, todo = set(), [next(iter(cells))]
            while todo:
                r, c = todo.pop()
                if (r, c) in seen:
                    continue
                seen.add((r, c))
                todo += [x for x in ((r + 1, c), (r - 1, c), (r, c + 1), (r, c - 1)) if x in cells]
            assert seen == cells


def test_toml_round_trip(tmp_path):
    cfg = config_from_dict({
        "experiment": {"paper": "huang2024"},
        "data": {"P": 16, "K": 2, "C1": 8, "C": 4, "areas": "contiguous", "z_law": "values",
                 "z_values": [0.5, 1.5], "z_probs": [0.25, 0.75]},
        "model": {"mask": "fixed", "mask_size": 5, "mask_keys": False, "loss_norm": "mask"},
        "train": {"engine": "empirical", "lr": 2.5, "resample_masks": True},
    })
    path = tmp_path / "c.toml"
    path.write_text(config_to_toml(cfg, "header line"))
    assert load_config(path) == cfg
    assert path.read_text().splitlines()[2:4] == ["[experiment]", 'paper = "huang2024"']
