"""A default budget: skdpgd.config_context(budget=...) and skdpgd.set_config(budget=...).

Every private fit, search, private pipeline and private metric that starts inside the setting
with budget=None is charged to it; an explicit budget= wins; the setting is thread-local; the
default budget is never stored on the estimator."""

import threading

import numpy as np
import pytest

import skdpgd
from skdpgd import BudgetExceededError, DPLogisticRegression, PrivacyBudget
from skdpgd.metrics import dp_accuracy_score


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 3)) / 3
    y = (X[:, 0] - X[:, 1] > 0).astype(int)
    return X, y


def _lr(**kw):
    return DPLogisticRegression(data_norm=2.0, classes=[0, 1], **kw)


def test_two_fits_in_the_context_are_both_charged(data):
    X, y = data
    budget = PrivacyBudget(epsilon=3.0, delta=1e-6)
    with skdpgd.config_context(budget=budget):
        a = _lr(epsilon=0.5, random_state=0).fit(X, y)
        b = _lr(epsilon=0.7, random_state=1).fit(X, y)
        assert skdpgd.get_config()["budget"] is budget
    assert skdpgd.get_config()["budget"] is None  # restored on exit
    assert [e["label"] for e in budget.entries] == ["DPLogisticRegression"] * 2
    # the ledger holds both fits' releases, and composes to more than either alone
    assert len(budget.charges) == len(a.releases_) + len(b.releases_)
    assert budget.spent_epsilon() > max(a.epsilon_, b.epsilon_)
    # the fits ran under the budget's relation, and nothing of the setting is stored on them
    assert a.neighbouring_ == "add/remove-one" and a.budget is None and b.budget is None
    # a fit after the block is not charged
    _lr(epsilon=0.5, random_state=2).fit(X, y)
    assert len(budget.entries) == 2


def test_a_fit_that_would_overspend_is_refused_and_releases_nothing(data):
    X, y = data
    budget = PrivacyBudget(epsilon=1.0, delta=1e-6)
    with skdpgd.config_context(budget=budget):
        _lr(epsilon=0.8, delta=1e-6, random_state=0).fit(X, y)
        spent, n = budget.spent_epsilon(), len(budget.charges)
        # an explicit delta: the budget refuses the fit's public upper bound before any draw
        est = _lr(epsilon=0.8, delta=1e-6, random_state=1)
        with pytest.raises(BudgetExceededError, match="Nothing was released"):
            est.fit(X, y)
    assert not hasattr(est, "coef_") and not hasattr(est, "releases_")
    assert budget.spent_epsilon() == spent and len(budget.charges) == n


def test_an_explicit_budget_wins_and_false_clears_the_default(data):
    X, y = data
    default, own = PrivacyBudget(3.0, 1e-6), PrivacyBudget(3.0, 1e-6)
    with skdpgd.config_context(budget=default):
        _lr(epsilon=0.5, budget=own, random_state=0).fit(X, y)
        with skdpgd.config_context(budget=False):
            assert skdpgd.get_config()["budget"] is None
            _lr(epsilon=0.5, random_state=0).fit(X, y)
        assert skdpgd.get_config()["budget"] is default
    assert default.entries == [] and len(own.entries) == 1


def test_set_config_sets_the_default_until_cleared(data):
    X, y = data
    budget = PrivacyBudget(3.0, 1e-6)
    try:
        skdpgd.set_config(budget=budget)
        _lr(epsilon=0.5, random_state=0).fit(X, y)
        skdpgd.set_config(secure_noise=False)  # None leaves the budget as it is
        assert skdpgd.get_config()["budget"] is budget
    finally:
        skdpgd.set_config(budget=False)
    assert skdpgd.get_config()["budget"] is None
    _lr(epsilon=0.5, random_state=0).fit(X, y)
    assert len(budget.entries) == 1


def test_threads_do_not_share_a_context_budget(data):
    X, y = data
    main_budget, thread_budget = PrivacyBudget(3.0, 1e-6), PrivacyBudget(3.0, 1e-6)
    seen = {}

    def in_thread():
        seen["start"] = skdpgd.get_config()["budget"]
        _lr(epsilon=0.5, random_state=0).fit(X, y)  # no default budget in this thread
        with skdpgd.config_context(budget=thread_budget):
            _lr(epsilon=0.5, random_state=1).fit(X, y)
            seen["inside"] = skdpgd.get_config()["budget"]

    with skdpgd.config_context(budget=main_budget):
        t = threading.Thread(target=in_thread)
        t.start()
        t.join()
        assert skdpgd.get_config()["budget"] is main_budget  # the thread's block did not leak
    assert seen == {"start": None, "inside": thread_budget}
    assert main_budget.entries == [] and len(thread_budget.entries) == 1


def test_a_default_budget_must_be_a_budget():
    with pytest.raises(TypeError, match="PrivacyBudget"):
        with skdpgd.config_context(budget=3.0):
            pass
    with pytest.raises(TypeError, match="PrivacyBudget"):
        skdpgd.set_config(budget="all of it")
    assert skdpgd.get_config()["budget"] is None


def test_a_search_in_the_context_is_charged_once_and_its_trials_never(data):
    from skdpgd.model_selection import PrivateRandomSearchCV

    X, y = data
    budget = PrivacyBudget(2.0, 1e-5, neighbouring="replace")
    grid = {"alpha": ["auto", 1e-3]}
    with skdpgd.config_context(budget=budget):
        s = PrivateRandomSearchCV(
            _lr(), grid, epsilon=1.0, delta=1e-5, n_iter=3, random_state=0
        ).fit(X, y)
    assert [e["label"] for e in budget.entries] == ["PrivateRandomSearchCV"]
    assert len(budget.rdp_charges) == 1 and not budget.charges
    assert budget.spent_epsilon() == pytest.approx(s.epsilon_, rel=1e-12)
    assert s.best_estimator_.budget is None


def test_a_private_pipeline_in_the_context_is_charged(data):
    from skdpgd.pipeline import PrivatePipeline
    from skdpgd.preprocessing import BoundedScaler

    X, y = data
    budget = PrivacyBudget(3.0, 1e-6)
    pipe = PrivatePipeline(
        [("scale", BoundedScaler(bounds=(-3, 3))), ("clf", DPLogisticRegression(classes=[0, 1]))],
        epsilon=1.0,
        random_state=0,
    )
    with skdpgd.config_context(budget=budget):
        pipe.fit(X, y)
    assert budget.entries and budget.spent_epsilon() == pytest.approx(pipe.epsilon_, rel=1e-6)
    assert pipe.budget is None


def test_a_private_metric_in_the_context_is_charged():
    y = np.arange(1000) % 2
    budget = PrivacyBudget(1.0, 1e-6)
    with skdpgd.config_context(budget=budget):
        dp_accuracy_score(y, y, epsilon=0.5, random_state=0)
    assert [e["label"] for e in budget.entries] == ["dp_accuracy_score"]
