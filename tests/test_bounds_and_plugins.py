"""Bad input refused in one line before anything runs: values beyond a bound of the validator
(huang2024 sizes and magnitudes, thread counts), benchmark sizes checked by the engine's own
validator with an estimate, benchmark flags a paper does not use, damaged data files; and a
paper plug-in that fails is left out in one line, never ending the command for the others;
``theorylab config`` never writes into the installed package."""

from __future__ import annotations

import gzip
import os
import sys
from pathlib import Path

import pytest

from theorylab import papers
from theorylab.commands import main
from theorylab.core import registry
from theorylab.core.paper import Paper

H24 = '[experiment]\npaper = "huang2024"\n[data]\nP = 16\nC1 = 8\nC = 2\n{extra}'


def _err(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    return err[0]


@pytest.mark.parametrize("extra, start", [
    ("[train]\nsteps = 1e300\n", "error: train.steps: must be <= 1000000000"),
    ("[train]\nsteps = 9223372036854775807\n", "error: train.steps: must be <= 1000000000"),
    ("[train]\nn_records = 1e9\n", "error: train.n_records: must be <= 1000000"),
    ("[train]\nthreads = 100000\n", "error: train.threads: must be <= 1024"),
    ('[train]\nengine = "population-laplace"\nz_nodes = 8\nlaplace_step = 1e-300\n',
     "error: train.laplace_step: must be >= 0.05"),
    ('[train]\nengine = "population-laplace"\nz_nodes = 8\nlaplace_step = 1e-6\n',
     "error: train.laplace_step: must be >= 0.05"),
    ("U = 1e300\n", "error: data.U: must be <= 1000000.0"),
    ("U = 1e150\n", "error: data.U: must be <= 1000000.0"),
    ('[model]\nobjective = "cl"\ncl_temperature = 1e-300\n[train]\nengine = "cl-montecarlo"\n',
     "error: model.cl_temperature: must be >= 1e-06"),
    ("z_probs = [1.0]\n", "error: data.z_probs: only used with z_law = 'values'"),
])
def test_huang2024_values_beyond_their_bounds(tmp_path, capsys, extra, start):
    cfg = tmp_path / "c.toml"
    cfg.write_text(H24.format(extra=extra))  # U, z_probs: still in [data]
    assert main(["run", str(cfg), "--out", str(tmp_path / "r"), "--no-progress"]) == 2
    assert _err(capsys).startswith(start)
    assert not (tmp_path / "r").exists()  # refused before anything is written


def test_a_huge_P_is_refused_with_its_estimate(tmp_path, capsys):
    cfg = tmp_path / "c.toml"
    cfg.write_text(H24.format(extra="").replace("P = 16\nC1 = 8\nC = 2",
                                                "P = 1e300\nC1 = 8\nC = 2"))
    assert main(["run", str(cfg), "--out", str(tmp_path / "r")]) == 2
    assert _err(capsys).startswith("error: data.P: must be <= 1000000000")
    from theorylab.core.resources import format_bytes

    assert format_bytes(10**400) == ">1e308 B"


def test_thread_counts_are_capped_at_the_usable_cores(tmp_path, capsys):
    from theorylab.core.threads import usable_cores

    cfg = tmp_path / "c.toml"
    cfg.write_text("[data]\nD = 4\nC = 2\nd = 20\n[train]\nsteps = 3\n")
    assert main(["run", str(cfg), "--out", str(tmp_path / "r"), "--threads", "1000",
                 "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert f"threads: 1000 capped at the {usable_cores()} usable cores" in err
    assert main(["run", str(cfg), "--out", str(tmp_path / "r"), "--threads", "100000"]) == 2
    assert _err(capsys) == "error: --threads: must be <= 1024 (got 100000)"


@pytest.mark.parametrize("argv, start", [
    (["--sizes", "6"], "error: --sizes: P=6: data.C: local areas must not exceed the global"),
    (["--sizes", "7"], "error: --sizes: P=7: data.C: local areas must not exceed the global"),
    (["--sizes", "100000"], "error: --sizes: P=100000: data.P: the parameters Φ"),
    (["--sizes", "16", "--dtypes", "float32"], "error: --dtypes: not used by --paper huang2024"),
    (["--sizes", "16", "--backend", "numpy"], "error: --backend: not used by --paper huang2024"),
    (["--sizes", "16", "--max-bytes", "1"], "error: --max-bytes: not used by --paper huang2024"),
])
def test_bench_of_the_second_paper_refuses_before_measuring(capsys, argv, start):
    assert main(["bench", "--paper", "huang2024", *argv, "--repeats", "1"]) == 2
    assert _err(capsys).startswith(start)


@pytest.mark.parametrize("argv, start", [
    (["--choices", "--dtypes", "float32"], "error: --dtypes: not used by --choices"),
    (["--choices", "--quick"], "error: --quick: not used by --choices"),
    (["--targets-size", "cpu"], "error: --targets-size: not used by the size grid"),
    (["--sweep", "--max-bytes", "1e9"], "error: --max-bytes: not used by --sweep"),
    (["--targets", "--backend", "numpy"], "error: --backend: not used by --targets"),
])
def test_bench_of_the_first_paper_refuses_flags_a_mode_ignores(capsys, argv, start):
    assert main(["bench", *argv]) == 2
    assert _err(capsys).startswith(start)


def test_bench_prints_an_estimate_before_each_size(capsys, monkeypatch):
    import theorylab.huang2024.bench.cases as hbench

    monkeypatch.setattr(hbench, "bench_exact", lambda P, *a, **k: {
        "P": P, "numpy_s": 1.0, "torch_s": 1.0, "autograd_s": 1.0, "torch/autograd": 1.0,
        "torch_vs_numpy": 0.0})
    assert main(["bench", "--paper", "huang2024", "--sizes", "16"]) == 0
    out = capsys.readouterr().out
    assert "P=16: about 928 count rows, about " in out and "; measuring ..." in out


def _write_idx(path: Path, raw: bytes) -> None:
    with gzip.open(path, "wb") as f:
        f.write(raw)


@pytest.mark.parametrize("damage, words", [
    ("magic", "not an idx file (bad magic number)"),
    ("truncated", "the file has the wrong size"),
    ("labels", "do not match"),
    ("text", "not a readable gzip file"),
])
def test_a_damaged_data_file_is_one_line_naming_it(tmp_path, monkeypatch, damage, words):
    import numpy as np

    from theorylab.core.missing import DataFileError
    from theorylab.vision import imagedata

    n = 10
    images = b"\x00\x00\x08\x03" + np.array([n, 28, 28], ">i4").tobytes() + bytes(n * 784)
    labels = b"\x00\x00\x08\x01" + np.array([n], ">i4").tobytes() + bytes(n)
    for img, lab in imagedata._FASHION_MNIST_FILES.values():
        _write_idx(tmp_path / img, images)
        _write_idx(tmp_path / lab, labels)
    img = tmp_path / "train-images-idx3-ubyte.gz"
    if damage == "magic":
        _write_idx(img, b"\x01\x02" + images[2:])
    elif damage == "truncated":
        _write_idx(img, images[:-100])
    elif damage == "labels":
        _write_idx(tmp_path / "train-labels-idx1-ubyte.gz",
                   b"\x00\x00\x08\x01" + np.array([2], ">i4").tobytes() + bytes(2))
    else:
        img.write_text("plain text, not gzip\n")
    monkeypatch.setenv("THEORYLAB_FASHION_MNIST_DIR", str(tmp_path))
    with pytest.raises(DataFileError) as e:
        imagedata.load_fashion_mnist("train")
    assert str(e.value).startswith("THEORYLAB_FASHION_MNIST_DIR: ") and words in str(e.value)
    assert "\n" not in str(e.value)


# -- plug-ins -----------------------------------------------------------------------------------
def _broken(name: str, **hooks) -> Paper:
    def fail(*_a, **_k):
        raise RuntimeError(f"the {name} module is broken")

    return Paper(name=name, title=f"{name} (broken)", config_from_tables=fail, override=fail,
                 run=fail, load_claims=hooks.get("claims", fail),
                 load_figures=hooks.get("figures", fail), config_doc=hooks.get("doc", fail))


@pytest.fixture
def broken_plugin():
    paper = papers.register(_broken("brokenplug"))
    try:
        yield paper
    finally:
        papers.unregister("brokenplug")
        registry._REPORTED.clear()


def test_a_broken_plugin_is_left_out_in_one_line(broken_plugin, capsys, tmp_path):
    assert main(["check", "--list"]) == 0
    out, err = capsys.readouterr()
    assert "huang2024/thm4.2" in out  # the other papers' claims are all there
    assert err.strip() == ("paper brokenplug: its claims could not be loaded (RuntimeError: "
                           "the brokenplug module is broken); left out")
    assert main(["config"]) == 0
    out, err = capsys.readouterr()
    assert "## `huang2024`" in out and "brokenplug: its config reference" in err
    import theorylab.commands.check as check

    assert "huang2024/thm4.2" in check.resolve_claims(["huang2024/thm4.2"])
    registry._REPORTED.clear()  # (said once per process: maybe already when it was registered)
    papers.load_all_figures()
    assert "brokenplug: its figures could not be loaded" in capsys.readouterr().err


def test_a_plugin_that_exits_at_import_is_left_out(tmp_path, monkeypatch, capsys):
    mod = tmp_path / "exits_at_import.py"
    mod.write_text("raise SystemExit(3)\n")
    meta = tmp_path / "exits_at_import-0.1.dist-info"
    meta.mkdir()
    (meta / "METADATA").write_text("Metadata-Version: 2.1\nName: exits-at-import\n"
                                   "Version: 0.1\n")
    (meta / "entry_points.txt").write_text("[theorylab.papers]\nexits = exits_at_import:PAPER\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert set(papers.load_entry_points()) == set(papers.BUILT_IN)
    assert _err(capsys) == ("theorylab.papers: entry point 'exits' (exits_at_import:PAPER) not "
                            "loaded (SystemExit: 3); left out")
    sys.modules.pop("exits_at_import", None)


def test_a_plugin_that_raises_keyboardinterrupt_at_import_is_left_out(tmp_path, capsys):
    """The command imports the papers with signals deferred: a KeyboardInterrupt raised then is
    the plug-in's own, not a Ctrl-C (which is noted, and raised after the import)."""
    import os
    import subprocess

    (tmp_path / "ki_at_import.py").write_text("raise KeyboardInterrupt\n")
    meta = tmp_path / "ki_at_import-0.1.dist-info"
    meta.mkdir()
    (meta / "METADATA").write_text("Metadata-Version: 2.1\nName: ki-at-import\nVersion: 0.1\n")
    (meta / "entry_points.txt").write_text("[theorylab.papers]\nki = ki_at_import:PAPER\n")
    env = {**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    done = subprocess.run([sys.executable, "-m", "theorylab", "run", "--list"], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip() == ("theorylab.papers: entry point 'ki' (ki_at_import:PAPER) not "
                                   "loaded (KeyboardInterrupt: ); left out")
    assert "huang2024" in done.stdout


# -- theorylab config ------------------------------------------------------------------------------
def test_config_prints_and_writes_only_where_asked(tmp_path, capsys, monkeypatch):
    import theorylab.commands.config as configdoc

    before = configdoc.PAGE.read_bytes()
    assert main(["config"]) == 0
    assert capsys.readouterr().out.startswith("# Run-config reference")
    assert configdoc.PAGE.read_bytes() == before  # the source tree is never written
    user = tmp_path / "notes.md"
    user.write_text("my notes\n")
    assert main(["config", "--out", str(user)]) == 2
    assert "refusing to overwrite" in _err(capsys)
    assert main(["config", "--out", str(tmp_path / "c.md")]) == 0
    assert main(["config", "--out", str(tmp_path / "c.md")]) == 0  # its own page: replaced
    # an installed package has no docs/config.md beside it: --check says so, exit 2
    monkeypatch.setattr(configdoc, "PAGE", tmp_path / "site" / "docs" / "config.md")
    capsys.readouterr()
    assert configdoc.main(["--check"]) == 2
    assert _err(capsys).startswith("error: --check: no docs/config.md beside the package")
    assert configdoc.main(["--check", str(tmp_path / "c.md")]) == 0


def test_config_runs_from_a_read_only_install(tmp_path):
    """A copy of the package in a read-only folder (as site-packages for a user): ``config``
    prints, and writes nothing there."""
    import shutil
    import subprocess

    site = tmp_path / "site"
    shutil.copytree(Path(papers.__file__).parent, site / "theorylab",
                    ignore=shutil.ignore_patterns("__pycache__"))
    for p in [site, *site.rglob("*")]:
        os.chmod(p, 0o555 if p.is_dir() else 0o444)
    try:
        env = {**os.environ, "PYTHONPATH": str(site), "PYTHONDONTWRITEBYTECODE": "1"}
        res = subprocess.run([sys.executable, "-m", "theorylab", "config"], env=env,
                             cwd=tmp_path, capture_output=True, text=True, timeout=120)
        assert res.returncode == 0, res.stderr
        assert res.stdout.startswith("# Run-config reference") and not res.stderr
        assert not (site / "docs").exists()
    finally:
        for p in [site, *site.rglob("*")]:
            os.chmod(p, 0o755 if p.is_dir() else 0o644)
