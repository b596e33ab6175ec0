"""A one-node SLURM cluster for the tests: Debian's ``slurm-wlm`` and ``munge`` run as root,
every file (key, sockets, state, spool, logs) in one temporary folder, ``SLURM_CONF`` pointing
at its ``slurm.conf``. [`start`][] returns the environment to run SLURM commands with and a
function that stops every daemon it started; it raises ``UnavailableError`` (a reason to skip)
where the binaries are absent, the process is not root, or the daemons do not come up."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

BINARIES = ("munged", "mungekey", "slurmctld", "slurmd", "sinfo", "sbatch", "squeue", "scancel")


class UnavailableError(Exception):
    """Why no SLURM cluster can be started here."""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _memory_mb() -> int:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) // 1024
    return 2048  # pragma: no cover


def slurm_conf(folder: Path, host: str) -> str:
    """The ``slurm.conf`` of a one-node cluster whose files are all in ``folder``."""
    cpus = len(os.sched_getaffinity(0))
    mem = int(_memory_mb() * 0.8)  # what SLURM may hand out; the rest stays for the system
    return "\n".join([
        "ClusterName=theorylab-test",
        f"SlurmctldHost={host}(127.0.0.1)",
        "AuthType=auth/munge",
        f"AuthInfo=socket={folder / 'munge.socket'}",
        "CredType=cred/munge",
        "SlurmUser=root",
        "SlurmdUser=root",
        f"SlurmctldPort={_free_port()}",
        f"SlurmdPort={_free_port()}",
        f"StateSaveLocation={folder / 'state'}",
        f"SlurmdSpoolDir={folder / 'spool'}",
        f"SlurmctldPidFile={folder / 'slurmctld.pid'}",
        f"SlurmdPidFile={folder / 'slurmd.pid'}",
        f"SlurmctldLogFile={folder / 'slurmctld.log'}",
        f"SlurmdLogFile={folder / 'slurmd.log'}",
        "ProctrackType=proctrack/linuxproc",
        "TaskPlugin=task/none",
        "SelectType=select/cons_tres",
        "SelectTypeParameters=CR_Core_Memory",
        "MpiDefault=none",
        "ReturnToService=2",
        "JobCompType=jobcomp/none",
        "AccountingStorageType=accounting_storage/none",
        "SlurmctldTimeout=30",
        "SlurmdTimeout=30",
        f"NodeName={host} NodeAddr=127.0.0.1 CPUs={cpus} RealMemory={mem} State=UNKNOWN",
        "PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP",
        "",
    ])


def start(folder: Path, wait_s: float = 60.0) -> tuple[dict, Callable[[], None]]:
    """Start munged, slurmctld and slurmd with their files in ``folder``; (environment with
    ``SLURM_CONF``, stop). ``UnavailableError`` with the reason where that cannot be done."""
    missing = [b for b in BINARIES if shutil.which(b) is None]
    if missing:
        raise UnavailableError(f"no {', '.join(missing)} (Debian packages slurm-wlm and munge)")
    if os.geteuid() != 0:
        raise UnavailableError("the one-node SLURM cluster runs its daemons as root")
    folder.mkdir(parents=True, exist_ok=True)
    folder.chmod(0o700)
    for sub in ("state", "spool"):
        (folder / sub).mkdir(exist_ok=True)
    host = socket.gethostname().split(".")[0]
    conf = folder / "slurm.conf"
    conf.write_text(slurm_conf(folder, host))
    env = {**os.environ, "SLURM_CONF": str(conf)}
    procs: list[subprocess.Popen] = []

    def stop() -> None:
        if len(procs) == 3:  # jobs still queued or running end with the cluster
            subprocess.run(["scancel", "--user", "root"], env=env, capture_output=True,
                           timeout=30, check=False)
        for p in reversed(procs):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in reversed(procs):
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()

    def daemon(*cmd: str) -> None:
        log = open(folder / f"{Path(cmd[0]).name}.out", "wb")
        procs.append(subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT,
                                      start_new_session=True))
        log.close()

    def gone() -> str:
        tails = []
        for name in ("munged.out", "munged.log", "slurmctld.log", "slurmctld.out",
                     "slurmd.log", "slurmd.out"):
            path = folder / name
            if path.is_file():
                tails.append(f"{name}: {path.read_text(errors='replace')[-400:]}")
        return "; ".join(tails)

    try:
        key = folder / "munge.key"
        subprocess.run(["mungekey", "--create", "--keyfile", str(key)], check=True,
                       capture_output=True, timeout=30)
        key.chmod(0o600)
        daemon("munged", "--foreground", "--force", f"--socket={folder / 'munge.socket'}",
               f"--key-file={key}", f"--pid-file={folder / 'munged.pid'}",
               f"--log-file={folder / 'munged.log'}", f"--seed-file={folder / 'munged.seed'}")
        _until(lambda: (folder / "munge.socket").exists(), wait_s, "munged", procs, gone)
        daemon("slurmctld", "-D", "-i", "-f", str(conf))
        daemon("slurmd", "-D", "-f", str(conf))

        def idle() -> bool:
            out = subprocess.run(["sinfo", "-h", "-o", "%t"], env=env, capture_output=True,
                                 text=True, timeout=10)
            return out.returncode == 0 and out.stdout.strip() in ("idle", "mix")

        _until(idle, wait_s, "slurmctld/slurmd (node idle)", procs, gone)
    except UnavailableError:
        stop()
        raise
    except (OSError, subprocess.SubprocessError) as e:
        stop()
        raise UnavailableError(f"could not start the SLURM daemons ({e}); {gone()}") from None
    return env, stop


def _until(ok: Callable[[], bool], wait_s: float, what: str, procs, gone) -> None:
    t0 = time.monotonic()
    while time.monotonic() - t0 < wait_s:
        if any(p.poll() is not None for p in procs):
            raise UnavailableError(f"{what}: a daemon exited; {gone()}")
        try:
            if ok():
                return
        except (OSError, subprocess.SubprocessError):
            pass
        time.sleep(0.2)
    raise UnavailableError(f"{what}: not up within {wait_s:g} s; {gone()}")
