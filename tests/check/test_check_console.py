"""The console summary of ``python -m theorylab check``: one row per claim within 100 columns."""

from __future__ import annotations

import pandas as pd

import theorylab.commands.check as check


def _summary() -> pd.DataFrame:
    long = "; ".join(f"quantity_{i}={i / 7:.4g}" for i in range(40))  # ~700 characters
    return pd.DataFrame([
        {"paper": "p", "claim": "p/thm4.1", "label": "FOUND", "kind": "theorem check",
         "verdict": "agrees", "runtime_s": 12.25, "headline": long, "error": ""},
        {"paper": "p", "claim": "p/a-much-longer-claim-id", "label": "RECONSTRUCTED",
         "kind": "sanity check", "verdict": "error", "runtime_s": 0.5, "headline": "",
         "error": "ValueError: " + "x" * 300},
    ])


def test_console_summary_fits_100_columns():
    text = check.console_summary(_summary())
    lines = text.splitlines()
    assert len(lines) == 3 and max(map(len, lines)) <= 100
    assert lines[0].split() == ["claim", "verdict", "runtime", "headline"]
    assert lines[1].startswith("p/thm4.1") and "agrees" in lines[1] and "12.2 s" in lines[1]
    assert "quantity_0=0" in lines[1] and lines[1].endswith("…")
    # a claim that raised shows its error where the headline would be
    assert "error" in lines[2] and "ValueError: xxx" in lines[2]


def test_main_prints_the_short_summary(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(check, "resolve_claims", lambda ids, field="ids": [])
    monkeypatch.setattr(check, "run_checks", lambda *a, **k: _summary())
    assert check.main(["--out", str(tmp_path)]) == 1  # one claim raised
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 4 and max(map(len, out[:-1])) <= 100, out  # the table; then the folder
    assert out[-1].startswith("total ") and "summary.md" in out[-1]
