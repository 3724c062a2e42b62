"""DPLinearSVC: scikit-learn's LinearSVC without noise, its gradient bound, its accounting,
and its refusals."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_breast_cancer
from sklearn.multiclass import OneVsRestClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC

from skdpgd import DPLinearSVC, PrivacyBudget, PrivacyLeakWarning, privacy_report
from skdpgd.accounting import compose_gdp, gdp_epsilon, gdp_mu


def _data(n=1500, d=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) / np.sqrt(d)
    X /= max(1.0, np.linalg.norm(X, axis=1).max())
    y = (X @ rng.normal(size=d) + 0.2 * rng.normal(size=n) > 0).astype(int)
    return X, y


@pytest.fixture(scope="module")
def cancer():
    X, y = load_breast_cancer(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    return X / np.linalg.norm(X, axis=1).max(), y


def _check_report(est):
    """privacy_report reads the fit's releases: its epsilon at the fit's delta is epsilon_."""
    report = privacy_report(est)
    assert report.stated == (est.epsilon_, est.delta_)
    assert report.epsilon(est.delta_) == pytest.approx(est.epsilon_, rel=1e-6)
    # the gradient sums' row shows the replace-one sensitivity 2G (G = clip_norm_)
    grad = next(r for r in report.rows if r.name == "gradient sums")
    assert grad.sensitivity == pytest.approx(2.0 * est.clip_norm_, rel=1e-6)


@pytest.mark.parametrize("schedule", ["auto", "uniform"])
def test_near_linearsvc_without_noise_generated(schedule):
    X, y = _data()
    dp = DPLinearSVC(
        epsilon=1e6, data_norm=1.0, classes=[0, 1], schedule=schedule, random_state=0
    ).fit(X, y)
    sk = LinearSVC(C=1.0 / (X.shape[0] * dp.alpha_), max_iter=20000).fit(X, y)
    assert abs(dp.score(X, y) - sk.score(X, y)) < 0.005
    # same direction (LinearSVC penalises its intercept; ours is not penalised)
    cos = float(dp.coef_[0] @ sk.coef_[0] / np.linalg.norm(dp.coef_) / np.linalg.norm(sk.coef_))
    assert cos > 0.99
    assert dp.decision_function(X).shape == (X.shape[0],)


def test_near_linearsvc_without_noise_breast_cancer(cancer):
    X, y = cancer
    dp = DPLinearSVC(epsilon=1e6, data_norm=1.0, classes=[0, 1], random_state=0).fit(X, y)
    sk = LinearSVC(C=1.0 / (X.shape[0] * dp.alpha_), max_iter=20000).fit(X, y)
    assert abs(dp.score(X, y) - sk.score(X, y)) < 0.005


def test_one_example_gradient_is_bounded():
    """The clipped squared hinge: one example's gradient has norm at most G = 2 ||(x, c)||
    at any iterate (the sensitivity of every release), reached for a misclassified row."""
    from skdpgd._compute import kernels as K
    from skdpgd._compute.backends import DenseRows

    rng = np.random.default_rng(3)
    c = 0.5
    x = rng.normal(size=(1, 4))
    x /= np.linalg.norm(x)
    G = 2.0 * np.sqrt(1.0 + c * c)
    worst = 0.0
    for label in (1.0, -1.0):
        rows = DenseRows(x, np.array([label]), np.ones(1), True)
        rows.clip_rows(1.0, c)
        for scale in (0.1, 10.0, 1e4):
            coef, b = rng.normal(size=(1, 4)) * scale, rng.normal(size=1) * scale
            g, gi, bad = rows.grad_sum(coef, b, K.LOSS_SQUARED_HINGE, 0.0, G / c)
            norm = c * np.sqrt(np.sum(g**2) + gi[0] ** 2)
            assert bad == 0 and norm <= G * (1 + 1e-12)
            worst = max(worst, norm)
    assert worst == pytest.approx(G)
    est = DPLinearSVC(
        epsilon=1.0, data_norm=1.0, row_clip="data_norm", classes=[0, 1], random_state=0
    ).fit(*_data(n=300))
    assert est.clip_norm_ == pytest.approx(G)


@pytest.mark.parametrize("epsilon,delta", [(0.3, 1e-6), (2.0, 1e-5)])
def test_epsilon_is_an_upper_bound_recomputed_independently(epsilon, delta, cancer):
    X, y = cancer
    est = DPLinearSVC(
        epsilon=epsilon,
        delta=delta,
        data_norm=1.0,
        classes=[0, 1],
        class_weight="balanced",
        random_state=0,
    ).fit(X, y)
    z = np.concatenate([r.multipliers for r in est.releases_])
    mu = float(np.sqrt(np.sum(z**-2.0)))  # Gaussian DP composition, by hand
    assert mu == pytest.approx(compose_gdp(z))
    assert est.mu_ == pytest.approx(mu, rel=1e-9)
    assert mu <= gdp_mu(epsilon, delta) * (1 + 1e-9)
    assert est.epsilon_ <= epsilon
    assert gdp_epsilon(delta, mu) == pytest.approx(est.epsilon_, rel=1e-6)
    names = [r.name for r in est.releases_]
    assert "row norm sum" in names  # row_clip='auto' by default, as DPLogisticRegression


def test_sparse_is_the_dense_model_and_labels_are_kept():
    X, y = _data(n=600)
    X[np.abs(X) < 0.3] = 0.0
    labels = np.where(y == 1, "yes", "no")
    kw = dict(epsilon=1.0, data_norm=1.0, classes=["no", "yes"], random_state=2)
    dense = DPLinearSVC(**kw).fit(X, labels)
    csr = DPLinearSVC(**kw).fit(sp.csr_matrix(X), labels)
    np.testing.assert_allclose(csr.coef_, dense.coef_, rtol=1e-9, atol=1e-12)
    assert set(dense.predict(X)) <= {"no", "yes"}
    np.testing.assert_array_equal(csr.predict(sp.csr_matrix(X)), dense.predict(X))


def test_one_vs_rest_under_a_shared_budget():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(900, 3)) / 2
    X /= max(1.0, np.linalg.norm(X, axis=1).max())
    y = np.digitize(X[:, 0], [-0.15, 0.15])
    budget = PrivacyBudget(epsilon=3.0, delta=1e-6)
    ovr = OneVsRestClassifier(
        DPLinearSVC(
            epsilon=1.0,
            delta=1e-6 / 3,
            data_norm=1.0,
            classes=[0, 1],
            budget=budget,
            random_state=0,
        )
    )
    ovr.fit(X, y)
    assert len(ovr.estimators_) == 3
    assert budget.spent_epsilon() <= 3.0
    with pytest.raises(ValueError, match="fits two classes"):
        DPLinearSVC(data_norm=1.0, classes=[0, 1, 2]).fit(X, y)


def test_pipeline_and_report(cancer):
    X, y = cancer
    pipe = make_pipeline(
        StandardScaler(), DPLinearSVC(epsilon=1.0, data_norm=8.0, classes=[0, 1], random_state=0)
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        pipe.fit(X, y)
    assert pipe.score(X, y) > 0.8
    _check_report(pipe[-1])
