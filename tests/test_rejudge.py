"""Re-judging stored tables without a rerun: ``theorylab.analysis.load_claim`` and
``theorylab check --rejudge`` on the tables a quick check wrote into a temporary folder (the
first paper's Theorem 3.1 and its proof check: thresholds, predictions, counterfactuals, one
RECONSTRUCTED choice, and ids that share a prefix), and their one-line refusals."""

from __future__ import annotations

import pandas as pd
import pytest

from theorylab.analysis import load_claim
from theorylab.commands import main

CLAIMS = ("jelassi2022/thm3.1", "jelassi2022/thm3.1-proof")


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    out = tmp_path_factory.mktemp("results")
    assert main(["check", "--quick", "--only", *CLAIMS, "--out", str(out), "--no-figures"]) == 0
    return out


def _listing(folder) -> dict:
    return {p: p.stat().st_mtime_ns for p in folder.rglob("*")}


@pytest.mark.parametrize("key", CLAIMS)
def test_stored_tables_give_the_stored_verdicts(results, key):
    """The judge on the CSVs gives the verdict the check wrote, and the verdicts at ×0.5 and
    ×2 of each threshold and under each counterfactual that it stored beside them."""
    stored = load_claim(key, results)
    summary = pd.read_csv(results / "jelassi2022" / "summary.csv")
    assert stored.stored_verdict == summary.set_index("claim").verdict[key]
    assert stored.judge().verdict == stored.stored_verdict
    cid = key.split("/")[1]
    assert set(stored.tables) == {"table"}  # not thm3.1-proof's files for thm3.1
    sens = pd.read_csv(results / "jelassi2022" / f"{cid}-sensitivity.csv")
    for row in sens.itertuples():
        assert stored.judge(**{row.threshold: 0.5 * row.value}).verdict == row.verdict_half
        assert stored.judge(**{row.threshold: 2.0 * row.value}).verdict == row.verdict_double
    cfs = pd.read_csv(results / "jelassi2022" / f"{cid}-counterfactuals.csv")
    assert len(cfs) == len(stored.claim.counterfactuals) > 0
    for row in cfs.itertuples():
        assert stored.counterfactual(row.counterfactual).verdict == row.verdict


def test_another_reading_is_judged_from_its_stored_tables(results):
    main_reading = load_claim("jelassi2022/thm3.1", results)
    other = load_claim("jelassi2022/thm3.1", results, readings={"fstar_ties": "literal"})
    assert other.folder.name == "fstar_ties=literal" and other.readings["fstar_ties"] == "literal"
    assert other.stored_verdict and other.judge().verdict == other.stored_verdict
    assert not other.tables["table"].equals(main_reading.tables["table"])


def test_refusals_name_the_field(results):
    with pytest.raises(ValueError, match=r"^claim: unknown claim 'jelassi2022/thm9'"):
        load_claim("jelassi2022/thm9", results)
    with pytest.raises(ValueError, match=r"^results: no stored tables of jelassi2022/thm3.2 .*"
                                         r"run theorylab check --only jelassi2022/thm3.2"):
        load_claim("jelassi2022/thm3.2", results)
    with pytest.raises(ValueError, match=r"^reading: fstar_ties has no reading 'loose'"):
        load_claim("jelassi2022/thm3.1", results, readings={"fstar_ties": "loose"})
    with pytest.raises(ValueError, match=r"^thresholds: unknown name 'NOPE'"):
        load_claim("jelassi2022/thm3.1", results).judge(NOPE=1.0)
    # two alternatives together were never run (the committed tables, read only)
    with pytest.raises(ValueError, match=r"^reading: \['temperature', 'v_start'\] together "
                                         r"were never run.*needs a rerun"):
        load_claim("jelassi2022/thm4.1", readings={"temperature": "sqrt(D)",
                                                   "v_start": "aligned"})


def test_the_command_rejudges_and_writes_nothing(results, capsys):
    before = _listing(results)
    cf = load_claim("jelassi2022/thm3.1-proof", results).claim.counterfactuals[0].name
    assert main(["check", "--rejudge", "jelassi2022/thm3.1-proof", "--results", str(results),
                 "--threshold", "ENUM_TOL=1e-30", "--counterfactual", cf]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("jelassi2022/thm3.1-proof: re-judged from ")
    assert out[1] == "stored verdict: agrees"
    assert out[2].startswith("verdict with ENUM_TOL=1e-30: ")
    assert out[-1] == f"counterfactual {cf!r}: disagrees (rejected)"
    assert _listing(results) == before
    for argv, field in ((["--threshold", "NOPE=1"], "--threshold"),
                        (["--threshold", "ENUM_TOL"], "--threshold"),
                        (["--reading", "x=1"], "reading"),
                        (["--counterfactual", "nope"], "counterfactual"),
                        (["--quick"], "--rejudge")):
        assert main(["check", "--rejudge", "jelassi2022/thm3.1-proof", "--results",
                     str(results), *argv]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"error: {field}: ") and err.count("\n") == 1, err
    assert main(["check", "--threshold", "A=1"]) == 2
    assert capsys.readouterr().err == "error: --threshold: only with --rejudge PAPER/ID\n"
