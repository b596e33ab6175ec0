"""A full ``theorylab check`` says what its claims took in their last full run before it
starts (the committed summaries' runtimes), so a long run is announced."""

from __future__ import annotations

import pandas as pd

from theorylab.commands.check import _say_recorded_time, recorded_seconds
from theorylab.core.provenance import COMMITTED, REPO_ROOT


def test_recorded_seconds_are_the_committed_runtimes():
    table = pd.read_csv(REPO_ROOT / COMMITTED["results"] / "jelassi2022" / "summary.csv")
    ids = list(table.claim[:3])
    seconds, found = recorded_seconds(ids + ["jelassi2022/no-such-claim"])
    assert found == 3
    assert abs(seconds - float(table.runtime_s[:3].sum())) < 1e-9


def test_a_long_full_run_is_announced_and_a_short_one_not(capsys):
    table = pd.read_csv(REPO_ROOT / COMMITTED["results"] / "jelassi2022" / "summary.csv")
    ids = list(table.claim)
    _say_recorded_time(ids)
    out = capsys.readouterr().out
    assert table.runtime_s.sum() > 60  # the committed full run took minutes
    assert out.startswith("estimate: about ") and f"{len(ids)} of {len(ids)} claims" in out
    _say_recorded_time(["jelassi2022/no-such-claim"])
    assert capsys.readouterr().out == ""
