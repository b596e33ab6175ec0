"""Expansions of the cubic and quintic activations used in the phase analysis (notes §2.4,
§4.7): σ(z) with z = κα[(S_a − S_g)c_i + (S_g − S_r)s_ℓ + S_r T]; near uniform attention
(γ = ρ) the pre-activation is a GLM in T plus a patch term, and F is a polynomial in α of
degree 3 (cubic) or 5 (+ linear, quintic)."""

import numpy as np
import sympy as sp

from theorylab.jelassi2022.activation import Activation


def test_cubic_quintic_polynomials():
    h = sp.symbols("h")
    for name, poly in (("cubic", h**3), ("quintic", h**5 + sp.Rational(3, 100) * h)):
        act = Activation.from_spec(name)
        got = sum(sp.nsimplify(c) * h**k for k, c in enumerate(act.coeffs))
        assert sp.expand(got - poly) == 0
        dact = act.derivative()
        dgot = sum(sp.nsimplify(c) * h**k for k, c in enumerate(dact.coeffs))
        assert sp.expand(dgot - sp.diff(poly, h)) == 0


def test_expansion_of_pre_activation_cube():
    k, al, Sa, Sg, Sr, c, s, T = sp.symbols("kappa alpha S_a S_g S_r c s T")
    z = k * al * (Sa * c + Sg * (s - c) + Sr * (T - s))
    z2 = k * al * ((Sa - Sg) * c + (Sg - Sr) * s + Sr * T)
    assert sp.expand(z - z2) == 0
    # uniform attention (S_a = S_g = S_r = 1/D): z = κα T/D, F = D σ(κ α T / D), a GLM in T
    D = sp.symbols("D", positive=True)
    zu = z.subs({Sa: 1 / D, Sg: 1 / D, Sr: 1 / D})
    assert sp.simplify(zu - k * al * T / D) == 0
    # cubic: F is α³ times a function of the configuration (sign independent of α > 0)
    assert sp.degree(sp.expand(z**3), al) == 3
    quint = sp.expand(z**5 + sp.Rational(3, 100) * z)
    assert sp.Poly(quint, al).monoms() == [(5,), (1,)]


def test_activation_numeric_matches():
    h = np.linspace(-2, 2, 9)
    np.testing.assert_allclose(Activation.from_spec("quintic")(h), h**5 + 0.03 * h, rtol=1e-15)
