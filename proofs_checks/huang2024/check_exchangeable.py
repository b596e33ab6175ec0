"""Huang et al. (2025), reconstructed model: the exchangeability that ``population-exact`` and
``population-laplace`` rest on (their module docstrings, DERIVED). When Υ[p, ·] is constant on
every atom minus {p}, the population gradient gives every key of an atom the same ∂L/∂Υ[p, q],
so gradient descent keeps the symmetry, and the loss depends on the mask only through the number
of unmasked keys per atom.

Small symbolic instance: P = 4, one cluster, areas {0, 1, 2} (global) and {3}; a masked query
p = 0; the other patches' masks enumerated with a symbolic γ and the coefficients over a
two-point law; masked keys in and out of the softmax. The gradient in Υ[p, 1] and Υ[p, 2] (two
keys of one atom) is compared at rational points to 40 digits; a state that breaks the symmetry
gives different gradients (the check can fail).
"""

import itertools
from functools import lru_cache

import mpmath
import sympy as sp

LAB = [0, 0, 0, 1]
P, N, QUERY = 4, 2, 0
ZLAW = ((sp.Rational(1, 2), sp.Rational(1, 2)), (sp.Rational(3, 2), sp.Rational(1, 2)))


@lru_cache(maxsize=2)
def _gradient(mask_keys: bool):
    g = sp.Symbol("gamma", positive=True)
    phi = sp.symbols("phi0:2", real=True)
    ups = sp.symbols("ups0:4", real=True)  # ups[QUERY] is the self key
    total = sp.Integer(0)
    others = [q for q in range(P) if q != QUERY]
    for bits in itertools.product((0, 1), repeat=len(others)):  # 1 = masked
        masked = dict(zip(others, bits))
        masked[QUERY] = 1
        pm = sp.Mul(*[g if b else 1 - g for b in bits])
        for zz in itertools.product(ZLAW, repeat=N):
            z = [v for v, _ in zz]
            pz = sp.Mul(*[w for _, w in zz])
            keys = [q for q in range(P) if mask_keys or not masked[q]]
            if not keys:
                continue
            logit = {q: ups[q] + (0 if masked[q] else z[LAB[q]] * phi[LAB[q]]) for q in keys}
            Z = sum(sp.exp(v) for v in logit.values())
            s = [sum(sp.exp(logit[q]) for q in keys if LAB[q] == m and not masked[q]) / Z
                 for m in range(N)]
            j = LAB[QUERY]
            loss = sum((z[m] * s[m] - (z[j] if m == j else 0)) ** 2 for m in range(N)) / 2
            total += pm * pz * loss
    args = (g, *phi, *ups)
    return [sp.lambdify(args, sp.diff(total, ups[q]), "mpmath") for q in (1, 2)]


def _grads(mask_keys, ups):
    mpmath.mp.dps = 50
    f1, f2 = _gradient(mask_keys)
    vals = [mpmath.mpf(2) / 5, mpmath.mpf("0.7"), mpmath.mpf("-1.3"), *ups]
    return f1(*vals), f2(*vals)


def test_symmetric_state_gives_equal_gradients_on_an_atom():
    for mk in (True, False):
        # Υ[p, p] = 0.4, Υ[p, 1] = Υ[p, 2] = −0.9 (the global atom), Υ[p, 3] = 1.1
        a, b = _grads(mk, [mpmath.mpf("0.4"), mpmath.mpf("-0.9"), mpmath.mpf("-0.9"),
                           mpmath.mpf("1.1")])
        assert abs(a - b) < mpmath.mpf("1e-40")  # equal up to 50-digit rounding
        assert abs(a) > mpmath.mpf("1e-4")  # and not trivially zero


def test_a_broken_symmetry_is_detected():
    a, b = _grads(True, [mpmath.mpf("0.4"), mpmath.mpf("-0.9"), mpmath.mpf("-0.2"),
                         mpmath.mpf("1.1")])
    assert abs(a - b) > mpmath.mpf("1e-4")
