"""DPPoissonRegressor: scikit-learn's PoissonRegressor without noise, its clipped gradient (the
sensitivity), its accounting, and its refusals."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_diabetes
from sklearn.linear_model import PoissonRegressor
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import MaxAbsScaler, StandardScaler

from skdpgd import DPPoissonRegressor, PrivacyLeakWarning, privacy_report
from skdpgd.accounting import compose_gdp, gdp_epsilon, gdp_mu
from skdpgd.linear_model import DPPoissonRegressor as FromLinearModel


def _data(n=1500, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) / np.sqrt(d)
    X /= max(1.0, np.linalg.norm(X, axis=1).max())
    y = rng.poisson(np.exp(X @ rng.normal(size=d) + 1.0)).astype(float)
    return X, y


@pytest.fixture(scope="module")
def diabetes():
    X, y = load_diabetes(return_X_y=True)  # disease progression, 25..346: positive
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


def test_reexported_from_linear_model():
    assert FromLinearModel is DPPoissonRegressor


@pytest.mark.parametrize("schedule", ["auto", "output"])
def test_near_poissonregressor_without_noise_generated(schedule):
    X, y = _data()
    dp = DPPoissonRegressor(
        epsilon=1e6, data_norm=1.0, y_bound=60.0, schedule=schedule, random_state=0
    ).fit(X, y)
    sk = PoissonRegressor(alpha=dp.alpha_, max_iter=3000).fit(X, y)
    assert abs(dp.score(X, y) - sk.score(X, y)) < 0.005
    # without noise (epsilon=inf) the clipped objective's minimiser is PoissonRegressor's (at
    # 1e6 the output perturbation's noise, sqrt(D) 2G / (N alpha mu), is still about 0.05)
    exact = DPPoissonRegressor(
        epsilon=np.inf, data_norm=1.0, y_bound=60.0, schedule=schedule, alpha=dp.alpha_
    ).fit(X, y)
    np.testing.assert_allclose(exact.coef_, sk.coef_, atol=0.01)
    assert exact.intercept_ == pytest.approx(sk.intercept_, abs=0.01)


def test_near_poissonregressor_without_noise_diabetes(diabetes):
    X, y = diabetes
    dp = DPPoissonRegressor(epsilon=1e6, data_norm=1.0, y_bound=400.0, random_state=0)
    dp.fit(X, y)
    sk = PoissonRegressor(alpha=dp.alpha_, max_iter=3000).fit(X, y)
    assert abs(dp.score(X, y) - sk.score(X, y)) < 0.005


def test_the_clip_bounds_one_example_gradient():
    """Per-example gradients of the Poisson loss are clipped to clip_norm by the kernels,
    for huge counts and huge margins alike (the sensitivity of every gradient release)."""
    from skdpgd._compute import kernels as K
    from skdpgd._compute.backends import DenseRows

    rng = np.random.default_rng(2)
    c, C = 0.5, 3.0
    x = rng.normal(size=(1, 3))
    x /= np.linalg.norm(x)
    for target in (0.0, 1e9, 7.0):
        rows = DenseRows(x, np.array([target]), np.ones(1), True)
        rows.clip_rows(1.0, c)
        for scale in (1e-3, 1.0, 1e3):  # margins near 0 and far beyond exp's range
            coef, b = rng.normal(size=(1, 3)) * scale, rng.normal(size=1) * scale
            g, gi, bad = rows.grad_sum(coef, b, K.LOSS_POISSON, 0.0, C / c)
            assert bad == 0
            assert c * np.sqrt(np.sum(g**2) + gi[0] ** 2) <= C * (1 + 1e-12)


def test_default_clip_norm_and_constants():
    X, y = _data(n=400)
    est = DPPoissonRegressor(epsilon=1.0, data_norm=1.0, y_bound=20.0, random_state=0)
    est.fit(X, y)
    # max(1, Y) * sqrt(R^2 + c^2) with c = 0.5 R
    assert est.clip_norm_ == pytest.approx(20.0 * np.sqrt(1.25))
    assert est.y_bound_ == 20.0
    small = DPPoissonRegressor(
        epsilon=1.0, data_norm=1.0, y_bound=0.5, fit_intercept=False, random_state=0
    ).fit(X, np.minimum(y, 0.5))
    assert small.clip_norm_ == pytest.approx(1.0)  # max(1, 0.5) * R


@pytest.mark.parametrize("epsilon,delta", [(0.3, 1e-6), (2.0, 1e-5)])
@pytest.mark.parametrize("neighbouring", ["replace", "add_remove"])
def test_epsilon_is_an_upper_bound_recomputed_independently(epsilon, delta, neighbouring):
    X, y = _data(n=800)
    est = DPPoissonRegressor(
        epsilon=epsilon,
        delta=delta,
        data_norm=1.0,
        y_bound=40.0,
        neighbouring=neighbouring,
        n_samples=800.0,
        random_state=0,
    ).fit(X, y)
    z = np.concatenate([r.multipliers for r in est.releases_])
    mu = float(np.sqrt(np.sum(z**-2.0)))  # Gaussian DP composition, by hand
    assert mu == pytest.approx(compose_gdp(z))
    assert est.mu_ == pytest.approx(mu, rel=1e-9)
    assert mu <= gdp_mu(epsilon, delta) * (1 + 1e-9)
    assert est.epsilon_ <= epsilon
    assert gdp_epsilon(delta, mu) == pytest.approx(est.epsilon_, rel=1e-6)


def test_sparse_is_the_dense_model():
    X, y = _data(n=600)
    X[np.abs(X) < 0.3] = 0.0
    for schedule in ("auto", "output", "uniform"):
        kw = dict(epsilon=2.0, data_norm=1.0, y_bound=40.0, schedule=schedule, random_state=1)
        dense = DPPoissonRegressor(**kw).fit(X, y)
        csr = DPPoissonRegressor(**kw).fit(sp.csr_matrix(X), y)
        np.testing.assert_allclose(csr.coef_, dense.coef_, rtol=1e-7, atol=1e-9)
        assert csr.intercept_ == pytest.approx(dense.intercept_, abs=1e-8)


def test_predictions_are_counts_and_negative_targets_are_clipped():
    X, y = _data(n=500)
    est = DPPoissonRegressor(epsilon=1e6, data_norm=1.0, y_bound=40.0, random_state=0)
    est.fit(X, y)
    assert np.all(est.predict(X) > 0)
    y_neg = y.copy()
    y_neg[:50] = -3.0  # clipped to 0: the same fit as zeros
    y_zero = y.copy()
    y_zero[:50] = 0.0
    a = DPPoissonRegressor(epsilon=1.0, data_norm=1.0, y_bound=40.0, random_state=0)
    b = DPPoissonRegressor(epsilon=1.0, data_norm=1.0, y_bound=40.0, random_state=0)
    np.testing.assert_array_equal(a.fit(X, y_neg).coef_, b.fit(X, y_zero).coef_)


def test_missing_bound_warns_and_pipeline_report():
    X, y = _data(n=600)
    with pytest.warns(PrivacyLeakWarning, match="y_bound"):
        DPPoissonRegressor(data_norm=1.0, random_state=0).fit(X, y)
    pipe = make_pipeline(
        MaxAbsScaler(), DPPoissonRegressor(epsilon=1.0, data_norm=3.0, y_bound=40.0, random_state=0)
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        pipe.fit(X, y)
    assert pipe.predict(X).shape == (600,)
    _check_report(pipe[-1])


@pytest.mark.parametrize(
    "params,match",
    [
        ({"y_bound": 0.0}, "y_bound"),
        ({"clip_norm": -1.0}, "clip_norm"),
        ({"y_bound": (1, 3)}, "y_bound"),  # a range of counts starts at 0
    ],
)
def test_bad_parameters_are_refused(params, match):
    X, y = _data(n=200)
    with pytest.raises(ValueError, match=match):
        DPPoissonRegressor(data_norm=1.0, **params).fit(X, y)


def test_several_targets_are_refused():
    X, y = _data(n=200)
    with pytest.raises(ValueError, match="fits one target"):
        DPPoissonRegressor(data_norm=1.0, y_bound=10.0).fit(X, np.column_stack([y, y]))


def test_fits_charged_to_a_shared_budget():
    from skdpgd import BudgetExceededError, PrivacyBudget

    X, y = _data(n=500)
    budget = PrivacyBudget(epsilon=1.0, delta=1e-5, neighbouring="replace")
    for _ in range(2):
        DPPoissonRegressor(
            epsilon=0.7, delta=4e-6, data_norm=1.0, y_bound=40.0, budget=budget, random_state=0
        ).fit(X, y)
    assert budget.spent_epsilon() <= 1.0  # Gaussian DP composition of two: 0.963
    with pytest.raises(BudgetExceededError):
        DPPoissonRegressor(epsilon=0.7, delta=4e-6, data_norm=1.0, y_bound=40.0, budget=budget).fit(
            X, y
        )


@pytest.mark.parametrize(
    "code,param,labels",
    [
        ("LOSS_POISSON", 0.0, (0.0, 3.0, 40.0)),
        ("LOSS_HUBER", 0.8, (-5.0, 0.2, 9.0)),
        ("LOSS_SQUARED_HINGE", 0.0, (-1.0, 1.0)),
    ],
)
def test_clipped_loss_value_has_the_clipped_derivative(code, param, labels):
    """The exact solver (output perturbation) minimises the value the kernels compute; its
    derivative must be the clipped derivative the gradient kernels sum (central differences
    over margins on both sides of every clip), and the value convex."""
    from skdpgd._compute import kernels as K

    loss = getattr(K, code)
    h = 1e-6
    for y in labels:
        for t in (0.5, 2.0, 30.0):  # clip thresholds in the derivative
            zs = np.linspace(-6.0, 6.0, 241)
            vals = np.array([K.loss_value(loss, np.array([z]), y, param, t) for z in zs])
            for z in zs[1:-1]:
                num = (
                    K.loss_value(loss, np.array([z + h]), y, param, t)
                    - K.loss_value(loss, np.array([z - h]), y, param, t)
                ) / (2 * h)
                d = K.dloss(loss, z, y, param)
                assert num == pytest.approx(np.clip(d, -t, t), abs=1e-5 * max(1.0, abs(d)))
            assert np.all(np.diff(vals, 2) >= -1e-9)  # convex


# --- y_bound as a pair (0, Y), as the other regressors take one ----------------------------
def test_a_range_from_zero_is_the_same_bound():
    X, y = _data(n=600)
    a = DPPoissonRegressor(data_norm=1.0, y_bound=20, random_state=0).fit(X, y)
    b = DPPoissonRegressor(data_norm=1.0, y_bound=(0, 20), random_state=0).fit(X, y)
    assert b.y_bound_ == 20.0
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert a.intercept_ == b.intercept_


@pytest.mark.parametrize("y_bound", [(1, 20), (-1, 20), (0, 0), (0, np.inf)])
def test_a_range_not_from_zero_is_refused_saying_what_to_pass(y_bound):
    X, y = _data(n=100)
    est = DPPoissonRegressor(data_norm=1.0, y_bound=y_bound)
    with pytest.raises(ValueError, match=r"y_bound=Y or y_bound=\(0, Y\)"):
        est.fit(X, y)
    assert not hasattr(est, "coef_")


# --- score on constant targets: scikit-learn's PoissonRegressor.score's answer --------------
@pytest.mark.parametrize("value", [3.0, 0.0])
def test_score_on_constant_targets_as_poissonregressor(value):
    X, y = _data(n=400)
    ours = DPPoissonRegressor(data_norm=1.0, y_bound=20, random_state=0).fit(X, y)
    theirs = PoissonRegressor().fit(X, y)
    target = np.full(X.shape[0], value)
    with pytest.warns(RuntimeWarning):
        got = ours.score(X, target)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        expected = theirs.score(X, target)
    if np.isnan(expected):
        assert np.isnan(got)
    else:  # scikit-learn's null deviance rounds to a tiny number: -inf in exact arithmetic
        assert got == -np.inf and expected < -1e6
