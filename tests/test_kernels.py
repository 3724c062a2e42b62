"""Kernels: gradients against a numpy reference, the sensitivity bound, the noise, momentum."""

import numpy as np
import pytest
from scipy.special import expit, softmax

from skdpgd import _kernels as K

LOSSES = {"logistic": K.LOSS_LOGISTIC, "multinomial": K.LOSS_MULTINOMIAL,
          "squared": K.LOSS_SQUARED}


def make_data(loss, n=300, d=7, seed=0, scale=3.0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * scale
    if loss == "logistic":
        y, n_out = np.where(rng.random(n) < 0.5, -1.0, 1.0), 1
    elif loss == "multinomial":
        y, n_out = rng.integers(0, 4, n).astype(float), 4
    else:
        y, n_out = rng.normal(size=n) * 5, 1
    return X, y, n_out


def reference_clipped_sum(X, y, w, data_norm, fit_intercept, loss, clip, coef, intercept):
    """Plain numpy: sum_i w_i clip(grad_i) with rows clipped to data_norm."""
    norms = np.linalg.norm(X, axis=1)
    Xc = X * np.minimum(1.0, data_norm / np.maximum(norms, 1e-300))[:, None]
    Xa = np.hstack([Xc, np.ones((X.shape[0], 1))]) if fit_intercept else Xc
    theta = np.hstack([coef, intercept[:, None]]) if fit_intercept else coef
    Z = Xa @ theta.T
    if loss == "logistic":
        D = (-y * expit(-y * Z[:, 0]))[:, None]
    elif loss == "multinomial":
        D = softmax(Z, axis=1)
        D[np.arange(len(y)), y.astype(int)] -= 1.0
    else:
        D = Z - y[:, None]
    G = D[:, :, None] * Xa[:, None, :]  # per-example gradients (n, n_out, d+1)
    gn = np.sqrt((G ** 2).sum(axis=(1, 2)))
    c = w * np.minimum(1.0, clip / np.maximum(gn, 1e-300))
    S = (c[:, None, None] * G).sum(axis=0)
    return (S[:, :-1], S[:, -1]) if fit_intercept else (S, np.zeros(S.shape[0]))


def released_sum(X, y, w, data_norm, fit_intercept, loss, clip, coef, intercept, noise=0.0,
                 seed=0):
    """The sum a step releases, read back from one kernel step (step 1, alpha 0, n = 1 scale)."""
    s, a = K.row_clip_factors(X, data_norm, fit_intercept)
    n = X.shape[0]
    c1, b1 = K.run_gd_full_batch(X, y, w, s, a, LOSSES[loss], 0.0, clip, fit_intercept, 0.0,
                                 np.ones(1), np.full(1, noise), 0.0, coef, intercept,
                                 np.random.default_rng(seed))
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
    R, Rb = reference_clipped_sum(X, y, w, 5.0, fit_intercept, loss, clip, coef, intercept)
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
        y2[i] = {"logistic": -y[i], "multinomial": (y[i] + 1) % n_out,
                 "squared": rng.choice([-1e6, 1e6])}[loss]
        S2, Sb2 = released_sum(X2, y2, w, data_norm, fit_intercept, loss, clip, coef, intercept)
        diff = np.sqrt(np.sum((S - S2) ** 2) + np.sum((Sb - Sb2) ** 2))
        worst = max(worst, diff)
        assert diff <= 2 * clip * (1 + 1e-12)
        # add/remove: drop row i (weight 0 is the same sum as removing the row)
        w0 = w.copy()
        w0[i] = 0.0
        S3, Sb3 = released_sum(X, y, w0, data_norm, fit_intercept, loss, clip, coef, intercept)
        assert np.sqrt(np.sum((S - S3) ** 2) + np.sum((Sb - Sb3) ** 2)) <= clip * (1 + 1e-12)
    # the bound is reached, not just respected (the adversary can move the sum by ~2 clip)
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
    S, Sb = released_sum(X, y, w, 1.0, True, "multinomial", 1.0, coef, np.zeros(n_out),
                         noise=3.0, seed=5)
    samples = np.concatenate([S.ravel(), Sb])  # 804 independent N(0, 9) draws
    # chi-square 99.9% interval for the sample variance with 804 degrees of freedom
    from scipy import stats
    lo, hi = stats.chi2.ppf([0.0005, 0.9995], samples.size) / samples.size
    assert lo * 9 < np.mean(samples ** 2) < hi * 9
    assert abs(np.mean(samples)) < 4 * 3 / np.sqrt(samples.size)


def test_same_generator_seed_same_result_and_serial_equals_parallel():
    X, y, _ = make_data("logistic", n=20000, d=30)
    w = np.ones(X.shape[0])
    s, a = K.row_clip_factors(X, 1.0, True)
    args = (X, y, w, s, a, K.LOSS_LOGISTIC, 0.0, np.sqrt(2.0), True, 1e-3, np.full(20, 0.5),
            np.full(20, 3.0), 0.0, np.zeros((1, 30)), np.zeros(1))
    c1, b1 = K.gd_full_batch(*args, np.random.default_rng(7))
    c2, b2 = K.gd_full_batch(*args, np.random.default_rng(7))
    np.testing.assert_array_equal(c1, c2)
    c3, b3 = K.gd_full_batch_parallel(*args, 4, np.random.default_rng(7))
    np.testing.assert_allclose(c1, c3, rtol=1e-10, atol=1e-12)  # other block split: rounding
    # the same block split gives the same numbers on threads as on one thread, bit for bit
    c5, b5 = K.gd_full_batch(*args, np.random.default_rng(7), n_blocks=4)
    np.testing.assert_array_equal(c3, c5)
    np.testing.assert_array_equal(b3, b5)
    c4, _ = K.gd_full_batch(*args, np.random.default_rng(8))
    assert not np.allclose(c1, c4)


def test_momentum_matches_reference_update():
    X, y, n_out = make_data("logistic", n=100, d=4)
    w = np.ones(X.shape[0])
    s, a = K.row_clip_factors(X, 10.0, True)
    T, beta, eta, alpha = 15, 0.8, 0.3, 0.01
    coef, b = K.run_gd_full_batch(X, y, w, s, a, K.LOSS_LOGISTIC, 0.0, 100.0, True, alpha,
                                  np.full(T, eta), np.zeros(T), beta, np.zeros((1, 4)),
                                  np.zeros(1), np.random.default_rng(0))
    th, tb = np.zeros((1, 4)), np.zeros(1)
    v, vb = np.zeros((1, 4)), np.zeros(1)
    for t in range(1, T + 1):
        S, Sb = reference_clipped_sum(X, y, w, 10.0, True, "logistic", 100.0, th, tb)
        g, gb = S / 100 + alpha * th, Sb / 100
        v, vb = beta * v + (1 - beta) * g, beta * vb + (1 - beta) * gb
        th, tb = th - eta * v / (1 - beta ** t), tb - eta * vb / (1 - beta ** t)
    np.testing.assert_allclose(coef, th, rtol=1e-9)
    np.testing.assert_allclose(b, tb, rtol=1e-9)


def test_objective_gradient_is_the_gradient_of_the_objective():
    # For the logistic losses the clip (10) is above their Lipschitz bound sqrt(2 * 17), so it
    # never binds (as in the estimators); for the squared loss it binds (a Huber loss).
    for loss, clip in [("logistic", 10.0), ("multinomial", 10.0), ("squared", 3.0)]:
        X, y, n_out = make_data(loss, n=60, d=5)
        w = np.random.default_rng(0).uniform(0, 1, 60)
        s, a = K.row_clip_factors(X, 4.0, True)
        rng = np.random.default_rng(1)
        coef, b = rng.normal(size=(n_out, 5)), rng.normal(size=n_out)
        gc, gb = np.zeros_like(coef), np.zeros_like(b)

        def f(c, bb):
            return K.objective_and_gradient(X, y, w, s, a, LOSSES[loss], 0.0, clip, True, 0.1, 0.2,
                                            c, bb, np.zeros_like(coef), np.zeros_like(b))

        K.objective_and_gradient(X, y, w, s, a, LOSSES[loss], 0.0, clip, True, 0.1, 0.2, coef, b,
                                 gc, gb)
        h = 1e-6
        for k in range(n_out):
            for j in range(5):
                e = np.zeros_like(coef)
                e[k, j] = h
                num = (f(coef + e, b) - f(coef - e, b)) / (2 * h)
                assert num == pytest.approx(gc[k, j], rel=1e-5, abs=1e-7)
            e = np.zeros_like(b)
            e[k] = h
            assert (f(coef, b + e) - f(coef, b - e)) / (2 * h) == pytest.approx(gb[k], rel=1e-5,
                                                                               abs=1e-7)
