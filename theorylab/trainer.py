"""The gradient-descent loop shared by every engine: recording, checkpoints, resume, faults.

One row per recorded step (schema [`TRAJECTORY_SCHEMA`][]): the engine's loss and error, and the
quantities of [`theorylab.observables`][]. Log-spaced recording (``np.geomspace``) by default,
the right grid for plateau-and-escape dynamics.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from . import _io
from ._partition import Partition
from .config import ExperimentConfig, TrainConfig, config_to_toml, load_config
from .data import make_wstar
from .engines import Engine, make_engine
from .observables import TRACKED_COLUMNS, fair_error, track

__all__ = [
    "TRAJECTORY_SCHEMA",
    "DivergenceError",
    "RunResult",
    "record_steps",
    "run_experiment",
    "empty_trajectory",
]

#: Column → dtype of ``trajectory.csv``. ``loss``/``error``: exact population values (exact
#: engines), estimates with standard errors ``loss_se``/``error_se`` (Monte Carlo), or test-set
#: values (empirical; ``train_loss`` is the training objective). ``error`` counts F = 0 as an
#: error; ``tie_mass`` = P[F = 0]; ``error_fair`` = ``error − tie_mass/2``, the error of a fair
#: coin on ties (the one to compare with the Bayes error and with empirical errors, whose
#: ties the noise part of v breaks at random). ``pa_gap``: the logit margin of patch
#: association ([`theorylab.observables.pa_gap`][]); ``patch_association`` uses
#: ``train.pa_margin``. NaN where not defined.
TRAJECTORY_SCHEMA: dict[str, str] = {
    "step": "int64",
    "loss": "float64",
    "error": "float64",
    "tie_mass": "float64",
    "error_fair": "float64",
    "loss_se": "float64",
    "error_se": "float64",
    "train_loss": "float64",
    "alpha": "float64",
    "beta": "float64",
    "cos_v_wstar": "float64",
    "gamma": "float64",
    "rho": "float64",
    "sym_dev": "float64",
    "patch_association": "bool",
    "pa_gap": "float64",
    "own_set_mass": "float64",
    "engine": "string",
}
assert set(TRACKED_COLUMNS) <= set(TRAJECTORY_SCHEMA)


class DivergenceError(FloatingPointError):
    """A run produced a non-finite value. ``step`` and ``quantity`` say where; ``result`` holds
    the rows recorded before it (also written to disk when the run has an output folder)."""

    def __init__(self, step: int, quantity: str, result: RunResult | None = None) -> None:
        super().__init__(f"run diverged at step {step}: {quantity} is not finite (NaN or overflow)")
        self.step = step
        self.quantity = quantity
        self.result = result


@dataclass
class RunResult:
    """Outcome of [`run_experiment`][]: the trajectory table, the final state and provenance."""

    trajectory: pd.DataFrame
    A: np.ndarray
    v: np.ndarray
    wstar: np.ndarray
    partition: Partition
    engine: str
    config: ExperimentConfig
    steps_done: int

    def summary(self) -> str:
        last = self.trajectory.iloc[-1]
        return (
            f"engine={self.engine} steps={self.steps_done} loss={last['loss']:.6g} "
            f"error={last['error']:.6g} alpha={last['alpha']:.6g} gamma={last['gamma']:.6g} "
            f"rho={last['rho']:.6g} patch_association={bool(last['patch_association'])}"
        )


def record_steps(train: TrainConfig) -> np.ndarray:
    """Steps at which a row is recorded: always 0 and ``steps``; log-spaced, linear or all."""
    T = train.steps
    if train.record == "all" or T <= train.n_records:
        return np.arange(T + 1)
    if train.record == "linear":
        s = np.linspace(0, T, train.n_records)
    else:
        s = np.concatenate([[0], np.geomspace(1, T, train.n_records - 1)])
    return np.unique(np.concatenate([np.round(s).astype(np.int64), [0, T]]))


def empty_trajectory() -> pd.DataFrame:
    return pd.DataFrame({k: pd.Series(dtype=v) for k, v in TRAJECTORY_SCHEMA.items()})


def _to_frame(rows: list[dict]) -> pd.DataFrame:
    if not rows:
        return empty_trajectory()
    df = pd.DataFrame(rows, columns=list(TRAJECTORY_SCHEMA))
    return df.astype(TRAJECTORY_SCHEMA)


def _read_trajectory(path: Path) -> list[dict]:
    df = pd.read_csv(path).astype(TRAJECTORY_SCHEMA)
    return df.to_dict("records")


def _check_finite(step: int, named: dict) -> None:
    for name, value in named.items():
        arr = np.asarray(value, dtype=np.float64) if not hasattr(value, "detach") else (
            value.detach().cpu().numpy()
        )
        if not np.all(np.isfinite(arr)):
            raise DivergenceError(step, name)


def _grad_items(grads: dict) -> dict:
    return {f"gradient of {k}": v for k, v in grads.items()}


class _Output:
    """The run folder: trajectory.csv, config.toml, checkpoint.npz, final_state.npz."""

    def __init__(self, out: Path, cfg: ExperimentConfig, engine: Engine) -> None:
        self.out, self.cfg, self.engine = out, cfg, engine
        out.mkdir(parents=True, exist_ok=True)

    def write_config(self) -> None:
        header = f"theorylab resolved configuration (engine: {self.engine.name})"
        _io.atomic_write_text(self.out / "config.toml", config_to_toml(self.cfg, header))

    def write_rows(self, rows: list[dict]) -> None:
        _io.write_csv(self.out / "trajectory.csv", _to_frame(rows))

    def checkpoint(self, step: int, params) -> None:
        arrays = self.engine.params_to_arrays(params)
        _io.write_npz(self.out / "checkpoint.npz", step=np.array(step), **arrays)

    def final(self, A, v, wstar, partition: Partition) -> None:
        _io.write_npz(
            self.out / "final_state.npz",
            A=A,
            v=v,
            wstar=wstar,
            partition_labels=partition.labels,
            engine=np.array(self.engine.name),
        )


def _resume(out: Path, cfg: ExperimentConfig, engine: Engine):
    """Load (step, params, rows) from a run folder written by an earlier call."""
    ckpt, traj = out / "checkpoint.npz", out / "trajectory.csv"
    if not ckpt.exists() or not traj.exists():
        return None
    old = load_config(out / "config.toml").to_dict()
    new = cfg.to_dict()
    old["train"].pop("steps", None), new["train"].pop("steps", None)
    if old != new:
        raise ValueError(
            f"resume: {out / 'config.toml'} differs from the requested configuration "
            "(only train.steps may change on resume)"
        )
    with np.load(ckpt) as z:
        step = int(z["step"])
        params = engine.params_from_arrays({k: z[k] for k in z.files if k != "step"})
    rows = [r for r in _read_trajectory(traj) if r["step"] <= step]
    return step, params, rows


def run_experiment(
    cfg: ExperimentConfig,
    *,
    out: str | Path | None = None,
    resume: bool = False,
    progress: bool | None = None,
    engine: Engine | None = None,
    initial: dict[str, np.ndarray] | None = None,
) -> RunResult:
    """Run gradient descent as ``cfg`` says; return the trajectory and the final state.

    **Arguments:**

    - `cfg`: the experiment (defaults are resolved here).
    - `out`: folder for ``trajectory.csv``, ``config.toml``, ``final_state.npz`` and
      ``checkpoint.npz`` (all written atomically; the trajectory after every recorded step).
    - `resume`: continue from ``out/checkpoint.npz`` if present (``train.steps`` may grow).
    - `progress`: show a tqdm bar; default: only when stderr is a terminal.
    - `engine`: a prebuilt engine (for tests and benchmarks); default [`make_engine`][].
    - `initial`: start from a given state instead of the configured initialisation:
      ``{"A": (D, D) array}`` and/or ``{"v": (d,) array}`` (the other one from the config),
      e.g. a pre-trained A for fine-tuning with ``lr_A = 0`` (Theorem 5.1). The diagonal of the
      given A is kept as it is (frozen).

    Raises [`DivergenceError`][] (after writing the rows so far) when a value stops being finite.
    """
    from tqdm.auto import tqdm

    cfg = cfg.resolved()
    partition = cfg.data.make_partition()
    wstar = make_wstar(cfg.data)
    engine = engine or make_engine(cfg, partition, wstar)
    output = _Output(Path(out), cfg, engine) if out is not None else None
    schedule = set(int(s) for s in record_steps(cfg.train))
    T = cfg.train.steps

    start, rows, params = 0, [], None
    if resume and output is not None:
        loaded = _resume(output.out, cfg, engine)
        if loaded is not None:
            start, params, rows = loaded
    if params is None:
        params = engine.initial_params()
        if initial:
            unknown = set(initial) - {"A", "v"}
            if unknown:
                raise ValueError(f"initial: unknown keys {sorted(unknown)} (allowed: A, v)")
            A0, v0 = engine.state(params)
            arrays = {"A": np.asarray(initial.get("A", A0), dtype=np.float64),
                      "v": np.asarray(initial.get("v", v0), dtype=np.float64)}
            if arrays["A"].shape != A0.shape or arrays["v"].shape != v0.shape:
                raise ValueError(f"initial: A must be {A0.shape} and v {v0.shape}")
            params = engine.params_from_arrays(arrays)
    if output is not None:
        output.write_config()

    def result(step_done: int) -> RunResult:
        A, v = engine.state(params)
        return RunResult(_to_frame(rows), A, v, wstar, partition, engine.name, cfg, step_done)

    show = sys.stderr.isatty() if progress is None else progress
    bar = tqdm(total=T, initial=start, disable=not show, desc=engine.name, leave=False)
    recorded = {int(r["step"]) for r in rows}
    step = start
    try:
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            for step in range(start, T + 1):
                record = step in schedule and step not in recorded
                ev = engine.evaluate(params, step, need_grad=step < T, record=record)
                _check_finite(step, {"loss": ev.train_loss if math.isnan(ev.loss) else ev.loss})
                if record:
                    A, v = engine.state(params)
                    _check_finite(step, {"A": A, "v": v})
                    row = {
                        "step": step,
                        "loss": ev.loss,
                        "error": ev.error,
                        "tie_mass": ev.tie_mass,
                        "error_fair": fair_error(ev.error, ev.tie_mass),
                        "loss_se": ev.loss_se,
                        "error_se": ev.error_se,
                        "train_loss": ev.train_loss,
                        **track(A, v, wstar, partition, cfg.temperature,
                                cfg.train.pa_margin),
                        "engine": engine.name,
                    }
                    rows.append(row)
                    recorded.add(step)
                    if output is not None:
                        output.write_rows(rows)
                        output.checkpoint(step, params)
                if step < T:
                    _check_finite(step, _grad_items(ev.grads))
                    params = engine.apply(params, ev.grads)
                    bar.update(1)
    except DivergenceError as err:
        err.result = result(err.step)
        if output is not None:
            output.write_rows(rows)
        raise
    finally:
        bar.close()
    res = result(T)
    if output is not None:
        output.write_rows(rows)
        output.final(res.A, res.v, wstar, partition)
    return res
