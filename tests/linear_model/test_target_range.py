"""Regression targets on a public range ``y_bound=(lo, hi)``: clipped, centred, predicted back."""

import numpy as np
import pytest
from sklearn.linear_model import Ridge
from sklearn.metrics import r2_score

from skdpgd import DPRidge, DPSGDRegressor
from skdpgd.model_selection import PrivateRandomSearchCV


@pytest.fixture(scope="module")
def data():
    # a score between 0 and 16, far from 0: what a scalar y_bound = 8 clips half of
    rng = np.random.default_rng(0)
    n = 2000
    X = rng.uniform(-1, 1, size=(n, 3)) / np.sqrt(3)
    y = np.clip(8 + 6 * np.sqrt(3) * X[:, 0] + rng.normal(size=n), 0, 16)
    return X, y


@pytest.mark.parametrize("Est", [DPRidge, DPSGDRegressor])
def test_a_range_is_the_centred_fit_with_the_centre_added_back(data, Est):
    X, y = data
    ranged = Est(epsilon=1.0, data_norm=1.0, y_bound=(0, 16), random_state=3).fit(X, y)
    centred = Est(epsilon=1.0, data_norm=1.0, y_bound=8.0, random_state=3).fit(X, y - 8.0)
    np.testing.assert_array_equal(ranged.coef_, centred.coef_)
    np.testing.assert_allclose(ranged.intercept_, centred.intercept_ + 8.0, rtol=0, atol=1e-12)
    np.testing.assert_allclose(ranged.predict(X), centred.predict(X) + 8.0, atol=1e-9)
    assert ranged.y_bound_ == 8.0 and ranged.y_range_ == (0.0, 16.0)
    assert ranged.epsilon_ == centred.epsilon_


@pytest.mark.parametrize("Est", [DPRidge, DPSGDRegressor])
def test_a_range_far_from_zero_beats_the_symmetric_bound_that_covers_it(data, Est):
    X, y = data
    half, full = [], []
    for seed in range(3):
        half.append(
            r2_score(
                y,
                Est(epsilon=1.0, data_norm=1.0, y_bound=8.0, random_state=seed)
                .fit(X, y)
                .predict(X),
            )
        )
        full.append(
            r2_score(
                y,
                Est(epsilon=1.0, data_norm=1.0, y_bound=(0, 16), random_state=seed)
                .fit(X, y)
                .predict(X),
            )
        )
    # y_bound=8 clips every target above 8: the range recovers the signal
    assert np.median(full) > 0.8 > np.median(half)


def test_a_scalar_bound_is_the_symmetric_range(data):
    X, y = data
    a = DPRidge(epsilon=1.0, data_norm=1.0, y_bound=16.0, random_state=0).fit(X, y)
    b = DPRidge(epsilon=1.0, data_norm=1.0, y_bound=(-16, 16), random_state=0).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert a.intercept_ == b.intercept_ and a.y_range_ == (-16.0, 16.0)


def test_without_noise_the_range_fit_converges_to_ridge(data):
    X, y = data
    dp = DPRidge(epsilon=np.inf, data_norm=1.0, y_bound=(0, 16), random_state=0).fit(X, y)
    ref = Ridge(alpha=1.0).fit(X, y)
    assert r2_score(y, dp.predict(X)) == pytest.approx(r2_score(y, ref.predict(X)), abs=5e-3)


@pytest.mark.parametrize("bad", [(3, 3), (4, 1), (0, np.inf), (1, 2, 3), ("a", "b")])
def test_a_bad_range_is_refused(data, bad):
    X, y = data
    with pytest.raises(ValueError, match="y_bound"):
        DPRidge(epsilon=1.0, data_norm=1.0, y_bound=bad).fit(X, y)


@pytest.mark.parametrize("Est", [DPRidge, DPSGDRegressor])
def test_an_off_centre_range_needs_an_intercept(data, Est):
    X, y = data
    est = Est(epsilon=1.0, data_norm=1.0, y_bound=(0, 16), fit_intercept=False)
    with pytest.raises(ValueError, match="fit_intercept"):
        est.fit(X, y)
    assert not hasattr(est, "coef_")
    Est(epsilon=1.0, data_norm=1.0, y_bound=(-16, 16), fit_intercept=False).fit(X, y)


def test_the_private_search_scores_on_the_estimators_range(data):
    X, y = data
    s = PrivateRandomSearchCV(
        DPRidge(data_norm=1.0, y_bound=(0, 16)),
        {"alpha": [1e-3, 1e-2]},
        epsilon=1.0,
        n_iter=3,
        random_state=0,
    ).fit(X, y)
    assert -256.0 <= s.best_score_ <= 0.0
    assert r2_score(y, s.predict(X)) > 0.5


def _unit_cases():
    from skdpgd import DPHuberRegressor

    return [
        ("ridge-auto", lambda c: DPRidge(y_bound=(0.0, 4.0 * c))),
        ("ridge-uniform", lambda c: DPRidge(y_bound=(0.0, 4.0 * c), schedule="uniform")),
        ("ridge-output", lambda c: DPRidge(y_bound=(0.0, 4.0 * c), schedule="output")),
        ("sgd", lambda c: DPSGDRegressor(y_bound=(0.0, 4.0 * c), n_samples=400)),
        # Huber's units are its public scale (the threshold is a multiple of it)
        ("huber", lambda c: DPHuberRegressor(y_bound=(0.0, 4.0 * c), scale=0.5 * c)),
    ]


@pytest.mark.parametrize(
    "case", range(5), ids=["ridge-auto", "ridge-uniform", "ridge-output", "sgd", "huber"]
)
@pytest.mark.parametrize("epsilon", [0.5, 3.0])
def test_the_default_does_not_depend_on_the_targets_units(case, epsilon):
    # fitting c * y with the public range scaled by c gives the same model times c: the
    # 'auto' penalty, the mechanism and every noise scale follow the units of y
    name, make = _unit_cases()[case]
    rng = np.random.default_rng(1)
    X = rng.normal(size=(400, 5)) / 3
    X /= np.linalg.norm(X, axis=1).max()
    y = np.clip(2.0 + X @ np.array([3.0, -2.0, 1.0, 0.0, 0.5]) + 0.3 * rng.normal(size=400), 0, 4)
    preds, alphas = [], []
    for c in (1.0, 1000.0, 1e-3):
        est = make(c).set_params(epsilon=epsilon, data_norm=1.0, random_state=0).fit(X, c * y)
        preds.append(est.predict(X) / c)
        alphas.append(est.alpha_)
    np.testing.assert_allclose(preds[1], preds[0], rtol=1e-7, atol=1e-9, err_msg=name)
    np.testing.assert_allclose(preds[2], preds[0], rtol=1e-7, atol=1e-9, err_msg=name)
    assert alphas[1] == pytest.approx(alphas[0], rel=1e-12)
    assert np.std(preds[0]) > 0  # a fit, not the intercept-only model
