"""Issue 18 (privacy hardening 2): each test here failed on the code before the fix.

1. a fit charged to a budget runs under the budget's relation (a replace-one fit, which reads
   and publishes N, is refused by an add/remove-one budget);
2. output perturbation's fallback solver certifies its point whatever the weights sum to;
3. every released sum's sensitivity covers the floating-point error of the sum;
4. no refusal depends on a value that was drawn but not charged.
"""

import math

import numpy as np
import pytest

from skdpgd import (BudgetExceededError, DPLogisticRegression, DPRidge, DPSGDClassifier,
                    DPSGDRegressor, PrivacyBudget)
from skdpgd._backends import DenseRows
from skdpgd.accounting import sum_rounding_margin

pytestmark = pytest.mark.filterwarnings("ignore::skdpgd.PrivacyLeakWarning")


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 4)) / 3
    y = (X[:, 0] > 0).astype(int)
    return X, y


# --- item 1: the budget's relation -----------------------------------------------------------


def test_the_report_example_now_records_the_fit_epsilon(data):
    """Before: the budget recorded 0.547 for a fit that published the exact N (3000.0), so the
    removal of one row was visible with certainty. Now the fit runs under add/remove-one."""
    X, y = data
    b = PrivacyBudget(10, 1e-6)
    m1 = DPLogisticRegression(epsilon=1, delta=1e-6, data_norm=1, classes=[0, 1], budget=b,
                              random_state=0).fit(X, y)
    assert m1.neighbouring_ == "add/remove-one"
    assert m1.n_samples_ != X.shape[0]  # a noisy count, never the exact N
    assert b.spent_epsilon() == pytest.approx(1.0, rel=1e-9)
    assert b.spent_epsilon() >= m1.epsilon_ * (1 - 1e-12)


FULL_BATCH = [
    (DPLogisticRegression, dict(classes=[0, 1])),
    (DPRidge, dict(y_bound=1.0)),
]


@pytest.mark.parametrize("Est,extra", FULL_BATCH)
@pytest.mark.parametrize("fit_relation", ["auto", "replace", "add_remove"])
@pytest.mark.parametrize("budget_relation", ["replace", "add_remove"])
def test_every_full_batch_estimator_under_every_pair_of_relations(data, Est, extra,
                                                                   fit_relation,
                                                                   budget_relation):
    X, y = data
    yy = y if Est is DPLogisticRegression else X[:, 0]
    budget = PrivacyBudget(20.0, 1e-6, neighbouring=budget_relation)
    est = Est(epsilon=1.0, delta=1e-6, data_norm=1.0, neighbouring=fit_relation,
              random_state=0, budget=budget, **extra)
    if fit_relation == "replace" and budget_relation == "add_remove":
        with pytest.raises(ValueError, match="N is private"):
            est.fit(X, yy)
        assert budget.charges == [] and not hasattr(est, "coef_")
        return
    est.fit(X, yy)
    own = budget_relation if fit_relation == "auto" else fit_relation
    assert est.neighbouring_ == {"replace": "replace-one", "add_remove": "add/remove-one"}[own]
    if own == "add_remove":  # N is private: never the exact count
        assert est.n_samples_ != X.shape[0]
        assert any(r.name == "row count" for r in est.releases_)
    else:
        assert est.n_samples_ == X.shape[0]
    if own == budget_relation:
        assert budget.spent_epsilon() == pytest.approx(1.0, rel=1e-9)
    else:  # add/remove-one noise is worth less under replace-one
        assert budget.spent_epsilon() > 1.0
    assert budget.spent_epsilon() >= est.epsilon_ * (1 - 1e-12)


@pytest.mark.parametrize("Est", [DPSGDClassifier, DPSGDRegressor])
@pytest.mark.parametrize("budget_relation", ["replace", "add_remove"])
def test_dp_sgd_under_each_budget_relation(data, Est, budget_relation):
    X, y = data
    yy = y if Est is DPSGDClassifier else X[:, 0]
    extra = dict(classes=[0, 1]) if Est is DPSGDClassifier else dict(y_bound=1.0)
    budget = PrivacyBudget(20.0, 1e-6, neighbouring=budget_relation)
    est = Est(epsilon=1.0, delta=1e-6, data_norm=1.0, random_state=0, budget=budget, **extra)
    if budget_relation == "replace":  # subsampling is accounted under add/remove-one only
        with pytest.raises(ValueError, match="replace-one"):
            est.fit(X, yy)
        assert budget.charges == [] and not hasattr(est, "coef_")
        return
    est.fit(X, yy)
    assert est.n_samples_ != X.shape[0]
    assert budget.spent_epsilon() == pytest.approx(est.epsilon_, rel=1e-6)


# --- item 2: output perturbation's fallback -------------------------------------------------


@pytest.mark.parametrize("ratio", [1 / 3, 1 / 2, 1.0, 2.0])
def test_output_fallback_certifies_whatever_the_weights_sum_to(ratio, monkeypatch):
    """With L-BFGS and the Nesterov polish forced to fail, the last-resort descent must still
    land within g / alpha of the minimiser, also when the weights sum to more than the public
    n_samples (before: 6.6e5 g / alpha away at n_samples = N / 3 here)."""
    import skdpgd._mechanisms as mech

    # identical rows of the bound's norm, residuals inside the clip: the squared loss's
    # curvature is its bound everywhere (the worst case for a step from public constants)
    n = 3000
    X = np.tile([1.0, 0.0, 0.0, 0.0], (n, 1))
    y = 0.5 + 0.1 * np.random.default_rng(0).normal(size=n)
    n_pub = ratio * n
    alpha = 0.05
    kw = dict(epsilon=np.inf, data_norm=1.0, y_bound=1.0, schedule="output", alpha=alpha,
              row_clip="data_norm", neighbouring="add_remove", n_samples=n_pub,
              random_state=0)
    exact = DPRidge(**kw).fit(X, y)

    class Failed:
        def __init__(self, x0):
            self.x = np.asarray(x0) + 10.0  # far from the optimum, no certificate

    monkeypatch.setattr(mech, "minimize", lambda fun, x0, **k: Failed(x0))
    monkeypatch.setattr(mech.OutputPerturbationMechanism, "_polish",
                        classmethod(lambda cls, fun, theta, setup, g, r=1.0: (theta, False)))
    fallback = DPRidge(**kw).fit(X, y)
    c = 1.0  # intercept column: intercept_scaling * data_norm
    g = 1e-4 * exact.clip_norm_ / n_pub  # the certificate: tol * sensitivity(add/remove) / N
    theta0 = np.append(exact.coef_, exact.intercept_ / c)
    theta = np.append(fallback.coef_, fallback.intercept_ / c)
    assert np.linalg.norm(theta - theta0) <= 2 * g / alpha


# --- item 3: rounding slack ------------------------------------------------------------------


def _adversarial(n, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    X /= np.linalg.norm(X, axis=1)[:, None]
    X *= rng.uniform(0.5, 3.0, size=(n, 1))  # most rows clipped
    y = rng.choice([-50.0, 50.0], size=n)  # residuals far past the clip: every term at G
    return X, y


@pytest.mark.parametrize("seed", range(4))
def test_measured_sensitivity_of_sums_stays_below_the_charged_one(seed):
    """Adversarial neighbouring pairs at N = 1e5 whose exact difference is the claimed
    sensitivity (gradient terms flipped at the clip; an X'X term replaced by an orthogonal one
    of the bound's norm): the computed sums differ by more than it (8.7e-14 and 3.3e-12
    relative measured before), but never by more than what the fit charges for."""
    n = 100_000
    X, y = _adversarial(n, seed)
    kw = dict(epsilon=1.0, delta=1e-6, data_norm=1.0, y_bound=50.0, fit_intercept=False,
              row_clip="data_norm", random_state=0)
    gd = DPRidge(schedule="uniform", max_iter=1, **kw).fit(X[:1000], y[:1000])
    # the same public constants at N = 1e5 (the margin grows with N)
    margin_1e5 = sum_rounding_margin(n, 1 * (4 + 1) + 1)
    margin_fit = sum_rounding_margin(1000, 1 * (4 + 1) + 1)
    grad_charged = gd.releases_[0].sensitivity["replace"] / (1 + margin_fit) * (1 + margin_1e5)
    G = gd.clip_norm_
    assert grad_charged > 2 * G  # a margin is charged

    y2 = y.copy()
    y2[0] = -y[0]
    sums = []
    for yy in (y, y2):
        rows = DenseRows(X, yy, np.ones(n), False)
        rows.clip_rows(1.0, 1.0)
        gcoef, _, _ = rows.grad_sum(np.zeros((1, 4)), np.zeros(1), 2, 0.0, G)
        sums.append(gcoef.ravel())
    measured = np.linalg.norm(sums[0] - sums[1])
    assert measured <= grad_charged

    ssp = DPRidge(schedule="ssp", **kw).fit(X[:1000], y[:1000])
    xx = next(r for r in ssp.releases_ if r.name == "X'X")
    xx_charged = xx.sensitivity["replace"] / (1 + margin_fit) * (1 + margin_1e5)
    assert xx_charged > math.sqrt(2.0)
    X2 = X.copy()
    v = np.random.default_rng(seed + 100).normal(size=4)
    v -= v @ X[0] / (X[0] @ X[0]) * X[0]
    X2[0] = 5.0 * v / np.linalg.norm(v)  # orthogonal to row 0, clipped to norm 1
    mats = []
    for XX in (X, X2):
        rows = DenseRows(XX, y, np.ones(n), False)
        rows.clip_rows(1.0, 1.0)
        mats.append(rows.suff_stats()[0])
    assert np.linalg.norm(mats[0] - mats[1]) <= xx_charged


def test_fit_sensitivities_carry_the_margin(data):
    X, y = data
    fit = DPLogisticRegression(epsilon=1.0, delta=1e-6, data_norm=1.0, classes=[0, 1],
                               schedule="newton", random_state=0).fit(X, y)
    margin = sum_rounding_margin(X.shape[0], 1 * (4 + 1) + 1)
    grads = next(r for r in fit.releases_ if r.name == "gradient sums")
    assert grads.sensitivity["replace"] == pytest.approx(2 * fit.clip_norm_ * (1 + margin),
                                                         rel=1e-14)
    assert grads.sensitivity["replace"] > 2 * fit.clip_norm_ * (1 + margin)  # rounded up
    np.testing.assert_allclose(grads.noise_std,
                               grads.multipliers * grads.sensitivity["replace"], rtol=0)


# --- item 4: refusals decided only by charged or public values ------------------------------


def test_refusal_after_the_noisy_count_keeps_the_count_charged(data):
    """Under add/remove-one with delta=None the default delta 1/N~^2 is a function of the
    noisy count; when the public bound cannot decide, the count is charged before anything
    computed from it decides (before: a refused fit had read it and charged nothing)."""
    X, y = data
    # budget delta far below the cap: the public bound (delta <= 1e-5) is loose
    budget = PrivacyBudget(1.05, 1e-9)
    est = DPLogisticRegression(epsilon=1.0, data_norm=1.0, classes=[0, 1], random_state=0,
                               budget=budget)
    with pytest.raises(BudgetExceededError, match="row count"):
        est.fit(X, y)
    assert not hasattr(est, "coef_")
    labels = [label for label, _, _ in budget.charges]
    assert labels and all(label.split("(")[-1] in ("row count)", "row norm sum)")
                          for label in labels)
    assert 0 < budget.spent_epsilon() < 0.6  # only the small set-up releases


def test_refusal_on_an_exact_public_bound_draws_and_charges_nothing(data):
    X, y = data
    budget = PrivacyBudget(0.9, 1e-6)
    est = DPLogisticRegression(epsilon=1.0, delta=1e-6, data_norm=1.0, classes=[0, 1],
                               budget=budget)
    with pytest.raises(BudgetExceededError, match="Nothing was released"):
        est.fit(X, y)
    assert budget.charges == [] and not hasattr(est, "coef_")


def test_admitted_fits_charge_once_and_exactly(data):
    """When the public bound admits the fit, its real charge (never above the bound) is one
    ledger entry group, made before any gradient is computed."""
    X, y = data
    budget = PrivacyBudget(5.0, 1e-6)
    fit = DPLogisticRegression(epsilon=1.0, delta=1e-6, data_norm=1.0, classes=[0, 1],
                               random_state=0, budget=budget).fit(X, y)
    assert len(budget.charges) == len(fit.releases_)
    assert budget.spent_epsilon() == pytest.approx(fit.epsilon_, rel=1e-9)
