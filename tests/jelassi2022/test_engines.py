"""Exact population engines against each other, Monte Carlo and the empirical engine."""

import numpy as np
import pytest
from scipy import stats

from tests._backends import CPU_BACKENDS, assert_close
from theorylab import get_backend, run_experiment, sample
from theorylab.jelassi2022.engines import (
    BruteForceEngine,
    EmpiricalEngine,
    ExchangeableEngine,
    MonteCarloEngine,
    choose_method,
)
from theorylab.jelassi2022.engines._exchangeable import histograms, n_histograms
from theorylab.jelassi2022.observables import symmetric_A

from ._helpers import fig4_config, parts, small_config


def _pair(cfg):
    p, w = parts(cfg)
    xp = get_backend()
    return BruteForceEngine(cfg, xp, p, w), ExchangeableEngine(cfg, xp, p, w), p


@pytest.mark.parametrize(
    "D,C,act,q", [(6, 2, "cubic", 0.4), (8, 2, "quintic", 0.7), (8, 4, [0.0, 1.0, 0.5, 0.2], 0.3),
                  (9, 3, "cubic", 1.0), (6, 3, "quintic", 0.0)]
)
def test_brute_equals_exchangeable_on_random_symmetric_states(D, C, act, q):
    cfg = small_config(D=D, C=C, q=q, model=dict(activation=act, temperature=1.3,
                                                 value_scale=0.9, diag=0.4))
    brute, exch, p = _pair(cfg)
    rng = np.random.default_rng(D * 10 + C)
    for _ in range(4):
        gamma, rho, alpha = rng.normal(0, 1.5, 3)
        eb = brute.evaluate({"A": symmetric_A(D, p, cfg.diag, gamma, rho), "alpha": alpha}, 0,
                            need_grad=True, record=True)
        ee = exch.evaluate({"gamma": gamma, "rho": rho, "alpha": alpha}, 0,
                           need_grad=True, record=True)
        # both are exact sums of O(10⁴) terms in float64: 1e-12 leaves 3 orders of margin
        assert ee.loss == pytest.approx(eb.loss, rel=1e-12, abs=1e-14)
        assert ee.error == pytest.approx(eb.error, abs=1e-12)
        assert ee.tie_mass == pytest.approx(eb.tie_mass, abs=1e-12)
        gA, gv = exch.full_gradient(ee.grads)
        np.testing.assert_allclose(gA, brute.xp.to_numpy(eb.grads["A"]), rtol=1e-10, atol=1e-13)
        assert ee.grads["alpha"] == pytest.approx(eb.grads["alpha"], rel=1e-10, abs=1e-13)


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_exchangeable_chunks_and_host_table_change_nothing(backend, monkeypatch):
    """The group-by-t layout: small chunks (blocks of equal t cut across chunks, the same t
    scattered from several chunks) and a table kept on the host (copied chunk by chunk, the
    path taken when it does not fit the device) give the one-chunk result."""
    base = dict(D=12, C=3, q=0.4, method="exchangeable", backend=backend)
    cfg_one = small_config(**base)
    p, w = parts(cfg_one)
    xp = get_backend(backend)
    params = {"gamma": 0.7, "rho": -0.2, "alpha": 0.9}
    ref = ExchangeableEngine(cfg_one, xp, p, w).evaluate(params, 0, need_grad=True, record=True)
    small = ExchangeableEngine(small_config(**base, chunk_size=7), xp, p, w)
    assert len(small.chunks) > 10
    monkeypatch.setattr(type(xp), "free_bytes", lambda self: 1000)  # the table cannot fit
    host = ExchangeableEngine(small_config(**base, chunk_size=50), xp, p, w)
    assert not host._M_on_device
    for eng in (small, host):
        ev = eng.evaluate(params, 0, need_grad=True, record=True)
        # the same float64 terms summed in another order: 1e-13 relative is ~500 ulps of margin
        assert ev.loss == pytest.approx(ref.loss, rel=1e-13)
        assert ev.error == pytest.approx(ref.error, abs=1e-14)
        for k in ("alpha", "gamma", "rho"):
            assert ev.grads[k] == pytest.approx(ref.grads[k], rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("C,L,q", [(2, 9, 0.3), (3, 6, 1.0), (4, 5, 0.2), (2, 4, 0.0)])
def test_sorted_table_is_the_stable_sort_of_all_histograms(C, L, q, monkeypatch):
    """The exchangeable engine's two-pass counting sort (blocks of ≤ 7 rows here) builds the
    same table, row for row, as sorting histograms() stably by t; weights likewise."""
    from scipy import special

    import theorylab.jelassi2022.engines._exchangeable as ex

    monkeypatch.setattr(ex, "_BLOCK_ROWS", 7)
    pats = ex.count_patterns(C)
    logp = (special.gammaln(C + 1) - special.gammaln(pats + 1).sum(axis=1)
            + special.xlogy(pats[:, 0] + pats[:, 2], q / 2) + special.xlogy(pats[:, 1], 1 - q))
    live = np.flatnonzero(np.isfinite(logp))
    s = pats[:, 0] - pats[:, 2]
    table, logw, counts, t_min = ex._sorted_table(L, pats.shape[0], live, s, logp, np.int8)
    m = ex.histograms(L - 1, live.size).astype(np.int64)
    t = m @ s[live]
    order = np.argsort(t, kind="stable")
    want = np.zeros((m.shape[0], pats.shape[0] + 1), dtype=np.int64)
    want[:, live] = m
    want[:, -1] = 1
    np.testing.assert_array_equal(table, want[order])
    log_fact = special.gammaln(np.arange(L) + 1.0)
    want_w = log_fact[L - 1] - log_fact[m].sum(axis=1) + (m * logp[live]).sum(axis=1)
    np.testing.assert_array_equal(logw, want_w[order])  # row-wise sums: block size is invisible
    assert t_min == t.min() and counts.sum() == m.shape[0]
    np.testing.assert_array_equal(counts, np.bincount(t - t.min()))
    assert len(list(ex._prefix_blocks(L - 1, live.size))) > 1 or m.shape[0] <= 7


def test_exchangeable_trajectory_equals_full_matrix_gd():
    """Whole trajectories: exchangeable (α, γ, ρ) GD = brute-force GD on the full D×D matrix."""
    runs = [
        run_experiment(small_config(D=8, C=2, q=0.5, method=m, steps=400, lr_v=0.5, alpha0=0.5,
                                    record="linear", n_records=41))
        for m in ("brute", "exchangeable")
    ]
    last = runs[1].trajectory.iloc[-1]
    assert last["gamma"] - last["rho"] > 0.05  # A moves
    a, b = (r.trajectory for r in runs)
    cols = ["loss", "error", "alpha", "gamma", "rho"]
    np.testing.assert_allclose(a[cols], b[cols], rtol=1e-9, atol=1e-13)
    assert a["sym_dev"].max() < 1e-13  # brute force keeps the symmetry (Lemmas 4.1–4.2)
    np.testing.assert_allclose(runs[0].A, runs[1].A, rtol=1e-9, atol=1e-13)


def test_histogram_enumeration():
    M = histograms(5, 4)
    assert M.shape == (n_histograms(5, 4), 4) and np.all(M.sum(1) == 5)
    assert len({tuple(r) for r in M}) == M.shape[0]


def test_monte_carlo_within_four_standard_errors():
    cfg = small_config(D=8, C=2, q=0.5, init_v="aligned", alpha0=0.8, mc_samples=40_000,
                       mc_resample=False, seed=1)
    brute, _, p = _pair(cfg)
    mc = MonteCarloEngine(cfg, get_backend(), p, brute.wstar)
    rng = np.random.default_rng(0)
    A = cfg.diag * np.eye(8) + 0.3 * rng.standard_normal((8, 8))
    exact = brute.evaluate({"A": A, "alpha": 0.8}, 0, need_grad=False, record=True)
    est = mc.evaluate({"A": A, "v": 0.8 * brute.wstar}, 0, need_grad=False, record=True)
    assert abs(est.loss - exact.loss) < 4 * est.loss_se
    assert abs(est.error - exact.error) < 4 * est.error_se


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_monte_carlo_aligned_shortcut_equals_full_gradient(backend):
    """For v = α·w* the Monte Carlo engine skips the noise and the dU product and takes
    ∂L/∂α = ⟨S, ∂L/∂S⟩/α. On the same fixed draws, the general formula Σ_nj dU_nj c_nj (with
    dU formed) gives the same ∂L/∂α, and the same loss and ∂L/∂A."""
    from theorylab.jelassi2022.model import evaluate_projections

    cfg = small_config(D=8, C=2, q=0.5, mc_samples=5_000, mc_resample=False, seed=3,
                       backend=backend, chunk_size=1_000)
    p, w = parts(cfg)
    mc = MonteCarloEngine(cfg, get_backend(backend), p, w)
    xp = mc.xp
    rng = np.random.default_rng(1)
    A = xp.asarray(cfg.diag * np.eye(8) + 0.3 * rng.standard_normal((8, 8)))
    alpha = 0.7
    fast = mc.evaluate({"A": A, "v": alpha * w}, 0, need_grad=True, record=True)
    S = mc.attention(A)
    loss = g_alpha = 0.0
    for c, y, _z in mc._fixed:  # the engine's draws, 5 chunks
        ev = evaluate_projections(alpha * c, y, 1.0 / mc.M, S, mc.model, xp)
        loss += xp.item(ev.loss)
        g_alpha += xp.item(xp.sum(ev.dU * c))
    # the same sums in another arrangement (⟨S, Gᵀc⟩ vs ⟨G·S, c⟩): rounding only, 1e-12
    assert fast.loss == pytest.approx(loss, rel=1e-13)
    assert fast.grads["v"] @ w == pytest.approx(g_alpha, rel=1e-12)
    np.testing.assert_allclose(fast.grads["v"], (fast.grads["v"] @ w) * w, atol=1e-15)


def test_auto_method():
    assert choose_method(fig4_config(), parts(fig4_config())[0]) == "exchangeable"
    cfg = fig4_config(offdiag0_std=0.01)
    assert choose_method(cfg, parts(cfg)[0]) == "brute"
    cfg = fig4_config(init_v="gaussian")
    assert choose_method(cfg, parts(cfg)[0]) == "montecarlo"
    with pytest.raises(ValueError, match="^train.method"):
        cfg = fig4_config(method="exchangeable", init_v="gaussian")
        ExchangeableEngine(cfg, get_backend(), *parts(cfg)).initial_params()


def test_empirical_gradient_converges_at_rate_one_half():
    """‖∇L̂_N − ∇L‖ = O(N^{-1/2}): log-log slope −1/2 ± 0.1 (diffrax-style order test)."""
    cfg = small_config(D=6, C=2, d=4, q=0.5, seed=2, engine="empirical")
    brute, _, p = _pair(cfg)
    rng = np.random.default_rng(5)
    A = cfg.diag * np.eye(6) + 0.5 * rng.standard_normal((6, 6))
    alpha = 0.7
    pop = brute.evaluate({"A": A, "alpha": alpha}, 0, need_grad=True, record=False).grads
    g_pop = np.concatenate([pop["A"].ravel(), pop["alpha"] * brute.wstar])
    Ns = [250, 1000, 4000, 16000]
    errs = []
    for N in Ns:
        e = []
        for s in range(12):  # average over 12 data sets: the mean error ∝ N^{-1/2}
            data = sample(cfg.data, N, 100 * N + s, partition=p, wstar=brute.wstar)
            emp = EmpiricalEngine(cfg, get_backend(), p, brute.wstar, train=data, test=data)
            g = emp.evaluate({"A": A, "v": alpha * brute.wstar}, 0, need_grad=True,
                             record=False).grads
            e.append(np.linalg.norm(np.concatenate([g["A"].ravel(), g["v"]]) - g_pop))
        errs.append(np.mean(e))
    slope = stats.linregress(np.log(Ns), np.log(errs)).slope
    assert slope == pytest.approx(-0.5, abs=0.1)


def test_numpy_and_torch_engines_agree():
    """Same data, same steps: numpy and torch (CPU) trajectories agree to rounding
    (``tests._backends.TOL``)."""
    out = []
    for backend in ("numpy", "torch"):
        cfg = small_config(D=6, C=2, d=5, engine="empirical", n_train=300, n_test=200,
                           steps=20, lr_v=0.5, init_v="gaussian", v0_scale=0.3,
                           offdiag0_std=0.1, record="all", backend=backend)
        out.append(run_experiment(cfg))
    cols = ["loss", "train_loss", "alpha", "gamma", "rho"]
    assert_close(out[1].trajectory[cols], out[0].trajectory[cols])
    for backend in ("numpy", "torch"):
        out.append(run_experiment(fig4_config(steps=50, backend=backend, record="all")))
    assert_close(out[3].trajectory[cols[:1] + cols[2:]], out[2].trajectory[cols[:1] + cols[2:]])


def test_digest_section_9_three_phases():
    """Digest §9 (independent exact computation): cubic σ, τ = κ = 1, a0 = ln ln d, lr 0.1."""
    r = run_experiment(fig4_config(steps=20000, lr_v=0.1, record="linear", n_records=21))
    t = r.trajectory.set_index("step")
    assert t.loc[1000, "alpha"] == pytest.approx(0.0325, abs=5e-4)  # phase I: A static
    assert abs(t.loc[1000, "gamma"]) < 1e-4 and abs(t.loc[1000, "rho"]) < 1e-4
    assert t.loc[1000, "loss"] == pytest.approx(0.6931, abs=5e-5)
    expect = {2000: (1.858, 0.098, -0.023, 0.3569), 10000: (1.436, 2.126, -0.596, 0.2571),
              20000: (1.359, 2.024, -1.152, 0.2318)}
    for step, (alpha, gamma, rho, loss) in expect.items():  # digest gives 3–4 digits
        assert t.loc[step, "alpha"] == pytest.approx(alpha, abs=6e-4)
        assert t.loc[step, "gamma"] == pytest.approx(gamma, abs=6e-4)
        assert t.loc[step, "rho"] == pytest.approx(rho, abs=6e-4)
        assert t.loc[step, "loss"] == pytest.approx(loss, abs=6e-5)
    # literal Definition 2.2 holds from the first step (γ > ρ by a rounding-level margin), the
    # margin pa_margin = 1e-3 only once A has moved (phase I ends between 1000 and 2000)
    assert (t.loc[1:, "pa_gap"] > 0).all()
    assert not t.loc[1000, "patch_association"] and t.loc[1000, "pa_gap"] < 1e-3
    assert t.loc[2000:, "patch_association"].all()


def test_digest_section_9_literal_and_uniform():
    """Literal (T): α saturates at 0.2563, loss 0.3790; a0 = 0: A never moves, α → 0.2567."""
    lit = run_experiment(fig4_config(model=dict(activation="cubic"), steps=12, lr_v=0.05,
                                     record="all")).trajectory
    assert lit["alpha"].iloc[-1] == pytest.approx(0.2563, abs=1e-4)
    assert lit["loss"].iloc[-1] == pytest.approx(0.3790, abs=1e-4)
    uni = run_experiment(fig4_config(model=dict(activation="cubic", diag=0.0), steps=12,
                                     lr_v=0.05, record="all")).trajectory
    assert uni["alpha"].iloc[-1] == pytest.approx(0.2567, abs=1e-4)
    assert uni["loss"].iloc[-1] == pytest.approx(0.3793, abs=1e-4)
    assert np.abs(uni[["gamma", "rho"]].to_numpy()).max() < 1e-15  # gradient in A ≡ 0
    # exact error of the GLM = P[C + Σδ ≤ 0] = 0.217073 (ties F = 0 count as errors)
    assert uni["error"].iloc[-1] == pytest.approx(0.2170730422, abs=1e-9)


def test_sym_dev_sees_a_broken_symmetry():
    """sym_dev is not vacuous: one entry moved by ε off a partition-symmetric A gives a
    deviation of ε(1 − 1/n) (n = entries of its class, which share the move in the mean)."""
    from theorylab.jelassi2022.observables import sym_dev, symmetric_A
    from theorylab.jelassi2022.partition import Partition

    part = Partition(((0, 1), (2, 3), (4, 5)))
    A = symmetric_A(6, part, 1.5, 0.3, -0.2)
    assert sym_dev(A, part) < 1e-16  # the class means are exact up to one rounding
    A[0, 2] += 1e-6  # a cross-set entry: 24 of them
    assert sym_dev(A, part) == pytest.approx(1e-6 * (1 - 1 / 24), rel=1e-9)


def test_empirical_v_gradient_is_parallel_to_wstar_in_the_population_limit():
    """v ∥ w* (Lemmas 4.1–4.2) on the engine that stores v ∈ ℝ^d: at v = α·w* the empirical
    v-gradient has a part orthogonal to w* that is an average of N zero-mean noise terms, so
    it shrinks like N^{-1/2} (CLT): 100× the samples, ~10× smaller. The norm over d − 1 = 35
    directions fluctuates by ~12% (chi with 35 degrees of freedom), so [6, 16] is wide enough
    for any seed and excludes a spurious orthogonal part (ratio ≈ 1)."""
    cfg = small_config(D=6, C=2, q=0.4, d=36, engine="empirical", steps=1)
    brute, _, p = _pair(cfg)
    w = brute.wstar
    A = brute.initial_A()
    A[0, 1] += 0.3  # a generic attention
    ratios = []
    for N in (500, 50_000):
        data = sample(cfg.data, N, 7, partition=p, wstar=w)
        emp = EmpiricalEngine(cfg, get_backend(), p, w, train=data, test=data)
        g = np.asarray(emp.evaluate({"A": A, "v": 0.8 * w}, 0, need_grad=True,
                                    record=False).grads["v"])
        ratios.append(np.linalg.norm(g - (g @ w) * w) / abs(g @ w))
    assert 6 < ratios[0] / ratios[1] < 16


def test_fair_error_of_the_glm_phase_is_the_best_glm_error():
    """Like with like: at the reference start (P[F = 0] = 0.12) the exact engine's error with
    ties as errors is P[T ≤ 0] and its fair-coin error is the best GLM's P[T < 0] + ½P[T = 0],
    both computed independently by convolution (claims.thm31). Two GD steps later γ − ρ ≈ 7e-10:
    that rounding-level asymmetry must not decide the ties (it did with tie_tol = 1e-12:
    error 0.2171 → 0.1414), and the literal patch-association order holds while the margin
    version does not. Tolerance 1e-12: both sides are sums of the same ~10³ probabilities."""
    import math

    from theorylab.jelassi2022.claims.thm31 import glm_exact_errors

    glm = glm_exact_errors(10, 2, math.log(100) / 10)
    t = run_experiment(fig4_config(steps=2, lr_v=0.1, record="all")).trajectory
    for _, row in t.iterrows():
        assert row.error == pytest.approx(glm["err_uniform"], abs=1e-12)
        assert row.error_fair == pytest.approx(glm["err_best_glm"], abs=1e-12)
        assert row.error_fair == pytest.approx(row.error - row.tie_mass / 2, abs=1e-15)
    last = t.iloc[-1]
    assert 0 < last.gamma - last.rho < 1e-9
    assert last.pa_gap > 0 and not last.patch_association
