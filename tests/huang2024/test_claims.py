"""The huang2024 claims as a whole: registered in the paper's order, and a quick run of each
claim whose verdict is the claim's `judge` of the tables it wrote (each judge on hand-made
tables: tests/huang2024/claims/, one file per claim)."""

from __future__ import annotations

import pandas as pd
import pytest

from theorylab.core.claims import write_result
from theorylab.huang2024.claims import (
    CLAIMS,
)
from theorylab.vision.imagedata import fashion_mnist_available


def test_claims_in_the_papers_order_and_registered():
    from theorylab.commands.check import resolve_claims
    from theorylab.huang2024 import PAPER

    assert list(CLAIMS) == ["thm4.1", "thm4.1-eps", "thm4.2", "thm4.2-laws", "phases-reduction",
                            "lemma5.1",
                            "lemma5.1-rates", "thm4.4", "thm4.4-plateau", "realvit-diversity"]
    assert PAPER.load_claims() is CLAIMS
    assert all(c.paper == "huang2024" for c in CLAIMS.values())
    assert all(c.label == "RECONSTRUCTED" for k, c in CLAIMS.items()
               if k not in ("realvit-diversity", "thm4.1", "thm4.2", "thm4.4"))
    kinds = {k: c.kind for k, c in CLAIMS.items()}
    assert {k for k, v in kinds.items() if v == "derivation check"} == {
        "thm4.1-eps", "thm4.2-laws", "phases-reduction", "lemma5.1", "lemma5.1-rates",
        "thm4.4-plateau"}
    for c in CLAIMS.values():
        if c.kind == "theorem check" and c.id != "realvit-diversity":
            assert c.counterfactuals and c.predictions
    assert resolve_claims(["huang2024"]) == [f"huang2024/{c}" for c in CLAIMS]


def _read(out, cid):
    tables = {"table": pd.read_csv(out / f"{cid}.csv")}
    for p in out.glob(f"{cid}-*.csv"):
        tables[p.stem[len(cid) + 1:]] = pd.read_csv(p)
    return tables


#: the claims that need the Fashion-MNIST files (skipped without them, conftest.py)
NEEDS_FILES = {"realvit-diversity"}


@pytest.mark.slow
@pytest.mark.parametrize("cid", [pytest.param(c, marks=pytest.mark.fashion_mnist)
                                 if c in NEEDS_FILES else c for c in CLAIMS])
def test_quick_run_verdict_is_the_judge_of_its_tables(cid, tmp_path):
    claim = CLAIMS[cid]
    res = claim.check(quick=True, variants=False)
    assert claim.judge({"table": res.table, **res.extra}).verdict == res.verdict
    write_result(claim, res, tmp_path, figures=True)
    assert claim.judge(_read(tmp_path, cid)).verdict == res.verdict
    page = (tmp_path / f"{cid}.md").read_text()
    assert f"Verdict `{res.verdict}`" in page and (tmp_path / f"{cid}.png").exists()
    assert len(res.short()) <= 160
    if claim.kind == "theorem check" and res.verdict != "inconclusive":
        assert res.counterfactuals.rejected.any(), res.counterfactuals


@pytest.mark.slow
def test_check_command_quick(tmp_path):
    """``python -m theorylab check --quick --only huang2024`` (main readings): every verdict is
    the judge of the tables it wrote."""
    from theorylab.commands.check import main

    assert main(["--quick", "--only", "huang2024", "--out", str(tmp_path), "--no-figures",
                 "--main-reading-only"]) == 0
    out = tmp_path / "huang2024"
    summary = pd.read_csv(out / "summary.csv")
    v = {k.split("/", 1)[1]: verdict for k, verdict in zip(summary.claim, summary.verdict)}
    assert set(v) == set(CLAIMS)
    for cid, verdict in v.items():
        if verdict == "skipped":  # its data are not on this machine
            assert cid in NEEDS_FILES and not fashion_mnist_available(), cid
            continue
        assert CLAIMS[cid].judge(_read(out, cid)).verdict == verdict
    assert v["lemma5.1"] == "agrees" and v["lemma5.1-rates"] == "agrees"
