"""The second paper's bad inputs: sizes that do not fit or that an engine cannot represent,
a CUDA device that is absent, and configurations whose masked queries have no key. Each row is
a huang2024 run config (``BASE`` with some changes) fed to ``python -m theorylab run`` in
process; it must exit 2 with exactly one line ``error: <field>: ...`` on stderr and leave no
output folder. A few rows also go through a subprocess (the real command line, with a timeout)
or the Python API.

Free memory is pinned to ``FREE`` bytes and CUDA made unavailable, so that a row is refused on
every machine; a refusal comes before anything is allocated, so no row allocates a large array.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_bad_inputs_sweep import FREE, _call
from theorylab.core import resources

#: A small valid run: population-exact at P = 16 (one global area of 8, four local areas of 2),
#: a two-valued coefficient law, two steps.
BASE = {
    "experiment": {"paper": '"huang2024"'},
    "data": {"P": "16", "K": "1", "C1": "8", "C": "2", "z_law": '"values"',
             "z_values": "[0.5, 1.5]"},
    "model": {"gamma": "0.5"},
    "train": {"engine": '"population-exact"', "steps": "2", "record": '"all"'},
}

UNIFORM = {"data.z_law": '"uniform"', "data.z_values": None}
MC = {"train.engine": '"population-montecarlo"'}
CL = {"model.objective": '"cl"', "train.engine": '"cl-montecarlo"'}
BIG_P = {"data.P": "200000", "data.C1": "100000", "data.C": "100"}

_LAPLACE = "use population-laplace (the same exact population sum at any P"

#: (kind, changes to BASE, the start of the one line after ``error: ``). Each fails on a
#: checkout without the up-front checks: a MemoryError/allocator traceback, a numpy error
#: message without a field, a hang, or exit 0 with attention 0/0/0.
ROWS = [
    ("mc_samples-1e9", {**MC, "train.mc_samples": "1e9"},
     "train.mc_samples: population-montecarlo (1000000000 samples of P = 16 patches) needs "
     "about 1.05 TB of memory but 8 GB is free; lower train.mc_samples"),
    ("n_train-1e9", {"train.engine": '"empirical"', "train.n_train": "1e9"},
     "train.n_train: empirical (1000000000 samples of P = 16 patches) needs about 1.05 TB of "
     "memory but 8 GB is free; lower train.n_train"),
    ("cl-mc_samples-1e7", {**CL, "train.mc_samples": "1e7"},
     "train.mc_samples: cl-montecarlo (10000000 images, two views of P = 16 patches, 9999999 "
     "negatives each, one autograd graph) needs about 33.6 PB of memory but 8 GB is free; "
     "lower train.mc_samples or model.cl_negatives"),
    # every other image of the batch is a negative by default: memory grows with mc_samples²
    ("cl-mc_samples-1e5-all-negatives", {**CL, "train.mc_samples": "1e5"},
     "train.mc_samples: cl-montecarlo (100000 images, two views of P = 16 patches, 99999 "
     "negatives each, one autograd graph) needs about "),
    ("montecarlo-P-200000", {**MC, **BIG_P},
     "data.P: the parameters Φ (200000×1001) and Υ (200000×200000) with the area labels of 1 "
     "cluster(s) needs about 1.93 TB of memory but 8 GB is free; lower data.P or data.K"),
    ("laplace-P-200000", {"train.engine": '"population-laplace"', **BIG_P},
     "data.P: the parameters Φ (200000×1001) and Υ (200000×200000)"),
    ("K-1e7", {**MC, "data.K": "1e7"},
     "data.K: the parameters Φ (16×50000000) and Υ (16×16) with the area labels of 10000000 "
     "cluster(s) needs about 46.1 GB of memory but 8 GB is free"),
    ("z_nodes-1e6", {"train.engine": '"population-laplace"', **UNIFORM, "train.z_nodes": "1e6"},
     "train.z_nodes: must be <= 256 (Gauss–Legendre nodes come from a dense n×n eigenproblem"),
    ("z_nodes-0-uniform", UNIFORM,
     "train.z_nodes: population-exact sums over the coefficient law; a uniform law needs "
     "Gauss–Legendre nodes (set train.z_nodes > 0, e.g. 16) or use data.z_law = 'values'"),
    ("exact-P-400", {"data.P": "400", "data.C1": "200", "data.C": "10"},
     "train.max_configs: the exact sum enumerates ~10^32 configurations (> 20000000); "
     + _LAPLACE),
    ("exact-P-10000", {"data.P": "10000", "data.C1": "5000", "data.C": "100"},
     "data.P: population-exact enumerates the unmasked keys of up to 51 atoms per query, one "
     "array axis each (at most 32); " + _LAPLACE),
    ("exact-P-10000-max_configs-huge", {"data.P": "10000", "data.C1": "5000", "data.C": "100",
                                        "train.max_configs": "1e300"},
     "data.P: population-exact enumerates the unmasked keys of up to 51 atoms per query"),
    ("brute-memory", {"train.engine": '"population-brute"', "train.max_configs": "1e15",
                      "data.P": "24", "data.C1": "12", "data.C": "4"},
     "train.engine: population-brute (2.68e+08 configurations of P = 24 patches) needs about "
     "354 GB of memory but 8 GB is free; use population-exact or population-laplace"),
    ("device-cuda-absent", {**MC, "train.backend": '"torch"', "train.device": '"cuda"'},
     "train.device: 'cuda' requested but CUDA is not available (got 'cuda')"),
    ("cl-device-cuda-absent", {**CL, "train.device": '"cuda"', "train.backend": '"torch"'},
     "train.device: 'cuda' requested but CUDA is not available (got 'cuda')"),
    ("device-cuda-index-not-a-number", {**MC, "train.backend": '"torch"',
                                        "train.device": '"cuda:x"'},
     "train.device: must be 'cpu', 'cuda' or 'cuda:N' (got 'cuda:x')"),
    ("exact-gaussian-init", {"train.init": '"gaussian"', "train.init_scale": "0.1"},
     "train.init: population-exact needs Υ[p, ·] constant on every atom minus {p}, which a "
     "Gaussian start breaks; use init = 'zero', or engine = 'population-montecarlo' or "
     "'population-brute'"),
    ("laplace-gaussian-init", {"train.engine": '"population-laplace"', "train.init":
                               '"gaussian"', "train.init_scale": "0.1"},
     "train.init: population-laplace needs Υ[p, ·] constant on every atom minus {p}"),
    ("gamma-1-masked-keys-out", {"model.gamma": "1.0", "model.mask_keys": "false"},
     "model.gamma: every patch is masked (gamma=1.0, mask_size=16, P=16) and masked keys are "
     "left out of the softmax (mask_keys = false), so no query has a key; mask fewer patches "
     "or set model.mask_keys = true"),
    ("gamma-1-masked-keys-out-montecarlo", {**MC, "model.gamma": "1.0",
                                            "model.mask_keys": "false"},
     "model.gamma: every patch is masked"),
    ("mask_size-P-masked-keys-out", {**MC, "model.mask": '"fixed"', "model.mask_size": "16",
                                     "model.mask_keys": "false"},
     "model.mask_size: every patch is masked (gamma=0.5, mask_size=16, P=16)"),
    ("cl-gamma-1-masked-keys-out", {**CL, "model.gamma": "1.0", "model.mask_keys": "false"},
     "model.gamma: every patch is masked"),
    ("cl-mask_size-P-masked-keys-out", {**CL, "model.mask": '"fixed"', "model.mask_size": "16",
                                        "model.mask_keys": "false"},
     "model.mask_size: every patch is masked"),
]


def toml_text(changes: dict[str, str | None]) -> str:
    """``BASE`` as TOML with ``changes`` (``"section.key"`` → TOML value text, None: remove)."""
    tables = {s: dict(t) for s, t in BASE.items()}
    for name, value in changes.items():
        section, key = name.split(".")
        if value is None:
            tables[section].pop(key, None)
        else:
            tables.setdefault(section, {})[key] = value
    return "\n".join(f"[{s}]\n" + "".join(f"{k} = {v}\n" for k, v in t.items())
                     for s, t in tables.items())


@pytest.fixture
def pinned(monkeypatch):
    """FREE bytes of free memory and no CUDA, whatever the machine."""
    monkeypatch.setattr(resources, "host_free_bytes", lambda: FREE)
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)


@pytest.mark.parametrize("kind, changes, prefix", ROWS, ids=[r[0] for r in ROWS])
def test_refused_up_front_with_one_line(kind, changes, prefix, tmp_path, capsys, pinned):
    cfg = tmp_path / "c.toml"
    cfg.write_text(toml_text(changes), encoding="utf-8")
    capsys.readouterr()
    code = _call("run", [str(cfg), "--out", str(tmp_path / "out"), "--no-progress"])
    err = capsys.readouterr().err.splitlines()
    assert code == 2, err
    assert len(err) == 1, err
    assert err[0].startswith("error: " + prefix), err[0]
    assert not (tmp_path / "out").exists(), "a refused run left an output folder"


def test_the_base_config_runs(tmp_path, capsys, pinned):
    """Every row above changes a config that runs (so a refusal is caused by the change)."""
    cfg = tmp_path / "c.toml"
    cfg.write_text(toml_text({}), encoding="utf-8")
    assert _call("run", [str(cfg), "--out", str(tmp_path / "out"), "--no-progress"]) == 0


def test_refused_on_the_real_command_line(tmp_path):
    """A refusal from ``python -m theorylab run`` in a fresh process (no monkeypatch: this row
    depends on neither the free memory nor the device)."""
    changes, prefix = {r[0]: (r[1], r[2]) for r in ROWS}["exact-P-400"]
    cfg = tmp_path / "c.toml"
    cfg.write_text(toml_text(changes), encoding="utf-8")
    root = Path(__file__).resolve().parents[2]
    # 120 s: a refusal takes the interpreter's start and theorylab's imports (a few seconds on
    # a shared CPU); before the checks, exact-P-400 built its tables first
    done = subprocess.run([sys.executable, "-m", "theorylab", "run", str(cfg), "--out",
                           str(tmp_path / "out"), "--no-progress"], capture_output=True,
                          text=True, timeout=120, cwd=root,
                          env={**os.environ, "PYTHONPATH": str(root)})
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [done.stderr.strip()], done.stderr
    assert done.stderr.startswith("error: " + prefix), done.stderr


def test_api_refuses_before_building_the_engine(pinned):
    """``make_engine`` (what ``run_experiment`` calls) refuses a size; a config that fits gets
    its engine with the structure the check built."""
    from theorylab.huang2024 import config_from_dict, make_engine

    def cfg(**train):
        return config_from_dict({"data": {"P": 16, "C1": 8, "C": 2, "z_law": "values",
                                          "z_values": [0.5, 1.5]},
                                 "train": {"engine": "population-montecarlo", **train}})

    with pytest.raises(ValueError, match=r"^train\.mc_samples: population-montecarlo "
                                         r"\(1000000000 samples"):
        make_engine(cfg(mc_samples=10 ** 9))
    engine = make_engine(cfg(mc_samples=64))
    assert engine.structure.P == 16


def test_cuda_absent_is_one_line_for_both_papers(tmp_path, capsys, pinned):
    """``--device cuda`` on a machine without CUDA: the same line from both papers."""
    from tests.test_bad_inputs_sweep import toml_text as jelassi_toml

    lines = []
    for name, text in (("h24", toml_text(MC)), ("j22", jelassi_toml())):
        cfg = tmp_path / f"{name}.toml"
        cfg.write_text(text, encoding="utf-8")
        capsys.readouterr()
        code = _call("run", [str(cfg), "--out", str(tmp_path / name), "--no-progress",
                             "--device", "cuda"])
        err = capsys.readouterr().err.splitlines()
        assert code == 2 and len(err) == 1, err
        lines.append(err[0])
    assert lines[0] == lines[1] == ("error: train.device: 'cuda' requested but CUDA is not "
                                    "available (got 'cuda')")
