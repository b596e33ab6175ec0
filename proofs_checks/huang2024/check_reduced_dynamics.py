"""Huang et al. (2025), reconstructed model (docs/papers/huang2024.md §4.5, DERIVED): the algebra of
the reduced population dynamics (the ``population-reduced`` engine,
`theorylab.huang2024.engines._reduced.class_terms`).

1. For one masked query, with per-key logits, the derivative of ½‖F_p − x_p‖² along each of the
   seven class coordinates (Φ_own, Φ_trk, Φ_rest, Υ_self, Υ_own, Υ_trk, Υ_rest) equals the
   closed form dℓ = z_t² S_t (de_t − S_t dD)/D + z_o² (S_o − 1)(de_o − S_o dD)/D + dq/(2D²)
   − q dD/D³ with the moves (dD, de_t, de_o, dq) that the module uses. Small instance: two own
   keys (one unmasked), two tracked keys (one unmasked), the masked query itself, two rest areas
   of one unmasked and one masked key; symbols for all logits' parameters and coefficients.
2. At Φ_rest = 0 the rest's expected contribution is exact: E[Σ_m z_m² n_m²] = n_rest μ_2
   c(1 − γ)(γ + c(1 − γ)) for n_m ~ Bin(c, 1 − γ), checked by enumeration with symbolic γ.

3. With masked keys left out of the softmax the same closed form holds with the moves the engine
   uses (no masked weights in D, no self key: Υ_self does not move D).
4. Given the rest's unmasked count N out of n_x = n_rest·c keys (masked keys out), the split
   among the n_rest areas is multivariate hypergeometric and Σ_m E[n_m² | N] = n_rest [N π(1 − π)
   (n_x − N)/(n_x − 1) + N²π²], π = 1/n_rest (the engine's ``R2``), by enumeration.

Deliberately wrong variants (the Υ_own move without the masked own keys; E n² without the
variance; the binomial second moment in place of the hypergeometric one) are rejected.
"""

from itertools import product

import sympy as sp

phi_o, phi_t, phi_x, u_s, u_o, u_t, u_x = COORDS = sp.symbols(
    "phi_o phi_t phi_x u_s u_o u_t u_x", real=True)
z_o, z_t, z1, z2 = sp.symbols("z_o z_t z_1 z_2", positive=True)


def _sample():
    """Per-key weights of the instance, the loss and the closed-form pieces."""
    # own: one unmasked, one masked; tracked: one unmasked, one masked; self; rest areas 1, 2:
    # one unmasked and one masked key each
    w_own = [sp.exp(z_o * phi_o + u_o), sp.exp(u_o)]
    w_trk = [sp.exp(z_t * phi_t + u_t), sp.exp(u_t)]
    w_rest = [sp.exp(z1 * phi_x + u_x), sp.exp(u_x), sp.exp(z2 * phi_x + u_x), sp.exp(u_x)]
    D = sum(w_own) + sum(w_trk) + sp.exp(u_s) + sum(w_rest)
    e_o, e_t = w_own[0], w_trk[0]
    q = z1 ** 2 * w_rest[0] ** 2 + z2 ** 2 * w_rest[2] ** 2
    S_o, S_t = e_o / D, e_t / D
    ell = (z_t ** 2 * S_t ** 2 + z_o ** 2 * (S_o - 1) ** 2 + q / D ** 2) / 2
    m_o, m_t = w_own[1], w_trk[1]
    z_x = sum(w_rest)
    moves = {  # (dD, de_t, de_o, dq) as in reduced_expectation, per sample
        phi_o: (z_o * e_o, 0, z_o * e_o, 0),
        phi_t: (z_t * e_t, z_t * e_t, 0, 0),
        phi_x: (z1 * w_rest[0] + z2 * w_rest[2], 0, 0,
                2 * z1 ** 3 * w_rest[0] ** 2 + 2 * z2 ** 3 * w_rest[2] ** 2),
        u_s: (sp.exp(u_s), 0, 0, 0),
        u_o: (e_o + m_o, 0, e_o, 0),
        u_t: (e_t + m_t, e_t, 0, 0),
        u_x: (z_x, 0, 0, 2 * q),
    }
    return ell, D, S_o, S_t, q, moves


def _closed(D, S_o, S_t, q, move):
    dD, de_t, de_o, dq = move
    return (z_t ** 2 * S_t * (de_t - S_t * dD) / D + z_o ** 2 * (S_o - 1) * (de_o - S_o * dD) / D
            + dq / (2 * D ** 2) - q * dD / D ** 3)


POINTS = [dict(zip(COORDS + (z_o, z_t, z1, z2), v)) for v in (
    (sp.Rational(7, 10), sp.Rational(-13, 10), sp.Rational(1, 5), sp.Rational(1, 20),
     sp.Rational(3, 10), sp.Rational(-1, 50), sp.Rational(1, 100), sp.Rational(3, 4),
     sp.Rational(5, 4), sp.Rational(1, 2), sp.Rational(3, 2)),
    (sp.Rational(-2, 5), sp.Rational(9, 10), sp.Rational(-3, 10), sp.Rational(-1, 5),
     sp.Rational(1, 7), sp.Rational(2, 9), sp.Rational(-1, 3), sp.Rational(11, 10),
     sp.Rational(3, 5), sp.Rational(7, 5), sp.Rational(9, 10)),
)]


def _gap(x, point):
    return abs(sp.N(x.subs(point), 40))


def test_closed_form_derivative_of_every_class_coordinate():
    ell, D, S_o, S_t, q, moves = _sample()
    for c, move in moves.items():
        diff = sp.diff(ell, c) - _closed(D, S_o, S_t, q, move)
        for pt in POINTS:
            assert _gap(diff, pt) < sp.Float("1e-35")  # 40-digit evaluation
            assert _gap(sp.diff(ell, c), pt) > sp.Float("1e-6")  # not trivially zero


def test_a_wrong_move_is_rejected():
    """The Υ_own move without the masked own keys' weight in dD."""
    ell, D, S_o, S_t, q, moves = _sample()
    dD, de_t, de_o, dq = moves[u_o]
    wrong = (dD - sp.exp(u_o), de_t, de_o, dq)
    diff = sp.diff(ell, u_o) - _closed(D, S_o, S_t, q, wrong)
    assert _gap(diff, POINTS[0]) > sp.Float("1e-4")


def _rest_second_moment(c: int, exact_variance: bool = True):
    """(enumerated E[Σ_m n_m²] over two rest areas of c keys, the module's formula)."""
    g = sp.Symbol("gamma", positive=True)
    q = 1 - g
    enum = 0
    for bits in product((0, 1), repeat=2 * c):
        pr = sp.Mul(*[q if b else g for b in bits])
        n1, n2 = sum(bits[:c]), sum(bits[c:])
        enum += pr * (n1 ** 2 + n2 ** 2)
    formula = 2 * c * q * (g + c * q) if exact_variance else 2 * (c * q) ** 2
    return sp.expand(enum - formula)


def test_rest_second_moment_at_phi_rest_zero():
    for c in (1, 2, 3):
        assert _rest_second_moment(c) == 0


def test_a_rest_moment_without_the_variance_is_rejected():
    assert _rest_second_moment(2, exact_variance=False) != 0


def _sample_keys_out():
    """The instance of `_sample` with masked keys left out of the softmax."""
    e_o = sp.exp(z_o * phi_o + u_o)
    e_t = sp.exp(z_t * phi_t + u_t)
    r1, r2 = sp.exp(z1 * phi_x + u_x), sp.exp(z2 * phi_x + u_x)
    D = e_o + e_t + r1 + r2
    q = z1 ** 2 * r1 ** 2 + z2 ** 2 * r2 ** 2
    S_o, S_t = e_o / D, e_t / D
    ell = (z_t ** 2 * S_t ** 2 + z_o ** 2 * (S_o - 1) ** 2 + q / D ** 2) / 2
    moves = {  # (dD, de_t, de_o, dq) as in class_terms with mask_keys false
        phi_o: (z_o * e_o, 0, z_o * e_o, 0),
        phi_t: (z_t * e_t, z_t * e_t, 0, 0),
        phi_x: (z1 * r1 + z2 * r2, 0, 0, 2 * z1 ** 3 * r1 ** 2 + 2 * z2 ** 3 * r2 ** 2),
        u_s: (0, 0, 0, 0),
        u_o: (e_o, 0, e_o, 0),
        u_t: (e_t, e_t, 0, 0),
        u_x: (r1 + r2, 0, 0, 2 * q),
    }
    return ell, D, S_o, S_t, q, moves


def test_closed_form_derivative_with_masked_keys_out():
    ell, D, S_o, S_t, q, moves = _sample_keys_out()
    for c, move in moves.items():
        diff = sp.diff(ell, c) - _closed(D, S_o, S_t, q, move)
        for pt in POINTS:
            assert _gap(diff, pt) < sp.Float("1e-35")


def _split_second_moment(n_rest: int, c: int, N: int, hypergeometric: bool = True):
    """(enumerated Σ_m E[n_m² | N] over the ways N unmasked keys fall among n_rest areas of c
    keys, the engine's formula)."""
    n_x = n_rest * c
    total, count = 0, 0
    for bits in product((0, 1), repeat=n_x):
        if sum(bits) != N:
            continue
        count += 1
        total += sum(sum(bits[m * c:(m + 1) * c]) ** 2 for m in range(n_rest))
    pi = sp.Rational(1, n_rest)
    if hypergeometric:
        formula = n_rest * (N * pi * (1 - pi) * sp.Rational(n_x - N, n_x - 1) + (N * pi) ** 2)
    else:  # the binomial second moment of Bin(N, π)
        formula = n_rest * (N * pi * (1 - pi) + (N * pi) ** 2)
    return sp.Rational(total, count) - formula


def test_rest_split_second_moment_given_the_count():
    for n_rest, c in ((2, 2), (3, 2), (2, 3)):
        for N in range(0, n_rest * c + 1):
            assert _split_second_moment(n_rest, c, N) == 0


def test_a_binomial_split_moment_is_rejected():
    assert _split_second_moment(3, 2, 3, hypergeometric=False) != 0
