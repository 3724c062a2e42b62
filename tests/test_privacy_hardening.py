"""Issue 10 (full batch): each fix here failed on the code before it.

Budget charges per release and relation, public class lists, public N under add/remove-one,
refused and failed fits that leave nothing behind, calibration at tiny budgets, non-finite
gradients, and output perturbation that cannot fail after the charge.
"""

import math
import warnings

import numpy as np
import pytest
from scipy import sparse

from skdpgd import (BudgetExceededError, DPLogisticRegression, DPRidge, PrivacyBudget,
                    PrivacyLeakWarning)
from skdpgd.accounting import (compose_gdp, gdp_delta, gdp_epsilon, gdp_mu,
                               GaussianDPAccountant)
from skdpgd.exceptions import DivergenceError
from skdpgd.schedules import NoisePlan, Schedule

SCHEDULES = ["auto", "uniform", "hong", "pur", "output", "exponential", "newton"]


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(1000, 5)) / 3
    y = (X[:, 0] - X[:, 1] + 0.3 * rng.normal(size=1000) > 0).astype(int)
    return X, y


def _hand_epsilon(fit, budget_relation, delta):
    """Closed-form GDP epsilon of a fit's releases seen under ``budget_relation``:
    gradient sums (or the output-perturbation solution) and the row-norm query are converted
    each by its own sensitivity ratio, written out here independently of the package."""
    inv2 = 0.0
    own = {"replace-one": "replace", "add/remove-one": "add_remove"}[fit.neighbouring_]
    for r in fit.releases_:
        s_own, s_other = r.sensitivity[own], r.sensitivity[budget_relation]
        if s_other == 0:
            continue
        z = r.multipliers * s_own / s_other
        inv2 += float(np.sum(1.0 / z ** 2))
    return gdp_epsilon(delta, math.sqrt(inv2))


@pytest.mark.parametrize("schedule", SCHEDULES)
@pytest.mark.parametrize("fit_relation", ["replace", "add_remove"])
@pytest.mark.parametrize("budget_relation", ["replace", "add_remove"])
@pytest.mark.parametrize("row_clip", ["auto", "data_norm"])
def test_budget_charges_each_release_by_its_own_rule(data, schedule, fit_relation,
                                                     budget_relation, row_clip):
    X, y = data
    kw = dict(epsilon=0.1, delta=1e-6, data_norm=1.0, classes=[0, 1], schedule=schedule,
              row_clip=row_clip, neighbouring=fit_relation, random_state=0)
    if schedule == "output":
        kw["alpha"] = 0.1
    budget = PrivacyBudget(epsilon=10.0, delta=1e-6, neighbouring=budget_relation)
    if fit_relation == "replace" and budget_relation == "add_remove":
        # the fit would read and publish N, private under the budget (issue 18, item 1)
        est = DPLogisticRegression(budget=budget, **kw)
        with pytest.raises(ValueError, match="N is private"):
            est.fit(X, y)
        assert budget.charges == [] and not hasattr(est, "coef_")
        return
    fit = DPLogisticRegression(budget=budget, **kw).fit(X, y)
    names = {r.name for r in fit.releases_}
    assert ("row norm sum" in names) == (row_clip == "auto")
    assert ("row count" in names) == (fit_relation == "add_remove")
    true_eps = _hand_epsilon(fit, budget_relation, 1e-6)
    assert budget.spent_epsilon() == pytest.approx(true_eps, rel=1e-9)
    assert budget.spent_epsilon() >= true_eps * (1 - 1e-12)  # never under-charged
    # a budget set just below the true cost refuses the same fit and records nothing
    tight = PrivacyBudget(epsilon=true_eps * (1 - 1e-6), delta=1e-6,
                          neighbouring=budget_relation)
    est = DPLogisticRegression(budget=tight, **kw)
    with pytest.raises(BudgetExceededError):
        est.fit(X, y)
    assert not hasattr(est, "coef_")
    if fit_relation == budget_relation:  # the public bound is exact: refused before any draw
        assert tight.charges == []
    else:  # the set-up releases decide the conversion: charged as drawn, and only they
        assert {label.split("(")[-1] for label, _, _ in tight.charges} <= {
            "row count)", "row norm sum)"}


def test_row_norm_query_is_not_converted_like_a_gradient(data):
    """An add/remove-one fit with row_clip='auto' charged to a replace-one budget. The
    row-norm query has sensitivity R under both relations; converting it with the gradients'
    factor 1/2 would over-charge it, and the count is free (N is public there)."""
    X, y = data
    budget = PrivacyBudget(epsilon=1.0, delta=1e-6, neighbouring="replace")
    fit = DPLogisticRegression(epsilon=0.1, delta=1e-6, data_norm=1.0, classes=[0, 1],
                               schedule="uniform", neighbouring="add_remove",
                               random_state=0, budget=budget).fit(X, y)
    z_grad = fit.noise_multipliers_ / 2  # C-calibrated noise is a multiplier z/2 for 2C
    z_row = fit.row_clip_noise_multiplier_  # sensitivity R under both: unchanged
    true_eps = gdp_epsilon(1e-6, compose_gdp(np.append(z_grad, z_row)))
    gradient_rule = gdp_epsilon(1e-6, compose_gdp(np.append(z_grad, z_row / 2)))
    assert true_eps < gradient_rule
    assert budget.spent_epsilon() == pytest.approx(true_eps, rel=1e-12)


# --- item 2: the class list ----------------------------------------------------------------


def test_classes_inferred_with_a_warning_and_public_classes_fix_the_mechanism():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 4)) / 3
    y = np.where(X[:, 0] > 0, 1, 0)
    y[0] = 2  # one example of a rare class
    y_relabelled = y.copy()
    y_relabelled[0] = 0  # its neighbour: the rare example relabelled
    with pytest.warns(PrivacyLeakWarning, match="classes"):
        a = DPLogisticRegression(data_norm=1.0, random_state=0).fit(X, y)
    with pytest.warns(PrivacyLeakWarning, match="classes"):
        b = DPLogisticRegression(data_norm=1.0, random_state=0).fit(X, y_relabelled)
    assert a.coef_.shape != b.coef_.shape  # what leaked without classes=
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        a = DPLogisticRegression(data_norm=1.0, classes=[0, 1, 2], random_state=0).fit(X, y)
        b = DPLogisticRegression(data_norm=1.0, classes=[0, 1, 2], random_state=0).fit(
            X, y_relabelled)
    assert a.coef_.shape == b.coef_.shape == (3, 4)
    assert a.n_iter_ == b.n_iter_
    np.testing.assert_array_equal(a.noise_multipliers_, b.noise_multipliers_)
    np.testing.assert_array_equal(b.classes_, [0, 1, 2])  # class 2 absent, still modelled


def test_labels_outside_classes_are_an_error():
    X = np.random.default_rng(0).normal(size=(40, 3)) / 3
    y = np.arange(40) % 3
    with pytest.raises(ValueError, match="outside classes"):
        DPLogisticRegression(data_norm=1.0, classes=[0, 1]).fit(X, y)
    with pytest.raises(ValueError, match="at least 2"):
        DPLogisticRegression(data_norm=1.0, classes=[0]).fit(X, y)


# --- item 3: N under add/remove-one ----------------------------------------------------------


@pytest.mark.parametrize("Est", [DPLogisticRegression, DPRidge])
def test_add_remove_mechanism_does_not_depend_on_private_n(Est, data):
    X, y = data
    kw = dict(epsilon=1.0, data_norm=1.0, neighbouring="add_remove", random_state=0)
    kw.update({"classes": [0, 1]} if Est is DPLogisticRegression else {"y_bound": 1.0})
    # a public n_samples: adding a row changes neither T, nor the noise, nor delta
    a = Est(n_samples=1000, **kw).fit(X, y)
    b = Est(n_samples=1000, **kw).fit(X[:-1], y[:-1])
    assert a.n_iter_ == b.n_iter_ and a.delta_ == b.delta_
    np.testing.assert_array_equal(a.noise_multipliers_, b.noise_multipliers_)
    assert a.count_noise_multiplier_ is None and a.n_samples_ == 1000
    # no public N: a noisy count is released and accounted (2% of mu^2)
    c = Est(**kw).fit(X, y)
    assert c.count_noise_multiplier_ is not None
    count = [r for r in c.releases_ if r.name == "row count"][0]
    assert count.sensitivity == {"replace": 0.0, "add_remove": 1.0}
    assert 1.0 / c.count_noise_multiplier_ ** 2 == pytest.approx(0.02 * (
        GaussianDPAccountant().budget(1.0, 1e-5)) ** 2, rel=1e-9)
    assert c.mu_ == pytest.approx(compose_gdp(np.concatenate(
        [r.multipliers for r in c.releases_])), rel=1e-12)
    assert c.epsilon_ <= 1.0 and c.n_samples_ != 1000  # the noisy count, not N
    # replace-one: N is public, no count
    d = Est(**{**kw, "neighbouring": "replace"}).fit(X, y)
    assert d.count_noise_multiplier_ is None and d.n_samples_ == 1000


# --- item 5: a refused or failed fit releases nothing ----------------------------------------


def test_refused_fit_leaves_the_estimator_as_it_was(data):
    X, y = data
    budget = PrivacyBudget(epsilon=0.5, delta=1e-6, neighbouring="replace")
    est = DPLogisticRegression(epsilon=0.4, delta=1e-6, data_norm=1.0, classes=[0, 1],
                               random_state=0, budget=budget)
    fresh = DPLogisticRegression(epsilon=0.4, delta=1e-6, data_norm=1.0, classes=[0, 1],
                                 budget=budget)
    est.fit(X, y)
    before = dict(est.__dict__)
    with pytest.raises(BudgetExceededError):
        est.fit(X[:, :3], y)  # refused: the old model (5 features) stays, untouched
    assert est.__dict__.keys() == before.keys()
    assert all(est.__dict__[k] is before[k] for k in before)
    with pytest.raises(BudgetExceededError):
        fresh.fit(X, y)
    assert not [k for k in vars(fresh) if k.endswith("_")]


# --- item 6: calibration never exceeds the target in floating point --------------------------


def _mp_delta(eps, mu):
    import mpmath as mp

    mp.mp.dps = 80
    e, m = mp.mpf(eps), mp.mpf(mu)
    return mp.ncdf(-e / m + m / 2) - mp.exp(e) * mp.ncdf(-e / m - m / 2)


@pytest.mark.parametrize("eps", [1e-6, 1e-4, 1e-3, 1e-2, 0.1, 1.0, 10.0, 1e3, 1e6])
@pytest.mark.parametrize("delta", [1e-100, 1e-30, 1e-12, 1e-7, 1e-5, 1e-2, 0.5])
def test_calibration_is_safe_at_every_scale(eps, delta):
    pytest.importorskip("mpmath")
    mu = gdp_mu(eps, delta)
    assert _mp_delta(eps, mu) <= delta  # high-precision reference: the true delta fits
    z = GaussianDPAccountant().calibrate(np.ones(3), eps, delta)
    assert _mp_delta(eps, compose_gdp(z)) <= delta


def test_tiny_budget_fit_reports_at_most_its_epsilon(data):
    X, y = data
    for Est, kw in [(DPLogisticRegression, {"classes": [0, 1]}), (DPRidge, {"y_bound": 1.0})]:
        fit = Est(epsilon=1e-3, delta=1e-7, data_norm=1.0, random_state=0, **kw).fit(X, y)
        assert fit.epsilon_ <= 1e-3
        assert float(_mp_delta(1e-3, fit.mu_)) <= 1e-7 if _has_mpmath() else True
        assert gdp_delta(1e-3, fit.mu_) <= 1e-7


def _has_mpmath():
    try:
        import mpmath  # noqa: F401
    except ImportError:
        return False
    return True


# --- item 7: non-finite gradients -------------------------------------------------------------


class _HugeSteps(Schedule):
    """A schedule whose step size makes gradient descent diverge."""

    name = "huge-steps"

    def plan(self, problem, mu, max_iter=None):
        return NoisePlan(np.ones(60), np.full(60, 1e300), schedule=self.name)


def test_non_finite_gradients_stop_the_fit_and_release_nothing_more(data):
    X, y = data
    est = DPLogisticRegression(epsilon=1.0, data_norm=1.0, classes=[0, 1], alpha=0.1,
                               schedule=_HugeSteps(), random_state=0)
    with pytest.raises(DivergenceError, match="diverged"):
        est.fit(X, y)
    assert not [k for k in vars(est) if k.endswith("_")]


def test_kernel_gives_zero_contribution_for_non_finite_gradients():
    from skdpgd._data import make_rows

    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 4))
    y = np.where(rng.random(50) < 0.5, 1.0, -1.0)
    for Xin in (X, sparse.csr_matrix(X)):
        rows = make_rows(Xin, y, np.ones(50), True)
        rows.clip_rows(1.0, 1.0)
        coef = np.array([[np.nan, 0.0, 0.0, 0.0]])
        g, gi, bad = rows.grad_sum(coef, np.zeros(1), 0, 0.0, 1.0)
        assert bad == 50 and np.all(g == 0) and np.all(gi == 0)
        coef = np.array([[1e308, 1e308, 0.0, 0.0]])  # margins overflow to +-inf
        g, gi, bad = rows.grad_sum(coef, np.zeros(1), 0, 0.0, 1.0)
        assert np.all(np.isfinite(g)) and np.linalg.norm(np.append(g, gi)) <= 50.0


# --- item 8: output perturbation cannot fail after the charge ---------------------------------


def test_output_perturbation_certifies_without_the_solver(data, monkeypatch):
    """If L-BFGS misses its certificate, a public number of plain gradient steps from 0 still
    lands within g / alpha of the minimiser: the fit succeeds with the same sensitivity."""
    import skdpgd._mechanisms as mech

    X, y = data
    kw = dict(epsilon=np.inf, data_norm=1.0, classes=[0, 1], schedule="output", alpha=0.5,
              row_clip="data_norm",
              random_state=0)
    exact = DPLogisticRegression(**kw).fit(X, y)

    class Failed:
        def __init__(self, x0):
            self.x = np.asarray(x0) + 10.0  # far from the optimum, no certificate

    monkeypatch.setattr(mech, "minimize", lambda fun, x0, **k: Failed(x0))
    g = 1e-4 * 2 * exact.clip_norm_ / X.shape[0]
    theta0 = np.append(exact.coef_, exact.intercept_ / (0.5 * 1.0))
    # first the Nesterov polish from the solver's point (stops on the certificate), then,
    # if that fails too, the public number of plain steps from 0
    polished = DPLogisticRegression(**kw).fit(X, y)
    monkeypatch.setattr(mech.OutputPerturbationMechanism, "_polish",
                        classmethod(lambda cls, fun, theta, setup, g, r=1.0: (theta, False)))
    fallback = DPLogisticRegression(**kw).fit(X, y)
    for fit in (polished, fallback):
        theta = np.append(fit.coef_, fit.intercept_ / (0.5 * 1.0))
        assert np.linalg.norm(theta - theta0) <= 2 * g / 0.5


# --- issue 12 item 2: class_weight within the sensitivity proof --------------------------------


def test_class_weight_balanced_uses_accounted_noisy_counts():
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(2)
    X = rng.normal(size=(4000, 3)) / 3
    y = (X[:, 0] + 0.4 * rng.normal(size=4000) > 0.25).astype(int)  # ~20% positives
    # output perturbation penalises the intercept too: compare without one
    kw = dict(data_norm=3.0, classes=[0, 1], class_weight="balanced", alpha=1e-3,
              schedule="output", row_clip="data_norm", fit_intercept=False, random_state=0)
    fit = DPLogisticRegression(epsilon=1.0, **kw).fit(X, y)
    counts = [r for r in fit.releases_ if r.name == "class counts"]
    assert len(counts) == 1
    assert counts[0].sensitivity == {"replace": math.sqrt(2.0), "add_remove": 1.0}
    assert fit.mu_ == pytest.approx(compose_gdp(np.concatenate(
        [r.multipliers for r in fit.releases_])), rel=1e-12)
    assert fit.epsilon_ <= 1.0
    # no noise: the weighted objective of scikit-learn's class_weight='balanced', same alpha
    exact = DPLogisticRegression(epsilon=np.inf, **kw).fit(X, y)
    w = len(y) / (2 * np.bincount(y))
    assert exact.alpha_ == pytest.approx(1e-3 / w.max())
    ref = LogisticRegression(C=1 / (len(y) * 1e-3), class_weight="balanced", tol=1e-10,
                             fit_intercept=False, max_iter=10_000).fit(X, y)
    np.testing.assert_allclose(exact.coef_, ref.coef_, rtol=1e-4, atol=1e-5)
    manual = DPLogisticRegression(epsilon=np.inf, **{**kw, "class_weight": dict(enumerate(w))})
    np.testing.assert_allclose(manual.fit(X, y).coef_, exact.coef_, rtol=1e-10)
    # a dict is public: no release
    d = DPLogisticRegression(epsilon=1.0, **{**kw, "class_weight": {0: 1.0, 1: 4.0}}).fit(X, y)
    assert not [r for r in d.releases_ if r.name == "class counts"]
    with pytest.raises(ValueError, match="not classes"):
        DPLogisticRegression(epsilon=1.0, **{**kw, "class_weight": {3: 1.0}}).fit(X, y)


# --- the same items for DP-SGD -------------------------------------------------------------------


def test_dp_sgd_classes_public_n_and_refusals(data):
    from skdpgd import DPSGDClassifier, DPSGDRegressor

    X, y = data
    y3 = y.copy()
    y3[0] = 2
    y3b = y3.copy()
    y3b[0] = 0
    kw = dict(epsilon=1.0, data_norm=1.0, random_state=0, epochs=1)
    with pytest.warns(PrivacyLeakWarning, match="classes"):
        a = DPSGDClassifier(**kw).fit(X, y3)
    assert a.coef_.shape == (3, 5)
    a = DPSGDClassifier(classes=[0, 1, 2], n_samples=1000, **kw).fit(X, y3)
    b = DPSGDClassifier(classes=[0, 1, 2], n_samples=1000, **kw).fit(X, y3b)
    assert a.coef_.shape == b.coef_.shape and a.n_iter_ == b.n_iter_
    # add/remove-one: with a public n_samples, removing a row changes neither q nor T
    c = DPSGDClassifier(classes=[0, 1], n_samples=1000, **kw).fit(X[:-1], y[:-1])
    d = DPSGDClassifier(classes=[0, 1], n_samples=1000, **kw).fit(X, y)
    assert (c.sampling_rate_, c.n_iter_, c.delta_) == (d.sampling_rate_, d.n_iter_, d.delta_)
    np.testing.assert_array_equal(c.noise_multipliers_, d.noise_multipliers_)
    # no public N: an accounted noisy count
    e = DPSGDRegressor(y_bound=1.0, **kw).fit(X, X[:, 0])
    assert e.count_noise_multiplier_ is not None and e.epsilon_ <= 1.0
    assert e.epsilon_ >= 1.0 * (1 - 1e-6)  # count and steps together spend the budget
    # q, T and the batch come from the released count only (batch_size='auto')
    assert e.sampling_rate_ == pytest.approx(e.batch_size_ / e.n_samples_)
    assert e.n_iter_ == math.ceil(1 / e.sampling_rate_)  # epochs=1
    # a refused fit leaves the estimator as it was
    budget = PrivacyBudget(epsilon=1.1, delta=1e-5)
    est = DPSGDClassifier(classes=[0, 1], delta=1e-5, budget=budget, **kw).fit(X, y)
    before = dict(est.__dict__)
    with pytest.raises(BudgetExceededError):
        est.fit(X[:, :2], y)
    assert all(est.__dict__[k] is before[k] for k in before) and est.__dict__.keys() == before.keys()


def test_dp_sgd_diverging_step_size_stops_and_sets_nothing(data):
    from skdpgd import DPSGDClassifier

    X, y = data
    est = DPSGDClassifier(epsilon=1.0, data_norm=1.0, classes=[0, 1], n_samples=1000,
                          learning_rate=1e300, alpha=1.0, random_state=0)
    with pytest.raises(DivergenceError, match="diverged"):
        est.fit(X, y)
    assert not [k for k in vars(est) if k.endswith("_")]


def test_dp_sgd_verbose_does_not_change_the_model(data, capsys):
    from skdpgd import DPSGDClassifier

    X, y = data
    kw = dict(epsilon=1.0, data_norm=1.0, classes=[0, 1], n_samples=1000, random_state=0)
    quiet = DPSGDClassifier(**kw).fit(X, y)
    loud = DPSGDClassifier(verbose=2, **kw).fit(X, y)
    np.testing.assert_array_equal(quiet.coef_, loud.coef_)
    lines = [ln for ln in capsys.readouterr().out.splitlines() if "epsilon spent" in ln]
    assert len(lines) == 10
    assert float(lines[-1].split("epsilon spent ")[1].split()[0]) == pytest.approx(
        loud.epsilon_, rel=1e-3)


def test_class_weight_on_dp_sgd_and_mlp():
    from skdpgd import DPMLPClassifier, DPSGDClassifier

    rng = np.random.default_rng(5)
    X = rng.normal(size=(3000, 3)) / 3
    y = (X[:, 0] + 0.3 * rng.normal(size=3000) > 0.3).astype(int)  # ~20% positives
    sgd = DPSGDClassifier(epsilon=1.0, data_norm=1.0, classes=[0, 1], class_weight="balanced",
                          n_samples=3000, random_state=0).fit(X, y)
    plain = DPSGDClassifier(epsilon=1.0, data_norm=1.0, classes=[0, 1], n_samples=3000,
                            random_state=0).fit(X, y)
    assert [r.name for r in sgd.releases_] == ["class counts", "gradient sums"]
    assert sgd.epsilon_ <= 1.0 and sgd.alpha_ < plain.alpha_
    # balanced weights raise the minority class's recall
    assert (sgd.predict(X)[y == 1] == 1).mean() > (plain.predict(X)[y == 1] == 1).mean()
    pytest.importorskip("torch")
    mlp = DPMLPClassifier(hidden_layer_sizes=(4,), max_iter=5, classes=[0, 1],
                          class_weight={0: 0.5, 1: 2.0}, random_state=0).fit(X, y)
    assert mlp.epsilon_ <= 1.0 and [r.name for r in mlp.releases_] == ["gradient sums"]
