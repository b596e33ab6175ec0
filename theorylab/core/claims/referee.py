"""The rules a verdict must pass before a referee would sign it, as functions a registry test
runs over every claim.

- Sources: a theorem check judges only ``paper`` predictions, each quoting a sentence that the
  paper's notes quote verbatim under a FOUND tag ([`quote_problem`][]); a ``derived`` one names
  its check; no prediction keeps an older source name.
- Bands: every prediction is judged with a declared tolerance, two-sided unless its ``paper``
  sentence is one-sided; a two-sided prediction whose resolution finds no flip on a side is
  judged one-sided in fact.
- Near counterfactuals ([`separation`][]): each prediction declares a wrong value on each side
  within [`NEAR_TOLERANCES`][theorylab.core.claims.bands.NEAR_TOLERANCES] tolerances of it, and
  the check's resolution is tighter than the distance to it, or the prediction is declared
  WEAK (its page says so; a headline part may not be WEAK). A one-sided prediction needs them
  on the sides [`wrong_sides`][] names: a bound whose value the paper gives on the side of a
  tighter bound, a sentence that states a direction only on the side of the readings it
  denies.
- Intervals: a claim that rests on seeds declares its interval method; a bootstrap on fewer
  than 10 seeds is shown calibrated
  ([`IntervalMethod`][theorylab.core.claims.robustness.IntervalMethod] refuses it otherwise).
- Settings: the settings a run used are the ones the claim declares
  ([`settings_mismatches`][]), and a hand-written page states no other value
  ([`stated_settings_mismatches`][]).

[`referee_problems`][] returns one line per broken rule (empty: the claim passes).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

import pandas as pd

from .bands import NEAR_TOLERANCES, scale_distance
from .readings import Counterfactual, Prediction

__all__ = ["SEPARATION_COLUMNS", "open_side", "wrong_sides", "near_counterfactuals",
           "separation", "weak_lines", "quote_problem", "settings_mismatches",
           "stated_settings_mismatches", "referee_problems"]

#: The columns of the [`separation`][] table.
SEPARATION_COLUMNS = ["prediction", "side", "counterfactual", "cf_value", "distance", "near",
                      "resolution", "weak", "declared_weak", "status"]

_PLAIN_QUOTES = str.maketrans({"“": '"', "”": '"', "‘": "'", "’": "'"})
_TAGS = re.compile(r"FOUND-2nd|FOUND|RECONSTRUCTED|DERIVED|UNCERTAIN|NOT read")


def _width(p: Prediction, tol: float) -> float:
    """The band's half-width on the axis of
    [`scale_distance`][theorylab.core.claims.bands.scale_distance]."""
    return math.log1p(tol) if p.scale == "factor" else tol


def _side(p: Prediction, a: float) -> str:
    return "below" if a < p.value else "above"


def open_side(p: Prediction) -> str:
    """The side of a one-sided prediction on which no change of its value can flip the
    verdict ("" for a two-sided one): loosening an upper bound (raising it) or a lower bound
    (lowering it) keeps every measurement inside it, so the check cannot tell the prediction
    from a counterfactual there; the other side is the one it is judged on."""
    return {"upper": "above", "lower": "below"}.get(p.sides, "")


def wrong_sides(p: Prediction) -> tuple[str, ...]:
    """The sides on which `p` must have a near counterfactual that the check rejects: both for
    a two-sided prediction; for a one-sided bound whose value the paper gives, the side of a
    tighter bound (the data can reject it); for a sentence that states a direction only
    (``direction``), the side of its open end, where the readings it denies lie (no
    difference, the other way): a tighter bound is a stronger statement it leaves open."""
    if not p.one_sided:
        return ("below", "above")
    if p.direction:
        return (open_side(p),)
    return tuple(s for s in ("below", "above") if s != open_side(p))


def near_counterfactuals(p: Prediction, counterfactuals: Sequence[Counterfactual],
                         tol: float) -> dict[str, dict]:
    """Per side (``below``, ``above``): the declared counterfactual whose value of `p` lies
    nearest to it, as ``{"counterfactual", "value", "distance", "near"}`` (near: within
    [`NEAR_TOLERANCES`][theorylab.core.claims.bands.NEAR_TOLERANCES] tolerances `tol`); None
    for a side with no counterfactual."""
    out: dict[str, dict | None] = {"below": None, "above": None}
    for cf in counterfactuals:
        if p.name not in cf.values or float(cf.values[p.name]) == p.value:
            continue
        a = float(cf.values[p.name])
        side, d = _side(p, a), scale_distance(p.value, a, p.scale)
        if out[side] is None or d < out[side]["distance"]:
            out[side] = {"counterfactual": cf.name, "value": a, "distance": d,
                         "near": d <= NEAR_TOLERANCES * _width(p, tol) * (1 + 1e-12)}
    return out


def separation(predictions: Sequence[Prediction], counterfactuals: Sequence[Counterfactual],
               values: dict[str, float], resolution: pd.DataFrame | None) -> pd.DataFrame:
    """The check's resolution against its nearest counterfactual on each side of each
    prediction (one row per prediction and side; columns [`SEPARATION_COLUMNS`][]).

    `resolution` is the claim's resolution table
    ([`resolution`][theorylab.core.claims.readings.resolution]): the value at which the verdict
    turns ``disagrees`` on each side. A side is ``weak`` when that change is at least the
    distance to the nearest counterfactual, or when no change on that side flips the verdict
    at all ("the check cannot tell the prediction from X"); its status says why. The open side
    of a one-sided prediction lists the counterfactuals it cannot tell apart instead."""
    res = {} if resolution is None else {r.prediction: r for r in resolution.itertuples()}
    rows = []
    for p in predictions:
        tol = float(values[p.tolerance]) if p.tolerance in values else math.nan
        near = near_counterfactuals(p, counterfactuals, tol)
        r = res.get(p.name)
        for side, col in (("below", "value_down"), ("above", "value_up")):
            cf = near[side]
            row = {"prediction": p.name, "side": side, "counterfactual": "",
                   "cf_value": math.nan, "distance": math.nan, "near": False,
                   "resolution": math.nan, "weak": False, "declared_weak": bool(p.weak),
                   "status": ""}
            if cf is not None:
                row.update(counterfactual=cf["counterfactual"], cf_value=cf["value"],
                           distance=cf["distance"], near=bool(cf["near"]))
            flip = math.nan if r is None else float(getattr(r, col))
            row["resolution"] = (scale_distance(p.value, flip, p.scale) if math.isfinite(flip)
                                 else math.nan)
            if p.direction and side not in wrong_sides(p):
                row["status"] = ("a tighter bound: a stronger statement the direction sentence "
                                 "leaves open, not a wrong reading of it")
            elif side not in wrong_sides(p):
                names = [c.name for c in counterfactuals if p.name in c.values
                         and _side(p, float(c.values[p.name])) == side
                         and float(c.values[p.name]) != p.value]
                row["status"] = ("open side (one-sided): cannot tell apart "
                                 + (", ".join(names) if names else "any value on this side"))
            elif r is None:
                row["status"] = "no resolution computed"
            elif r.verdict == "disagrees":
                row["status"] = "the verdict disagrees: separation not read"
            elif not math.isfinite(row["resolution"]):
                row.update(weak=True, status=(
                    "WEAK: no change on this side flips the verdict (judged one-sided)"
                    + (f": cannot tell the prediction from {cf['counterfactual']}" if cf
                       else "")))
            elif cf is None:
                row["status"] = "no counterfactual on this side"
            elif row["resolution"] >= cf["distance"]:
                row.update(weak=True, status=(
                    f"WEAK: resolution {row['resolution']:.3g} ≥ distance {cf['distance']:.3g}: "
                    f"cannot tell the prediction from {cf['counterfactual']}"))
            elif not math.isfinite(tol):
                row["status"] = "no band tolerance declared: nearness unknown"
            elif not cf["near"]:
                row["status"] = (f"nearest counterfactual {cf['counterfactual']} is not near "
                                 f"(more than {NEAR_TOLERANCES:g} tolerances)")
            else:
                row["status"] = "ok"
            rows.append(row)
    return pd.DataFrame(rows, columns=SEPARATION_COLUMNS)


def weak_lines(predictions: Sequence[Prediction], table: pd.DataFrame) -> list[str]:
    """One line per WEAK side of a [`separation`][] table, with its numbers (for a page and
    the closing note)."""
    by = {p.name: p for p in predictions}
    out = []
    for r in table[table.weak.astype(bool)].itertuples():
        p = by[r.prediction]
        res = "none" if not math.isfinite(r.resolution) else f"{r.resolution:.3g}"
        out.append(f"WEAK {p.name} ({p.meaning}), {r.side}: resolution {res} against "
                   f"{r.counterfactual} at distance {r.distance:.3g}"
                   + (f"; declared: {p.weak}" if p.weak else "; NOT declared on the page"))
    return out


def _norm(text: str) -> str:
    """Whitespace folded and typographic quotes made plain, for a verbatim comparison."""
    return " ".join(text.translate(_PLAIN_QUOTES).split())


def _sections(notes: str) -> list[tuple[str, str]]:
    """(heading, body) of each markdown section of `notes`."""
    out: list[tuple[str, list[str]]] = [("", [])]
    for line in notes.splitlines():
        if line.startswith("#"):
            out.append((line.lstrip("#").strip(), []))
        else:
            out[-1][1].append(line)
    return [(h, "\n".join(b)) for h, b in out]


def quote_problem(notes: str, quote: str, section: str) -> str:
    """Why `quote` is not a FOUND sentence of the notes' `section` ("" when it is): the
    section (a heading containing `section`) must exist, hold the quote verbatim (whitespace
    and typographic quotes folded), and the evidence tag nearest the quote in its paragraph (the
    one right after it, else the last one before it) must be FOUND (not FOUND-2nd,
    RECONSTRUCTED, DERIVED)."""
    q = _norm(quote).strip('"')
    if not q:
        return "empty quote"
    found = [(h, b) for h, b in _sections(notes) if section and section in h]
    if not found:
        return f"no section of the notes is headed {section!r}"
    for _, body in found:
        for para in re.split(r"\n\s*\n", body):
            text = _norm(para)
            at = text.find(q)
            if at < 0:
                continue
            after = _TAGS.search(text, at + len(q), at + len(q) + 40)
            before = list(_TAGS.finditer(text, 0, at))
            tag = after.group(0) if after else (before[-1].group(0) if before else "")
            if tag == "FOUND":
                return ""
            return (f"the quote stands under the tag {tag!r}, not FOUND" if tag else
                    "the quote carries no evidence tag in its paragraph")
    return f"the quote is not in the notes' section {section!r} verbatim"


def settings_mismatches(declared: dict, used: dict) -> list[str]:
    """The settings a run `used` that differ from the `declared` ones (a page must state what
    the code used): one line each, ``"name: page says X, the run used Y"``."""
    return [f"{k}: page says {declared[k]}, the run used {used[k]}" for k in declared
            if k in used and str(used[k]) != str(declared[k])]


def _same(a: str, b) -> bool:
    """Whether a value stated on a page (`a`, text) is the setting `b` (numbers compared as
    numbers, to 1e-9 relative; anything else as text)."""
    try:
        return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=0.0)
    except (TypeError, ValueError):
        return a.strip() == str(b).strip()


def stated_settings_mismatches(text: str, settings: dict) -> list[str]:
    """The settings a hand-written page states with values other than the code's: for each
    setting ``name`` (e.g. ``"‖v⁰‖"``), every ``name = value`` in `text` (a value ends at a
    space, comma, semicolon or bracket) whose value differs; one line each, ``"name: the page
    states X, the code uses Y"``."""
    out = []
    for name, value in settings.items():
        pat = re.compile(re.escape(str(name)) + r"\s*=\s*([^\s,;()\[\]]+)")
        for m in pat.finditer(text):
            stated = m.group(1).rstrip(".:")
            if not _same(stated, value):
                out.append(f"{name}: the page states {stated}, the code uses {value}")
    return list(dict.fromkeys(out))


def referee_problems(claim, notes: str | None = None, res=None) -> list[str]:
    """Every rule the `claim` breaks, one line each (empty: it passes). `notes`: the text of
    its paper's notes (``docs/papers/<paper>.md``; None: quotes are not looked up). `res`: a
    result of the claim (with its resolution), for the rules read off the data: a two-sided
    prediction judged one-sided, a WEAK side not declared, a WEAK headline part, settings that
    differ from the declared ones."""
    key = claim.key
    out = []
    tolerances = {t.name: t.value for t in claim.thresholds}
    if claim.kind == "theorem check" and not any(p.source == "paper"
                                                 for p in claim.predictions):
        out.append(f"{key}: a theorem check that judges no paper sentence (declare its paper "
                   "prediction, or make it a derivation check)")
    if claim.seeds and claim.interval is None:
        out.append(f"{key}: rests on seeds ({claim.seeds[:60]}) without a declared interval "
                   "method (IntervalMethod)")
    for p in claim.predictions:
        who = f"{key} {p.name}"
        if p.legacy_source:
            out.append(f"{who}: source given by its older name {p.legacy_source!r} (read as "
                       f"{p.source}); declare paper, derived or heuristic")
        if claim.kind == "theorem check" and p.source != "paper":
            out.append(f"{who}: a theorem check judges only paper sentences (source "
                       f"{p.source}); judge it in a derivation check")
        if p.source == "paper":
            if not (p.quote and p.section):
                out.append(f"{who}: paper source without the quote and the notes' section")
            elif notes is not None:
                why = quote_problem(notes, p.quote, p.section)
                if why:
                    out.append(f"{who}: {why}")
        if p.source == "derived" and not p.check:
            out.append(f"{who}: derived without the proofs_checks/ file or test that checks it")
        if not p.tolerance:
            out.append(f"{who}: no band tolerance declared (a declared threshold, two-sided "
                       "unless the paper's sentence is one-sided)")
        elif p.tolerance in tolerances:
            near = near_counterfactuals(p, claim.counterfactuals, tolerances[p.tolerance])
            for side in wrong_sides(p):
                cf = near[side]
                if cf is None:
                    out.append(f"{who}: no counterfactual {side} it")
                elif not cf["near"]:
                    out.append(f"{who}: the nearest counterfactual {side} it "
                               f"({cf['counterfactual']}, {cf['value']:g}) lies beyond "
                               f"{NEAR_TOLERANCES:g} tolerances")
        if p.weak and p.headline:
            out.append(f"{who}: a headline part declared WEAK")
    if res is not None:
        out += _result_problems(claim, res)
    return out


def _result_problems(claim, res) -> list[str]:
    key = claim.key
    out = []
    if res.resolution is not None and claim.predictions:
        table = separation(claim.predictions, claim.counterfactuals, claim.values(),
                           res.resolution)
        by = {p.name: p for p in claim.predictions}
        for r in table.itertuples():
            p = by[r.prediction]
            if r.weak and p.sides == "two" and not math.isfinite(r.resolution):
                out.append(f"{key} {p.name}: declared two-sided but judged one-sided (no change "
                           f"{r.side} it flips the verdict)")
            elif r.weak and not p.weak:
                out.append(f"{key} {p.name}: {r.status} (not declared WEAK on its page)")
            if r.weak and p.headline:
                out.append(f"{key} {p.name}: a headline part is WEAK")
    out += [f"{key}: {m}" for m in settings_mismatches(claim.settings, res.settings)]
    return list(dict.fromkeys(out))
