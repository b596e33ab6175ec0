"""Formulas written in text become ``$…$`` TeX (theorylab.core.markdown.typeset_formulas): the
cases the claims' pages and the guides write, and the text that must stay as it is."""

from __future__ import annotations

import pytest

from theorylab.core.markdown import escape_stray_stars, plain_formulas, typeset_formulas


@pytest.mark.parametrize("text, typeset", [
    ("T* = O(P^{1−κ_c}·polylog(P)/η) steps.",
     "T* = $O(P^{1−κ_c}·\\mathrm{polylog}(P)/η)$ steps."),
    ("the loss L_MAE and Φ_{p→v},", "the loss $L_{\\mathrm{MAE}}$ and $Φ_{p→v}$,"),
    ("a*_glob = E_z[e^{zφ*}/(e^{zφ*} + (1 − ρ)/ρ)] here",
     "$a^*_{\\mathrm{glob}}$ = $E_z[e^{zφ^*}/(e^{zφ^*} + (1 − ρ)/ρ)]$ here"),
    ("grows as (ln P)^k, ε^−1.02", "grows as $(\\ln P)^k$, $ε^{−1.02}$"),
    ("**d^{−ω(1)}**, *P^{Δ/2}*", "**$d^{−ω(1)}$**, *$P^{Δ/2}$*"),
    ("(t_II grows like D^2 there)", "($t_{I I}$ grows like $D^{2}$ there)"),
    ("| a | \\|t_I\\| | P^Δ |", "| a | \\|$t_I$\\| | $P^Δ$ |"),
    ("r²/(c(d − 1)^{1 + B_SHIFT}/N^{1 + B_SHIFT}) within",
     "r²/($c(d − 1)^{1 + B_{\\mathrm{SHIFT}}}/N^{1 + B_{\\mathrm{SHIFT}}}$) within"),
])
def test_formulas_become_tex(text, typeset):
    assert typeset_formulas(text) == typeset
    assert typeset_formulas(typeset) == typeset          # text already in $…$ is left alone


@pytest.mark.parametrize("text", [
    "`round(P^κ_s)` in code, phase_readings and n_phase_I_delta as names",
    "```\nx = P^{1-k}\n```",
    "[a link](docs/a_b.md) and https://example.org/x^y_z, <img src=\"a_b.png\">",
    "already $x^2$ and $$y_{1}$$",
    "- **Code:** `50f2` (sha256 of theorylab/p/claims/a_b.py, docs/x_y.md)",
])
def test_code_names_links_and_math_stay(text):
    assert typeset_formulas(text) == text


def test_stars_of_a_typeset_formula_are_not_escaped_and_titles_read_plain():
    page = escape_stray_stars(typeset_formulas("w* and a*_glob, **bold**"))
    assert page == "w\\* and $a^*_{\\mathrm{glob}}$, **bold**"
    assert plain_formulas("Theorem 4.1's ε (T\\*'s tail, $P^{1−κ_c}$, τ_{c})") \
        == "Theorem 4.1's ε (T*'s tail, P^(1−κ_c), τ_c)"


def test_plain_titles_drop_font_commands():
    """A typeset subscript with a font command (the nav title of a results page) reads plain."""
    assert plain_formulas(typeset_formulas("phase lengths, Φ_own, attention gap")) \
        == "phase lengths, Φ_own, attention gap"
    assert plain_formulas("$a^*_{\\mathrm{glob}}$ and $Φ_{\\mathrm{own}}$") == "a^*_glob and Φ_own"
