"""Small dense problems are reduced in numpy (skdpgd._compute.small_problems): the numpy path
gives the kernels' numbers (to rounding) from the same random draws. (That a first small fit
compiles nothing is tested in test_first_fit.py.)"""

import numpy as np
import pytest

from skdpgd._compute import backends as _backends
from skdpgd._compute import kernels as _kernels
from skdpgd._compute import kernels_sgd as _kernels_sgd
from skdpgd._compute import small_problems as _small_problems
from skdpgd._compute.kernels import (
    LOSS_HINGE,
    LOSS_HUBER,
    LOSS_LOGISTIC,
    LOSS_MODIFIED_HUBER,
    LOSS_MULTINOMIAL,
    LOSS_POISSON,
    LOSS_SQUARED,
    LOSS_SQUARED_HINGE,
    LOSS_SQUARED_HINGE_OVR,
    LOSS_TWEEDIE,
)


def test_the_path_is_chosen_by_the_shape_only():
    limit = _small_problems.SMALL_PROBLEM_ENTRIES
    assert _small_problems.is_small(limit // 10, 10)
    assert not _small_problems.is_small(limit // 10 + 1, 10)
    X = np.zeros((limit // 10 + 1, 10))
    rows = _backends.DenseRows(X, np.ones(X.shape[0]), np.ones(X.shape[0]), True)
    assert not rows.small
    assert _backends.DenseRows(X[:-1], np.ones(X.shape[0] - 1), np.ones(X.shape[0] - 1), True).small


def _problem(n=203, d=7, k=1, seed=0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    X = (rng.standard_normal((n, d)) * 0.8).astype(dtype)
    if k == 1:
        y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    else:
        y = rng.integers(0, k, size=n).astype(np.float64)
    w = rng.random(n)
    w[::11] = 0.0
    coef = rng.standard_normal((k, d))
    intercept = rng.standard_normal(k)
    return X, y, w, coef, intercept


def _both(X, y, w, fit_intercept, monkeypatch):
    """The same rows on the numpy path and on the kernels."""
    monkeypatch.setattr(_small_problems, "SMALL_PROBLEM_ENTRIES", 10**12)
    small = _backends.DenseRows(X, y, w, fit_intercept)
    monkeypatch.setattr(_small_problems, "SMALL_PROBLEM_ENTRIES", 0)
    big = _backends.DenseRows(X, y, w, fit_intercept)
    assert small.small and not big.small
    for rows in (small, big):
        rows.clip_rows(1.3, 0.6)
    return small, big


def _close(a, b, tol=1e-12):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    assert a.shape == b.shape
    scale = max(1.0, float(np.max(np.abs(b))) if b.size else 1.0)
    np.testing.assert_allclose(a, b, rtol=0, atol=tol * scale)


#: the loss codes with several outputs
_MULTI_OUTPUT_LOSSES = [LOSS_MULTINOMIAL, LOSS_SQUARED_HINGE_OVR]
#: every one-output loss code of the kernels (a new one needs its numpy twin: it shows here)
_ONE_OUTPUT_LOSSES = sorted(
    v for k, v in vars(_kernels).items() if k.startswith("LOSS_") and v not in _MULTI_OUTPUT_LOSSES
)


def test_every_loss_code_is_compared():
    assert {
        LOSS_LOGISTIC,
        LOSS_SQUARED,
        LOSS_HINGE,
        LOSS_MODIFIED_HUBER,
        LOSS_SQUARED_HINGE,
        LOSS_HUBER,
        LOSS_POISSON,
        LOSS_TWEEDIE,
    } <= set(_ONE_OUTPUT_LOSSES)


def _param(loss):
    """The kernel's extra scalar: Tweedie's power (in [1, 2]), else Huber's threshold."""
    return 1.5 if loss == LOSS_TWEEDIE else 0.3


@pytest.mark.parametrize(
    "loss,k", [(loss, 1) for loss in _ONE_OUTPUT_LOSSES] + [(LOSS_SQUARED_HINGE_OVR, 3)]
)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_grad_sum_matches_the_kernel(loss, k, dtype, monkeypatch):
    X, y, w, coef, b = _problem(k=k, dtype=dtype)
    small, big = _both(X, y, w, True, monkeypatch)
    for clip in (0.05, 0.4, 100.0):
        gs, gis, bads = small.grad_sum(coef, b, loss, _param(loss), clip)
        gb, gib, badb = big.grad_sum(coef, b, loss, _param(loss), clip)
        _close(gs, gb)
        _close(gis, gib)
        assert bads == badb == 0


@pytest.mark.parametrize(
    "loss,k",
    [
        (LOSS_LOGISTIC, 1),
        (LOSS_SQUARED, 1),
        (LOSS_HUBER, 1),
        (LOSS_MULTINOMIAL, 3),
        (LOSS_SQUARED_HINGE_OVR, 3),
        (LOSS_SQUARED, 2),
    ],
)
def test_terms_that_are_not_finite_contribute_zero_and_are_counted(loss, k, monkeypatch):
    X, y, w, coef, b = _problem(k=k)
    if k == 1:
        y[[3, 10]] = np.nan  # a NaN derivative on two rows
        n_bad = 2
    elif loss == LOSS_MULTINOMIAL:
        coef[1, 0] = np.nan  # every margin of output 1 is NaN
        n_bad = X.shape[0]
    elif loss == LOSS_SQUARED_HINGE_OVR:
        # every margin of output 1 is NaN: its derivative is 0 there, as the binary squared
        # hinge's (capped derivatives are finite: no row to count)
        coef[1, 0] = np.nan
        n_bad = 0
    else:  # several outputs of a one-output loss: no derivative, every row counted
        n_bad = X.shape[0]
    small, big = _both(X, y, w, True, monkeypatch)
    got, want = small.grad_sum(coef, b, loss, 0.3, 0.5), big.grad_sum(coef, b, loss, 0.3, 0.5)
    _close(got[0], want[0])
    _close(got[1], want[1])
    assert got[2] == want[2] == n_bad
    assert np.all(np.isfinite(got[0]))
    if loss == LOSS_SQUARED_HINGE_OVR:
        assert np.all(got[0][1] == 0.0) and np.any(got[0][0] != 0.0)


@pytest.mark.parametrize("k", [1, 3])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_second_order_sums_match_the_kernels(k, fit_intercept, monkeypatch):
    X, y, w, coef, b = _problem(k=k)
    if k == 1:
        y = (y > 0).astype(float) * 2 - 1
    small, big = _both(X, y, w, fit_intercept, monkeypatch)
    loss = LOSS_LOGISTIC if k == 1 else LOSS_MULTINOMIAL
    gs = small.grad_sum(coef, b, loss, 0.0, 0.3)
    gb = big.grad_sum(coef, b, loss, 0.0, 0.3)
    for a, c in zip(gs[:2], gb[:2]):
        _close(a, c)
    assert gs[2] == gb[2] == 0
    for sample in (None, (12345, 0.4)):
        _close(
            small.hessian_sum(coef, b, loss, sample=sample),
            big.hessian_sum(coef, b, loss, sample=sample),
        )
    fs = small.grad_hessian_sum(coef, b, loss, 0.0, 0.3)
    fb = big.grad_hessian_sum(coef, b, loss, 0.0, 0.3)
    for a, c in zip(fs[:2] + fs[3:], fb[:2] + fb[3:]):
        _close(a, c)
    assert fs[2] == fb[2]
    H = fs[3]
    assert np.array_equal(H, H.T)


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_squared_loss_hessian_and_sufficient_statistics_match_the_kernels(
    fit_intercept, monkeypatch
):
    X, y, w, coef, b = _problem(dtype=np.float32)
    small, big = _both(X, y * 0.7, w, fit_intercept, monkeypatch)
    _close(small.hessian_sum(coef, b, LOSS_SQUARED), big.hessian_sum(coef, b, LOSS_SQUARED))
    (Ss, bs), (Sb, bb) = small.suff_stats(), big.suff_stats()
    _close(Ss, Sb)
    _close(bs, bb)
    assert np.array_equal(Ss, Ss.T)


@pytest.mark.parametrize(
    "n,q", [(1, 0.5), (50, 0.02), (400, 0.1), (300, 0.97), (30, 1.0), (2000, 0.5)]
)
def test_poisson_sample_takes_the_kernels_rows_and_draws(n, q):
    g1, g2 = np.random.default_rng(7), np.random.default_rng(7)
    out = np.empty(n, np.int64)
    log1mq = np.log1p(-q) if q < 1.0 else 0.0
    for _ in range(20):
        m = _kernels_sgd.poisson_sample(n, q, g1, out)
        rows = _small_problems.poisson_sample(n, q, g2, log1mq)
        assert np.array_equal(rows, out[:m])
        assert g1.bit_generator.state == g2.bit_generator.state


def _sgd(sgd_dense, X, y, w, k, loss, fit_intercept, momentum, std, q, gen):
    n, d = X.shape
    scale, aug = _kernels.row_clip_factors(X, 1.0, fit_intercept)
    T = 60
    state = _kernels_sgd.sgd_state(k, d)
    common = (
        loss,
        0.4,
        0.7,
        fit_intercept,
        1e-3,
        q,
        q * n,
        np.full(T, 0.5),
        np.linspace(std, std / 3, T),
        momentum,
        1e6,
    )
    bad = sgd_dense(X, y, w, scale, aug, *common, state, 0, 25, 30, gen)
    bad2 = sgd_dense(X, y, w, scale, aug, *common, state, 25, T, 30, gen)
    return bad, bad2, state


_BOTH_SGD = (_small_problems.sgd_dense, _kernels_sgd.sgd_dense)


@pytest.mark.parametrize(
    "loss,k",
    [
        (LOSS_LOGISTIC, 1),
        (LOSS_HUBER, 1),
        (LOSS_HINGE, 1),
        (LOSS_POISSON, 1),
        (LOSS_MULTINOMIAL, 3),
    ],
)
@pytest.mark.parametrize(
    "fit_intercept,momentum,std,q",
    [(True, 0.0, 0.5, 0.1), (False, 0.9, 0.5, 0.3), (True, 0.5, 0.0, 1.0)],
)
def test_sgd_run_matches_the_kernel_from_the_same_draws(loss, k, fit_intercept, momentum, std, q):
    X, y, w, _, _ = _problem(n=150, d=6, k=k, dtype=np.float32)
    if loss == LOSS_POISSON:
        y = np.abs(y) * 2.0
    runs = []
    for sgd_dense in _BOTH_SGD:
        gen = np.random.default_rng(3)
        runs.append(
            _sgd(sgd_dense, X, y, w, k, loss, fit_intercept, momentum, std, q, gen)
            + (gen.bit_generator.state,)
        )
    (a1, a2, sa, ga), (b1, b2, sb, gb) = runs
    assert (a1, a2) == (b1, b2) == (-1, -1)
    assert ga == gb  # the same number of draws: later releases draw the same noise
    for u, v in zip(sa, sb):
        _close(u, v, 1e-11)
    if std > 0:
        assert np.any(sa[0] != 0)


def test_sgd_divergence_is_found_at_the_same_step():
    X, y, w, _, _ = _problem(n=120, d=5)
    steps = []
    for sgd_dense in _BOTH_SGD:
        scale, aug = _kernels.row_clip_factors(X, 1.0, True)
        state = _kernels_sgd.sgd_state(1, 5)
        steps.append(
            sgd_dense(
                X,
                y,
                w,
                scale,
                aug,
                LOSS_LOGISTIC,
                0.0,
                1.0,
                True,
                0.0,
                0.5,
                60.0,
                np.full(40, 1.0),
                np.full(40, 200.0),
                0.0,
                50.0,
                state,
                0,
                40,
                20,
                np.random.default_rng(0),
            )
        )
    assert steps[0] == steps[1] >= 0


@pytest.mark.parametrize(
    "fit_intercept,momentum,std", [(True, 0.0, 0.7), (False, 0.9, 0.7), (True, 0.5, 0.0)]
)
def test_noisy_update_matches_the_kernel_from_the_same_draws(fit_intercept, momentum, std):
    rng = np.random.default_rng(5)
    blocks, blocks_int = rng.standard_normal((3, 2, 4)), rng.standard_normal((3, 2))
    start = [rng.standard_normal((2, 4)), rng.standard_normal(2), np.zeros((2, 4)), np.zeros(2)]
    out = []
    for update in (_small_problems.noisy_update, _kernels._noisy_update):
        gen = np.random.default_rng(11)
        state = [a.copy() for a in start]  # coef, intercept, vcoef, vint: updated in place
        for t in range(3):
            update(
                blocks,
                blocks_int,
                std,
                40.0,
                0.01,
                0.3,
                momentum,
                momentum ** (t + 1),
                fit_intercept,
                *state,
                gen,
            )
        out.append((gen.bit_generator.state, state))
    (g1, s1), (g2, s2) = out
    assert g1 == g2  # as many draws
    assert not np.array_equal(s1[0], start[0])
    for a, b in zip(s1, s2):
        _close(a, b, 1e-14)


@pytest.mark.parametrize(
    "loss,k",
    [(loss, 1) for loss in _ONE_OUTPUT_LOSSES]
    + [(LOSS_MULTINOMIAL, 3), (LOSS_SQUARED_HINGE_OVR, 3), (LOSS_SQUARED, 2)],
)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_objective_matches_the_kernel(loss, k, dtype, monkeypatch):
    X, y, w, coef, b = _problem(k=k, dtype=dtype)
    if loss in (LOSS_POISSON, LOSS_TWEEDIE):  # counts, margins on both sides of both tangents
        y = np.floor(np.abs(y) * np.arange(len(y)) % 7)
        coef = coef * 2.0
    small, big = _both(X, y, w, True, monkeypatch)
    for clip in (0.05, 0.5, 50.0):
        (fs, gs, gis), (fb, gb, gib) = (
            rows.objective(coef, b, loss, _param(loss), clip) for rows in (small, big)
        )
        # value and gradient summed in the kernel's order (L-BFGS's stop is sensitive to it)
        assert np.isnan(fs) == np.isnan(fb)
        if not np.isnan(fb):
            assert abs(fs - fb) <= 1e-13 * max(1.0, abs(fb))
        _close(gs, gb, 1e-13)
        _close(gis, gib, 1e-13)
    assert np.isnan(fb) == (loss in (LOSS_HINGE, LOSS_MODIFIED_HUBER))  # no value: NaN
    assert np.all(np.isnan(gb)) == (k == 2)  # no derivative of a one-output loss for 2 outputs
