"""Huang et al. (2025), reconstructed model (docs/papers/huang2024.md §2.3, DERIVED): gradient
descent on the full attention matrix Q equals gradient descent on the coordinates
Φ = EᵀQV, Υ = EᵀQE, i.e. ∂ℓ/∂Q = E (∂ℓ/∂Φ) Vᵀ + E (∂ℓ/∂Υ) Eᵀ, and the blocks VᵀQ· of Q get
no gradient from a masked query.

Small symbolic instance: P = 3 patches, one cluster with areas {0, 1} and {2}, features and
positions the columns of an exact rational orthogonal matrix (plane rotations), a masked
query p = 0 with patch 1 masked too, masked keys in the softmax. Sympy differentiates the loss
written in the embedding space (logits e_pᵀ Q (x̃_q + e_q), output and target as d-vectors) and
the loss written in (Φ, Υ); the two gradients are compared at rational points to 40 digits.
"""

from functools import lru_cache

import mpmath
import sympy as sp

P, F = 3, 2
D = P + F
LAB = [0, 0, 1]  # area of each patch
MASKED = [True, True, False]
QUERY = 0


def _orthogonal():
    """An exact rational orthogonal D×D matrix: three plane rotations with Pythagorean cosines
    that mix positional and feature directions."""
    B = sp.eye(D)
    for (i, j), (c, s_) in (((0, 3), (3, 5)), ((2, 4), (5, 13)), ((1, 2), (8, 17))):
        n = {5: 4, 13: 12, 17: 15}[s_]
        R = sp.eye(D)
        R[i, i] = R[j, j] = sp.Rational(c, s_)
        R[i, j], R[j, i] = -sp.Rational(n, s_), sp.Rational(n, s_)
        B = R * B
    assert B.T * B == sp.eye(D)
    return B


def _loss_full(Q, E, V, z):
    """½‖F_p − x_p‖² from the full matrix Q (embedding space)."""
    x = [z[LAB[q]] * V[:, LAB[q]] for q in range(P)]
    xt = [sp.zeros(D, 1) if MASKED[q] else x[q] for q in range(P)]
    logits = [(E[:, QUERY].T * Q * (xt[q] + E[:, q]))[0, 0] for q in range(P)]
    w = [sp.exp(v) for v in logits]
    Z = sum(w)
    out = sum((w[q] / Z * xt[q] for q in range(P)), sp.zeros(D, 1))
    r = out - x[QUERY]
    return (r.T * r)[0, 0] / 2


def _loss_reduced(Phi, Ups, z):
    """The same loss in the coordinates (Φ, Υ) of the query row (model.py's formula)."""
    logits = [Ups[q] + (0 if MASKED[q] else z[LAB[q]] * Phi[LAB[q]]) for q in range(P)]
    w = [sp.exp(v) for v in logits]
    Z = sum(w)
    s = [sum(w[q] for q in range(P) if LAB[q] == m and not MASKED[q]) / Z for m in range(F)]
    j = LAB[QUERY]
    return sum((z[m] * s[m] - (z[j] if m == j else 0)) ** 2 for m in range(F)) / 2


@lru_cache(maxsize=1)
def _symbolic():
    """(Q symbols, E, V, ∂ℓ/∂Q, (Φ, Υ) symbols, ∂ℓ/∂Φ, ∂ℓ/∂Υ), lambdified for mpmath."""
    B = _orthogonal()
    E, V = B[:, :P], B[:, P:]
    Qs = sp.Matrix(D, D, lambda i, j: sp.Symbol(f"q{i}_{j}"))
    z = [sp.Rational(3, 4), sp.Rational(5, 4)]
    Lf = _loss_full(Qs, E, V, z)
    gQ = sp.lambdify(list(Qs), Qs.applyfunc(lambda q: sp.diff(Lf, q)), "mpmath")
    red = sp.symbols("phi0:2") + sp.symbols("ups0:3")
    Lr = _loss_reduced(red[:F], red[F:], z)
    gR = sp.lambdify(red, sp.Matrix([[sp.diff(Lr, v) for v in red]]), "mpmath")
    return E, V, gQ, gR


def _gradients(point_seed, perturb=False):
    """(∂ℓ/∂Q from the full loss, the chain rule from the reduced loss, V) at a rational Q,
    as 50-digit mpmath matrices."""
    mpmath.mp.dps = 50
    E, V, gQ_f, gR_f = _symbolic()
    Qv = sp.Matrix(D, D, lambda i, j: sp.Rational(((7 * i + 3 * j + point_seed) % 11) - 5, 4))
    gQ = mpmath.matrix(gQ_f(*[mpmath.mpf(sp.Rational(v).p) / v.q for v in Qv]))
    phi_v = E[:, QUERY].T * Qv * V
    ups_v = E[:, QUERY].T * Qv * E
    g = gR_f(*[mpmath.mpf(v.p) / v.q for v in list(phi_v) + list(ups_v)])
    gP, gU = sp.Matrix(1, F, list(g)[:F]), sp.Matrix(1, P, list(g)[F:])

    def mp(M):
        return mpmath.matrix([[mpmath.mpf(x.p) / x.q if isinstance(x, sp.Rational) else x
                               for x in M.row(i)] for i in range(M.rows)])

    e, Vm, Em = mp(E[:, QUERY]), mp(V), mp(E)
    gPm = mpmath.matrix([[x for x in gP]])
    gUm = mpmath.matrix([[x for x in gU]])
    chain = e * gPm * Vm.T + e * gUm * Em.T
    if perturb:  # a wrong chain rule: Φ read as VᵀQE (the transposed block)
        chain = Vm * gPm.T * e.T + e * gUm * Em.T
    return gQ, chain, Vm


def _max(M):
    return max(abs(M[i, j]) for i in range(M.rows) for j in range(M.cols))


def test_full_q_gradient_equals_reduced_chain_rule():
    for seed in (0, 5):
        gQ, chain, V = _gradients(seed)
        assert _max(gQ - chain) < mpmath.mpf("1e-40")  # equal up to 50-digit rounding
        # blocks VᵀQ· (rows in the feature directions) get no gradient from a masked query
        assert _max(V.T * gQ) < mpmath.mpf("1e-40")
        assert _max(gQ) > mpmath.mpf("1e-5")  # not trivially zero


def test_a_wrong_chain_rule_fails():
    gQ, chain, _ = _gradients(0, perturb=True)
    assert _max(gQ - chain) > mpmath.mpf("1e-5")
