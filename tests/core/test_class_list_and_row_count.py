"""The class list, the row count and the class weights that shape a mechanism are public or
accounted: public ``classes`` fix the model's shape (inferring them warns), a public
``n_samples`` under add/remove-one makes the plan independent of N (else a noisy count is
released and accounted), and ``class_weight='balanced'`` reads accounted noisy counts; for the
full-batch estimators, DP-SGD and the MLP. Each test failed on the code before its fix."""

import math
import warnings

import numpy as np
import pytest

from skdpgd import (
    BudgetExceededError,
    DPLogisticRegression,
    DPRidge,
    PrivacyBudget,
    PrivacyLeakWarning,
)
from skdpgd.accounting import GaussianDPAccountant, compose_gdp


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(1000, 5)) / 3
    y = (X[:, 0] - X[:, 1] + 0.3 * rng.normal(size=1000) > 0).astype(int)
    return X, y


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
            X, y_relabelled
        )
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
    assert 1.0 / c.count_noise_multiplier_**2 == pytest.approx(
        0.02 * (GaussianDPAccountant().budget(1.0, 1e-5)) ** 2, rel=1e-9
    )
    assert c.mu_ == pytest.approx(
        compose_gdp(np.concatenate([r.multipliers for r in c.releases_])), rel=1e-12
    )
    assert c.epsilon_ <= 1.0 and c.n_samples_ != 1000  # the noisy count, not N
    # replace-one: N is public, no count
    d = Est(**{**kw, "neighbouring": "replace"}).fit(X, y)
    assert d.count_noise_multiplier_ is None and d.n_samples_ == 1000


def test_class_weight_balanced_uses_accounted_noisy_counts():
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(2)
    X = rng.normal(size=(4000, 3)) / 3
    y = (X[:, 0] + 0.4 * rng.normal(size=4000) > 0.25).astype(int)  # ~20% positives
    # output perturbation penalises the intercept too: compare without one
    kw = dict(
        data_norm=3.0,
        classes=[0, 1],
        class_weight="balanced",
        alpha=1e-3,
        schedule="output",
        row_clip="data_norm",
        fit_intercept=False,
        random_state=0,
    )
    fit = DPLogisticRegression(epsilon=1.0, **kw).fit(X, y)
    counts = [r for r in fit.releases_ if r.name == "class counts"]
    assert len(counts) == 1
    assert counts[0].sensitivity == {"replace": math.sqrt(2.0), "add_remove": 1.0}
    assert fit.mu_ == pytest.approx(
        compose_gdp(np.concatenate([r.multipliers for r in fit.releases_])), rel=1e-12
    )
    assert fit.epsilon_ <= 1.0
    # no noise: the weighted objective of scikit-learn's class_weight='balanced', same alpha
    exact = DPLogisticRegression(epsilon=np.inf, **kw).fit(X, y)
    w = len(y) / (2 * np.bincount(y))
    assert exact.alpha_ == pytest.approx(1e-3 / w.max())
    ref = LogisticRegression(
        C=1 / (len(y) * 1e-3),
        class_weight="balanced",
        tol=1e-10,
        fit_intercept=False,
        max_iter=10_000,
    ).fit(X, y)
    np.testing.assert_allclose(exact.coef_, ref.coef_, rtol=1e-4, atol=1e-5)
    manual = DPLogisticRegression(epsilon=np.inf, **{**kw, "class_weight": dict(enumerate(w))})
    np.testing.assert_allclose(manual.fit(X, y).coef_, exact.coef_, rtol=1e-10)
    # a dict is public: no release
    d = DPLogisticRegression(epsilon=1.0, **{**kw, "class_weight": {0: 1.0, 1: 4.0}}).fit(X, y)
    assert not [r for r in d.releases_ if r.name == "class counts"]
    with pytest.raises(ValueError, match="not classes"):
        DPLogisticRegression(epsilon=1.0, **{**kw, "class_weight": {3: 1.0}}).fit(X, y)


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
    assert all(est.__dict__[k] is before[k] for k in before)
    assert est.__dict__.keys() == before.keys()


def test_class_weight_on_dp_sgd_and_mlp():
    from skdpgd import DPMLPClassifier, DPSGDClassifier

    rng = np.random.default_rng(5)
    X = rng.normal(size=(3000, 3)) / 3
    y = (X[:, 0] + 0.3 * rng.normal(size=3000) > 0.3).astype(int)  # ~20% positives
    sgd = DPSGDClassifier(
        epsilon=1.0,
        data_norm=1.0,
        classes=[0, 1],
        class_weight="balanced",
        n_samples=3000,
        random_state=0,
    ).fit(X, y)
    plain = DPSGDClassifier(
        epsilon=1.0, data_norm=1.0, classes=[0, 1], n_samples=3000, random_state=0
    ).fit(X, y)
    assert [r.name for r in sgd.releases_] == ["class counts", "gradient sums"]
    assert sgd.epsilon_ <= 1.0 and sgd.alpha_ < plain.alpha_
    # balanced weights raise the minority class's recall
    assert (sgd.predict(X)[y == 1] == 1).mean() > (plain.predict(X)[y == 1] == 1).mean()
    pytest.importorskip("torch")
    mlp = DPMLPClassifier(
        hidden_layer_sizes=(4,),
        max_iter=5,
        classes=[0, 1],
        class_weight={0: 0.5, 1: 2.0},
        random_state=0,
    ).fit(X, y)
    assert mlp.epsilon_ <= 1.0 and [r.name for r in mlp.releases_] == ["gradient sums"]
