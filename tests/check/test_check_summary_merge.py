"""Checking some claims keeps the other claims' rows of an existing summary of the same mode."""

import pandas as pd

from theorylab.commands.check import run_checks


def test_rerunning_one_claim_keeps_the_others_rows(tmp_path):
    # two fast claims of one paper, then one of them again: the other's row must survive
    run_checks(["jelassi2022/thm3.2", "huang2024/lemma5.1"], quick=True, out=tmp_path,
               figures=False, progress=False)
    first = pd.read_csv(tmp_path / "jelassi2022" / "summary.csv")
    assert list(first.claim) == ["jelassi2022/thm3.2"]
    run_checks(["jelassi2022/lemma4.1-4.2"], quick=True, out=tmp_path, figures=False,
               progress=False)
    merged = pd.read_csv(tmp_path / "jelassi2022" / "summary.csv")
    # grouped by kind: the theorem check lemma4.1-4.2 before the sanity check thm3.2
    assert list(merged.claim) == ["jelassi2022/lemma4.1-4.2", "jelassi2022/thm3.2"]
    text = (tmp_path / "jelassi2022" / "summary.md").read_text()
    assert "kept from an earlier quick run" in text and "jelassi2022/thm3.2" in text
    # the other paper's summary is untouched by a run that did not check it
    assert list(pd.read_csv(tmp_path / "huang2024" / "summary.csv").claim) == [
        "huang2024/lemma5.1"]


def test_a_summary_of_the_other_mode_is_replaced(tmp_path):
    folder = tmp_path / "jelassi2022"
    folder.mkdir()
    (folder / "summary.md").write_text("# Claim checks of X: summary (full run, 1 s)\n")
    pd.DataFrame({"claim": ["jelassi2022/thm4.1"], "verdict": ["agrees"]}).to_csv(
        folder / "summary.csv", index=False)
    run_checks(["jelassi2022/thm3.2"], quick=True, out=tmp_path, figures=False, progress=False)
    assert list(pd.read_csv(folder / "summary.csv").claim) == ["jelassi2022/thm3.2"]
