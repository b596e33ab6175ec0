"""CI smoke test: the quick mode of ``python -m theorylab.check`` runs every claim (< 3 min on
2 cores) into a temporary folder and writes a verdict row and the result files for each."""

import pandas as pd

from theorylab.check import main
from theorylab.claims import CLAIMS, VERDICTS


def test_quick_mode_writes_verdicts(tmp_path, capsys):
    rc = main(["--quick", "--out", str(tmp_path), "--no-figures"])
    assert rc == 0
    summary = pd.read_csv(tmp_path / "summary.csv")
    assert list(summary.claim) == list(CLAIMS)
    assert set(summary.verdict) <= set(VERDICTS)
    for cid in CLAIMS:
        assert (tmp_path / f"{cid}.md").exists()
        assert (tmp_path / f"{cid}.csv").exists()
    assert "verdict" in capsys.readouterr().out
