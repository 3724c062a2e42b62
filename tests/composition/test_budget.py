"""PrivacyBudget: tight composition across fits, refusals, sharing through clone."""

import copy
import pickle

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

from skdpgd import (
    BudgetExceededError,
    DPLogisticRegression,
    DPRidge,
    DPSGDClassifier,
    PrivacyBudget,
)

from skdpgd.accounting import GaussianSteps, RDPAccountant, compose_gdp, gdp_epsilon, gdp_mu


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 5)) / 3
    y = (X[:, 0] - X[:, 1] > 0).astype(int)
    return X, y


def test_full_batch_fits_compose_exactly_in_gdp(data):
    X, y = data
    budget = PrivacyBudget(epsilon=3.0, delta=1e-6)
    fits = [
        DPLogisticRegression(
            epsilon=1.0,
            delta=1e-6,
            data_norm=1.0,
            random_state=s,
            budget=budget,
            neighbouring="add_remove",
        ).fit(X, y)
        for s in range(2)
    ]
    # every release (noisy count, row-norm sum, gradient sums), all under add/remove-one
    z = np.concatenate([r.multipliers for f in fits for r in f.releases_])
    assert budget.spent_epsilon() == pytest.approx(gdp_epsilon(1e-6, compose_gdp(z)), rel=1e-12)
    # tight: two fits at epsilon 1 spend much less than 2 (basic composition)
    assert budget.spent_epsilon() < 1.6
    # exactly the GDP mu of each fit adds in squares
    assert compose_gdp(z) == pytest.approx(np.hypot(fits[0].mu_, fits[1].mu_), rel=1e-9)


def test_overspending_fit_is_refused_and_nothing_is_recorded(data):
    X, y = data
    budget = PrivacyBudget(epsilon=1.2, delta=1e-6)
    DPLogisticRegression(
        epsilon=1.0,
        delta=1e-6,
        data_norm=1.0,
        random_state=0,
        neighbouring="add_remove",
        budget=budget,
    ).fit(X, y)
    n_before, spent_before = len(budget.charges), budget.spent_epsilon()
    left = budget.remaining_epsilon()
    assert 0 < left < 1.0
    est = DPLogisticRegression(
        epsilon=left * 1.01, delta=1e-6, data_norm=1.0, neighbouring="add_remove", budget=budget
    )
    with pytest.raises(BudgetExceededError, match="above its total"):
        est.fit(X, y)
    assert not hasattr(est, "coef_")
    assert len(budget.charges) == n_before and budget.spent_epsilon() == spent_before
    # what remaining_epsilon promised can be spent, and then the budget is full
    DPLogisticRegression(
        epsilon=left,
        delta=1e-6,
        data_norm=1.0,
        random_state=1,
        neighbouring="add_remove",
        budget=budget,
    ).fit(X, y)
    assert budget.spent_epsilon() <= 1.2
    assert budget.spent_epsilon() == pytest.approx(1.2, rel=1e-6)
    assert budget.remaining_epsilon() < 1e-3


def test_add_remove_fits_convert_to_a_replace_one_budget(data):
    X, y = data
    rep = PrivacyBudget(epsilon=5.0, delta=1e-6, neighbouring="replace")
    fit = DPLogisticRegression(
        epsilon=1.0,
        delta=1e-6,
        data_norm=1.0,
        random_state=0,
        neighbouring="add_remove",
        budget=rep,
    ).fit(X, y)
    # each release's noise is a multiplier z * s_add_remove / s_replace under replace-one: z/2
    # for gradient sums, z/sqrt(2) for Hessian sums (two PSD terms), z for the row-norm query
    # (the clip bound under both relations), z/sqrt(2) for the class counts of the warm start
    # (sqrt(2) replace-one, 1 add/remove-one), z/2 for the selection's difference of counts
    # (2 replace-one, 1 add/remove-one); the noisy count is free (N is public there)
    ratio = {
        "gradient sums": 0.5,
        "Hessian sums": 1 / np.sqrt(2.0),
        "row norm sum": 1.0,
        "row count": np.inf,
        "class counts (start)": 1 / np.sqrt(2.0),
        "selection: fit minus prior, rows predicted right": 0.5,
    }
    z_all = np.concatenate([ratio[r.name] * r.multipliers for r in fit.releases_])
    assert {r.name for r in fit.releases_} <= set(ratio)
    assert rep.spent_epsilon() == pytest.approx(gdp_epsilon(1e-6, compose_gdp(z_all)), rel=1e-12)
    assert rep.spent_epsilon() > 1.0  # the same noise is less private under replace-one
    # a fit with the default relation takes the budget's and spends exactly its epsilon
    rep2 = PrivacyBudget(epsilon=5.0, delta=1e-6, neighbouring="replace")
    auto = DPLogisticRegression(
        epsilon=1.0, delta=1e-6, data_norm=1.0, random_state=0, budget=rep2
    ).fit(X, y)
    assert auto.neighbouring_ == "replace-one"
    assert rep2.spent_epsilon() == pytest.approx(1.0, rel=1e-9)
    assert rep2.spent_epsilon() <= 1.0
    with pytest.raises(ValueError, match="replace-one"):
        DPSGDClassifier(epsilon=1.0, delta=1e-6, data_norm=1.0, budget=rep).fit(X, y)


def test_mixed_fits_compose_in_rdp(data):
    X, y = data
    budget = PrivacyBudget(epsilon=4.0, delta=1e-6)
    sgd = DPSGDClassifier(
        epsilon=1.0, delta=1e-6, data_norm=1.0, random_state=0, budget=budget
    ).fit(X, y)
    # a single subsampled fit: the ledger's RDP epsilon is the fit's own
    assert budget.spent_epsilon() == pytest.approx(sgd.epsilon_, rel=1e-9)
    ridge = DPRidge(
        epsilon=1.0,
        delta=1e-6,
        data_norm=1.0,
        y_bound=1.0,
        random_state=0,
        neighbouring="add_remove",
        budget=budget,
    ).fit(X, y.astype(float))
    rdp_alone = RDPAccountant().epsilon(GaussianSteps(ridge.noise_multipliers_), 1e-6)
    # the composition is more than either part and less than the sum of the parts
    assert max(sgd.epsilon_, rdp_alone) < budget.spent_epsilon() < sgd.epsilon_ + rdp_alone


def test_clone_and_copies_share_the_ledger_and_pickling_refuses(data):
    X, y = data
    budget = PrivacyBudget(epsilon=2.0, delta=1e-6)
    assert copy.deepcopy(budget) is budget and copy.copy(budget) is budget
    pipe = make_pipeline(
        FunctionTransformer(),
        DPLogisticRegression(epsilon=1.0, delta=1e-6, data_norm=1.0, budget=budget),
    )
    fitted = clone(pipe).fit(X, y)
    # every release of the fit (the steps, the row-norm query), charged on the original
    n_releases = len(fitted[-1].releases_)
    assert n_releases >= 2 and len(budget.charges) == n_releases


def test_fitted_model_with_a_budget_pickles_and_its_copy_is_detached(data):
    import joblib

    X, y = data
    budget = PrivacyBudget(epsilon=2.0, delta=1e-6)
    est = DPLogisticRegression(
        epsilon=1.0, delta=1e-6, data_norm=1.0, classes=[0, 1], random_state=0, budget=budget
    ).fit(X, y)
    spent_at_pickle = budget.spent_epsilon()
    for loaded in (pickle.loads(pickle.dumps(est)), _joblib_roundtrip(joblib, est)):
        np.testing.assert_array_equal(loaded.predict(X), est.predict(X))
        copy_ = loaded.budget
        assert copy_ is not budget and copy_.detached and not budget.detached
        assert copy_.spent_epsilon() == spent_at_pickle
        before = dict(loaded.__dict__)
        with pytest.raises(RuntimeError, match="detached"):
            loaded.fit(X, y)  # refused before anything is computed; the model is kept
        assert loaded.__dict__.keys() == before.keys()
        k = len(est.releases_)
        assert [c[0] for c in copy_.charges] == [c[0] for c in budget.charges[:k]]
        loaded.set_params(budget=budget).fit(X, y)  # a live budget works again
    assert len(budget.charges) == 3 * len(est.releases_)


def _joblib_roundtrip(joblib, obj):
    import io

    buf = io.BytesIO()
    joblib.dump(obj, buf)
    buf.seek(0)
    return joblib.load(buf)


def test_budget_in_parallel_cross_validation_is_refused_with_what_to_do(data):
    from sklearn.model_selection import cross_val_score

    X, y = data
    budget = PrivacyBudget(epsilon=5.0, delta=1e-6)
    est = DPLogisticRegression(
        epsilon=0.5, delta=1e-6, data_norm=1.0, classes=[0, 1], random_state=0, budget=budget
    )
    with pytest.raises(ValueError, match="fits failed") as info:
        cross_val_score(est, X, y, cv=2, n_jobs=2, error_score=np.nan)
    assert "n_jobs=1" in str(info.value) or "detached" in str(info.value)
    assert budget.charges == []  # nothing was charged to (or released from) the live budget
    scores = cross_val_score(est, X, y, cv=2, n_jobs=1)  # in one process it works
    # under the budget the fit takes its relation (add/remove-one: a noisy count too)
    n_releases = len(
        clone(est).set_params(budget=None, neighbouring="add_remove").fit(X[::2], y[::2]).releases_
    )
    assert len(budget.charges) == 2 * n_releases and np.all(scores > 0.5)  # 2 folds


def test_invalid_budgets():
    with pytest.raises(ValueError):
        PrivacyBudget(epsilon=0.0, delta=1e-6)
    with pytest.raises(ValueError):
        PrivacyBudget(epsilon=1.0, delta=1.0)
    with pytest.raises(ValueError):
        PrivacyBudget(epsilon=np.inf, delta=1e-6)
    with pytest.raises(ValueError, match="neighbouring"):
        PrivacyBudget(epsilon=1.0, delta=1e-6, neighbouring="swap")


def test_infinite_epsilon_fit_cannot_draw_from_a_budget(data):
    X, y = data
    budget = PrivacyBudget(epsilon=10.0, delta=1e-6)
    with pytest.raises(BudgetExceededError):
        DPLogisticRegression(epsilon=np.inf, data_norm=1.0, budget=budget).fit(X, y)
    assert gdp_mu(10.0, 1e-6) > 0 and budget.spent_epsilon() == 0.0


def test_eight_threads_of_fits_on_one_budget_never_overspend_it():
    """Each fit's check of the budget and its charge run under the budget's lock: fits in
    threads (joblib's threading backend, a web service) are admitted or refused as one after
    the other would be, and the ledger never exceeds its total."""
    import threading

    from skdpgd.exceptions import BudgetExceededError

    rng = np.random.default_rng(0)
    X = rng.normal(size=(2000, 5)) / 5
    y = (X[:, 0] > 0).astype(int)
    # a public N and a fixed seed: every fit spends the same, so the sequential count is exact
    extra = {"n_samples": 2000, "random_state": 0}
    for Est in (DPLogisticRegression, DPSGDClassifier):
        budget = PrivacyBudget(2.0, 1e-5, neighbouring="add_remove")
        outcome, start = [], threading.Barrier(8)

        def work():
            start.wait()
            try:
                Est(epsilon=1.0, data_norm=1.0, classes=[0, 1], budget=budget, **extra).fit(X, y)
                outcome.append("fit")
            except BudgetExceededError:
                outcome.append("refused")

        threads = [threading.Thread(target=work) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(outcome) == 8 and "refused" in outcome and "fit" in outcome
        assert budget.spent_epsilon() <= 2.0
        sequential = PrivacyBudget(2.0, 1e-5, neighbouring="add_remove")
        admitted = 0
        for _ in range(8):
            try:
                Est(epsilon=1.0, data_norm=1.0, classes=[0, 1], budget=sequential, **extra).fit(
                    X, y
                )
                admitted += 1
            except BudgetExceededError:
                pass
        assert outcome.count("fit") == admitted


def test_a_pld_budget_admits_a_fit_its_own_pld_accountant_admits():
    """A budget composes Poisson-subsampled charges with the accountant it is given (through
    the registry): a DP-SGD fit calibrated by PLD to exactly the budget's (epsilon, delta) is
    refused by the default RDP budget (RDP states more for the same noise) and admitted by a
    budget created with accountant='pld', whose ledger is never above the fit's own PLD
    epsilon; the default's numbers are unchanged."""
    pytest.importorskip("dp_accounting")
    from skdpgd import BudgetExceededError
    from skdpgd.accounting import compose, pld_epsilon

    rng = np.random.default_rng(0)
    X = rng.normal(size=(20000, 3)) / 3
    y = (X[:, 0] > 0).astype(int)
    kw = dict(
        epsilon=1.0,
        delta=1e-5,
        data_norm=1.0,
        classes=[0, 1],
        n_samples=20000,
        epochs=2,
        random_state=0,
        accountant="pld",
    )
    rdp_budget = PrivacyBudget(1.0, 1e-5)
    assert rdp_budget.accountant == "rdp"
    with pytest.raises(BudgetExceededError):
        DPSGDClassifier(budget=rdp_budget, **kw).fit(X, y)
    assert rdp_budget.charges == []

    pld_budget = PrivacyBudget(1.0, 1e-5, accountant="pld")
    fit = DPSGDClassifier(budget=pld_budget, **kw).fit(X, y)
    spent = pld_budget.spent_epsilon()
    assert spent <= 1.0
    assert spent <= pld_epsilon(GaussianSteps(fit.noise_multipliers_, fit.sampling_rate_), 1e-5)
    # the ledger read by RDP alone (the default budget's arithmetic) is above the total
    ledger = list(pld_budget._charges)
    assert compose(ledger, 1e-5) > 1.0
    assert "accountant='pld'" in repr(pld_budget)
    # a pickled copy keeps its accountant
    import pickle

    restored = pickle.loads(pickle.dumps(pld_budget))
    assert restored.detached and restored.accountant == "pld"
    assert restored.spent_epsilon() == pytest.approx(spent)


def test_a_budget_accountant_comes_from_the_registry():
    with pytest.raises(ValueError, match="unknown accountant"):
        PrivacyBudget(1.0, 1e-5, accountant="clt")
    with pytest.raises(ValueError, match="full-batch"):
        PrivacyBudget(1.0, 1e-5, accountant="gdp")
