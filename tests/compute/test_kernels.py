"""Kernels: gradients against a numpy reference, the sensitivity bound, the noise, momentum."""

import numpy as np
import pytest
import scipy.sparse as sp

from skdpgd._compute import kernels as K
from skdpgd._compute.backends import CSRRows, DenseRows

from _support.reference import augmented_rows, clipped_gradient_sum, clipped_sum, gd_full_batch

LOSSES = {
    "logistic": K.LOSS_LOGISTIC,
    "multinomial": K.LOSS_MULTINOMIAL,
    "squared": K.LOSS_SQUARED,
    "ovr_squared_hinge": K.LOSS_SQUARED_HINGE_OVR,
}


def make_data(loss, n=300, d=7, seed=0, scale=3.0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * scale
    if loss == "logistic":
        y, n_out = np.where(rng.random(n) < 0.5, -1.0, 1.0), 1
    elif loss in ("multinomial", "ovr_squared_hinge"):
        y, n_out = rng.integers(0, 4, n).astype(float), 4
    else:
        y, n_out = rng.normal(size=n) * 5, 1
    return X, y, n_out


def released_sum(X, y, w, data_norm, fit_intercept, loss, clip, coef, intercept, noise=0.0, seed=0):
    """The sum a step releases, read back from one kernel step (step 1, alpha 0, n = 1 scale)."""
    s, a = K.row_clip_factors(X, data_norm, fit_intercept)
    n = X.shape[0]
    c1, b1 = gd_full_batch(
        X,
        y,
        w,
        s,
        a,
        LOSSES[loss],
        0.0,
        clip,
        fit_intercept,
        0.0,
        np.ones(1),
        np.full(1, noise),
        0.0,
        coef,
        intercept,
        np.random.default_rng(seed),
    )
    return n * (coef - c1), n * (intercept - b1)


@pytest.mark.parametrize("loss", list(LOSSES))
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_clipped_sum_matches_numpy_reference(loss, fit_intercept):
    X, y, n_out = make_data(loss)
    rng = np.random.default_rng(1)
    w = rng.uniform(0, 1, X.shape[0])
    coef = rng.normal(size=(n_out, X.shape[1])) * 0.3
    intercept = rng.normal(size=n_out) if fit_intercept else np.zeros(n_out)
    clip = 2.0 if loss != "squared" else 4.0
    S, Sb = released_sum(X, y, w, 5.0, fit_intercept, loss, clip, coef, intercept)
    R, Rb = clipped_sum(X, y, w, 5.0, fit_intercept, LOSSES[loss], clip, coef, intercept)
    np.testing.assert_allclose(S, R, rtol=1e-9, atol=1e-9)
    if fit_intercept:
        np.testing.assert_allclose(Sb, Rb, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("loss", list(LOSSES))
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_sensitivity_of_released_sum(loss, fit_intercept):
    """Replace one example by an adversarial one: the sum moves by <= 2 clip; remove: <= clip."""
    X, y, n_out = make_data(loss, n=50)
    rng = np.random.default_rng(2)
    clip, data_norm = 1.7, 2.0
    worst = 0.0
    for trial in range(40):
        coef = rng.normal(size=(n_out, X.shape[1])) * rng.choice([0.01, 1, 100])
        intercept = rng.normal(size=n_out) * 10
        w = np.ones(X.shape[0])
        S, Sb = released_sum(X, y, w, data_norm, fit_intercept, loss, clip, coef, intercept)
        X2, y2 = X.copy(), y.copy()
        i = trial % X.shape[0]
        X2[i] = rng.normal(size=X.shape[1]) * rng.choice([1e-3, 1.0, 1e6])
        y2[i] = {
            "logistic": -y[i],
            "multinomial": (y[i] + 1) % n_out,
            "ovr_squared_hinge": (y[i] + 1) % n_out,
            "squared": rng.choice([-1e6, 1e6]),
        }[loss]
        S2, Sb2 = released_sum(X2, y2, w, data_norm, fit_intercept, loss, clip, coef, intercept)
        diff = np.sqrt(np.sum((S - S2) ** 2) + np.sum((Sb - Sb2) ** 2))
        worst = max(worst, diff)
        assert diff <= 2 * clip * (1 + 1e-12)
        # add/remove: drop row i (weight 0 is the same sum as removing the row)
        w0 = w.copy()
        w0[i] = 0.0
        S3, Sb3 = released_sum(X, y, w0, data_norm, fit_intercept, loss, clip, coef, intercept)
        assert np.sqrt(np.sum((S - S3) ** 2) + np.sum((Sb - Sb3) ** 2)) <= clip * (1 + 1e-12)
    # the bound is reached, not just respected (the adversary can move the sum by ~2 clip);
    # the one-vs-rest squared hinge reaches it only where every output is violated at once,
    # which random parameters rarely give: test_linear_svc.py builds that case
    if loss != "ovr_squared_hinge":
        assert worst > 1.5 * clip


def test_rows_are_clipped_even_with_huge_entries():
    X = np.array([[1e300, -1e300, 3.0], [0.0, 0.0, 0.0], [3.0, 4.0, 0.0]])
    s, a = K.row_clip_factors(X, 1.0, True)
    clipped = X * s[:, None]
    np.testing.assert_allclose(np.linalg.norm(clipped[[0, 2]], axis=1), [1.0, 1.0], rtol=1e-12)
    np.testing.assert_allclose(a, np.sqrt([2.0, 1.0, 2.0]))
    assert s[1] == 1.0


def test_noise_has_the_requested_scale():
    """With all weights zero the released sum is pure noise: check its standard deviation."""
    X, y, n_out = make_data("multinomial", n=10, d=200)
    w = np.zeros(X.shape[0])
    coef = np.zeros((n_out, X.shape[1]))
    S, Sb = released_sum(
        X, y, w, 1.0, True, "multinomial", 1.0, coef, np.zeros(n_out), noise=3.0, seed=5
    )
    samples = np.concatenate([S.ravel(), Sb])  # 804 independent N(0, 9) draws
    # chi-square 99.9% interval for the sample variance with 804 degrees of freedom
    from scipy import stats

    lo, hi = stats.chi2.ppf([0.0005, 0.9995], samples.size) / samples.size
    assert lo * 9 < np.mean(samples**2) < hi * 9
    assert abs(np.mean(samples)) < 4 * 3 / np.sqrt(samples.size)


def test_same_blocks_same_numbers_on_any_thread_count_and_seed_reproduces():
    X, y, _ = make_data("logistic", n=20000, d=30)
    w = np.ones(X.shape[0])
    s, a = K.row_clip_factors(X, 1.0, True)
    coef, b = np.random.default_rng(3).normal(size=(1, 30)), np.array([0.2])
    args = (X, y, w, s, a, K.LOSS_LOGISTIC, 0.0, np.sqrt(2.0), coef, b)
    one = K.dense_grad_sum(*args, n_blocks=4, parallel=False)
    threads = K.dense_grad_sum(*args, n_blocks=4, parallel=True)
    # the same block split gives the same numbers on threads as on one thread, bit for bit
    for u, v in zip(one, threads):
        np.testing.assert_array_equal(u, v)
    other = K.dense_grad_sum(*args, n_blocks=1, parallel=False)
    np.testing.assert_allclose(one[0], other[0], rtol=1e-10, atol=1e-12)  # rounding only
    gd = (
        X,
        y,
        w,
        s,
        a,
        K.LOSS_LOGISTIC,
        0.0,
        np.sqrt(2.0),
        True,
        1e-3,
        np.full(20, 0.5),
        np.full(20, 3.0),
        0.0,
        np.zeros((1, 30)),
        np.zeros(1),
    )
    c1, _ = gd_full_batch(*gd, np.random.default_rng(7))
    c2, _ = gd_full_batch(*gd, np.random.default_rng(7))
    np.testing.assert_array_equal(c1, c2)
    c3, _ = gd_full_batch(*gd, np.random.default_rng(8))
    assert not np.allclose(c1, c3)


def test_momentum_matches_reference_update():
    X, y, n_out = make_data("logistic", n=100, d=4)
    w = np.ones(X.shape[0])
    s, a = K.row_clip_factors(X, 10.0, True)
    T, beta, eta, alpha = 15, 0.8, 0.3, 0.01
    coef, b = gd_full_batch(
        X,
        y,
        w,
        s,
        a,
        K.LOSS_LOGISTIC,
        0.0,
        100.0,
        True,
        alpha,
        np.full(T, eta),
        np.zeros(T),
        beta,
        np.zeros((1, 4)),
        np.zeros(1),
        np.random.default_rng(0),
    )
    th, tb = np.zeros((1, 4)), np.zeros(1)
    v, vb = np.zeros((1, 4)), np.zeros(1)
    for t in range(1, T + 1):
        S, Sb = clipped_sum(X, y, w, 10.0, True, K.LOSS_LOGISTIC, 100.0, th, tb)
        g, gb = S / 100 + alpha * th, Sb / 100
        v, vb = beta * v + (1 - beta) * g, beta * vb + (1 - beta) * gb
        th, tb = th - eta * v / (1 - beta**t), tb - eta * vb / (1 - beta**t)
    np.testing.assert_allclose(coef, th, rtol=1e-9)
    np.testing.assert_allclose(b, tb, rtol=1e-9)


def test_objective_gradient_is_the_gradient_of_the_objective():
    # For the logistic losses the clip (10) is above their Lipschitz bound sqrt(2 * 17), so it
    # never binds (as in the estimators); for the squared loss it binds (a Huber loss).
    # The one-vs-rest squared hinge's cap binds too (the loss continues linearly there).
    for loss, clip in [
        ("logistic", 10.0),
        ("multinomial", 10.0),
        ("squared", 3.0),
        ("ovr_squared_hinge", 3.0),
    ]:
        X, y, n_out = make_data(loss, n=60, d=5)
        w = np.random.default_rng(0).uniform(0, 1, 60)
        s, a = K.row_clip_factors(X, 4.0, True)
        rng = np.random.default_rng(1)
        coef, b = rng.normal(size=(n_out, 5)), rng.normal(size=n_out)
        gc, gb = np.zeros_like(coef), np.zeros_like(b)

        def f(c, bb):  # the sum over the rows (no penalty, no 1/n: the mechanism adds them)
            return K.objective_sum(
                X, y, w, s, a, LOSSES[loss], 0.0, clip, c, bb, np.zeros_like(coef), np.zeros_like(b)
            )

        K.objective_sum(X, y, w, s, a, LOSSES[loss], 0.0, clip, coef, b, gc, gb)
        h = 1e-6
        for k in range(n_out):
            for j in range(5):
                e = np.zeros_like(coef)
                e[k, j] = h
                num = (f(coef + e, b) - f(coef - e, b)) / (2 * h)
                assert num == pytest.approx(gc[k, j], rel=1e-5, abs=1e-7)
            e = np.zeros_like(b)
            e[k] = h
            assert (f(coef, b + e) - f(coef, b - e)) / (2 * h) == pytest.approx(
                gb[k], rel=1e-5, abs=1e-7
            )


# --------------------------------------------------------------------------------------------
# the row-summing kernels: every path against the numpy oracle
# --------------------------------------------------------------------------------------------


def _kernel_sum(X, y, w, s, a, loss, clip, coef, intercept, rows=None, lo=0, hi=None, csr=False):
    """One call of the row kernel the backends and DP-SGD use (dense or CSR)."""
    k_out, d = coef.shape
    rows = np.empty(0, np.int64) if rows is None else np.asarray(rows, np.int64)
    hi = (X.shape[0] if rows.size == 0 else rows.size) if hi is None else hi
    gc, gi = np.full((k_out, d), np.nan), np.full(k_out, np.nan)  # the kernel must overwrite
    common = (y, w, s, a, rows, lo, hi, loss, 0.0, clip, coef, intercept, gc, gi)
    if csr:
        Xc = sp.csr_matrix(X)
        bad = K._sum_rows_csr(
            Xc.data.astype(float), Xc.indices.astype(np.int64), Xc.indptr.astype(np.int64), *common
        )
    else:
        bad = K._sum_rows(X, *common)
    return np.hstack([gc, gi[:, None]]), bad


def _oracle(X, y, w, s, a, loss, clip, coef, intercept, rows):
    A = augmented_rows(X[rows], s[rows], True)
    theta = np.hstack([coef, intercept[:, None]])
    return clipped_gradient_sum(A, y[rows], w[rows], loss, clip, theta)


@pytest.mark.parametrize("loss", list(LOSSES))
@pytest.mark.parametrize("csr", [False, True])
@pytest.mark.parametrize("n", [0, 1, 3, 4, 5, 63, 64, 65, 130])
def test_row_kernels_every_length_range_and_index_list(loss, csr, n):
    """Tiles of 64 rows and groups of four: lengths around both, sub-ranges, and the index
    lists DP-SGD passes (repeated and unsorted rows), against the oracle."""
    X, y, n_out = make_data(loss, n=max(n, 1), d=9, seed=n)
    X, y = X[:n], y[:n]
    if csr:
        X[np.random.default_rng(1).random(X.shape) < 0.6] = 0.0
    rng = np.random.default_rng(2)
    w = rng.uniform(0, 1, n)
    s, a = K.row_clip_factors(X, 5.0, True)
    coef, b = rng.normal(size=(n_out, 9)) * 0.4, rng.normal(size=n_out)
    clip = 1.5
    for lo, hi in [(0, n), (n // 3, n), (n // 2, n // 2)]:
        got, bad = _kernel_sum(X, y, w, s, a, LOSSES[loss], clip, coef, b, lo=lo, hi=hi, csr=csr)
        want, _ = _oracle(X, y, w, s, a, LOSSES[loss], clip, coef, b, np.arange(lo, hi))
        assert bad == 0
        np.testing.assert_allclose(got, want if hi > lo else 0.0, rtol=1e-10, atol=1e-12)
    if n:
        idx = rng.integers(0, n, size=2 * n + 1)
        got, bad = _kernel_sum(X, y, w, s, a, LOSSES[loss], clip, coef, b, rows=idx, csr=csr)
        want, _ = _oracle(X, y, w, s, a, LOSSES[loss], clip, coef, b, idx)
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("loss", list(LOSSES))
@pytest.mark.parametrize("csr", [False, True])
@pytest.mark.parametrize("intercept", [0.0, -np.inf])
def test_non_finite_gradients_contribute_zero_and_are_counted(loss, csr, intercept):
    """A huge coefficient gives some rows an infinite margin (10 * 1e308); with an infinite
    intercept those rows' margins are NaN (inf - inf) and the others' infinite. A row whose
    gradient is not finite is left out of the sum and counted; the others are summed as
    usual (the logistic derivative is finite at an infinite margin, so only NaN margins are
    bad there; the squared and multinomial derivatives are not; the one-vs-rest squared
    hinge's is capped, so finite, and, as the binary squared hinge's, 0 at a NaN margin)."""
    n = 70
    X, y, n_out = make_data(loss, n=n, d=6, seed=3)
    X[:, 0] = 0.0
    over = np.arange(0, n, 7)
    X[over, 0] = 10.0
    w = np.random.default_rng(4).uniform(0.5, 1, n)
    s, a = K.row_clip_factors(X, 1e6, True)  # no row is clipped: s = 1
    coef = np.random.default_rng(5).normal(size=(n_out, 6))
    coef[:, 0] = 1e308
    b = np.full(n_out, intercept)
    if loss == "ovr_squared_hinge":
        expect_bad = 0
    elif intercept == 0.0:
        expect_bad = 0 if loss == "logistic" else over.size
    else:
        expect_bad = over.size if loss == "logistic" else n
    want, want_bad = _oracle(X, y, w, s, a, LOSSES[loss], 2.0, coef, b, np.arange(n))
    assert want_bad == expect_bad
    for rows in (None, np.arange(n)[::-1]):  # all rows directly, and as an index list
        got, bad = _kernel_sum(X, y, w, s, a, LOSSES[loss], 2.0, coef, b, rows=rows, csr=csr)
        assert bad == expect_bad
        assert np.all(np.isfinite(got))
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    # through the backends too: grad_sum reports the count
    rows_obj = (CSRRows if csr else DenseRows)(sp.csr_matrix(X) if csr else X, y, w, True)
    gc, gi, bad = rows_obj.grad_sum(coef, b, LOSSES[loss], 0.0, 2.0)
    assert bad == expect_bad and np.all(np.isfinite(gc)) and np.all(np.isfinite(gi))


def test_unknown_loss_or_shape_counts_every_row_as_not_finite():
    X, y, _ = make_data("logistic", n=10, d=3)
    w, s, a = np.ones(10), np.ones(10), np.ones(10)
    for loss, k_out in [(99, 1), (K.LOSS_LOGISTIC, 2), (K.LOSS_SQUARED, 3)]:
        for csr in (False, True):
            got, bad = _kernel_sum(
                X, y, w, s, a, loss, 1.0, np.zeros((k_out, 3)), np.zeros(k_out), csr=csr
            )
            assert bad == 10
            np.testing.assert_array_equal(got, 0.0)


def test_exp_tile_matches_numpy():
    u = np.concatenate(
        [
            np.linspace(-720, 720, 20001),
            [0.0, -0.0, 1e-300, np.log(2) / 2],
            np.random.default_rng(0).normal(size=1000) * 30,
        ]
    )
    got = u.copy()
    K._exp_tile(got, got.size)
    inside = np.abs(u) <= 708
    np.testing.assert_allclose(got[inside], np.exp(u[inside]), rtol=5e-16, atol=0)
    # clamped outside [-708, 708]: finite and positive, the saturated value
    edge = np.array([708.0])
    K._exp_tile(edge, 1)
    assert edge[0] == pytest.approx(np.exp(708.0), rel=5e-16)
    assert np.all(got[u > 708] == edge[0])
    assert np.all((got[u < -708] > 0) & (got[u < -708] < 1e-307))
    special = np.array([np.nan, np.inf, -np.inf])
    K._exp_tile(special, 3)
    assert np.isnan(special[0]) and np.isfinite(special[1]) and special[2] < 1e-307


def test_clip_factor_is_the_sensitivity_invariant():
    """The one clip helper every gradient kernel inlines: ``factor * norm <= w C``, the
    factor is ``w`` when nothing is clipped, and 0 for an infinite norm."""
    from numba import njit

    @njit(error_model="numpy")
    def factor(norm, clip, w):
        return K.clip_factor(norm, clip, w)

    rng = np.random.default_rng(0)
    for _ in range(2000):
        norm = float(10.0 ** rng.uniform(-300, 300)) * rng.choice([0.0, 1.0], p=[0.05, 0.95])
        clip, w = float(10.0 ** rng.uniform(-5, 5)), float(rng.uniform(0, 1))
        f = factor(norm, clip, w)
        assert 0.0 <= f <= w
        assert f * norm <= w * clip * (1 + 1e-15)
        if norm <= clip:
            assert f == w
    assert factor(np.inf, 1.0, 0.7) == 0.0
