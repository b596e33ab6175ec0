"""Shared experiment settings of the huang2024 claims and figures: the config builders that
both read, so that a figure never takes its configuration from a claim module.

- [`pair_config`][]: the Theorem 4.4 setting (the notes' §9 CL setting, docs/papers/
  huang2024.md §3 and §9): CL (``cl-montecarlo``: InfoNCE on two independently masked views,
  mean pooling, τ = ``TAU``) with n negatives, or MAE (``population-montecarlo``) on the same
  data (K = ``K`` clusters, random areas, z ~ U[0.5, 1.5], Bernoulli(0.5) masks, masked keys
  in the softmax), the same start Q⁰ = 0, step size and batch size.
"""

from __future__ import annotations

from .config import ExperimentConfig, config_from_dict

__all__ = ["ATTN_TOL", "BATCH", "ETA_PER_P", "K", "TAU", "pair_config"]

#: A difference of attention masses counts when it exceeds ATTN_TOL (absolute). The readings
#: are exact functions of (Φ, Υ) on a fixed batch of clean images; the noise is that of the
#: trajectory (fresh Monte Carlo batches): at the notes' §9 setting the CL plateau of glob_lq
#: fluctuates by about ±0.03 between steps, and its end-window mean over ≥ 10 readings has a
#: standard error below 0.007 (reported as ``end_glob_lq_se``), so 0.02 is ≈ 3 standard
#: errors; it is also a third of the initial own-area attention C/P = 0.0625.
ATTN_TOL = 0.02
#: Temperature, clusters, batch (images per step, two views each) and step size per patch
#: count: the notes' §9 CL setting (τ = 0.1, K = 4) with its MAE batch of 16 and η = 200 at
#: P = 128, scaled as η ∝ P (the gradient of a row Φ[p, ·] carries 1/P from the mean pooling
#: and from the MAE loss normalisation).
TAU, K, BATCH, ETA_PER_P = 0.1, 4, 16, 200.0 / 128


def pair_config(P: int, C1: int, C: int, steps: int, negatives: int | None) -> ExperimentConfig:
    """The CL config with ``negatives`` negatives, or the MAE one (``negatives = None``), on
    the same data, masks, start, step size and batch size."""
    model = {"mask": "bernoulli", "gamma": 0.5, "mask_keys": True}
    if negatives is None:
        engine = "population-montecarlo"
        model["loss_norm"] = "P"
    else:
        engine = "cl-montecarlo"
        model.update(objective="cl", cl_temperature=TAU, cl_negatives=negatives,
                     cl_pooling="mean")
    return config_from_dict({
        "data": {"P": P, "C1": C1, "C": C, "K": K, "areas": "random", "z_law": "uniform",
                 "L": 0.5, "U": 1.5, "seed": 0},
        "model": model,
        "train": {"engine": engine, "mc_samples": BATCH, "lr": ETA_PER_P * P, "steps": steps,
                  "init": "zero", "seed": 0},
    }).resolved()
