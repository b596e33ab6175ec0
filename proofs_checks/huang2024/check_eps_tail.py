"""Huang et al. (2025), reconstructed model (docs/papers/huang2024.md §4.2, DERIVED): the ε-tail
of MAE's GD, judged by the claim thm4.1-eps.

The loss's infimum L* is reached only as the own-area logits grow without bound, so past the
phases the excess is a sum of decaying exponentials of the growing logit Φ:
f(Φ) = A e^{−kΦ}(1 + o(1)) (k: the lowest rate present; for a spread coefficient law the
expectation over z adds a power of Φ, f = A e^{−LΦ}/Φ^m).

1. Gradient flow Φ' = −η f'(Φ) on f = A e^{−kΦ}: f' = −k f, so f' along the flow is
   df/dt = −η k² f², solved exactly by f(t) = f₀/(1 + η k² f₀ t): the excess decays like
   1/(η k² t) whatever A and k (the rate constant only sets the prefactor).
2. Hence T*(ε) = (1/ε − 1/f₀)/(η k²): T*(ε) − T*(ε₀) ∝ 1/ε − 1/ε₀ exactly, whose local
   exponent against x = ε₀/ε is x/(x − 1) = 1 + 1/x + O(x⁻²) (the claim's a + b/x form).
3. With a power of Φ (f = A e^{−kΦ}/Φ^m) the decay is 1/(η k² t)·(1 + O(1/ln t)): the power
   only adds a correction in 1/Φ ∝ 1/ln t, the exponent of t stays 1.
4. A log tail (T* ∝ ln(1/ε), a linear-convergence reading) would need f' ∝ −f, i.e.
   df/dt ∝ −f: rejected by 1 (the flow's df/dt is quadratic in f).
"""

import sympy as sp

t, eta, k, f0, A, x, m, phi = sp.symbols("t eta k f0 A x m phi", positive=True)


def test_exponential_excess_decays_as_one_over_t():
    f = f0 / (1 + eta * k ** 2 * f0 * t)
    # the flow's equation df/dt = −η k² f² (from f' = −k f and Φ' = −η f')
    assert sp.simplify(sp.diff(f, t) + eta * k ** 2 * f ** 2) == 0
    assert sp.limit(f * t, t, sp.oo) == 1 / (eta * k ** 2)


def test_flow_equation_from_the_excess():
    F = A * sp.exp(-k * phi)
    dphi_dt = -eta * sp.diff(F, phi)
    df_dt = sp.diff(F, phi) * dphi_dt
    assert sp.simplify(df_dt + eta * k ** 2 * F ** 2) == 0
    # a log tail would need df/dt ∝ −f: the ratio (df/dt)/f is not constant in Φ
    assert sp.simplify(sp.diff(df_dt / F, phi)) != 0


def test_tail_exponent_against_eps0_over_eps():
    # T*(ε) − T*(ε₀) ∝ 1/ε − 1/ε₀ = (x − 1)/ε₀ with x = ε₀/ε: local exponent x/(x − 1)
    tail = x - 1
    expo = sp.simplify(sp.diff(sp.log(tail), x) * x)
    assert sp.simplify(expo - x / (x - 1)) == 0
    assert sp.series(expo.subs(x, 1 / sp.Symbol("u")), sp.Symbol("u"), 0, 2).removeO() == \
        1 + sp.Symbol("u")


def test_a_power_of_phi_keeps_exponent_one():
    F = A * sp.exp(-k * phi) / phi ** m
    dF = sp.diff(F, phi)
    # df/dt = −η (f')² = −η k² F² (1 + m/(kΦ))²: the rate constant tends to k²
    ratio = sp.simplify(-eta * dF ** 2 / (F ** 2))
    assert sp.limit(ratio, phi, sp.oo) == -eta * k ** 2
