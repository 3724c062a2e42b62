"""DPElasticNet: scikit-learn's ElasticNet without noise (same alpha and l1_ratio, sparse
truth), DPRidge's fit at l1_ratio = 0, its accounting (the proximal step costs nothing), its
'auto' penalty and its refusals."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.linear_model import ElasticNet

from skdpgd import DPElasticNet, DPRidge, privacy_report
from skdpgd.accounting import compose_gdp, gdp_epsilon, gdp_mu
from skdpgd.linear_model import DPElasticNet as FromLinearModel

TRUE = np.array([3.0, -2.0, 2.5, -3.0, 1.5])


def _data(n=2000, d=20, seed=0):
    """Rows of norm <= 1, five non-zero weights and d - 5 true zeros, targets around 1."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X /= np.linalg.norm(X, axis=1).max()
    w = np.zeros(d)
    w[: TRUE.size] = TRUE
    return X, X @ w + 0.05 * rng.normal(size=n) + 1.0


Y_RANGE = (-4.0, 6.0)


def test_reexported_from_linear_model():
    assert FromLinearModel is DPElasticNet


@pytest.mark.parametrize("l1_ratio", [0.5, 1.0])
def test_near_elasticnet_at_huge_epsilon_with_the_true_zeros(l1_ratio):
    """At epsilon = 1e6 the fit is within 0.01 R^2 of ElasticNet(alpha, l1_ratio) (the same
    objective: our average of r^2/2 is its 1/(2N) ||y - Xw||^2), and at least half of the
    true zeros are below 1e-3; without noise (epsilon = inf) the weights are ElasticNet's."""
    X, y = _data()
    alpha = 1e-3
    sk = ElasticNet(alpha=alpha, l1_ratio=l1_ratio).fit(X, y)
    kw = dict(alpha=alpha, l1_ratio=l1_ratio, data_norm=1.0, y_bound=Y_RANGE, random_state=0)
    dp = DPElasticNet(epsilon=1e6, **kw).fit(X, y)
    assert dp.mechanism_ == "gradient"
    assert abs(dp.score(X, y) - sk.score(X, y)) < 0.01
    zeros = np.abs(dp.coef_[TRUE.size :])
    assert np.sum(zeros < 1e-3) >= zeros.size / 2
    exact = DPElasticNet(epsilon=np.inf, **kw).fit(X, y)
    np.testing.assert_allclose(exact.coef_, sk.coef_, atol=1e-5)
    assert exact.intercept_ == pytest.approx(sk.intercept_, abs=1e-5)
    # exact zeros where ElasticNet has them (the last proximal step sets them)
    assert np.all(exact.coef_[sk.coef_ == 0.0] == 0.0)


def test_auto_alpha_tends_to_elasticnet_of_one_over_n():
    """'auto' is DPRidge's alpha (1/N plus a term for the noise); without noise it is 1/N and
    the fit is ElasticNet(alpha=1/N, l1_ratio)'s."""
    X, y = _data()
    n = X.shape[0]
    exact = DPElasticNet(epsilon=np.inf, data_norm=1.0, y_bound=Y_RANGE).fit(X, y)
    assert exact.alpha_ == pytest.approx(1.0 / n, rel=1e-12)
    sk = ElasticNet(alpha=1.0 / n, l1_ratio=0.5).fit(X, y)
    np.testing.assert_allclose(exact.coef_, sk.coef_, atol=1e-5)
    for eps in (1.0, 10.0):
        kw = dict(epsilon=eps, data_norm=1.0, y_bound=Y_RANGE, random_state=0)
        en = DPElasticNet(schedule="uniform", **kw).fit(X, y)
        ridge = DPRidge(schedule="uniform", **kw).fit(X, y)
        assert en.alpha_ == ridge.alpha_ > 1.0 / n


@pytest.mark.parametrize("schedule", ["auto", "uniform", "output"])
@pytest.mark.parametrize("epsilon", [0.5, 3.0, 1e6])
def test_l1_ratio_zero_is_dpridge(schedule, epsilon):
    """Without an L1 part the penalty is DPRidge's L2 and the fit is DPRidge's, draw for
    draw: the same mechanism ('auto' may pick the sufficient statistics again), the same
    alpha, the same model."""
    X, y = _data(n=800, d=6)
    kw = dict(epsilon=epsilon, data_norm=1.0, y_bound=Y_RANGE, schedule=schedule, random_state=3)
    en = DPElasticNet(l1_ratio=0.0, **kw).fit(X, y)
    ridge = DPRidge(**kw).fit(X, y)
    assert en.mechanism_ == ridge.mechanism_
    assert en.alpha_ == ridge.alpha_
    np.testing.assert_array_equal(en.coef_, ridge.coef_)
    assert en.intercept_ == ridge.intercept_
    assert en.epsilon_ == ridge.epsilon_


@pytest.mark.parametrize("epsilon,delta", [(0.5, 1e-6), (3.0, 1e-5)])
@pytest.mark.parametrize("neighbouring", ["replace", "add_remove"])
def test_epsilon_is_the_asked_one_recomputed_independently(epsilon, delta, neighbouring):
    X, y = _data(n=1500, d=8)
    est = DPElasticNet(
        epsilon=epsilon,
        delta=delta,
        data_norm=1.0,
        y_bound=Y_RANGE,
        neighbouring=neighbouring,
        n_samples=1500.0,
        random_state=0,
    ).fit(X, y)
    z = np.concatenate([r.multipliers for r in est.releases_])
    mu = float(np.sqrt(np.sum(z**-2.0)))  # Gaussian DP composition, by hand
    assert mu == pytest.approx(compose_gdp(z))
    assert est.mu_ == pytest.approx(mu, rel=1e-9)
    assert mu <= gdp_mu(epsilon, delta) * (1 + 1e-9)
    assert est.epsilon_ <= epsilon
    assert est.epsilon_ == pytest.approx(epsilon, rel=1e-6)
    assert gdp_epsilon(delta, mu) == pytest.approx(est.epsilon_, rel=1e-6)
    report = privacy_report(est)
    assert report.epsilon(est.delta_) == pytest.approx(est.epsilon_, rel=1e-6)


def test_the_l1_part_costs_no_privacy():
    """The proximal step is post-processing: an elastic net and the ridge with the same L2
    part (so the same public constants and plan) make the very same releases."""
    X, y = _data(n=1000, d=6)
    kw = dict(epsilon=2.0, data_norm=1.0, y_bound=Y_RANGE, schedule="hong", random_state=0)
    en = DPElasticNet(alpha=0.02, l1_ratio=0.5, **kw).fit(X, y)
    ridge = DPRidge(alpha=0.01, **kw).fit(X, y)
    assert len(en.releases_) == len(ridge.releases_)
    for a, b in zip(en.releases_, ridge.releases_):
        assert a.name == b.name
        np.testing.assert_array_equal(a.multipliers, b.multipliers)
        assert a.sensitivity == b.sensitivity
    np.testing.assert_array_equal(en.noise_multipliers_, ridge.noise_multipliers_)
    assert en.epsilon_ == ridge.epsilon_
    assert not np.array_equal(en.coef_, ridge.coef_)  # and the penalty did act


def test_auto_runs_gradient_descent_or_the_intercept_only_model():
    """'auto' never runs a mechanism that needs a smooth penalty, whatever the budget."""
    X, y = _data(n=1500, d=8)
    seen = set()
    for eps in (0.05, 0.5, 5.0, 1e3, 1e6, np.inf):
        est = DPElasticNet(epsilon=eps, data_norm=1.0, y_bound=Y_RANGE, random_state=0).fit(X, y)
        seen.add(est.mechanism_)
    assert seen <= {"gradient", "prior"} and "gradient" in seen
    # DPRidge on the same grid does use the sufficient statistics
    ridge = DPRidge(epsilon=1e3, data_norm=1.0, y_bound=Y_RANGE, random_state=0).fit(X, y)
    assert ridge.mechanism_ == "ssp"


def test_sparse_input_is_the_dense_model():
    X, y = _data(n=600, d=6)
    X[np.abs(X) < 0.1] = 0.0
    kw = dict(epsilon=2.0, data_norm=1.0, y_bound=Y_RANGE, random_state=1)
    dense = DPElasticNet(**kw).fit(X, y)
    csr = DPElasticNet(**kw).fit(sp.csr_matrix(X), y)
    np.testing.assert_allclose(csr.coef_, dense.coef_, rtol=1e-7, atol=1e-9)
    assert csr.intercept_ == pytest.approx(dense.intercept_, abs=1e-8)


@pytest.mark.parametrize("l1_ratio", [-0.1, 1.5, "half"])
def test_bad_l1_ratio_is_refused(l1_ratio):
    X, y = _data(n=100, d=6)
    est = DPElasticNet(l1_ratio=l1_ratio, data_norm=1.0, y_bound=Y_RANGE)
    with pytest.raises(ValueError, match="l1_ratio"):
        est.fit(X, y)
    assert not hasattr(est, "coef_")
