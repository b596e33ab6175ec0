"""Every kind of bad input, one row each: how it is fed, the exit code (or exception) and the
one line that must say what is wrong.

Each row is fed in one of four ways:

- ``toml``: a run config (the small ``BASE`` tables with one change) through
  ``theorylab.commands.run.main`` in process; a refused run must leave no output folder;
- ``cli``: an argv for ``theorylab run``, ``check``, ``figures``, ``config`` or ``bench``;
- ``resume``: a copy of a finished small run, damaged, then ``--resume``; the folder's files
  must be left byte for byte as they were (nothing half-written);
- ``api``: a Python call that must raise a one-line ``ValueError``.

A command line must print exactly one line on stderr, ``error: <field>: ...`` (the row's
prefix), and exit with the row's code; an API call must raise one line starting with the field.
Free memory is pinned to ``FREE`` bytes and CUDA made unavailable, so that the rows refused for
their size or device are refused on every machine.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

from theorylab.core import resources

#: The free memory every row sees (bytes): the size rows are refused against it, whatever the
#: machine's own free memory. 8 GB: the brute-force enumeration at D = 16 (about 13 GB) and the
#: empirical engine with 10⁸ samples of 6×5 floats (about 48 GB) do not fit in 80% of it,
#: every small config of the table does (a few MB).
FREE = 8e9

#: The small run every ``toml`` row changes one key of: brute force at D = 6 is 2·3·3⁴ = 486
#: configurations (milliseconds a step).
BASE = {
    "data": {"D": "6", "C": "2", "partition": '"random"', "d": "5", "q": "0.4"},
    "model": {"activation": '"cubic"', "temperature": "1.0", "value_scale": "1.0",
              "diag": "0.7"},
    "train": {"engine": '"population"', "method": '"brute"', "lr_v": "0.5", "alpha0": "0.5",
              "steps": "2", "record": '"all"'},
}


def toml_text(changes: dict[str, str | None] | None = None, extra: str = "") -> str:
    """``BASE`` as TOML with ``changes`` (``"section.key"`` → TOML value text, None: remove)."""
    tables = {s: dict(t) for s, t in BASE.items()}
    for name, value in (changes or {}).items():
        section, key = name.split(".")
        tables.setdefault(section, {})
        if value is None:
            tables[section].pop(key, None)
        else:
            tables[section][key] = value
    lines = []
    for section, table in tables.items():
        lines.append(f"[{section}]")
        lines += [f"{k} = {v}" for k, v in table.items()]
        lines.append("")
    return extra + "\n".join(lines)


@dataclass
class Case:
    """One bad-input kind. ``feed(tmp_path)`` returns ``(exit code, stderr lines)`` for the
    command-line ways, or raises for ``api``; ``expect`` is the code or the exception type;
    ``prefix`` the start of the one line (``{tmp}``: the test's folder), after ``error: `` for
    the command lines."""

    kind: str
    how: str
    feed: Callable[[Path], tuple[int, list[str]]]
    expect: int | type[BaseException]
    prefix: str
    check_after: Callable[[Path], None] | None = field(default=None)


CASES: list[Case] = []


def _main(module: str):
    if module == "run":
        from theorylab.commands.run import main
    elif module == "check":
        from theorylab.commands.check import main
    elif module == "figures":
        from theorylab.commands.figures import main
    elif module == "bench":
        from theorylab.commands.bench import main
    else:
        from theorylab.commands.config import main
    return main


def _call(module: str, argv: list[str]) -> int:
    try:
        return _main(module)(argv)
    except SystemExit as e:  # argparse's exit
        return e.code if isinstance(e.code, int) else 1


# -- the ways of feeding a row --------------------------------------------------------------
def toml(kind: str, changes=None, prefix: str = "", *, raw: str | bytes | None = None,
         argv: tuple[str, ...] = (), code: int = 2, extra: str = "") -> None:
    def feed(tmp: Path):
        cfg = tmp / "c.toml"
        text = toml_text(changes, extra) if raw is None else raw
        if isinstance(text, bytes):
            cfg.write_bytes(text)
        else:
            cfg.write_text(text, encoding="utf-8")
        return _call("run", [str(cfg), "--out", str(tmp / "out"), "--no-progress", *argv])

    def nothing_written(tmp: Path) -> None:
        assert not (tmp / "out").exists(), "a refused run left an output folder"

    CASES.append(Case(kind, "toml", feed, code, prefix,
                      nothing_written if code == 2 else None))


def cli(kind: str, module: str, argv: Callable[[Path], list[str]] | list[str], prefix: str,
        code: int = 2, check_after=None) -> None:
    def feed(tmp: Path):
        args = argv(tmp) if callable(argv) else list(argv)
        return _call(module, [str(a).replace("{tmp}", str(tmp)) for a in args])

    CASES.append(Case(kind, "cli", feed, code, prefix, check_after))


def resume(kind: str, damage: Callable[[Path], None], prefix: str,
           argv: tuple[str, ...] = (), changes=None) -> None:
    """A finished run of ``BASE`` with ``steps = 4`` in ``tmp/out``, damaged, then resumed
    with ``BASE`` at ``steps = 6`` (and ``changes``)."""

    def feed(tmp: Path):
        out = tmp / "out"
        shutil.copytree(FINISHED, out)
        damage(out)
        _snapshot[tmp] = {p.name: (p.read_bytes() if p.is_file() else None)
                          for p in out.iterdir()}
        cfg = tmp / "c.toml"
        cfg.write_text(toml_text({"train.steps": "6", **(changes or {})}))
        return _call("run", [str(cfg), "--out", str(out), "--no-progress", "--resume", *argv])

    def unchanged(tmp: Path) -> None:
        out = tmp / "out"
        now = {p.name: (p.read_bytes() if p.is_file() else None) for p in out.iterdir()}
        assert now == _snapshot.pop(tmp), "a refused resume changed the run folder"

    CASES.append(Case(kind, "resume", feed, 2, prefix, unchanged))


def api(kind: str, call: Callable[[Path], object], prefix: str,
        exc: type[BaseException] = ValueError) -> None:
    CASES.append(Case(kind, "api", call, exc, prefix))


_snapshot: dict[Path, dict] = {}
FINISHED: Path  # set by the module fixture


# == [data] ====================================================================================
toml("data.D-string", {"data.D": '"ten"'}, "data.D: must be an integer (got 'ten')")
toml("data.D-bool", {"data.D": "true"}, "data.D: must be an integer (got True)")
toml("data.D-fraction", {"data.D": "6.5"}, "data.D: must be an integer (got 6.5)")
toml("data.D-nan", {"data.D": "nan"}, "data.D: must be an integer (got nan)")
toml("data.D-too-small", {"data.D": "1", "data.C": "1"}, "data.D: must be >= 2 (got 1)")
toml("data.D-1e5", {"data.D": "100000"}, "data.D: must be <= 4096 (A is D×D; got 100000)")
toml("data.D-1e29", {"data.D": "1e29"}, "data.D: must be <= 4096 (A is D×D; got 1e+29)")
toml("data.D-huge-int", {"data.D": "9223372036854775807"}, "data.D: must be <= 4096")
toml("data.C-not-divisor", {"data.C": "4"}, "data.C: must divide D=6 (got C=4)")
toml("data.C-zero", {"data.C": "0"}, "data.C: must be >= 1 (got 0)")
toml("data.C-and-L-missing", {"data.C": None}, "data.C: give C (patches per set) or L")
toml("data.L-one-set", {"data.C": None, "data.L": "1"}, "data.L: need at least 2 sets")
toml("data.C-times-L", {"data.L": "2"}, "data.L: C*L must equal D=6 (got C=2, L=2)")
toml("data.L-string", {"data.C": None, "data.L": '"3"'}, "data.L: must be an integer (got '3')")
toml("data.partition-unknown", {"data.partition": '"spiral"'},
     "data.partition: must be one of ['grid', 'random'] (got 'spiral')")
toml("data.partition-number", {"data.partition": "5"},
     "data.partition: must be a list of lists of integers (got 5)")
toml("data.partition-unequal", {"data.partition": "[[0, 1, 2], [3, 4], [5]]", "data.C": None},
     "data.partition: all sets must have the same size C (got sizes [1, 2, 3])")
toml("data.partition-repeated", {"data.partition": "[[0, 1], [1, 2], [3, 4]]"},
     "data.partition: not a partition of 0..5")
toml("data.partition-not-D", {"data.partition": "[[0, 1], [2, 3]]"},
     "data.partition: the sets cover 4 patches, not D=6")
toml("data.partition-float-index", {"data.partition": "[[0, 1.5], [2, 3], [4, 5]]"},
     "data.partition: must be a list of lists of integers")
toml("data.partition-grid-not-square", {"data.partition": '"grid"'},
     "data.D: partition='grid' needs a perfect square D (got D=6)")
toml("data.partition-grid-blocks", {"data.D": "16", "data.C": "8", "data.partition": '"grid"'},
     "data.C: partition='grid' needs C = b² with b dividing √D=4 (got C=8)")
toml("data.partition-table", {"data.partition": "{ a = 1 }"},
     "data.partition: must be a list of lists of integers")
toml("data.C-against-explicit-sets", {"data.partition": "[[0, 1], [2, 3], [4, 5]]",
                                      "data.C": "3"},
     "data.C: explicit partition has sets of size 2 (got C=3)")
toml("data.D-array", {"data.D": "[6]"}, "data.D: must be an integer (got [6])")
toml("data.d-one", {"data.d": "1"}, "data.d: must be >= 2 (got 1)")
toml("data.d-1e9", {"data.d": "1000000000"}, "data.d: must be <= 1000000 (a patch is a d-vector")
toml("data.q-above-one", {"data.q": "1.5"}, "data.q: must be <= 1.0 (got 1.5)")
toml("data.q-nan", {"data.q": "nan"}, "data.q: must be finite (got nan)")
toml("data.q-string", {"data.q": '"0.4"'}, "data.q: must be a number (got '0.4')")
toml("data.sigma-negative", {"data.sigma": "-1.0"}, "data.sigma: must be >= 0.0 (got -1.0)")
toml("data.sigma-inf", {"data.sigma": "inf"}, "data.sigma: must be finite (got inf)")
toml("data.seed-negative", {"data.seed": "-1"}, "data.seed: must be >= 0 (got -1)")
toml("data.seed-fraction", {"data.seed": "1.5"}, "data.seed: must be an integer (got 1.5)")
toml("data.unknown-key", {"data.Dd": "6"}, "data.Dd: unknown field (allowed: ")

# == [model] ===================================================================================
toml("model.activation-unknown", {"model.activation": '"relu"'},
     "model.activation: unknown activation 'relu'")
toml("model.activation-empty", {"model.activation": "[]"},
     "model.activation: polynomial must have degree >= 1")
toml("model.activation-constant", {"model.activation": "[1.0]"},
     "model.activation: polynomial must have degree >= 1")
toml("model.activation-string-coefficient", {"model.activation": '[0.0, "a"]'},
     "model.activation: must be 'cubic', 'quintic' or a list of numbers")
toml("model.activation-nan", {"model.activation": "[0.0, nan]"},
     "model.activation: coefficients must be finite")
toml("model.temperature-zero", {"model.temperature": "0.0"},
     "model.temperature: must be > 0.0 (got 0.0)")
toml("model.temperature-minus-inf", {"model.temperature": "-inf"},
     "model.temperature: must be finite (got -inf)")
toml("model.value_scale-string", {"model.value_scale": '"big"'},
     "model.value_scale: must be a number (got 'big')")
toml("model.value_scale-1e400", {"model.value_scale": "1e400"},
     "model.value_scale: must be finite (got inf)")
toml("model.value_scale-overflows", {"model.value_scale": "1e300"},
     "run diverged at step 0: loss is not finite", code=3)
toml("model.diag-unknown-name", {"model.diag": '"loglog"'},
     "model.diag: must be one of ['loglogd'] (got 'loglog')")
toml("model.diag-1e308", {"model.diag": "1e308"}, "model.diag: must be <= 1000000.0 (")
toml("model.diag-loglogd-d2", {"model.diag": '"loglogd"', "data.d": "2"},
     "model.diag: 'loglogd' needs d >= 3")
toml("model.unknown-key", {"model.tau": "1.0"}, "model.tau: unknown field (allowed: ")

# == [train] ===================================================================================
toml("train.engine-unknown", {"train.engine": '"exact"'},
     "train.engine: must be one of ['population', 'empirical'] (got 'exact')")
toml("train.method-unknown", {"train.method": '"fast"'}, "train.method: must be one of [")
toml("train.method-with-empirical", {"train.engine": '"empirical"'},
     "train.method: only used by engine='population' (got 'brute'")
toml("train.lr_v-negative", {"train.lr_v": "-0.1"}, "train.lr_v: must be >= 0.0 (got -0.1)")
toml("train.lr_v-nan", {"train.lr_v": "nan"}, "train.lr_v: must be finite (got nan)")
toml("train.lr_v-string", {"train.lr_v": '"0.1"'}, "train.lr_v: must be a number (got '0.1')")
toml("train.lr_A-inf", {"train.lr_A": "inf"}, "train.lr_A: must be finite (got inf)")
toml("train.lr_A-bool", {"train.lr_A": "false"}, "train.lr_A: must be a number (got False)")
toml("train.steps-negative", {"train.steps": "-1"}, "train.steps: must be >= 0 (got -1)")
toml("train.steps-fraction", {"train.steps": "10.5"}, "train.steps: must be an integer (got 10.5)")
toml("train.steps-1e10", {"train.steps": "1e10"}, "train.steps: must be <= 1000000000 (")
toml("train.steps-date", {"train.steps": "1979-05-27"},
     "train.steps: must be an integer (got datetime.date(1979, 5, 27))")
toml("train.n_train-zero", {"train.n_train": "0"}, "train.n_train: must be >= 1 (got 0)")
toml("train.n_train-1e9", {"train.n_train": "1e9"}, "train.n_train: must be <= 100000000 (")
toml("train.n_test-zero", {"train.n_test": "0"}, "train.n_test: must be >= 1 (got 0)")
toml("train.mc_samples-one", {"train.mc_samples": "1"}, "train.mc_samples: must be >= 2 (got 1)")
toml("train.mc_samples-1e12", {"train.mc_samples": "1e12"},
     "train.mc_samples: must be <= 1000000000 (each evaluation draws")
toml("train.mc_resample-string", {"train.mc_resample": '"yes"'},
     "train.mc_resample: must be true or false (got 'yes')")
toml("train.init_v-unknown", {"train.init_v": '"random"'}, "train.init_v: must be one of [")
toml("train.init_v-gaussian-with-brute", {"train.init_v": '"gaussian"'},
     "train.method: 'brute' is exact only for v parallel to w*")
toml("train.alpha0-nan", {"train.alpha0": "nan"}, "train.alpha0: must be finite (got nan)")
toml("train.v0_scale-negative", {"train.v0_scale": "-1.0"}, "train.v0_scale: must be >= 0.0")
toml("train.offdiag0-1e308", {"train.offdiag0": "1e308"},
     "train.offdiag0: must be <= 1000000.0 (A's entries are softmax logits")
toml("train.offdiag0_std-negative", {"train.offdiag0_std": "-1.0"},
     "train.offdiag0_std: must be >= 0.0 (")
toml("train.record-unknown", {"train.record": '"every"'},
     "train.record: must be one of ['log', 'linear', 'all'] (got 'every')")
toml("train.n_records-one", {"train.n_records": "1"}, "train.n_records: must be >= 2 (got 1)")
toml("train.n_records-1e10", {"train.n_records": "1e10"}, "train.n_records: must be <= 1000000 (")
toml("train.seed-negative", {"train.seed": "-3"}, "train.seed: must be >= 0 (got -3)")
toml("train.tie_tol-large", {"train.tie_tol": "0.1"}, "train.tie_tol: must be <= 0.001 (got 0.1)")
toml("train.pa_margin-negative", {"train.pa_margin": "-1.0"}, "train.pa_margin: must be >= 0.0")
toml("train.backend-unknown", {"train.backend": '"jax"'},
     "train.backend: must be one of ['numpy', 'torch'] (got 'jax')")
toml("train.device-unknown", {"train.device": '"tpu"'},
     "train.device: must be 'cpu', 'cuda' or 'cuda:N' (got 'tpu')")
toml("train.device-cuda-index", {"train.device": '"cuda:x"', "train.backend": '"torch"'},
     "train.device: must be 'cpu', 'cuda' or 'cuda:N' (got 'cuda:x')")
toml("train.device-not-a-string", {"train.device": "0"},
     "train.device: must be 'cpu', 'cuda' or 'cuda:N' (got 0)")
toml("train.device-cuda-with-numpy", {"train.device": '"cuda"'},
     "train.device: backend 'numpy' runs on 'cpu' only (got 'cuda')")
toml("train.device-cuda-unavailable", {"train.device": '"cuda"', "train.backend": '"torch"'},
     "train.device: 'cuda' requested but CUDA is not available")
toml("train.dtype-unknown", {"train.dtype": '"float16"'},
     "train.dtype: must be one of ['float64', 'float32'] (got 'float16')")
toml("train.chunk_size-negative", {"train.chunk_size": "-1"},
     "train.chunk_size: must be >= 0 (got -1)")
toml("train.chunk_size-string", {"train.chunk_size": '"big"'},
     "train.chunk_size: must be an integer (got 'big')")
toml("train.stream-unknown", {"train.stream": '"maybe"'},
     "train.stream: must be 'auto', true or false (got 'maybe')")
toml("train.max_configs-zero", {"train.max_configs": "0"}, "train.max_configs: must be >= 1")
toml("train.max_configs-1e11", {"train.max_configs": "1e11"},
     "train.max_configs: must be <= 10000000000 (")
toml("train.max_configs-below-brute", {"train.max_configs": "10"},
     "train.max_configs: brute-force enumeration needs 486 configurations (> max_configs=10)")
toml("train.unknown-key", {"train.lr": "0.1"}, "train.lr: unknown field (allowed: ")
toml("train.lr_v-diverges", {"train.lr_v": "1e6", "train.steps": "50"},
     "run diverged at step ", code=3)

# == sections, files, papers ===================================================================
toml("section-unknown", {"optim.lr": "0.1"}, "optim: unknown section (allowed: ")
toml("section-is-a-value", raw='data = 5\n', prefix="data: must be a table (got 5)")
toml("section-array-of-tables", raw=toml_text().split("[train]")[0] + "[[train]]\nsteps = 1\n",
     prefix="train: must be a table (got [{'steps': 1}])")
toml("section-nested-table", raw=toml_text() + "[train.extra]\nx = 1\n",
     prefix="train.extra: unknown field (allowed: ")
toml("top-level-key", raw="steps = 5\n" + toml_text(),
     prefix="steps: unknown section (allowed: ")
toml("experiment-unknown-paper", extra='[experiment]\npaper = "huang2042"\n\n',
     prefix="experiment.paper: unknown paper 'huang2042' (known: ['jelassi2022', 'huang2024'])")
# a jelassi2022 config labelled as the other paper: that paper's validation names the field
toml("experiment-other-paper", extra='[experiment]\npaper = "huang2024"\n\n',
     prefix="data.D: unknown field")
toml("experiment-paper-not-a-string", extra="[experiment]\npaper = 1\n\n",
     prefix="experiment.paper: unknown paper 1")
toml("experiment-unknown-key", extra='[experiment]\nname = "x"\n\n',
     prefix="experiment.name: unknown field (allowed: ['paper'])")
toml("experiment-not-a-table", raw="experiment = 3\n", prefix="experiment: must be a table")
toml("toml-syntax", raw="[data]\nD = = 6\n", prefix="config: {tmp}/c.toml is not valid TOML: ")
toml("toml-duplicate-key", raw="[data]\nD = 6\nD = 8\n",
     prefix="config: {tmp}/c.toml is not valid TOML: ")
toml("toml-unclosed-string", raw='[data]\npartition = "grid\n',
     prefix="config: {tmp}/c.toml is not valid TOML: ")
toml("toml-empty-file", raw="", prefix="data.C: give C (patches per set) or L")
toml("config-latin1", raw="[data]\nD = 6 # café\n".encode("latin-1"),
     prefix="config: {tmp}/c.toml is not UTF-8 text (invalid continuation byte")
toml("config-utf16", raw="[data]\nD = 6\n".encode("utf-16"),
     prefix="config: {tmp}/c.toml is not UTF-8 text (invalid start byte")
toml("config-binary", raw=bytes(range(256)), prefix="config: {tmp}/c.toml is not UTF-8 text")
cli("config-missing", "run", lambda t: [t / "nope.toml", "--out", t / "out"],
    "config: cannot read {tmp}/nope.toml: No such file or directory")
cli("config-is-a-directory", "run", lambda t: [t, "--out", t / "out"],
    "config: cannot read {tmp}: Is a directory")

# == sizes refused up front (free memory pinned to FREE) =======================================
toml("size-brute-D16", {"data.D": "16", "train.max_configs": "1000000000"},
     "train.method: brute force (76527504 configurations of D = 16 patches) needs about ")
toml("size-empirical-n_train-1e8", {"train.engine": '"empirical"', "train.method": None,
                                    "train.n_train": "100000000"},
     "train.n_train: the empirical engine (N + N_test = 100010000 samples of D×d = 6×5)")
toml("size-exchangeable-D4096", {"data.D": "4096", "data.C": "64", "data.d": "2",
                                 "train.method": '"exchangeable"', "model.diag": "0.5",
                                 "train.max_configs": "10000000000"},
     "train.method: the exchangeable engine (~10^122 histograms of 2145 patterns) needs about ")
toml("size-montecarlo-fixed-draws", {"train.method": '"montecarlo"', "train.mc_resample": "false",
                                    "train.mc_samples": "1000000000"},
     "train.mc_samples: Monte Carlo with fixed draws (mc_resample = false: 1000000000 draws")
toml("size-empirical-D-d", {"train.engine": '"empirical"', "train.method": None,
                            "data.D": "4096", "data.d": "1000000", "data.C": "2",
                            "train.n_train": "1", "train.n_test": "1"},
     "train.n_train: the empirical engine")

# == command-line flags ========================================================================
_CFG = lambda t: _write_base(t)  # noqa: E731


def _write_base(tmp: Path) -> Path:
    path = tmp / "c.toml"
    path.write_text(toml_text())
    return path


def _same_files(folder: Path, names: list[str]) -> None:
    assert sorted(p.name for p in folder.iterdir()) == sorted(names), "files were written"


def _no_out(tmp: Path) -> None:
    assert not (tmp / "out").exists(), "a refused run left an output folder"


cli("run-steps-negative", "run", lambda t: [_CFG(t), "--out", t / "out", "--steps", "-5"],
    "train.steps: must be >= 0 (got -5)", check_after=_no_out)
cli("run-steps-not-integer", "run", lambda t: [_CFG(t), "--out", t / "out", "--steps", "abc"],
    "--steps: must be an integer (got 'abc')", check_after=_no_out)
cli("run-steps-fraction", "run", lambda t: [_CFG(t), "--out", t / "out", "--steps", "1.5"],
    "--steps: must be an integer (got '1.5')", check_after=_no_out)
cli("run-steps-missing-value", "run", lambda t: [_CFG(t), "--out", t / "out", "--steps"],
    "--steps: needs a value", check_after=_no_out)
cli("run-dtype-bogus", "run", lambda t: [_CFG(t), "--out", t / "out", "--dtype", "bogus"],
    "--dtype: must be one of ['float64', 'float32'] (got 'bogus')", check_after=_no_out)
cli("run-device-bogus", "run", lambda t: [_CFG(t), "--out", t / "out", "--device", "tpu"],
    "--device: must be one of ['cpu', 'cuda'] (got 'tpu')", check_after=_no_out)
cli("run-device-cuda-unavailable", "run",
    lambda t: [_CFG(t), "--out", t / "out", "--device", "cuda"],
    "train.device: 'cuda' requested but CUDA is not available", check_after=_no_out)
cli("run-backend-numpy-cuda", "run",
    lambda t: [_CFG(t), "--out", t / "out", "--device", "cuda", "--backend", "numpy"],
    "train.device: backend 'numpy' runs on 'cpu' only (got 'cuda')", check_after=_no_out)
cli("run-unknown-flag", "run", lambda t: [_CFG(t), "--out", t / "out", "--fast"],
    "--fast: unknown argument", check_after=_no_out)
cli("run-two-configs", "run", lambda t: [_CFG(t), _CFG(t), "--out", t / "out"],
    "{tmp}/c.toml: unknown argument", check_after=_no_out)
cli("run-no-out", "run", lambda t: [_CFG(t)], "out: required (--out DIR, the run folder)")
cli("run-no-config", "run", lambda t: ["--out", t / "out"], "config: required",
    check_after=_no_out)
cli("out-empty", "run", lambda t: [_CFG(t), "--out", ""], "out: must name a folder")
cli("out-is-a-file", "run", lambda t: [_CFG(t), "--out", _CFG(t)],
    "out: {tmp}/c.toml is a file, not a folder")
cli("out-below-a-file", "run", lambda t: [_CFG(t), "--out", _CFG(t) / "run"],
    "out: {tmp}/c.toml/run is below the file {tmp}/c.toml, not a folder")
cli("out-name-too-long", "run", lambda t: [_CFG(t), "--out", t / ("x" * 300) / "run"],
    "out: cannot use the folder {tmp}/" + "x" * 300 + "/run (File name too long)")
cli("out-nul-character", "run", lambda t: [_CFG(t), "--out", "a\0b"],
    "out: a path cannot hold a NUL character (got 'a\\x00b')")
cli("config-name-too-long", "run", lambda t: [t / ("x" * 300 + ".toml"), "--out", t / "out"],
    "config: cannot read {tmp}/" + "x" * 300 + ".toml: File name too long",
    check_after=_no_out)
cli("config-nul-character", "run", lambda t: ["c\0.toml", "--out", t / "out"],
    "config: a path cannot hold a NUL character (got 'c\\x00.toml')", check_after=_no_out)
cli("run-steps-too-many", "run", lambda t: [_CFG(t), "--out", t / "out", "--steps", "99999999999"],
    "train.steps: must be <= 1000000000 (a step is a full pass over the data; got 99999999999)",
    check_after=_no_out)
cli("bench-unknown-flag", "bench", ["--fastest"], "--fastest: unknown argument")


def _interrupt_at_second_step(tmp: Path):
    from theorylab.jelassi2022.engines import BruteForceEngine

    calls = []
    real = BruteForceEngine.apply

    def apply(self, params, grads):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(self, params, grads)

    BruteForceEngine.apply = apply
    try:
        return _call("run", [str(_CFG(tmp)), "--out", str(tmp / "out"), "--no-progress",
                             "--steps", "5"])
    finally:
        BruteForceEngine.apply = real


CASES.append(Case("run-interrupted", "cli", _interrupt_at_second_step, 130,
                  "interrupted at step 1; the rows so far and a checkpoint are in {tmp}/out"))

# check / figures / configdoc
cli("check-only-unknown", "check", ["--only", "bogus", "--out", "{tmp}/res"],
    "--only: unknown claim or paper (got 'bogus'); papers: ['jelassi2022', 'huang2024']")
cli("check-only-unknown-claim", "check", ["--only", "jelassi2022/thm9.9"],
    "--only: unknown claim or paper (got 'jelassi2022/thm9.9')")
cli("check-out-is-a-file", "check",
    lambda t: ["--only", "jelassi2022", "--out", _CFG(t)], "out: {tmp}/c.toml is a file")
cli("check-unknown-flag", "check", ["--fast"], "--fast: unknown argument")
cli("check-only-without-value", "check", ["--only"],
    "--only: needs a value (expected at least one argument)")
cli("figures-only-unknown", "figures", ["--only", "fig99"],
    "--only: unknown figure id or paper (got 'fig99'); see --list")
cli("figures-threads-negative", "figures", ["--threads", "-1"],
    "--threads: must be an integer >= 0 (got -1)")
cli("run-threads-negative", "run", ["--threads", "-2"],
    "--threads: must be an integer >= 0 (got -2)")
cli("bench-threads-negative", "bench", ["--threads", "-1"],
    "--threads: must be an integer >= 0 (got -1)")
cli("check-threads-not-integer", "check", ["--threads", "x"],
    "--threads: must be an integer >= 0 (got 'x')")
cli("figures-device-cuda-unavailable", "figures", ["--device", "cuda"],
    "--device: 'cuda' requested but CUDA is not available")
cli("figures-seed-negative", "figures", ["--seed", "-1"], "--seed: must be >= 0 (got -1)")
cli("figures-out-is-a-file", "figures", lambda t: ["--out", _CFG(t)],
    "out: {tmp}/c.toml is a file")
cli("figures-seed-not-integer", "figures", ["--seed", "x"], "--seed: must be an integer (got 'x')")
cli("figures-threads-not-integer", "figures", ["--threads", "two"],
    "--threads: must be an integer >= 0 (got 'two')")


def _bad_manifest(tmp: Path) -> list:
    (tmp / "figs").mkdir()
    (tmp / "figs" / "manifest.json").write_text("{not json")
    return ["--only", "jelassi2022-fig4", "--out", tmp / "figs"]


cli("figures-manifest-garbage", "figures", _bad_manifest,  # not a figures folder: not ours
    "--out: {tmp}/figs is a folder that theorylab did not write and that is not empty",
    check_after=lambda t: _same_files(t / "figs", ["manifest.json"]))
cli("configdoc-extra-argument", "configdoc", ["docs/config.md"], "docs/config.md: unknown argument")
cli("configdoc-unknown-flag", "configdoc", ["--write"], "--write: unknown argument")


# == resume ====================================================================================
def _ckpt(out: Path) -> Path:
    return out / "checkpoint.npz"


def _rewrite_ckpt(**changes):
    def damage(out: Path) -> None:
        with np.load(_ckpt(out)) as z:
            arrays = {k: z[k] for k in z.files}
        arrays.update(changes)
        arrays = {k: v for k, v in arrays.items() if v is not None}
        with open(_ckpt(out), "wb") as f:
            np.savez(f, **arrays)
    return damage


def _write(name: str, data: bytes | str):
    def damage(out: Path) -> None:
        target = out / name
        if isinstance(data, bytes):
            target.write_bytes(data)
        else:
            target.write_text(data)
    return damage


def _truncate(out: Path) -> None:
    data = _ckpt(out).read_bytes()
    _ckpt(out).write_bytes(data[: len(data) // 2])


def _ckpt_dir(out: Path) -> None:
    _ckpt(out).unlink()
    _ckpt(out).mkdir()


def _remove(name: str):
    return lambda out: (out / name).unlink()


_UNREADABLE = "resume: {tmp}/out/checkpoint.npz is not a readable checkpoint"
resume("resume-checkpoint-truncated", _truncate, _UNREADABLE)
resume("resume-checkpoint-empty", _write("checkpoint.npz", b""), _UNREADABLE)
resume("resume-checkpoint-garbage", _write("checkpoint.npz", bytes(range(256)) * 2), _UNREADABLE)
resume("resume-checkpoint-object-array", _rewrite_ckpt(A=np.array([object()])), _UNREADABLE)
resume("resume-checkpoint-is-a-directory", _ckpt_dir,
       "out: {tmp}/out/checkpoint.npz is a folder (or not a plain file)")
resume("resume-checkpoint-foreign-shapes", _rewrite_ckpt(A=np.zeros((4, 4))),
       "resume: {tmp}/out/checkpoint.npz holds arrays ")
resume("resume-checkpoint-nan", _rewrite_ckpt(A=np.full((6, 6), np.nan)),
       "resume: {tmp}/out/checkpoint.npz has non-finite values in ['A']")
resume("resume-checkpoint-no-step", _rewrite_ckpt(step=None),
       "resume: {tmp}/out/checkpoint.npz has no integer step")
resume("resume-checkpoint-float-step", _rewrite_ckpt(step=np.array(2.5)),
       "resume: {tmp}/out/checkpoint.npz has no integer step")
resume("resume-checkpoint-negative-step", _rewrite_ckpt(step=np.array(-3)),
       "resume: {tmp}/out/checkpoint.npz has a negative step (got -3)")
resume("resume-fewer-steps-than-done", lambda out: None,
       "resume: {tmp}/out is already at step 4, beyond the requested 2 steps", argv=("--steps",
                                                                                     "2"))
resume("resume-other-config", lambda out: None,
       "resume: {tmp}/out/config.toml differs from the requested configuration",
       changes={"train.lr_v": "0.25"})
resume("resume-config-missing", _remove("config.toml"),
       "resume: {tmp}/out/config.toml ")
resume("resume-config-garbage", _write("config.toml", "[data\n"),
       "resume: {tmp}/out/config.toml ")
resume("resume-config-invalid-value", _write("config.toml", "[data]\nD = 1\n"),
       "resume: {tmp}/out/config.toml ")
resume("resume-config-other-paper", _write("config.toml", '[experiment]\npaper = "x"\n'),
       "resume: {tmp}/out/config.toml does not hold a valid configuration (experiment.paper: ")
resume("resume-trajectory-wrong-columns", _write("trajectory.csv", "a,b\n1,2\n"),
       "resume: {tmp}/out/trajectory.csv does not have the trajectory columns")
resume("resume-trajectory-not-utf8", _write("trajectory.csv", b"\xff\xfe\x00step\n"),
       "resume: {tmp}/out/trajectory.csv ")
resume("resume-trajectory-missing", _remove("trajectory.csv"),
       "resume: {tmp}/out has a checkpoint but no trajectory.csv")
resume("resume-checkpoint-missing", _remove("checkpoint.npz"),
       "resume: {tmp}/out has trajectory rows but no checkpoint.npz to continue from")
resume("resume-trajectory-is-a-directory",
       lambda out: (_remove("trajectory.csv")(out), (out / "trajectory.csv").mkdir()),
       "out: {tmp}/out/trajectory.csv is a folder (or not a plain file)")


# == Python API ================================================================================
def _small():
    from tests.jelassi2022._helpers import small_config

    return small_config(steps=1)


def _sweep_cfg():
    from tests.jelassi2022._helpers import small_config

    return small_config(engine="empirical", n_train=20, n_test=10, steps=1)


def _sweep(**kwargs):
    from theorylab.jelassi2022.sweep import run_sweep

    return lambda tmp: run_sweep(_sweep_cfg(), **kwargs)


def _run(cfg=None, **kwargs):
    from theorylab import run_experiment

    return lambda tmp: run_experiment(_small() if cfg is None else cfg,
                                      **{k: (v(tmp) if callable(v) else v)
                                         for k, v in kwargs.items()})


api("run_sweep-population-engine",
    lambda tmp: __import__("theorylab").jelassi2022.run_sweep(_small()),
    "train.engine: run_sweep needs 'empirical' (got 'population')")
api("run_sweep-lr-negative", _sweep(lr_v=[-0.1]), "lr_v: must be >= 0.0 (got -0.1)")
api("run_sweep-lr-nan", _sweep(lr_v=[float("nan")]), "lr_v: must be finite (got nan)")
api("run_sweep-lr-inf", _sweep(lr_A=[float("inf")]), "lr_A: must be finite (got inf)")
api("run_sweep-lr-string", _sweep(lr_v=["0.1"]), "lr_v: must be a number (got '0.1')")
api("run_sweep-seed-fraction", _sweep(seeds=[1.5]), "seeds: must be integers (got 1.5)")
api("run_sweep-seeds-repeated", _sweep(seeds=[2, 2]), "seeds: must be distinct (got [2, 2])")
api("run_sweep-seeds-empty", _sweep(seeds=[]), "seeds: must be a non-empty list (got [])")
api("run_sweep-xp-not-a-backend", _sweep(xp="numpy"),
    "xp: must be a Backend (get_backend(...); got 'numpy')")
api("run_sweep-config-none", lambda tmp: __import__("theorylab").jelassi2022.run_sweep(None),
    "config: must be an ExperimentConfig or a table of sections (got NoneType)")
api("run_experiment-none", lambda tmp: __import__("theorylab").run_experiment(None),
    "config: must be an ExperimentConfig or a table of sections (got NoneType)")
api("run_experiment-dict-bad-value", lambda tmp: __import__("theorylab").run_experiment(
    {"data": {"D": 1}}), "data.D: must be >= 2 (got 1)")
api("run_experiment-dict-bad-section", lambda tmp: __import__("theorylab").run_experiment(
    {"data": {"C": 2}, "optim": {}}), "optim: unknown section")
api("run_experiment-out-is-a-file", _run(out=lambda t: _CFG(t)),
    "out: {tmp}/c.toml is a file, not a folder")
api("run_experiment-out-not-a-path", _run(out=123), "out: must be a path (got int 123)")
api("run_experiment-initial-not-a-mapping", _run(initial="A"),
    "initial: must be a mapping {'A': array, 'v': array} (got str)")
api("load_config-not-a-path", lambda tmp: __import__("theorylab").load_config(123),
    "config: must be a path (got int 123)")
api("run_experiment-initial-unknown-key", _run(initial={"B": np.zeros(3)}),
    "initial: unknown keys ['B'] (allowed: A, v)")
api("run_experiment-initial-wrong-shape", _run(initial={"A": np.zeros((3, 3))}),
    "initial: A must be (6, 6) and v (5,)")
api("run_experiment-initial-nan", _run(initial={"A": np.full((6, 6), np.nan)}),
    "initial: A has non-finite entries")
api("run_experiment-initial-string", _run(initial={"v": "abc"}),
    "initial: v must be an array of numbers (got 'abc')")
api("run_experiment-resume-without-out", _run(resume=True),
    "resume: needs an output folder (got out=None)")
api("ExperimentConfig-section-wrong-type", lambda tmp: __import__(
    "theorylab").ExperimentConfig(data=5), "data: must be a DataConfig or a table (got 5)")
api("ExperimentConfig-replace-unknown-field", lambda tmp: __import__(
    "theorylab").ExperimentConfig().replace(train={"stepz": 1}), "train.stepz: unknown field")
api("ExperimentConfig-replace-unknown-section", lambda tmp: __import__(
    "theorylab").ExperimentConfig().replace(optim={"lr": 1}), "optim: unknown section")
api("load_config-missing", lambda tmp: __import__("theorylab").load_config(tmp / "x.toml"),
    "config: cannot read {tmp}/x.toml: No such file or directory")
api("config_from_dict-not-a-table", lambda tmp: __import__(
    "theorylab").jelassi2022.config_from_dict([1]), "config: must be a table (got [1])")
api("get_backend-unknown", lambda tmp: __import__(
    "theorylab.core.backend").core.backend.get_backend("jax"),
    "backend: must be 'numpy' or 'torch' (got 'jax')")
api("run_checks-unknown-id", lambda tmp: __import__(
    "theorylab.commands.check").commands.check.run_checks(
    ["bogus"], out=tmp / "res"), "ids: unknown claim or paper (got 'bogus')")
api("run_figures-unknown-id", lambda tmp: __import__(
    "theorylab.core.figures").core.figures.run_figures(["fig99"], out=tmp / "figs"),
    "ids: unknown figure id (got 'fig99'); known ids: ")
api("run_figures-ids-a-string", lambda tmp: __import__(
    "theorylab.core.figures").core.figures.run_figures("jelassi2022-fig4", out=tmp / "figs"),
    "ids: must be a list of figure ids (got 'jelassi2022-fig4')")
api("run_sweep-seeds-float-array", _sweep(seeds=np.array([1.0, 2.0])),
    "seeds: must be integers (got np.float64(1.0))")


# == the test ==================================================================================
@pytest.fixture(scope="module")
def finished_run(tmp_path_factory):
    """A finished run of ``BASE`` with 4 steps (the resume rows copy and damage it)."""
    global FINISHED
    tmp = tmp_path_factory.mktemp("finished")
    cfg = tmp / "c.toml"
    cfg.write_text(toml_text({"train.steps": "4"}))
    from theorylab.commands.run import main

    assert main([str(cfg), "--out", str(tmp / "out"), "--no-progress"]) == 0
    FINISHED = tmp / "out"
    return FINISHED


def test_the_table_has_enough_distinct_kinds():
    kinds = [c.kind for c in CASES]
    assert len(kinds) == len(set(kinds)), [k for k in kinds if kinds.count(k) > 1]
    assert len(kinds) >= 80, len(kinds)


@pytest.mark.parametrize("case", CASES, ids=[c.kind for c in CASES])
def test_bad_input_ends_cleanly(case, tmp_path, monkeypatch, capsys, finished_run):
    monkeypatch.setattr(resources, "host_free_bytes", lambda: FREE)
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.chdir(tmp_path)
    capsys.readouterr()
    prefix = case.prefix.replace("{tmp}", str(tmp_path))
    if case.how == "api":
        with pytest.raises(case.expect) as info:
            case.feed(tmp_path)
        message = str(info.value)
        assert "\n" not in message, message
        assert message.startswith(prefix), message
    else:
        code = case.feed(tmp_path)
        lines = capsys.readouterr().err.strip().splitlines()
        assert len(lines) == 1, lines
        assert code == case.expect, (code, lines)
        head = prefix if case.expect == 130 else "error: " + prefix
        assert lines[0].startswith(head), lines[0]
    if case.check_after is not None:
        case.check_after(tmp_path)


def test_run_folder_left_by_a_refused_run_in_an_old_folder(tmp_path, monkeypatch, capsys):
    """A refused config in an old run's folder changes none of the old run's files."""
    from theorylab.commands.run import main

    cfg = tmp_path / "c.toml"
    cfg.write_text(toml_text())
    out = tmp_path / "out"
    assert main([str(cfg), "--out", str(out), "--no-progress"]) == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    cfg.write_text(toml_text({"data.D": "1e29"}))
    assert main([str(cfg), "--out", str(out), "--no-progress"]) == 2
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads and writes through permissions")
@pytest.mark.parametrize("what", ["config", "out"])
def test_permissions(tmp_path, capsys, what):
    from theorylab.commands.run import main

    cfg = tmp_path / "c.toml"
    cfg.write_text(toml_text())
    ro = tmp_path / "ro"
    ro.mkdir(mode=0o555)
    if what == "config":
        cfg.chmod(0)
    code = main([str(cfg), "--out", str(ro if what == "out" else tmp_path / "o"),
                 "--no-progress"])
    lines = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(lines) == 1
    assert re.match(rf"^error: {what}: ", lines[0]), lines[0]
