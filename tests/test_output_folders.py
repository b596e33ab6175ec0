"""Nothing lost, nothing falsified: every writer claims its folder (a marker of its kind and, for
a run, its paper), refuses folders of another kind, another paper's run and the committed
folders by any spelling, holds a kernel lock while it writes, and a resume refuses a
checkpoint that is not the folder's run."""

from __future__ import annotations

import multiprocessing
import shutil
import sys
from pathlib import Path

import pytest

from theorylab.commands import main
from theorylab.core.folders import MARKER, claim_folder, folder_kind
from theorylab.core.locks import folder_lock, lock_held
from theorylab.core.provenance import REPO_ROOT, committed_folder

H24 = ('[experiment]\npaper = "huang2024"\n[data]\nP = 16\nC1 = 8\nC = 2\n'
       '[train]\nsteps = {steps}\nseed = {seed}\n')
J22 = "[data]\nD = 4\nC = 2\nd = 20\n[train]\nsteps = {steps}\nseed = {seed}\n"


def _cfg(tmp_path: Path, text: str = H24, steps: int = 40, seed: int = 0, name=None) -> Path:
    path = tmp_path / (name or f"c{seed}-{steps}-{abs(hash(text)) % 1000}.toml")
    path.write_text(text.format(steps=steps, seed=seed))
    return path


def _run(*argv) -> int:
    return main(["run", *map(str, argv), "--no-progress"])


def _err(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    return err[0]


def _tree(folder: Path) -> dict:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and p.name != ".theorylab.lock"}


def test_a_run_folder_is_marked_with_its_kind_and_paper(tmp_path):
    assert _run(_cfg(tmp_path), "--out", tmp_path / "r") == 0
    assert folder_kind(tmp_path / "r").kind == "run"
    assert folder_kind(tmp_path / "r").paper == "huang2024"
    assert (tmp_path / "r" / MARKER).is_file()


def test_another_papers_run_is_never_replaced(tmp_path, capsys):
    jrun = tmp_path / "jrun"
    assert _run(_cfg(tmp_path, J22, steps=20), "--out", jrun) == 0
    before = _tree(jrun)
    (jrun / MARKER).unlink()  # an older run folder, recognised by its files
    before.pop(MARKER)
    capsys.readouterr()
    assert _run(_cfg(tmp_path), "--out", jrun) == 2
    assert _err(capsys).startswith(f"error: out: {jrun} holds a jelassi2022 run; a huang2024 "
                                   "run would replace it")
    assert _tree(jrun) == before


@pytest.mark.parametrize("kind", ["sweep", "figures", "results", "cache"])
def test_a_folder_of_another_kind_is_refused_by_every_writer(tmp_path, capsys, kind):
    folder = tmp_path / kind
    claim_folder(folder, kind)
    (folder / "keep.txt").write_text("theirs")
    before = _tree(folder)
    capsys.readouterr()
    assert _run(_cfg(tmp_path), "--out", folder) == 2
    assert f"error: out: {folder} is a " in _err(capsys)
    if kind not in ("sweep", "cache"):  # a sweep store is a point cache and back
        spec = tmp_path / "s.toml"
        spec.write_text("[base_config.data]\nD = 4\nC = 2\n[sweep]\naxes = {\"data.q\" = "
                        "[0.1]}\n")
        assert main(["sweep", str(spec), "--out", str(folder), "--workers", "0"]) == 2
        assert "is a " in _err(capsys)
    assert _tree(folder) == before


def test_a_run_into_a_sweep_store_and_a_sweep_into_a_run_folder(tmp_path, capsys):
    run = tmp_path / "r"
    assert _run(_cfg(tmp_path), "--out", run) == 0
    spec = tmp_path / "s.toml"
    spec.write_text("[base_config.data]\nD = 4\nC = 2\n[sweep]\naxes = {\"data.q\" = [0.1]}\n")
    capsys.readouterr()
    assert main(["sweep", str(spec), "--out", str(run), "--workers", "0", "--new-store"]) == 2
    assert _err(capsys).startswith(f"error: out: {run} is a huang2024 run folder, not a sweep")


def test_files_the_user_wrote_are_kept(tmp_path, capsys):
    user = tmp_path / "user"
    user.mkdir()
    (user / "notes.txt").write_text("mine")
    (user / ".draft.tmp").write_text("mine")
    (user / ".config.toml.swp.tmp").write_text("mine")
    before = _tree(user)
    assert _run(_cfg(tmp_path), "--out", user) == 2  # not empty, not ours: only with --force
    assert "is a folder that theorylab did not write and that is not empty" in _err(capsys)
    assert _tree(user) == before
    assert _run(_cfg(tmp_path), "--out", user, "--force") == 0
    assert {p.name for p in user.iterdir()} >= {"notes.txt", ".draft.tmp",
                                                ".config.toml.swp.tmp"}
    # a folder holding a file named like a run's that theorylab did not write: refused
    other = tmp_path / "other"
    other.mkdir()
    (other / "config.toml").write_text("[data]\nmine = 1\n")
    capsys.readouterr()
    assert _run(_cfg(tmp_path), "--out", other) == 2
    assert "holds config.toml, not written by theorylab run" in _err(capsys)
    assert (other / "config.toml").read_text() == "[data]\nmine = 1\n"


def test_a_run_file_that_is_a_folder_is_one_line(tmp_path, capsys):
    out = tmp_path / "r"
    (out / "trajectory.csv").mkdir(parents=True)
    assert _run(_cfg(tmp_path), "--out", out) == 2
    assert _err(capsys).startswith(f"error: out: {out / 'trajectory.csv'} is a folder")


def _spellings(tmp_path: Path, folder: str) -> list[str]:
    link = tmp_path / "link"
    if not link.exists():
        link.symlink_to(REPO_ROOT / folder)
    return [folder, str(REPO_ROOT / folder / "sub"), f"docs/../{folder}", str(link / "x")]


@pytest.mark.parametrize("folder", ["figures", "docs/results", "docs/performance"])
def test_committed_folders_are_refused_by_any_spelling(tmp_path, monkeypatch, capsys, folder):
    monkeypatch.chdir(REPO_ROOT)
    for out in _spellings(tmp_path, folder):
        assert committed_folder(out) is not None, out
        assert _run(_cfg(tmp_path), "--out", out) == 2
        assert "is inside the committed" in _err(capsys)
        spec = tmp_path / "s.toml"
        spec.write_text("[base_config.data]\nD = 4\nC = 2\n[sweep]\naxes = {\"data.q\" = "
                        "[0.1]}\n")
        assert main(["sweep", str(spec), "--out", out, "--workers", "0", "--new-store"]) == 2
        assert "is inside the committed" in _err(capsys)
    assert committed_folder(tmp_path) is None


@pytest.mark.parametrize("argv, start", [
    (["check", "--only", "huang2024/thm4.2", "--quick", "--out", "figures"],
     "error: --out: figures is inside the committed figures/"),
    (["check", "--only", "huang2024/thm4.2", "--out", "figures"],
     "error: --out: figures is inside the committed figures/"),
    (["figures", "--only", "huang2024-fig2", "--quick", "--out", "docs/results"],
     "error: --out: docs/results is inside the committed docs/results/"),
    (["figures", "--only", "huang2024-fig2", "--out", "docs/performance"],
     "error: --out: docs/performance is inside the committed docs/performance/"),
])
def test_check_and_figures_never_write_the_others_committed_folder(monkeypatch, capsys, argv,
                                                                    start):
    monkeypatch.chdir(REPO_ROOT)
    assert main(argv) == 2
    assert _err(capsys).startswith(start)


def _hold(path, started, stop):
    with folder_lock(path, what="run"):
        started.set()
        stop.wait(30)


def test_a_second_writer_of_one_folder_is_refused_while_the_first_holds_it(tmp_path, capsys):
    out = tmp_path / "r"
    out.mkdir()
    ctx = multiprocessing.get_context("fork")
    started, stop = ctx.Event(), ctx.Event()
    holder = ctx.Process(target=_hold, args=(out / ".theorylab.lock", started, stop))
    holder.start()
    try:
        assert started.wait(30)
        assert _run(_cfg(tmp_path), "--out", out) == 2
        assert _err(capsys).startswith(f"error: out: {out} is in use by another run: pid "
                                       f"{holder.pid} on host ")
        assert not (out / "trajectory.csv").exists()
    finally:
        stop.set()
        holder.join(30)
    assert not lock_held(out / ".theorylab.lock")  # gone with its process
    assert _run(_cfg(tmp_path), "--out", out) == 0


def test_resume_refuses_another_runs_checkpoint(tmp_path, capsys):
    a, b = tmp_path / "a", tmp_path / "b"
    assert _run(_cfg(tmp_path, J22, steps=300), "--out", a) == 0
    assert _run(_cfg(tmp_path, J22, steps=300, seed=1), "--out", b) == 0
    shutil.copy(b / "checkpoint.npz", a / "checkpoint.npz")  # another seed's parameters
    before = _tree(a)
    capsys.readouterr()
    assert _run(_cfg(tmp_path, J22, steps=600), "--out", a, "--resume") == 2
    assert "checkpoint.npz belongs to another run" in _err(capsys)
    assert _tree(a) == before


def test_resume_refuses_a_checkpoint_beyond_the_rows(tmp_path, capsys):
    a, b = tmp_path / "a", tmp_path / "b"
    assert _run(_cfg(tmp_path, J22, steps=100), "--out", a) == 0
    assert _run(_cfg(tmp_path, J22, steps=400), "--out", b) == 0  # the same run, further on
    shutil.copy(b / "checkpoint.npz", a / "checkpoint.npz")
    capsys.readouterr()
    assert _run(_cfg(tmp_path, J22, steps=600), "--out", a, "--resume") == 2
    line = _err(capsys)
    assert "is at step 400 after rows to step 400" in line and "rows to step 100" in line


def test_the_printed_resume_command_keeps_every_flag(tmp_path):
    import signal
    import subprocess
    import time

    cfg = _cfg(tmp_path, steps=10**7)
    out = tmp_path / "r"
    proc = subprocess.Popen([sys.executable, "-m", "theorylab", "run", str(cfg), "--out", str(out),
                             "--backend", "numpy", "--threads", "1", "--no-progress"],
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not (out / "checkpoint.npz").exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    again = err.strip().split("Resume with: ")[1]
    assert "--backend numpy" in again and "--threads 1" in again, again


def test_the_printed_resume_command_is_accepted(tmp_path):
    from theorylab.commands.run import _resume_command

    class Args:
        config, out, steps, device, dtype, backend, threads = (
            str(_cfg(tmp_path, steps=50)), str(tmp_path / "r"), None, "cpu", None, "numpy",
            None)
        no_progress, flow, tensorboard = True, False, None

    assert _run(Args.config, "--out", Args.out, "--device", "cpu", "--backend", "numpy") == 0
    argv = _resume_command(Args).split()[4:]  # after "python -m theorylab run"
    assert argv[-6:] == ["--resume", "--device", "cpu", "--backend", "numpy", "--no-progress"]
    assert main(["run", *argv]) == 0  # the same flags: the configuration matches


def test_the_resume_command_of_names_that_look_like_flags_is_accepted(tmp_path, monkeypatch):
    import shlex

    from theorylab.commands.run import _resume_command

    monkeypatch.chdir(tmp_path)
    _cfg(tmp_path, steps=20, name="-c.toml")

    class Args:
        config, out, steps, device, dtype, backend, threads = (
            "-c.toml", "-x", None, None, None, None, None)
        no_progress, flow, tensorboard = True, False, None

    assert main(["run", "--out=-x", "--no-progress", "--", "-c.toml"]) == 0
    argv = shlex.split(_resume_command(Args))[4:]  # after "python -m theorylab run"
    assert argv[:2] == ["--out=-x", "--resume"] and argv[-2:] == ["--", "-c.toml"], argv
    assert main(["run", *argv]) == 0


def test_an_unknown_kind_is_a_programming_error(tmp_path):
    with pytest.raises(ValueError, match="kind: must be one of"):
        claim_folder(tmp_path / "x", "photos")


@pytest.mark.parametrize("files, kind", [
    ({"points/" + "a" * 20 + ".parquet": "x"}, "cache"),
    ({"points/mine.parquet": "x"}, None),  # a user's Parquet file: not a point file
    ({"arms/" + "b" * 32 + ".npz": "x"}, "cache"),  # an older cache of trained results
    ({"arms/" + "b" * 32 + ".npz": "x", "notes.txt": "mine"}, None),
    ({"sweep.json": '{"fingerprint": "f"}'}, "sweep"),
    ({"sweep.json": "{}"}, None),
    ({"manifest.json": '{"figures": {}}'}, "figures"),
    ({"manifest.json": "not json"}, None),
    ({"summary.md": "# GPU suite\n", "suite.csv": "part\n"}, "suite"),
    ({"summary.md": "mine\n"}, None),
])
def test_an_older_folder_is_recognised_by_the_structure_of_its_files(tmp_path, files, kind):
    """A folder written before markers existed is known by its own files read as what they
    are (JSON with its key, point files named by their run id); a user's folder that merely
    holds files of those names is not theorylab's, and is not claimed without --force."""
    for rel, text in files.items():
        (tmp_path / "f" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "f" / rel).write_text(text)
    found = folder_kind(tmp_path / "f")
    assert (found.kind if found else None) == kind
    if kind is None:
        with pytest.raises(ValueError, match="theorylab did not write and that is not empty"):
            claim_folder(tmp_path / "f", "cache")


def test_a_file_system_whose_flock_accepts_everyone_is_warned_about(tmp_path, capsys,
                                                                     monkeypatch):
    import fcntl

    from theorylab.core import locks

    with folder_lock(tmp_path / "a.lock", what="sweep"):  # a working flock: no word
        assert locks.flock_works(tmp_path / "a.lock")
    assert capsys.readouterr().err == ""
    monkeypatch.setattr(fcntl, "flock", lambda fd, op: None)  # every lock granted
    monkeypatch.setattr(locks, "_WARNED", set())
    for _ in range(2):  # said once per folder
        with folder_lock(tmp_path / "b.lock", what="sweep"):
            pass
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"warning: out: the file system of {tmp_path} does not keep a second locker "
                   "out (flock accepted two at once): two sweeps writing there at once are not "
                   "kept apart; run one at a time"], err
