"""DPHuberRegressor: scikit-learn's HuberRegressor without noise, its gradient bound (no target
range needed), its accounting, and its refusals."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_diabetes
from sklearn.linear_model import HuberRegressor
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skdpgd import DPHuberRegressor, PrivacyLeakWarning, privacy_report
from skdpgd.accounting import compose_gdp, gdp_epsilon, gdp_mu
from skdpgd.linear_model import DPHuberRegressor as FromLinearModel


def _data(n=1500, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) / np.sqrt(d)
    X /= max(1.0, np.linalg.norm(X, axis=1).max())
    y = X @ rng.normal(size=d) * 2 + 0.3 + 0.2 * rng.standard_t(2, size=n)
    return X, y


@pytest.fixture(scope="module")
def diabetes():
    X, y = load_diabetes(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    return X / np.linalg.norm(X, axis=1).max(), y


def _same_objective(X, y, **kw):
    """The private fit at epsilon=1e6 with sklearn's fitted scale (public here: a test), and
    HuberRegressor with the same penalty (alpha_sk = alpha_ * N / scale)."""
    n = X.shape[0]
    scale = HuberRegressor(max_iter=2000).fit(X, y).scale_
    dp = DPHuberRegressor(epsilon=1e6, data_norm=1.0, scale=scale, random_state=0, **kw)
    dp.fit(X, y)
    sk = HuberRegressor(alpha=dp.alpha_ * n / scale, max_iter=2000).fit(X, y)
    return dp, sk


def _check_report(est):
    """privacy_report reads the fit's releases: its epsilon at the fit's delta is epsilon_."""
    report = privacy_report(est)
    assert report.stated == (est.epsilon_, est.delta_)
    assert report.epsilon(est.delta_) == pytest.approx(est.epsilon_, rel=1e-6)
    # the gradient sums' row shows the replace-one sensitivity 2G (G = clip_norm_)
    grad = next(r for r in report.rows if r.name == "gradient sums")
    assert grad.sensitivity == pytest.approx(2.0 * est.clip_norm_, rel=1e-6)


def test_reexported_from_linear_model():
    assert FromLinearModel is DPHuberRegressor


@pytest.mark.parametrize("schedule", ["auto", "uniform"])
def test_near_huberregressor_without_noise_generated(schedule):
    X, y = _data()
    dp, sk = _same_objective(X, y, schedule=schedule, y_bound=(-10.0, 10.0))
    assert abs(dp.score(X, y) - sk.score(X, y)) < 0.005
    np.testing.assert_allclose(dp.coef_, sk.coef_, atol=0.05 * np.abs(sk.coef_).max())
    assert dp.intercept_ == pytest.approx(sk.intercept_, abs=0.05)


def test_near_huberregressor_without_noise_diabetes(diabetes):
    X, y = diabetes
    dp, sk = _same_objective(X, y, y_bound=(0.0, 400.0))
    assert abs(dp.score(X, y) - sk.score(X, y)) < 0.005


def test_no_target_range_is_needed_and_none_is_read():
    X, y = _data()
    y = y * 1000.0  # far-off targets: the gradient's bound does not depend on them
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)  # nothing is read from y
        est = DPHuberRegressor(
            epsilon=1.0, data_norm=1.0, huber_threshold=2.0, scale=0.5, random_state=0
        ).fit(X, y)
    # the sensitivity: G = threshold * scale * sqrt(R^2 + c^2), c = 0.5 R
    assert est.clip_norm_ == pytest.approx(2.0 * 0.5 * np.sqrt(1.0 + 0.25))
    assert est.y_bound_ is None and est.y_range_ is None and est.scale_ == 0.5
    assert np.all(np.isfinite(est.coef_))


def test_one_example_gradient_is_bounded_whatever_its_target():
    """The kernels' gradient of one example under the Huber loss has norm at most G for any
    target and any iterate: it is that example's contribution to every gradient release."""
    from skdpgd._compute import kernels as K
    from skdpgd._compute.backends import DenseRows

    rng = np.random.default_rng(1)
    t, c = 0.7, 0.5
    x = rng.normal(size=(1, 3))
    x /= np.linalg.norm(x)
    G = t * np.sqrt(1.0 + c * c)  # huber_threshold * scale * sqrt(R^2 + c^2), R = 1
    worst = 0.0
    for target in (1e12, -1e12, 0.3, -40.0):
        rows = DenseRows(x, np.array([target]), np.ones(1), True)
        rows.clip_rows(1.0, c)
        for _ in range(5):
            coef, b = rng.normal(size=(1, 3)) * 100, rng.normal(size=1) * 100
            # kernel coordinates: rows divided by c, the intercept column 1, the clip G / c;
            # a clip far above G shows the unclipped Huber gradient is already within G
            g, gi, bad = rows.grad_sum(coef, b, K.LOSS_HUBER, t, 1e9)
            norm = c * np.sqrt(np.sum(g**2) + gi[0] ** 2)
            assert bad == 0 and norm <= G * (1 + 1e-12)
            worst = max(worst, norm)
    assert worst == pytest.approx(G)  # reached: a far target saturates the derivative


@pytest.mark.parametrize("epsilon,delta", [(0.3, 1e-6), (2.0, 1e-5)])
@pytest.mark.parametrize("y_bound", [None, 3.0])
def test_epsilon_is_an_upper_bound_recomputed_independently(epsilon, delta, y_bound):
    X, y = _data(n=800)
    est = DPHuberRegressor(
        epsilon=epsilon, delta=delta, data_norm=1.0, y_bound=y_bound, random_state=0
    ).fit(X, y)
    # every release of the fit, composed as Gaussian DP from the multipliers (replace-one:
    # each release's sensitivity is the one it was calibrated to), then the (eps, delta)
    # curve of that mu, against the reported values
    z = np.concatenate([r.multipliers for r in est.releases_])
    mu = float(np.sqrt(np.sum(z**-2.0)))
    assert mu == pytest.approx(compose_gdp(z))
    assert est.mu_ == pytest.approx(mu, rel=1e-9)
    assert mu <= gdp_mu(epsilon, delta) * (1 + 1e-9)
    assert est.epsilon_ <= epsilon
    assert gdp_epsilon(delta, mu) == pytest.approx(est.epsilon_, rel=1e-6)
    names = [r.name for r in est.releases_]
    assert ("target sum (start)" in names) == (y_bound is not None and est.mechanism_ == "gradient")


def test_sparse_is_the_dense_model():
    X, y = _data(n=600)
    X[np.abs(X) < 0.3] = 0.0
    kw = dict(epsilon=1.0, data_norm=1.0, y_bound=5.0, random_state=3)
    dense = DPHuberRegressor(**kw).fit(X, y)
    csr = DPHuberRegressor(**kw).fit(sp.csr_matrix(X), y)
    np.testing.assert_allclose(csr.coef_, dense.coef_, rtol=1e-9, atol=1e-12)
    assert csr.intercept_ == pytest.approx(dense.intercept_, abs=1e-10)
    np.testing.assert_allclose(csr.predict(sp.csr_matrix(X)), dense.predict(X), atol=1e-9)


def test_pipeline_and_privacy_report():
    X, y = _data(n=600)
    pipe = make_pipeline(
        StandardScaler(), DPHuberRegressor(epsilon=1.0, data_norm=3.0, random_state=0)
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)  # the scaler is not private
        pipe.fit(X, y)
    assert pipe.predict(X).shape == (600,)
    _check_report(pipe[-1])


def test_prior_needs_a_range():
    X, y = _data(n=300)
    with pytest.raises(ValueError, match="needs a public y_bound"):
        DPHuberRegressor(schedule="prior", data_norm=1.0).fit(X, y)
    est = DPHuberRegressor(schedule="prior", data_norm=1.0, y_bound=(-5, 5), random_state=0).fit(
        X, y
    )
    assert est.mechanism_ == "prior" and np.all(est.coef_ == 0)


@pytest.mark.parametrize(
    "params,match",
    [
        ({"huber_threshold": 0.0}, "huber_threshold"),
        ({"scale": -1.0}, "scale"),
        ({"y_bound": (3.0, 1.0)}, "lo < hi"),
        ({"y_bound": (1.0, 3.0), "fit_intercept": False}, "not centred"),
    ],
)
def test_bad_parameters_are_refused(params, match):
    X, y = _data(n=200)
    with pytest.raises(ValueError, match=match):
        DPHuberRegressor(data_norm=1.0, **params).fit(X, y)


def test_several_targets_are_refused():
    X, y = _data(n=200)
    with pytest.raises(ValueError, match="fits one target"):
        DPHuberRegressor(data_norm=1.0).fit(X, np.column_stack([y, y]))


def test_fits_charged_to_a_shared_budget():
    from skdpgd import BudgetExceededError, PrivacyBudget

    X, y = _data(n=500)
    budget = PrivacyBudget(epsilon=1.0, delta=1e-5, neighbouring="replace")
    for _ in range(2):
        DPHuberRegressor(
            epsilon=0.7, delta=4e-6, data_norm=1.0, y_bound=5.0, budget=budget, random_state=0
        ).fit(X, y)
    assert budget.spent_epsilon() <= 1.0  # Gaussian DP composition of two: 0.963
    with pytest.raises(BudgetExceededError):
        DPHuberRegressor(epsilon=0.7, delta=4e-6, data_norm=1.0, budget=budget).fit(X, y)
