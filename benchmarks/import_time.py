"""How long ``import theorylab`` and a refused config take, against the eager imports they
replaced, measured in one run.

    python benchmarks/import_time.py [--repeats 7] [--out FILE.csv]

Each case runs in a fresh Python process (``python -X importtime`` is not used: the numbers are
wall times of the whole child, interpreter start included), the cases interleaved round by
round so that a change of the machine's load hits all of them alike:

- ``lazy import``: ``import theorylab`` as it is now (the re-exported names load on first use);
- ``eager import``: what ``import theorylab`` imported before it was lazy: the first paper's
  whole public API, the registry of papers (both papers) and numba;
- ``refused config (lazy)``: ``theorylab run BAD.toml --out DIR`` on a config with one bad value
  (exit 2, one line): the command as it is now, which imports torch only when a run needs it;
- ``refused config (eager)``: the same command after the imports it used to make first (torch
  for ``--threads``, numba for the first paper's fused kernel).

Prints the machine, the load average before and after, the median and the spread of each case
and the ratio of each eager case to its lazy one (the speed-up), and with ``--out`` writes the
rows as CSV. Every case must end as expected (a refused config: exit 2 naming the field), or
the script stops with the child's message.
"""

from __future__ import annotations

import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BAD_CONFIG = "[data]\nD = -1\n"
EAGER_IMPORTS = "import numba, theorylab.jelassi2022, theorylab.papers; "


def _cases(bad: Path, out: Path) -> dict[str, tuple[list[str], int]]:
    run = ("from theorylab.commands import main; import sys; "
           f"sys.exit(main(['run', {str(bad)!r}, '--out', {str(out)!r}]))")
    return {
        "lazy import": ([sys.executable, "-c", "import theorylab"], 0),
        "eager import": ([sys.executable, "-c", EAGER_IMPORTS + "import theorylab"], 0),
        "refused config (lazy)": ([sys.executable, "-c", run], 2),
        "refused config (eager)": ([sys.executable, "-c", "import torch; " + EAGER_IMPORTS
                                    + run], 2),
    }


def _once(cmd: list[str], code: int) -> float:
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    dt = time.perf_counter() - t0
    if proc.returncode != code or (code == 2 and "error: data.D" not in proc.stderr):
        raise SystemExit(f"{' '.join(cmd[2:])[:80]}: exit {proc.returncode} (expected {code}): "
                         f"{proc.stderr.strip()[-400:]}")
    return dt


def machine() -> str:
    """The CPU model, the cores this process may use, and Python's version."""
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return f"{model}, {cores} usable cores, Python {platform.python_version()}"


def main(argv: list[str] | None = None) -> int:
    import argparse

    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--repeats", type=int, default=7, help="rounds (each case once a round)")
    p.add_argument("--out", help="write the rows as CSV")
    a = p.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        bad = Path(tmp) / "bad.toml"
        bad.write_text(BAD_CONFIG)
        cases = _cases(bad, Path(tmp) / "run")
        load0 = os.getloadavg()
        for cmd, code in cases.values():  # one warm-up round: the files in the page cache
            _once(cmd, code)
        times: dict[str, list[float]] = {name: [] for name in cases}
        for _ in range(a.repeats):
            for name, (cmd, code) in cases.items():
                times[name].append(_once(cmd, code))
        load1 = os.getloadavg()
    print(f"# machine: {machine()}")
    print(f"# load average (1 min) before {load0[0]:.2f}, after {load1[0]:.2f}; "
          f"{a.repeats} interleaved rounds, wall time of a fresh process")
    rows = []
    for name, ts in times.items():
        rows.append({"case": name, "median_s": statistics.median(ts), "min_s": min(ts),
                     "max_s": max(ts), "repeats": len(ts)})
        print(f"{name:<24} median {statistics.median(ts):6.3f} s  "
              f"(min {min(ts):.3f}, max {max(ts):.3f})")
    for lazy, eager in (("lazy import", "eager import"),
                        ("refused config (lazy)", "refused config (eager)")):
        ratio = statistics.median(times[eager]) / statistics.median(times[lazy])
        print(f"{eager} / {lazy}: {ratio:.2f}x")
    if a.out:
        import csv

        with open(a.out, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
