"""Targets outside a regressor's public range ``y_bound`` are clipped; this is never silent:
a free warning when a release the fit makes anyway (the mean of the clipped targets) shows
it, and an opt-in accounted count of the targets outside the range."""

import contextlib
import math
import warnings

import numpy as np
import pytest

from skdpgd import (
    BudgetExceededError,
    DPPoissonRegressor,
    DPRidge,
    PrivacyBudget,
    PrivacyUsageWarning,
)
from skdpgd._core.prior import targets_at_bound
from skdpgd._core.transaction import collected_warnings, defer_warning, fit_transaction
from skdpgd.accounting import gdp_mu
from skdpgd.model_selection import PrivateRandomSearchCV
from skdpgd.preprocessing import out_of_range_target_count
from _support.poison import Poison


def _rows(n=2000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 3)) / np.sqrt(3)
    return X, X @ np.array([1.0, -1.0, 0.5]) + 0.1 * rng.normal(size=n)


def _usage(fit):
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        fit()
    return [str(w.message) for w in record if issubclass(w.category, PrivacyUsageWarning)]


def test_targets_far_outside_the_range_warn_for_free():
    X, y = _rows()
    y50 = 50.0 + y
    est = DPRidge(y_bound=(0, 1), data_norm=1.0, random_state=0)
    messages = _usage(lambda: est.fit(X, y50))
    assert len(messages) == 1
    assert "upper end" in messages[0] and "out_of_range_target_count" in messages[0]
    assert est.score(X, y50) < 0  # what the warning is about: far worse than the mean
    below = _usage(lambda: DPRidge(y_bound=(100, 200), data_norm=1.0, random_state=0).fit(X, y50))
    assert len(below) == 1 and "lower end" in below[0]


def test_targets_inside_the_range_do_not_warn():
    X, y = _rows()
    assert _usage(lambda: DPRidge(y_bound=2.0, data_norm=1.0, random_state=0).fit(X, y)) == []
    assert (
        _usage(lambda: DPRidge(y_bound=(48, 53), data_norm=1.0, random_state=0).fit(X, 50 + y))
        == []
    )


def test_counts_above_the_bound_warn():
    X, _ = _rows()
    y = np.full(X.shape[0], 40.0)
    messages = _usage(
        lambda: DPPoissonRegressor(y_bound=(0, 10), data_norm=1.0, random_state=0).fit(X, y)
    )
    assert len(messages) == 1 and "top fifth" in messages[0]
    # counts at 0 are the bottom of their range, not a sign of clipping
    zeros = np.zeros(X.shape[0])
    assert (
        _usage(lambda: DPPoissonRegressor(y_bound=10, data_norm=1.0, random_state=0).fit(X, zeros))
        == []
    )


@pytest.mark.parametrize(
    "mean, noise_sd, warns",
    [
        (0.95, 0.01, True),
        (-0.95, 0.01, True),
        (0.85, 0.01, False),
        (0.95, 0.05, False),
        (1.0, 0.04, True),
        (np.nan, 0.01, False),
    ],
)
def test_the_free_warning_is_a_function_of_the_released_mean_alone(mean, noise_sd, warns):
    """0.9 of the half-width beyond 2 noise standard deviations: then at least half of the
    (clipped) targets lie above 0.8 of it."""
    assert (targets_at_bound(mean, noise_sd, 1.0) is not None) is warns


def test_a_deferred_warning_is_emitted_only_when_the_fit_succeeds():
    class Fit:
        pass

    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        with pytest.raises(RuntimeError):
            with fit_transaction(Fit()):
                defer_warning("from a release", PrivacyUsageWarning)
                raise RuntimeError("the fit failed")
        assert record == []
        with fit_transaction(Fit()):
            defer_warning("from a release", PrivacyUsageWarning)
            assert record == []  # not before the fit ends
        assert [str(w.message) for w in record] == ["from a release"]
        with collected_warnings() as held:
            with fit_transaction(Fit()):
                defer_warning("held", PrivacyUsageWarning)
        assert len(record) == 1 and held == [("held", PrivacyUsageWarning)]


def test_the_search_emits_its_winners_warning_only(monkeypatch):
    """Every trial releases a target mean at the bound; the losing trials and their number are
    secret, so one warning comes out, the winner's."""
    X, y = _rows(n=2000)

    def search():
        return PrivateRandomSearchCV(
            DPRidge(y_bound=(0, 1), data_norm=1.0),
            {"alpha": ["auto"]},  # its default: here each trial releases its targets' mean
            epsilon=3.0,
            n_iter=6,
            random_state=0,
        )

    one = search()
    assert len(_usage(lambda: one.fit(X, 50.0 + y))) == 1
    assert one.best_estimator_.mechanism_ == "prior"  # it released its targets' mean
    # the same search, its trials' warnings not held: one per trial, and there were several
    monkeypatch.setattr(
        "skdpgd.model_selection.collected_warnings", lambda: contextlib.nullcontext([])
    )
    assert len(_usage(lambda: search().fit(X, 50.0 + y))) > 1


# --- the accounted count -----------------------------------------------------------------
def test_the_count_finds_the_targets_outside_the_range():
    y = np.r_[np.full(300, -3.0), np.zeros(1000), np.full(700, 9.0)]
    check = out_of_range_target_count(y, (-1, 5), epsilon=5.0, random_state=0)
    assert check.range == (-1.0, 5.0)
    assert abs(check.below - 300) < 6 * check.noise_std
    assert abs(check.above - 700) < 6 * check.noise_std
    assert check.epsilon_ <= 5.0 and check.delta_ == pytest.approx(min(1e-5, 1 / 2000**2))
    symmetric = out_of_range_target_count(y, 2.0, epsilon=5.0, random_state=0)
    assert symmetric.range == (-2.0, 2.0)


@pytest.mark.parametrize(
    "neighbouring, sensitivity", [("replace", math.sqrt(2)), ("add_remove", 1.0)]
)
def test_the_count_noise_is_its_sensitivity_over_mu(neighbouring, sensitivity):
    """(below, above): one replaced row leaves one count and enters the other (L2 sqrt(2));
    one added or removed row moves one count by 1."""
    y = np.zeros(500)
    check = out_of_range_target_count(
        y, 1.0, epsilon=1.0, delta=1e-6, neighbouring=neighbouring, random_state=0
    )
    assert check.noise_std == pytest.approx(sensitivity / gdp_mu(1.0, 1e-6), rel=1e-6)
    assert check.noise_std >= sensitivity / gdp_mu(1.0, 1e-6)
    assert check.epsilon_ <= 1.0


def test_the_count_is_charged_and_a_refusal_reads_nothing():
    budget = PrivacyBudget(1.0, 1e-5)
    out_of_range_target_count(np.zeros(100), 1.0, epsilon=0.5, delta=1e-6, budget=budget)
    assert budget.spent_epsilon() > 0
    small = PrivacyBudget(0.1, 1e-5)
    with pytest.raises(BudgetExceededError):
        out_of_range_target_count(np.zeros(100), 1.0, epsilon=1.0, delta=1e-6, budget=small)
    for bad in ({"epsilon": 0}, {"epsilon": np.inf}, {"epsilon": 1.0, "neighbouring": "x"}):
        with pytest.raises(ValueError):
            out_of_range_target_count(Poison(), 1.0, **bad)
    for y_bound in ((1, 1), (2, 1), "a", -1.0, (0, np.inf)):
        with pytest.raises(ValueError, match="y_bound"):
            out_of_range_target_count(Poison(), y_bound, epsilon=1.0)


def test_the_count_is_charged_to_the_default_budget():
    import skdpgd
    from skdpgd import PrivacyBudget

    budget = PrivacyBudget(epsilon=1.0, delta=1e-6, neighbouring="replace")
    with skdpgd.config_context(budget=budget):
        out_of_range_target_count(np.full(100, 5.0), (0, 1), epsilon=0.5, delta=1e-7)
    assert len(budget.charges) == 1 and 0 < budget.spent_epsilon() <= 0.5 + 1e-9
