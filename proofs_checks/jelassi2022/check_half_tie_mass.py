"""The half-tie-mass identity: hard patch association with ties broken by a fair coin is
Bayes-optimal (DERIVED from Assumption 1, notes §1.3), with q symbolic.

Given c, P(c | y) = Π_j p(c_j) · n_y(c) / (L (q/2)^C), where n_± counts the sets whose entries
are all ±1: the signal set is one of them and its patches have probability 1 instead of q/2.
So the posterior odds are n₊/n₋, and the Bayes error Σ_c min(P(c, +1), P(c, −1)) equals the
error of the rule sign(n₊ − n₋) that flips a fair coin on n₊ = n₋:
P[wrong sign] + ½·P[tie]. A hard patch-associating readout (each set read as a block, a set
counts only when all its C entries agree) is that rule. The checks enumerate every c with q as
a symbol; counting ties as errors or as right gives a different polynomial, and so does
the linear readout sign(T). (At these small sizes a cubic readout Σ_ℓ s_ℓ³ decides like
sign(n₊ − n₋) off the ties, so it cannot serve as the perturbation.)
"""

import itertools

import sympy as sp

from theorylab.jelassi2022.data import bayes_error
from theorylab.jelassi2022.partition import Partition

q = sp.symbols("q", positive=True)


def _joint(c, y, sets):
    """P(c, y) with y uniform and the signal set uniform over the L sets (symbolic q)."""
    L = len(sets)
    p = {-1: q / 2, 0: 1 - q, 1: q / 2}
    tot = 0
    for sig in range(L):
        if any(c[j] != y for j in sets[sig]):
            continue
        w = sp.Rational(1, 2 * L)
        for ell, S in enumerate(sets):
            if ell != sig:
                for j in S:
                    w *= p[c[j]]
        tot += w
    return tot


def _errors(sets, readout=None):
    """(Bayes error Σ min, error of the readout with fair-coin ties, tie mass)."""
    D = sum(len(S) for S in sets)
    bayes = rule = ties = 0
    for c in itertools.product((-1, 0, 1), repeat=D):
        pp, pm = _joint(c, 1, sets), _joint(c, -1, sets)
        if pp == 0 and pm == 0:
            continue
        n_p = sum(all(c[j] == 1 for j in S) for S in sets)
        n_m = sum(all(c[j] == -1 for j in S) for S in sets)
        # the posterior odds are n₊/n₋ for every q: P(c, +1)·n₋ = P(c, −1)·n₊
        assert sp.expand(pp * n_m - pm * n_p) == 0
        bayes += pp if n_p < n_m else pm  # min: the smaller n has the smaller joint
        score = (n_p - n_m) if readout is None else readout(c)
        if score > 0:
            rule += pm
        elif score < 0:
            rule += pp
        else:
            rule += (pp + pm) / 2
            ties += pp + pm
    return sp.expand(bayes), sp.expand(rule), sp.expand(ties)


SETS = [((0, 1), (2, 3)), ((0, 1), (2, 3), (4, 5)), ((0, 1, 2), (3, 4, 5))]


def test_fair_coin_hard_association_is_bayes_optimal():
    for sets in SETS:
        bayes, rule, ties = _errors(sets)
        assert sp.simplify(bayes - rule) == 0
        # the closed form of theorylab.jelassi2022.data.bayes_error at a few q
        part = Partition(sets)
        for qv in (0.2, 0.5, 0.9):
            # a finite sum of O(1) products in float64: rounding only
            assert abs(float(bayes.subs(q, qv)) - bayes_error(part, qv)) < 1e-13


def test_ties_counted_otherwise_are_not_bayes():
    for sets in SETS:
        bayes, rule, ties = _errors(sets)
        assert sp.simplify(ties) != 0
        assert sp.simplify(rule + ties / 2 - bayes) != 0  # ties as errors
        assert sp.simplify(rule - ties / 2 - bayes) != 0  # ties as right


def test_a_linear_readout_is_not_bayes():
    """Reading the sets through their sums, sign(Σ_ℓ s_ℓ) = sign(T) (the GLM of uniform
    attention, Theorem 3.1), with the same fair coin on ties: its error exceeds the Bayes
    error for every q in (0, 1)."""
    sets = ((0, 1), (2, 3), (4, 5))
    bayes, _, _ = _errors(sets)
    _, rule_lin, _ = _errors(sets, lambda c: sum(c))
    diff = sp.expand(rule_lin - bayes)
    assert diff != 0
    assert all(float(diff.subs(q, qv)) > 0 for qv in (0.1, 0.3, 0.6, 0.9))
