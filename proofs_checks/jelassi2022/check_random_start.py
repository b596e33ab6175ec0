"""The random-start derivations used by theorylab.jelassi2022.predictions.random_start and by the
reduced engine (engines/_reduced.py), each checked symbolically.

1. The Gaussian moments of the small-output gradient: with z_i = κ(αN_i + εG_i) (ε = σβ,
   G Gaussian with Var(G_i) = Q_d), σ = h³ and ℓ'(yF) = −½:
   E[y Σ_i σ'(z_i) κ N_i] = 3κ³ (α² E[yΣN³] + ε² Q_d E[yΣN]) and
   E[y Σ_i σ'(z_i) κ G_i] = 6κ³ α ε Q_d E[yΣN] — the drifts dα/dt = h(α² + εβ²) and
   dβ/dt = 2hεαβ of the module (with E[yΣ_i N_i] = C).
2. The flow dα/dt = h(α² + b²) is solved by α = b·tan(hbt + arctan(α⁰/b)); a solution without
   the b² term does not solve it.
3. The fixed-step correction ½ ln(f(θ)/f(α⁰)) of Euler's method for x' = f(x): on the map
   x_{n+1} = x_n + h(x_n² + b²) the step count minus the flow time minus the correction stays
   bounded as the start approaches the flow's slowest point, and without the correction it
   drifts.
4. The second-order expansion of the reduced risk in the noise: for f(ε) = ℓ(F(z + εG)),
   E_g f''(0) = ℓ''(F)·Σ_ik F_i F_k Q_ik + ℓ'(F)·Σ_i F_ii Q_ii (F separable: F = Σ_i σ(z_i)),
   checked with symbolic ℓ, a cubic σ and a symbolic covariance of two Gaussians.
"""

import math

import sympy as sp


def _gauss_expect(expr, g, cov):
    """E over a centred Gaussian vector g with covariance `cov` of a polynomial in g (Isserlis:
    odd moments vanish, even ones from the covariance), up to degree 4."""
    poly = sp.Poly(sp.expand(expr), *g)
    out = 0
    for monom, coef in poly.terms():
        idx = [i for i, k in enumerate(monom) for _ in range(k)]
        if len(idx) % 2:
            continue
        if not idx:
            out += coef
        elif len(idx) == 2:
            out += coef * cov[idx[0]][idx[1]]
        elif len(idx) == 4:
            a, b, c, d = idx
            out += coef * (cov[a][b] * cov[c][d] + cov[a][c] * cov[b][d] + cov[a][d] * cov[b][c])
        else:
            raise ValueError("degree above 4")
    return sp.expand(out)


def test_small_output_drifts_of_alpha_and_beta():
    al, eps, k = sp.symbols("alpha epsilon kappa", positive=True)
    N1, N2, Qd, r = sp.symbols("N1 N2 Q_d r", real=True)
    g = sp.symbols("g1 g2", real=True)
    cov = [[Qd, r], [r, Qd]]
    N = (N1, N2)
    z = [k * (al * N[i] + eps * g[i]) for i in range(2)]
    d_alpha = sum(3 * z[i] ** 2 * k * N[i] for i in range(2))
    d_beta = sum(3 * z[i] ** 2 * k * g[i] for i in range(2))
    ea = _gauss_expect(d_alpha, g, cov)
    eb = _gauss_expect(d_beta, g, cov)
    want_a = 3 * k**3 * (al**2 * (N1**3 + N2**3) + eps**2 * Qd * (N1 + N2))
    want_b = 6 * k**3 * al * eps * Qd * (N1 + N2)
    assert sp.expand(ea - want_a) == 0
    assert sp.expand(eb - want_b) == 0
    # without the noise the α-drift has no ε² term: a reduction that drops β misses it
    assert sp.expand(ea - 3 * k**3 * al**2 * (N1**3 + N2**3)) != 0


def test_tan_solution_of_the_escape_flow():
    t, h, b, a0 = sp.symbols("t h b alpha0", positive=True)
    alpha = b * sp.tan(h * b * t + sp.atan(a0 / b))
    assert sp.simplify(sp.diff(alpha, t) - h * (alpha**2 + b**2)) == 0
    assert sp.simplify(alpha.subs(t, 0) - a0) == 0
    blow = (sp.pi / 2 - sp.atan(a0 / b)) / (h * b)
    assert sp.simplify(h * b * blow + sp.atan(a0 / b) - sp.pi / 2) == 0
    wrong = a0 / (1 - h * a0 * t)  # the aligned solution: misses the b² drift
    assert sp.simplify(sp.diff(wrong, t) - h * (wrong**2 + b**2)) != 0


def test_fixed_step_correction_of_the_escape_flow():
    hv, b, theta = 0.4, 0.05, 1.0

    def f(x):
        return hv * (x * x + b * b)

    def flow(x0):
        return (math.atan(theta / b) - math.atan(x0 / b)) / (hv * b)

    def steps(x0):
        x, n = x0, 0
        while x + f(x) < theta:
            x, n = x + f(x), n + 1
        return n + (theta - x) / f(x)  # the last, fractional step

    with_c = [steps(x0) - flow(x0) - 0.5 * math.log(f(theta) / f(x0))
              for x0 in (-0.2, -0.05, 0.0, 0.05)]
    without = [steps(x0) - flow(x0) for x0 in (-0.2, -0.05, 0.0, 0.05)]
    assert max(abs(x) for x in with_c) < 1.5
    assert max(abs(x) for x in without) > 3 * max(abs(x) for x in with_c)


def test_second_order_noise_expansion():
    eps = sp.symbols("epsilon", real=True)
    z1, z2, Qd, r = sp.symbols("z1 z2 Q_d r", real=True)
    g = sp.symbols("g1 g2", real=True)
    ell = sp.Function("ell")
    F = (z1 + eps * g[0]) ** 3 + (z2 + eps * g[1]) ** 3
    f = ell(F)
    d2 = sp.diff(f, eps, 2).subs(eps, 0)
    # expand ℓ'' and ℓ' as symbols so that the Gaussian expectation acts on polynomials
    l1, l2 = sp.symbols("l1 l2")
    d2 = d2.replace(lambda e: isinstance(e, sp.Subs) and e.expr.args[1][1] == 2, lambda e: l2)
    d2 = d2.replace(lambda e: isinstance(e, sp.Subs), lambda e: l1)
    d2 = d2.replace(lambda e: isinstance(e, sp.Derivative) and e.derivative_count == 2,
                    lambda e: l2)
    d2 = d2.replace(lambda e: isinstance(e, sp.Derivative), lambda e: l1)
    cov = [[Qd, r], [r, Qd]]
    got = _gauss_expect(d2, g, cov)
    s1, s2 = 3 * z1**2, 3 * z2**2  # σ'(z_i)
    S2 = s1 * s1 * Qd + s2 * s2 * Qd + 2 * s1 * s2 * r
    want = l2 * S2 + l1 * Qd * (6 * z1 + 6 * z2)
    assert sp.expand(got - want) == 0
    # dropping the cross covariance (Σ_i σ'(z_i)² Q_ii only) is rejected
    assert sp.expand(got - (l2 * (s1 * s1 + s2 * s2) * Qd + l1 * Qd * (6 * z1 + 6 * z2))) != 0
