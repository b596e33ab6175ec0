"""Every command × every output flag against what must never be lost.

The flags are read from the commands' own argparse definitions: every flag added with
``theorylab.core.cli.output_argument`` (or ``folder_arguments``) carries what it writes (a
folder, or a file suffix), so a new output flag is covered here without a new test, and a new
flag named like an output that is not tagged fails ``test_every_output_flag_is_tagged``. Each
flag is pointed at: a user's file of the same name, a user's folder holding files named like the
command's, each committed folder (and a committed file of the flag's suffix), the own files of a
run and of a sweep store (also with ``--force``), a read-only folder, and a full disk. Each case
must end in one line on stderr, with exit 2 for what is refused before anything is written and
exit 1 for a full disk, leave every file it was pointed at byte-equal, name no temporary file,
and leave ``git status`` of the checkout as it was.

The read-only folder and the full disk are real file systems (a tmpfs mounted read-only, and a
small tmpfs filled up) where this process may mount them (root); elsewhere the read-only case
uses a folder without write permission, and the full disk is skipped.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import shutil
import subprocess
from pathlib import Path

import pytest

import theorylab.core.cli as cli
from theorylab.commands import COMMANDS, main
from theorylab.core.provenance import COMMITTED, REPO_ROOT

H24 = ('[experiment]\npaper = "huang2024"\n[data]\nP = 16\nC1 = 8\nC = 2\n'
       '[train]\nsteps = 20\nseed = 0\n')
SPEC = ("[base_config.data]\nD = 4\nC = 2\nd = 20\n[base_config.train]\nsteps = 5\n"
        "[sweep]\naxes = {\"data.q\" = [0.1]}\n")
#: Flags whose value is read, not written (their metavar looks like an output's).
#: (``check --results DIR`` is the folder a re-judgement reads its stored tables from.)
READS = {("config", "--check"), ("check", "--results")}
#: Names of options that would be outputs: such a flag must be tagged.
OUTPUT_NAMES = {"out", "csv", "cache", "save", "output", "write"}


class _ParsedError(Exception):
    def __init__(self, parser):
        self.parser = parser


def _parser(name: str) -> argparse.ArgumentParser:
    """The parser that ``theorylab <name>`` builds (caught at its ``parse_args``)."""
    module = importlib.import_module(COMMANDS[name][0])
    real = cli.ArgumentParser.parse_args

    def catch(self, *a, **k):
        raise _ParsedError(self)

    cli.ArgumentParser.parse_args = catch
    try:
        module.main([])
    except _ParsedError as got:
        return got.parser
    finally:
        cli.ArgumentParser.parse_args = real
    raise AssertionError(f"theorylab {name} parsed no arguments")


def _output_flags() -> list[tuple[str, str, str]]:
    """(command, flag, what it writes) for every tagged flag of every command."""
    out = []
    for name in COMMANDS:
        for action in _parser(name)._actions:
            writes = getattr(action, "writes", None)
            if writes is None:
                continue
            for w in (writes,) if isinstance(writes, str) else writes:
                out.append((name, action.option_strings[0], w))
    return out


FLAGS = _output_flags()


def test_every_output_flag_is_tagged():
    untagged = []
    for name in COMMANDS:
        for action in _parser(name)._actions:
            flag = action.option_strings[0] if action.option_strings else action.dest
            named = (action.dest in OUTPUT_NAMES
                     or str(action.metavar or "").upper() in ("FILE", "DIR"))
            if named and getattr(action, "writes", None) is None and (name, flag) not in READS:
                untagged.append(f"{name} {flag}")
    assert not untagged, f"output flags without a writes= tag: {untagged}"
    assert {c for c, _, _ in FLAGS} == set(COMMANDS)  # every command writes something


# -- what each command needs besides the flag (quick, tiny settings) --------------------------
def _argv(name: str, flag: str, writes: str, target, w: dict) -> list[str]:
    t = str(target)
    base = {
        ("run", "--out"): ["run", w["cfg"], "--out", t, "--no-progress"],
        ("check", "--out"): ["check", "--only", "huang2024/thm4.2", "--quick", "--no-figures",
                             "--main-reading-only", "--out", t],
        ("check", "--cache"): ["check", "--only", "huang2024/thm4.2", "--quick", "--no-figures",
                               "--main-reading-only", "--out", w["scratch"] / "o", "--cache", t],
        ("figures", "--out"): ["figures", "--only", "huang2024-fig2", "--quick", "--out", t],
        ("figures", "--cache"): ["figures", "--only", "huang2024-fig2", "--quick",
                                 "--out", w["scratch"] / "f", "--cache", t],
        ("run", "--tensorboard"): ["run", w["cfg"], "--out", w["scratch"] / "r",
                                   "--no-progress", "--tensorboard", t],
        ("sweep", "--out"): ["sweep", w["spec"], "--out", t, "--workers", "0", "--no-progress"],
        ("sweep", "--tensorboard"): ["sweep", w["spec"], "--out", w["scratch"] / "s",
                                     "--workers", "0", "--no-progress", "--tensorboard", t],
        ("plot", "--out"): ["plot", w["run"], "--out", t],
        ("phases", "--csv"): ["phases", w["run"], "--csv", t],
        ("export", "--out"): ["export", w["run"], "--out", t],
        ("config", "--out"): ["config", "--out", t],
    }
    if name == "bench":
        if writes == "folder":
            return ["bench", "--gpu-suite", "--device", "cpu", "--suite-seconds", "1",
                    "--out", t]
        return ["bench", "--paper", "huang2024", "--sizes", "16", "--repeats", "1",
                "--max-seconds", "1", "--out", t]
    key = (name, flag)
    assert key in base, f"add how to call theorylab {name} {flag} to this test"
    if flag == "--tensorboard":  # without the package the flag is refused before its folder
        pytest.importorskip("tensorboard", reason="--tensorboard needs the optional extra "
                            "theorylab[tensorboard]")
    return [str(x) for x in base[key]]


def _has_force(name: str) -> bool:
    return any("--force" in a.option_strings for a in _parser(name)._actions)


# -- the world: a run, a store, and the file systems ---------------------------------------------
def _mount(where: Path, *options: str) -> bool:
    where.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0 or shutil.which("mount") is None:
        return False
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", ",".join(options), "tmpfs",
                           str(where)], capture_output=True)
    return done.returncode == 0


def _fill(folder: Path) -> None:
    """Fill the file system of ``folder`` (a small tmpfs) to its last byte."""
    fd = os.open(folder / "filler", os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        for size in (4096, 1):
            with contextlib.suppress(OSError):
                while os.write(fd, b"\0" * size):
                    pass
    finally:
        os.close(fd)


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("gate")
    cfg = root / "h.toml"
    cfg.write_text(H24)
    spec = root / "s.toml"
    spec.write_text(SPEC)
    assert main(["run", str(cfg), "--out", str(root / "RUN"), "--no-progress"]) == 0
    assert main(["sweep", str(spec), "--out", str(root / "STORE"), "--workers", "0",
                 "--no-progress"]) == 0
    ro, full = root / "ro", root / "full"
    mounted = []
    try:
        if _mount(ro, "ro", "size=64k"):
            mounted.append(ro)
        else:
            ro.chmod(0o555)
        if _mount(full, "size=256k"):
            mounted.append(full)
            _fill(full)
        (root / "scratch").mkdir()
        yield {"root": root, "cfg": cfg, "spec": spec, "run": root / "RUN",
               "store": root / "STORE", "ro": ro, "full": full if full in mounted else None,
               "scratch": root / "scratch"}
    finally:
        for m in mounted:
            subprocess.run(["umount", str(m)], capture_output=True)
        with contextlib.suppress(OSError):
            ro.chmod(0o755)


def _git_status() -> str:
    done = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all", "--",
                           *COMMITTED.values()], cwd=REPO_ROOT, capture_output=True, text=True)
    return done.stdout if done.returncode == 0 else ""


def _tree(folder: Path) -> dict:
    if folder.is_file():
        return {"": folder.read_bytes()}
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and not p.name.endswith(".lock")}


def _ends(capsys, argv, code) -> str:
    capsys.readouterr()
    got = main(argv)
    err = capsys.readouterr().err.strip().splitlines()
    assert got == code, (argv, got, err)
    assert len(err) == 1 and err[0].startswith("error: "), (argv, err)
    assert ".tmp" not in err[0], err  # never a temporary file's name
    return err[0]


def _refused_keeping(capsys, argv, kept: Path | None, force: bool = False) -> None:
    before = _tree(kept) if kept is not None else None
    _ends(capsys, argv + (["--force"] if force else []), 2)
    if kept is not None:
        assert _tree(kept) == before, argv


IDS = [f"{c}-{f}-{w}" for c, f, w in FLAGS]


@pytest.mark.parametrize("name, flag, writes", FLAGS, ids=IDS)
def test_a_users_file_or_folder_is_never_taken(world, tmp_path, capsys, name, flag, writes):
    if writes == "folder":
        user = tmp_path / "user"
        user.mkdir()
        for f in ("results.parquet", "summary.md", "trajectory.csv", "config.toml",
                  "manifest.json", "huang2024-fig2.png", "notes.txt"):
            (user / f).write_text("mine")
        (user / "points").mkdir()
        (user / "points" / "mine.parquet").write_text("mine")
        (user / "huang2024").mkdir()
        (user / "huang2024" / "summary.md").write_text("mine")
        argv = _argv(name, flag, writes, user, world)
        _refused_keeping(capsys, argv, user)
        if name == "sweep":
            _refused_keeping(capsys, argv + ["--new-store"], user)
        mine = tmp_path / "mine.txt"  # a user's file where a folder is asked for
        mine.write_text("mine")
        _refused_keeping(capsys, _argv(name, flag, writes, mine, world), mine)
    else:
        mine = tmp_path / f"mine{writes}"
        mine.write_bytes(b"mine, with the text theorylab export and Software theorylab plot")
        _refused_keeping(capsys, _argv(name, flag, writes, mine, world), mine)
        for bad in ("", str(tmp_path), str(tmp_path / "x.txt"),
                    str(tmp_path / ("z" * 300 + writes))):
            _ends(capsys, _argv(name, flag, writes, bad, world), 2)
        assert sorted(p.name for p in tmp_path.iterdir()) == [mine.name]


def _committed_targets(writes: str) -> list[Path]:
    out = []
    for folder in COMMITTED.values():
        root = REPO_ROOT / folder
        if writes == "folder":
            out += [root, root / "new-sub"]
        else:
            out.append(root / f"new-file{writes}")
            out += sorted(root.rglob(f"*{writes}"))[:1]  # a committed file of that suffix
    return out


@pytest.mark.parametrize("name, flag, writes", FLAGS, ids=IDS)
def test_the_committed_folders_are_never_written(world, capsys, monkeypatch, name, flag, writes):
    monkeypatch.chdir(REPO_ROOT)
    before = _git_status()
    for target in _committed_targets(writes):
        kept = target if target.is_file() else None
        for spelling in (target, Path("docs/..") / target.relative_to(REPO_ROOT)):
            _refused_keeping(capsys, _argv(name, flag, writes, spelling, world), kept)
            assert target.exists() == (kept is not None or target.is_dir()), target
    assert _git_status() == before


@pytest.mark.parametrize("name, flag, writes", FLAGS, ids=IDS)
def test_the_own_files_of_a_run_and_a_store_are_never_replaced(world, capsys, name, flag,
                                                               writes):
    run, store = world["run"], world["store"]
    targets = [run / "trajectory.csv", run / "config.toml", run / "final_state.npz",
               store / "results.parquet", store / "sweep.json"]
    if writes == "folder":
        targets.append(run if name != "run" else store)
        if name == "run":  # (a point cache may be a store: --cache STORE is a cache hit)
            targets.append(run / "trajectory.csv" / "x")
    forced = [False, True] if _has_force(name) else [False]
    for target in targets:
        for force in forced:
            keep = run if run in (target, target.parent) else store
            _refused_keeping(capsys, _argv(name, flag, writes, target, world), keep, force)
    assert main(["run", str(world["cfg"]), "--out", str(run), "--resume", "--no-progress"]) == 0


@pytest.mark.parametrize("name, flag, writes", FLAGS, ids=IDS)
def test_a_folder_it_may_not_write_is_refused_first(world, capsys, name, flag, writes):
    ro = world["ro"]
    probe = ro / "probe"
    with contextlib.suppress(OSError):
        probe.write_text("x")
    if probe.exists():
        probe.unlink()
        pytest.skip("this user writes into folders without write permission")
    target = ro / ("o" if writes == "folder" else f"x{writes}")
    line = _ends(capsys, _argv(name, flag, writes, target, world), 2)
    assert str(ro) in line and not any(ro.iterdir())


@pytest.mark.parametrize("name, flag, writes", FLAGS, ids=IDS)
def test_a_full_disk_ends_in_one_line(world, capsys, name, flag, writes):
    full = world["full"]
    if full is None:
        pytest.skip("no small file system to fill here (mounting a tmpfs needs root)")
    target = full / ("o" if writes == "folder" else f"x{writes}")
    line = _ends(capsys, _argv(name, flag, writes, target, world), 1)
    assert line.startswith("error: disk full: ") and str(target) in line, line
    assert sorted(p.name for p in full.iterdir()) in (["filler"], ["filler", target.name])
    left = [p for p in full.rglob("*") if p.is_file() and p.name != "filler"]
    assert all(p.name.startswith(".theorylab") or p.stat().st_size == 0 for p in left), left
    if target.is_dir():
        shutil.rmtree(target)


FILE_FLAGS = [f for f in FLAGS if f[2] != "folder"]


@pytest.mark.parametrize("name, flag, writes", FILE_FLAGS,
                         ids=[f"{c}-{f}-{w}" for c, f, w in FILE_FLAGS])
def test_a_file_it_wrote_is_replaced_and_an_edited_one_is_kept(world, tmp_path, capsys, name,
                                                               flag, writes):
    out = tmp_path / f"x{writes}"
    argv = _argv(name, flag, writes, out, world)
    assert main(argv) == 0 and out.is_file()
    assert main(argv) == 0  # its own file (its mark, or its sidecar and checksum)
    # a file whose mark is in its format (a PNG text chunk, a netCDF attribute, a page's
    # generated-by line, a benchmark CSV's device column) stays ours when edited elsewhere
    if (name, writes) not in {("plot", ".png"), ("export", ".nc"), ("config", ".md"),
                              ("bench", ".csv")}:
        out.write_bytes(out.read_bytes() + b"my note\n")  # edited since: a user's file
        _refused_keeping(capsys, argv, out)
        assert main(argv + ["--force"]) == 0


def test_a_netcdf_file_that_mentions_the_writer_is_not_ours(world, tmp_path, capsys):
    """The mark is the header's ``written_by`` attribute, parsed: a user's netCDF file whose
    text holds "theorylab export" elsewhere is not replaced."""
    import numpy as np
    import xarray as xr

    from theorylab.core.export import written_by_export

    mine = tmp_path / "mine.nc"
    xr.Dataset({"a": ("x", np.arange(3.0))}, attrs={
        "note": "made by hand, not by theorylab export", "history": "written_by theorylab export"
    }).to_netcdf(mine, engine="scipy")
    assert not written_by_export(mine)
    _refused_keeping(capsys, ["export", str(world["run"]), "--out", str(mine)], mine)
    ours = tmp_path / "ours.nc"
    assert main(["export", str(world["run"]), "--out", str(ours)]) == 0
    assert written_by_export(ours)


def test_new_store_keeps_parquet_files_that_are_not_the_stores_points(world, tmp_path):
    """``--new-store`` (with ``--force`` on a folder theorylab did not write) removes only point
    files that carry their run id; a user's Parquet file under ``points/`` stays."""
    import pandas as pd

    user = tmp_path / "u"
    (user / "points").mkdir(parents=True)
    pd.DataFrame({"a": [1]}).to_parquet(user / "points" / "mine.parquet")
    pd.DataFrame({"a": [2]}).to_parquet(user / "points" / ("0" * 20 + ".parquet"))
    before = _tree(user)
    argv = ["sweep", str(world["spec"]), "--out", str(user), "--workers", "0", "--no-progress",
            "--new-store"]
    assert main(argv) == 2 and _tree(user) == before  # not a store: refused
    assert main(argv + ["--force"]) == 0
    assert all((user / k).read_bytes() == v for k, v in before.items())
