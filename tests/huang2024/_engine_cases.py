"""The engine cases whose evaluations are kept in ``data/engines_reference.npz``: every engine
of the second paper at a small problem and a non-trivial state, so that a change of how the
engines compute (the array backend, vectorisation, chunking) is checked against the numbers
they gave before. ``python -m tests.huang2024._engine_cases`` rewrites the file (only when the
engines' numbers are meant to change)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

REFERENCE = Path(__file__).parent / "data" / "engines_reference.npz"

_VALUES = {"z_law": "values", "z_values": [0.5, 1.0, 1.5], "z_probs": [0.3, 0.3, 0.4]}

#: name → (config tables, state: "steps" (2 GD steps from Q = 0 on numpy) or "gaussian")
CASES = {
    "exact-bern-keys-P": ({"data": {"P": 10, "C1": 6, "C": 2, **_VALUES},
                           "model": {"gamma": 0.4},
                           "train": {"engine": "population-exact", "lr": 8.0}}, "steps"),
    "exact-fixed-nokeys-mask": ({"data": {"P": 9, "C1": 5, "C": 2, **_VALUES},
                                 "model": {"mask": "fixed", "mask_size": 4, "mask_keys": False,
                                           "loss_norm": "mask"},
                                 "train": {"engine": "population-exact", "lr": 8.0}}, "steps"),
    "exact-K2-uniform-none": ({"data": {"P": 8, "K": 2, "C1": 4, "C": 2, "z_law": "uniform"},
                               "model": {"gamma": 0.5, "loss_norm": "none"},
                               "train": {"engine": "population-exact", "z_nodes": 3,
                                         "lr": 2.0}}, "steps"),
    "laplace-keys-P": ({"data": {"P": 10, "C1": 6, "C": 2, **_VALUES},
                        "model": {"gamma": 0.4},
                        "train": {"engine": "population-laplace", "lr": 8.0}}, "steps"),
    "laplace-K2-nokeys-none": ({"data": {"P": 8, "K": 2, "C1": 4, "C": 2, **_VALUES},
                                "model": {"gamma": 0.3, "mask_keys": False, "loss_norm": "none"},
                                "train": {"engine": "population-laplace", "lr": 2.0}}, "steps"),
    "brute-keys-P": ({"data": {"P": 6, "C1": 4, "C": 2, "z_law": "values",
                               "z_values": [0.5, 1.5]},
                      "model": {"gamma": 0.5},
                      "train": {"engine": "population-brute", "init": "gaussian",
                                "init_scale": 0.3}}, "gaussian"),
    "montecarlo-K2-mask": ({"data": {"P": 9, "K": 2, "C1": 5, "C": 2},
                            "model": {"loss_norm": "mask"},
                            "train": {"engine": "population-montecarlo", "mc_samples": 64,
                                      "init": "gaussian", "init_scale": 0.3}}, "gaussian"),
    "empirical-nokeys-resample": ({"data": {"P": 9, "C1": 5, "C": 2},
                                   "model": {"mask_keys": False, "mask": "fixed",
                                             "mask_size": 3},
                                   "train": {"engine": "empirical", "n_train": 40,
                                             "resample_masks": True, "init": "gaussian",
                                             "init_scale": 0.3}}, "gaussian"),
    "cl-symmetric": ({"data": {"P": 8, "K": 2, "C1": 4, "C": 2},
                      "model": {"objective": "cl", "cl_temperature": 0.5, "gamma": 0.4},
                      "train": {"engine": "cl-montecarlo", "mc_samples": 16,
                                "init": "gaussian", "init_scale": 0.3}}, "gaussian"),
    "cl-oneside-nokeys": ({"data": {"P": 8, "C1": 4, "C": 2},
                           "model": {"objective": "cl", "cl_negatives": 5, "gamma": 0.5,
                                     "cl_symmetric": False, "mask_keys": False},
                           "train": {"engine": "cl-montecarlo", "mc_samples": 12,
                                     "init": "gaussian", "init_scale": 0.3}}, "gaussian"),
}

#: the step at which the state is evaluated (Monte Carlo and CL draw a batch per step)
STEP = 3
ATTN_KEYS = tuple(f"attn_{a}_{t}" for a in ("own", "glob", "masked") for t in ("gq", "lq"))


def config(name: str, backend: str = "numpy", device: str = "cpu"):
    from theorylab.huang2024.config import config_from_dict

    tables, _ = CASES[name]
    train = {**tables["train"], "backend": backend, "device": device}
    return config_from_dict({**tables, "train": train}).resolved()


def state(name: str):
    """The state at which the case is evaluated (numpy engine)."""
    from theorylab.huang2024.engines import make_engine

    eng = make_engine(config(name))
    params = eng.initial_params()
    if CASES[name][1] == "steps":
        for step in range(2):
            params = eng.apply(params, eng.evaluate(params, step, need_grad=True,
                                                    record=False).grads)
    return params


def evaluate(name: str, Phi, Ups, backend: str = "numpy", device: str = "cpu") -> dict:
    """The case's evaluation at (Φ, Υ) as flat arrays: loss, loss_se, loss_star, the
    gradients and the attention masses."""
    from theorylab.huang2024.engines import make_engine

    eng = make_engine(config(name, backend, device))
    params = eng.params_from_arrays({"Phi": Phi, "Ups": Ups})
    ev = eng.evaluate(params, STEP, need_grad=True, record=True)
    out = {"loss": ev.loss, "loss_se": ev.loss_se, "loss_star": ev.loss_star,
           "grad_Phi": ev.grads["Phi"], "grad_Ups": ev.grads["Ups"]}
    out.update({k: ev.attn.get(k, np.nan) for k in ATTN_KEYS})
    return {k: np.asarray(v, dtype=np.float64) for k, v in out.items()}


def write_reference(path: Path = REFERENCE) -> None:
    arrays = {}
    for name in CASES:
        params = state(name)
        Phi, Ups = np.asarray(params.Phi), np.asarray(params.Ups)
        arrays[f"{name}/Phi"], arrays[f"{name}/Ups"] = Phi, Ups
        for key, value in evaluate(name, Phi, Ups).items():
            arrays[f"{name}/{key}"] = value
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(path, **arrays)


if __name__ == "__main__":
    write_reference()
    print(f"wrote {REFERENCE}")
