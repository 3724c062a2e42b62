"""The regressors' floor: an accounted choice between the fit and the intercept-only model.

Below the ratio of ``policy.AUTO_REGRESSION_SELECT`` a regressor with an intercept and a public
target range releases its clipped target sum (the intercept-only model), fits, and releases
``sum_i w_i sign(|y_i - p0_i| - |y_i - p1_i|)``: rows whose clipped target the fit predicts
closer than the intercept-only model, minus rows it predicts farther. Each term lies in
[-1, 1] whatever the targets' range, so the release has sensitivity 2 (replace-one) or 1
(add/remove-one), and every release is made whatever the data: exact GDP composition.
"""

import numpy as np
import pytest
import scipy.sparse as sp

from skdpgd import DPHuberRegressor, DPPoissonRegressor, DPRidge, policy
from skdpgd._compute.backends import CSRRows, DenseRows
from skdpgd._full_batch.mechanisms import SELECTION_SENSITIVITY
from skdpgd.accounting import gdp_mu


def _reference(X, y, w, fit, prior, log_link):
    def predict(model):
        z = X @ np.asarray(model[0])[0] + np.asarray(model[1])[0]
        return np.exp(z) if log_link else z

    d1, d0 = np.abs(y - predict(fit)), np.abs(y - predict(prior))
    return float(np.sum(w * (np.sign(d0 - d1))))


@pytest.mark.parametrize("log_link", [False, True])
@pytest.mark.parametrize("kind", ["dense", "csr", "dask"])
def test_closer_sum_matches_a_numpy_reference(kind, log_link):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 4)) * rng.uniform(0.1, 2.0, size=(600, 1))
    y = rng.poisson(2.0, 600).astype(float) if log_link else rng.normal(size=600)
    y[:50] = 0.3  # ties with the prior's prediction below
    w = rng.uniform(0, 1, 600)
    fit = (rng.normal(size=(1, 4)) * 0.3, np.array([0.2]))
    prior = (np.zeros((1, 4)), np.array([np.log(0.3) if log_link else 0.3]))
    if kind == "dask":
        da = pytest.importorskip("dask.array")
        from skdpgd._compute.dask_backend import DaskRows

        rows = DaskRows(da.from_array(X, chunks=(128, 4)), y, w, True)
    else:
        rows = (DenseRows if kind == "dense" else CSRRows)(
            X if kind == "dense" else sp.csr_matrix(X), y, w, True
        )
    rows.clip_rows(0.5, 0.7)  # the fit's coordinates do not enter the comparison
    got = rows.closer_sum(fit, prior, log_link=log_link)
    assert got == pytest.approx(_reference(X, y, w, fit, prior, log_link), rel=1e-12, abs=1e-9)


def test_each_row_moves_the_comparison_by_at_most_one():
    # the sensitivity: one row's term is w_i * (+1, 0 or -1) whatever its target
    rng = np.random.default_rng(1)
    X = rng.normal(size=(50, 3))
    fit, prior = (rng.normal(size=(1, 3)), np.array([0.0])), (np.zeros((1, 3)), np.array([0.5]))
    base = DenseRows(X, rng.normal(size=50), np.ones(50), True)
    for target in (-1e300, -3.0, 0.0, 0.5, 7.0, 1e300):
        y = base.y.copy()
        y[0] = target
        one = DenseRows(X, y, np.ones(50), True).closer_sum(fit, prior)
        rest = DenseRows(X[1:], y[1:], np.ones(49), True).closer_sum(fit, prior)
        assert abs(one - rest) <= SELECTION_SENSITIVITY["add_remove"]
    # replacing a row's target moves the sum by at most 2, and by exactly 2 for some rows
    moves = []
    for i in range(50):
        a, b = base.y.copy(), base.y.copy()
        z = X[i] @ fit[0][0]
        a[i], b[i] = z, 0.5  # predicted exactly by the fit, then by the prior
        moves.append(
            DenseRows(X, a, np.ones(50), True).closer_sum(fit, prior)
            - DenseRows(X, b, np.ones(50), True).closer_sum(fit, prior)
        )
    assert max(abs(m) for m in moves) <= SELECTION_SENSITIVITY["replace"]
    assert max(abs(m) for m in moves) == SELECTION_SENSITIVITY["replace"]


def _capture(monkeypatch):
    from skdpgd._compute.backends import Rows

    seen = []
    original = Rows.closer_sum

    def wrapped(self, fit, prior, log_link=False):
        out = original(self, fit, prior, log_link)
        seen.append((out, fit, prior))
        return out

    monkeypatch.setattr(Rows, "closer_sum", wrapped)
    return seen


def _data(n, seed=0, poisson=False):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    X /= np.linalg.norm(X, axis=1).max()
    z = X @ np.array([2.0, -1.5, 1.0, 0.0])
    if poisson:
        return X, rng.poisson(np.exp(1.0 + z)).astype(float)
    return X, 5.0 + 3.0 * z + 0.2 * rng.normal(size=n)


CASES = {
    "ridge-ssp": (DPRidge, {"y_bound": (0.0, 10.0)}),
    "ridge-uniform": (DPRidge, {"y_bound": (0.0, 10.0)}),
    "ridge-output": (DPRidge, {"y_bound": (0.0, 10.0)}),
    "huber": (DPHuberRegressor, {"y_bound": (0.0, 10.0)}),
    "poisson": (DPPoissonRegressor, {"y_bound": 20.0}),
}


class _WithSelection:
    """A schedule: another schedule's plan with the target sum and the selection added."""

    def __init__(self, name):
        from skdpgd.schedules import get_schedule

        self.inner = get_schedule(name)
        self.name = self.inner.name

    def plan(self, problem, mu, max_iter=None):
        from dataclasses import replace

        plan = self.inner.plan(problem, mu, max_iter)
        return replace(plan, prior_share=0.05, select_share=0.05)


def _selecting(name):
    """The estimator with the selection on whatever the ratio: 'auto' with the rule's ratio
    infinite, or a fixed mechanism's plan with the selection added."""
    from skdpgd.schedules import Auto

    cls, params = CASES[name]
    if name in ("ridge-uniform", "ridge-output"):
        return cls(schedule=_WithSelection(name.split("-")[1]), **params)
    return cls(schedule=Auto(select=(np.inf, 0.05, 0.05)), **params)


@pytest.mark.parametrize("name", list(CASES))
def test_the_selection_compares_what_the_released_models_predict(monkeypatch, name):
    # the noise-free comparison equals the one computed from each released model's predict
    # (clipped targets: the comparison reads the clipped, centred targets the fit saw)
    X, y = _data(3000, poisson=name == "poisson")
    seen = _capture(monkeypatch)
    for bias, kept in ((1e12, True), (-1e12, False)):
        seen.clear()
        with policy.using(AUTO_SELECT_BIAS=bias):
            est = _selecting(name).set_params(epsilon=2.0, data_norm=1.0, random_state=0)
            est.fit(X, y)
        assert est.releases_[-1].name.startswith("selection")
        assert (est.mechanism_ != "prior") == kept
        ((closer, fit, prior),) = seen
        lo, hi = est.y_range_ if name != "poisson" else (0.0, 20.0)
        yc = np.clip(y, lo, hi)
        released = est.predict(X)
        if kept:
            other = prior[1][0] + (0.0 if name == "poisson" else (lo + hi) / 2)
            other = np.exp(prior[1][0]) if name == "poisson" else other
            d1, d0 = np.abs(yc - released), np.abs(yc - other)
        else:
            z = X @ fit[0][0] + fit[1][0]
            mine = np.exp(z) if name == "poisson" else z + (lo + hi) / 2
            d1, d0 = np.abs(yc - mine), np.abs(yc - released)
        assert closer == pytest.approx(float(np.sum(np.sign(d0 - d1))), abs=1e-9)


def test_the_selection_is_a_release_with_its_sensitivity_and_composes_exactly():
    X, y = _data(2000)
    est = _selecting("ridge-ssp").set_params(epsilon=1.0, data_norm=1.0, random_state=0)
    est.fit(X, y)
    names = [r.name for r in est.releases_]
    assert names[-1] == "selection: fit minus prior, rows predicted closer"
    assert names[-2] == "target sum (start)"
    sel = est.releases_[-1]
    for relation, value in SELECTION_SENSITIVITY.items():
        assert sel.sensitivity[relation] >= value
    inv2 = [float(np.sum(r.multipliers**-2.0)) for r in est.releases_]
    assert inv2[-1] / sum(inv2) == pytest.approx(0.05, rel=1e-9)
    assert inv2[-2] / sum(inv2) == pytest.approx(0.05, rel=1e-9)
    assert est.mu_ == pytest.approx(gdp_mu(1.0, est.delta_), rel=1e-9)
    assert est.epsilon_ <= 1.0


def test_a_fit_without_signal_falls_back_and_a_strong_fit_is_kept():
    X, y = _data(2000)
    kept = [
        _selecting("ridge-ssp").set_params(epsilon=1.0, data_norm=1.0, random_state=s).fit(X, y)
        for s in range(5)
    ]
    assert all(e.mechanism_ == "ssp" for e in kept)
    assert min(e.score(X, y) for e in kept) > 0.8
    # targets independent of X: the fit's noise only moves predictions away from the mean
    rng = np.random.default_rng(2)
    y = 5.0 + rng.normal(size=2000)
    fits = [
        _selecting(name).set_params(epsilon=1.0, data_norm=1.0, random_state=s).fit(X, y)
        for s in range(8)
        for name in ("ridge-uniform", "ridge-ssp")
    ]
    assert [f.mechanism_ for f in fits].count("prior") >= 12
    assert min(f.score(X, y) for f in fits) > -0.03


def test_the_default_selects_below_its_ratio_only():
    X, y = _data(400)
    low = DPRidge(epsilon=0.3, data_norm=1.0, y_bound=(0.0, 10.0), random_state=0).fit(X, y)
    assert low.releases_[-1].name.startswith("selection")
    with policy.using(AUTO_REGRESSION_SELECT=None):
        off = DPRidge(epsilon=0.3, data_norm=1.0, y_bound=(0.0, 10.0), random_state=0).fit(X, y)
    assert not any(r.name.startswith("selection") for r in off.releases_)
    high = DPRidge(epsilon=np.inf, data_norm=1.0, y_bound=(0.0, 10.0)).fit(X, y)
    assert not any(r.name.startswith("selection") for r in high.releases_)


def test_dp_sgd_regressor_floor_compares_what_the_released_models_predict(monkeypatch):
    # the minibatch road's floor (off by default: policy.SGD_REGRESSION_SELECT): the target sum
    # starts the steps, the comparison reads both released models on the rows as given
    from skdpgd import DPSGDRegressor

    X, y = _data(3000)
    seen = _capture(monkeypatch)
    for bias, kept in ((1e12, True), (-1e12, False)):
        seen.clear()
        with policy.using(SGD_REGRESSION_SELECT=(np.inf, 0.05, 0.05), AUTO_SELECT_BIAS=bias):
            est = DPSGDRegressor(
                epsilon=2.0, data_norm=1.0, y_bound=(0.0, 10.0), random_state=0
            ).fit(X, y)
        names = [r.name for r in est.releases_]
        assert names[-3:] == [
            "target sum (start)",
            "gradient sums",
            "selection: fit minus prior, rows predicted closer",
        ]
        sel, target = est.releases_[-1], est.releases_[-3]
        assert sel.sensitivity["add_remove"] >= SELECTION_SENSITIVITY["add_remove"]
        assert target.sensitivity["add_remove"] >= 5.0  # Y, the range's half-width
        # closed forms: each fixed release spends its share of the whole budget's mu^2,
        # z = 1 / (sqrt(share) mu) (the ratio here is large: the target's share is the base 5%)
        mu = gdp_mu(2.0, est.delta_)
        share = policy.regression_target_share(0.05, policy.signal_to_noise(3000, 5, mu))
        assert share == 0.05
        assert target.multipliers[0] == pytest.approx(1 / (np.sqrt(share) * mu), rel=1e-12)
        assert sel.multipliers[0] == pytest.approx(1 / (np.sqrt(0.05) * mu), rel=1e-12)
        assert est.prior_switch_["decision"] == "selection"
        assert est.prior_switch_["branch"] == ("sgd" if kept else "prior")
        assert est.epsilon_ <= 2.0 + 1e-9
        ((closer, fit, prior),) = seen
        yc = np.clip(y, 0.0, 10.0)
        released = est.predict(X)
        if kept:
            d1, d0 = np.abs(yc - released), np.abs(yc - (prior[1][0] + 5.0))
        else:
            assert np.all(est.coef_ == 0)
            d1 = np.abs(yc - (X @ fit[0][0] + fit[1][0] + 5.0))
            d0 = np.abs(yc - released)
        assert closer == pytest.approx(float(np.sum(np.sign(d0 - d1))), abs=1e-9)


def test_dp_sgd_regressor_keeps_its_fit_by_default():
    from skdpgd import DPSGDRegressor

    X, y = _data(400)
    est = DPSGDRegressor(epsilon=0.3, data_norm=1.0, y_bound=(0.0, 10.0), random_state=0)
    est.fit(X, y)
    assert not any(r.name.startswith("selection") for r in est.releases_)
    assert est.prior_switch_ is None
