"""Every registered claim, read against the committed full-run results: a theorem check
declares wrong statements it must reject, and on its committed tables (docs/results/<paper>/
<id>-counterfactuals.csv, written by the last full run) it rejects at least one of them unless
its verdict is undecided; every summary headline fits one screen line."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from theorylab.core.claims.claim import HEADLINE_MAX
from theorylab.papers import PAPERS, paper_claims

RESULTS = Path(__file__).resolve().parents[2] / "docs" / "results"
#: Verdicts that decide nothing: a check with one of these need not reject anything (its page
#: says why it could not decide).
UNDECIDED = ("inconclusive", "error")


def _claims():
    out = []
    for name, paper in PAPERS.items():
        for cid, claim in paper_claims(paper).items():
            out.append(pytest.param(name, cid, claim, id=f"{name}/{cid}"))
    return out


CLAIMS = _claims()


def _summary(paper: str) -> pd.DataFrame:
    path = RESULTS / paper / "summary.csv"
    if not path.is_file():
        pytest.skip(f"no committed full run of {paper} ({path})")
    return pd.read_csv(path, keep_default_na=False).set_index("claim")


def test_every_paper_has_claims():
    assert len(CLAIMS) >= 20


@pytest.mark.parametrize("paper, cid, claim", CLAIMS)
def test_a_theorem_check_declares_what_it_must_reject(paper, cid, claim):
    if claim.kind != "theorem check":
        return
    assert len(claim.counterfactuals) >= 1, f"{paper}/{cid} declares no counterfactual"


@pytest.mark.parametrize("paper, cid, claim", CLAIMS)
def test_a_theorem_check_rejects_a_counterfactual_on_its_committed_tables(paper, cid, claim):
    summary = _summary(paper)
    row = summary.loc[f"{paper}/{cid}"]
    assert row["kind"] == claim.kind, f"committed kind {row['kind']!r}, registered {claim.kind!r}"
    if claim.kind != "theorem check" or row["verdict"] in UNDECIDED:
        return
    table = pd.read_csv(RESULTS / paper / f"{cid}-counterfactuals.csv")
    assert set(table.counterfactual) == {c.name for c in claim.counterfactuals}
    assert table.rejected.astype(bool).any(), (
        f"{paper}/{cid} ({row['verdict']}) rejects none of {list(table.counterfactual)}")
    assert row["can fail?"].startswith("yes"), row["can fail?"]


@pytest.mark.parametrize("paper", sorted(PAPERS))
def test_committed_headlines_fit_one_line(paper):
    summary = _summary(paper)
    long = {c: len(h) for c, h in summary["headline"].items() if len(h) > HEADLINE_MAX}
    assert not long, long
    registered = {f"{paper}/{cid}" for cid in paper_claims(PAPERS[paper])}
    assert set(summary.index) == registered, "the committed summary is not of today's claims"
