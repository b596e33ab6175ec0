"""Replay the rows of a hostile-input table and say how each ends now.

    python tools/hostile_replay.py OUT.md [--table 2026-11-26|2026-11-27] [--only ID ...]

Each row (a bad input or a fault: a damaged file, a signal at a moment, a full disk, another
user, a plug-in that fails, a concurrent writer or reader) is rebuilt in a scratch folder and
its command run as a subprocess; the table written to ``OUT.md`` gives, per row id, the exit
status, the last line of the output, whether a traceback was printed, and what was checked
beside it (a user's file unchanged, no code run, git status). Rows that need root (a small
tmpfs for a full disk, runs as the user ``nobody``) are marked "not run" elsewhere.

A manual tool outside the test suite, minutes long (it trains the quick real-image
ViTs several times and runs the quick checks under signals).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import pickle
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable
FMNIST = Path("/usr/share/datasets/fashion-mnist")
IS_ROOT = os.geteuid() == 0

ROWS: dict[str, callable] = {}


def row(rid):
    def deco(fn):
        ROWS[rid] = fn
        return fn
    return deco


# -- running --------------------------------------------------------------------------------------
class Result:
    def __init__(self, rc, out, note=""):
        self.rc, self.out, self.note = rc, out, note

    @property
    def last(self) -> str:
        lines = [ln.strip() for ln in self.out.splitlines() if ln.strip()]
        return lines[-1] if lines else ""

    @property
    def traceback(self) -> bool:
        return "Traceback (most recent call last)" in self.out


def run(argv, *, env=None, cwd=None, timeout=600, signal_after=None, sig=signal.SIGINT,
        user=None, stdin=None) -> Result:
    """Run ``argv`` (a list; ``theorylab`` means this Python's ``-m theorylab``), output merged;
    with ``signal_after`` seconds, ``sig`` is sent to its whole process group (a terminal's
    Ctrl-C); with ``user``, as that user (setpriv)."""
    argv = [str(a) for a in argv]
    if argv[0] == "theorylab":
        argv = [PY, "-m", "theorylab", *argv[1:]]
    if user is not None:
        argv = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups", *argv]
    full_env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
                "THEORYLAB_THREADS": "1", **(env or {})}
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=full_env, cwd=cwd or SCRATCH, start_new_session=True,
                            errors="replace", stdin=stdin)
    try:
        if signal_after is not None:
            try:
                out, _ = proc.communicate(timeout=signal_after)
                return Result(proc.returncode, out, "finished before the signal")
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, sig)
        out, _ = proc.communicate(timeout=timeout)
        return Result(proc.returncode, out)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        return Result(124, out, f"killed after {timeout} s")


def md5(path) -> str:
    return hashlib.md5(Path(path).read_bytes()).hexdigest()


def git_status(root=ROOT) -> str:
    return subprocess.run(["git", "-C", str(root), "status", "--short"], capture_output=True,
                          text=True).stdout.strip()


# -- fixtures -------------------------------------------------------------------------------------
SCRATCH = Path(tempfile.mkdtemp(prefix="replay-"))

H_BASE = ('[experiment]\npaper = "huang2024"\n[data]\nP = 16\nC1 = 8\nC = 2\n{data}'
          '[model]\n{model}[train]\nsteps = {steps}\nmc_samples = 32\n{train}')
J_BASE = "[data]\nD = 4\nC = 2\nd = 20\n[train]\nsteps = {steps}\n{train}"


def cfg(name, text) -> Path:
    path = SCRATCH / "cfg" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def h_cfg(name, steps=40, data="", model="", train="") -> Path:
    return cfg(name, H_BASE.format(steps=steps, data=data, model=model, train=train))


def j_cfg(name, steps=30, train="") -> Path:
    return cfg(name, J_BASE.format(steps=steps, train=train))


_DONE: dict[str, Path] = {}


def run_ok() -> Path:
    """A finished small run folder (``plot/run_ok``)."""
    if "run_ok" not in _DONE:
        out = SCRATCH / "plot" / "run_ok"
        r = run(["theorylab", "run", j_cfg("j_ok.toml", 40), "--out", out, "--no-progress"])
        assert r.rc == 0, r.out
        _DONE["run_ok"] = out
    return _DONE["run_ok"]


def plot_run_with(name, text) -> Path:
    out = SCRATCH / "plot" / name
    shutil.copytree(run_ok(), out)
    (out / "trajectory.csv").write_text(text)
    return out


def sweep_store(name, axes, base=None) -> Path:
    spec = SCRATCH / "spec" / f"{name}.toml"
    spec.parent.mkdir(parents=True, exist_ok=True)
    spec.write_text((base or "[base_config.data]\nD = 4\nC = 2\nd = 20\n"
                     "[base_config.train]\nsteps = 10\nn_records = 4\n")
                    + f"[sweep]\naxes = {axes}\n")
    out = SCRATCH / "plot" / name
    r = run(["theorylab", "sweep", spec, "--out", out, "--workers", "0", "--no-progress"])
    assert r.rc == 0, r.out
    return out


def fmnist_copy(name) -> Path:
    """A copy of the Fashion-MNIST files, or a stand-in of their format (random images and
    labels, 2000 training and 500 test images) where the data set is not installed."""
    out = SCRATCH / name
    if not out.exists():
        if FMNIST.is_dir():
            shutil.copytree(FMNIST, out)
        else:
            fake_fmnist(out)
    return out


def fake_fmnist(out: Path) -> None:
    """Idx files named and shaped as Fashion-MNIST's: enough for the quick real-image rows."""
    import gzip

    import numpy as np

    from theorylab.vision.imagedata import _FASHION_MNIST_FILES

    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    for img, lab in _FASHION_MNIST_FILES.values():
        n = 2000 if img.startswith("train") else 500
        x = rng.integers(0, 256, size=(n, 28, 28), dtype=np.uint8)
        y = rng.integers(0, 10, size=n, dtype=np.uint8)
        with gzip.open(out / img, "wb") as f:
            f.write(b"\x00\x00\x08\x03" + np.array([n, 28, 28], ">i4").tobytes() + x.tobytes())
        with gzip.open(out / lab, "wb") as f:
            f.write(b"\x00\x00\x08\x01" + np.array([n], ">i4").tobytes() + y.tobytes())


def realvit_key(cache: Path, fm_dir: Path, stand_in=False) -> Path:
    code = ("import sys; from theorylab.huang2024 import realvit as rv; "
            "from theorylab.vision.store import key_name; "
            f"print(key_name(rv.store_key(rv.QUICK, 'mae', {stand_in})))")
    r = run([PY, "-c", code], env={"THEORYLAB_FASHION_MNIST_DIR": str(fm_dir)})
    return cache / "vision" / f"{r.last}.npz"


def realvit_check(cache: Path | None, fm_dir: Path, out: Path) -> Result:
    """The real-image claim, quick; the note gives its verdict and every line that is not the
    summary table's (a ``cache:`` or ``error:`` line)."""
    r = run(["theorylab", "check", "--only", "huang2024/realvit-diversity", "--quick",
             "--no-figures", *(["--cache", cache] if cache else []), "--out", out],
            env={"THEORYLAB_FASHION_MNIST_DIR": str(fm_dir)}, timeout=900)
    said = [ln.strip() for ln in r.out.splitlines()
            if ln.startswith(("cache:", "error:", "paper "))]
    verdict = [ln.split()[1] for ln in r.out.splitlines()
               if ln.startswith("huang2024/realvit-diversity")]
    r.note = f"verdict {verdict[0] if verdict else '?'}; " + (" / ".join(said) or "no other line")
    return r


class Planted:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


@contextlib.contextmanager
def tmpfs(size="2m"):
    """A small tmpfs (root only)."""
    mnt = Path(tempfile.mkdtemp(prefix="tmpfs-", dir=SCRATCH))
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mnt)],
                   check=True)
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


def fill(mnt: Path, leave: int = 0) -> None:
    """Fill ``mnt`` up to ``leave`` free bytes."""
    free = shutil.disk_usage(mnt).free
    with contextlib.suppress(OSError):
        (mnt / "filler").write_bytes(b"\0" * max(0, free - leave))


def clone(name: str = "clone") -> Path:
    """A copy of the source tree (package and docs), for rows that damage it."""
    if name not in _DONE:
        dst = SCRATCH / name
        shutil.copytree(ROOT, dst, ignore=shutil.ignore_patterns(".venv", "runs", "__pycache__",
                                                                  "site", ".git"))
        subprocess.run(["git", "init", "-q", str(dst)], check=True)
        subprocess.run(["git", "-C", str(dst), "add", "-A"], check=True)
        subprocess.run(["git", "-C", str(dst), "-c", "user.name=r", "-c", "user.email=r@r",
                        "commit", "-qm", "clone"], check=True)
        _DONE[name] = dst
    return _DONE[name]


def site_install() -> Path:
    """The package alone in a folder, as a non-editable install puts it in site-packages."""
    if "site" not in _DONE:
        site = SCRATCH / "inst" / "site"
        shutil.copytree(ROOT / "theorylab", site / "theorylab",
                        ignore=shutil.ignore_patterns("__pycache__"))
        _DONE["site"] = site
    return _DONE["site"]


PLUGIN_OK = '''
import math
import pandas as pd
from theorylab.core.paper import Paper

def _fail(*a, **k):
    raise RuntimeError("claims module of the plugin is broken")

def _tables(t):
    return t

PAPER = Paper(name="{name}", title="a plug-in ({name})", config_from_tables=_tables,
              override=lambda c, o: c, run=_fail, load_claims={claims},
              load_figures={figures}, config_doc=lambda: "plugin page\\n")
'''


def plugin(name, *, claims="dict", figures="lambda: None", raise_at_import=None) -> Path:
    """A dist-info declaring the entry point ``theorylab.papers`` of module ``name``."""
    root = SCRATCH / "plug" / name
    root.mkdir(parents=True, exist_ok=True)
    if raise_at_import:
        (root / f"{name}.py").write_text(f"raise {raise_at_import}\n")
    else:
        (root / f"{name}.py").write_text(PLUGIN_OK.format(name=name, claims=claims,
                                                           figures=figures))
    meta = root / f"{name}-0.1.dist-info"
    meta.mkdir(exist_ok=True)
    (meta / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    (meta / "entry_points.txt").write_text(f"[theorylab.papers]\n{name} = {name}:PAPER\n")
    return root


# -- the rows -------------------------------------------------------------------------------------
TRAJ = "step,loss,alpha,gamma\n0,1.0,0.0,0.0\n5,0.5,0.4,0.1\n10,0.2,0.9,0.3\n"


@row("P8")
def _():
    out = plot_run_with("t_torn", TRAJ + "21,0.05,0.")
    return run(["theorylab", "plot", out])


@row("P13")
def _():
    return run(["theorylab", "plot",
                plot_run_with("t_steptext", "step,loss\ns0,1.0\ns1,0.5\ns2,0.2\n")])


@row("P14")
def _():
    return run(["theorylab", "plot", plot_run_with(
        "t_big", TRAJ + "11,1e308,-1e308,1e308\n12,-1e308,1e308,-1e308\n")])


@row("P20")
def _():
    photo = SCRATCH / "plot" / "user_photo.png"
    photo.parent.mkdir(parents=True, exist_ok=True)
    photo.write_bytes(b"\x89PNG\r\n\x1a\n" + os.urandom(2000))
    before = md5(photo)
    r = run(["theorylab", "plot", run_ok(), "--out", photo])
    r.note = "user's PNG unchanged" if md5(photo) == before else "USER'S PNG CHANGED"
    return r


@row("P31")
def _():
    base = ('[base_config.experiment]\npaper = "huang2024"\n[base_config.data]\nP = 16\n'
            'C1 = 8\nC = 2\nz_law = "values"\n[base_config.train]\nsteps = 5\n'
            'mc_samples = 16\nn_records = 3\n')
    out = sweep_store("st_s_listaxis", '{"data.z_values" = [[0.5, 1.5], [1.0]], '
                      '"data.seed" = [0, 1]}', base)
    return run(["theorylab", "plot", out])


@row("P32")
def _():
    src = sweep_store("st_ok", '{"data.q" = [0.1, 0.3], "data.d" = [10, 20]}')
    out = SCRATCH / "plot" / "st_trunc"
    shutil.copytree(src, out)
    data = (out / "results.parquet").read_bytes()
    (out / "results.parquet").write_bytes(data[: len(data) // 2])
    return run(["theorylab", "plot", out])


@row("P40")
def _():
    path = SCRATCH / "plot" / "textfile.parquet"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("this is text\n")
    return run(["theorylab", "plot", path])


def as_nobody(argv) -> Result | None:
    """``argv`` (after ``python -m``) run by the user nobody from /tmp (root only)."""
    if not IS_ROOT:
        return None
    nb = SCRATCH / "nb"
    (nb / "mpl").mkdir(parents=True, exist_ok=True)
    for p in (SCRATCH, nb, nb / "mpl"):
        os.chmod(p, 0o777 if p != SCRATCH else 0o755)
    return run([PY, "-m", *argv], user=65534, cwd="/tmp", env={"MPLCONFIGDIR": str(nb / "mpl")})


@row("P51")
def _():
    src = run_ok()
    for p in [src.parent, src]:
        os.chmod(p, 0o755)
    return as_nobody(["theorylab", "plot", src])


@row("P52")
def _():
    ro = SCRATCH / "ro"
    ro.mkdir(exist_ok=True)
    os.chmod(ro, 0o755)
    return as_nobody(["theorylab", "plot", run_ok(), "--out", ro / "x.png"])


@row("P53")
def _():
    target = ROOT / "figures" / "huang2024-fig2.png"
    before = md5(target)
    r = run(["theorylab", "plot", run_ok(), "--out", "figures/huang2024-fig2.png"], cwd=ROOT)
    r.note = ("committed figure unchanged" if md5(target) == before else
              "COMMITTED FIGURE CHANGED") + f"; git status: {git_status() or 'clean'}"
    return r


@row("B2")
def _():
    return run(["theorylab", "bench", "--paper", "huang2024", "--sizes", "6", "--repeats", "1",
                "--max-seconds", "1"])


@row("B3")
def _():
    return run(["theorylab", "bench", "--paper", "huang2024", "--sizes", "7", "--repeats", "1",
                "--max-seconds", "1"])


@row("B7")
def _():
    return run(["theorylab", "bench", "--paper", "huang2024", "--sizes", "100000", "--repeats",
                "1", "--max-seconds", "1"], timeout=120)


@row("B11")
def _():
    notes = []
    first = None
    for flag in (["--dtypes", "float32"], ["--backend", "numpy"], ["--max-bytes", "1"]):
        r = run(["theorylab", "bench", "--paper", "huang2024", "--sizes", "16", *flag,
                 "--repeats", "1", "--max-seconds", "1"])
        first = first or r
        notes.append(f"{flag[0]}: exit {r.rc}")
    first.note = "; ".join(notes)
    return first


@row("M9")
def _():
    return run(["theorylab", "bench", "--paper", "huang2024", "--sizes", "256", "--repeats",
                "5"], signal_after=12)


@row("M8")
def _():
    return run(["theorylab", "bench", "--quick", "--repeats", "2", "--max-seconds", "2"],
               signal_after=8)


@row("T_threads")
def _():
    c = h_cfg("t_threads_huge.toml", steps=5, train='engine = "population-laplace"\n'
              'z_nodes = 8\nbackend = "torch"\nthreads = 100000\n')
    return run(["theorylab", "run", c, "--out", SCRATCH / "out" / "torch" / "t_threads",
                "--no-progress"])


@row("R1b")
def _():
    c = h_cfg("h_long.toml", steps=3000, train='engine = "population-laplace"\nz_nodes = 8\n')
    out = SCRATCH / "out" / "rs1"
    r = run(["theorylab", "run", c, "--out", out, "--backend", "torch", "--no-progress"],
            signal_after=10)
    if "Resume with: " not in r.out:
        r.note = f"no resume command printed (exit {r.rc}: {r.last})"
        return r
    again = r.out.split("Resume with: ")[1].split()
    r2 = run(again, timeout=900)
    r2.note = f"the interrupted run: exit {r.rc}; then the printed resume command"
    return r2


@row("TH1")
def _():
    return run(["theorylab", "run", h_cfg("h_base.toml"), "--out", SCRATCH / "out" / "th1",
                "--threads", "100000", "--no-progress"])


def _vc(name) -> tuple[Path, Path]:
    fm = fmnist_copy("fmnist")
    cache = SCRATCH / "vc" / name
    cache.mkdir(parents=True, exist_ok=True)
    return fm, cache


def _realvit_row(name, plant) -> Result:
    fm, cache = _vc(name)
    key = realvit_key(cache, fm)
    key.parent.mkdir(parents=True, exist_ok=True)
    plant(key)
    return realvit_check(cache, fm, SCRATCH / "out" / name)


@row("V3")
def _():
    data = pickle.dumps({"config": None, "x": list(range(1000))})
    return _realvit_row("c3", lambda key: key.write_bytes(data[: len(data) // 2]))


@row("V4")
def _():
    return _realvit_row("c4", lambda key: key.write_text("some text under the key\n" * 50))


@row("V5")
def _():
    return _realvit_row("c5", lambda key: key.write_bytes(pickle.dumps({"table": 1})))


@row("V6")
def _():
    fm, cache = _vc("c6")
    nodata = SCRATCH / "nodata"
    nodata.mkdir(exist_ok=True)
    code = ("from theorylab.huang2024 import realvit as rv; import sys; "
            "from theorylab.vision.store import RunStore; "
            "rv.run_realvit(rv.QUICK, stand_in=True, store=RunStore(sys.argv[1]))")
    made = run([PY, "-c", code, cache], env={"THEORYLAB_FASHION_MNIST_DIR": str(nodata)},
               timeout=900)
    assert made.rc == 0, made.out
    stand = realvit_key(cache, nodata, stand_in=True)
    key = realvit_key(cache, fm)
    stand.rename(key)
    return realvit_check(cache, fm, SCRATCH / "out" / "v6")


@row("V7")
def _():
    marker = SCRATCH / "PWNED"
    evil = pickle.dumps(Planted(str(marker)))

    def plant(key):
        key.write_bytes(evil)
        key.with_suffix(".pkl").write_bytes(evil)

    r = _realvit_row("c7", plant)
    r.note += "; CODE RAN (PWNED exists)" if marker.exists() else "; no code ran (no PWNED file)"
    return r


@row("V9")
def _():
    fm, cache = _vc("c9")
    (cache / "vision").write_text("")
    return realvit_check(cache, fm, SCRATCH / "out" / "v9")


@row("V10")
def _():
    return _realvit_row("c10", lambda key: key.mkdir())


def _fm_damaged(name, damage) -> Result:
    fm = fmnist_copy(name)
    damage(fm)
    return realvit_check(None, fm, SCRATCH / "out" / name)


def _regz(path: Path, raw: bytes) -> None:
    import gzip

    with gzip.open(path, "wb") as f:
        f.write(raw)


def _raw(path: Path) -> bytes:
    import gzip

    with gzip.open(path, "rb") as f:
        return f.read()


@row("V13")
def _():
    f = "train-images-idx3-ubyte.gz"
    return _fm_damaged("fm_bad1", lambda fm: _regz(fm / f, b"\x01\x02" + _raw(fm / f)[2:]))


@row("V14")
def _():
    f = "train-images-idx3-ubyte.gz"
    return _fm_damaged("fm_bad2", lambda fm: _regz(fm / f, _raw(fm / f)[:-5000]))


@row("V15")
def _():
    import numpy as np

    f = "train-labels-idx1-ubyte.gz"
    labels = b"\x00\x00\x08\x01" + np.array([200], ">i4").tobytes() + bytes(200)
    return _fm_damaged("fm_bad3", lambda fm: _regz(fm / f, labels))


@row("V16")
def _():
    f = "train-images-idx3-ubyte.gz"
    return _fm_damaged("fm_bad4", lambda fm: (fm / f).write_text("plain text\n"))


@row("V19")
def _():
    nodata = SCRATCH / "nodata"
    nodata.mkdir(exist_ok=True)
    cache = SCRATCH / "vc" / "c19"
    key = realvit_key(cache, nodata, stand_in=True)
    key.parent.mkdir(parents=True, exist_ok=True)
    key.write_bytes(b"garbage\n" * 100)
    key.with_suffix(".pkl").write_bytes(b"garbage\n" * 100)
    return run(["theorylab", "figures", "--only", "huang2024-fig1", "--quick", "--cache", cache,
                "--out", SCRATCH / "out" / "v19"],
               env={"THEORYLAB_FASHION_MNIST_DIR": str(nodata)}, timeout=900)


@row("D8")
def _():
    if not IS_ROOT:
        return None
    fm = fmnist_copy("fmnist")
    with tmpfs("2m") as mnt:
        (mnt / "cache").mkdir()
        fill(mnt, leave=20_000)
        return realvit_check(mnt / "cache", fm, SCRATCH / "out" / "d8")


ROWS["E5"] = lambda: as_nobody(["theorylab", "config"])


@row("E6")
def _():
    r = run([PY, "-m", "theorylab", "config"], cwd="/tmp",
            env={"PYTHONPATH": str(site_install())})
    r.note = f"{len(r.out.splitlines())} lines printed; site/docs exists: " \
             f"{(site_install() / 'docs').exists()}"
    return r


@row("E7")
def _():
    return run([PY, "-m", "theorylab", "config", "--check"], cwd="/tmp",
               env={"PYTHONPATH": str(site_install())})


@row("E8")
def _():
    c = clone()
    page = c / "docs" / "config.md"
    if page.is_file():
        page.unlink()
        page.mkdir()
    r = run([PY, "-m", "theorylab", "config"], cwd=c, env={"PYTHONPATH": str(c)})
    r.note = f"{len(r.out.splitlines())} lines printed"
    return r


def _plug_env(*names) -> dict:
    return {"PYTHONPATH": os.pathsep.join(str(plugin(*n) if isinstance(n, tuple) else n)
                                          for n in names)}


@row("F6")
def _():
    env = {"PYTHONPATH": str(plugin("s_exit", raise_at_import="SystemExit(3)"))}
    r = run(["theorylab", "run", h_cfg("h_base.toml"), "--out",
             SCRATCH / "out" / "plug" / "f6", "--no-progress"], env=env)
    r.note = " / ".join(ln.strip() for ln in r.out.splitlines() if "s_exit" in ln)
    return r


def _bad_claims():
    return {"PYTHONPATH": str(plugin("s_badclaims", claims="_fail", figures="_fail"))}


@row("F7")
def _():
    return run(["theorylab", "check", "--list"], env=_bad_claims())


@row("F8")
def _():
    return run(["theorylab", "figures", "--list"], env=_bad_claims())


@row("F9")
def _():
    return run(["theorylab", "check", "--only", "huang2024/thm4.2", "--quick", "--out",
                SCRATCH / "out" / "plug" / "f9", "--no-figures"], env=_bad_claims(),
               timeout=900)


@row("F11")
def _():
    c = clone("clone_f11")
    env = {"PYTHONPATH": os.pathsep.join([str(plugin("s_ok")), str(c)])}
    r = run([PY, "-m", "theorylab", "config"], cwd=c, env=env)
    r.note = (f"prints {len(r.out.splitlines())} lines (plug-in page included: "
              f"{'plugin page' in r.out}); git status of the clone: {git_status(c) or 'clean'}")
    return r


def _spec(name, n, steps=10, keep="") -> Path:
    spec = SCRATCH / "spec" / f"{name}.toml"
    spec.parent.mkdir(parents=True, exist_ok=True)
    qs = [round(0.01 * (i + 1), 3) for i in range(n)]
    spec.write_text("[base_config.data]\nD = 4\nC = 2\nd = 20\n[base_config.train]\n"
                    f"steps = {steps}\nrecord = \"all\"\n[sweep]\naxes = {{\"data.q\" = {qs}}}\n"
                    f"{keep}")
    return spec


@row("G15")
def _():
    out = SCRATCH / "out" / "store" / "g15"
    out.mkdir(parents=True)
    (out / "points").write_text("")
    return run(["theorylab", "sweep", _spec("s_ok", 2), "--out", out, "--workers", "0",
                "--no-progress"])


@row("G11")
def _():
    spec = _spec("s_many", 30)
    out = SCRATCH / "out" / "store" / "race"
    reader = ("import sys, time\nfrom theorylab.core.sweep import Store, run_sweep_spec\n"
              "import theorylab.papers\nend = time.time() + 120\nn = 0\n"
              "while time.time() < end:\n"
              "    try:\n        Store(sys.argv[2]); run_sweep_spec(sys.argv[1], sys.argv[2], "
              "dry_run=True, say=lambda *a: None)\n    except ValueError:\n        pass\n"
              "    n += 1\n")
    readers = subprocess.Popen([PY, "-c", reader, str(spec), str(out)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        r = run(["theorylab", "sweep", spec, "--out", out, "--workers", "0", "--no-progress"])
    finally:
        readers.kill()
        readers.wait()
    import pandas as pd

    table = pd.read_parquet(out / "results.parquet")
    r.note = f"dry-run readers in a loop beside it; {int((table.status == 'ok').sum())} of 30 " \
             "points ok"
    return r


@row("LOCKRACE")
def _():
    out = SCRATCH / "out" / "store" / "lockrace"
    out.mkdir(parents=True)
    (out / "sweep.lock").write_text(json.dumps({"pid": 999999, "host": os.uname().nodename}))
    code = ("import os, sys, time\nfrom theorylab.core.sweep import Store\n"
            "try:\n    with Store(sys.argv[1]).lock(say=lambda *a: None):\n"
            "        print(os.getpid(), 'HOLDS the lock', flush=True); time.sleep(2)\n"
            "except ValueError as e:\n    print(os.getpid(), 'refused:', str(e)[:60])\n")
    procs = [subprocess.Popen([PY, "-c", code, str(out)], stdout=subprocess.PIPE, text=True)
             for _ in range(2)]
    outs = [p.communicate()[0].strip() for p in procs]
    holds = sum("HOLDS" in o for o in outs)
    return Result(0, " / ".join(outs), f"{holds} of 2 processes held the lock")


@row("D1")
def _():
    if not IS_ROOT:
        return None
    with tmpfs() as mnt:
        c = j_cfg("h_all.toml", steps=200000, train='record = "all"\n')
        return run(["theorylab", "run", c, "--out", mnt / "runs" / "d1", "--no-progress"],
                   timeout=600)


def _d2_spec():
    return _spec("s_many2", 40, steps=2000, keep='keep = "trajectory"\n')


@row("D2")
def _():
    if not IS_ROOT:
        return None
    with tmpfs() as mnt:
        r = run(["theorylab", "sweep", _d2_spec(), "--out", mnt / "sw", "--workers", "0",
                 "--no-progress"])
        r7 = run(["theorylab", "sweep", _d2_spec(), "--out", mnt / "sw", "--workers", "0",
                  "--no-progress"])
        ROWS_EXTRA["D7"] = r7
        with contextlib.suppress(OSError):
            for p in list((mnt / "sw" / "points").glob("*.parquet"))[:3]:
                p.unlink()  # room again
        r7b = run(["theorylab", "sweep", _spec("s_small", 1), "--out", mnt / "sw2",
                   "--workers", "0", "--no-progress"])
        r7.note = f"then, with room again, a sweep into the same disk: exit {r7b.rc}"
        return r


ROWS_EXTRA: dict[str, Result] = {}


@row("D7")
def _():
    if not IS_ROOT:
        return None
    if "D7" not in ROWS_EXTRA:
        ROWS["D2"]()
    return ROWS_EXTRA["D7"]


def _full_disk(leave: int, argv: list, timeout: int = 900):
    """A row on a 2 MB tmpfs filled up to ``leave`` free bytes (``argv``: a callable takes the
    mount point)."""
    if not IS_ROOT:
        return None
    with tmpfs() as mnt:
        fill(mnt, leave=leave)
        return run([a(mnt) if callable(a) else a for a in argv], timeout=timeout)


ROWS["D3"] = lambda: _full_disk(30_000, ["theorylab", "figures", "--only", "huang2024-fig2",
                                         "--quick", "--out", lambda m: m / "fig"])
ROWS["D4"] = lambda: _full_disk(10_000, ["theorylab", "check", "--only", "huang2024/thm4.2",
                                         "--quick", "--out", lambda m: m / "chk"])
ROWS["D5"] = lambda: _full_disk(0, ["theorylab", "plot", run_ok(), "--out",
                                    lambda m: m / "p.png"])
# an empty file still fits (the check of --out), the table does not
ROWS["D6"] = lambda: _full_disk(0, ["theorylab", "bench", "--paper", "huang2024", "--sizes",
                                        "16", "--repeats", "1", "--max-seconds", "1", "--out",
                                        lambda m: m / "b.csv"])


def _foreign_checkpoint(name: str, steps: int, other_seed: int, other_steps: int) -> Result:
    """A finished seed-0 run of ``steps``, the checkpoint of a run of ``other_seed`` at
    ``other_steps`` copied into it, then resumed to 1200 steps."""
    def h_run(seed, n, out, *more):
        return run(["theorylab", "run", h_cfg(f"hr_{seed}.toml", steps=n,
                                              train=f"seed = {seed}\n"), "--out", out, *more,
                    "--no-progress"])

    a, b = SCRATCH / "out" / "res" / name, SCRATCH / "out" / "res" / f"{name}b"
    h_run(0, steps, a)
    h_run(other_seed, other_steps, b)
    shutil.copy(b / "checkpoint.npz", a / "checkpoint.npz")
    return h_run(0, steps, a, "--resume", "--steps", "1200")


ROWS["H1"] = lambda: _foreign_checkpoint("h1", 400, 1, 900)  # another seed's
ROWS["H2"] = lambda: _foreign_checkpoint("h2", 300, 0, 900)  # its own run, further on


@row("H10")
def _():
    out = SCRATCH / "out" / "res" / "h10"
    (out / "trajectory.csv").mkdir(parents=True)
    return run(["theorylab", "run", h_cfg("hr_0.toml", steps=300, train="seed = 0\n"), "--out",
                out, "--steps", "50", "--no-progress"])


@row("L1")
def _():
    out = SCRATCH / "out" / "res" / "conc"
    first = subprocess.Popen([PY, "-m", "theorylab", "run",
                              str(h_cfg("hr_B5k.toml", steps=5000, train="seed = 0\n")),
                              "--out", str(out), "--no-progress"],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             env={**os.environ, "OMP_NUM_THREADS": "1"})
    deadline = time.time() + 60
    while not (out / "trajectory.csv").exists() and time.time() < deadline:
        time.sleep(0.2)
    r = run(["theorylab", "run", h_cfg("hr_B5k1.toml", steps=5000, train="seed = 1\n"),
             "--out", out, "--no-progress"])
    out1, _ = first.communicate(timeout=600)
    r.note = f"the first run: exit {first.returncode}, " \
             f"{[ln for ln in out1.splitlines() if ln.strip()][-1:]}"
    return r


def _signal_row(command, paper, name, after, sig=signal.SIGINT, timeout=900):
    """``theorylab COMMAND --only PAPER --quick``, signalled after ``after`` seconds."""
    return run(["theorylab", command, "--only", paper, "--quick", "--out",
                SCRATCH / "out" / "sig" / name], signal_after=after, sig=sig, timeout=timeout)


for _rid, _args in {"M1": ("check", "huang2024", "m1", 6),
                    "M2": ("check", "huang2024", "m2", 9, signal.SIGTERM),
                    "M3": ("check", "jelassi2022", "m3", 3),
                    "M4": ("figures", "huang2024", "m4", 8),
                    "M5": ("figures", "huang2024", "m5", 12, signal.SIGTERM)}.items():
    ROWS[_rid] = (lambda a: lambda: _signal_row(*a))(_args)


@row("M6")
def _():
    r = run(["theorylab", "check", "--only", "huang2024", "--quick", "--workers", "2", "--out",
             SCRATCH / "out" / "sig" / "m6"], signal_after=12, timeout=900)
    r.note = "resource_tracker warnings: " + ("yes" if "resource_tracker" in r.out else "none")
    return r


@row("M7")
def _():
    return run(["theorylab", "figures", "--only", "huang2024", "--quick", "--cache",
                SCRATCH / "out" / "sig" / "cache7", "--out", SCRATCH / "out" / "sig" / "m7"],
               signal_after=10, timeout=900)


@row("M10")
def _():
    (SCRATCH / "out" / "sig").mkdir(parents=True, exist_ok=True)
    return run(["theorylab", "plot", run_ok(), "--out", SCRATCH / "out" / "sig" / "m10.png"],
               signal_after=1.5)


@row("K1")
def _():
    jrun = SCRATCH / "out" / "k" / "jrun"
    run(["theorylab", "run", j_cfg("j_k.toml"), "--out", jrun, "--no-progress"])
    before = {p.name: md5(p) for p in jrun.iterdir() if p.is_file() and p.suffix != ".lock"}
    r = run(["theorylab", "run", h_cfg("h_base.toml"), "--out", jrun, "--no-progress"])
    after = {p.name: md5(p) for p in jrun.iterdir() if p.is_file() and p.suffix != ".lock"}
    r.note = "jelassi run unchanged" if before == after else "JELASSI RUN CHANGED"
    return r


@row("K2")
def _():
    user = SCRATCH / "out" / "k" / "user"
    user.mkdir(parents=True)
    for name in ("notes.txt", ".draft.tmp", ".config.toml.swp.tmp"):
        (user / name).write_text("the user's\n")
    r = run(["theorylab", "run", h_cfg("h_base.toml"), "--out", user, "--no-progress"])
    kept = [n for n in ("notes.txt", ".draft.tmp", ".config.toml.swp.tmp")
            if (user / n).exists()]
    r.note = f"user files kept: {', '.join(kept)}"
    return r


@row("K5")
def _():
    r = run(["theorylab", "check", "--only", "huang2024/thm4.2", "--quick", "--out", "figures"],
            cwd=ROOT, timeout=900)
    r.note = f"git status: {git_status() or 'clean'}"
    return r


@row("K6")
def _():
    r = run(["theorylab", "figures", "--only", "huang2024-fig2", "--quick", "--out",
             "docs/results"], cwd=ROOT, timeout=900)
    r.note = f"git status: {git_status() or 'clean'}"
    return r


@row("J10")
def _():
    src = run_ok()
    dst = os.fsencode(str(SCRATCH / "plot")) + b"/r\xffun"
    shutil.copytree(src, os.fsdecode(dst))
    return run(["theorylab", "plot", os.fsdecode(dst)])


FUZZ = {"nan": "nan", "inf": "inf", "-inf": "-inf", "-1": "-1", "0": "0", "1e300": "1e300",
        "1e15": "1e15", '""': '""', "true": "true", "[]": "[]"}


def _fuzz(section, key, show="1e300", *, data="", train="") -> Result:
    results = {}
    for name, value in FUZZ.items():
        line = f"{key} = {value}\n"
        c = h_cfg(f"fz_{key}_{abs(hash(name))}.toml", steps=5,
                  data=(line if section == "data" else "") + data,
                  train=(line if section == "train" else "") + train)
        base_line = {"P": "P = 16\n", "steps": "steps = 5\n"}.get(key)
        if base_line:  # the base's own value of the key gives way to the fuzzed one
            c.write_text(c.read_text().replace(base_line, "", 1))
        results[name] = run(["theorylab", "run", c, "--out",
                             SCRATCH / "out" / "fz" / f"{key}_{abs(hash(name))}",
                             "--no-progress"], timeout=120)
    r = results[show]
    r.note = "; ".join(f"{k}: {v.rc}{' TRACEBACK' if v.traceback else ''}"
                       for k, v in results.items())
    r.out = "".join(v.out for v in results.values() if v.traceback) + r.out \
        if any(v.traceback for v in results.values()) else r.out
    return r


for _rid, (_section, _key, _show) in {"FZ9": ("data", "U", "1e300"),
                                      "FZ11": ("data", "z_probs", "nan"),
                                      "FZ21": ("train", "steps", "1e300"),
                                      "FZ0": ("data", "P", "1e300")}.items():
    ROWS[_rid] = (lambda s, k, v: lambda: _fuzz(s, k, v))(_section, _key, _show)


def _two_configs(configs: list[tuple[str, Path]]) -> Result:
    """Run two configs; the first one's result, the second's said in its note."""
    out = [run(["theorylab", "run", c, "--out", SCRATCH / "out" / name, "--no-progress"],
               timeout=60) for name, c in configs]
    out[0].note = f"second case: exit {out[1].rc}, {out[1].last}"
    return out[0]


ROWS["FZ-LSTEP"] = lambda: _two_configs([
    (f"ls{step}", h_cfg(f"lstep_{step}.toml", steps=3, train='engine = "population-laplace"\n'
                        f"z_nodes = 8\nlaplace_step = {step}\n"))
    for step in ("1e-300", "1e-6")])
ROWS["FZ-NREC"] = lambda: _two_configs([
    (f"nr{n}", cfg(f"nrec_{n}.toml", h_cfg(f"nrec_{n}.toml", steps=1, train=f"n_records = {n}\n")
                   .read_text().replace("steps = 1\n", f"steps = {steps}\n")))
    for steps, n in (("1e10", "1e9"), ("1e13", "1e12"))])


@row("FZ-CLT")
def _():
    c = h_cfg("clt.toml", steps=5, model='objective = "cl"\ncl_temperature = 1e-300\n',
              train='engine = "cl-montecarlo"\n')
    return run(["theorylab", "run", c, "--out", SCRATCH / "out" / "clt", "--no-progress"])


# -- the 2026-11-27 table -----------------------------------------------------------------------
#: The row ids of the 2026-11-27 table, in its order (``--table 2026-11-27``).
TABLE_27: list[str] = []


def row27(rid):
    def deco(fn):
        ROWS[rid] = fn
        TABLE_27.append(rid)
        return fn
    return deco


def h_run() -> Path:
    """A finished small huang2024 run folder (``h27/RUN``)."""
    if "h_run" not in _DONE:
        out = SCRATCH / "h27" / "RUN"
        r = run(["theorylab", "run", h_cfg("h27.toml", 40), "--out", out, "--no-progress"])
        assert r.rc == 0, r.out
        _DONE["h_run"] = out
    return _DONE["h_run"]


def small_spec(name="s27", axes='{"data.q" = [0.1, 0.2]}', extra="") -> Path:
    spec = SCRATCH / "spec" / f"{name}.toml"
    spec.parent.mkdir(parents=True, exist_ok=True)
    spec.write_text("[base_config.data]\nD = 4\nC = 2\nd = 20\n[base_config.train]\n"
                    f"steps = 10\n[sweep]\naxes = {axes}\n{extra}")
    return spec


def h_store() -> Path:
    if "h_store" not in _DONE:
        out = SCRATCH / "h27" / "STORE"
        r = run(["theorylab", "sweep", small_spec(), "--out", out, "--workers", "0",
                 "--no-progress"])
        assert r.rc == 0, r.out
        _DONE["h_store"] = out
    return _DONE["h_store"]


def kept(result: Result, *paths: Path, before: dict | None = None) -> Result:
    """``result`` with a note on whether ``paths`` kept their bytes (``before``: md5s) and
    what git status says of the committed folders."""
    notes = []
    for p in paths:
        if before is not None and str(p) in before:
            same = p.is_file() and md5(p) == before[str(p)]
            notes.append(f"{p.name} {'unchanged' if same else 'CHANGED'}")
    status = subprocess.run(["git", "-C", str(ROOT), "status", "--short", "--", "figures",
                             "docs/results", "docs/performance"], capture_output=True,
                            text=True).stdout.strip()
    notes.append("committed folders clean" if not status else
                 f"committed folders: {status.replace(chr(10), '; ')}")
    result.note = "; ".join(notes)
    return result


def md5s(*paths: Path) -> dict:
    return {str(p): md5(p) for p in paths if p.is_file()}


def user_folder(name: str, files: dict) -> Path:
    out = SCRATCH / "u27" / name
    for rel, text in files.items():
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_text(text)
    return out


def _guarded(argv, *targets) -> Result:
    before = md5s(*targets)
    return kept(run(argv), *targets, before=before)


def _user_tree(folder: Path) -> dict:
    return {str(p): md5(p) for p in folder.rglob("*") if p.is_file()}


def _folder_row(argv_of, files: dict, name: str) -> Result:
    u = user_folder(name, files)
    before = _user_tree(u)
    r = kept(run(argv_of(u)))
    after = _user_tree(u)
    same = all(after.get(k) == v for k, v in before.items())
    r.note = ("the user's files unchanged; " if same else "a user's file CHANGED; ") + r.note
    return r


@row27("S26")
def _():
    mine = user_folder("s26", {"notes.csv": "mine\n"}) / "notes.csv"
    return _guarded(["theorylab", "phases", h_run(), "--csv", mine], mine)


@row27("S27")
def _():
    return kept(run(["theorylab", "phases", h_run(), "--csv",
                     ROOT / "docs/results/huang2024/phases.csv"]))


@row27("S28")
def _():
    page = ROOT / "docs/results/huang2024/summary.md"
    return _guarded(["theorylab", "phases", h_run(), "--csv", page], page)


@row27("E02")
def _():
    return _folder_row(lambda u: ["theorylab", "figures", "--only", "huang2024-fig2", "--quick",
                                  "--out", u], {"huang2024-fig2.png": "my picture"}, "e02")


@row27("E03")
def _():
    return _folder_row(lambda u: ["theorylab", "check", "--only", "huang2024/thm4.2", "--quick",
                                  "--out", u], {"huang2024/summary.md": "mine"}, "e03")


@row27("E04")
def _():
    return _folder_row(lambda u: ["theorylab", "sweep", small_spec(), "--out", u, "--workers",
                                  "0"], {"results.parquet": "mine"}, "e04")


def _phases_over_run_file(row: str, name: str):
    """``phases --csv`` aimed at a file of a copied run folder (it must be refused)."""
    src = SCRATCH / "h27" / row
    shutil.copytree(h_run(), src)
    return _guarded(["theorylab", "phases", src, "--csv", src / name], src / name)


@row27("E07")
def _():
    return _phases_over_run_file("e07", "trajectory.csv")


@row27("E08")
def _():
    t = h_store() / "results.parquet"
    return _guarded(["theorylab", "phases", h_store(), "--csv", t], t)


@row27("E09")
def _():
    return _phases_over_run_file("e09", "config.toml")


@row27("E15")
def _():
    return _folder_row(lambda u: ["theorylab", "sweep", small_spec(), "--out", u, "--new-store",
                                  "--workers", "0"], {"points/mine.parquet": "mine"}, "e15")


@row27("E18")
def _():
    return _folder_row(lambda u: ["theorylab", "bench", "--gpu-suite", "--out", u],
                       {"summary.md": "mine"}, "e18")


@row27("X96")
def _():
    return kept(run(["theorylab", "phases", h_run(), "--csv", ROOT / "docs/performance/x.csv"]))


@row27("HELD")
def _():
    return run([PY, "-m", "theorylab.run", h_cfg("held.toml", 5), "--out",
                SCRATCH / "out" / "held", "--no-progress"])


@row27("M6")
def _():
    return run(["theorylab", "check", "--only", "huang2024/thm4.2", "--quick", "--workers", "2",
                "--out", SCRATCH / "out" / "m6_27"], signal_after=12, timeout=180)


@row27("S05")
def _():
    import pandas as pd

    store = SCRATCH / "h27" / "foreign"
    store.mkdir(parents=True, exist_ok=True)
    pd.DataFrame({"run_id": ["a"], "status": ["ok"], "loss": [1.0]}).to_parquet(
        store / "results.parquet")
    return run(["theorylab", "phases", store])


def _bomb_run(name, bomb) -> Result:
    c = cfg(f"{name}.toml", H_BASE.format(steps=5, data="", model=f"bomb = {bomb}\n", train=""))
    return run(["theorylab", "run", c, "--out", SCRATCH / "out" / name])


ROWS["S14"] = lambda: _bomb_run("s14", "[" * 100_000 + "]" * 100_000)
ROWS["S15"] = lambda: _bomb_run("s15", "{a=" * 100_000 + "1" + "}" * 100_000)
TABLE_27 += ["S14", "S15"]


@row27("S17")
def _():
    spec = SCRATCH / "spec" / "s17.toml"
    spec.write_text("bomb = " + "[" * 300_000 + "]" * 300_000
                    + "\n[sweep]\naxes = {\"data.q\" = [0.1]}\n")
    return run(["theorylab", "sweep", spec, "--out", SCRATCH / "out" / "s17"])


@row27("S21")
def _():
    plug = SCRATCH / "plug27"
    plug.mkdir(exist_ok=True)
    (plug / "ki_at_import.py").write_text("raise KeyboardInterrupt\n")
    meta = plug / "ki_at_import-0.1.dist-info"
    meta.mkdir(exist_ok=True)
    (meta / "METADATA").write_text("Metadata-Version: 2.1\nName: ki-at-import\nVersion: 0.1\n")
    (meta / "entry_points.txt").write_text("[theorylab.papers]\nki = ki_at_import:PAPER\n")
    r = run(["theorylab", "run", h_cfg("s21.toml", 5), "--out", SCRATCH / "out" / "s21",
             "--no-progress"], env={"PYTHONPATH": str(plug)})
    said = [ln for ln in r.out.splitlines() if ln.startswith("theorylab.papers:")]
    r.note = said[0] if said else "no line about the plug-in"
    return r


@row27("S25")
def _():
    c = h_cfg("s25.toml", 10 ** 7)
    first = run(["theorylab", "run", c, "--out=-x", "--no-progress"], signal_after=8,
                cwd=SCRATCH)
    again = first.out.split("Resume with: ")[-1].strip().splitlines()[0]
    second = run(["bash", "-c", again], signal_after=5, cwd=SCRATCH)
    second.note = f"first: exit {first.rc}; the printed resume command then ran"
    return second


@row27("X06")
def _():
    src = SCRATCH / "h27" / "x06"
    shutil.copytree(h_run(), src)
    shutil.copy(run_ok() / "config.toml", src / "config.toml")
    return run(["theorylab", "phases", src])


def _rows_variant(name, edit) -> Path:
    src = SCRATCH / "h27" / name
    shutil.copytree(h_run(), src)
    lines = (src / "trajectory.csv").read_text().splitlines(keepends=True)
    (src / "trajectory.csv").write_text("".join(edit(lines)))
    return src


ROWS["X08"] = lambda: run(["theorylab", "phases", _rows_variant("x08", lambda ln: ln[:1])])
ROWS["X10"] = lambda: run(["theorylab", "phases", h_run(), "--csv", SCRATCH])
ROWS["X12"] = lambda: run(["theorylab", "phases", h_run(), "--csv", SCRATCH / "x.txt"])
ROWS["X18"] = lambda: run(["theorylab", "phases", h_run(), "--csv", ""])
ROWS["X25"] = lambda: run(["theorylab", "export", h_run(), h_run(), "--out",
                           SCRATCH / "x25.nc"])
TABLE_27 += ["X08", "X10", "X12", "X18", "X25"]


@row27("X37")
def _():
    import numpy as np
    import xarray as xr

    mine = SCRATCH / "x37.nc"
    xr.Dataset({"a": ("x", np.arange(3.0))},
               attrs={"note": "not written by theorylab export"}).to_netcdf(mine, engine="scipy")
    return _guarded(["theorylab", "export", h_run(), "--out", mine], mine)


@row27("X51")
def _():
    c = cfg("x51.toml", '[data]\nD = 16\nC = 2\nd = 20\npartition = "random"\n[train]\n'
                        'steps = 20\nflow_method = "LSODA"\n')
    return run(["theorylab", "run", c, "--out", SCRATCH / "out" / "x51", "--flow",
                "--no-progress"])


@row27("N08")
def _():
    import numpy as np

    src = SCRATCH / "h27" / "n08"
    shutil.copytree(h_run(), src)
    ckpt = dict(np.load(src / "checkpoint.npz"))
    ckpt["Phi"] = np.full_like(ckpt["Phi"], 1e308)
    np.savez(src / "checkpoint.npz", **ckpt)
    r = run(["theorylab", "run", h_cfg("h27.toml", 40), "--out", src, "--resume", "--steps",
             "80", "--no-progress"])
    r.note = f"{len((src / 'trajectory.csv').read_text().splitlines()) - 1} rows in the folder"
    return r


@row27("X83")
def _():
    spec = SCRATCH / "spec" / "x83.toml"
    spec.write_text('[base_config.experiment]\npaper = "huang2024"\n[base_config.data]\nP = 64\n'
                    'C = 4\n[base_config.train]\nsteps = 2\n'
                    '[sweep]\naxes = {"data.Delta" = [0.1, 0.2]}\n')
    return run(["theorylab", "sweep", spec, "--out", SCRATCH / "out" / "x83", "--dry-run"])


def _grid(n) -> Path:
    return small_spec(f"grid{n}", '{"data.q" = [' + ", ".join(
        f"{0.01 + i * 1e-6:.7f}" for i in range(n)) + '], "data.d" = [' + ", ".join(
        str(10 + i) for i in range(n)) + "]}")


ROWS["R01"] = lambda: run(["theorylab", "sweep", _grid(1000), "--out", SCRATCH / "out" / "r01",
                           "--dry-run"], timeout=120)
ROWS["R02"] = lambda: run(["theorylab", "sweep", _grid(1000), "--out", SCRATCH / "out" / "r02",
                           "--workers", "0"], timeout=120)
ROWS["N25"] = lambda: run(["theorylab", "phases", _rows_variant(
    "n25", lambda ln: ln[:5] + ln[4:5] * 5 + ln[5:])])
ROWS["R03"] = lambda: run(["theorylab", "sweep", _grid(10_000), "--out",
                           SCRATCH / "out" / "r03", "--dry-run"], timeout=180)
ROWS["N26"] = lambda: run(["theorylab", "export", _rows_variant(
    "n26", lambda ln: ln[:1] + ln[:0:-1]), "--out", SCRATCH / "n26.nc"])
TABLE_27 += ["R01", "R02", "N25", "R03", "N26"]


@row27("N34")
def _():
    c = h_cfg("n34.toml", 10, train='engine = "population-laplace"\nz_nodes = 8\nlr = 1e300\n')
    out = SCRATCH / "out" / "n34"
    r = run(["theorylab", "run", c, "--out", out, "--no-progress"])
    rows = (out / "trajectory.csv").read_text().splitlines() if (out / "trajectory.csv"
                                                                 ).is_file() else []
    r.note = f"{max(len(rows) - 1, 0)} rows kept"
    return r


ROWS["R10"] = lambda: run(["theorylab", "export", h_run(), "--out",
                           SCRATCH / ("z" * 300 + ".nc")])
ROWS["R14"] = lambda: run(["theorylab", "run", h_cfg(
    "r14.toml", 5, data='areas = "' + "q" * 10_000 + '"\n'), "--out", SCRATCH / "out" / "r14"])
TABLE_27 += ["R10", "R14"]


def _head(argv) -> Result:
    line = " ".join(f"'{a}'" for a in [PY, "-m", *map(str, argv)])
    return run(["bash", "-c", f"{line} | head -1; exit ${{PIPESTATUS[0]}}"])


ROWS["R18"] = lambda: _head(["theorylab", "phases", h_store()])
ROWS["R19"] = lambda: _head(["theorylab", "sweep", small_spec(), "--out", SCRATCH / "r19",
                             "--dry-run"])
TABLE_27 += ["R18", "R19"]


def _full(argv_of) -> Result | None:
    if not IS_ROOT:
        return None
    with tmpfs("256k") as mnt:
        fill(mnt)
        r = run(argv_of(mnt))
        r.note = f"left on the disk: {sorted(p.name for p in mnt.iterdir())}"
        return r


def _root_owned() -> Path:
    ro = SCRATCH / "root_owned"
    ro.mkdir(exist_ok=True)
    os.chmod(ro, 0o755)
    src = h_run()
    for p in (src.parent, src, *src.iterdir()):
        os.chmod(p, 0o755 if p.is_dir() else 0o644)
    return ro


ROWS["R27"] = lambda: _full(lambda m: ["theorylab", "phases", h_store(), "--csv", m / "p.csv"])
ROWS["R29"] = lambda: as_nobody(["theorylab", "export", h_run(), "--out",
                                 _root_owned() / "x.nc"])
ROWS["R30"] = lambda: as_nobody(["theorylab", "phases", h_run(), "--csv",
                                 _root_owned() / "p.csv"])
ROWS["R26b"] = lambda: _full(lambda m: ["theorylab", "export", h_run(), "--out", m / "x.nc"])
ROWS["X93"] = lambda: kept(run(["theorylab", "bench", "--paper", "huang2024", "--sizes", "16",
                                "--repeats", "1", "--max-seconds", "1", "--out",
                                ROOT / "docs/performance/x.csv"]))
TABLE_27 += ["R27", "R29", "R30", "R26b", "X93"]


# -- main -----------------------------------------------------------------------------------------
def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out", help="the markdown table to write")
    ap.add_argument("--only", nargs="+", help="these row ids only")
    ap.add_argument("--table", choices=("2026-11-26", "2026-11-27"), default="2026-11-26",
                    help="the table whose rows to replay (default: the first)")
    ap.add_argument("--keep", action="store_true", help="keep the scratch folder")
    args = ap.parse_args(argv)
    ids = args.only or ([r for r in ROWS if r not in TABLE_27] if args.table == "2026-11-26"
                        else TABLE_27)
    lines = ["| # | exit | last line | traceback | checked beside it |", "|---|---|---|---|---|"]
    t0 = time.time()
    for rid in ids:
        t1 = time.time()
        try:
            res = ROWS[rid]()
        except Exception as e:  # the replay's own set-up failed: said in the row
            res = Result("—", f"replay set-up failed: {type(e).__name__}: {e}")
        if res is None:
            lines.append(f"| {rid} | — | not run (needs root) | — | — |")
            continue
        said = [ln.strip() for ln in res.out.splitlines() if ln.startswith("paper ")]
        if said and not res.note:  # a plug-in left out: its one line
            res.note = said[0]
        last = res.last.replace("|", "\\|")
        last = (last[:157] + "…") if len(last) > 160 else last
        note = res.note.replace("|", "\\|").replace(str(SCRATCH), "<scratch>")
        last = last.replace(str(SCRATCH), "<scratch>").replace(str(ROOT), "<clone>")
        lines.append(f"| {rid} | {res.rc} | {last} | {'yes' if res.traceback else 'no'} | "
                     f"{note} |")
        print(f"{rid}: exit {res.rc} ({time.time() - t1:.0f} s): {last}", flush=True)
    Path(args.out).write_text("\n".join(lines) + "\n")
    print(f"{len(ids)} rows in {time.time() - t0:.0f} s; table: {args.out}")
    if not args.keep:
        subprocess.run(["umount", "-l", *map(str, SCRATCH.glob("tmpfs-*"))],
                       capture_output=True)
        shutil.rmtree(SCRATCH, ignore_errors=True)
    else:
        print(f"scratch kept: {SCRATCH}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
