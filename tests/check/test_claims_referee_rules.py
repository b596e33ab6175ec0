"""Every registered claim against the referee's rules (theorylab.core.claims.referee): a theorem
check judges only the paper's sentences, each found verbatim under a FOUND tag of
docs/papers/<paper>.md; every prediction has a two-sided band (or a one-sided paper sentence), a
near counterfactual on each side and, on its committed tables
(docs/results/<paper>/<id>-resolution.csv, written by the last full run), a resolution tighter
than the distance to it, or a WEAK declaration (never on a headline part).

The claims listed in NOT_YET still break some rule: the paper's own sentences and the two-sided,
settled derivation checks are being declared claim by claim. Their tests are strict xfails, so
a claim that comes to pass must leave the list."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest

from theorylab.core.claims import referee_problems
from theorylab.papers import PAPERS, paper_claims

DOCS = Path(__file__).resolve().parents[2] / "docs"

#: The claims that break a rule today (each one's problems: ``referee_problems``).
NOT_YET: set[str] = set()


def _claims():
    out = []
    for name, paper in PAPERS.items():
        for cid, claim in paper_claims(paper).items():
            key = f"{name}/{cid}"
            marks = [pytest.mark.xfail(strict=True, reason="still breaks a referee rule")
                     ] if key in NOT_YET else []
            out.append(pytest.param(name, claim, id=key, marks=marks))
    return out


def _committed(paper: str, claim_id: str):
    """The committed resolution of a claim as a result the rules can read (None: none)."""
    path = DOCS / "results" / paper / f"{claim_id}-resolution.csv"
    if not path.is_file():
        return None
    return SimpleNamespace(resolution=pd.read_csv(path), settings={})


@pytest.mark.parametrize("paper, claim", _claims())
def test_claim_passes_the_referee_rules(paper, claim):
    notes = (DOCS / "papers" / f"{paper}.md").read_text(encoding="utf-8")
    problems = referee_problems(claim, notes, _committed(paper, claim.id))
    assert not problems, "\n".join(problems)


def test_the_not_yet_list_names_registered_claims():
    keys = {f"{n}/{c}" for n, p in PAPERS.items() for c in paper_claims(p)}
    assert NOT_YET <= keys, sorted(NOT_YET - keys)
