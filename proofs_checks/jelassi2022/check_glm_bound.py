"""A proof of the 1/8 bound of Theorem 3.1 (FOUND statement, notes §4.1) for the GLM that the
model is at uniform attention, sign(T), with q and n = D − C symbolic.

With y = +1 (the other case is symmetric), T = C + R, R = Σ_{j=1}^{n} δ_j, δ = ±1 w.p. q/2 and
0 w.p. 1 − q. The law of R is symmetric, so the best rule given T (ties T = 0 by a fair coin)
errs with probability P[R < −C] + ½P[R = −C] = ½P[|R| > C] + ¼P[|R| = C] ≥ ½P[|R| > C].
Paley–Zygmund on R² with
E R² = nq and E R⁴ = nq + 3n(n − 1)q² (from the moment generating function (1 − q + q cosh t)^n,
derived in sympy for symbolic n) gives, when x := C²/(nq) < 1,

    P[|R| > C] = P[R² > x E R²] ≥ (1 − x)² (nq)² / E R⁴ = (1 − x)² / (3 − 3/n + 1/(nq)),

so the error is at least (1 − x)²/(2(3 + 1/(nq))), which is ≥ 1/8 as soon as
(1 − x)² ≥ (3 + 1/(nq))/4; as nq → ∞ this is x ≤ 1 − √3/2 ≈ 0.134. Under Assumption 2,
q = poly(C)/D with poly(C) ≫ C² makes x → 0 and nq → ∞: the bound holds in the theorem's regime.
The checks below derive each step symbolically and compare the bound with the exact error on a
grid; a perturbed fourth moment (3n² q² dropped to n² q²) gives a "bound" the exact error
violates, which the same check catches.
"""

import itertools

import numpy as np
import sympy as sp

n, q, t = sp.symbols("n q t", positive=True)


def _moments():
    mgf = (1 - q + q * sp.cosh(t)) ** n
    m2 = sp.simplify(sp.diff(mgf, t, 2).subs(t, 0))
    m4 = sp.simplify(sp.diff(mgf, t, 4).subs(t, 0))
    return m2, m4


def test_moments_of_R_for_symbolic_n_and_q():
    m2, m4 = _moments()
    assert sp.simplify(m2 - n * q) == 0
    assert sp.simplify(m4 - (n * q + 3 * n * (n - 1) * q**2)) == 0


def _exact_tail(n_val: int, C: int, qv: float) -> float:
    """P[|R| > C] exactly (the law of R by repeated convolution, float64)."""
    law = np.array([1.0])
    for _ in range(n_val):
        law = np.convolve(law, [qv / 2, 1 - qv, qv / 2])
    r = np.arange(-n_val, n_val + 1)
    return float(law[np.abs(r) > C].sum())


def _pz_bound(m4_formula):
    x = sp.symbols("x", positive=True)
    # P[R² > x·E R²] ≥ (1 − x)² (E R²)² / E R⁴ with E R² = nq
    return sp.lambdify((n, q, x), (1 - x) ** 2 * (n * q) ** 2 / m4_formula, "numpy")


def _violations(bound) -> int:
    bad = 0
    for n_val, C, qv in itertools.product((4, 16, 40, 400), (1, 2, 3, 5), (0.1, 0.3, 0.6, 0.9)):
        x = C**2 / (n_val * qv)
        if x >= 1:
            continue
        lo = float(bound(n_val, qv, x))
        # the exact tail is a finite sum of O(1) products: 1e-12 is rounding
        if lo > _exact_tail(n_val, C, qv) + 1e-12:
            bad += 1
    return bad


def test_paley_zygmund_bound_holds_and_a_wrong_fourth_moment_fails():
    _, m4 = _moments()
    assert _violations(_pz_bound(m4)) == 0
    wrong = n * q + n**2 * q**2  # the 3 of the Gaussian-like fourth moment dropped
    assert _violations(_pz_bound(wrong)) > 0


def test_error_at_least_one_eighth_in_the_theorem_regime():
    """(1 − x)²/(2(3 + 1/(nq))) ≥ 1/8 ⟺ (1 − x)² ≥ (3 + 1/(nq))/4; on q = C^k/D with k = 3
    (poly(C) ≫ C²) and D large, x → 0 and nq → ∞, so the bound tends to 1/6."""
    x, m = sp.symbols("x m", positive=True)  # m = nq
    err_lb = (1 - x) ** 2 / (2 * (3 + 1 / m))
    assert sp.limit(sp.limit(err_lb, x, 0), m, sp.oo) == sp.Rational(1, 6)
    # the exact threshold as m → ∞
    thr = sp.solve(sp.Eq((1 - x) ** 2, sp.Rational(3, 4)), x)
    assert min(thr, key=lambda v: float(v)) == 1 - sp.sqrt(3) / 2
    # the family q = C⁴/D: from C = 3 the bound is already ≥ 1/8, and the exact best-GLM
    # error, at least ½P[|R| > C], is above it; on q = C³/D with C = 3 (x = 1/3) the bound
    # is 0.073 < 1/8 (this argument needs C ≥ 8 there)
    for C, D, k, holds in ((3, 400, 4, True), (4, 400, 4, True), (3, 400, 3, False)):
        qv = C**k / D
        nv = D - C
        xv = C**2 / (nv * qv)
        lb = (1 - xv) ** 2 / (2 * (3 - 3 / nv + 1 / (nv * qv)))
        assert (lb >= 1 / 8) == holds
        assert 0.5 * _exact_tail(nv, C, qv) >= lb - 1e-12


def test_best_glm_error_is_half_the_two_sided_tail():
    """P[R < −C] + ½P[R = −C] = ½P[|R| > C] + ¼P[|R| = C] by the symmetry of R (exact,
    symbolic q)."""
    qs = sp.symbols("q", positive=True)
    p = {-1: qs / 2, 0: 1 - qs, 1: qs / 2}
    for n_val, C in ((4, 2), (5, 2), (5, 3)):
        lhs = rhs = 0
        for d in itertools.product((-1, 0, 1), repeat=n_val):
            w = sp.Mul(*[p[v] for v in d])
            r = sum(d)
            lhs += w * (1 if r < -C else sp.Rational(1, 2) if r == -C else 0)
            rhs += w * (sp.Rational(1, 2) if abs(r) > C else sp.Rational(1, 4) if abs(r) == C
                        else 0)
        assert sp.expand(lhs - rhs) == 0
        # a perturbed variant (ties counted as errors) differs
        tie = sum(sp.Mul(*[p[v] for v in d]) for d in itertools.product((-1, 0, 1),
                                                                         repeat=n_val)
                  if sum(d) == -C)
        assert sp.expand(lhs + tie / 2 - rhs) != 0


def test_numeric_pz_bound_below_exact_error_on_a_grid():
    # a plain numpy restatement of the bound, against the exact error, on many more points
    rng = np.random.default_rng(0)
    for _ in range(50):
        nv = int(rng.integers(3, 60))
        qv = float(rng.uniform(0.05, 0.95))
        C = int(rng.integers(1, 4))
        x = C**2 / (nv * qv)
        if x >= 1:
            continue
        lb = (1 - x) ** 2 * (nv * qv) ** 2 / (nv * qv + 3 * nv * (nv - 1) * qv**2)
        assert lb <= _exact_tail(nv, C, qv) + 1e-12  # rounding of a finite sum
