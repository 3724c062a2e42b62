"""DPLogisticRegression and DPRidge: utility, privacy attributes, input handling."""

import math
import warnings

import numpy as np
import pytest
from scipy import sparse
from sklearn.datasets import load_breast_cancer, load_iris
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import Normalizer, StandardScaler

from skdpgd import DPLogisticRegression, DPRidge, PrivacyLeakWarning
from skdpgd.accounting import compose_gdp, gdp_epsilon


@pytest.fixture(scope="module")
def cancer():
    X, y = load_breast_cancer(return_X_y=True)
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.25, random_state=0, stratify=y)
    sc = StandardScaler().fit(Xtr)
    Xtr, Xte = sc.transform(Xtr), sc.transform(Xte)
    m = np.linalg.norm(Xtr, axis=1).max()  # a preprocessing choice, outside the DP fit
    return Xtr / m, Xte / m, ytr, yte


def unit_rows(X):
    return X / np.linalg.norm(X, axis=1, keepdims=True).max()


# --- utility ------------------------------------------------------------------------------


@pytest.mark.parametrize("n_classes", [2, 3])
def test_huge_epsilon_approaches_sklearn_logistic(n_classes):
    X, y = load_iris(return_X_y=True)
    if n_classes == 2:
        X, y = X[y > 0], y[y > 0]
    X = unit_rows(StandardScaler().fit_transform(X))
    alpha = 0.05
    sk = LogisticRegression(C=1.0 / (X.shape[0] * alpha), tol=1e-12, max_iter=10000).fit(X, y)

    def centred(c):  # softmax parameters are identified up to a shift per feature
        return c if n_classes == 2 else c - c.mean(axis=0)

    errors = []
    for eps in [1e2, 1e4, 1e6, np.inf]:
        dp = DPLogisticRegression(
            epsilon=eps, data_norm=1.0, row_clip="data_norm", alpha=alpha, random_state=0
        ).fit(X, y)
        errors.append(np.abs(centred(dp.coef_) - centred(sk.coef_)).max())
    assert errors[0] > errors[1] > errors[2] > errors[3]
    assert errors[2] < 1e-2  # eps = 1e6
    assert errors[3] < 1e-6  # no noise: plain gradient descent converges to sklearn's optimum
    np.testing.assert_allclose(dp.predict_proba(X), sk.predict_proba(X), atol=1e-6)


def test_huge_epsilon_approaches_sklearn_ridge():
    rng = np.random.default_rng(0)
    X = unit_rows(rng.normal(size=(400, 5)))
    y = X @ np.array([1.0, -2.0, 0.5, 0.0, 3.0]) + 0.3 + 0.01 * rng.normal(size=400)
    alpha = 0.01
    sk = Ridge(alpha=alpha * X.shape[0]).fit(X, y)
    errors = []
    for eps in [1e2, 1e4, 1e6, np.inf]:
        dp = DPRidge(
            epsilon=eps,
            data_norm=1.0,
            row_clip="data_norm",
            y_bound=5.0,
            alpha=alpha,
            random_state=0,
        ).fit(X, y)
        errors.append(max(np.abs(dp.coef_ - sk.coef_).max(), abs(dp.intercept_ - sk.intercept_)))
    assert errors[0] > errors[1] > errors[2] > errors[3]
    assert errors[2] < 2e-2
    assert errors[3] < 1e-6


def test_breast_cancer_eps_one_beats_majority(cancer):
    Xtr, Xte, ytr, yte = cancer
    majority = max(np.mean(yte), 1 - np.mean(yte))
    accs = [
        DPLogisticRegression(epsilon=1.0, data_norm=1.0, random_state=s)
        .fit(Xtr, ytr)
        .score(Xte, yte)
        for s in range(5)
    ]
    assert np.median(accs) > majority + 0.15


def test_accuracy_does_not_fall_as_epsilon_grows(cancer):
    Xtr, Xte, ytr, yte = cancer
    med = []
    for eps in [0.1, 1.0, 10.0]:
        accs = [
            DPLogisticRegression(epsilon=eps, data_norm=1.0, random_state=s)
            .fit(Xtr, ytr)
            .score(Xte, yte)
            for s in range(7)
        ]
        med.append(np.median(accs))
    assert med[0] <= med[1] + 0.01 <= med[2] + 0.02
    assert med[2] > 0.9


# --- privacy attributes -------------------------------------------------------------------


@pytest.mark.parametrize("Est", [DPLogisticRegression, DPRidge])
@pytest.mark.parametrize("epsilon,delta", [(0.3, 1e-6), (2.0, 1e-5)])
def test_privacy_attributes(Est, epsilon, delta, cancer):
    Xtr, _, ytr, _ = cancer
    kw = {"y_bound": 1.0} if Est is DPRidge else {}
    est = Est(epsilon=epsilon, delta=delta, data_norm=1.0, random_state=0, **kw).fit(Xtr, ytr)
    assert est.epsilon_ <= epsilon
    assert est.epsilon_ >= epsilon * (1 - 1e-9)
    assert est.delta_ == delta
    # mu_ composes every release (gradient or Newton steps, sufficient statistics) with the
    # private row-norm query (logistic default); DPRidge clips rows at data_norm by default
    # and has no query
    z_all = np.concatenate([r.multipliers for r in est.releases_])
    names = [r.name for r in est.releases_]
    if Est is DPRidge:
        assert est.row_clip_noise_multiplier_ is None and "row norm sum" not in names
    else:
        assert est.row_clip_noise_multiplier_ is not None and "row norm sum" in names
        # the query uses at most 10% of mu^2
        assert est.row_clip_noise_multiplier_**-2 <= 0.1 * est.mu_**2 * (1 + 1e-9)
    assert est.mu_ == pytest.approx(compose_gdp(z_all))
    assert est.rho_ == pytest.approx(est.mu_**2 / 2)
    assert gdp_epsilon(delta, est.mu_) == pytest.approx(est.epsilon_)
    assert est.mechanism_ in ("gradient", "newton", "ssp", "output", "prior")
    if est.mechanism_ in ("gradient", "newton"):
        assert est.n_iter_ == len(est.noise_multipliers_)
    if est.mechanism_ == "prior":  # below the switch's signal-to-noise ratio (binary)
        assert names[-2:] == ["class counts (start)", "class counts"] and est.n_iter_ == 0
    assert est.neighbouring_ == "replace-one"


def test_default_delta_is_far_below_one_over_n(cancer):
    Xtr, _, ytr, _ = cancer
    est = DPLogisticRegression(data_norm=1.0, random_state=0).fit(Xtr, ytr)
    assert est.delta_ == pytest.approx(min(1e-5, 1 / len(ytr) ** 2))
    assert est.delta_ < 0.01 / len(ytr)


def test_infinite_epsilon_adds_no_noise(cancer):
    Xtr, _, ytr, _ = cancer
    a = DPLogisticRegression(epsilon=np.inf, data_norm=1.0, random_state=0).fit(Xtr, ytr)
    b = DPLogisticRegression(epsilon=np.inf, data_norm=1.0, random_state=1).fit(Xtr, ytr)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert a.epsilon_ == math.inf and np.all(a.noise_multipliers_ == 0)


def test_add_remove_neighbouring_halves_the_noise(cancer):
    Xtr, _, ytr, _ = cancer
    kw = dict(data_norm=1.0, random_state=0, max_iter=50, schedule="uniform", row_clip="data_norm")
    r = DPLogisticRegression(**kw).fit(Xtr, ytr)
    a = DPLogisticRegression(neighbouring="add_remove", n_samples=Xtr.shape[0], **kw).fit(Xtr, ytr)
    # same budget and public N -> same multipliers; the sensitivity (and so the noise) halves
    np.testing.assert_allclose(r.noise_multipliers_, a.noise_multipliers_)
    assert a.neighbouring_ == "add/remove-one"
    assert np.linalg.norm(a.coef_) != np.linalg.norm(r.coef_)


def test_reproducible_and_inputs_not_mutated(cancer):
    Xtr, _, ytr, _ = cancer
    X0, y0 = Xtr.copy(), ytr.copy()
    w = np.full(len(ytr), 0.5)
    w0 = w.copy()
    a = DPLogisticRegression(data_norm=0.5, random_state=3).fit(Xtr, ytr, sample_weight=w)
    b = DPLogisticRegression(data_norm=0.5, random_state=3).fit(Xtr, ytr, sample_weight=w)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    c = DPLogisticRegression(data_norm=0.5, random_state=4).fit(Xtr, ytr, sample_weight=w)
    assert not np.array_equal(a.coef_, c.coef_)
    np.testing.assert_array_equal(Xtr, X0)
    np.testing.assert_array_equal(ytr, y0)
    np.testing.assert_array_equal(w, w0)


def test_data_norm_inferred_with_warning_and_not_otherwise(cancer):
    Xtr, _, ytr, _ = cancer
    with pytest.warns(PrivacyLeakWarning, match="data_norm"):
        est = DPLogisticRegression(random_state=0).fit(Xtr, ytr)
    assert est.data_norm_ == pytest.approx(np.linalg.norm(Xtr, axis=1).max())
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        DPLogisticRegression(data_norm=1.0, classes=[0, 1], random_state=0).fit(Xtr, ytr)
        DPRidge(data_norm=1.0, y_bound=1.0, random_state=0).fit(Xtr, ytr)
    with pytest.warns(PrivacyLeakWarning, match="y_bound"):
        DPRidge(data_norm=1.0, random_state=0).fit(Xtr, ytr)


def test_pipeline_and_multiclass_strings():
    X, y = load_iris(return_X_y=True)
    labels = np.array(["setosa", "versicolor", "virginica"])[y]
    pipe = make_pipeline(
        StandardScaler(),
        Normalizer(),
        DPLogisticRegression(epsilon=5.0, data_norm=1.0, random_state=0),
    )
    with pytest.warns(PrivacyLeakWarning, match="final step of a scikit-learn Pipeline"):
        pipe.fit(X, labels)  # StandardScaler learns from the rows: warned, and the fit runs
    assert set(pipe.predict(X)) <= set(labels)
    assert pipe.score(X, labels) > 0.6
    proba = pipe.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_allclose(np.exp(pipe.predict_log_proba(X)), proba, rtol=1e-10)
    assert list(pipe[-1].classes_) == list(labels[[0, 50, 100]])
    assert pipe[-1].coef_.shape == (3, 4)


# --- bad input ----------------------------------------------------------------------------

BAD_PARAMS = [
    ({"epsilon": 0.0}, "epsilon"),
    ({"epsilon": -1.0}, "epsilon"),
    ({"delta": 0.0}, "delta"),
    ({"delta": 1.0}, "delta"),
    ({"delta": 1.5}, "delta"),
    ({"data_norm": 0.0}, "data_norm"),
    ({"data_norm": -2.0}, "data_norm"),
    ({"alpha": -1.0}, "alpha"),
    ({"schedule": "nope"}, "schedule"),
    ({"momentum": 1.0}, "momentum"),
    ({"max_iter": 0}, "max_iter"),
    ({"neighbouring": "swap"}, "neighbouring"),
]


@pytest.mark.parametrize("Est", [DPLogisticRegression, DPRidge])
@pytest.mark.parametrize("params,name", BAD_PARAMS)
def test_bad_parameters(Est, params, name, cancer):
    Xtr, _, ytr, _ = cancer
    with pytest.raises(ValueError, match=name):
        Est(**params).fit(Xtr, ytr)


@pytest.mark.parametrize("Est", [DPLogisticRegression, DPRidge])
def test_bad_data(Est):
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(20, 3)), np.arange(20) % 2
    est = Est(data_norm=1.0, **({"y_bound": 1.0} if Est is DPRidge else {}))
    Xnan = X.copy()
    Xnan[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        est.fit(Xnan, y)
    Xinf = X.copy()
    Xinf[0, 0] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        est.fit(Xinf, y)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        est.fit(X, y[:-1])
    with pytest.raises(ValueError, match="2D array"):
        est.fit(X[:, 0], y)
    with pytest.raises(ValueError, match="0 sample"):
        est.fit(X[:0], y[:0])
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        est.fit(X, y, sample_weight=np.full(20, 2.0))
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        est.fit(X, y, sample_weight=-np.ones(20))
    with pytest.raises(ValueError, match="one entry per sample"):
        est.fit(X, y, sample_weight=np.ones(5))
    with pytest.raises(ValueError, match="zero for every sample"):
        est.fit(X, y, sample_weight=np.zeros(20))
    est.fit(X, y)
    with pytest.raises(ValueError, match="features"):
        est.predict(X[:, :2])


def test_single_class_is_refused():
    X = np.random.default_rng(0).normal(size=(10, 2))
    with pytest.raises(ValueError, match="only one class"):
        DPLogisticRegression(data_norm=1.0).fit(X, np.ones(10))
    with pytest.raises(ValueError, match="Unknown label type|continuous"):
        DPLogisticRegression(data_norm=1.0).fit(X, np.linspace(0, 1, 10))


# --- sensitivity, end to end --------------------------------------------------------------


@pytest.mark.parametrize("Est", [DPLogisticRegression, DPRidge])
@pytest.mark.parametrize("data_norm", [0.05, 1.0, 30.0])
@pytest.mark.parametrize("intercept_scaling", [0.1, 0.5, 2.0])
def test_one_step_moves_by_at_most_the_sensitivity(Est, data_norm, intercept_scaling):
    """Without noise, one step from 0 is ``-eta * S / N``; between neighbouring datasets the
    released sum S moves by at most 2G (replace-one). Checked in the original coordinates
    (w, b / c), where G = sqrt(data_norm^2 + c^2) is the bound the noise is calibrated to."""
    rng = np.random.default_rng(0)
    n, d = 40, 6
    X = rng.normal(size=(n, d)) * rng.choice([0.01, 1.0, 100.0], size=(n, 1))
    y = rng.integers(0, 2, n) if Est is DPLogisticRegression else rng.normal(size=n) * 3
    kw = {"y_bound": 2.0} if Est is DPRidge else {}
    c = intercept_scaling * data_norm
    G = (
        np.sqrt(data_norm**2 + c**2)
        if Est is DPLogisticRegression
        else 2.0 * np.sqrt(data_norm**2 + c**2)
    )  # DPRidge: clip_norm = y_bound * row bound

    def one_step(X, y):
        est = Est(
            epsilon=np.inf,
            data_norm=data_norm,
            row_clip="data_norm",
            intercept_scaling=intercept_scaling,
            alpha=0.0,
            max_iter=1,
            random_state=0,
            **kw,
        ).fit(X, y)
        theta = np.append(np.ravel(est.coef_), np.ravel(est.intercept_) / c)
        return theta, est.step_sizes_[0]

    theta, eta = one_step(X, y)
    worst = 0.0
    for i in range(8):
        X2, y2 = X.copy(), y.copy()
        X2[i] = rng.normal(size=d) * 1e4
        y2[i] = 1 - y[i] if Est is DPLogisticRegression else -50.0 * np.sign(y[i])
        theta2, _ = one_step(X2, y2)
        moved = np.linalg.norm(theta - theta2) * n / eta
        worst = max(worst, moved)
        assert moved <= 2 * G * (1 + 1e-9)
    assert worst > 0.5 * G  # the test has power: the neighbour does move the sum


def test_private_row_clip_statistic_sensitivity_and_noise():
    """The released statistic sum_i w_i min(||x_i||, R) moves by at most R between
    neighbours, and the noise added to it has standard deviation z R."""
    from skdpgd._full_batch.road import private_row_clip
    from skdpgd.policy import ROW_CLIP_FACTOR, ROW_CLIP_POWER, ROW_CLIP_SNR, row_clip_factor

    R, n = 2.0, 50
    rng = np.random.default_rng(0)
    norms = np.minimum(rng.uniform(0, 5, n), R)
    w = rng.uniform(0, 1, n)
    # no noise (mu infinite): nothing is clipped below R and nothing is released
    b, release, _ = private_row_clip(np.dot(w, norms), n, R, np.inf, rng)
    assert release is None and b == R
    # the factor on the mean norm grows with the signal-to-noise ratio, from ROW_CLIP_FACTOR
    assert row_clip_factor(0.0) == ROW_CLIP_FACTOR == row_clip_factor(ROW_CLIP_SNR)
    assert row_clip_factor(9 * ROW_CLIP_SNR) == pytest.approx(9**ROW_CLIP_POWER * ROW_CLIP_FACTOR)
    b_lo, _, _ = private_row_clip(np.dot(w, norms), n, R, 1e3, np.random.default_rng(1), snr=1.0)
    b_hi, _, _ = private_row_clip(
        np.dot(w, norms), n, R, 1e3, np.random.default_rng(1), snr=3 * ROW_CLIP_SNR
    )
    assert b_hi == pytest.approx(min(R, 3**ROW_CLIP_POWER * b_lo))
    # neighbours: any one term replaced by anything in [0, R] with weight in [0, 1]
    for i in range(n):
        for new in [0.0, R]:
            n2 = norms.copy()
            n2[i] = new
            w2 = w.copy()
            w2[i] = 1.0
            assert abs(np.dot(w, norms) - np.dot(w2, n2)) <= R
    # the noise: estimates around the truth with std z R / n (mu small enough that the
    # clamp at 2 sigma rarely binds)
    ests = []
    for seed in range(4000):
        g = np.random.default_rng(seed)
        b, release, _ = private_row_clip(1.5 * n, n, R, 2.0, g)
        z = release.multipliers[0]
        g = np.random.default_rng(seed)
        ests.append(1.5 + z * R * g.standard_normal() / n)
    # the release says what was drawn: sensitivity R under both relations, noise z R
    assert release.name == "row norm sum"
    assert release.sensitivity == {"replace": R, "add_remove": R}
    assert release.noise_std[0] == pytest.approx(z * R)
    sigma = z * R / n
    assert np.std(ests) == pytest.approx(sigma, rel=0.05)


def test_row_clip_auto_clips_a_fraction_of_the_mean_norm_and_nothing_without_noise(cancer):
    from skdpgd.policy import ROW_CLIP_FACTOR

    Xtr, _, ytr, _ = cancer
    est = DPLogisticRegression(epsilon=np.inf, data_norm=1.0, random_state=0).fit(Xtr, ytr)
    assert est.row_clip_ == 1.0 and est.row_clip_noise_multiplier_ is None
    # a small budget (signal-to-noise below ROW_CLIP_SNR) clips at ROW_CLIP_FACTOR times the
    # noisy mean norm, at most data_norm
    est = DPLogisticRegression(epsilon=0.3, data_norm=1.0, random_state=0).fit(Xtr, ytr)
    mean = np.linalg.norm(Xtr, axis=1).mean()
    assert est.row_clip_noise_multiplier_ > 0
    assert 0.5 * ROW_CLIP_FACTOR * mean < est.row_clip_ < 2 * ROW_CLIP_FACTOR * mean
    est = DPLogisticRegression(data_norm=1.0, row_clip="data_norm", random_state=0).fit(Xtr, ytr)
    assert est.row_clip_ == 1.0 and est.row_clip_noise_multiplier_ is None


@pytest.mark.parametrize("schedule", ["uniform", "hong", "pur", "output", "exponential"])
def test_every_schedule_approaches_the_regularised_optimum_as_epsilon_grows(schedule, cancer):
    """Excess objective over the exact regularised optimum shrinks with epsilon, to near 0."""
    Xtr, _, ytr, _ = cancer
    n, alpha = Xtr.shape[0], 0.02
    ys = np.where(ytr == 1, 1.0, -1.0)

    def objective(w, b):
        return np.mean(np.logaddexp(0.0, -ys * (Xtr @ w + b))) + alpha / 2 * w @ w

    ref = LogisticRegression(C=1 / (n * alpha), tol=1e-12, max_iter=10_000).fit(Xtr, ytr)
    best = objective(ref.coef_[0], ref.intercept_[0])
    excess = []
    for eps in (0.3, 3.0, 1e4):
        runs = [
            DPLogisticRegression(
                epsilon=eps,
                data_norm=1.0,
                row_clip="data_norm",
                alpha=alpha,
                intercept_scaling=1.0,
                schedule=schedule,
                max_iter=3000 if schedule == "exponential" else "auto",
                random_state=s,
            ).fit(Xtr, ytr)
            for s in range(5)
        ]
        excess.append(np.median([objective(r.coef_[0], r.intercept_[0]) - best for r in runs]))
    assert excess[0] > excess[1] > excess[2] >= -1e-9
    # output perturbation penalises the intercept too, so its limit is a slightly other optimum
    assert excess[2] < (2e-3 if schedule == "output" else 1e-4)


@pytest.mark.parametrize("schedule", ["auto", "uniform", "hong", "pur", "output", "exponential"])
@pytest.mark.parametrize("Est", [DPLogisticRegression, DPRidge])
def test_sparse_input_gives_the_dense_model(Est, schedule):
    """CSR input goes through the same reductions (never densified): same model, same epsilon."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(400, 12)) / 3
    X[rng.random(X.shape) < 0.7] = 0.0
    y = (X[:, 0] - X[:, 1] > 0).astype(int) if Est is DPLogisticRegression else X[:, 0] - X[:, 2]
    kw = dict(epsilon=1.0, data_norm=1.0, schedule=schedule, random_state=0)
    kw.update({"classes": [0, 1]} if Est is DPLogisticRegression else {"y_bound": 1.0})
    if schedule == "output":
        kw["alpha"] = 0.1
    dense = Est(**kw).fit(X, y)
    csr = Est(**kw).fit(sparse.csr_matrix(X), y)
    np.testing.assert_allclose(csr.coef_, dense.coef_, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(csr.intercept_, dense.intercept_, rtol=1e-7, atol=1e-9)
    assert csr.epsilon_ == dense.epsilon_ and csr.n_iter_ == dense.n_iter_
    np.testing.assert_allclose(csr.predict(sparse.csr_matrix(X)), dense.predict(X))


@pytest.mark.parametrize("Est", [DPLogisticRegression, DPRidge])
def test_float32_input_keeps_float32_coefficients(Est):
    rng = np.random.default_rng(0)
    X = (rng.normal(size=(300, 4)) / 3).astype(np.float32)
    y = (X[:, 0] > 0).astype(int) if Est is DPLogisticRegression else X[:, 0].astype(np.float32)
    kw = {"classes": [0, 1]} if Est is DPLogisticRegression else {"y_bound": 1.0}
    est = Est(data_norm=1.0, random_state=0, **kw).fit(X, y)
    ref = Est(data_norm=1.0, random_state=0, **kw).fit(X.astype(np.float64), y)
    assert est.coef_.dtype == np.float32 and np.asarray(est.intercept_).dtype == np.float32
    assert ref.coef_.dtype == np.float64
    np.testing.assert_allclose(est.coef_, ref.coef_, rtol=1e-5, atol=1e-6)
    assert X.dtype == np.float32  # input untouched


def test_ridge_refuses_several_targets_clearly():
    X = np.random.default_rng(0).normal(size=(50, 3)) / 3
    with pytest.raises(ValueError, match="one DPRidge per target"):
        DPRidge(data_norm=1.0, y_bound=1.0).fit(X, X[:, :2])


@pytest.mark.parametrize("Est", [DPLogisticRegression, DPRidge])
def test_verbose_prints_only_public_progress(Est, capsys):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(500, 3)) / 3
    y = (X[:, 0] > 0).astype(int) if Est is DPLogisticRegression else X[:, 0]
    kw = {"classes": [0, 1]} if Est is DPLogisticRegression else {"y_bound": 1.0}
    est = Est(
        epsilon=1.0, data_norm=1.0, schedule="uniform", max_iter=40, verbose=2, random_state=0, **kw
    ).fit(X, y)
    out = capsys.readouterr().out
    lines = [ln for ln in out.splitlines() if "step " in ln]
    assert 1 <= len(lines) <= 11 and "step 40/40" in lines[-1]
    spent = [float(ln.split("epsilon spent ")[1].split()[0]) for ln in lines]
    assert spent == sorted(spent) and spent[-1] == pytest.approx(est.epsilon_, rel=1e-3)
    assert "loss" not in out.replace("log_loss", "")  # nothing computed from the data
    Est(epsilon=1.0, data_norm=1.0, random_state=0, **kw).fit(X, y)
    assert capsys.readouterr().out == ""  # verbose=0 is silent


def test_defaults_converge_to_the_named_sklearn_models_as_epsilon_grows(cancer):
    """Consistency: with only epsilon and data_norm given, epsilon = inf gives
    scikit-learn's LogisticRegression() (C=1) and Ridge(alpha=1.0) on the same rows, and at
    epsilon = 1e6 the penalty is within 1% of 1/N and nothing is clipped."""
    from sklearn.linear_model import LogisticRegression, Ridge

    Xtr, _, ytr, _ = cancer
    n = len(ytr)
    sk = LogisticRegression(tol=1e-10, max_iter=10_000).fit(Xtr, ytr)
    est = DPLogisticRegression(epsilon=np.inf, data_norm=1.0, classes=[0, 1], random_state=0).fit(
        Xtr, ytr
    )
    assert est.mechanism_ == "newton" and est.alpha_ == pytest.approx(1.0 / n)
    assert np.abs(est.coef_ - sk.coef_).max() <= 1e-4 * np.abs(sk.coef_).max()
    assert est.intercept_ == pytest.approx(sk.intercept_, abs=1e-4)
    big = DPLogisticRegression(epsilon=1e6, data_norm=1.0, classes=[0, 1], random_state=0).fit(
        Xtr, ytr
    )
    assert big.alpha_ == pytest.approx(1.0 / n, rel=1e-2) and big.row_clip_ == 1.0
    assert np.mean(big.predict(Xtr) == sk.predict(Xtr)) >= 0.99

    y = Xtr @ np.linspace(-1, 1, Xtr.shape[1]) + 0.1
    y = np.clip(y, -1, 1)
    skr = Ridge(alpha=1.0).fit(Xtr, y)
    ridge = DPRidge(epsilon=np.inf, data_norm=1.0, y_bound=1.0, random_state=0).fit(Xtr, y)
    assert ridge.mechanism_ == "ssp" and ridge.alpha_ == pytest.approx(1.0 / n)
    np.testing.assert_allclose(ridge.coef_, skr.coef_, rtol=1e-6, atol=1e-8)
    assert ridge.intercept_ == pytest.approx(skr.intercept_, abs=1e-8)


def test_auto_rule_reads_only_public_quantities():
    """The mechanism 'auto' picks is a function of (N, D, mu, loss, signal scale) only:
    second-order at high signal-to-noise with few coefficients, output perturbation with
    many, output perturbation for the logistic losses between AUTO_LOW_OUTPUT_MIN_SNR and
    the second-order threshold, gradient descent otherwise or when max_iter is given."""
    from skdpgd.policy import (
        AUTO_LOW_OUTPUT_MIN_SNR,
        AUTO_OUTPUT_MIN_SNR,
        AUTO_SECOND_ORDER_MAX_PARAMS,
        AUTO_SECOND_ORDER_MIN_SNR,
        auto_mechanism,
        consistent_alpha,
        signal_to_noise,
    )

    D = 16
    mu_hi = 2 * AUTO_SECOND_ORDER_MIN_SNR * np.sqrt(D) / 1000
    assert signal_to_noise(1000, D, mu_hi) == pytest.approx(2 * AUTO_SECOND_ORDER_MIN_SNR)
    assert auto_mechanism(1000, D, mu_hi, "newton") == "newton"
    assert auto_mechanism(1000, D, mu_hi, "ssp") == "ssp"
    assert auto_mechanism(1000, D, mu_hi, None) == "gradient"
    assert auto_mechanism(1000, D, mu_hi, "newton", max_iter=50) == "gradient"
    assert auto_mechanism(1000, D, mu_hi / 4, "newton") == "output"  # ratio 10
    assert auto_mechanism(1000, D, mu_hi / 4, "ssp") == "gradient"
    assert auto_mechanism(1000, D, mu_hi, "newton", signal_scale=0.25) == "output"
    mu_lo = 0.5 * AUTO_LOW_OUTPUT_MIN_SNR * np.sqrt(D) / 1000
    assert auto_mechanism(1000, D, mu_lo, "newton") == "gradient"
    D = AUTO_SECOND_ORDER_MAX_PARAMS + 1
    mu = 2 * AUTO_OUTPUT_MIN_SNR * np.sqrt(D) / 1000
    assert auto_mechanism(1000, D, mu, "newton") == "output"
    assert auto_mechanism(1000, D, mu / 4, "newton") == "gradient"
    assert auto_mechanism(1000, D, np.inf, "newton") == "output"
    # the penalty decreases to 1/N as the budget grows
    alphas = [consistent_alpha(1000, 16, 1.0, 1.0, mu) for mu in (0.1, 1.0, 10.0, np.inf)]
    assert alphas == sorted(alphas, reverse=True) and alphas[-1] == 1.0 / 1000
