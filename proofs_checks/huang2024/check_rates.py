"""Huang et al. (2025), reconstructed model: the FP-correlation rates at Q⁰ = 0 (DERIVED,
``theorylab.huang2024.predictions``; Lemma 5.1 RECONSTRUCTED, docs/papers/huang2024.md §4.5).

1. The closed forms g_j (own area) and g_m (another area) of ∂ℓ/∂Φ_{p→v_m} at Φ = 0 equal
   sympy's derivative of ½‖F_p − x_p‖², symbolically in the counts n_m, the coefficients z_m
   and the weight R of the masked keys (R = the masked keys with masked keys in the softmax,
   0 without).
2. The population rates (masks enumerated with a symbolic γ, the coefficients' monomials
   replaced by the moments μ_k) equal ``initial_rates`` on a small instance, masked keys in
   and out; the leading order ``leading_rates`` does not (at this small P it is off by
   percents), so the check tells an approximation from the exact sum.
"""

import itertools

import sympy as sp

from theorylab.huang2024.predictions import ZMoments, initial_rates, leading_rates

N = 3  # areas 0 (global), 1 (the query's), 2 (another local area)
J = 1


def _loss_and_s():
    n = sp.symbols("n0:3", positive=True)
    z = sp.symbols("z0:3", positive=True)
    phi = sp.symbols("phi0:3", real=True)
    R = sp.Symbol("R", nonnegative=True)
    w = [n[m] * sp.exp(z[m] * phi[m]) for m in range(N)]
    Z = sum(w) + R
    s = [w[m] / Z for m in range(N)]
    loss = sum((z[m] * s[m] - (z[J] if m == J else 0)) ** 2 for m in range(N)) / 2
    return n, z, phi, R, loss


def _closed_form(m, s, z, cross=True):
    """The module docstring's g_m at s_m = n_m / Z₀."""
    if m == J:
        rest = sum(z[l] ** 2 * s[l] ** 2 for l in range(N) if l != J)
        return -z[J] ** 3 * s[J] * (1 - s[J]) ** 2 - z[J] * s[J] * rest
    rest = sum(z[l] ** 2 * s[l] ** 2 for l in range(N) if l not in (J, m))
    return (z[m] ** 3 * s[m] ** 2 * (1 - s[m]) - (z[m] * s[m] * rest if cross else 0)
            + z[m] * z[J] ** 2 * s[m] * s[J] * (1 - s[J]))


def test_closed_form_gradient_at_zero():
    n, z, phi, R, loss = _loss_and_s()
    Z0 = sum(n) + R
    s = [n[m] / Z0 for m in range(N)]
    at0 = {p: 0 for p in phi}
    for m in range(N):
        d = sp.diff(loss, phi[m]).subs(at0)
        assert sp.simplify(d - _closed_form(m, s, z)) == 0
    # the same check catches a formula without the cross term (the notes' earlier reading)
    d = sp.diff(loss, phi[0]).subs(at0)
    assert sp.simplify(d - _closed_form(0, s, z, cross=False)) != 0


def _enumerated_rates(sizes, mask_keys, gamma, mu):
    """−∂L/∂Φ_{p→v_m} of a masked query of area J, 1/P normalisation: every mask of the other
    P − 1 patches enumerated, the coefficient monomials replaced by the moments."""
    n_s, z, phi, R, loss = _loss_and_s()
    P = sum(sizes)
    counts = [c - (1 if a == J else 0) for a, c in enumerate(sizes)]
    keys = [a for a, c in enumerate(counts) for _ in range(c)]
    at0 = {p: 0 for p in phi}
    d0 = [sp.diff(loss, phi[m]).subs(at0) for m in range(N)]
    total = [sp.Integer(0)] * N
    for bits in itertools.product((0, 1), repeat=len(keys)):  # 1 = unmasked
        nm = [sum(b for b, a in zip(bits, keys) if a == m) for m in range(N)]
        if not mask_keys and sum(nm) == 0:
            continue  # no key left: F_p = 0, no gradient
        prob = sp.Integer(1)
        for b in bits:
            prob *= (1 - gamma) if b else gamma
        Rv = (P - sum(nm)) if mask_keys else 0
        sub = {**{n_s[m]: nm[m] for m in range(N)}, R: Rv}
        for m in range(N):
            g = sp.Poly(sp.expand(d0[m].subs(sub)), *z)
            Eg = sum(coef * sp.Mul(*[mu[k] for k in mon]) for mon, coef in g.terms())
            total[m] += prob * Eg
    return [-gamma * sp.Rational(1, P) * t for t in total]


def test_population_rates_equal_the_enumeration():
    gamma = sp.Rational(2, 5)
    mu_q = [sp.Integer(1), sp.Integer(1), sp.Rational(13, 12), sp.Rational(5, 4)]
    mu = ZMoments(1.0, 13 / 12, 1.25)
    sizes = [3, 2, 2]
    for mk in (True, False):
        want = [float(v) for v in _enumerated_rates(sizes, mk, gamma, mu_q)]
        got = initial_rates(sum(sizes), sizes, J, mu, gamma=0.4, mask_keys=mk)
        lead = leading_rates(sum(sizes), sizes, J, mu, gamma=0.4, mask_keys=mk)
        for m in range(N):
            # exact rationals against a float64 sum of ~P terms: 1e-13 relative
            assert abs(got[m] - want[m]) <= 1e-13 * abs(want[m]), (mk, m)
        # the leading order is not exact at P = 7: the check tells them apart
        assert max(abs(lead[m] / want[m] - 1) for m in range(N)) > 1e-3
