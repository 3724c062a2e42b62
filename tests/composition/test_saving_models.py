"""Saving fitted models: pickle and skops round trips of every fitted public estimator, with
and without a PrivacyBudget. A loaded model predicts as the saved one did; skops needs to trust
the estimator's class, Release and PrivacyBudget only (no lock); a loaded budget is a detached
snapshot that reports what was spent and refuses every charge."""

import importlib.util
import pickle

import numpy as np
import pytest
from sklearn.base import is_regressor

from skdpgd import (
    DPHuberRegressor,
    DPLinearSVC,
    DPLogisticRegression,
    DPMLPClassifier,
    DPPoissonRegressor,
    DPRidge,
    DPSGDClassifier,
    DPSGDRegressor,
    PrivacyBudget,
    privacy_report,
)
from skdpgd.accounting import Release
from skdpgd.decomposition import DPPCA
from skdpgd.preprocessing import DPStandardScaler

sio = pytest.importorskip("skops.io")
HAS_TORCH = importlib.util.find_spec("torch") is not None

N = 400


def _factories():
    out = [
        lambda: DPLogisticRegression(data_norm=1.0, classes=[0, 1]),
        lambda: DPRidge(data_norm=1.0, y_bound=(-1, 1)),
        lambda: DPSGDClassifier(data_norm=1.0, classes=[0, 1], n_samples=N),
        lambda: DPSGDRegressor(data_norm=1.0, y_bound=(-1, 1), n_samples=N),
        lambda: DPHuberRegressor(data_norm=1.0),
        lambda: DPPoissonRegressor(data_norm=1.0, y_bound=2.0),
        lambda: DPLinearSVC(data_norm=1.0, classes=[0, 1]),
        lambda: DPPCA(n_components=2, data_norm=1.0),
        lambda: DPStandardScaler(bounds=(-1, 1), n_samples=N),
    ]
    if HAS_TORCH:
        out.append(
            lambda: DPMLPClassifier(
                hidden_layer_sizes=(4,), max_iter=5, classes=[0, 1], n_samples=N
            )
        )
    return out


FACTORIES = _factories()


def _fitted(make, budget):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(N, 3)) / 4
    est = make().set_params(budget=budget, random_state=0)
    if is_regressor(est):
        y = np.abs(X[:, 0]) if isinstance(est, DPPoissonRegressor) else X[:, 0] + 0.1
    else:
        y = (X[:, 0] > 0).astype(int)
    return est.fit(X, y), X


def _outputs(est, X):
    if hasattr(est, "predict"):
        return est.predict(X)
    return est.transform(X)


def _skops_roundtrip(est):
    data = sio.dumps(est)
    untrusted = sio.get_untrusted_types(data=data)
    return sio.loads(data, trusted=untrusted), untrusted


def _ids():
    return [type(f()).__name__ for f in FACTORIES]


@pytest.mark.parametrize("make", FACTORIES, ids=_ids())
@pytest.mark.parametrize("with_budget", [False, True], ids=["no budget", "budget"])
def test_pickle_and_skops_round_trips_predict_the_same(make, with_budget):
    budget = PrivacyBudget(epsilon=50.0, delta=1e-5) if with_budget else None
    est, X = _fitted(make, budget)
    expected = _outputs(est, X)
    pickled = pickle.loads(pickle.dumps(est))
    skopsed, untrusted = _skops_roundtrip(est)
    # what a user must trust with skops: the estimator's class and the package's two plain
    # record types, never a lock or any other object
    allowed = {
        f"{type(est).__module__}.{type(est).__name__}",
        "skdpgd.accounting.events.Release",
        "skdpgd.budget.PrivacyBudget",
    }
    assert set(untrusted) <= allowed
    assert not any("lock" in t for t in untrusted)
    for loaded in (pickled, skopsed):
        np.testing.assert_array_equal(_outputs(loaded, X), expected)
        assert all(isinstance(r, Release) for r in loaded.releases_)
        assert [r.name for r in loaded.releases_] == [r.name for r in est.releases_]
        assert loaded.epsilon_ == est.epsilon_
        rep, rep0 = privacy_report(loaded), privacy_report(est)
        np.testing.assert_array_equal(rep.epsilons, rep0.epsilons)
        if with_budget:
            copy_ = loaded.budget
            assert copy_ is not budget and copy_.detached and not budget.detached
            assert copy_.spent_epsilon() == budget.spent_epsilon()
            assert [e["label"] for e in copy_.entries] == [e["label"] for e in budget.entries]
        else:
            assert loaded.budget is None


def test_a_loaded_budget_refuses_every_charge_and_the_live_one_still_charges():
    budget = PrivacyBudget(epsilon=4.0, delta=1e-5)
    est, X = _fitted(FACTORIES[0], budget)
    spent = budget.spent_epsilon()
    small = [Release("a count", [1e6], {"replace": 1.0, "add_remove": 1.0}, "add_remove")]
    for loaded in (pickle.loads(pickle.dumps(est)), _skops_roundtrip(est)[0]):
        copy_ = loaded.budget
        with pytest.raises(RuntimeError, match="detached"):
            copy_.charge(small, label="tiny")
        with pytest.raises(RuntimeError, match="detached"):
            copy_.check(small)
        assert copy_.spent_epsilon() == spent and len(copy_.entries) == len(budget.entries)
        # a fit with the loaded model's detached budget is refused before anything is set
        with pytest.raises(RuntimeError, match="detached"):
            loaded.set_params(random_state=1).fit(X, (X[:, 0] > 0).astype(int))
    # the live budget is untouched by the copies: it admits what fits and refuses the rest
    budget.charge(small, label="tiny")
    assert budget.entries[-1]["label"] == "tiny"
    from skdpgd import BudgetExceededError

    big = [Release("a sum", [0.01], {"replace": 1.0, "add_remove": 1.0}, "add_remove")]
    n = len(budget.entries)
    with pytest.raises(BudgetExceededError):
        budget.charge(big, label="too much")
    assert len(budget.entries) == n and budget.spent_epsilon() > spent


def test_a_budget_saves_plain_data_and_loads_checked():
    budget = PrivacyBudget(epsilon=2.0, delta=1e-6, neighbouring="replace")
    budget.charge([Release("s", [3.0], {"replace": 2.0, "add_remove": 1.0}, "replace")], "x")
    state = budget.__getstate__()

    def plain(v):
        if isinstance(v, dict):
            return all(isinstance(k, str) and plain(x) for k, x in v.items())
        if isinstance(v, list):
            return all(plain(x) for x in v)
        return isinstance(v, (str, int, float)) or v is None

    assert plain(state)
    loaded = sio.loads(sio.dumps(budget), trusted=["skdpgd.budget.PrivacyBudget"])
    assert loaded.detached and loaded.neighbouring == "replace"
    assert loaded.entries[0]["releases"][0].sensitivity == {"replace": 2.0, "add_remove": 1.0}
    assert loaded.spent_epsilon() == budget.spent_epsilon()
    # a state that a new budget would refuse is refused on load too
    bad = dict(state, epsilon=-1.0)
    with pytest.raises(ValueError):
        PrivacyBudget.__new__(PrivacyBudget).__setstate__(bad)
